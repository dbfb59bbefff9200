// Import of custom ops: every node of a domain named with --custom-op-domain becomes a
// CustomOp (compiler/ops/Custom.cpp) named by its op_type, run by a kernel the application
// registers. odlac cannot infer what such a node produces, so its outputs' types must be
// declared in the model (value_info or graph outputs); a missing one is an error, never a
// guess.
#include "Rules.h"

#include "ops/Ops.h"

namespace odlac {

namespace {

const char *attrTypeName(int type) {
  switch (type) {
  case onnx::AttributeProto::TENSOR:
    return "a tensor";
  case onnx::AttributeProto::GRAPH:
    return "a graph";
  case onnx::AttributeProto::STRINGS:
    return "a list of strings";
  case onnx::AttributeProto::TENSORS:
    return "a list of tensors";
  case onnx::AttributeProto::GRAPHS:
    return "a list of graphs";
  case onnx::AttributeProto::SPARSE_TENSOR:
    return "a sparse tensor";
  case onnx::AttributeProto::TYPE_PROTO:
    return "a type";
  default:
    return "of an unsupported kind";
  }
}

} // namespace

Status importCustomOp(ImportCtx &ctx) {
  const onnx::NodeProto &n = ctx.proto();
  Status errors;
  if (ctx.numInputs() == 0)
    errors.append(ctx.fail("a custom op needs at least one input"));
  for (int i = 0; i < ctx.numInputs(); ++i)
    if (!ctx.hasInput(i))
      errors.append(
          ctx.fail("input " + std::to_string(i) + " is empty; custom ops take no absent inputs"));
  AttrMap attrs;
  attrs["op_type"] = n.op_type();
  attrs["domain"] = n.domain();
  for (const onnx::AttributeProto &a : n.attribute()) {
    std::string name = "attr." + a.name();
    switch (a.type()) {
    case onnx::AttributeProto::INT:
      attrs[name] = static_cast<int64_t>(a.i());
      break;
    case onnx::AttributeProto::FLOAT:
      attrs[name] = static_cast<double>(a.f());
      break;
    case onnx::AttributeProto::STRING:
      if (a.s().find('\0') != std::string::npos)
        errors.append(ctx.fail("attribute '" + a.name() +
                               "' holds a NUL byte; custom ops' "
                               "strings are C strings"));
      attrs[name] = a.s();
      break;
    case onnx::AttributeProto::INTS:
      attrs[name] = std::vector<int64_t>(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      attrs[name] = std::vector<double>(a.floats().begin(), a.floats().end());
      break;
    default:
      errors.append(ctx.fail("attribute '" + a.name() + "' is " + attrTypeName(a.type()) +
                             "; custom ops take int, float, string, ints and floats "
                             "attributes"));
    }
  }
  std::vector<std::string> dtypes;
  std::vector<int64_t> dims;
  for (int i = 0; i < ctx.numOutputs(); ++i) {
    if (!ctx.wantsOutput(i)) {
      errors.append(ctx.fail("output " + std::to_string(i) +
                             " is unnamed; a custom op's kernel writes every output it has"));
      continue;
    }
    std::optional<TensorType> t = ctx.declaredType(i);
    if (!t) {
      errors.append(ctx.fail(
          "output " + std::to_string(i) + " ('" + ctx.outputName(i) +
          "') has no static type in the model's value_info or graph outputs; odlac does not "
          "guess a custom op's output types: declare its element type and every dim"));
      continue;
    }
    dtypes.push_back(dtypeName(t->dtype));
    dims.push_back(static_cast<int64_t>(t->dims.size()));
    dims.insert(dims.end(), t->dims.begin(), t->dims.end());
  }
  if (!errors.isOk())
    return errors;
  attrs["result_dtypes"] = dtypes;
  attrs["result_dims"] = dims;
  std::vector<Value *> outs;
  for (int i = 0; i < ctx.numOutputs(); ++i)
    outs.push_back(ctx.graph().addValue(ctx.outputName(i), TensorType{}));
  std::vector<Value *> operands;
  for (int i = 0; i < ctx.numInputs(); ++i)
    operands.push_back(ctx.input(i));
  Node *node =
      ctx.graph().addNode(ops::CustomOp, n.name(), std::move(operands), outs, std::move(attrs));
  if (Status s = verifyAndInfer(*node))
    return s;
  for (int i = 0; i < ctx.numOutputs(); ++i)
    ctx.setOutput(i, outs[static_cast<size_t>(i)]);
  return Status::ok();
}

} // namespace odlac
