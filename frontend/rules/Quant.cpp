// Import rules for quantization ops: quantize, dequantize and the integer and quantized-linear products.
#include "Rules.h"

namespace odlac {
namespace {

const std::vector<ImportRule> kRules = {};

} // namespace

const std::vector<ImportRule> &quantRules() { return kRules; }

} // namespace odlac
