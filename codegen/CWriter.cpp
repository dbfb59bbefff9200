// Text helpers for generated C: literals, comments, identifiers (see CWriter.h).
#include "CWriter.h"

#include "support/Text.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace odlac {

void CWriter::line(const std::string &text) {
  std::string indent(static_cast<size_t>(depth_) * 2, ' ');
  if (text.empty() || indent.size() + text.size() <= kWidth || text[0] == '#' ||
      text.find('\n') != std::string::npos || text.back() == '\\') {
    out_ += text.empty() ? text : indent + text;
    out_ += '\n';
    return;
  }
  // Pieces end after each ", " or before each " || " / " && " outside string and character
  // literals and comments (a // comment runs to the end: nothing after it moves).
  std::vector<std::string> pieces(1);
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (text.compare(i, 2, "//") == 0) {
      pieces.back() += text.substr(i);
      break;
    }
    if (text.compare(i, 2, "/*") == 0) {
      size_t end = text.find("*/", i + 2);
      end = end == std::string::npos ? text.size() : end + 2;
      pieces.back() += text.substr(i, end - i);
      i = end - 1;
    } else if (ch == '"' || ch == '\'') {
      size_t j = i + 1;
      while (j < text.size() && text[j] != ch)
        j += text[j] == '\\' ? 2 : 1;
      pieces.back() += text.substr(i, j + 1 - i);
      i = j;
    } else if (ch == ',' && text.compare(i, 2, ", ") == 0) {
      pieces.back() += ',';
      pieces.emplace_back();
      ++i;
    } else if (text.compare(i, 4, " || ") == 0 || text.compare(i, 4, " && ") == 0) {
      pieces.emplace_back(text.substr(i + 1, 3));
      i += 3;
    } else {
      pieces.back() += ch;
    }
  }
  std::string cur = indent;
  for (const std::string &piece : pieces) {
    if (cur.size() > indent.size() + 4 && cur.size() + 1 + piece.size() > kWidth) {
      out_ += cur + '\n';
      cur = indent + "    ";
    }
    cur += (cur.size() > indent.size() && cur.back() != ' ' ? " " : "") + piece;
  }
  out_ += cur + '\n';
}

std::string cString(const std::string &s) {
  std::string r = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\' || (ch == '?' && r.back() == '?')) {
      r += '\\';
      r += static_cast<char>(ch);
    } else if (ch < 0x20 || ch >= 0x7f) {
      fmt::format_to(std::back_inserter(r), "\\{:03o}", ch);
    } else {
      r += static_cast<char>(ch);
    }
  }
  return r + "\"";
}

size_t cStringLength(const std::string &s) { return cString(s).size() - 2; }

std::string cComment(const std::string &s) {
  std::string r;
  for (size_t pos = 0; pos < s.size();) {
    Utf8Char c = decodeUtf8(s, pos);
    char ch = s[pos], last = r.empty() ? '\0' : r.back();
    if (!isShowable(c.codePoint))
      appendHexBytes(r, &s[pos], c.length);
    else if (ch == '\\')
      r += "\\\\";
    else if ((ch == '/' && last == '*') || (ch == '*' && last == '/') || (ch == '?' && last == '?'))
      r += std::string("\\") + ch;
    else
      r.append(s, pos, c.length);
    pos += c.length;
  }
  return r;
}

bool cIdentifierIsReserved(const std::string &id) {
  static const std::set<std::string> kReserved = {
      // C99, C11 and C23 keywords (C11's _Keywords cannot come out of cIdentifier, which drops
      // leading underscores) and GNU C's asm and typeof.
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
      "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
      "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
      "union", "unsigned", "void", "volatile", "while", "alignas", "alignof", "bool", "constexpr",
      "false", "nullptr", "static_assert", "thread_local", "true", "typeof", "typeof_unqual", "asm",
      // C++ keywords and alternative tokens: the header's prototypes are C++ too.
      "and", "and_eq", "bitand", "bitor", "catch", "char8_t", "char16_t", "char32_t", "class",
      "co_await", "co_return", "co_yield", "compl", "concept", "const_cast", "consteval",
      "constinit", "decltype", "delete", "dynamic_cast", "explicit", "export", "friend", "mutable",
      "namespace", "new", "noexcept", "not", "not_eq", "operator", "or", "or_eq", "private",
      "protected", "public", "reinterpret_cast", "requires", "static_cast", "template", "this",
      "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor", "xor_eq",
      // Names the generated code declares beside tensor names: NAME_run's instance, NAME_build's
      // weights, main.
      "inst", "status", "weights", "main",
      // Object-like macros of the C library headers generated files include, as glibc defines
      // them in C99 and GNU modes (a function-like macro is harmless: a declared name is not
      // followed by '('); GNU modes predefine linux and unix. tests/hostile/test_inject.py
      // compiles a model named after every such macro the host's headers define.
      "BIG_ENDIAN", "BUFSIZ", "BYTE_ORDER", "CLOCKS_PER_SEC", "CLOCK_BOOTTIME",
      "CLOCK_BOOTTIME_ALARM", "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_COARSE", "CLOCK_MONOTONIC_RAW",
      "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_REALTIME", "CLOCK_REALTIME_ALARM", "CLOCK_REALTIME_COARSE",
      "CLOCK_TAI", "CLOCK_THREAD_CPUTIME_ID", "E2BIG", "EACCES", "EADDRINUSE", "EADDRNOTAVAIL",
      "EADV", "EAFNOSUPPORT", "EAGAIN", "EALREADY", "EBADE", "EBADF", "EBADFD", "EBADMSG", "EBADR",
      "EBADRQC", "EBADSLT", "EBFONT", "EBUSY", "ECANCELED", "ECHILD", "ECHRNG", "ECOMM",
      "ECONNABORTED", "ECONNREFUSED", "ECONNRESET", "EDEADLK", "EDEADLOCK", "EDESTADDRREQ", "EDOM",
      "EDOTDOT", "EDQUOT", "EEXIST", "EFAULT", "EFBIG", "EHOSTDOWN", "EHOSTUNREACH", "EHWPOISON",
      "EIDRM", "EILSEQ", "EINPROGRESS", "EINTR", "EINVAL", "EIO", "EISCONN", "EISDIR", "EISNAM",
      "EKEYEXPIRED", "EKEYREJECTED", "EKEYREVOKED", "EL2HLT", "EL2NSYNC", "EL3HLT", "EL3RST",
      "ELIBACC", "ELIBBAD", "ELIBEXEC", "ELIBMAX", "ELIBSCN", "ELNRNG", "ELOOP", "EMEDIUMTYPE",
      "EMFILE", "EMLINK", "EMSGSIZE", "EMULTIHOP", "ENAMETOOLONG", "ENAVAIL", "ENETDOWN",
      "ENETRESET", "ENETUNREACH", "ENFILE", "ENOANO", "ENOBUFS", "ENOCSI", "ENODATA", "ENODEV",
      "ENOENT", "ENOEXEC", "ENOKEY", "ENOLCK", "ENOLINK", "ENOMEDIUM", "ENOMEM", "ENOMSG", "ENONET",
      "ENOPKG", "ENOPROTOOPT", "ENOSPC", "ENOSR", "ENOSTR", "ENOSYS", "ENOTBLK", "ENOTCONN",
      "ENOTDIR", "ENOTEMPTY", "ENOTNAM", "ENOTRECOVERABLE", "ENOTSOCK", "ENOTSUP", "ENOTTY",
      "ENOTUNIQ", "ENXIO", "EOF", "EOPNOTSUPP", "EOVERFLOW", "EOWNERDEAD", "EPERM", "EPFNOSUPPORT",
      "EPIPE", "EPROTO", "EPROTONOSUPPORT", "EPROTOTYPE", "ERANGE", "EREMCHG", "EREMOTE",
      "EREMOTEIO", "ERESTART", "ERFKILL", "EROFS", "ESHUTDOWN", "ESOCKTNOSUPPORT", "ESPIPE",
      "ESRCH", "ESRMNT", "ESTALE", "ESTRPIPE", "ETIME", "ETIMEDOUT", "ETOOMANYREFS", "ETXTBSY",
      "EUCLEAN", "EUNATCH", "EUSERS", "EWOULDBLOCK", "EXDEV", "EXFULL", "EXIT_FAILURE",
      "EXIT_SUCCESS", "FD_SETSIZE", "FILENAME_MAX", "FOPEN_MAX", "FP_ILOGB0", "FP_ILOGBNAN",
      "FP_INFINITE", "FP_NAN", "FP_NORMAL", "FP_SUBNORMAL", "FP_ZERO", "F_OK", "HUGE_VAL",
      "HUGE_VALF", "HUGE_VALL", "INFINITY", "INT16_MAX", "INT16_MIN", "INT32_MAX", "INT32_MIN",
      "INT64_MAX", "INT64_MIN", "INT8_MAX", "INT8_MIN", "INTMAX_MAX", "INTMAX_MIN", "INTPTR_MAX",
      "INTPTR_MIN", "INT_FAST16_MAX", "INT_FAST16_MIN", "INT_FAST32_MAX", "INT_FAST32_MIN",
      "INT_FAST64_MAX", "INT_FAST64_MIN", "INT_FAST8_MAX", "INT_FAST8_MIN", "INT_LEAST16_MAX",
      "INT_LEAST16_MIN", "INT_LEAST32_MAX", "INT_LEAST32_MIN", "INT_LEAST64_MAX", "INT_LEAST64_MIN",
      "INT_LEAST8_MAX", "INT_LEAST8_MIN", "LITTLE_ENDIAN", "L_ctermid", "L_tmpnam",
      "MATH_ERREXCEPT", "MATH_ERRNO", "MB_CUR_MAX", "M_1_PI", "M_2_PI", "M_2_SQRTPI", "M_E",
      "M_LN10", "M_LN2", "M_LOG10E", "M_LOG2E", "M_PI", "M_PI_2", "M_PI_4", "M_SQRT1_2", "M_SQRT2",
      "NAN", "NFDBITS", "NULL", "PDP_ENDIAN", "PTRDIFF_MAX", "PTRDIFF_MIN", "P_tmpdir", "RAND_MAX",
      "R_OK", "SEEK_CUR", "SEEK_END", "SEEK_SET", "SIG_ATOMIC_MAX", "SIG_ATOMIC_MIN", "SIZE_MAX",
      "STDERR_FILENO", "STDIN_FILENO", "STDOUT_FILENO", "S_IRGRP", "S_IROTH", "S_IRUSR", "S_IRWXG",
      "S_IRWXO", "S_IRWXU", "S_ISGID", "S_ISUID", "S_IWGRP", "S_IWOTH", "S_IWUSR", "S_IXGRP",
      "S_IXOTH", "S_IXUSR", "TIMER_ABSTIME", "TMP_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX",
      "UINT8_MAX", "UINTMAX_MAX", "UINTPTR_MAX", "UINT_FAST16_MAX", "UINT_FAST32_MAX",
      "UINT_FAST64_MAX", "UINT_FAST8_MAX", "UINT_LEAST16_MAX", "UINT_LEAST32_MAX",
      "UINT_LEAST64_MAX", "UINT_LEAST8_MAX", "UTIME_NOW", "UTIME_OMIT", "WCHAR_MAX", "WCHAR_MIN",
      "WCONTINUED", "WEXITED", "WINT_MAX", "WINT_MIN", "WNOHANG", "WNOWAIT", "WSTOPPED",
      "WUNTRACED", "W_OK", "X_OK", "errno", "linux", "math_errhandling", "st_atime", "st_ctime",
      "st_mtime", "stderr", "stdin", "stdout", "unix"};
  return kReserved.count(id) || id.rfind("odla", 0) == 0 || id.rfind("ODLA", 0) == 0;
}

std::string cIdentifier(const std::string &name, const std::string &prefix) {
  // Collapse runs of '_' and trim them at the ends: "/conv1/Conv_output_0" ->
  // "conv1_Conv_output_0".
  std::string tidy;
  for (unsigned char ch : name) {
    char c = std::isalnum(ch) ? static_cast<char>(ch) : '_';
    if (!(c == '_' && (tidy.empty() || tidy.back() == '_')))
      tidy += c;
  }
  while (!tidy.empty() && tidy.back() == '_')
    tidy.pop_back();
  std::string upperPrefix;
  for (char ch : prefix)
    upperPrefix += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  auto isModelSymbol = [&](const std::string &id) {
    return !prefix.empty() &&
           (id == prefix || id.rfind(prefix + "_", 0) == 0 || id.rfind(upperPrefix + "_", 0) == 0);
  };
  if (!tidy.empty() && !std::isdigit(static_cast<unsigned char>(tidy[0])) &&
      !cIdentifierIsReserved(tidy) && !isModelSymbol(tidy))
    return tidy;
  return isModelSymbol("t_" + tidy) ? "v_" + tidy : "t_" + tidy;
}

std::string CScope::unique(const std::string &id) {
  std::string name = id;
  for (int k = 2; taken_.count(name); ++k)
    name = id + "_" + std::to_string(k);
  taken_.insert(name);
  return name;
}

static std::string withPoint(std::string s) {
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

std::string cFloat(float f) {
  if (std::isnan(f))
    return "NAN";
  if (std::isinf(f))
    return f > 0 ? "HUGE_VALF" : "-HUGE_VALF";
  return withPoint(fmt::format("{:.9g}", static_cast<double>(f))) + "f";
}

std::string cDouble(double d) {
  if (std::isnan(d))
    return "NAN";
  if (std::isinf(d))
    return d > 0 ? "HUGE_VAL" : "-HUGE_VAL";
  return withPoint(fmt::format("{:.17g}", d));
}

} // namespace odlac
