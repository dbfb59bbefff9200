// The IR's ops by name, for code that must name one (a rewrite's pattern, a pass's special
// case): `n->is(ops::Conv)`, `g.addNode(ops::Reshape, ...)`. Each handle is its op table row,
// defined in its family's file (the file each group below names), so a misspelt op does not
// compile. The list is also the registry: allOps() walks it in this order, and OpTableTest
// checks that each handle's row carries the handle's name.
#pragma once

#include "ops/OpDef.h"

// clang-format off
// X(name) for every op table row, in registry order, grouped by the file that defines them.
#define ODLAC_OP_TABLE(X) \
  /* Elementwise.cpp: unary math, activations, Cast */ \
  X(Identity) X(Abs) X(Neg) X(Sign) X(Exp) X(Log) X(Sqrt) X(Reciprocal) X(Floor) X(Ceil) \
  X(Round) X(Sin) X(Cos) X(Tan) X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh) X(Acosh) \
  X(Atanh) X(Erf) X(IsNaN) X(IsInf) X(Not) X(BitwiseNot) X(Relu) X(Sigmoid) X(Tanh) X(Softplus) \
  X(Softsign) X(LeakyRelu) X(Elu) X(Selu) X(Celu) X(HardSigmoid) X(ThresholdedRelu) X(Shrink) \
  X(Clamp) X(Cast) \
  /* Binary.cpp: broadcasting arithmetic, comparisons, logic, Select */ \
  X(Add) X(Sub) X(Mul) X(Div) X(Pow) X(Mod) X(Max) X(Min) X(Mean) X(Shift) X(PRelu) X(Equal) \
  X(NotEqual) X(Less) X(LessOrEqual) X(Greater) X(GreaterOrEqual) X(And) X(Or) X(Xor) \
  X(BitwiseAnd) X(BitwiseOr) X(BitwiseXor) X(Select) \
  /* Nn.cpp: convolution, pooling, batch normalization, matrix products */ \
  X(Conv) X(DeformConv) X(ConvTranspose) X(MaxPool) X(MaxPoolIndices) X(AveragePool) X(LpPool) \
  X(Col2Im) X(BatchNormalization) X(Gemm) X(MatMul) X(Einsum) X(Det) \
  /* Reduce.cpp: reductions, arg-reductions, the softmax family, cumulative sums */ \
  X(ReduceSum) X(ReduceMean) X(ReduceMax) X(ReduceMin) X(ReduceProd) X(ReduceSumSquare) \
  X(ReduceLogSum) X(ReduceLogSumExp) X(ReduceL1) X(ReduceL2) X(ReduceDynamic) X(ArgMax) \
  X(ArgMin) X(Softmax) X(LogSoftmax) X(Hardmax) X(CumSum) X(CumProd) \
  /* DataMovement.cpp: reshape, transpose, concat, pad, slice, tile... */ \
  X(BitCast) X(Reshape) X(Transpose) X(Concat) X(Pad) X(Broadcast) X(Tile) X(TileDynamic) \
  X(Slice) X(SliceDynamic) X(PadDynamic) X(Compress) X(EyeLike) X(ReverseSequence) \
  /* Indexing.cpp: gather, scatter, one-hot, top-k, non-zero */ \
  X(Gather) X(GatherElements) X(GatherND) X(ScatterElements) X(ScatterND) X(OneHot) X(TopK) \
  X(NonZero) \
  /* Resize.cpp */ \
  X(Resize) \
  /* Normalization.cpp: instance, local-response and Lp normalization, losses */ \
  X(InstanceNormalization) X(LRN) X(LpNormalize) X(NegativeLogLikelihoodLoss) \
  /* Recurrent.cpp */ \
  X(RNN) X(LSTM) X(GRU) \
  /* Quant.cpp: quantization, integer-only quantized products */ \
  X(Quantize) X(Dequantize) X(QLinearConv) X(QLinearMatMul) X(QLinearAdd) X(QLinearMul) \
  /* Misc.cpp: detection, sampling, signal, text vectorization */ \
  X(NMS) X(NonMaxSuppression) X(RoiAlign) X(MaxRoiPool) X(GridSample) X(AffineGrid) X(Window) \
  X(DFT) X(STFT) X(MelWeightMatrix) X(TfIdfVectorize) \
  /* Fused.cpp: ops the optimizer forms */ \
  X(Gelu) X(FusedConv) X(FusedGemm) \
  /* ControlFlow.cpp: bodies as subgraphs */ \
  X(If) X(Loop) \
  /* Transformer.cpp */ \
  X(LayerNorm) X(Attention) \
  /* Custom.cpp: kernels the application registers */ \
  X(CustomOp) \
  /* Text.cpp: string tensors */ \
  X(StringConcat) X(StringNormalizer) X(StringSplit) X(RegexFullMatch) X(LabelEncoder) \
  /* Tree.cpp: ai.onnx.ml's tree ensembles */ \
  X(TreeEnsemble)
// clang-format on

namespace odlac::ops {

#define ODLAC_DECLARE_OP(name) extern const OpDef name;
ODLAC_OP_TABLE(ODLAC_DECLARE_OP)
#undef ODLAC_DECLARE_OP

} // namespace odlac::ops
