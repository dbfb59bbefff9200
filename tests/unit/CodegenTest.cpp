// Codegen tests: C naming and literals, byte-stable output, weights modes and the blob format.
#include "Codegen.h"
#include "CWriter.h"
#include "Import.h"
#include "OnnxBuilder.h"
#include "Report.h"
#include "support/Text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

namespace odlac {
namespace {

// Past 100 columns a statement continues after ", " or before "||" / "&&", never inside a
// string literal or a comment; preprocessor lines and macro continuations stay whole.
TEST(CWriter, LongLinesWrapOutsideLiteralsAndComments) {
  auto written = [](const std::string &text) {
    CWriter w;
    w.line(text);
    return w.str();
  };
  std::string args;
  for (int i = 0; i < 12; ++i)
    args += (i ? ", " : "") + std::string("argument_") + std::to_string(i);
  std::string call = "f(" + args + ");";
  std::string out = written(call);
  std::string joined = out;
  for (size_t at; (at = joined.find("\n    ")) != std::string::npos;)
    joined.replace(at, 5, " ");
  EXPECT_EQ(joined, call + "\n") << out; // only line breaks were added, after a ", "
  EXPECT_GT(std::count(out.begin(), out.end(), '\n'), 1) << out;
  for (size_t start = 0, end; (end = out.find('\n', start)) != std::string::npos; start = end + 1)
    EXPECT_LE(end - start, CWriter::kWidth) << out;
  // The same text again with the separators inside a literal, a comment, a directive.
  std::string literal = "g(\"" + args + " || x && y\");";
  EXPECT_EQ(written(literal), literal + "\n");
  std::string comment = "h(); /* " + args + " */";
  EXPECT_EQ(written(comment), comment + "\n");
  std::string line = "h(); // " + args;
  EXPECT_EQ(written(line), line + "\n");
  std::string directive = "#define CALL " + call;
  EXPECT_EQ(written(directive), directive + "\n");
  std::string continued = call + " \\";
  EXPECT_EQ(written(continued), continued + "\n");
  std::string cond = "if (" + std::string(60, 'a') + " == 1 || " + std::string(60, 'b') + ")";
  EXPECT_EQ(written(cond),
            "if (" + std::string(60, 'a') + " == 1\n    || " + std::string(60, 'b') + ")\n");
}

TEST(CWriter, IdentifiersFromTensorNames) {
  EXPECT_EQ(cIdentifier("/conv1/Conv_output_0"), "conv1_Conv_output_0");
  EXPECT_EQ(cIdentifier("fc.weight"), "fc_weight");
  EXPECT_EQ(cIdentifier("0"), "t_0");
  EXPECT_EQ(cIdentifier("int"), "t_int");
  EXPECT_EQ(cIdentifier("odla_value"), "t_odla_value");
  EXPECT_EQ(cIdentifier("///"), "t_");
}

TEST(CWriter, IdentifiersNeverTakeReservedNames) {
  // Keywords of C and C++, macros of the headers generated files include, ODLA's and odlac's
  // names.
  for (const char *word : {"class", "bool", "typeof", "EOF", "NAN", "errno", "stdin", "linux",
                           "ODLA_SUCCESS", "odlac_tensor", "ODLAC_MAX_RANK", "inst", "main"})
    EXPECT_EQ(cIdentifier(word), std::string("t_") + word);
  EXPECT_EQ(cIdentifier("size_t"), "size_t"); // a type name: shadowing it is harmless
  // The model's own symbols, in both cases; the escape that would start with the prefix too.
  EXPECT_EQ(cIdentifier("net_run", "net"), "t_net_run");
  EXPECT_EQ(cIdentifier("NET_CHECK", "net"), "t_NET_CHECK");
  EXPECT_EQ(cIdentifier("net", "net"), "t_net");
  EXPECT_EQ(cIdentifier("network", "net"), "network");
  EXPECT_EQ(cIdentifier("t_run", "t"), "v_t_run");
  EXPECT_EQ(cIdentifier("int", "t"), "v_int");
  EXPECT_EQ(cIdentifier("int", "tiny"), "t_int");
  EXPECT_TRUE(cIdentifierIsReserved("ODLA_FLOAT32"));
  EXPECT_FALSE(cIdentifierIsReserved("x"));
}

TEST(CWriter, ScopesGiveEachNameOnce) {
  CScope scope("net", {"inst"});
  EXPECT_EQ(scope.add("a.b"), "a_b");
  EXPECT_EQ(scope.add("a-b"), "a_b_2");
  EXPECT_EQ(scope.add("a_b_2"), "a_b_2_2");
  EXPECT_EQ(scope.add("inst"), "t_inst");
  EXPECT_EQ(scope.add("t_inst"), "t_inst_2");
  EXPECT_EQ(scope.unique("net_w_x"), "net_w_x");
  EXPECT_EQ(scope.unique("net_w_x"), "net_w_x_2");
}

TEST(CWriter, StringLiteralsHoldNoTrigraph) {
  // (`?\?` in this file's own literals keeps them free of trigraphs too.)
  EXPECT_EQ(cString("a?\?/\""), "\"a?\\?/\\\"\"");
  EXPECT_EQ(cString("?\?\?="), "\"?\\?\\?=\"");
  EXPECT_EQ(cString("?x?"), "\"?x?\"");
  EXPECT_EQ(cString("\xe2\x80\xae"), "\"\\342\\200\\256\"");
  EXPECT_EQ(cStringLength("a\n"), 5u);
}

TEST(CWriter, CommentTextCannotEndTheComment) {
  EXPECT_EQ(cComment("a */ b /* c"), "a *\\/ b /\\* c");
  EXPECT_EQ(cComment("**/"), "**\\/");
  EXPECT_EQ(cComment("/*/"), "/\\*\\/");
  EXPECT_EQ(cComment("x\ny\r\t"), "x\\x0ay\\x0d\\x09");
  EXPECT_EQ(cComment("?\?/ \\"), "?\\?/ \\\\");
  // Readable UTF-8 stays; bidirectional overrides, zero-width characters and invalid bytes
  // do not.
  EXPECT_EQ(cComment("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(cComment("\xe2\x80\xae\xe2\x80\x8b\xff\xc0\xaf"),
            "\\xe2\\x80\\xae\\xe2\\x80\\x8b\\xff\\xc0\\xaf");
}

TEST(Text, Utf8DecodingAndShowableCharacters) {
  EXPECT_EQ(decodeUtf8("\xf0\x9f\x98\x80", 0).codePoint, 0x1f600);
  EXPECT_EQ(decodeUtf8("\xf0\x9f\x98\x80", 0).length, 4u);
  for (const char *bad : {"\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80", "\xe2\x82"})
    EXPECT_EQ(decodeUtf8(bad, 0).codePoint, -1) << bad;
  EXPECT_FALSE(isShowable(0x1b));
  EXPECT_FALSE(isShowable(0x85));
  EXPECT_FALSE(isShowable(0x202e));
  EXPECT_TRUE(isShowable(0xe9));
  EXPECT_EQ(printable("ok \x1b[2J\xff\xc3\xa9"), "ok \\x1b[2J\\xff\xc3\xa9");
}

TEST(CWriter, FloatLiteralsRoundTrip) {
  for (float f : {0.1f, -3.0f, 1e-38f, 3.4028235e38f, 123456.789f, 0.0f}) {
    std::string lit = cFloat(f);
    ASSERT_EQ(lit.back(), 'f') << lit;
    EXPECT_EQ(std::strtof(lit.c_str(), nullptr), f) << lit;
    EXPECT_NE(lit.find_first_of(".e"), std::string::npos) << lit;
  }
  EXPECT_EQ(cFloat(INFINITY), "HUGE_VALF");
  EXPECT_EQ(cFloat(-INFINITY), "-HUGE_VALF");
  EXPECT_EQ(cFloat(NAN), "NAN");
  EXPECT_EQ(cString("a\"b\\c\n"), "\"a\\\"b\\\\c\\012\"");
}

std::unique_ptr<Graph> mlp() {
  auto g = importOnnxFile(ODLAC_SOURCE_DIR "/models/mlp/model.onnx", {});
  EXPECT_TRUE(g) << g.status().message();
  return g ? std::move(*g) : nullptr;
}

TEST(Codegen, BannerAndReportTakeAnyProducer) {
  auto g = mlp();
  ASSERT_TRUE(g);
  g->info().producerName = "p */ int pwned; /*\n\xff\x01\"";
  g->info().fileName = "m\x1b.onnx";
  CodegenOptions o;
  o.flags = "--input-shape=a*/b:1";
  auto files = generateC(*g, resolveCodegen(*g, o, {}));
  EXPECT_NE(files[0].contents.find("from model 'm\\x1b.onnx' (producer p *\\/ int pwned; /\\*"
                                   "\\x0a\\xff\\x01\""),
            std::string::npos)
      << files[0].contents;
  EXPECT_NE(files[0].contents.find("with flags: --input-shape=a*\\/b:1\n"), std::string::npos);
  std::string json = reportJson(*g, ReportFacts{});
  EXPECT_NE(json.find("\"producer\": \"p */ int pwned; /*\\u000a\\ufffd\\u0001\\\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"model\": \"m\\u001b.onnx\""), std::string::npos);
}

// The record of the ODLA calls, and the RAM and flash the report and the budgets state: with
// the M4F's table each part of it; without one, today's figures and what they leave out.
TEST(Codegen, ReportStatesRamAndFlashFromTheCallsOfTheCode) {
  auto g = mlp();
  ASSERT_TRUE(g);
  CodegenOptions o;
  o.noHeap = true;
  auto files = generateC(*g, resolveCodegen(*g, o, {}));
  ReportFacts f;
  f.calls = odlaCalls(files, "net");
  EXPECT_EQ(f.calls["odla_CreateComputation"], 1);
  EXPECT_EQ(f.calls.count("odla_value"), 0u); // a type, not a call
  // A model's name that reads like a call, in a string or a comment of the C, is none.
  EXPECT_TRUE(odlaCalls({{"net.c", "/* odla_Fake(1) */ f(\"odla_Fake(\\\"\", 'x');\n"
                                   "// odla_Fake()\nodla_Real(2);"}},
                        "net") == (std::map<std::string, int>{{"odla_Real", 1}}));
  EXPECT_GE(f.calls["odla_CreateConstant"], 2);
  f.memoryBytes = 5000;
  MemoryFigure host = ramFigure(*g, f);
  EXPECT_EQ(host.bytes, 5000u);
  EXPECT_NE(host.text().find("not counted: the stack"), std::string::npos) << host.text();
  EXPECT_NE(flashFigure(*g, f).notCounted.find("the backend library"), std::string::npos);
  EXPECT_NE(reportText(*g, f).find("no footprint table for the host"), std::string::npos);
  ASSERT_TRUE(hasFootprintTable("reference", "thumbv7em-none-eabi"));
  EXPECT_FALSE(hasFootprintTable("dnnl", "thumbv7em-none-eabi"));
  f.target = "thumbv7em-none-eabi";
  f.footprint = backendFootprint(f.calls, referenceTypes(*g));
  EXPECT_TRUE(f.footprint->unknown.empty());
  EXPECT_GT(f.footprint->backendFlash, 10000u);
  ASSERT_TRUE(f.footprint->stack);
  MemoryFigure ram = ramFigure(*g, f), flash = flashFigure(*g, f);
  EXPECT_EQ(ram.bytes, 5000 + f.footprint->staticRam + *f.footprint->stack);
  EXPECT_EQ(ram.notCounted, "");
  EXPECT_EQ(flash.bytes, weightBytes(*g) + f.footprint->codeFlash + f.footprint->backendFlash +
                             f.footprint->libraryFlash);
  EXPECT_EQ(flash.notCounted, "");
  {
    ReportFacts stale = f; // a call the table lacks is named, not silently left out
    stale.calls["odla_ExtNotYetMeasured"] = 1;
    stale.footprint = backendFootprint(stale.calls, referenceTypes(*g));
    EXPECT_NE(flashFigure(*g, stale).notCounted.find("odla_ExtNotYetMeasured"), std::string::npos);
  }
  std::string json = reportJson(*g, f);
  EXPECT_NE(json.find("\"ram_bytes\": " + std::to_string(ram.bytes)), std::string::npos) << json;
  EXPECT_NE(json.find("\"backend\": " + std::to_string(f.footprint->backendFlash)),
            std::string::npos);
  EXPECT_NE(json.find("\"odla_CreateComputation\": 1"), std::string::npos);
  // Every type's kernels (no NAME_reference.h) link more than float32's alone.
  EXPECT_GT(backendFootprint(f.calls, {}).backendFlash, f.footprint->backendFlash);
}

TEST(Codegen, OutputIsByteIdenticalAcrossRuns) {
  auto g1 = mlp(), g2 = mlp();
  ASSERT_TRUE(g1 && g2);
  CodegenOptions o;
  o.emitMain = true;
  auto a = generateC(*g1, resolveCodegen(*g1, o, {})),
       b = generateC(*g2, resolveCodegen(*g2, o, {}));
  ASSERT_EQ(a.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(fileText(a[i]), fileText(b[i])) << a[i].name;
  }
  EXPECT_EQ(a[0].name, "net.h");
  EXPECT_EQ(a[2].name, "net_weights.c");
  EXPECT_EQ(a[3].name, "main.c");
}

TEST(Codegen, EverySymbolCarriesTheModelPrefix) {
  auto g = mlp();
  ASSERT_TRUE(g);
  CodegenOptions o;
  o.name = "mlp";
  auto files = generateC(*g, resolveCodegen(*g, o, {}));
  const std::string &h = files[0].contents;
  EXPECT_NE(h.find("int mlp_create(mlp_instance **out);"), std::string::npos) << h;
  EXPECT_NE(h.find("int mlp_run(mlp_instance *inst, const float *input, float *output);"),
            std::string::npos);
  EXPECT_NE(h.find("int mlp(const float *input, float *output);"), std::string::npos);
  EXPECT_NE(h.find("#define MLP_WEIGHTS_BYTES 11112"), std::string::npos);
  EXPECT_EQ(h.find("net_"), std::string::npos);
}

TEST(Codegen, WeightsModeAutoSwitchesToBlobAboveTheThreshold) {
  auto g = mlp();
  ASSERT_TRUE(g);
  CodegenOptions o;
  EXPECT_EQ(resolveCodegen(*g, o, {}).options.weights, WeightsMode::C);
  o.binThreshold = 1000;
  CodegenConfig config = resolveCodegen(*g, o, {});
  EXPECT_EQ(config.options.weights, WeightsMode::Bin);
  auto files = generateC(*g, config);
  ASSERT_EQ(files[2].name, "net.weights.bin");
  const std::string blob = fileText(files[2]);
  EXPECT_EQ(blob.size(), files[2].size);
  ASSERT_GE(blob.size(), 64u);
  EXPECT_EQ(blob.substr(0, 8), "ODLACWB1");
  uint64_t payload = 0;
  for (int i = 7; i >= 0; --i)
    payload = (payload << 8) | static_cast<unsigned char>(blob[8 + i]);
  EXPECT_EQ(blob.size(), 64u + payload);
  EXPECT_NE(files[1].contents.find("net_load_weights(weights_path, &inst->weights)"),
            std::string::npos);
}

// The blob's fingerprint (header bytes 16-23, the one the generated loader compares) changes
// when any byte of any weight does, wherever it lies in the four word lanes or the byte tail,
// and when two words of a weight swap places.
TEST(Codegen, BlobFingerprintFollowsEveryWeightByte) {
  auto fingerprint = [](Graph &g) {
    CodegenOptions o;
    o.weights = WeightsMode::Bin;
    auto files = generateC(g, resolveCodegen(g, o, {}));
    return fileText(files[2]).substr(16, 8);
  };
  std::ifstream file(ODLAC_SOURCE_DIR "/models/mlp/model.onnx", std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(text.str()));
  // The mlp with initializer `name`'s raw bytes changed by `edit` (the graph otherwise the
  // same, its constants in the same order), and its fingerprint.
  auto edited = [&](const std::string &name, const std::function<void(std::string &)> &edit) {
    onnx::ModelProto copy = m;
    for (onnx::TensorProto &t : *copy.mutable_graph()->mutable_initializer())
      if (t.name() == name)
        edit(*t.mutable_raw_data());
    std::string bytes = copy.SerializeAsString();
    auto g = importOnnxBytes(bytes.data(), bytes.size(), "mlp.onnx", {});
    EXPECT_TRUE(g) << g.status().message();
    return g ? fingerprint(**g) : std::string();
  };
  const std::string original = edited("", [](std::string &) {});
  EXPECT_EQ(original, fingerprint(*mlp()));
  const onnx::TensorProto *large = nullptr, *tailed = nullptr; // the largest; one with a tail
  for (const onnx::TensorProto &t : m.graph().initializer()) {
    if (!large || t.raw_data().size() > large->raw_data().size())
      large = &t;
    if (t.raw_data().size() > 32 && t.raw_data().size() % 32)
      tailed = &t;
  }
  ASSERT_TRUE(large && tailed && large->raw_data().size() > 64);
  const size_t size = large->raw_data().size();
  for (size_t at : {size_t{0}, size_t{9}, size_t{17}, size_t{31}, size / 2, size - 1})
    EXPECT_NE(edited(large->name(), [&](std::string &b) { b[at] ^= 1; }), original)
        << "byte " << at << " of " << size;
  EXPECT_NE(edited(tailed->name(), [](std::string &b) { b.back() ^= 1; }), original)
      << "the last byte of a tail";
  const std::string &bytes = large->raw_data();
  ASSERT_NE(bytes.compare(0, 8, bytes, 32, 8), 0); // words 0 and 4 (one lane) differ
  EXPECT_NE(
      edited(large->name(),
             [](std::string &b) { std::swap_ranges(b.begin(), b.begin() + 8, b.begin() + 32); }),
      original)
      << "two words of a lane swapped";
}

// A string initializer reaches net.c as a string literal through cString: quotes, backslashes,
// comment ends, trigraphs, newlines and non-ASCII bytes are escaped; the array's comment takes
// the constant's name through cComment. Nothing goes to the weights (pointers are no bytes).
TEST(Codegen, StringConstantsAreEscapedLiterals) {
  using namespace test;
  onnx::ModelProto m = model(20);
  auto *g = m.mutable_graph();
  *g->add_input() = tensorInfo("x", onnx::TensorProto::STRING, {2});
  *g->add_output() = tensorInfo("y", onnx::TensorProto::STRING, {2});
  onnx::TensorProto *c = g->add_initializer();
  c->set_name("c */ evil");
  c->set_data_type(onnx::TensorProto::STRING);
  c->add_dims(2);
  c->add_string_data("a\"b\\c*/?\?/\n");
  c->add_string_data("\xc3\xa9%s");
  *g->add_node() = node("StringConcat", {"x", "c */ evil"}, {"y"});
  std::string bytes = m.SerializeAsString();
  auto graph = importOnnxBytes(bytes.data(), bytes.size(), "m.onnx", {});
  ASSERT_TRUE(graph) << graph.status().message();
  CodegenOptions o;
  auto files = generateC(**graph, resolveCodegen(**graph, o, {}));
  std::string netC;
  for (const GeneratedFile &f : files)
    if (f.name == "net.c")
      netC = f.contents;
  EXPECT_NE(netC.find("/* c *\\/ evil: str[2] */\nstatic const odla_string net_s_c_evil[2] = "
                      "{\"a\\\"b\\\\c*/?\\?/\\012\", \"\\303\\251%s\"};"),
            std::string::npos)
      << netC;
  for (const GeneratedFile &f : files) {
    if (f.name == "net_weights.c") {
      EXPECT_EQ(fileText(f).find("net_s_c_evil"), std::string::npos);
    }
  }
}

} // namespace
} // namespace odlac
