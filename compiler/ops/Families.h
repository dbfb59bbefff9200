// The op families whose rows the registry collects; each lives in its own file.
#pragma once

#include "ops/OpDef.h"

#include <vector>

namespace odlac {

const std::vector<OpDef> &elementwiseOps(); // Elementwise.cpp
const std::vector<OpDef> &nnOps();          // Nn.cpp
const std::vector<OpDef> &reduceOps();      // Reduce.cpp
const std::vector<OpDef> &dataMovementOps(); // DataMovement.cpp

} // namespace odlac
