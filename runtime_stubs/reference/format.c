/* format.c: the backend's message formatting (ref.h's ref_snprintf and ref_vsnprintf): the C
 * library's vsnprintf, or, built with ODLA_REFERENCE_NO_STDIO, a formatter of its own for the
 * conversions its messages use, so that a firmware links no stdio (newlib's vsnprintf and
 * what it pulls in are about 40 KB of flash). Conversions: %d %i %u %x %c %s %p %g %f %%, with
 * the l and ll lengths, a precision (%.64s, %.9g, %.0f) and no flags or widths. */
#include "ref.h"

#include <stdarg.h>

#ifndef ODLA_REFERENCE_NO_STDIO
#include <stdio.h>

int ref_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap) {
  return vsnprintf(buf, cap, fmt, ap);
}

#else
#include <math.h>
#include <string.h>

typedef struct {
  char *buf;
  size_t cap, len; /* len counts what would be written without the cap */
} ref_out;

static void ref_out_c(ref_out *o, char c) {
  if (o->len + 1 < o->cap)
    o->buf[o->len] = c;
  ++o->len;
}

static void ref_out_s(ref_out *o, const char *s, size_t n) {
  size_t i;
  for (i = 0; i < n && s[i]; ++i)
    ref_out_c(o, s[i]);
}

static void ref_out_u(ref_out *o, unsigned long long v, unsigned base) {
  char d[24];
  int n = 0;
  do {
    d[n++] = "0123456789abcdef"[v % base];
    v /= base;
  } while (v);
  while (n)
    ref_out_c(o, d[--n]);
}

static void ref_out_i(ref_out *o, long long v) {
  if (v < 0) {
    ref_out_c(o, '-');
    ref_out_u(o, 0ull - (unsigned long long)v, 10);
  } else {
    ref_out_u(o, (unsigned long long)v, 10);
  }
}

/* `digits` (prec significant digits of |x|, x = digits * 10^(exp - prec + 1)) as %g does:
 * exponent form below 1e-4 and from 10^prec, trailing zeros removed. */
static void ref_out_g(ref_out *o, unsigned long long digits, int exp, int prec) {
  char d[24];
  int n = 0, i, last;
  for (i = 0; i < prec; ++i, digits /= 10)
    d[prec - 1 - i] = (char)('0' + digits % 10);
  n = prec;
  for (last = n - 1; last > 0 && d[last] == '0'; --last) {
  }
  if (exp < -4 || exp >= prec) {
    ref_out_c(o, d[0]);
    if (last > 0) {
      ref_out_c(o, '.');
      for (i = 1; i <= last; ++i)
        ref_out_c(o, d[i]);
    }
    ref_out_c(o, 'e');
    ref_out_c(o, exp < 0 ? '-' : '+');
    if (exp > -10 && exp < 10)
      ref_out_c(o, '0');
    ref_out_u(o, (unsigned long long)(exp < 0 ? -exp : exp), 10);
  } else if (exp < 0) {
    ref_out_s(o, "0.", 2);
    for (i = exp + 1; i < 0; ++i)
      ref_out_c(o, '0');
    for (i = 0; i <= last; ++i)
      ref_out_c(o, d[i]);
  } else {
    for (i = 0; i <= exp; ++i)
      ref_out_c(o, d[i]);
    if (last > exp) {
      ref_out_c(o, '.');
      for (i = exp + 1; i <= last; ++i)
        ref_out_c(o, d[i]);
    }
  }
}

static void ref_out_double(ref_out *o, double x, int prec, char conv) {
  int exp;
  double scaled;
  unsigned long long digits, limit = 1;
  if (x != x) {
    ref_out_s(o, "nan", 3);
    return;
  }
  if (signbit(x)) {
    ref_out_c(o, '-');
    x = -x;
  }
  if (isinf(x)) {
    ref_out_s(o, "inf", 3);
    return;
  }
  if (conv == 'f' && x < 9.2e18) { /* only %.0f is used; larger values as %g */
    double whole = floor(x), part = x - whole;
    unsigned long long u = (unsigned long long)whole;
    ref_out_u(o, u + (part > 0.5 || (part == 0.5 && (u & 1))), 10); /* half to even */
    return;
  }
  if (prec <= 0)
    prec = 1;
  if (prec > 17)
    prec = 17;
  if (x == 0) {
    ref_out_c(o, '0');
    return;
  }
  for (exp = 0; exp < prec; ++exp)
    limit *= 10;
  exp = (int)floor(log10(x));
  scaled = x * pow(10.0, prec - 1 - exp);
  digits = (unsigned long long)(scaled + 0.5);
  if (digits >= limit) {
    ++exp;
    digits = (unsigned long long)(x * pow(10.0, prec - 1 - exp) + 0.5);
  }
  ref_out_g(o, digits, exp, prec);
}

int ref_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap) {
  ref_out o;
  o.buf = buf;
  o.cap = cap;
  o.len = 0;
  while (*fmt) {
    int prec = -1, longs = 0;
    char c = *fmt++;
    if (c != '%') {
      ref_out_c(&o, c);
      continue;
    }
    if (*fmt == '.') {
      prec = 0;
      for (++fmt; *fmt >= '0' && *fmt <= '9'; ++fmt)
        prec = prec * 10 + (*fmt - '0');
    }
    while (*fmt == 'l') {
      ++longs;
      ++fmt;
    }
    switch (c = *fmt++) {
    case 'd':
    case 'i':
      ref_out_i(&o, longs >= 2 ? va_arg(ap, long long)
                    : longs    ? (long long)va_arg(ap, long)
                               : (long long)va_arg(ap, int));
      break;
    case 'u':
    case 'x':
      ref_out_u(&o,
                longs >= 2 ? va_arg(ap, unsigned long long)
                : longs    ? (unsigned long long)va_arg(ap, unsigned long)
                           : (unsigned long long)va_arg(ap, unsigned),
                c == 'x' ? 16 : 10);
      break;
    case 'c':
      ref_out_c(&o, (char)va_arg(ap, int));
      break;
    case 's': {
      const char *s = va_arg(ap, const char *);
      if (!s)
        s = "(null)";
      ref_out_s(&o, s, prec < 0 ? (size_t)-1 : (size_t)prec);
      break;
    }
    case 'p':
      ref_out_s(&o, "0x", 2);
      ref_out_u(&o, (unsigned long long)(uintptr_t)va_arg(ap, void *), 16);
      break;
    case 'g':
    case 'f':
      ref_out_double(&o, va_arg(ap, double), prec < 0 ? 6 : prec, c);
      break;
    case '%':
      ref_out_c(&o, '%');
      break;
    default: /* not one of the backend's: shown as written */
      ref_out_c(&o, '%');
      if (!c)
        --fmt;
      else
        ref_out_c(&o, c);
    }
  }
  if (cap)
    buf[o.len < cap ? o.len : cap - 1] = 0;
  return (int)o.len;
}
#endif /* ODLA_REFERENCE_NO_STDIO */

int ref_snprintf(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = ref_vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
  return n;
}
