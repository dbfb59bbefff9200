// UTF-8 decoding and the showable-character rule (see Text.h).
#include "support/Text.h"

#include <fmt/format.h>

#include <cstdio>

namespace odlac {

Utf8Char decodeUtf8(const std::string &s, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b0 = byte(pos);
  if (b0 < 0x80)
    return {b0, 1};
  size_t len = b0 >= 0xf0 ? 4 : b0 >= 0xe0 ? 3 : b0 >= 0xc0 ? 2 : 0;
  if (len == 0 || b0 > 0xf4 || pos + len > s.size())
    return {-1, 1};
  int32_t cp = b0 & (0x7f >> len);
  for (size_t i = 1; i < len; ++i) {
    if ((byte(pos + i) & 0xc0) != 0x80)
      return {-1, 1};
    cp = (cp << 6) | (byte(pos + i) & 0x3f);
  }
  static const int32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000}; // below: an overlong form
  if (cp < kLeast[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return {-1, 1};
  return {cp, len};
}

bool isShowable(int32_t cp) {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
    return false;
  return !((cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
           (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff);
}

void appendHexBytes(std::string &out, const char *p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    fmt::format_to(std::back_inserter(out), "\\x{:02x}", static_cast<unsigned char>(p[i]));
  }
}

std::string printable(const std::string &s) {
  std::string out;
  for (size_t pos = 0; pos < s.size();) {
    Utf8Char c = decodeUtf8(s, pos);
    if (isShowable(c.codePoint))
      out.append(s, pos, c.length);
    else
      appendHexBytes(out, &s[pos], c.length);
    pos += c.length;
  }
  return out;
}

} // namespace odlac
