// Codegen tests: C naming and literals, byte-stable output, weights modes and the blob format.
#include "CWriter.h"
#include "Codegen.h"
#include "Import.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace odlac {
namespace {

TEST(CWriter, IdentifiersFromTensorNames) {
  EXPECT_EQ(cIdentifier("/conv1/Conv_output_0"), "conv1_Conv_output_0");
  EXPECT_EQ(cIdentifier("fc.weight"), "fc_weight");
  EXPECT_EQ(cIdentifier("0"), "t_0");
  EXPECT_EQ(cIdentifier("int"), "t_int");
  EXPECT_EQ(cIdentifier("odla_value"), "t_odla_value");
  EXPECT_EQ(cIdentifier("///"), "t_");
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

TEST(Codegen, OutputIsByteIdenticalAcrossRuns) {
  auto g1 = mlp(), g2 = mlp();
  ASSERT_TRUE(g1 && g2);
  CodegenOptions o;
  o.emitMain = true;
  auto a = generateC(*g1, o), b = generateC(*g2, o);
  ASSERT_EQ(a.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].contents, b[i].contents) << a[i].name;
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
  auto files = generateC(*g, o);
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
  EXPECT_EQ(resolveWeightsMode(*g, o), WeightsMode::C);
  o.binThreshold = 1000;
  EXPECT_EQ(resolveWeightsMode(*g, o), WeightsMode::Bin);
  auto files = generateC(*g, o);
  ASSERT_EQ(files[2].name, "net.weights.bin");
  const std::string &blob = files[2].contents;
  ASSERT_GE(blob.size(), 64u);
  EXPECT_EQ(blob.substr(0, 8), "ODLACWB1");
  uint64_t payload = 0;
  for (int i = 7; i >= 0; --i)
    payload = (payload << 8) | static_cast<unsigned char>(blob[8 + i]);
  EXPECT_EQ(blob.size(), 64u + payload);
  EXPECT_NE(files[1].contents.find("net_load_weights(weights_path, &inst->weights)"),
            std::string::npos);
}

} // namespace
} // namespace odlac
