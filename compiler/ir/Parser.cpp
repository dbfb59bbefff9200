// A recursive-descent parser for the IR's text form.
#include "ir/Parser.h"

#include "ir/Limits.h"
#include "ops/OpDef.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace odlac {
namespace {

class Parser {
public:
  explicit Parser(const std::string &text) : s_(text) {}

  Expected<std::unique_ptr<Graph>> run() {
    try {
      parseAll();
    } catch (const Fail &f) {
      return Status::error(f.message);
    }
    return std::move(g_);
  }

private:
  struct Fail {
    std::string message;
  };

  [[noreturn]] void fail(const std::string &what) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw Fail{"line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what};
  }

  void skipSpace() {
    for (;;) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
        ++pos_;
      if (s_.compare(pos_, 2, "//") == 0) { // comments run to the end of the line
        while (pos_ < s_.size() && s_[pos_] != '\n')
          ++pos_;
        continue;
      }
      return;
    }
  }

  bool peek(const char *tok) {
    skipSpace();
    return s_.compare(pos_, std::strlen(tok), tok) == 0;
  }

  bool accept(const char *tok) {
    if (!peek(tok))
      return false;
    pos_ += std::strlen(tok);
    return true;
  }

  void expect(const char *tok) {
    if (!accept(tok))
      fail(std::string("expected '") + tok + "'");
  }

  std::string identifier() {
    skipSpace();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '.'))
      ++pos_;
    if (start == pos_)
      fail("expected an identifier");
    return s_.substr(start, pos_ - start);
  }

  std::string quoted() {
    skipSpace();
    if (pos_ >= s_.size() || s_[pos_] != '"')
      fail("expected a string");
    std::string out;
    // `\` escapes the next character; `\xHH` is a byte (how Printer.cpp writes what is not
    // showable).
    for (++pos_; pos_ < s_.size() && s_[pos_] != '"'; ++pos_) {
      if (s_[pos_] == '\\' && pos_ + 3 < s_.size() && s_[pos_ + 1] == 'x' &&
          std::isxdigit(static_cast<unsigned char>(s_[pos_ + 2])) &&
          std::isxdigit(static_cast<unsigned char>(s_[pos_ + 3]))) {
        out += static_cast<char>(std::stoi(s_.substr(pos_ + 2, 2), nullptr, 16));
        pos_ += 3;
        continue;
      }
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size())
        ++pos_;
      out += s_[pos_];
    }
    if (pos_ >= s_.size())
      fail("unterminated string");
    ++pos_;
    return out;
  }

  // %name or %"any name"
  std::string valueName() {
    expect("%");
    return peek("\"") ? quoted() : identifier();
  }

  Value *valueRef() {
    if (accept("none"))
      return nullptr;
    size_t at = pos_;
    std::string name = valueName();
    auto it = values_.find(name);
    if (it == values_.end()) {
      pos_ = at;
      fail("use of undefined value %" + name);
    }
    return it->second;
  }

  TensorType type() {
    std::string dt = identifier();
    auto dtype = dtypeFromName(dt);
    if (!dtype)
      fail("unknown element type '" + dt + "'");
    TensorType t{*dtype, {}};
    expect("[");
    if (!accept("]")) {
      do
        t.dims.push_back(integer());
      while (accept(","));
      expect("]");
    }
    std::string problem = shapeProblem(t);
    if (!problem.empty())
      fail("type " + toString(t) + ": " + problem);
    return t;
  }

  int64_t integer() {
    skipSpace();
    char *end = nullptr;
    long long v = std::strtoll(s_.c_str() + pos_, &end, 10);
    if (end == s_.c_str() + pos_)
      fail("expected an integer");
    pos_ = static_cast<size_t>(end - s_.c_str());
    return v;
  }

  // A number: an int unless it has '.', 'e' or is inf/nan.
  AttrValue number() {
    skipSpace();
    size_t start = pos_;
    if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+'))
      ++pos_;
    if (s_.compare(pos_, 3, "inf") == 0 || s_.compare(pos_, 3, "nan") == 0) {
      pos_ += 3;
      return std::strtod(s_.substr(start, pos_ - start).c_str(), nullptr);
    }
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
            ((s_[pos_] == '-' || s_[pos_] == '+') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E'))))
      ++pos_;
    std::string text = s_.substr(start, pos_ - start);
    if (text.empty() || text == "-" || text == "+")
      fail("expected a number");
    char *end = nullptr;
    if (text.find_first_of(".eE") != std::string::npos) {
      double d = std::strtod(text.c_str(), &end);
      if (*end)
        fail("bad number '" + text + "'");
      return d;
    }
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (*end)
      fail("bad number '" + text + "'");
    return static_cast<int64_t>(v);
  }

  AttrValue attrValue(const AttrDef *def) {
    if (peek("\""))
      return quoted();
    if (!accept("["))
      return number();
    std::vector<AttrValue> items;
    if (!accept("]")) {
      do
        items.push_back(peek("\"") ? AttrValue(quoted()) : number());
      while (accept(","));
      expect("]");
    }
    AttrKind kind = def ? def->kind : AttrKind::Ints;
    if (!items.empty())
      kind = attrKind(items[0]) == AttrKind::String  ? AttrKind::Strings
             : attrKind(items[0]) == AttrKind::Float ? AttrKind::Floats
                                                     : AttrKind::Ints;
    if (def && def->kind == AttrKind::Floats)
      kind = AttrKind::Floats; // [1, 2] for a floats attribute
    switch (kind) {
    case AttrKind::Strings: {
      std::vector<std::string> v;
      for (const AttrValue &i : items) {
        if (attrKind(i) != AttrKind::String)
          fail("mixed list");
        v.push_back(std::get<std::string>(i));
      }
      return v;
    }
    case AttrKind::Floats: {
      std::vector<double> v;
      for (const AttrValue &i : items)
        v.push_back(attrKind(i) == AttrKind::Int ? static_cast<double>(std::get<int64_t>(i))
                                                 : std::get<double>(i));
      return v;
    }
    default: {
      std::vector<int64_t> v;
      for (const AttrValue &i : items) {
        if (attrKind(i) != AttrKind::Int)
          fail("mixed list");
        v.push_back(std::get<int64_t>(i));
      }
      return v;
    }
    }
  }

  template <class T> void appendAs(std::vector<unsigned char> &bytes, double v) {
    T x = static_cast<T>(v);
    const unsigned char *p = reinterpret_cast<const unsigned char *>(&x);
    bytes.insert(bytes.end(), p, p + sizeof x);
  }

  std::shared_ptr<const Buffer> dense(const TensorType &t) {
    if (peek("<"))
      fail("a constant's data is elided ('<N bytes>'); pass tests need dense<[...]> values");
    expect("dense");
    expect("<");
    expect("[");
    std::vector<unsigned char> bytes;
    size_t count = 0;
    if (!accept("]")) {
      do {
        AttrValue n = number();
        double v = attrKind(n) == AttrKind::Int ? static_cast<double>(std::get<int64_t>(n))
                                                : std::get<double>(n);
        // A float literal read as an integer element only where int64 holds it (-inf, nan and
        // 1e300 in a float constant's data must not reach the conversion).
        int64_t iv = attrKind(n) == AttrKind::Int                ? std::get<int64_t>(n)
                     : std::isfinite(v) && std::fabs(v) < 0x1p63 ? static_cast<int64_t>(v)
                                                                 : 0;
        switch (t.dtype) {
        case DType::F32:
          appendAs<float>(bytes, v);
          break;
        case DType::F64:
          appendAs<double>(bytes, v);
          break;
        case DType::I8:
          appendAs<int8_t>(bytes, static_cast<double>(iv));
          break;
        case DType::I16:
          appendAs<int16_t>(bytes, static_cast<double>(iv));
          break;
        case DType::I32:
          appendAs<int32_t>(bytes, static_cast<double>(iv));
          break;
        case DType::I64: {
          const unsigned char *p = reinterpret_cast<const unsigned char *>(&iv);
          bytes.insert(bytes.end(), p, p + 8);
          break;
        }
        case DType::U8:
        case DType::Bool:
          appendAs<uint8_t>(bytes, static_cast<double>(iv));
          break;
        case DType::U16:
          appendAs<uint16_t>(bytes, static_cast<double>(iv));
          break;
        case DType::U32:
          appendAs<uint32_t>(bytes, static_cast<double>(iv));
          break;
        case DType::U64:
          appendAs<uint64_t>(bytes, static_cast<double>(iv));
          break;
        default:
          fail(std::string("dense values of ") + dtypeName(t.dtype) + " are not supported");
        }
        ++count;
      } while (accept(","));
      expect("]");
    }
    expect(">");
    if (count != static_cast<size_t>(t.numElements()))
      fail("dense<> holds " + std::to_string(count) + " values, " + toString(t) + " needs " +
           std::to_string(t.numElements()));
    return Buffer::copyOf(bytes.data(), bytes.size());
  }

  void define(const std::string &name, Value *v) {
    if (!values_.emplace(name, v).second)
      fail("value %" + name + " is defined twice");
    if (v->name() != name)
      fail("internal: value %" + name + " was renamed");
  }

  void parseAll() {
    g_ = graph(false);
    skipSpace();
    if (pos_ != s_.size())
      fail("text after the graph");
  }

  // graph @name(%in: type, ...) { const ... nodes ... return ... }; a nested graph (a body)
  // has its own value names and holds no constants.
  std::unique_ptr<Graph> graph(bool nested) {
    expect("graph");
    expect("@");
    std::unique_ptr<Graph> outer = std::move(g_);
    std::map<std::string, Value *> outerValues = std::move(values_);
    values_.clear();
    g_ = std::make_unique<Graph>(peek("\"") ? quoted() : identifier());
    expect("(");
    if (!accept(")")) {
      do {
        std::string name = valueName();
        expect(":");
        define(name, g_->addInput(name, type()));
      } while (accept(","));
      expect(")");
    }
    expect("{");
    while (!peek("return")) {
      if (accept("const")) {
        if (nested)
          fail("a body holds no constants; constants live in the outermost graph and are "
               "passed in as operands");
        std::string name = valueName();
        expect(":");
        TensorType t = type();
        expect("=");
        define(name, g_->addConstant(name, t, dense(t)));
        continue;
      }
      parseNode();
    }
    expect("return");
    if (!peek("}")) {
      do
        g_->addOutput(valueRef());
      while (accept(","));
    }
    expect("}");
    std::unique_ptr<Graph> done = std::move(g_);
    g_ = std::move(outer);
    values_ = std::move(outerValues);
    return done;
  }

  void parseNode() {
    std::vector<std::string> names;
    do
      names.push_back(valueName());
    while (accept(","));
    expect("=");
    size_t opAt = pos_;
    std::string opName = identifier();
    const OpDef *op = findOp(opName);
    if (!op) {
      pos_ = opAt;
      fail("unknown op '" + opName + "'");
    }
    expect("(");
    std::vector<Value *> operands;
    if (!accept(")")) {
      do
        operands.push_back(valueRef());
      while (accept(","));
      expect(")");
    }
    AttrMap attrs;
    if (accept("{")) {
      do {
        std::string name = identifier();
        expect("=");
        attrs[name] = attrValue(op->findAttr(name));
      } while (accept(","));
      expect("}");
    }
    expect(":");
    std::vector<TensorType> types;
    do
      types.push_back(type());
    while (accept(","));
    if (types.size() != names.size())
      fail(std::to_string(names.size()) + " results but " + std::to_string(types.size()) +
           " types");
    // Subgraphs: `name = graph @...(...) {...}` until the next node, constant or return.
    std::vector<std::pair<std::string, std::unique_ptr<Graph>>> bodies;
    while (!peek("%") && !peek("const") && !peek("return")) {
      std::string name = identifier();
      expect("=");
      bodies.emplace_back(name, graph(true));
    }
    std::vector<Value *> results;
    for (const std::string &n : names)
      results.push_back(g_->addValue(n, TensorType{}));
    Node *node = g_->addNode(*op, names[0], operands, results, attrs);
    for (auto &[name, body] : bodies)
      node->setSubgraph(name, std::move(body));
    if (Status s = verifyAndInfer(*node)) {
      pos_ = opAt;
      fail(s.message());
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (results[i]->type() != types[i])
        fail("%" + names[i] + " is annotated " + toString(types[i]) + " but " + opName + " gives " +
             toString(results[i]->type()));
      define(names[i], results[i]);
    }
  }

  const std::string &s_;
  size_t pos_ = 0;
  std::unique_ptr<Graph> g_;
  std::map<std::string, Value *> values_;
};

} // namespace

Expected<std::unique_ptr<Graph>> parseGraph(const std::string &text) { return Parser(text).run(); }

} // namespace odlac
