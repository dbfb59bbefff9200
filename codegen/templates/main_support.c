/* Support code for generated test drivers (main.c): reading and writing ONNX TensorProto
 * files, timing, and paths. odlac copies this file into every main.c it writes; it is also
 * compiled on its own by the test suite. C99 plus POSIX clock_gettime and readlink. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/stat.h>
#include <unistd.h>
#endif

#define ODLAC_MAX_RANK 16

/* Not every driver uses every helper. */
#if defined(__GNUC__)
#define ODLAC_HELPER static __attribute__((unused))
#else
#define ODLAC_HELPER static
#endif

typedef struct {
  int32_t data_type; /* an ONNX TensorProto.DataType */
  int rank;
  int64_t dims[ODLAC_MAX_RANK];
  char name[256];
  unsigned char *data; /* little-endian elements, row-major */
  size_t bytes;
} odlac_tensor;

/* Element size of an ONNX data type in memory; 0 for types test drivers cannot hold (string,
 * complex, the 6-bit floats). The 8-bit floats and the 4- and 2-bit types take one byte each
 * (ODLA/ext/odla_ext_types.h); files pack the 4- and 2-bit ones (odlac_bits). */
ODLAC_HELPER size_t odlac_elem_size(int32_t t) {
  switch (t) {
  case 1: case 6: case 12: return 4;   /* float, int32, uint32 */
  case 2: case 3: case 9: return 1;    /* uint8, int8, bool */
  case 4: case 5: case 10: case 16: return 2; /* uint16, int16, float16, bfloat16 */
  case 7: case 11: case 13: return 8;  /* int64, double, uint64 */
  case 17: case 18: case 19: case 20: case 24: return 1; /* the 8-bit floats */
  case 21: case 22: case 23: case 25: case 26: return 1; /* uint4, int4, float4e2m1, uint2, int2 */
  default: return 0;
  }
}

/* Bits of one element in a file: 4 or 2 for the types ONNX packs, else 8 * size. */
ODLAC_HELPER unsigned odlac_bits(int32_t t) {
  return t == 21 || t == 22 || t == 23 ? 4 : t == 25 || t == 26 ? 2 : 8 * (unsigned)odlac_elem_size(t);
}

/* Packs n one-byte elements of `bits` bits into out, the first in the lowest bits (ONNX's
 * layout); unpacks the other way, sign-extending the signed types (int4, int2). */
ODLAC_HELPER void odlac_pack(const unsigned char *in, size_t n, unsigned bits, unsigned char *out) {
  size_t i, per = 8 / bits;
  memset(out, 0, (n + per - 1) / per);
  for (i = 0; i < n; ++i)
    out[i / per] |= (unsigned char)((in[i] & ((1u << bits) - 1)) << (bits * (i % per)));
}
ODLAC_HELPER void odlac_unpack(const unsigned char *in, size_t n, int32_t t, unsigned char *out) {
  unsigned bits = odlac_bits(t), mask = (1u << bits) - 1;
  size_t i, per = 8 / bits;
  for (i = 0; i < n; ++i) {
    unsigned v = (in[i / per] >> (bits * (i % per))) & mask;
    if ((t == 22 || t == 26) && (v >> (bits - 1)))
      v |= ~mask;
    out[i] = (unsigned char)v;
  }
}

ODLAC_HELPER int64_t odlac_count(const odlac_tensor *t) {
  int64_t n = 1;
  int i;
  for (i = 0; i < t->rank; ++i)
    n *= t->dims[i];
  return n;
}

ODLAC_HELPER unsigned char *odlac_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  long len;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    buf = (unsigned char *)malloc(len > 0 ? (size_t)len : 1);
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
      free(buf);
      buf = NULL;
    }
    *size = (size_t)len;
  }
  fclose(f);
  return buf;
}

/* Protobuf wire format: varints and length-delimited fields are all TensorProto needs. */
ODLAC_HELPER int odlac_varint(const unsigned char **p, const unsigned char *end, uint64_t *v) {
  int shift = 0;
  *v = 0;
  while (*p < end && shift < 64) {
    unsigned char b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return 1;
    shift += 7;
  }
  return 0;
}

/* Stores element i of a typed (non-raw) field, converted to the tensor's storage. */
ODLAC_HELPER void odlac_store(odlac_tensor *t, size_t i, uint64_t bits, int is_float32, int is_float64) {
  size_t es = odlac_elem_size(t->data_type);
  unsigned char *dst = t->data + i * es;
  if (is_float32 || is_float64) {
    memcpy(dst, &bits, es); /* float_data holds floats, double_data doubles: same width */
    return;
  }
  switch (es) {
  case 1: { uint8_t v = (uint8_t)bits; memcpy(dst, &v, 1); break; }
  case 2: { uint16_t v = (uint16_t)bits; memcpy(dst, &v, 2); break; }
  case 4: { uint32_t v = (uint32_t)bits; memcpy(dst, &v, 4); break; }
  default: memcpy(dst, &bits, 8); break;
  }
}

/* An int32_data entry of a 4- or 2-bit type holds 8 / bits elements in its low byte. */
ODLAC_HELPER void odlac_store_packed(odlac_tensor *t, size_t *typed, size_t cap, uint64_t v) {
  unsigned char low = (unsigned char)v, out[4];
  size_t k, per = 8 / odlac_bits(t->data_type);
  odlac_unpack(&low, per, t->data_type, out);
  for (k = 0; k < per && *typed < cap; ++k)
    t->data[(*typed)++] = out[k];
}

/* Parses a serialized TensorProto. Returns 0 on success, else prints why and returns -1. */
ODLAC_HELPER int odlac_parse_tensor(const unsigned char *p, size_t size, odlac_tensor *t,
                              const char *path) {
  const unsigned char *end = p + size, *raw = NULL;
  size_t raw_len = 0, typed = 0, cap = 0;
  int pass;
  memset(t, 0, sizeof *t);
  /* Pass 0 reads dims, type, name and raw data; pass 1 decodes typed fields. */
  for (pass = 0; pass < 2; ++pass) {
    const unsigned char *q = p;
    if (pass == 1) {
      size_t es = odlac_elem_size(t->data_type);
      if (es == 0) {
        fprintf(stderr, "%s: element type %d is not supported by this driver\n", path,
                (int)t->data_type);
        return -1;
      }
      cap = (size_t)odlac_count(t);
      t->bytes = cap * es;
      t->data = (unsigned char *)calloc(t->bytes ? t->bytes : 1, 1);
      if (!t->data)
        return -1;
      if (raw) {
        unsigned bits = odlac_bits(t->data_type);
        size_t want = bits < 8 ? (cap * bits + 7) / 8 : t->bytes;
        if (raw_len != want) {
          fprintf(stderr, "%s: raw_data has %lu bytes, dims need %lu\n", path,
                  (unsigned long)raw_len, (unsigned long)want);
          return -1;
        }
        if (bits < 8)
          odlac_unpack(raw, cap, t->data_type, t->data);
        else
          memcpy(t->data, raw, raw_len);
        return 0;
      }

    }
    while (q < end) {
      uint64_t key, v;
      int field, wire;
      if (!odlac_varint(&q, end, &key))
        goto bad;
      field = (int)(key >> 3);
      wire = (int)(key & 7);
      if (wire == 0) { /* varint */
        if (!odlac_varint(&q, end, &v))
          goto bad;
        if (pass == 0 && field == 1 && t->rank < ODLAC_MAX_RANK)
          t->dims[t->rank++] = (int64_t)v;
        else if (pass == 0 && field == 2)
          t->data_type = (int32_t)v;
        else if (pass == 0 && field == 14 && v == 1) {
          fprintf(stderr, "%s: external data is not supported by this driver\n", path);
          return -1;
        } else if (pass == 1 && field == 5 && odlac_bits(t->data_type) < 8)
          odlac_store_packed(t, &typed, cap, v);
        else if (pass == 1 && (field == 5 || field == 7 || field == 11) && typed < cap)
          odlac_store(t, typed++, v, 0, 0);
      } else if (wire == 1 || wire == 5) { /* fixed64 / fixed32 */
        size_t n = wire == 1 ? 8 : 4;
        if ((size_t)(end - q) < n)
          goto bad;
        if (pass == 1 && (field == 4 || field == 10) && typed < cap) {
          v = 0;
          memcpy(&v, q, n);
          odlac_store(t, typed++, v, field == 4, field == 10);
        }
        q += n;
      } else if (wire == 2) { /* length-delimited */
        const unsigned char *s;
        if (!odlac_varint(&q, end, &v) || v > (uint64_t)(end - q))
          goto bad;
        s = q;
        q += v;
        if (pass == 0 && field == 1) { /* packed dims */
          while (s < q && t->rank < ODLAC_MAX_RANK) {
            uint64_t d;
            if (!odlac_varint(&s, q, &d))
              goto bad;
            t->dims[t->rank++] = (int64_t)d;
          }
        } else if (pass == 0 && field == 8) {
          size_t n = v < sizeof t->name - 1 ? (size_t)v : sizeof t->name - 1;
          memcpy(t->name, s, n);
          t->name[n] = 0;
        } else if (pass == 0 && field == 9) {
          raw = s;
          raw_len = (size_t)v;
        } else if (pass == 1 && (field == 5 || field == 7 || field == 11)) {
          while (s < q && typed < cap) {
            uint64_t e;
            if (!odlac_varint(&s, q, &e))
              goto bad;
            if (field == 5 && odlac_bits(t->data_type) < 8)
              odlac_store_packed(t, &typed, cap, e);
            else
              odlac_store(t, typed++, e, 0, 0);
          }
        } else if (pass == 1 && (field == 4 || field == 10)) {
          size_t n = field == 4 ? 4 : 8;
          while (s + n <= q && typed < cap) {
            uint64_t e = 0;
            memcpy(&e, s, n);
            odlac_store(t, typed++, e, field == 4, field == 10);
            s += n;
          }
        } else if (pass == 0 && field == 6) {
          fprintf(stderr, "%s: string tensors are not supported by this driver\n", path);
          return -1;
        }
      } else {
        goto bad;
      }
    }
  }
  if (typed != cap) {
    fprintf(stderr, "%s: holds %lu elements, dims need %lu\n", path, (unsigned long)typed,
            (unsigned long)cap);
    return -1;
  }
  return 0;
bad:
  fprintf(stderr, "%s: not a valid TensorProto\n", path);
  return -1;
}

ODLAC_HELPER int odlac_load_tensor(const char *path, odlac_tensor *t) {
  size_t size = 0;
  unsigned char *buf = odlac_read_file(path, &size);
  int rc;
  if (!buf) {
    fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
    return -1;
  }
  rc = odlac_parse_tensor(buf, size, t, path);
  free(buf);
  return rc;
}

ODLAC_HELPER void odlac_put_varint(FILE *f, uint64_t v) {
  do {
    unsigned char b = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v)
      b |= 0x80;
    fputc(b, f);
  } while (v);
}

/* Writes a TensorProto with dims, data_type, name and raw_data (`bytes` of data, one byte per
 * element for the types ONNX packs, which are packed here). */
ODLAC_HELPER int odlac_save_tensor(const char *path, const char *name, int32_t data_type, int rank,
                             const int64_t *dims, const void *data, size_t bytes) {
  FILE *f = fopen(path, "wb");
  unsigned bits = odlac_bits(data_type);
  unsigned char *packed = NULL;
  int i;
  if (f && bits < 8) {
    packed = (unsigned char *)malloc(bytes ? bytes : 1);
    if (!packed) {
      fclose(f);
      fprintf(stderr, "%s: out of memory\n", path);
      return -1;
    }
    odlac_pack((const unsigned char *)data, bytes, bits, packed);
    data = packed;
    bytes = (bytes * bits + 7) / 8;
  }
  if (!f) {
    fprintf(stderr, "%s: cannot write: %s\n", path, strerror(errno));
    return -1;
  }
  for (i = 0; i < rank; ++i) {
    odlac_put_varint(f, (1 << 3) | 0);
    odlac_put_varint(f, (uint64_t)dims[i]);
  }
  odlac_put_varint(f, (2 << 3) | 0);
  odlac_put_varint(f, (uint64_t)data_type);
  odlac_put_varint(f, (8 << 3) | 2);
  odlac_put_varint(f, strlen(name));
  fwrite(name, 1, strlen(name), f);
  odlac_put_varint(f, (9 << 3) | 2);
  odlac_put_varint(f, bytes);
  if (bytes)
    fwrite(data, 1, bytes, f);
  free(packed);
  if (fclose(f) != 0) {
    fprintf(stderr, "%s: write failed\n", path);
    return -1;
  }
  return 0;
}

ODLAC_HELPER double odlac_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

ODLAC_HELPER int odlac_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The folder holding this executable, for finding files installed beside it. */
ODLAC_HELPER void odlac_exe_dir(const char *argv0, char *dir, size_t cap) {
  char *slash;
  dir[0] = 0;
#if defined(__linux__)
  {
    ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
    if (n > 0)
      dir[n] = 0;
  }
#endif
  if (!dir[0]) {
    strncpy(dir, argv0, cap - 1);
    dir[cap - 1] = 0;
  }
  slash = strrchr(dir, '/');
  if (slash)
    *slash = 0;
  else
    strcpy(dir, ".");
}

/* Creates `dir` if it does not exist; returns 0 when it exists afterwards. */
ODLAC_HELPER int odlac_make_dir(const char *dir) {
#if defined(__unix__) || defined(__APPLE__)
  struct stat st;
  if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
    return 0;
  if (mkdir(dir, 0777) == 0)
    return 0;
#endif
  fprintf(stderr, "%s: cannot create the output folder: %s\n", dir, strerror(errno));
  return -1;
}

/* Checks a loaded input against the model's declared type and shape. */
ODLAC_HELPER int odlac_check_input(const odlac_tensor *t, const char *path, const char *name,
                             int32_t data_type, int rank, const int64_t *dims) {
  int i, same = t->data_type == data_type && t->rank == rank;
  for (i = 0; same && i < rank; ++i)
    same = t->dims[i] == dims[i];
  if (same)
    return 0;
  fprintf(stderr, "%s: input '%s' must have ONNX type %d and shape [", path, name, (int)data_type);
  for (i = 0; i < rank; ++i)
    fprintf(stderr, "%s%lld", i ? "," : "", (long long)dims[i]);
  fprintf(stderr, "], the file holds type %d and shape [", (int)t->data_type);
  for (i = 0; i < t->rank; ++i)
    fprintf(stderr, "%s%lld", i ? "," : "", (long long)t->dims[i]);
  fprintf(stderr, "]\n");
  return -1;
}
