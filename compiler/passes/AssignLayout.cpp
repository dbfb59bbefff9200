// AssignLayout: a backend whose capability manifest prefers channels-last data ("layout
// channels_last": oneDNN, XNNPACK and most accelerators) runs convolution and pooling on
// [N, spatial..., C] tensors. Every spatial op with a channels-last form (its op row has a
// layout attribute) switches to it: its data operands are transposed to channels-last, its
// kernel to SIO [spatial..., C / group, M], and its result back to channels-first. The kernel
// is a constant, so its transpose costs nothing at run time, and SinkTransposes, which runs
// next, cancels the pairs between neighbouring spatial ops: transposes remain only where
// channels-first data enters or leaves the graph, or meets an op that reads axes by position.
#include "passes/Passes.h"

#include "ops/InferUtil.h"
#include "ops/Ops.h"

#include <cstring>
#include <map>

namespace odlac {
namespace {

using Perm = std::vector<int64_t>;

// Operand roles by their names in the op table.
bool isData(const OperandDef &d) {
  return !std::strcmp(d.name, "x") || !std::strcmp(d.name, "residual");
}
bool isKernel(const OperandDef &d) { return !std::strcmp(d.name, "w"); }

class AssignLayout : public Pass {
public:
  Expected<bool> run(Graph &g, const PassContext &ctx) override {
    if (ctx.target->layout != "channels_last")
      return false; // the backend prefers the channels-first layout ONNX models have
    bool changed = false;
    std::map<Value *, Value *> sioKernels; // a kernel shared by several convolutions
    for (Node *n : g.nodes()) {
      const OpDef &op = n->op();
      if (!op.findAttr(kLayoutAttr) || isChannelsLast(*n))
        continue; // no channels-last form, or already there
      const Value *x = n->input(0);
      size_t rank = x->type().rank();
      if (x->dtype() != DType::F32)
        continue; // channels-last kernels compute float32 (the reference backend's do)
      if (rank < 3 || rank > 5)
        continue; // 1 to 3 spatial axes
      bool constantKernels = true;
      for (int i = 0; i < n->numInputs(); ++i)
        if (n->input(i) && isKernel(op.operands[i]))
          constantKernels &= n->input(i)->isConstant();
      if (!constantKernels)
        continue; // a computed kernel would be transposed at run time on every inference
      std::vector<Value *> inputs = n->inputs();
      for (int i = 0; i < n->numInputs(); ++i) {
        Value *&in = inputs[i];
        if (!in)
          continue;
        if (isData(op.operands[i])) {
          auto t = transposeBefore(g, n, in, toChannelsLastPerm(rank), "/nhwc");
          if (!t)
            return t.status();
          in = *t;
        } else if (isKernel(op.operands[i])) {
          Value *&sio = sioKernels[in];
          if (!sio) {
            auto t = transposeBefore(g, n, in, kernelToSioPerm(rank), "/sio");
            if (!t)
              return t.status();
            sio = *t;
          }
          in = sio;
        }
      }
      AttrMap attrs = n->attrs();
      attrs[kLayoutAttr] = std::string("channels_last");
      Value *out = n->output(0);
      Value *last = g.addValue(out->name() + "/nhwc", {});
      Node *m = g.addNodeBefore(n, op, n->name(), inputs, {last}, attrs);
      if (Status s = verifyAndInfer(*m))
        return s;
      auto back = transposeBefore(g, n, last, toChannelsFirstPerm(rank), "/nchw");
      if (!back)
        return back.status();
      g.replaceAllUses(out, *back);
      g.eraseNode(n);
      changed = true;
    }
    return changed;
  }

private:
  // Transpose(v) by `perm`, placed just before `pos`; named after `v` with `suffix`.
  static Expected<Value *> transposeBefore(Graph &g, Node *pos, Value *v, const Perm &perm,
                                           const char *suffix) {
    Value *t = g.addValue(v->name() + suffix, {});
    Node *n = g.addNodeBefore(pos, ops::Transpose, t->name(), {v}, {t}, {{"perm", perm}});
    if (Status s = verifyAndInfer(*n))
      return s;
    return t;
  }
};

} // namespace

std::unique_ptr<Pass> createAssignLayout() { return std::make_unique<AssignLayout>(); }

} // namespace odlac
