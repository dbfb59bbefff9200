// Factories of the passes; Pipeline.cpp orders them.
#pragma once

#include "passes/Pass.h"

#include <memory>

namespace odlac {

std::unique_ptr<Pass> createInferShapes();
std::unique_ptr<Pass> createRemoveNoOps();
std::unique_ptr<Pass> createFoldConstants();
std::unique_ptr<Pass> createEliminateCommonSubexpressions();
std::unique_ptr<Pass> createFoldBatchNormIntoConv();
std::unique_ptr<Pass> createFoldBiasAddIntoConv();
std::unique_ptr<Pass> createFuseMatMulAddIntoGemm();
std::unique_ptr<Pass> createFuseActivations();
std::unique_ptr<Pass> createDeadCodeElimination();

} // namespace odlac
