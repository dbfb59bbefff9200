/* The JSON string writer of the backends' reports (the profiler's and the reference runtime
 * profiler's): any bytes in, valid UTF-8 and valid JSON (RFC 8259) out, whatever names a model
 * or an application gave its values and ops. The same rule as odlac's report
 * (codegen/Report.cpp's jsonString, compiler/support/Text.h): `"` and `\` escaped, characters
 * that are not showable (C0 and C1 controls, DEL, the formatting and direction characters) as
 * \uXXXX, and each byte of invalid UTF-8 (stray continuation bytes, overlong forms,
 * surrogates, truncated sequences, code points past U+10FFFF) as U+FFFD. Header-only: each
 * backend is a library of its own and shares no objects with the other. */
#ifndef ODLA_JSON_STRING_H
#define ODLA_JSON_STRING_H

#include <stdint.h>
#include <stdio.h>

/* The code point of the UTF-8 sequence at `s`, its length in *len; -1 (with *len 1) for a
 * byte that starts no valid sequence. */
static int32_t odla_json_decode_utf8(const unsigned char *s, int *len) {
  static const int32_t least[] = {0, 0, 0x80, 0x800, 0x10000}; /* below: an overlong form */
  int n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
  int32_t cp;
  int i;
  *len = 1;
  if (s[0] < 0x80)
    return s[0];
  if (n == 0 || s[0] > 0xf4)
    return -1;
  cp = s[0] & (0x7f >> n);
  for (i = 1; i < n; ++i) { /* stops at the terminating NUL, which is no continuation byte */
    if ((s[i] & 0xc0) != 0x80)
      return -1;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return -1;
  *len = n;
  return cp;
}

static int odla_json_showable(int32_t cp) {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
    return 0;
  return !((cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
           (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff);
}

/* Writes `s` (NUL-terminated; NULL writes "") as a JSON string. */
static void odla_json_string(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  fputc('"', f);
  while (*p) {
    int len;
    int32_t cp = odla_json_decode_utf8(p, &len);
    if (cp == '"' || cp == '\\')
      fprintf(f, "\\%c", (int)cp);
    else if (cp < 0)
      fputs("\\ufffd", f);
    else if (!odla_json_showable(cp))
      fprintf(f, "\\u%04x", (unsigned)cp);
    else
      fwrite(p, 1, (size_t)len, f);
    p += len;
  }
  fputc('"', f);
}

#endif
