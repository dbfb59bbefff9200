// ImportCtx: operands, attributes and IR emission for one ONNX node.
#include "ImportContext.h"

#include "evaluate/Evaluate.h"
#include "ir/Limits.h"
#include "ops/OpDef.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>

namespace odlac {

Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank, const char *what) {
  if (axis < -rank || axis >= rank)
    return Status::error(std::string(what) + " " + std::to_string(axis) + " is out of range [" +
                         std::to_string(-rank) + ", " + std::to_string(rank) + ") for rank " +
                         std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

namespace {
// `v` converted to the integer type T, saturating at its range (NaN gives 0): a plain cast of
// an out-of-range double is undefined behaviour.
template <class T> T saturated(double v) {
  if (!(v == v))
    return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
} // namespace

std::vector<unsigned char> filledBytes(DType dtype, double value, int64_t count) {
  unsigned size = dtypeBytes(dtype);
  unsigned char one[8] = {0};
  auto put = [&](auto v) { std::memcpy(one, &v, sizeof v); };
  auto toHalfBits = [](float f, bool bf16) -> uint16_t {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if (bf16) {
      if ((x & 0x7fffffffu) > 0x7f800000u)
        return static_cast<uint16_t>((x >> 16) | 0x40);
      return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
    }
    uint32_t sign = (x >> 16) & 0x8000, mant = x & 0x7fffff;
    int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
    if (((x >> 23) & 0xff) == 0xff)
      return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
    if (exp >= 0x1f)
      return static_cast<uint16_t>(sign | 0x7c00);
    if (exp <= 0) {
      if (exp < -10)
        return static_cast<uint16_t>(sign);
      mant |= 0x800000;
      uint32_t shift = static_cast<uint32_t>(14 - exp), r = mant >> shift;
      uint32_t rest = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
      if (rest > halfway || (rest == halfway && (r & 1)))
        ++r;
      return static_cast<uint16_t>(sign | r);
    }
    uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13), rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
      ++h;
    return static_cast<uint16_t>(h);
  };
  switch (dtype) {
  case DType::F32:
    put(static_cast<float>(value));
    break;
  case DType::F64:
    put(value);
    break;
  case DType::F16:
    put(toHalfBits(static_cast<float>(value), false));
    break;
  case DType::BF16:
    put(toHalfBits(static_cast<float>(value), true));
    break;
  case DType::I8:
    put(saturated<int8_t>(value));
    break;
  case DType::I16:
    put(saturated<int16_t>(value));
    break;
  case DType::I32:
    put(saturated<int32_t>(value));
    break;
  case DType::I64:
    put(saturated<int64_t>(value));
    break;
  case DType::U8:
    put(saturated<uint8_t>(value));
    break;
  case DType::U16:
    put(saturated<uint16_t>(value));
    break;
  case DType::U32:
    put(saturated<uint32_t>(value));
    break;
  case DType::U64:
    put(saturated<uint64_t>(value));
    break;
  case DType::Bool:
    put(static_cast<uint8_t>(value != 0));
    break;
  default: // the low-precision types: callers refuse them (importPad)
    assert(false && "filledBytes: a low-precision element type");
    break;
  }
  std::vector<unsigned char> out(static_cast<size_t>(count) * size);
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(out.data() + i * size, one, size);
  return out;
}

const onnx::AttributeProto *ImportCtx::findAttr(const char *name) const {
  for (int i = 0; i < node_.attribute_size(); ++i)
    if (node_.attribute(i).name() == name) {
      read_[i] = true;
      return &node_.attribute(i);
    }
  return nullptr;
}

const onnx::AttributeProto *
ImportCtx::findAttrOfKind(const char *name, onnx::AttributeProto::AttributeType kind) const {
  const onnx::AttributeProto *a = findAttr(name);
  if (!a || a->type() == kind || a->type() == onnx::AttributeProto::UNDEFINED)
    return a;
  std::string why = std::string("attribute '") + name + "' is " +
                    onnx::AttributeProto::AttributeType_Name(a->type()) + ", but " +
                    node_.op_type() + " takes " + onnx::AttributeProto::AttributeType_Name(kind);
  const auto &seen = kindErrors_.messages();
  if (std::find(seen.begin(), seen.end(), why) == seen.end())
    kindErrors_.append(fail(why));
  return nullptr;
}

int64_t ImportCtx::attrInt(const char *name, int64_t dflt) const {
  const auto *a = findAttrOfKind(name, onnx::AttributeProto::INT);
  return a ? a->i() : dflt;
}

double ImportCtx::attrFloat(const char *name, double dflt) const {
  const auto *a = findAttrOfKind(name, onnx::AttributeProto::FLOAT);
  return a ? a->f() : dflt;
}

std::string ImportCtx::attrString(const char *name, const std::string &dflt) const {
  const auto *a = findAttrOfKind(name, onnx::AttributeProto::STRING);
  return a ? a->s() : dflt;
}

std::vector<int64_t> ImportCtx::attrInts(const char *name, std::vector<int64_t> dflt) const {
  const auto *a = findAttrOfKind(name, onnx::AttributeProto::INTS);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::move(dflt);
}

std::vector<std::string> ImportCtx::attrStrings(const char *name) const {
  const auto *a = findAttrOfKind(name, onnx::AttributeProto::STRINGS);
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end())
           : std::vector<std::string>{};
}

std::vector<double> ImportCtx::attrFloats(const char *name, std::vector<double> dflt) const {
  const auto *a = findAttrOfKind(name, onnx::AttributeProto::FLOATS);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : std::move(dflt);
}

Expected<std::shared_ptr<const Buffer>> ImportCtx::constData(int i, const char *what) const {
  const Value *v = input(i);
  if (!v)
    return fail(std::string(what) + " (input " + std::to_string(i) + ") is missing");
  if (!isComputableFromConstants(*v))
    return fail(std::string(what) + " (input " + std::to_string(i) + ", '" + v->name() +
                "') must be known at compile time, but it depends on " + notConstantBecause(*v));
  return evaluateValue(*v, kMaxCompileTimeBytes);
}

std::optional<TensorType> ImportCtx::declaredType(int i) const {
  if (i >= numOutputs())
    return std::nullopt;
  auto it = declared_.types.find(node_.output(i));
  // A fact beyond what the IR represents (a negative or huge dim from shape inference or the
  // model) is no fact: rules then report the shape as unknown.
  if (it == declared_.types.end() || !shapeProblem(it->second).empty())
    return std::nullopt;
  return it->second;
}

std::optional<Dims> ImportCtx::declaredDims(int i) const {
  if (auto t = declaredType(i))
    return t->dims;
  if (i >= numOutputs())
    return std::nullopt;
  auto it = declared_.pinned.find(node_.output(i));
  if (it == declared_.pinned.end() || !shapeProblem(TensorType{DType::F32, it->second}).empty())
    return std::nullopt;
  return it->second;
}

Expected<std::vector<int64_t>> ImportCtx::constInts(int i, const char *what) const {
  auto data = constData(i, what);
  if (!data)
    return data.takeStatus();
  const Value *v = input(i);
  size_t n = static_cast<size_t>(v->type().numElements());
  std::vector<int64_t> out(n);
  const Buffer &b = **data;
  switch (v->dtype()) {
  case DType::I64:
    if (n) // an empty constant may have no data pointer
      std::memcpy(out.data(), b.data, n * 8);
    break;
  case DType::I32:
    for (size_t k = 0; k < n; ++k)
      out[k] = b.as<int32_t>()[k];
    break;
  default:
    return fail(std::string(what) + " must be int32 or int64, got " + dtypeName(v->dtype()));
  }
  return out;
}

Expected<double> ImportCtx::constScalar(int i, const char *what) const {
  auto data = constData(i, what);
  if (!data)
    return data.takeStatus();
  const Value *v = input(i);
  if (v->type().numElements() != 1)
    return fail(std::string(what) + " must hold one element, got " + toString(v->type()));
  const Buffer &b = **data;
  switch (v->dtype()) {
  case DType::F32:
    return static_cast<double>(*b.as<float>());
  case DType::F64:
    return *b.as<double>();
  case DType::I32:
    return static_cast<double>(*b.as<int32_t>());
  case DType::I64:
    return static_cast<double>(*b.as<int64_t>());
  default:
    return fail(std::string(what) + " of element type " + dtypeName(v->dtype()) +
                " is not supported");
  }
}

Expected<ImportedBody> ImportCtx::importBody(const char *attr,
                                             const std::vector<TensorType> &inputTypes) {
  const onnx::AttributeProto *a = findAttr(attr);
  if (!a)
    return fail(std::string("graph attribute '") + attr + "' is missing");
  if (!a->has_g())
    return fail(std::string("attribute '") + attr + "' must be a graph, but its type is " +
                onnx::AttributeProto::AttributeType_Name(a->type()));
  if (!bodies_)
    return fail("internal: no body importer");
  return bodies_->importBody(a->g(), inputTypes);
}

Expected<std::vector<Operand>> ImportCtx::inlineBody(const char *attr,
                                                     const std::vector<Operand> &formals,
                                                     const std::string &label) {
  const onnx::AttributeProto *a = findAttr(attr);
  if (!a || !a->has_g())
    return fail(std::string("graph attribute '") + attr + "' is missing");
  if (!bodies_)
    return fail("internal: no body importer");
  return bodies_->inlineBody(a->g(), formals, label);
}

bool ImportCtx::bodyReadsAggregates(const char *attr) {
  const onnx::AttributeProto *a = findAttr(attr);
  return a && a->has_g() && bodies_ && bodies_->readsAggregates(a->g());
}

Operand ImportCtx::operand(int i) const {
  Operand o;
  o.tensor = input(i);
  if (const Aggregate *a = aggregate(i))
    o.aggregate = *a;
  return o;
}

Status ImportCtx::setOutput(int i, const Operand &v) {
  if (v.aggregate) {
    setOutput(i, *v.aggregate);
    return Status::ok();
  }
  if (!v.tensor)
    return fail("output " + std::to_string(i) + " ('" + outputName(i) + "') has no value");
  // A node result of its own, named after the output, as every other rule makes.
  auto copy = emit("Identity", {v.tensor}, {}, outputName(i));
  if (!copy)
    return copy.takeStatus();
  setOutput(i, *copy);
  return Status::ok();
}

std::string ImportCtx::tempName(const std::string &suffix) const {
  std::string base =
      node_.output_size() > 0 && !node_.output(0).empty() ? node_.output(0) : node_.name();
  return base + "/" + suffix;
}

Expected<Value *> ImportCtx::emit(const char *irOp, std::vector<Value *> operands, AttrMap attrs,
                                  const std::string &outName) {
  const OpDef *op = findOp(irOp);
  if (!op)
    return fail(std::string("internal: no IR op ") + irOp);
  std::string name = outName.empty() ? node_.output(0) : outName;
  Value *out = g_.addValue(name, TensorType{});
  Node *n = g_.addNode(*op, node_.name(), std::move(operands), {out}, std::move(attrs));
  if (Status s = verifyAndInfer(*n))
    return s;
  return out;
}

Expected<std::vector<Value *>> ImportCtx::emitResults(const char *irOp,
                                                      std::vector<Value *> operands, AttrMap attrs,
                                                      int numResults) {
  const OpDef *op = findOp(irOp);
  if (!op)
    return fail(std::string("internal: no IR op ") + irOp);
  std::vector<Value *> outs;
  for (int i = 0; i < numResults; ++i)
    outs.push_back(g_.addValue(
        wantsOutput(i) ? outputName(i) : tempName("unused" + std::to_string(i)), TensorType{}));
  Node *n = g_.addNode(*op, node_.name(), std::move(operands), outs, std::move(attrs));
  if (Status s = verifyAndInfer(*n))
    return s;
  return outs;
}

Expected<Value *> ImportCtx::reshape(Value *v, const Dims &dims, const std::string &outName) {
  if (v->dims() == dims && outName.empty())
    return v;
  return emit("Reshape", {v}, {{"shape", dims}}, outName.empty() ? tempName("reshape") : outName);
}

Status ImportCtx::checkGenerated(const TensorType &type, const std::string &what) const {
  std::string problem = shapeProblem(type);
  if (problem.empty() && type.byteSize() > static_cast<uint64_t>(kMaxCompileTimeBytes))
    problem = "its " + bytesText(type.byteSize()) + " exceed the " +
              bytesText(static_cast<uint64_t>(kMaxCompileTimeBytes)) +
              " odlac generates at compile time for one constant";
  if (problem.empty())
    return Status::ok();
  return fail(what + " would be a constant " + toString(type) + ": " + problem);
}

Value *ImportCtx::constant(const std::string &name, TensorType type, const void *data) {
  auto buf = Buffer::copyOf(data, type.byteSize());
  return g_.addConstant(name, std::move(type), std::move(buf));
}

Status finish(ImportCtx &ctx, int i, Expected<Value *> out) {
  if (!out)
    return out.takeStatus();
  ctx.setOutput(i, *out);
  return Status::ok();
}

bool isConstant(const ImportCtx &ctx, int i) {
  return ctx.hasInput(i) && isComputableFromConstants(*ctx.input(i));
}

Expected<TensorType> declaredOutput(ImportCtx &ctx, int i, int64_t rank, const std::string &why) {
  auto t = ctx.declaredType(i);
  if (!t)
    return ctx.fail(why + ", and the model declares no static shape for output '" +
                    ctx.outputName(i) + "'");
  if (t->rank() != rank)
    return ctx.fail("output '" + ctx.outputName(i) + "' is declared " + toString(*t) +
                    ", but it must have rank " + str(rank));
  return *t;
}

} // namespace odlac
