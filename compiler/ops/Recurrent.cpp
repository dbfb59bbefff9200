// Recurrent ops: RNN, LSTM and GRU over a whole sequence, in ONNX's layout and gate order
// (sequence-major X [T, B, I]; weights W [D, G*H, I] and R [D, G*H, H]; bias [D, 2*G*H];
// LSTM gates i, o, f, c and peepholes i, o, f; GRU gates z, r, h). Each lowers to the ODLA op
// of the same name with weight format LDGOI and gate order IOFC (LSTM) or URO (GRU). With
// other activations than ONNX's defaults (attribute `activations`: odla_ext_rnn_activation
// codes, per direction; operand activation_params: their alpha and beta), clipping or
// input_forget, it lowers to the odla_Ext variant instead (odla_ext_recurrent.h). The import
// rules (frontend/rules/Recurrent.cpp) transpose around them for layout=1.
#include "lower/Lowering.h"
#include "ops/Ops.h"

namespace odlac {
namespace {

constexpr DTypeMask kRnnTypes = kFloatTypes;
constexpr DTypeMask kSeqLenTypes = maskOf(DType::I32) | maskOf(DType::I64);

enum class Kind { Rnn, Lstm, Gru };

int gatesOf(Kind k) { return k == Kind::Rnn ? 1 : k == Kind::Lstm ? 4 : 3; }
// Activation functions per direction: f; f, g, h; f, g.
int activationsOf(Kind k) { return k == Kind::Rnn ? 1 : k == Kind::Lstm ? 3 : 2; }
// The operand holding the activations' alpha and beta.
int paramsOperand(Kind k) { return k == Kind::Lstm ? 8 : 6; }

Kind kindOf(const Node &n) {
  return n.is(ops::LSTM) ? Kind::Lstm : n.is(ops::GRU) ? Kind::Gru : Kind::Rnn;
}

Status expectDims(InferCtx &c, int operand, const char *what, const Dims &want) {
  if (!c.hasInput(operand))
    return Status::ok();
  const TensorType &t = c.in(operand);
  if (t.dims != want)
    return c.fail(std::string(what) + " must be " + dimsToString(want) + ", got " +
                  dimsToString(t.dims));
  if (operand != 4 && operand != paramsOperand(kindOf(c.node())) && t.dtype != c.in(0).dtype)
    return c.fail(std::string(what) + " element type " + dtypeName(t.dtype) +
                  " differs from X's, " + dtypeName(c.in(0).dtype));
  return Status::ok();
}

int64_t directionsOf(const std::string &direction) { return direction == "bidirectional" ? 2 : 1; }

// Operands: X, W, R, B, sequence_lens, initial_h, then (LSTM) initial_c and P, then
// activation_params (f32 [activations, 2]). Results: Y [T, D, B, H], Y_h [D, B, H] and (LSTM)
// Y_c [D, B, H].
Status inferRecurrent(InferCtx &c) {
  Kind kind = kindOf(c.node());
  const std::string &direction = c.node().s("direction");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return c.fail("direction '" + direction + "' is not forward, reverse or bidirectional");
  const Dims &x = c.in(0).dims;
  if (x.size() != 3)
    return c.fail("X " + dimsToString(x) + " must be [seq_length, batch_size, input_size]");
  int64_t t = x[0], b = x[1], i = x[2], h = c.i("hidden_size"), d = directionsOf(direction);
  int64_t g = gatesOf(kind);
  if (h < 1 || h > INT32_MAX)
    return c.fail("hidden_size " + str(h) + " must be in [1, 2^31)");
  if (Status s = expectDims(c, 1, "W", {d, g * h, i}))
    return s;
  if (Status s = expectDims(c, 2, "R", {d, g * h, h}))
    return s;
  if (Status s = expectDims(c, 3, "B", {d, 2 * g * h}))
    return s;
  if (Status s = expectDims(c, 4, "sequence_lens", {b}))
    return s;
  if (Status s = expectDims(c, 5, "initial_h", {d, b, h}))
    return s;
  if (kind == Kind::Lstm) {
    if (Status s = expectDims(c, 6, "initial_c", {d, b, h}))
      return s;
    if (Status s = expectDims(c, 7, "P", {d, 3 * h}))
      return s;
  }
  int64_t acts = d * activationsOf(kind);
  const auto &codes = c.ints("activations");
  if (!codes.empty() && static_cast<int64_t>(codes.size()) != acts)
    return c.fail("activations has " + str(codes.size()) + " entries; " + direction + " needs " +
                  str(acts));
  for (int64_t code : codes)
    if (code < ODLA_EXT_ACT_RELU || code > ODLA_EXT_ACT_SOFTPLUS)
      return c.fail("activation code " + str(code) + " is not an odla_ext_rnn_activation");
  if (Status s = expectDims(c, paramsOperand(kind), "activation_params", {acts, 2}))
    return s;
  if (c.f("clip") < 0)
    return c.fail("clip " + std::to_string(c.f("clip")) + " must be >= 0 (0: no clipping)");
  DType type = c.in(0).dtype;
  c.setOut(0, TensorType{type, {t, d, b, h}});
  c.setOut(1, TensorType{type, {d, b, h}});
  if (kind == Kind::Lstm)
    c.setOut(2, TensorType{type, {d, b, h}});
  return Status::ok();
}

odla_rnn_direction odlaDirection(const std::string &direction) {
  return direction == "reverse"         ? ODLA_RNN_REVERSE
         : direction == "bidirectional" ? ODLA_RNN_BIDIRECTIONAL
                                        : ODLA_RNN_FORWARD;
}

// Binds the ODLA op's results (Y, Y_h and, for LSTM, Y_c) to the node's results.
void bindResults(LowerCtx &c, const std::vector<lower::Val> &results) {
  for (int i = 0; i < c.node().numOutputs(); ++i)
    c.setOut(i, i < static_cast<int>(results.size()) ? results[i] : lower::Val{});
}

lower::Ids resultIds(const LowerCtx &c) {
  lower::Ids ids;
  for (const Value *v : c.node().outputs())
    ids.names.push_back(v->name());
  return ids;
}

// Whether the node needs the odla_Ext variant: options ODLA's core op lacks.
bool needsExtension(const LowerCtx &c) {
  const Node &n = c.node();
  return !n.ints("activations").empty() || n.f("clip") > 0 ||
         (n.hasAttr("input_forget") && n.i("input_forget") != 0) ||
         n.input(paramsOperand(kindOf(n))) != nullptr;
}

lower::I32s activationCodes(const LowerCtx &c) { return i32s(c.node().ints("activations")); }
float clipOf(const LowerCtx &c) { return static_cast<float>(c.node().f("clip")); }

void lowerRnn(LowerCtx &c) {
  const Node &n = c.node();
  auto h = static_cast<odla_int32>(n.i("hidden_size"));
  auto dir = odlaDirection(n.s("direction"));
  lower::Shape wdims = shapeArg(n.input(1)->dims());
  if (needsExtension(c))
    bindResults(c, c.sink().ExtRNN(c.in(0), ODLA_RNN_LDGOI, wdims, c.in(1), c.in(2), c.in(3),
                                   c.in(4), c.in(5), h, dir, ODLA_RNN_HIDDEN_STATE,
                                   activationCodes(c), c.in(6), clipOf(c), resultIds(c)));
  else
    bindResults(c, c.sink().RNN(c.in(0), ODLA_RNN_LDGOI, wdims, c.in(1), c.in(2), c.in(3), c.in(4),
                                c.in(5), h, dir, ODLA_RNN_HIDDEN_STATE, resultIds(c)));
}

void lowerLstm(LowerCtx &c) {
  const Node &n = c.node();
  auto h = static_cast<odla_int32>(n.i("hidden_size"));
  auto dir = odlaDirection(n.s("direction"));
  lower::Shape wdims = shapeArg(n.input(1)->dims());
  if (needsExtension(c))
    bindResults(c, c.sink().ExtLSTM(c.in(0), ODLA_RNN_LDGOI, ODLA_RNN_IOFC, wdims, c.in(1), c.in(2),
                                    c.in(3), c.in(4), c.in(5), c.in(6), c.in(7), h, dir,
                                    ODLA_RNN_HIDDEN_CELL_STATE, activationCodes(c), c.in(8),
                                    clipOf(c), {n.i("input_forget") != 0}, resultIds(c)));
  else
    bindResults(c, c.sink().LSTM(c.in(0), ODLA_RNN_LDGOI, ODLA_RNN_IOFC, wdims, c.in(1), c.in(2),
                                 c.in(3), c.in(4), c.in(5), c.in(6), c.in(7), h, dir,
                                 ODLA_RNN_HIDDEN_CELL_STATE, resultIds(c)));
}

void lowerGru(LowerCtx &c) {
  const Node &n = c.node();
  auto h = static_cast<odla_int32>(n.i("hidden_size"));
  auto dir = odlaDirection(n.s("direction"));
  lower::Shape wdims = shapeArg(n.input(1)->dims());
  lower::Flag lbr{n.i("linear_before_reset") != 0};
  if (needsExtension(c))
    bindResults(c, c.sink().ExtGRU(c.in(0), ODLA_RNN_LDGOI, ODLA_RNN_URO, wdims, c.in(1), c.in(2),
                                   c.in(3), c.in(4), c.in(5), h, dir, lbr, ODLA_RNN_HIDDEN_STATE,
                                   activationCodes(c), c.in(6), clipOf(c), resultIds(c)));
  else
    bindResults(c, c.sink().GRU(c.in(0), ODLA_RNN_LDGOI, ODLA_RNN_URO, wdims, c.in(1), c.in(2),
                                c.in(3), c.in(4), c.in(5), h, dir, lbr, ODLA_RNN_HIDDEN_STATE,
                                resultIds(c)));
}

const OperandDef kX{"x", OperandDef::Required, kRnnTypes};
const OperandDef kW{"w", OperandDef::Required, kRnnTypes};
const OperandDef kR{"r", OperandDef::Required, kRnnTypes};
const OperandDef kB{"b", OperandDef::Optional, kRnnTypes};
const OperandDef kSeqLens{"sequence_lens", OperandDef::Optional, kSeqLenTypes};
const OperandDef kInitialH{"initial_h", OperandDef::Optional, kRnnTypes};
const OperandDef kActivationParams{"activation_params", OperandDef::Optional, maskOf(DType::F32)};
const AttrDef kHiddenSize{"hidden_size", AttrKind::Int, std::nullopt};
const AttrDef kDirection{"direction", AttrKind::String, AttrValue(std::string("forward"))};
const AttrDef kActivations{"activations", AttrKind::Ints, AttrValue(std::vector<int64_t>{})};
const AttrDef kClip{"clip", AttrKind::Float, AttrValue(0.0)};

} // namespace

namespace ops {

const OpDef RNN = {"RNN",
                   {kX, kW, kR, kB, kSeqLens, kInitialH, kActivationParams},
                   2,
                   {kHiddenSize, kDirection, kActivations, kClip},
                   FusionClass::Opaque,
                   kTraitNone,
                   inferRecurrent,
                   lowerRnn};
const OpDef LSTM = {"LSTM",
                    {kX,
                     kW,
                     kR,
                     kB,
                     kSeqLens,
                     kInitialH,
                     {"initial_c", OperandDef::Optional, kRnnTypes},
                     {"p", OperandDef::Optional, kRnnTypes},
                     kActivationParams},
                    3,
                    {kHiddenSize,
                     kDirection,
                     kActivations,
                     kClip,
                     {"input_forget", AttrKind::Int, AttrValue(int64_t{0})}},
                    FusionClass::Opaque,
                    kTraitNone,
                    inferRecurrent,
                    lowerLstm};
const OpDef GRU = {"GRU",
                   {kX, kW, kR, kB, kSeqLens, kInitialH, kActivationParams},
                   2,
                   {kHiddenSize,
                    kDirection,
                    kActivations,
                    kClip,
                    {"linear_before_reset", AttrKind::Int, AttrValue(int64_t{0})}},
                   FusionClass::Opaque,
                   kTraitNone,
                   inferRecurrent,
                   lowerGru};

} // namespace ops

} // namespace odlac
