// Import rules for ONNX ops that produce shapes or generate tensors: Shape and Size (constants:
// every shape is static after import), Range, ConstantOfShape, EyeLike and Trilu.
#include "Rules.h"

#include "Tensor.h"
#include "evaluate/Evaluate.h"
#include "ir/Limits.h"

#include <cmath>
#include <cstring>

namespace odlac {
namespace {

// The static result shape the model declares for output 0 when `param` (input `input`) is
// known only at run time.
Expected<Dims> plannedDims(const ImportCtx &ctx, const char *param, int input) {
  if (auto d = ctx.declaredDims(0))
    return *d;
  return ctx.fail(std::string(param) + " (input " + str(input) + ", '" + ctx.input(input)->name() +
                  "') is known only at run time and the model declares no " +
                  "static shape for output '" + ctx.outputName(0) +
                  "'; pin the inputs it depends on with --input-shape or make it a constant");
}

Value *int64Constant(ImportCtx &ctx, const std::string &name, const Dims &dims,
                     const std::vector<int64_t> &values) {
  return ctx.constant(name, {DType::I64, dims}, values.data());
}

// ---- Shape and Size ------------------------------------------------------------------------

Status importShape(ImportCtx &ctx) {
  const Dims &dims = ctx.input(0)->dims();
  int64_t rank = static_cast<int64_t>(dims.size());
  auto clampAxis = [&](int64_t a) { return std::clamp(a < 0 ? a + rank : a, int64_t{0}, rank); };
  int64_t start = clampAxis(ctx.attrInt("start", 0)), end = clampAxis(ctx.attrInt("end", rank));
  std::vector<int64_t> kept(dims.begin() + start, dims.begin() + std::max(start, end));
  kept.push_back(0); // keeps the data pointer valid for an empty result
  ctx.setOutput(
      0, int64Constant(ctx, ctx.outputName(0), {static_cast<int64_t>(kept.size()) - 1}, kept));
  return Status::ok();
}

Status importSize(ImportCtx &ctx) {
  ctx.setOutput(0, int64Constant(ctx, ctx.outputName(0), {}, {ctx.input(0)->type().numElements()}));
  return Status::ok();
}

// ---- Range ------------------------------------------------------------------------------

// One element of a numeric constant as double (Range's operand types: float, double, int16,
// int32, int64).
Expected<double> scalarOf(const ImportCtx &ctx, const Value *v, const char *what) {
  auto data = evaluateValue(*v, kMaxCompileTimeBytes);
  if (!data)
    return data.takeStatus();
  switch (v->dtype()) {
  case DType::F32:
    return static_cast<double>(*(*data)->as<float>());
  case DType::F64:
    return *(*data)->as<double>();
  case DType::I16:
    return static_cast<double>(*(*data)->as<int16_t>());
  case DType::I32:
    return static_cast<double>(*(*data)->as<int32_t>());
  case DType::I64:
    return static_cast<double>(*(*data)->as<int64_t>());
  default:
    return ctx.fail(std::string(what) + " of element type " + dtypeName(v->dtype()) +
                    " is not supported (float, double, int16, int32, int64)");
  }
}

// `count` values value(0), value(1), ... converted to `dtype`'s bytes (each in its range).
template <class ValueAt>
std::vector<unsigned char> numericBytes(DType dtype, int64_t count, ValueAt value) {
  size_t size = dtypeBytes(dtype);
  std::vector<unsigned char> out(std::max<size_t>(1, static_cast<size_t>(count) * size));
  for (int64_t i = 0; i < count; ++i) {
    unsigned char *p = out.data() + static_cast<size_t>(i) * size;
    auto put = [&](auto v) { std::memcpy(p, &v, sizeof v); };
    double v = value(i);
    switch (dtype) {
    case DType::F32:
      put(static_cast<float>(v));
      break;
    case DType::F64:
      put(v);
      break;
    case DType::I16:
      put(static_cast<int16_t>(v));
      break;
    case DType::I32:
      put(static_cast<int32_t>(v));
      break;
    default:
      put(static_cast<int64_t>(v));
      break;
    }
  }
  return out;
}

// output[i] = start + i * delta for i < max(ceil((limit - start) / delta), 0), in the operands'
// type `dtype` (float, double, int16, int32, int64), named `name`: a constant when the operands
// are; otherwise start + delta * [0, 1, ...] over the length the model declares.
Expected<Value *> emitRange(ImportCtx &ctx, Value *const (&in)[3], DType dtype,
                            const std::string &name) {
  const char *names[] = {"start", "limit", "delta"};
  bool known[3];
  for (int i = 0; i < 3; ++i)
    known[i] = isComputableFromConstants(*in[i]);
  Dims planned;
  if (known[0] && known[1] && known[2]) {
    double v[3];
    for (int i = 0; i < 3; ++i) {
      auto s = scalarOf(ctx, in[i], names[i]);
      if (!s)
        return s.takeStatus();
      v[i] = *s;
    }
    if (v[2] == 0)
      return ctx.fail("delta is 0");
    for (int i = 0; i < 3; ++i)
      if (!isFloat(dtype) && !(std::fabs(v[i]) < 0x1p62))
        return ctx.fail(std::string(names[i]) + " " + std::to_string(v[i]) +
                        " is beyond +-2^62, where the range's steps could overflow");
    double count = std::ceil((v[1] - v[0]) / v[2]);
    if (!(count <= static_cast<double>(kMaxElements)))
      return ctx.fail("the range has " + std::to_string(count) + " elements, more than 2^48");
    int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
    if (Status s = ctx.checkGenerated({dtype, {n}}, "the range"))
      return s;
    // Integer ranges step exactly; start + i * delta stays between start and limit.
    auto start = static_cast<int64_t>(v[0]), delta = static_cast<int64_t>(v[2]);
    auto bytes = numericBytes(dtype, n, [&](int64_t i) {
      return isFloat(dtype) ? v[0] + static_cast<double>(i) * v[2]
                            : static_cast<double>(
                                  (CheckedInt(start) + CheckedInt(i) * delta).get().value_or(0));
    });
    if (!ctx.keepComputed(name))
      return ctx.constant(name, {dtype, {n}}, bytes.data());
    planned = {n}; // --dim: start + iota * delta, the iota a leading block at smaller dims
  } else {
    int unknown = !known[0] ? 0 : !known[1] ? 1 : 2;
    auto dims = plannedDims(ctx, names[unknown], unknown);
    if (!dims)
      return dims.takeStatus();
    planned = *dims;
  }
  if (planned.size() != 1)
    return ctx.fail("the planned shape " + dimsToString(planned) + " is not a vector");
  if (Status s = ctx.checkGenerated({dtype, planned}, "the steps of the range"))
    return s;
  auto bytes = numericBytes(dtype, planned[0], [](int64_t i) { return static_cast<double>(i); });
  Value *iota = ctx.constant(ctx.tempName("iota"), {dtype, planned}, bytes.data());
  Value *start = in[0], *delta = in[2];
  for (Value **s : {&start, &delta})
    if ((*s)->type().rank() != 0) {
      auto r = ctx.reshape(*s, {});
      if (!r)
        return r.takeStatus();
      *s = *r;
    }
  auto offsets = ctx.emit("Mul", {delta, iota}, {}, ctx.tempName("offsets"));
  if (!offsets)
    return offsets.takeStatus();
  return ctx.emit("Add", {start, *offsets}, {}, name);
}

// Range. float16 and bfloat16 ranges (Range-27) are computed in stash_type (float or double)
// and rounded once, as ONNX's reference does.
Status importRange(ImportCtx &ctx) {
  DType dtype = ctx.input(0)->dtype();
  int64_t stash = ctx.attrInt("stash_type", onnx::TensorProto::FLOAT);
  bool low = dtype == DType::F16 || dtype == DType::BF16;
  const char *names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    DType t = ctx.input(i)->dtype();
    if (t != dtype)
      return ctx.fail(std::string(names[i]) + " is " + dtypeName(t) + " but start is " +
                      dtypeName(dtype));
    if (!low && t != DType::F32 && t != DType::F64 && t != DType::I16 && t != DType::I32 &&
        t != DType::I64)
      return ctx.fail(std::string("element type ") + dtypeName(t) +
                      " is not supported (float, double, float16, bfloat16, int16, int32, int64)");
    if (ctx.input(i)->type().numElements() != 1)
      return ctx.fail(std::string(names[i]) + " must hold one element, got " +
                      toString(ctx.input(i)->type()));
  }
  Value *in[3] = {ctx.input(0), ctx.input(1), ctx.input(2)};
  if (!low)
    return finish(ctx, emitRange(ctx, in, dtype, ctx.outputName(0)));
  if (stash != onnx::TensorProto::FLOAT && stash != onnx::TensorProto::DOUBLE)
    return ctx.fail("stash_type " + str(stash) + " is not FLOAT (1) or DOUBLE (11)");
  DType wide = stash == onnx::TensorProto::FLOAT ? DType::F32 : DType::F64;
  for (int i = 0; i < 3; ++i) {
    auto c = ctx.emit("Cast", {in[i]}, {{"to", std::string(dtypeName(wide))}},
                      ctx.tempName(std::string(names[i]) + "_stash"));
    if (!c)
      return c.takeStatus();
    in[i] = *c;
  }
  auto wideRange = emitRange(ctx, in, wide, ctx.tempName("stash"));
  if (!wideRange)
    return wideRange.takeStatus();
  return finish(ctx, ctx.emit("Cast", {*wideRange}, {{"to", std::string(dtypeName(dtype))}}));
}

// ---- ConstantOfShape and EyeLike ---------------------------------------------------------

Status importConstantOfShape(ImportCtx &ctx) {
  Dims dims;
  if (isConstant(ctx, 0)) {
    auto s = ctx.constInts(0, "shape");
    if (!s)
      return s.takeStatus();
    dims = *s;
    for (int64_t d : dims)
      if (d < 0)
        return ctx.fail("shape " + dimsToString(dims) + " has a negative dim");
  } else {
    auto planned = plannedDims(ctx, "shape", 0);
    if (!planned)
      return planned.takeStatus();
    dims = *planned;
  }
  TensorType scalar{DType::F32, {}};
  std::vector<unsigned char> bytes(8, 0);
  if (const onnx::AttributeProto *a = ctx.findAttr("value")) {
    auto decoded = decodeTensor(a->t(), ctx.modelDir());
    if (!decoded)
      return decoded.takeStatus();
    if (decoded->type.numElements() != 1)
      return ctx.fail("attribute 'value' " + toString(decoded->type) + " must hold one element");
    scalar.dtype = decoded->type.dtype;
    std::memcpy(bytes.data(), decoded->data->data, dtypeBytes(scalar.dtype));
  }
  Value *c = ctx.constant(ctx.tempName("value"), scalar, bytes.data());
  return finish(ctx, ctx.emit("Broadcast", {c}, {{"shape", dims}}));
}

Status importEyeLike(ImportCtx &ctx) {
  const Value *x = ctx.input(0);
  if (x->type().rank() != 2)
    return ctx.fail("input " + toString(x->type()) + " must have rank 2");
  DType dtype = x->dtype();
  if (ctx.hasAttr("dtype")) {
    int onnxType = static_cast<int>(ctx.attrInt("dtype", 0));
    auto t = dtypeFromOnnx(onnxType);
    if (!t)
      return ctx.fail(std::string("attribute dtype=") + onnxTypeName(onnxType) +
                      " is not supported");
    dtype = *t;
  }
  int64_t rows = x->dims()[0], cols = x->dims()[1];
  // A diagonal outside the matrix leaves it all zeros, as the nearest one outside does.
  int64_t k = std::clamp(ctx.attrInt("k", 0), -rows, cols);
  return finish(
      ctx, ctx.emit("EyeLike", {},
                    {{"dtype", std::string(dtypeName(dtype))}, {"shape", x->dims()}, {"k", k}}));
}

// ---- Trilu --------------------------------------------------------------------------------

// Keeps the elements of the last two axes on and above (upper) or on and below (lower)
// diagonal k, zeroing the rest: Select(mask, x, 0), ONNX Where. The mask is a constant when k is;
// otherwise it compares a constant of column - row with k at run time.
Status importTrilu(ImportCtx &ctx) {
  Value *x = ctx.input(0);
  int64_t rank = x->type().rank();
  if (rank < 2)
    return ctx.fail("input " + toString(x->type()) + " must have rank 2 or more");
  bool upper = ctx.attrInt("upper", 1) != 0;
  int64_t rows = x->dims()[rank - 2], cols = x->dims()[rank - 1];
  if (x->type().numElements() == 0)
    return finish(ctx, ctx.emit("Identity", {x}));
  if (ctx.hasInput(1) && ctx.input(1)->type().numElements() != 1)
    return ctx.fail("k " + toString(ctx.input(1)->type()) + " must hold one element");
  std::vector<unsigned char> zero(dtypeBytes(x->dtype()), 0);
  Value *zeroValue = ctx.constant(ctx.tempName("zero"), {x->dtype(), {}}, zero.data());
  Value *mask;
  if (!ctx.hasInput(1) || isConstant(ctx, 1)) {
    int64_t k = 0;
    if (ctx.hasInput(1)) {
      auto v = ctx.constInts(1, "k");
      if (!v)
        return v.takeStatus();
      k = (*v)[0];
    }
    if (Status s = ctx.checkGenerated({DType::Bool, {rows, cols}}, "the mask"))
      return s;
    std::vector<unsigned char> keep(rows * cols);
    bool all = true;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        keep[i * cols + j] = upper ? j - i >= k : j - i <= k;
        all &= keep[i * cols + j] != 0;
      }
    if (all)
      return finish(ctx, ctx.emit("Identity", {x}));
    mask = ctx.constant(ctx.tempName("mask"), {DType::Bool, {rows, cols}}, keep.data());
  } else {
    if (Status s = ctx.checkGenerated({DType::I64, {rows, cols}}, "the diagonal offsets"))
      return s;
    std::vector<int64_t> diag(rows * cols);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        diag[i * cols + j] = j - i;
    Value *k = ctx.input(1);
    if (k->dtype() != DType::I64)
      return ctx.fail(std::string("k has element type ") + dtypeName(k->dtype()) +
                      "; ONNX requires int64");
    if (k->type().rank() != 0) {
      auto r = ctx.reshape(k, {});
      if (!r)
        return r.takeStatus();
      k = *r;
    }
    Value *d = int64Constant(ctx, ctx.tempName("diagonal"), {rows, cols}, diag);
    auto m = ctx.emit(upper ? "GreaterOrEqual" : "LessOrEqual", {d, k}, {}, ctx.tempName("mask"));
    if (!m)
      return m.takeStatus();
    mask = *m;
  }
  return finish(ctx, ctx.emit("Select", {mask, x, zeroValue}));
}

const std::vector<ImportRule> kRules = {
    {"Shape", 1, nullptr, reads({"start", "end"}), importShape},
    {"Size", 1, nullptr, {}, importSize},
    {"Range", 11, nullptr, reads({"stash_type"}), importRange},
    {"ConstantOfShape", 9, nullptr, reads({"value"}), importConstantOfShape},
    {"EyeLike", 9, nullptr, reads({"dtype", "k"}), importEyeLike},
    {"Trilu", 14, nullptr, reads({"upper"}), importTrilu},
};

} // namespace

const std::vector<ImportRule> &shapeGeneratorRules() { return kRules; }

} // namespace odlac
