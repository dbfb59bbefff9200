// An indentation-aware writer for generated C, and the one escaping function per kind of C
// text that model or user strings reach (DESIGN §12): string literals, comments, identifiers.
#pragma once

#include <set>
#include <string>
#include <utility>

namespace odlac {

class CWriter {
public:
  static constexpr size_t kWidth = 100; // columns a generated line should fit in
  // `depth`: the blocks the text starts inside (1: a function's body).
  explicit CWriter(int depth = 0) : depth_(depth) {}
  // One line at the current indentation. Past kWidth columns, a statement continues on lines
  // indented four more, broken after a ", ", before a " || " or " && " outside literals and
  // comments (preprocessor lines, macro continuations and text of several lines stay whole).
  void line(const std::string &text = "");
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
  // The text so far, which the writer then forgets (its depth stays).
  std::string take() { return std::exchange(out_, {}); }
  // The columns line() puts before a line's text.
  size_t indent() const { return static_cast<size_t>(depth_) * 2; }

private:
  std::string out_;
  int depth_ = 0;
};

// A C string literal for `s`: `"` and `\` escaped, bytes outside printable ASCII as octal
// escapes, and a `?` right after a `?` as `\?`, so that no trigraph (`??/` is a backslash)
// survives in C99 or with -trigraphs.
std::string cString(const std::string &s);
// The characters of a string literal for `s` without its quotes: what C99's limit of 4095
// characters in a literal (translation limits, 5.2.4.1) applies to.
size_t cStringLength(const std::string &s);
constexpr size_t kMaxCStringLength = 4095;

// `s` as text inside a /* */ comment, on one line: no `*/` or `/*` (written `*\/`, `/\*`), no
// `??` (`?\?`), `\` doubled, and every byte of a character that is not showable (newlines and
// other controls, bidirectional and invisible formatting characters, invalid UTF-8; see
// support/Text.h) as \xHH. Other UTF-8 text stays readable. The text must not directly follow
// a `*`, `/` or `?` of the comment around it.
std::string cComment(const std::string &s);

// A C identifier made from a tensor name: non-identifier characters become '_' (runs of them
// collapse, leading and trailing ones go), so it never starts or ends with '_'. A name that
// would be reserved (cIdentifierIsReserved, or the model's own symbols: `prefix`, `prefix`_...
// and its upper case PREFIX_...) gets 't_' in front ('v_' where the model's prefix would
// claim 't_...' too).
std::string cIdentifier(const std::string &name, const std::string &prefix = "");
// Whether generated code may not declare `id` where the names of the headers it includes are
// visible: a C99, C11, C23 or C++ keyword; a macro the C library headers that generated files
// include define (glibc: stdio.h, stdlib.h, string.h, math.h, errno.h, time.h, sys/stat.h,
// unistd.h; in C99 and GNU modes), or one that GNU modes predefine (linux, unix); an ODLA or
// odlac driver name (odla..., ODLA...); or a name the generated code itself uses next to tensor
// names (inst, weights, main...).
bool cIdentifierIsReserved(const std::string &id);

// The identifiers of one C scope (a function's locals, a prototype's parameters, the weights'
// symbols): each name it gives is new in the scope, the second "x" becoming "x_2".
class CScope {
public:
  // `prefix`: the model's (--name), whose symbols tensor names must not take; `taken`: names the
  // generated code declares in the scope itself.
  explicit CScope(std::string prefix = "", std::set<std::string> taken = {})
      : prefix_(std::move(prefix)), taken_(std::move(taken)) {}
  // An identifier for a tensor name (cIdentifier), made unique.
  std::string add(const std::string &tensorName) {
    return unique(cIdentifier(tensorName, prefix_));
  }
  // `id` itself (a generated name such as a weights symbol), or `id`_2, `id`_3... if taken.
  std::string unique(const std::string &id);

private:
  std::string prefix_;
  std::set<std::string> taken_;
};

// A float literal that round-trips exactly ("0.5f", "-HUGE_VALF", "NAN").
std::string cFloat(float f);
std::string cDouble(double d);

} // namespace odlac
