// Recurrent ops: RNN, LSTM and GRU.
#include "lower/Lowering.h"
#include "ops/Families.h"

namespace odlac {
namespace {

const std::vector<OpDef> kOps = {};

} // namespace

const std::vector<OpDef> &recurrentOps() { return kOps; }

} // namespace odlac
