// Import rules for recurrent ops: RNN, LSTM and GRU.
#include "Rules.h"

namespace odlac {
namespace {

const std::vector<ImportRule> kRules = {};

} // namespace

const std::vector<ImportRule> &recurrentRules() { return kRules; }

} // namespace odlac
