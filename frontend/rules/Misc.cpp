// Import rules for ops that fit no other family: signal windows and transforms, detection (NMS, RoiAlign), sampling, and training optimizers.
#include "Rules.h"

namespace odlac {
namespace {

const std::vector<ImportRule> kRules = {};

} // namespace

const std::vector<ImportRule> &miscRules() { return kRules; }

} // namespace odlac
