/* sha256.h: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) in portable C99, for the keyed
 * authentication of stored executables, computations and constants arrays
 * (executable_io.c). Checked against the FIPS 180-4 and RFC 4231 test vectors
 * (tests/unit/Sha256Test.cpp). */
#ifndef ODLA_REFERENCE_SHA256_H_
#define ODLA_REFERENCE_SHA256_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REF_SHA256_BYTES 32
#define REF_SHA256_BLOCK 64

typedef struct {
  uint32_t h[8];
  uint64_t bytes; /* hashed so far */
  unsigned char buf[REF_SHA256_BLOCK];
  size_t fill; /* bytes in buf */
} ref_sha256;

void ref_sha256_init(ref_sha256 *s);
void ref_sha256_update(ref_sha256 *s, const void *data, size_t n);
void ref_sha256_final(ref_sha256 *s, unsigned char out[REF_SHA256_BYTES]);

/* HMAC-SHA256 of `n` bytes at `data` under a key of any length. */
void ref_hmac_sha256(const void *key, size_t key_bytes, const void *data, size_t n,
                     unsigned char out[REF_SHA256_BYTES]);

/* Whether a and b hold the same n bytes, in time that does not depend on where they differ. */
int ref_equal_secret(const unsigned char *a, const unsigned char *b, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* ODLA_REFERENCE_SHA256_H_ */
