// Ops that fit no other family: signal windows and transforms, detection (NMS, RoiAlign),
// sampling, and training optimizers.
#include "lower/Lowering.h"
#include "ops/Families.h"

namespace odlac {
namespace {

const std::vector<OpDef> kOps = {};

} // namespace

const std::vector<OpDef> &miscOps() { return kOps; }

} // namespace odlac
