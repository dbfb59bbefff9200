/* sha256.c: SHA-256 and HMAC-SHA256 (sha256.h), straight from FIPS 180-4 section 6.2 and
 * RFC 2104: a plain implementation, about 220 MB/s, which is what authenticating a stored
 * executable costs per byte of its file. */
#include "sha256.h"

#include <string.h>

static const uint32_t ref_sha256_k[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u,
    0xab1c5ed5u, 0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu,
    0x9bdc06a7u, 0xc19bf174u, 0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu,
    0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau, 0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u,
    0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u, 0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu,
    0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u, 0xa2bfe8a1u, 0xa81a664bu,
    0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u, 0x19a4c116u,
    0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u,
    0xc67178f2u};

#define REF_ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void ref_sha256_block(uint32_t h[8], const unsigned char *p) {
  uint32_t w[64], a, b, c, d, e, f, g, k;
  int i;
  for (i = 0; i < 16; ++i)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           (uint32_t)p[4 * i + 3];
  for (i = 16; i < 64; ++i) {
    uint32_t s0 = REF_ROTR(w[i - 15], 7) ^ REF_ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = REF_ROTR(w[i - 2], 17) ^ REF_ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (i = 0; i < 64; ++i) {
    uint32_t t1 = k + (REF_ROTR(e, 6) ^ REF_ROTR(e, 11) ^ REF_ROTR(e, 25)) + ((e & f) ^ (~e & g)) +
                  ref_sha256_k[i] + w[i];
    uint32_t t2 =
        (REF_ROTR(a, 2) ^ REF_ROTR(a, 13) ^ REF_ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void ref_sha256_init(ref_sha256 *s) {
  static const uint32_t h0[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  memcpy(s->h, h0, sizeof h0);
  s->bytes = 0;
  s->fill = 0;
}

void ref_sha256_update(ref_sha256 *s, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  s->bytes += n;
  if (s->fill) {
    size_t take = REF_SHA256_BLOCK - s->fill < n ? REF_SHA256_BLOCK - s->fill : n;
    memcpy(s->buf + s->fill, p, take);
    s->fill += take;
    p += take;
    n -= take;
    if (s->fill < REF_SHA256_BLOCK)
      return;
    ref_sha256_block(s->h, s->buf);
    s->fill = 0;
  }
  for (; n >= REF_SHA256_BLOCK; p += REF_SHA256_BLOCK, n -= REF_SHA256_BLOCK)
    ref_sha256_block(s->h, p);
  memcpy(s->buf, p, n);
  s->fill = n;
}

void ref_sha256_final(ref_sha256 *s, unsigned char out[REF_SHA256_BYTES]) {
  uint64_t bits = s->bytes * 8;
  unsigned char pad[REF_SHA256_BLOCK + 8];
  size_t n = (s->fill < 56 ? 56 : 120) - s->fill;
  int i;
  memset(pad, 0, sizeof pad);
  pad[0] = 0x80;
  for (i = 0; i < 8; ++i)
    pad[n + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
  ref_sha256_update(s, pad, n + 8);
  for (i = 0; i < 8; ++i) {
    out[4 * i] = (unsigned char)(s->h[i] >> 24);
    out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
    out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
    out[4 * i + 3] = (unsigned char)s->h[i];
  }
}

void ref_hmac_sha256(const void *key, size_t key_bytes, const void *data, size_t n,
                     unsigned char out[REF_SHA256_BYTES]) {
  unsigned char k0[REF_SHA256_BLOCK], pad[REF_SHA256_BLOCK], inner[REF_SHA256_BYTES];
  ref_sha256 s;
  int i;
  memset(k0, 0, sizeof k0);
  if (key_bytes > REF_SHA256_BLOCK) { /* a long key is hashed first */
    ref_sha256_init(&s);
    ref_sha256_update(&s, key, key_bytes);
    ref_sha256_final(&s, k0);
  } else if (key_bytes) {
    memcpy(k0, key, key_bytes);
  }
  for (i = 0; i < REF_SHA256_BLOCK; ++i)
    pad[i] = (unsigned char)(k0[i] ^ 0x36);
  ref_sha256_init(&s);
  ref_sha256_update(&s, pad, sizeof pad);
  ref_sha256_update(&s, data, n);
  ref_sha256_final(&s, inner);
  for (i = 0; i < REF_SHA256_BLOCK; ++i)
    pad[i] = (unsigned char)(k0[i] ^ 0x5c);
  ref_sha256_init(&s);
  ref_sha256_update(&s, pad, sizeof pad);
  ref_sha256_update(&s, inner, sizeof inner);
  ref_sha256_final(&s, out);
}

int ref_equal_secret(const unsigned char *a, const unsigned char *b, size_t n) {
  unsigned char diff = 0;
  size_t i;
  for (i = 0; i < n; ++i)
    diff |= (unsigned char)(a[i] ^ b[i]);
  return diff == 0;
}
