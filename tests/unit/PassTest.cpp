// Pass tests (STYLE 6 and 11): every file in tests/passes/ holds cases separated by
// "// -----". A case is "// RUN: pass[,pass...]", the input IR, "// EXPECT:" and the
// expected IR. The expected text is compared after the passes ran, and the graph before and
// after is run on the reference backend with the same pseudo-random inputs: the outputs must
// agree. Every rewrite has a case where it must not fire (EXPECT equals the input).
// A line "// LAYOUT: channels_last" before RUN makes the passes see a target whose manifest
// prefers that layout; "// PROFILE: core" one without extensions (--odla-profile=core);
// "// MEMORY: least" passes see a --memory=least compilation.
#include "evaluate/Evaluate.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "passes/Pipeline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <random>
#include <sstream>

namespace odlac {
namespace {

struct PassCase {
  std::string file;
  int index;
  std::vector<std::string> passes;
  std::string input, expected;
  std::string layout; // the target's preferred layout; empty: the reference manifest's
  bool core = false;  // the target offers no extension functions
  bool least = false; // --memory=least
};

// gtest prints a parameter with each test; the file and case number say it all.
void PrintTo(const PassCase &c, std::ostream *os) { *os << c.file << " case " << c.index; }

std::string trim(const std::string &s) {
  size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<PassCase> loadCases() {
  std::vector<PassCase> cases;
  std::string dir = ODLAC_SOURCE_DIR "/tests/passes";
  std::vector<std::string> files;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (std::strstr(e->d_name, ".ir"))
        files.push_back(e->d_name);
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  for (const std::string &f : files) {
    std::ifstream in(dir + "/" + f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    size_t start = 0;
    int index = 0;
    while (start < text.size()) {
      size_t end = text.find("// -----", start);
      std::string chunk =
          text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      start = end == std::string::npos ? text.size() : end + 8;
      size_t run = chunk.find("// RUN:");
      if (run == std::string::npos)
        continue;
      size_t eol = chunk.find('\n', run);
      PassCase c{f, index++, {}, "", "", ""};
      std::stringstream names(trim(chunk.substr(run + 7, eol - run - 7)));
      for (std::string p; std::getline(names, p, ',');)
        c.passes.push_back(trim(p));
      if (size_t layout = chunk.find("// LAYOUT:"); layout < run)
        c.layout = trim(chunk.substr(layout + 10, chunk.find('\n', layout) - layout - 10));
      c.core = chunk.find("// PROFILE: core") < run;
      c.least = chunk.find("// MEMORY: least") < run;
      size_t expect = chunk.find("// EXPECT:", eol);
      c.input =
          chunk.substr(eol + 1, expect == std::string::npos ? std::string::npos : expect - eol - 1);
      c.expected = expect == std::string::npos ? "" : chunk.substr(expect + 10);
      cases.push_back(c);
    }
  }
  return cases;
}

std::shared_ptr<const Buffer> randomInput(const TensorType &t, std::mt19937 &rng) {
  std::vector<unsigned char> bytes(t.byteSize());
  std::uniform_real_distribution<float> f(-1.0f, 1.0f);
  std::uniform_int_distribution<int> i(-3, 3);
  for (int64_t k = 0; k < t.numElements(); ++k) {
    switch (t.dtype) {
    case DType::F32:
      reinterpret_cast<float *>(bytes.data())[k] = f(rng);
      break;
    case DType::F64:
      reinterpret_cast<double *>(bytes.data())[k] = f(rng);
      break;
    case DType::I64:
      reinterpret_cast<int64_t *>(bytes.data())[k] = i(rng);
      break;
    case DType::I32:
      reinterpret_cast<int32_t *>(bytes.data())[k] = i(rng);
      break;
    default:
      bytes[k * dtypeBytes(t.dtype)] = static_cast<unsigned char>(i(rng) & 1);
      break;
    }
  }
  return Buffer::copyOf(bytes.data(), bytes.size());
}

std::vector<double> asDoubles(const Buffer &b, DType t, int64_t n) {
  std::vector<double> v(n);
  for (int64_t k = 0; k < n; ++k)
    v[k] = t == DType::F32   ? b.as<float>()[k]
           : t == DType::F64 ? b.as<double>()[k]
           : t == DType::I64 ? static_cast<double>(b.as<int64_t>()[k])
           : t == DType::I32 ? b.as<int32_t>()[k]
                             : b.as<unsigned char>()[k];
  return v;
}

class PassFile : public ::testing::TestWithParam<PassCase> {};

TEST_P(PassFile, RewritesAsExpectedAndKeepsTheNumbers) {
  const PassCase &c = GetParam();
  auto before = parseGraph(c.input);
  ASSERT_TRUE(before) << before.status().message();
  auto after = parseGraph(c.input);
  ASSERT_TRUE(after);
  Target target = c.core ? coreProfile(referenceTarget()) : referenceTarget();
  if (!c.layout.empty())
    target.layout = c.layout;
  PassContext ctx;
  ctx.target = &target;
  ctx.leastMemory = c.least;
  for (const std::string &p : c.passes) {
    const PipelineEntry *entry = nullptr;
    for (const PipelineEntry &e : pipeline())
      if (p == e.name)
        entry = &e;
    ASSERT_NE(entry, nullptr) << "unknown pass " << p;
    auto changed = entry->make()->run(**after, ctx);
    ASSERT_TRUE(changed) << changed.status().message();
  }
  auto expected = parseGraph(c.expected);
  ASSERT_TRUE(expected) << "EXPECT section: " << expected.status().message();
  EXPECT_EQ(printGraph(**after), printGraph(**expected));

  std::mt19937 rng(1234);
  std::vector<std::shared_ptr<const Buffer>> inputs;
  for (const Value *in : (*before)->inputs())
    inputs.push_back(randomInput(in->type(), rng));
  auto ref = executeGraph(**before, inputs);
  ASSERT_TRUE(ref) << ref.status().message();
  auto got = executeGraph(**after, inputs);
  ASSERT_TRUE(got) << got.status().message();
  for (size_t o = 0; o < ref->size(); ++o) {
    const Value *out = (*before)->outputs()[o];
    auto a = asDoubles(*(*ref)[o], out->dtype(), out->type().numElements());
    auto b = asDoubles(*(*got)[o], out->dtype(), out->type().numElements());
    for (size_t k = 0; k < a.size(); ++k)
      ASSERT_NEAR(b[k], a[k], 1e-5 + 1e-5 * std::fabs(a[k])) << "output " << o << " element " << k;
  }
}

std::string caseName(const ::testing::TestParamInfo<PassCase> &info) {
  std::string n =
      info.param.file.substr(0, info.param.file.find('.')) + "_" + std::to_string(info.param.index);
  for (char &ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Passes, PassFile, ::testing::ValuesIn(loadCases()), caseName);

} // namespace
} // namespace odlac
