// Prints the IR's text form (see Printer.h).
#include "ir/Printer.h"

#include "ops/OpDef.h"
#include "support/Text.h"

#include <fmt/format.h>

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace odlac {
namespace {

// A string of the text form: quoted, with `"` and `\` escaped and every byte of what is not
// showable (newlines, other controls, formatting characters, invalid UTF-8; support/Text.h)
// as \xHH, so that a name can neither add lines to the IR nor control the terminal --print-ir
// writes to. Parser.cpp reads the escapes back.
std::string quoted(const std::string &s) {
  std::string q = "\"";
  for (size_t pos = 0; pos < s.size();) {
    Utf8Char c = decodeUtf8(s, pos);
    if (s[pos] == '"' || s[pos] == '\\')
      q += std::string("\\") + s[pos];
    else if (!isShowable(c.codePoint))
      appendHexBytes(q, &s[pos], c.length);
    else
      q.append(s, pos, c.length);
    pos += c.length;
  }
  return q + "\"";
}

// A name: as it is when it is plain (letters, digits, '_', '.'), else quoted.
std::string nameText(const std::string &n) {
  bool plain = !n.empty();
  for (char ch : n)
    plain &= std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.';
  return plain ? n : quoted(n);
}

std::string valueName(const Value *v) { return v ? "%" + nameText(v->name()) : "none"; }

std::string floatText(double d) {
  std::string text = fmt::format("{:.9g}", d);
  if (text.find_first_of(".eEn") == std::string::npos) // floats stay distinguishable from ints
    text += ".0";                                      // ("inf", "nan" stay)
  return text;
}

template <class T> std::string elementsAs(const Buffer &b, size_t n, bool isFloat) {
  std::string s;
  const T *p = b.as<T>();
  for (size_t i = 0; i < n; ++i) {
    if (i)
      s += ",";
    s += isFloat ? floatText(static_cast<double>(p[i])) : std::to_string(p[i]);
  }
  return s;
}

std::string constantText(const Value &c, size_t denseLimit) {
  const Buffer &b = *c.data();
  size_t n = static_cast<size_t>(c.type().numElements());
  if (c.dtype() == DType::Str) // model text: never printed (the C gets it escaped)
    return "<" + std::to_string(n) + " strings>";
  if (n > denseLimit || c.dtype() == DType::F16 || c.dtype() == DType::BF16 ||
      isExtensionType(c.dtype()))
    return "<" + std::to_string(b.size) + " bytes>";
  std::string body;
  switch (c.dtype()) {
  case DType::F32:
    body = elementsAs<float>(b, n, true);
    break;
  case DType::F64:
    body = elementsAs<double>(b, n, true);
    break;
  case DType::I8:
    body = elementsAs<int8_t>(b, n, false);
    break;
  case DType::I16:
    body = elementsAs<int16_t>(b, n, false);
    break;
  case DType::I32:
    body = elementsAs<int32_t>(b, n, false);
    break;
  case DType::I64:
    body = elementsAs<int64_t>(b, n, false);
    break;
  case DType::U8:
  case DType::Bool:
    body = elementsAs<uint8_t>(b, n, false);
    break;
  case DType::U16:
    body = elementsAs<uint16_t>(b, n, false);
    break;
  case DType::U32:
    body = elementsAs<uint32_t>(b, n, false);
    break;
  case DType::U64:
    body = elementsAs<uint64_t>(b, n, false);
    break;
  default:
    break;
  }
  return "dense<[" + body + "]>";
}

void printInto(std::string &s, const Graph &g, size_t denseLimit, const std::string &indent) {
  s += "graph @" + nameText(g.name()) + "(";
  for (size_t i = 0; i < g.inputs().size(); ++i)
    s += (i ? ", " : "") + valueName(g.inputs()[i]) + ": " + toString(g.inputs()[i]->type());
  s += ") {\n";
  for (const Value *c : g.constants())
    s += indent + "  const " + valueName(c) + ": " + toString(c->type()) + " = " +
         constantText(*c, denseLimit) + "\n";
  for (const Node *n : g.nodes()) {
    s += indent + "  ";
    for (int i = 0; i < n->numOutputs(); ++i)
      s += (i ? ", " : "") + valueName(n->output(i));
    s += std::string(" = ") + n->op().name + "(";
    for (int i = 0; i < n->numInputs(); ++i)
      s += (i ? ", " : "") + valueName(n->input(i));
    s += ")";
    if (!n->attrs().empty()) {
      s += " {";
      bool first = true;
      for (const auto &[name, value] : n->attrs()) {
        s += (first ? "" : ", ") + name + " = " + attrText(value);
        first = false;
      }
      s += "}";
    }
    s += " : ";
    for (int i = 0; i < n->numOutputs(); ++i)
      s += (i ? ", " : "") + toString(n->output(i)->type());
    s += "\n";
    for (const auto &[name, body] : n->subgraphs()) {
      s += indent + "    " + name + " = ";
      printInto(s, *body, denseLimit, indent + "    ");
    }
  }
  s += indent + "  return";
  for (size_t i = 0; i < g.outputs().size(); ++i)
    s += (i ? ", " : " ") + valueName(g.outputs()[i]);
  s += "\n" + indent + "}\n";
}

} // namespace

std::string attrText(const AttrValue &v) {
  switch (attrKind(v)) {
  case AttrKind::Int:
    return std::to_string(std::get<int64_t>(v));
  case AttrKind::Float:
    return floatText(std::get<double>(v));
  case AttrKind::String:
    return quoted(std::get<std::string>(v));
  case AttrKind::Ints:
    return dimsToString(std::get<std::vector<int64_t>>(v));
  case AttrKind::Floats: {
    std::string s = "[";
    for (double d : std::get<std::vector<double>>(v))
      s += (s.size() > 1 ? "," : "") + floatText(d);
    return s + "]";
  }
  case AttrKind::Strings: {
    std::string s = "[";
    for (const std::string &str : std::get<std::vector<std::string>>(v))
      s += (s.size() > 1 ? "," : "") + quoted(str);
    return s + "]";
  }
  }
  return "?";
}

std::string printGraph(const Graph &g, size_t denseLimit) {
  std::string s;
  printInto(s, g, denseLimit, "");
  return s;
}

} // namespace odlac
