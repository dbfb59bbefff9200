// Text from models and users on its way into odlac's outputs (DESIGN §12): UTF-8 decoding and
// the one rule for which characters may be shown as they are. Each output language escapes
// with its own function built on these (cString and cComment for C, jsonString for the report,
// the IR printer's names, depfile paths, printable() for the terminal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace odlac {

// One UTF-8 sequence of `s` starting at `pos`: its code point and byte length. A byte that
// does not start a valid sequence (a stray continuation byte, an overlong form, a surrogate,
// a value above U+10FFFF, a truncated sequence) comes back as codePoint -1, length 1.
struct Utf8Char {
  int32_t codePoint;
  size_t length;
};
Utf8Char decodeUtf8(const std::string &s, size_t pos);

// Whether a code point may appear as itself in text that people read (a terminal, a comment,
// a string literal's source): not a C0 or C1 control character or DEL, and not one of the
// invisible or bidirectional formatting characters that make text look unlike what it is
// (U+200B..U+200F, U+2028..U+202E, U+2060..U+2069, U+FEFF; "Trojan Source").
bool isShowable(int32_t codePoint);

// `s` for a terminal or a log: showable characters as they are, every byte of anything else
// (controls, formatting characters, invalid UTF-8) as \xHH.
std::string printable(const std::string &s);

// Appends "\xHH" for each of the `n` bytes at `p`.
void appendHexBytes(std::string &out, const char *p, size_t n);

} // namespace odlac
