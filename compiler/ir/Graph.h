// The IR: a Graph owns Values (tensors) and Nodes (op applications) kept in schedule order.
// Constants are Values that carry their bytes; graph inputs are Values without a producer.
//
// Control flow (If, Loop) nests graphs: a node owns named subgraphs (its bodies). A body is
// closed: it reads only its own inputs, and every outer value it needs (captured at import)
// is an operand of the node, bound to one of the body's inputs. Bodies hold no constants
// (constants live in the outermost graph and are captured like any outer value), so passes
// that look at one graph never see a use from inside another, and weights have one home.
#pragma once

#include "ir/Attr.h"
#include "ir/Type.h"

#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace odlac {

struct OpDef;
class Node;
class Graph;

// Read-only bytes of a constant. `owner` keeps the storage alive (a vector, a mapped file).
struct Buffer {
  const void *data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
  bool fileMapped = false; // `data` lies in a read-only mapping of a file (external data)

  // Drops the process's pages of [p, p + n) (inside this buffer) when it maps a file: they
  // leave the resident memory and come back from the page cache when read again, so reading a
  // model's external data once does not keep it all in memory. Other memory is left alone.
  void dropPages(const void *p, size_t n) const;

  static std::shared_ptr<const Buffer> copyOf(const void *data, size_t size);
  // A string tensor's buffer: `data` is an array of one `const char *` per element, each a
  // NUL-terminated copy of a string, which the buffer owns (the ODLA_STRING layout, so that
  // the reference backend reads it as it is).
  static std::shared_ptr<const Buffer> ofStrings(std::vector<std::string> strings);
  template <class T> const T *as() const { return static_cast<const T *>(data); }
};

struct Use {
  Node *node;
  int operand;
};

class Value {
public:
  Value(std::string name, TensorType type) : name_(std::move(name)), type_(std::move(type)) {}

  const std::string &name() const { return name_; }
  const TensorType &type() const { return type_; }
  void setType(TensorType t) { type_ = std::move(t); }
  DType dtype() const { return type_.dtype; }
  const Dims &dims() const { return type_.dims; }

  Node *producer() const { return producer_; }
  int producerResult() const { return producerResult_; }
  const std::vector<Use> &uses() const { return uses_; }

  bool isConstant() const { return data_ != nullptr; }
  const std::shared_ptr<const Buffer> &data() const { return data_; }
  bool isGraphInput() const { return isGraphInput_; }

private:
  friend class Graph;
  friend class Node;
  std::string name_;
  TensorType type_;
  Node *producer_ = nullptr;
  int producerResult_ = 0;
  std::vector<Use> uses_;
  std::shared_ptr<const Buffer> data_;
  bool isGraphInput_ = false;
};

class Node {
public:
  const OpDef &op() const { return *op_; }
  // Whether the node applies `op`, a row of the op table (ops/Ops.h: n->is(ops::Conv)).
  bool is(const OpDef &op) const { return op_ == &op; }
  const std::string &name() const { return name_; }

  int numInputs() const { return static_cast<int>(inputs_.size()); }
  Value *input(int i) const { return i < numInputs() ? inputs_[i] : nullptr; }
  const std::vector<Value *> &inputs() const { return inputs_; }
  int numOutputs() const { return static_cast<int>(outputs_.size()); }
  Value *output(int i) const { return outputs_[i]; }
  const std::vector<Value *> &outputs() const { return outputs_; }

  const AttrMap &attrs() const { return attrs_; }
  bool hasAttr(const std::string &name) const { return attrs_.count(name) != 0; }
  // Typed accessors; the op table guarantees presence and kind after import.
  int64_t i(const std::string &name) const;
  double f(const std::string &name) const;
  const std::string &s(const std::string &name) const;
  const std::vector<int64_t> &ints(const std::string &name) const;
  const std::vector<double> &floats(const std::string &name) const;
  void setAttr(const std::string &name, AttrValue v) { attrs_[name] = std::move(v); }

  void setInput(int i, Value *v);

  // Subgraphs (bodies of control-flow ops), by attribute name, in the order they were set.
  const std::vector<std::pair<std::string, std::unique_ptr<Graph>>> &subgraphs() const {
    return subgraphs_;
  }
  bool hasSubgraphs() const { return !subgraphs_.empty(); }
  // The subgraph named `name`, or nullptr.
  const Graph *subgraph(const std::string &name) const;
  void setSubgraph(const std::string &name, std::unique_ptr<Graph> body);
  // Moves a subgraph out of the node (to inline it); the node keeps an empty slot.
  std::unique_ptr<Graph> takeSubgraph(const std::string &name);

private:
  friend class Graph;
  const OpDef *op_ = nullptr;
  std::string name_;
  std::vector<Value *> inputs_;
  std::vector<Value *> outputs_;
  AttrMap attrs_;
  std::vector<std::pair<std::string, std::unique_ptr<Graph>>> subgraphs_;
};

// Facts about where the graph came from, for banners and reports.
struct ModelInfo {
  std::string fileName;     // the model's file name without folders
  std::string producerName; // e.g. "pytorch"
  std::string producerVersion;
  int64_t irVersion = 0;
  std::map<std::string, int64_t> opsets; // domain ("" = ai.onnx) -> version
  std::vector<std::string>
      externalDataFiles; // as the model's folder + location, sorted (for depfiles)
  // What the frontend tells the user besides errors, each "warning: ..." or "note: ...".
  std::vector<std::string> diagnostics;
  // The symbolic dims (ImportOptions::dimValues) that some graph input's shape uses.
  std::set<std::string> symbolicDims;
};

class Graph {
public:
  explicit Graph(std::string name = "graph") : name_(std::move(name)) {}
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  const std::string &name() const { return name_; }
  ModelInfo &info() { return info_; }
  const ModelInfo &info() const { return info_; }

  // Creates a value named `name`, made unique if it is taken.
  Value *addValue(const std::string &name, TensorType type);
  Value *addInput(const std::string &name, TensorType type);
  Value *addConstant(const std::string &name, TensorType type, std::shared_ptr<const Buffer> data);
  void addOutput(Value *v) { outputs_.push_back(v); }
  void setOutput(int i, Value *v) { outputs_[i] = v; }
  // Replaces the output list (a body's results, rearranged when import rewrites it).
  void setOutputs(std::vector<Value *> outputs) { outputs_ = std::move(outputs); }
  // Reorders the inputs; inputs left out must be unused and stop being inputs.
  void setInputs(const std::vector<Value *> &inputs);

  // Appends a node at the end of the schedule. Output values must be fresh (no producer).
  Node *addNode(const OpDef &op, const std::string &name, std::vector<Value *> inputs,
                std::vector<Value *> outputs, AttrMap attrs = {});
  // The same, placing the node just before `pos` in the schedule.
  Node *addNodeBefore(const Node *pos, const OpDef &op, const std::string &name,
                      std::vector<Value *> inputs, std::vector<Value *> outputs,
                      AttrMap attrs = {});

  // Copies the nodes of `body` (a closed graph: see above) into this graph just before `pos`,
  // or at the end when `pos` is nullptr, with body input i bound to `operands[i]`; their own
  // bodies move out of `body` into the copies, so `body` is spent. Returns what the body's
  // outputs became, in order.
  std::vector<Value *> inlineBody(Graph &body, const std::vector<Value *> &operands,
                                  const Node *pos = nullptr);

  // Rewrites every use of `from` (operands and graph outputs) to `to`. A graph output keeps
  // its name: when `from` is one, `to` (which must be a node result and not already an
  // output) takes over its name, and `from` gets `to`'s old one.
  void replaceAllUses(Value *from, Value *to);
  // Removes a node whose results are unused; its operands lose a use.
  void eraseNode(Node *n);
  // Drops constants nobody uses; returns how many.
  size_t eraseUnusedConstants();
  // Turns a node's result into a constant holding `data`, removing the node when none of its
  // results is used any more. Returns the new constant.
  Value *replaceWithConstant(Value *v, std::shared_ptr<const Buffer> data);

  const std::vector<Value *> &inputs() const { return inputs_; }
  const std::vector<Value *> &outputs() const { return outputs_; }
  // Constants in creation order.
  const std::vector<Value *> &constants() const { return constants_; }
  // Nodes in schedule (topological) order.
  std::vector<Node *> nodes() const;
  size_t numNodes() const { return nodes_.size(); }

  Value *findValue(const std::string &name) const;
  bool isGraphOutput(const Value *v) const;
  std::string uniqueName(const std::string &base) const;

private:
  std::string name_;
  ModelInfo info_;
  std::vector<std::unique_ptr<Value>> values_;
  std::map<std::string, Value *> valuesByName_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value *> inputs_, outputs_, constants_;
};

} // namespace odlac
