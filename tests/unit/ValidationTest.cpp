// odlac's own validation and its libonnx isolation: the ONNX 1.23 schema table checked against
// every schema libonnx 1.12 has (the two releases share that history), node and version
// checks, and runInChild's answers for a job that returns, fails, throws, crashes, hangs or
// runs out of memory.
#include "ChildProcess.h"
#include "Schema.h"

#include <onnx/defs/schema.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

namespace odlac::test {
namespace {

bool mentions(const Status &s, const std::string &text) {
  return s.message().find(text) != std::string::npos;
}

// A value of attribute type `t` (the field the type names set).
onnx::AttributeProto attributeOf(const std::string &name, onnx::AttributeProto::AttributeType t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(t);
  switch (t) {
  case onnx::AttributeProto::FLOAT:
    a.set_f(1);
    break;
  case onnx::AttributeProto::INT:
    a.set_i(1);
    break;
  case onnx::AttributeProto::STRING:
    a.set_s("s");
    break;
  case onnx::AttributeProto::TENSOR:
    a.mutable_t()->set_data_type(1);
    break;
  case onnx::AttributeProto::GRAPH:
    a.mutable_g()->set_name("g");
    break;
  case onnx::AttributeProto::FLOATS:
    a.add_floats(1);
    break;
  case onnx::AttributeProto::INTS:
    a.add_ints(1);
    break;
  case onnx::AttributeProto::STRINGS:
    a.add_strings("s");
    break;
  default:
    break; // the rest may stay empty
  }
  return a;
}

// A node of `s` with its fewest inputs and outputs, each named, and its required attributes.
onnx::NodeProto minimalNode(const onnx::OpSchema &s) {
  onnx::NodeProto n;
  n.set_op_type(s.Name());
  for (int i = 0; i < s.min_input(); ++i)
    n.add_input("x" + std::to_string(i));
  for (int i = 0; i < s.min_output(); ++i)
    n.add_output("y" + std::to_string(i));
  for (const auto &[name, attr] : s.attributes())
    if (attr.required)
      *n.add_attribute() = attributeOf(name, attr.type);
  return n;
}

TEST(Validation, SchemaTableAgreesWithLibonnx) {
  int checked = 0;
  for (const onnx::OpSchema &s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    if (!s.domain().empty())
      continue;
    int64_t opset = s.SinceVersion();
    std::string what = s.Name() + "-" + std::to_string(opset);
    onnx::NodeProto n = minimalNode(s);
    EXPECT_TRUE(checkNode(n, opset).isOk()) << what << ": " << checkNode(n, opset).message();
    if (s.min_input() > 0) {
      onnx::NodeProto fewer = n;
      fewer.mutable_input()->RemoveLast();
      EXPECT_TRUE(mentions(checkNode(fewer, opset), "takes")) << what;
    }
    for (const auto &[name, attr] : s.attributes()) {
      onnx::NodeProto wrong = n;
      auto other = attr.type == onnx::AttributeProto::INT ? onnx::AttributeProto::FLOAT
                                                          : onnx::AttributeProto::INT;
      for (auto &a : *wrong.mutable_attribute())
        if (a.name() == name)
          a = attributeOf(name, other);
      if (!attr.required)
        *wrong.add_attribute() = attributeOf(name, other);
      EXPECT_TRUE(mentions(checkNode(wrong, opset), "attribute '" + name + "' is ")) << what;
    }
    onnx::NodeProto extra = n;
    *extra.add_attribute() = attributeOf("not_an_onnx_attribute", onnx::AttributeProto::INT);
    EXPECT_TRUE(mentions(checkNode(extra, opset), "is not an attribute of " + what)) << what;
    ++checked;
  }
  EXPECT_GT(checked, 400); // libonnx 1.12's default domain: 419 schemas
}

TEST(Validation, NodeProblemsAreListedTogether) {
  onnx::NodeProto n;
  n.set_op_type("Conv");
  n.add_input("x");
  n.add_output("y");
  *n.add_attribute() = attributeOf("strides", onnx::AttributeProto::FLOATS);
  *n.add_attribute() = attributeOf("strides", onnx::AttributeProto::INTS);
  Status s = checkNode(n, 13);
  ASSERT_EQ(s.messages().size(), 3u) << s.message();
  EXPECT_EQ(s.messages()[0], "attribute 'strides' is given more than once");
  EXPECT_EQ(s.messages()[1], "has 1 input; Conv-11 takes 2 to 3");
  EXPECT_EQ(s.messages()[2], "attribute 'strides' is FLOATS; Conv-11 takes INTS");
  n.set_op_type("NotAnOnnxOp"); // the rules report it unsupported
  n.clear_attribute();
  EXPECT_TRUE(checkNode(n, 13).isOk());
}

TEST(Validation, Versions) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto *os = m.add_opset_import();
  os->set_version(13);
  EXPECT_TRUE(checkVersions(m).isOk());
  os->set_domain("ai.onnx");
  m.add_opset_import()->set_version(14);
  EXPECT_EQ(checkVersions(m).message(),
            "the model imports the default ONNX domain twice (opsets 13 and 14)");
  m.mutable_opset_import()->RemoveLast();
  os->set_version(0);
  m.set_ir_version(0);
  EXPECT_EQ(checkVersions(m).message(),
            "the model has no IR version (ModelProto.ir_version is 0)\n"
            "the model imports opset 0 of the default ONNX domain; opsets start at 1");
  m.clear_opset_import();
  m.set_ir_version(8);
  // No default domain is fine (training optimizers' models import only theirs): a node of a
  // domain the model does not import is reported by the importer.
  EXPECT_TRUE(checkVersions(m).isOk());
  os = m.add_opset_import();
  os->set_version(13);
  m.set_ir_version(8);
  auto *custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1000); // custom domains have no newest version
  EXPECT_TRUE(checkVersions(m).isOk());
}

ChildLimits limits(int seconds) {
  ChildLimits l;
  l.seconds = seconds;
  l.extraBytes = 256ull << 20;
  return l;
}

TEST(ChildProcess, ReturnsTheAnswer) {
  std::string big(10 << 20, 'x'); // more than a pipe holds
  auto r = runInChild([&]() -> Expected<std::string> { return big + "!"; }, limits(10));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(*r, big + "!");
}

TEST(ChildProcess, ReportsHowTheJobFailed) {
  auto failed =
      runInChild([]() -> Expected<std::string> { return Status::error("no"); }, limits(10));
  EXPECT_EQ(failed.status().message(), "no");
  auto threw =
      runInChild([]() -> Expected<std::string> { throw std::runtime_error("thrown"); }, limits(10));
  EXPECT_EQ(threw.status().message(), "thrown");
  auto crashed = runInChild(
      []() -> Expected<std::string> {
        std::raise(SIGFPE);
        return std::string();
      },
      limits(10));
  EXPECT_TRUE(mentions(crashed.status(), "died with signal 8")) << crashed.status().message();
  auto greedy = runInChild(
      []() -> Expected<std::string> { return std::string(size_t{1} << 30, 'x'); }, limits(10));
  EXPECT_FALSE(greedy); // over the 256 MiB it may map
}

TEST(ChildProcess, StopsAHang) {
  auto start = std::chrono::steady_clock::now();
  auto hung = runInChild(
      []() -> Expected<std::string> {
        for (;;)
          std::this_thread::sleep_for(std::chrono::seconds(1));
      },
      limits(1));
  EXPECT_EQ(hung.status().message(), "did not finish within 1 s");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

} // namespace
} // namespace odlac::test
