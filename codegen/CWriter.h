// An indentation-aware writer for generated C: callers give lines, the writer indents them.
#pragma once

#include <string>

namespace odlac {

class CWriter {
public:
  void line(const std::string &text = "") {
    if (!text.empty())
      out_.append(static_cast<size_t>(depth_) * 2, ' ');
    out_ += text;
    out_ += '\n';
  }
  // "head {" then an indented body until close().
  void open(const std::string &head) {
    line(head.empty() ? "{" : head + " {");
    ++depth_;
  }
  // "} head {": closes a block and opens the next one of the same statement (else).
  void reopen(const std::string &head) {
    --depth_;
    line("} " + head + " {");
    ++depth_;
  }
  void close(const std::string &tail = "}") {
    --depth_;
    line(tail);
  }
  const std::string &str() const { return out_; }

private:
  std::string out_;
  int depth_ = 0;
};

// A C string literal for `s`, escaped.
std::string cString(const std::string &s);
// A C identifier made from a tensor name: non-identifier characters become '_', a leading
// digit or a C keyword gets a 't_' prefix.
std::string cIdentifier(const std::string &name);
// A float literal that round-trips exactly ("0.5f", "-HUGE_VALF", "NAN").
std::string cFloat(float f);
std::string cDouble(double d);

} // namespace odlac
