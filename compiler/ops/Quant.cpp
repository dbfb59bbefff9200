// Quantization ops: quantize, dequantize and the integer and quantized-linear products.
#include "lower/Lowering.h"
#include "ops/Families.h"

namespace odlac {
namespace {

const std::vector<OpDef> kOps = {};

} // namespace

const std::vector<OpDef> &quantOps() { return kOps; }

} // namespace odlac
