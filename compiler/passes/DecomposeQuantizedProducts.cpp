// DecomposeQuantizedProducts: for a backend without odla_ExtQLinearConv / odla_ExtQLinearMatMul
// / odla_ExtQLinearAdd / odla_ExtQLinearMul (its manifest), the integer-only ops become their
// float form in core ops: the operands minus their zero points as exact integers in float32
// (float64 when a sum could pass 2^24), the float Conv or MatMul plus the bias, times the
// requantization factor multiplier / 2^shift, then Quantize with scale 1 and the output zero
// point, and the clamp (a product without requantization: the sum cast to int32); Add and Mul
// in float64, where each sum or product of the centered operands times its factors is exact.
// Extension ops are otherwise decomposed while lowering; these need constants (the factors),
// which only the IR can add.
#include "passes/Passes.h"

#include "ops/InferUtil.h"
#include "ops/Ops.h"
#include "ops/Requantize.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace odlac {
namespace {

// The operands of QLinearConv and QLinearMatMul (ops/Quant.cpp).
enum { kX, kW, kBias, kXZero, kWZero, kMultiplier, kShift, kYZero };

class DecomposeQuantizedProducts : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &ctx) override {
    bool changed = false;
    for (Node *n : g.nodes()) {
      bool conv = n->is(ops::QLinearConv);
      if (n->is(ops::QLinearAdd) || n->is(ops::QLinearMul)) {
        if (ctx.target->hasExtension(n->is(ops::QLinearAdd) ? "ExtQLinearAdd" : "ExtQLinearMul"))
          continue;
        if (Status s = decomposeBinary(g, n))
          return s;
        changed = true;
        continue;
      }
      if (!conv && !n->is(ops::QLinearMatMul))
        continue;
      if (ctx.target->hasExtension(conv ? "ExtQLinearConv" : "ExtQLinearMatMul"))
        continue; // the backend runs it
      if (Status s = decompose(g, n, conv))
        return s;
      changed = true;
    }
    g.eraseUnusedConstants();
    return changed;
  }

private:
  // A node of `op` before `pos` with one result named after `pos`'s result and `suffix`.
  static Expected<Value *> add(Graph &g, Node *pos, const OpDef &op, std::vector<Value *> ins,
                               AttrMap attrs, const std::string &suffix) {
    Value *v = g.addValue(g.uniqueName(pos->output(0)->name() + suffix), {});
    Node *n = g.addNodeBefore(pos, op, v->name(), std::move(ins), {v}, std::move(attrs));
    if (Status s = verifyAndInfer(*n))
      return s;
    return v;
  }

  static Expected<Value *> cast(Graph &g, Node *pos, Value *v, DType to, const std::string &sfx) {
    return add(g, pos, ops::Cast, {v}, {{"to", std::string(dtypeName(to))}}, sfx);
  }

  // A per-channel parameter (one element per output channel) shaped to broadcast against the
  // product: [C, 1, ...] for a channels-first convolution's result, [C] along a product's
  // columns; a one-element one as a scalar.
  static Dims paramDims(const Value *p, bool conv, size_t rank) {
    if (p->type().numElements() == 1 && p->dims() != Dims{1})
      return p->dims();
    if (p->type().numElements() == 1)
      return {};
    Dims d = {p->dims()[0]};
    if (conv)
      d.resize(rank - 1, 1);
    return d;
  }

  // v - zero point, exact integers in `acc`.
  static Expected<Value *> centered(Graph &g, Node *n, Value *v, Value *zero, DType acc,
                                    Dims zeroDims, const std::string &sfx) {
    auto f = cast(g, n, v, acc, sfx);
    if (!f || !zero)
      return f;
    auto z = cast(g, n, zero, acc, sfx + "_zero_point");
    if (!z)
      return z;
    if ((*z)->dims() != zeroDims)
      z = add(g, n, ops::Reshape, {*z}, {{"shape", zeroDims}}, sfx + "_zero_point_bcast");
    if (!z)
      return z;
    return add(g, n, ops::Sub, {*f, *z}, {}, sfx + "_centered");
  }

  // A float64 scalar constant named after n's result.
  static Value *scalar(Graph &g, const Node *n, double v, const std::string &sfx) {
    return g.addConstant(g.uniqueName(n->output(0)->name() + sfx), {DType::F64, {}},
                         Buffer::copyOf(&v, sizeof v));
  }

  // Quantize(real, scale 1, the output zero point), then the clamp: the result of every
  // decomposed op.
  static Status requantizeInto(Graph &g, Node *n, Value *real, Value *yZero) {
    Value *y = n->output(0);
    DType t = y->dtype();
    AttrMap qAttrs = {{"axis", int64_t{0}},
                      {"to", std::string(dtypeName(t))},
                      {"block_size", int64_t{0}},
                      {"saturate", int64_t{1}}};
    Value *one = real->dtype() == DType::F64 ? scalar(g, n, 1.0, "/one") : nullptr;
    if (!one) {
      float oneF32 = 1.0f;
      one = g.addConstant(g.uniqueName(y->name() + "/one"), {real->dtype(), {}},
                          Buffer::copyOf(&oneF32, 4));
    }
    auto q = add(g, n, ops::Quantize, {real, one, yZero}, qAttrs, "/quantized");
    if (!q)
      return q.status();
    int64_t lo = n->i("output_min"), hi = n->i("output_max");
    if (lo > quantMin(t) || hi < quantMax(t)) {
      q = add(g, n, ops::Clamp, {*q}, {{"min", double(lo)}, {"max", double(hi)}}, "/clamped");
      if (!q)
        return q.status();
    }
    g.replaceAllUses(y, *q);
    g.eraseNode(n);
    return Status::ok();
  }

  // QLinearAdd: (a - za) * fa + (b - zb) * fb; QLinearMul: (a - za) * (b - zb) * f; f = the
  // multiplier / 2^shift.
  static Status decomposeBinary(Graph &g, Node *n) {
    enum { kA, kB, kAZero, kBZero, kYZeroBinary };
    const int shift = static_cast<int>(n->i("shift"));
    auto a = centered(g, n, n->input(kA), n->input(kAZero), DType::F64, {}, "/a");
    if (!a)
      return a.status();
    auto b = centered(g, n, n->input(kB), n->input(kBZero), DType::F64, {}, "/b");
    if (!b)
      return b.status();
    Expected<Value *> real = nullptr;
    if (n->is(ops::QLinearAdd)) {
      auto fa = add(g, n, ops::Mul,
                    {*a, scalar(g, n, std::ldexp(double(n->i("a_multiplier")), -shift), "/fa")}, {},
                    "/a_real");
      if (!fa)
        return fa.status();
      auto fb = add(g, n, ops::Mul,
                    {*b, scalar(g, n, std::ldexp(double(n->i("b_multiplier")), -shift), "/fb")}, {},
                    "/b_real");
      if (!fb)
        return fb.status();
      real = add(g, n, ops::Add, {*fa, *fb}, {}, "/real");
    } else {
      auto product = add(g, n, ops::Mul, {*a, *b}, {}, "/product");
      if (!product)
        return product.status();
      real = add(g, n, ops::Mul,
                 {*product, scalar(g, n, std::ldexp(double(n->i("multiplier")), -shift), "/f")}, {},
                 "/real");
    }
    if (!real)
      return real.status();
    return requantizeInto(g, n, *real, n->input(kYZeroBinary));
  }

  static Status decompose(Graph &g, Node *n, bool conv) {
    Value *y = n->output(0);
    const Value *mult = n->input(kMultiplier), *shift = n->input(kShift);
    if (mult && (!mult->isConstant() || !shift->isConstant()))
      return Status::error("node '" + n->name() + "' (" + n->op().name +
                           "): a backend without the extension needs constant requantization "
                           "factors to compute the float form");
    if (conv && isChannelsLast(*n))
      return Status::error("node '" + n->name() +
                           "': a channels-last QLinearConv has no float "
                           "form (assign-layout leaves integer convolutions channels-first)");
    // Terms per output: the accumulator's magnitude bound decides the float type.
    const Dims &w = n->input(kW)->dims();
    int64_t terms =
        conv ? n->input(kW)->type().numElements() / std::max<int64_t>(w[0], 1) : w[w.size() - 2];
    double maxBias = 0;
    if (const Value *b = n->input(kBias))
      for (int64_t c = 0; c < b->type().numElements(); ++c)
        maxBias = std::max(maxBias, b->isConstant() ? std::fabs(double(b->data()->as<int32_t>()[c]))
                                                    : 2147483648.0);
    DType acc = double(terms) * 255.0 * 255.0 + maxBias <= 16777216.0 ? DType::F32 : DType::F64;
    size_t rank = y->dims().size();
    auto x = centered(g, n, n->input(kX), n->input(kXZero), acc, {}, "/x");
    if (!x)
      return x.status();
    Dims wzDims = n->input(kWZero) ? paramDims(n->input(kWZero), conv, w.size()) : Dims{};
    auto k = centered(g, n, n->input(kW), n->input(kWZero), acc, wzDims, "/w");
    if (!k)
      return k.status();
    std::vector<Value *> productIns = {*x, *k};
    Value *bias = nullptr;
    if (n->input(kBias)) {
      auto b = cast(g, n, n->input(kBias), acc, "/bias");
      if (!b)
        return b.status();
      bias = *b;
      if (conv)
        productIns.push_back(bias); // Conv's own bias; MatMul's is added below
    }
    AttrMap productAttrs;
    if (conv)
      for (const char *a : {"group", "strides", "dilations", "pads"})
        productAttrs[a] = n->attrs().at(a);
    auto product = add(g, n, conv ? ops::Conv : ops::MatMul, productIns, productAttrs, "/acc");
    if (!product)
      return product.status();
    if (!conv && bias) {
      product = add(g, n, ops::Add, {*product, bias}, {}, "/acc_bias");
      if (!product)
        return product.status();
    }
    if (!mult) { // no requantization: the int32 sum itself
      auto sum = cast(g, n, *product, DType::I32, "/int32");
      if (!sum)
        return sum.status();
      g.replaceAllUses(y, *sum);
      g.eraseNode(n);
      return Status::ok();
    }
    // The factors multiplier / 2^shift, exact in float64.
    int64_t count = mult->type().numElements();
    std::vector<double> factor(static_cast<size_t>(count));
    for (int64_t c = 0; c < count; ++c)
      factor[c] =
          std::ldexp(double(mult->data()->as<int32_t>()[c]), -shift->data()->as<int32_t>()[c]);
    Dims fDims = paramDims(mult, conv, rank);
    std::shared_ptr<const Buffer> fData;
    if (acc == DType::F64) {
      fData = Buffer::copyOf(factor.data(), factor.size() * sizeof(double));
    } else {
      std::vector<float> f32(factor.begin(), factor.end());
      fData = Buffer::copyOf(f32.data(), f32.size() * sizeof(float));
    }
    Value *f = g.addConstant(g.uniqueName(y->name() + "/factor"), {acc, fDims}, fData);
    auto real = add(g, n, ops::Mul, {*product, f}, {}, "/real");
    if (!real)
      return real.status();
    return requantizeInto(g, n, *real, n->input(kYZero));
  }
};

} // namespace

std::unique_ptr<Pass> createDecomposeQuantizedProducts() {
  return std::make_unique<DecomposeQuantizedProducts>();
}

} // namespace odlac
