// Factories of the passes; Pipeline.cpp orders them.
#pragma once

#include "passes/Pass.h"

#include <memory>

namespace odlac {

std::unique_ptr<Pass> createInferShapes();
std::unique_ptr<Pass> createRemoveNoOps();
std::unique_ptr<Pass> createFoldQuantizeDequantize();
std::unique_ptr<Pass> createDecomposeQuantizedProducts();
std::unique_ptr<Pass> createFoldConstants();
std::unique_ptr<Pass> createInlineConstantIf();
std::unique_ptr<Pass> createEliminateCommonSubexpressions();
std::unique_ptr<Pass> createRecognizeLayerNorm();
std::unique_ptr<Pass> createRecognizeGelu();
std::unique_ptr<Pass> createRecognizeAttention();
std::unique_ptr<Pass> createFoldBatchNorm();
std::unique_ptr<Pass> createFoldBiasAddIntoConv();
std::unique_ptr<Pass> createFuseMatMulAddIntoGemm();
std::unique_ptr<Pass> createQuantizeStatic();
std::unique_ptr<Pass> createFuseActivations();
std::unique_ptr<Pass> createMatMulRowsAsConv();
std::unique_ptr<Pass> createSinkTransposes();
std::unique_ptr<Pass> createAssignLayout();
std::unique_ptr<Pass> createDeadCodeElimination();

} // namespace odlac
