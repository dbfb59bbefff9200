// The IR graph: values, nodes, and their use lists.
#include "ir/Graph.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace odlac {

std::string dimsToString(const Dims &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string toString(const TensorType &t) { return dtypeName(t.dtype) + dimsToString(t.dims); }

const char *attrKindName(AttrKind k) {
  switch (k) {
  case AttrKind::Int:
    return "int";
  case AttrKind::Float:
    return "float";
  case AttrKind::String:
    return "string";
  case AttrKind::Ints:
    return "ints";
  case AttrKind::Floats:
    return "floats";
  case AttrKind::Strings:
    return "strings";
  }
  return "?";
}

std::shared_ptr<const Buffer> Buffer::ofStrings(std::vector<std::string> strings) {
  struct Owned {
    std::vector<std::string> strings;
    std::vector<const char *> pointers;
  };
  auto owned = std::make_shared<Owned>();
  owned->strings = std::move(strings);
  for (const std::string &s : owned->strings)
    owned->pointers.push_back(s.c_str());
  auto buf = std::make_shared<Buffer>();
  buf->data = owned->pointers.empty() ? nullptr : owned->pointers.data();
  buf->size = owned->pointers.size() * sizeof(const char *);
  buf->owner = owned;
  if (!buf->data)
    buf->data = "";
  return buf;
}

void Buffer::dropPages(const void *p, size_t n) const {
  if (!fileMapped)
    return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  // Whole pages only; MADV_DONTNEED on a private file mapping nothing wrote to rereads it.
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), // NOLINT(performance-no-int-to-ptr): a page address
            end - begin, MADV_DONTNEED);
}

std::shared_ptr<const Buffer> Buffer::copyOf(const void *data, size_t size) {
  auto bytes = std::make_shared<std::vector<unsigned char>>(size);
  if (size)
    std::memcpy(bytes->data(), data, size);
  auto buf = std::make_shared<Buffer>();
  buf->data = bytes->data();
  buf->size = size;
  buf->owner = bytes;
  return buf;
}

int64_t Node::i(const std::string &name) const { return std::get<int64_t>(attrs_.at(name)); }
double Node::f(const std::string &name) const { return std::get<double>(attrs_.at(name)); }
const std::string &Node::s(const std::string &name) const {
  return std::get<std::string>(attrs_.at(name));
}
const std::vector<int64_t> &Node::ints(const std::string &name) const {
  return std::get<std::vector<int64_t>>(attrs_.at(name));
}
const std::vector<double> &Node::floats(const std::string &name) const {
  return std::get<std::vector<double>>(attrs_.at(name));
}

void Node::setInput(int i, Value *v) {
  Value *old = inputs_[i];
  if (old) {
    auto &uses = old->uses_;
    for (auto it = uses.begin(); it != uses.end(); ++it)
      if (it->node == this && it->operand == i) {
        uses.erase(it);
        break;
      }
  }
  inputs_[i] = v;
  if (v)
    v->uses_.push_back({this, i});
}

const Graph *Node::subgraph(const std::string &name) const {
  for (const auto &[n, g] : subgraphs_)
    if (n == name)
      return g.get();
  return nullptr;
}

void Node::setSubgraph(const std::string &name, std::unique_ptr<Graph> body) {
  for (auto &[n, g] : subgraphs_)
    if (n == name) {
      g = std::move(body);
      return;
    }
  subgraphs_.emplace_back(name, std::move(body));
}

std::unique_ptr<Graph> Node::takeSubgraph(const std::string &name) {
  for (auto &[n, g] : subgraphs_)
    if (n == name)
      return std::move(g);
  return nullptr;
}

std::string Graph::uniqueName(const std::string &base) const {
  std::string name = base.empty() ? "t" : base;
  for (int k = 1; valuesByName_.count(name); ++k)
    name = base + "_" + std::to_string(k);
  return name;
}

Value *Graph::addValue(const std::string &name, TensorType type) {
  values_.push_back(std::make_unique<Value>(uniqueName(name), std::move(type)));
  Value *v = values_.back().get();
  valuesByName_[v->name()] = v;
  return v;
}

Value *Graph::addInput(const std::string &name, TensorType type) {
  Value *v = addValue(name, std::move(type));
  v->isGraphInput_ = true;
  inputs_.push_back(v);
  return v;
}

void Graph::setInputs(const std::vector<Value *> &inputs) {
  for (Value *old : inputs_)
    if (std::find(inputs.begin(), inputs.end(), old) == inputs.end()) {
      assert(old->uses_.empty() && !isGraphOutput(old) && "dropping a used input");
      old->isGraphInput_ = false;
    }
  for ([[maybe_unused]] Value *in : inputs)
    assert(in->isGraphInput_ && "setInputs only reorders or drops inputs");
  inputs_ = inputs;
}

Value *Graph::addConstant(const std::string &name, TensorType type,
                          std::shared_ptr<const Buffer> data) {
  assert(data && data->size == type.byteSize());
  Value *v = addValue(name, std::move(type));
  v->data_ = std::move(data);
  constants_.push_back(v);
  return v;
}

Node *Graph::addNode(const OpDef &op, const std::string &name, std::vector<Value *> inputs,
                     std::vector<Value *> outputs, AttrMap attrs) {
  nodes_.push_back(std::make_unique<Node>());
  Node *n = nodes_.back().get();
  n->op_ = &op;
  n->name_ = name;
  n->attrs_ = std::move(attrs);
  n->inputs_.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    n->setInput(static_cast<int>(i), inputs[i]);
  n->outputs_ = std::move(outputs);
  for (size_t i = 0; i < n->outputs_.size(); ++i) {
    Value *out = n->outputs_[i];
    assert(!out->producer_ && !out->isGraphInput_ && !out->isConstant());
    out->producer_ = n;
    out->producerResult_ = static_cast<int>(i);
  }
  return n;
}

Node *Graph::addNodeBefore(const Node *pos, const OpDef &op, const std::string &name,
                           std::vector<Value *> inputs, std::vector<Value *> outputs,
                           AttrMap attrs) {
  Node *n = addNode(op, name, std::move(inputs), std::move(outputs), std::move(attrs));
  auto at = std::find_if(nodes_.begin(), nodes_.end(),
                         [pos](const std::unique_ptr<Node> &p) { return p.get() == pos; });
  assert(at != nodes_.end());
  std::rotate(at, nodes_.end() - 1, nodes_.end());
  return n;
}

void Graph::replaceAllUses(Value *from, Value *to) {
  assert(from != to);
  std::vector<Use> uses = from->uses_;
  for (const Use &u : uses)
    u.node->setInput(u.operand, to);
  if (!isGraphOutput(from))
    return;
  assert(to->producer_ && !isGraphOutput(to) && "a graph output must stay its own node result");
  for (Value *&o : outputs_)
    if (o == from)
      o = to;
  std::swap(from->name_, to->name_);
  valuesByName_[from->name_] = from;
  valuesByName_[to->name_] = to;
}

void Graph::eraseNode(Node *n) {
  for (int i = 0; i < n->numInputs(); ++i)
    n->setInput(i, nullptr);
  for (Value *out : n->outputs_) {
    assert(out->uses_.empty() && !isGraphOutput(out) && "erasing a node whose result is used");
    out->producer_ = nullptr;
  }
  nodes_.erase(std::find_if(nodes_.begin(), nodes_.end(),
                            [n](const std::unique_ptr<Node> &p) { return p.get() == n; }));
}

// An erased constant's data is released with it (the Value itself lives on in values_): a
// pass that replaces the weights does not keep the old ones in memory.
size_t Graph::eraseUnusedConstants() {
  size_t before = constants_.size();
  constants_.erase(std::remove_if(constants_.begin(), constants_.end(),
                                  [this](Value *c) {
                                    if (!c->uses_.empty() || isGraphOutput(c))
                                      return false;
                                    c->data_.reset();
                                    return true;
                                  }),
                   constants_.end());
  return before - constants_.size();
}

Value *Graph::replaceWithConstant(Value *v, std::shared_ptr<const Buffer> data) {
  Value *c = addConstant(v->name() + "/folded", v->type(), std::move(data));
  replaceAllUses(v, c);
  Node *n = v->producer();
  bool dead = n != nullptr;
  for (Value *out : n ? n->outputs_ : std::vector<Value *>{})
    dead &= out->uses_.empty() && !isGraphOutput(out);
  if (!dead)
    return c;
  std::vector<Value *> operands = n->inputs_;
  eraseNode(n);
  // The constants only the folded node read (a transposed weight's original) go now, not at
  // the next eraseUnusedConstants: folding every weight would hold both copies until then.
  for (Value *in : operands)
    if (in && in->isConstant() && in->uses_.empty() && !isGraphOutput(in))
      if (auto at = std::find(constants_.begin(), constants_.end(), in); at != constants_.end()) {
        in->data_.reset();
        constants_.erase(at);
      }
  return c;
}

std::vector<Node *> Graph::nodes() const {
  std::vector<Node *> all;
  all.reserve(nodes_.size());
  for (const auto &n : nodes_)
    all.push_back(n.get());
  return all;
}

std::vector<Value *> Graph::inlineBody(Graph &body, const std::vector<Value *> &operands,
                                       const Node *pos) {
  assert(operands.size() == body.inputs().size());
  std::map<const Value *, Value *> mapped;
  for (size_t i = 0; i < operands.size(); ++i)
    mapped[body.inputs()[i]] = operands[i];
  for (Node *b : body.nodes()) {
    std::vector<Value *> ins, outs;
    for (const Value *in : b->inputs())
      ins.push_back(in ? mapped.at(in) : nullptr);
    for (const Value *out : b->outputs()) {
      outs.push_back(addValue(out->name(), out->type()));
      mapped[out] = outs.back();
    }
    Node *copy = pos ? addNodeBefore(pos, b->op(), b->name(), ins, outs, b->attrs())
                     : addNode(b->op(), b->name(), ins, outs, b->attrs());
    for (const auto &[name, sub] : b->subgraphs())
      copy->setSubgraph(name, b->takeSubgraph(name));
  }
  std::vector<Value *> results;
  for (const Value *o : body.outputs())
    results.push_back(mapped.at(o));
  return results;
}

Value *Graph::findValue(const std::string &name) const {
  auto it = valuesByName_.find(name);
  return it == valuesByName_.end() ? nullptr : it->second;
}

bool Graph::isGraphOutput(const Value *v) const {
  for (const Value *o : outputs_)
    if (o == v)
      return true;
  return false;
}

} // namespace odlac
