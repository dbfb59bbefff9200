// Text helpers for generated C.
#include "CWriter.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

namespace odlac {

std::string cString(const std::string &s) {
  std::string r = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      r += '\\';
      r += static_cast<char>(ch);
    } else if (ch < 0x20 || ch >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", ch);
      r += buf;
    } else {
      r += static_cast<char>(ch);
    }
  }
  return r + "\"";
}

std::string cIdentifier(const std::string &name) {
  static const std::set<std::string> reserved = {
      "auto",     "break",  "case",     "char",    "const",    "continue", "default",
      "do",       "double", "else",     "enum",    "extern",   "float",    "for",
      "goto",     "if",     "inline",   "int",     "long",     "register", "restrict",
      "return",   "short",  "signed",   "sizeof",  "static",   "struct",   "switch",
      "typedef",  "union",  "unsigned", "void",    "volatile", "while",    "_Bool",
      "_Complex", "_Imaginary", "NULL", "inst",    "status",   "weights",  "main"};
  std::string id;
  for (unsigned char ch : name)
    id += std::isalnum(ch) ? static_cast<char>(ch) : '_';
  // Collapse runs of '_' and trim them at the ends: "/conv1/Conv_output_0" -> "conv1_Conv_output_0".
  std::string tidy;
  for (char ch : id)
    if (!(ch == '_' && (tidy.empty() || tidy.back() == '_')))
      tidy += ch;
  while (!tidy.empty() && tidy.back() == '_')
    tidy.pop_back();
  if (tidy.empty() || std::isdigit(static_cast<unsigned char>(tidy[0])) || reserved.count(tidy) ||
      tidy.rfind("odla", 0) == 0)
    tidy = "t_" + tidy;
  return tidy;
}

static std::string withPoint(const char *text) {
  std::string s = text;
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

std::string cFloat(float f) {
  if (std::isnan(f))
    return "NAN";
  if (std::isinf(f))
    return f > 0 ? "HUGE_VALF" : "-HUGE_VALF";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  return withPoint(buf) + "f";
}

std::string cDouble(double d) {
  if (std::isnan(d))
    return "NAN";
  if (std::isinf(d))
    return d > 0 ? "HUGE_VAL" : "-HUGE_VAL";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return withPoint(buf);
}

} // namespace odlac
