/* Support code for generated test drivers (main.c): reading and writing ONNX TensorProto
 * files, timing, and paths. odlac copies this file into every main.c it writes; it is also
 * compiled on its own by the test suite. C99 plus POSIX clock_gettime, open, fstat and readlink.
 * Input files come from anyone: every field the driver reads is checked (wire types, the
 * data field the element type keeps its values in, element counts against the dims, value
 * ranges, sizes without overflow) before the data is trusted, and a bad file gets a message
 * naming the file and exit status 1, never a crash. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#define ODLAC_MAX_RANK 16
#define ODLAC_MAX_REPEAT 10000000L /* --repeat: the timings are kept, 8 bytes a run */

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

/* Element size of an ONNX data type in memory; 0 for types test drivers cannot hold (complex,
 * the 6-bit floats). The 8-bit floats and the 4- and 2-bit types take one byte each
 * (ODLA/ext/odla_ext_types.h); files pack the 4- and 2-bit ones (odlac_bits). */
ODLAC_HELPER size_t odlac_elem_size(int32_t t) {
  switch (t) {
  case 1:
  case 6:
  case 12:
    return 4; /* float, int32, uint32 */
  case 2:
  case 3:
  case 9:
    return 1; /* uint8, int8, bool */
  case 4:
  case 5:
  case 10:
  case 16:
    return 2; /* uint16, int16, float16, bfloat16 */
  case 7:
  case 11:
  case 13:
    return 8; /* int64, double, uint64 */
  case 17:
  case 18:
  case 19:
  case 20:
  case 24:
    return 1; /* the 8-bit floats */
  case 21:
  case 22:
  case 23:
  case 25:
  case 26:
    return 1; /* uint4, int4, float4e2m1, uint2, int2 */
  case 8:
    return sizeof(const char *); /* string: one pointer per element (odlac_parse_strings) */
  default:
    return 0;
  }
}

/* Bits of one element in a file: 4 or 2 for the types ONNX packs, else 8 * size. */
ODLAC_HELPER unsigned odlac_bits(int32_t t) {
  return t == 21 || t == 22 || t == 23 ? 4
         : t == 25 || t == 26          ? 2
                                       : 8 * (unsigned)odlac_elem_size(t);
}

/* Bytes (raw_data) or int32_data entries (one byte each) that hold n elements of type t. */
ODLAC_HELPER size_t odlac_file_units(int32_t t, size_t n) {
  unsigned bits = odlac_bits(t);
  /* n * bits is not formed: it may wrap for the element counts of a hostile file's dims */
  return bits < 8 ? n / 8 * bits + (n % 8 * bits + 7) / 8 : n;
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

/* The TensorProto field that holds a type's elements when raw_data does not (onnx.proto):
 * 4 float_data, 5 int32_data (also the 8- and 16-bit types, float16 and bfloat16 as their
 * bits, the 8-bit floats and the packed 4- and 2-bit types), 7 int64_data, 10 double_data,
 * 11 uint64_data (uint32, uint64). */
ODLAC_HELPER int odlac_typed_field(int32_t t) {
  switch (t) {
  case 1:
    return 4;
  case 2:
  case 3:
  case 4:
  case 5:
  case 6:
  case 9:
  case 10:
  case 16:
    return 5;
  case 17:
  case 18:
  case 19:
  case 20:
  case 21:
  case 22:
  case 23:
  case 24:
  case 25:
  case 26:
    return 5; /* one 8-bit float, or one byte of packed 4- or 2-bit ones, per entry */
  case 7:
    return 7;
  case 11:
    return 10;
  case 12:
  case 13:
    return 11;
  default:
    return 0;
  }
}

ODLAC_HELPER const char *odlac_field_name(int field) {
  switch (field) {
  case 4:
    return "float_data";
  case 5:
    return "int32_data";
  case 7:
    return "int64_data";
  case 10:
    return "double_data";
  default:
    return "uint64_data";
  }
}

/* The range int32_data values of a type must lie in (after protobuf's int32 truncation). */
ODLAC_HELPER void odlac_int32_range(int32_t t, int64_t *lo, int64_t *hi) {
  switch (t) {
  case 2:
  case 17:
  case 18:
  case 19:
  case 20:
  case 21:
  case 22:
  case 23:
  case 24:
  case 25:
  case 26:
    *lo = 0;
    *hi = 255;
    break;
  case 3:
    *lo = -128;
    *hi = 127;
    break;
  case 9:
    *lo = 0;
    *hi = 1;
    break;
  case 5:
    *lo = -32768;
    *hi = 32767;
    break;
  case 4:
  case 10:
  case 16:
    *lo = 0;
    *hi = 65535;
    break;
  default:
    *lo = INT32_MIN;
    *hi = INT32_MAX;
    break;
  }
}

/* Prints model text (a tensor name) with control characters as \xHH. */
ODLAC_HELPER void odlac_print_text(FILE *f, const char *s) {
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == 0x7f)
      fprintf(f, "\\x%02x", c);
    else
      fputc(c, f);
  }
}

ODLAC_HELPER void odlac_print_dims(FILE *f, int rank, const int64_t *dims) {
  int i;
  fputc('[', f);
  for (i = 0; i < rank; ++i)
    fprintf(f, "%s%lld", i ? "," : "", (long long)dims[i]);
  fputc(']', f);
}

/* The element count of the dims, or -1 when count * elem_size bytes would not fit a size_t
 * and an int64_t (the reader forms that product in both). */
ODLAC_HELPER int64_t odlac_count(const odlac_tensor *t, size_t elem_size) {
  uint64_t n = 1, limit = (uint64_t)SIZE_MAX < (uint64_t)INT64_MAX ? (uint64_t)SIZE_MAX
                                                                   : (uint64_t)INT64_MAX;
  int i;
  limit /= elem_size ? elem_size : 1;
  for (i = 0; i < t->rank; ++i) {
    uint64_t d = (uint64_t)t->dims[i];
    if (d != 0 && n > limit / d)
      return -1;
    n *= d;
  }
  return (int64_t)n;
}

/* Reads a whole regular file (a folder, a FIFO or a device is refused: what they hold is no
 * input file), growing the buffer as it reads rather than trusting a size. Prints why and
 * returns NULL on failure. */
ODLAC_HELPER unsigned char *odlac_read_file(const char *path, size_t *size) {
  FILE *f;
  unsigned char *buf = NULL;
  size_t n = 0, cap = 0, got;
#if defined(__unix__) || defined(__APPLE__)
  struct stat st;
  int fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO must not block the open */
  if (fd < 0) {
    fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
    return NULL;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    fprintf(stderr, "%s: not a regular file\n", path);
    close(fd);
    return NULL;
  }
  if (!(f = fdopen(fd, "rb")))
    close(fd);
#else
  f = fopen(path, "rb");
#endif
  if (!f) {
    fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
    return NULL;
  }
  do {
    if (n == cap) {
      unsigned char *grown =
          cap <= SIZE_MAX / 2 ? (unsigned char *)realloc(buf, cap ? cap * 2 : 65536) : NULL;
      if (!grown) {
        fprintf(stderr, "%s: cannot allocate memory to read it (%lu bytes read)\n", path,
                (unsigned long)n);
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = grown;
      cap = cap ? cap * 2 : 65536;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  if (ferror(f)) {
    fprintf(stderr, "%s: read failed: %s\n", path, strerror(errno));
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *size = n;
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

/* Counts the varints in [p, end); -1 if one is malformed. */
ODLAC_HELPER int64_t odlac_count_varints(const unsigned char *p, const unsigned char *end) {
  int64_t n = 0;
  uint64_t v;
  while (p < end) {
    if (!odlac_varint(&p, end, &v))
      return -1;
    ++n;
  }
  return n;
}

/* Element i of a typed field, as the tensor's little-endian storage. */
ODLAC_HELPER int odlac_store(odlac_tensor *t, int field, size_t i, uint64_t bits,
                             const char *path) {
  size_t es = odlac_elem_size(t->data_type);
  unsigned char *dst = t->data + i * es;
  int k;
  if (field == 5) { /* int32: protobuf keeps the low 32 bits, sign-extended */
    int64_t lo, hi, v = (int32_t)(uint32_t)(bits & 0xffffffffu);
    odlac_int32_range(t->data_type, &lo, &hi);
    if (v < lo || v > hi) {
      fprintf(stderr, "%s: int32_data[%lu] = %lld does not fit ONNX type %d\n", path,
              (unsigned long)i, (long long)v, (int)t->data_type);
      return -1;
    }
    bits = (uint64_t)v;
  } else if (field == 11 && es == 4 && bits > 0xffffffffu) {
    fprintf(stderr, "%s: uint64_data[%lu] = %llu does not fit uint32\n", path, (unsigned long)i,
            (unsigned long long)bits);
    return -1;
  }
  for (k = 0; k < (int)es; ++k)
    dst[k] = (unsigned char)(bits >> (8 * k));
  return 0;
}

/* A TensorProto field's wire type: each known field has one scalar wire type, and the
 * repeated numeric ones may also come packed (wire type 2). */
ODLAC_HELPER int odlac_wire_ok(int field, int wire) {
  switch (field) {
  case 1:
  case 5:
  case 7:
  case 11:
    return wire == 0 || wire == 2; /* dims, varint data */
  case 2:
  case 14:
    return wire == 0; /* data_type, data_location */
  case 4:
    return wire == 5 || wire == 2; /* float_data */
  case 10:
    return wire == 1 || wire == 2; /* double_data */
  case 3:
  case 6:
  case 8:
  case 9:
  case 12:
  case 13:
    return wire == 2;
  default:
    return 1;
  }
}

/* The elements of a packed 4- or 2-bit tensor whose sizes odlac_parse_tensor checked: from raw
 * (when not NULL) or from int32_data's entries, one packed byte each, into t->data. */
ODLAC_HELPER int odlac_parse_packed(odlac_tensor *t, const unsigned char *raw,
                                    const unsigned char *p, const unsigned char *end,
                                    const char *path) {
  size_t n = odlac_file_units(t->data_type, t->bytes), i = 0;
  unsigned char *bytes = (unsigned char *)malloc(n ? n : 1);
  const unsigned char *q;
  if (!bytes) {
    fprintf(stderr, "%s: cannot allocate %lu bytes\n", path, (unsigned long)n);
    free(t->data);
    t->data = NULL;
    return -1;
  }
  if (raw)
    memcpy(bytes, raw, n);
  for (q = p; !raw && q < end;) { /* int32_data (field 5): the framing was checked */
    uint64_t key, v = 0;
    const unsigned char *s;
    int wire;
    odlac_varint(&q, end, &key);
    wire = (int)(key & 7);
    if (wire == 1 || wire == 5) {
      q += wire == 1 ? 8 : 4;
      continue;
    }
    odlac_varint(&q, end, &v);
    s = q;
    if (wire == 2)
      q += v;
    if ((key >> 3) != 5)
      continue;
    while (wire == 0 || s < q) {
      uint64_t x = v;
      if (wire == 2)
        odlac_varint(&s, q, &x);
      if ((x & 0xffffffffu) > 255) { /* negative int32 values included */
        fprintf(stderr, "%s: int32_data[%lu] = %lld does not fit a packed byte (0 to 255)\n", path,
                (unsigned long)i, (long long)(int32_t)(uint32_t)(x & 0xffffffffu));
        free(bytes);
        free(t->data);
        t->data = NULL;
        return -1;
      }
      bytes[i++] = (unsigned char)x;
      if (wire == 0)
        break;
    }
  }
  odlac_unpack(bytes, t->bytes, t->data_type, t->data);
  free(bytes);
  return 0;
}

/* A string tensor's elements (string_data, field 6; onnx.proto keeps strings nowhere else):
 * t->data becomes one block holding `count` pointers and then the strings they point at, each
 * NUL-terminated, so that free(t->data) frees them all. A string holding a NUL byte is
 * refused: the model's API takes NUL-terminated strings (docs/generated-code.md). */
ODLAC_HELPER int odlac_parse_strings(const unsigned char *p, const unsigned char *end,
                                     odlac_tensor *t, const char *path, int64_t count,
                                     const int64_t *counts, int has_raw) {
  const unsigned char *q;
  size_t i, at;
  int f, pass;
  static const int kDataFields[5] = {4, 5, 7, 10, 11};
  for (f = 0; f < 5; ++f)
    if (counts[kDataFields[f]] != 0) {
      fprintf(stderr, "%s: a string tensor keeps its elements in string_data only, not in %s\n",
              path, odlac_field_name(kDataFields[f]));
      return -1;
    }
  if (has_raw) {
    fprintf(stderr,
            "%s: a string tensor keeps its elements in string_data only, not in "
            "raw_data\n",
            path);
    return -1;
  }
  if (counts[6] != count) {
    fprintf(stderr, "%s: string_data holds %lld strings, dims ", path, (long long)counts[6]);
    odlac_print_dims(stderr, t->rank, t->dims);
    fprintf(stderr, " need %lld\n", (long long)count);
    return -1;
  }
  t->bytes = (size_t)count * sizeof(const char *); /* count strings: fewer than the file's bytes */
  /* Pass 0 checks the strings and sizes them, pass 1 copies them; the framing was checked by
   * odlac_parse_tensor. */
  for (pass = 0; pass < 2; ++pass) {
    for (q = p, i = 0, at = t->bytes; q < end;) {
      uint64_t key, v = 0;
      odlac_varint(&q, end, &key);
      if ((key & 7) == 0) {
        odlac_varint(&q, end, &v);
        continue;
      }
      if ((key & 7) != 2) {
        q += (key & 7) == 1 ? 8 : 4;
        continue;
      }
      odlac_varint(&q, end, &v);
      if ((key >> 3) == 6 && pass == 0 && memchr(q, 0, (size_t)v)) {
        fprintf(stderr, "%s: string_data[%lu] holds a NUL byte\n", path, (unsigned long)i);
        return -1;
      } else if ((key >> 3) == 6 && pass == 1) {
        char *dst = (char *)t->data + at;
        memcpy(dst, q, (size_t)v);
        dst[v] = 0;
        ((const char **)(void *)t->data)[i] = dst;
      }
      if ((key >> 3) == 6) {
        at += (size_t)v + 1; /* bounded by the file's size */
        ++i;
      }
      q += v;
    }
    if (pass == 0) {
      t->data = (unsigned char *)malloc(at + 1);
      if (!t->data) {
        fprintf(stderr, "%s: cannot allocate %lu bytes\n", path, (unsigned long)at);
        return -1;
      }
    }
  }
  return 0;
}

/* Parses a serialized TensorProto. Returns 0 on success, else prints why and returns -1.
 * Pass 0 reads the dims, the type and where the data is, counting the elements of every
 * data field; only when those agree is the data allocated (never more than the file holds)
 * and pass 1 decodes it. */
ODLAC_HELPER int odlac_parse_tensor(const unsigned char *p, size_t size, odlac_tensor *t,
                                    const char *path) {
  const unsigned char *end = p + size, *q, *raw = NULL;
  size_t raw_len = 0, es;
  int64_t counts[12], count, units;
  int has_raw = 0, typed, f;
  memset(t, 0, sizeof *t);
  memset(counts, 0, sizeof counts);
  for (q = p; q < end;) {
    uint64_t key, v = 0, fieldno;
    const unsigned char *s = NULL;
    int field, wire;
    if (!odlac_varint(&q, end, &key))
      goto bad;
    fieldno = key >> 3;
    wire = (int)(key & 7);
    field = fieldno <= 16 ? (int)fieldno : 0; /* fields above 16 are unknown: skipped */
    if (wire == 0) {
      if (!odlac_varint(&q, end, &v))
        goto bad;
    } else if (wire == 1 || wire == 5) {
      size_t n = wire == 1 ? 8 : 4;
      if ((size_t)(end - q) < n)
        goto bad;
      q += n;
    } else if (wire == 2) {
      if (!odlac_varint(&q, end, &v) || v > (uint64_t)(end - q))
        goto bad;
      s = q;
      q += v;
    } else {
      goto bad;
    }
    if (!odlac_wire_ok(field, wire)) {
      fprintf(stderr, "%s: not a valid TensorProto: field %d has wire type %d\n", path, field,
              wire);
      return -1;
    }
    switch (field) {
    case 1: /* dims, one varint or packed */
      while (wire == 0 || s < q) {
        if (wire == 2 && !odlac_varint(&s, q, &v))
          goto bad;
        if (t->rank == ODLAC_MAX_RANK) {
          fprintf(stderr, "%s: more than %d dims\n", path, ODLAC_MAX_RANK);
          return -1;
        }
        if (v > (uint64_t)INT64_MAX) {
          fprintf(stderr, "%s: dim %d is negative (%lld)\n", path, t->rank, (long long)v);
          return -1;
        }
        t->dims[t->rank++] = (int64_t)v;
        if (wire == 0)
          break;
      }
      break;
    case 2:
      if (v > (uint64_t)INT32_MAX)
        goto bad;
      t->data_type = (int32_t)v;
      break;
    case 3:
      fprintf(stderr, "%s: tensor segments are not supported by this driver\n", path);
      return -1;
    case 4:
    case 10: { /* fixed-width floats */
      size_t width = field == 4 ? 4 : 8;
      if (wire == 2 && v % width != 0)
        goto bad;
      counts[field] += wire == 2 ? (int64_t)(v / width) : 1;
      break;
    }
    case 5:
    case 7:
    case 11:
      if (wire == 2) {
        int64_t n = odlac_count_varints(s, q);
        if (n < 0)
          goto bad;
        counts[field] += n;
      } else {
        ++counts[field];
      }
      break;
    case 6: /* string_data: one string per entry */
      ++counts[6];
      break;
    case 8: {
      size_t n = v < sizeof t->name - 1 ? (size_t)v : sizeof t->name - 1;
      memcpy(t->name, s, n);
      t->name[n] = 0;
      break;
    }
    case 9:
      raw = s;
      raw_len = (size_t)v;
      has_raw = 1;
      break;
    case 13:
      fprintf(stderr, "%s: external data is not supported by this driver\n", path);
      return -1;
    case 14:
      if (v != 0) {
        fprintf(stderr, "%s: external data is not supported by this driver\n", path);
        return -1;
      }
      break;
    default: /* doc_string and fields this driver does not know */
      break;
    }
  }
  es = odlac_elem_size(t->data_type);
  if (es == 0) {
    fprintf(stderr, "%s: element type %d is not supported by this driver\n", path,
            (int)t->data_type);
    return -1;
  }
  count = odlac_count(t, es);
  if (count < 0) {
    fprintf(stderr, "%s: dims ", path);
    odlac_print_dims(stderr, t->rank, t->dims);
    fprintf(stderr, " hold more elements than fit in memory\n");
    return -1;
  }
  if (t->data_type == 8)
    return odlac_parse_strings(p, end, t, path, count, counts, has_raw);
  if (counts[6] != 0) {
    fprintf(stderr, "%s: string_data holds %lld strings, but ONNX type %d is not string\n", path,
            (long long)counts[6], (int)t->data_type);
    return -1;
  }
  typed = odlac_typed_field(t->data_type);
  for (f = 0; f < 5; ++f) {
    static const int kDataFields[5] = {4, 5, 7, 10, 11};
    int other = kDataFields[f];
    if (other != typed && counts[other] != 0) {
      fprintf(stderr,
              "%s: %s holds %lld values, but ONNX type %d keeps its elements in %s or "
              "raw_data\n",
              path, odlac_field_name(other), (long long)counts[other], (int)t->data_type,
              odlac_field_name(typed));
      return -1;
    }
  }
  if (has_raw && counts[typed] != 0) {
    fprintf(stderr, "%s: holds both raw_data and %s\n", path, odlac_field_name(typed));
    return -1;
  }
  /* es is 1 for the packed types: units are bytes or int32_data entries of packed bytes. */
  units = (int64_t)odlac_file_units(t->data_type, (size_t)count) * (has_raw ? (int64_t)es : 1);
  if (has_raw ? raw_len != (size_t)units : counts[typed] != units) {
    fprintf(stderr, "%s: %s holds %lld %s, dims ", path,
            has_raw ? "raw_data" : odlac_field_name(typed),
            has_raw ? (long long)raw_len : (long long)counts[typed], has_raw ? "bytes" : "values");
    odlac_print_dims(stderr, t->rank, t->dims);
    fprintf(stderr, " need %lld%s\n", (long long)units,
            odlac_bits(t->data_type) < 8 ? " (packed)" : "");
    return -1;
  }
  t->bytes = (size_t)count * es;
  t->data = (unsigned char *)malloc(t->bytes ? t->bytes : 1);
  if (!t->data) {
    fprintf(stderr, "%s: cannot allocate %lu bytes\n", path, (unsigned long)t->bytes);
    return -1;
  }
  if (odlac_bits(t->data_type) < 8) /* packed: read the bytes, then spread them */
    return odlac_parse_packed(t, has_raw ? raw : NULL, p, end, path);
  if (has_raw) {
    if (raw_len)
      memcpy(t->data, raw, raw_len);
    return 0;
  }
  {
    size_t i = 0;
    for (q = p; q < end;) { /* pass 1: the framing was checked by pass 0 */
      uint64_t key, v = 0;
      const unsigned char *s = q, *e = q;
      int field, wire;
      odlac_varint(&q, end, &key);
      field = (key >> 3) == (uint64_t)typed ? typed : 0;
      wire = (int)(key & 7);
      if (wire == 0) {
        odlac_varint(&q, end, &v);
        s = q;
      } else if (wire == 1 || wire == 5) {
        s = q;
        q += wire == 1 ? 8 : 4;
      } else {
        odlac_varint(&q, end, &v);
        s = q;
        q += v;
      }
      e = q;
      if (!field)
        continue;
      if (wire == 0) {
        if (odlac_store(t, field, i++, v, path) != 0)
          goto fail;
      } else if (field == 4 || field == 10) { /* fixed width, one or packed */
        size_t width = field == 4 ? 4 : 8;
        for (; s + width <= e; s += width) {
          uint64_t bits = 0;
          int k;
          for (k = 0; k < (int)width; ++k)
            bits |= (uint64_t)s[k] << (8 * k);
          odlac_store(t, field, i++, bits, path);
        }
      } else { /* packed varints */
        while (s < e) {
          uint64_t x;
          odlac_varint(&s, e, &x);
          if (odlac_store(t, field, i++, x, path) != 0)
            goto fail;
        }
      }
    }
  }
  return 0;
fail:
  free(t->data);
  t->data = NULL;
  return -1;
bad:
  fprintf(stderr, "%s: not a valid TensorProto\n", path);
  return -1;
}

/* ---- NumPy .npy files (format versions 1 to 3) ---- */

/* The NumPy dtypes of the ONNX types they can hold, as .npy headers spell them (one-byte
 * types with '|', the others little-endian). */
static const struct {
  const char *descr;
  int32_t data_type;
} odlac_npy_types[] = {{"<f4", 1}, {"|u1", 2}, {"|i1", 3},  {"<u2", 4},  {"<i2", 5},  {"<i4", 6},
                       {"<i8", 7}, {"|b1", 9}, {"<f2", 10}, {"<f8", 11}, {"<u4", 12}, {"<u8", 13}};

ODLAC_HELPER const char *odlac_npy_descr(int32_t data_type) {
  size_t i;
  for (i = 0; i < sizeof odlac_npy_types / sizeof odlac_npy_types[0]; ++i)
    if (odlac_npy_types[i].data_type == data_type)
      return odlac_npy_types[i].descr;
  return NULL;
}

static const unsigned char odlac_npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

ODLAC_HELPER const char *odlac_npy_space(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t'))
    ++p;
  return p;
}

/* A quoted key or string of the header at p (at most cap - 1 characters) into out; the
 * position after it, or NULL. */
ODLAC_HELPER const char *odlac_npy_string(const char *p, const char *end, char *out, size_t cap) {
  char quote;
  size_t n = 0;
  if (p >= end || (*p != '\'' && *p != '"'))
    return NULL;
  for (quote = *p++; p < end && *p != quote; ++p) {
    if (n + 1 >= cap || *p == '\\')
      return NULL;
    out[n++] = *p;
  }
  out[n] = 0;
  return p < end ? p + 1 : NULL;
}

/* Parses a .npy file into t (the dtype as its ONNX type, the shape as dims, the data); every
 * field checked: the magic and version, the header's length and its dict (exactly 'descr',
 * 'fortran_order' False and 'shape', each once), the dims, and the data's size against them. */
ODLAC_HELPER int odlac_parse_npy(const unsigned char *buf, size_t size, odlac_tensor *t,
                                 const char *path) {
  size_t len, at, i;
  const char *p, *end;
  char key[32], descr[16] = "";
  int have_descr = 0, have_order = 0, have_shape = 0;
  int64_t count;
  size_t elem;
  memset(t, 0, sizeof *t);
  if (size < 10 || buf[6] < 1 || buf[6] > 3 || buf[7] != 0) {
    fprintf(stderr, "%s: not a .npy file of format version 1, 2 or 3\n", path);
    return -1;
  }
  if (buf[6] == 1) {
    len = (size_t)buf[8] | (size_t)buf[9] << 8;
    at = 10;
  } else {
    if (size < 12) {
      fprintf(stderr, "%s: truncated .npy header\n", path);
      return -1;
    }
    len = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    at = 12;
  }
  if (len > size - at) {
    fprintf(stderr, "%s: the .npy header claims %lu bytes, the file has %lu after its start\n",
            path, (unsigned long)len, (unsigned long)(size - at));
    return -1;
  }
  p = (const char *)buf + at;
  end = p + len;
  p = odlac_npy_space(p, end);
  if (p >= end || *p++ != '{')
    goto bad;
  for (;;) {
    p = odlac_npy_space(p, end);
    if (p < end && *p == '}')
      break;
    if (!(p = odlac_npy_string(p, end, key, sizeof key)))
      goto bad;
    p = odlac_npy_space(p, end);
    if (p >= end || *p++ != ':')
      goto bad;
    p = odlac_npy_space(p, end);
    if (strcmp(key, "descr") == 0 && !have_descr) {
      have_descr = 1;
      if (!(p = odlac_npy_string(p, end, descr, sizeof descr)))
        goto bad;
    } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
      have_order = 1;
      if ((size_t)(end - p) >= 4 && memcmp(p, "True", 4) == 0) {
        fprintf(stderr, "%s: the .npy data is in Fortran order; save it in C order\n", path);
        return -1;
      }
      if ((size_t)(end - p) < 5 || memcmp(p, "False", 5) != 0)
        goto bad;
      p += 5;
    } else if (strcmp(key, "shape") == 0 && !have_shape) {
      have_shape = 1;
      if (p >= end || *p++ != '(')
        goto bad;
      for (;;) {
        uint64_t d = 0;
        p = odlac_npy_space(p, end);
        if (p < end && *p == ')')
          break;
        if (p >= end || *p < '0' || *p > '9')
          goto bad;
        for (; p < end && *p >= '0' && *p <= '9'; ++p) {
          if (d > (uint64_t)INT64_MAX / 10)
            goto bad;
          d = d * 10 + (uint64_t)(*p - '0');
        }
        if (d > (uint64_t)INT64_MAX || t->rank == ODLAC_MAX_RANK) {
          fprintf(stderr, "%s: the .npy shape has more than %d dims or a dim too large\n", path,
                  ODLAC_MAX_RANK);
          return -1;
        }
        t->dims[t->rank++] = (int64_t)d;
        p = odlac_npy_space(p, end);
        if (p < end && *p == ',')
          ++p;
        else if (p >= end || *p != ')')
          goto bad;
      }
      ++p; /* ')' */
    } else {
      fprintf(stderr, "%s: the .npy header has an unexpected or repeated key '", path);
      odlac_print_text(stderr, key);
      fprintf(stderr, "'\n");
      return -1;
    }
    p = odlac_npy_space(p, end);
    if (p < end && *p == ',')
      ++p;
    else if (p >= end || *p != '}')
      goto bad;
  }
  for (++p; p < end; ++p) /* after '}': the padding */
    if (*p != ' ' && *p != '\n')
      goto bad;
  if (!have_descr || !have_order || !have_shape)
    goto bad;
  for (i = 0; i < sizeof odlac_npy_types / sizeof odlac_npy_types[0]; ++i)
    if (strcmp(descr, odlac_npy_types[i].descr) == 0 ||
        (descr[0] == '<' && odlac_npy_types[i].descr[0] == '|' &&
         strcmp(descr + 1, odlac_npy_types[i].descr + 1) == 0))
      t->data_type = odlac_npy_types[i].data_type;
  if (!t->data_type) {
    fprintf(stderr, "%s: .npy dtype '", path);
    odlac_print_text(stderr, descr);
    fprintf(stderr, "' is not one an input can have (little-endian bool, ints, uints and floats "
                    "of 16, 32 and 64 bits)\n");
    return -1;
  }
  elem = odlac_elem_size(t->data_type);
  count = odlac_count(t, elem);
  if (count < 0) {
    fprintf(stderr, "%s: .npy shape ", path);
    odlac_print_dims(stderr, t->rank, t->dims);
    fprintf(stderr, " holds more elements than fit in memory\n");
    return -1;
  }
  t->bytes = (size_t)count * elem;
  at += len;
  if (size - at != t->bytes) {
    fprintf(stderr, "%s: .npy data holds %lu bytes, shape ", path, (unsigned long)(size - at));
    odlac_print_dims(stderr, t->rank, t->dims);
    fprintf(stderr, " of '%s' needs %lu\n", descr, (unsigned long)t->bytes);
    return -1;
  }
  if (!(t->data = (unsigned char *)malloc(t->bytes ? t->bytes : 1))) {
    fprintf(stderr, "%s: cannot allocate %lu bytes\n", path, (unsigned long)t->bytes);
    return -1;
  }
  if (t->bytes)
    memcpy(t->data, buf + at, t->bytes);
  return 0;
bad:
  fprintf(stderr,
          "%s: the .npy header is not the dict {'descr': ..., 'fortran_order': False, "
          "'shape': (...)} of NumPy's format\n",
          path);
  return -1;
}

/* Writes a .npy file (format version 1, or 2 for a header over 64 KiB) of the elements. */
ODLAC_HELPER int odlac_save_npy(const char *path, int32_t data_type, int rank, const int64_t *dims,
                                const void *data, size_t bytes) {
  const char *descr = odlac_npy_descr(data_type);
  char header[2048];
  size_t n, total;
  int i, failed;
  FILE *f;
  if (!descr) {
    fprintf(stderr, "%s: ONNX type %d has no NumPy dtype; write .pb files instead\n", path,
            (int)data_type);
    return -1;
  }
  n = (size_t)snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                       descr);
  for (i = 0; i < rank; ++i)
    n += (size_t)snprintf(header + n, sizeof header - n, "%lld,%s", (long long)dims[i],
                          i + 1 < rank ? " " : "");
  n += (size_t)snprintf(header + n, sizeof header - n, "), }");
  total = (10 + n + 1 + 63) / 64 * 64; /* the data starts 64-byte aligned */
  while (10 + n + 1 < total)
    header[n++] = ' ';
  header[n++] = '\n';
  if (!(f = fopen(path, "wb"))) {
    fprintf(stderr, "%s: cannot write: %s\n", path, strerror(errno));
    return -1;
  }
  fwrite(odlac_npy_magic, 1, sizeof odlac_npy_magic, f);
  fputc(1, f);
  fputc(0, f);
  fputc((int)(n & 0xff), f);
  fputc((int)(n >> 8), f);
  fwrite(header, 1, n, f);
  if (bytes)
    fwrite(data, 1, bytes, f);
  failed = ferror(f);
  if (fclose(f) != 0 || failed) {
    fprintf(stderr, "%s: write failed\n", path);
    return -1;
  }
  return 0;
}

/* A float16 or bfloat16 element as a float (printing only). */
ODLAC_HELPER double odlac_half(uint16_t h, int bf16) {
  uint32_t bits;
  float f;
  if (bf16) {
    bits = (uint32_t)h << 16;
  } else {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f)
      bits = sign | 0x7f800000u | m << 13;
    else if (e != 0)
      bits = sign | (e + 112) << 23 | m << 13;
    else if (m == 0)
      bits = sign;
    else { /* subnormal: normalize */
      e = 113;
      while (!(m & 0x400)) {
        m <<= 1;
        --e;
      }
      bits = sign | e << 23 | (m & 0x3ff) << 13;
    }
  }
  memcpy(&f, &bits, sizeof f);
  return f;
}

#define ODLAC_PRINT_LIMIT 1000 /* values printed per output */

/* Prints an output for people: "name: ONNX type T, shape [..]:" then its values (floats with
 * 9 significant digits), at most ODLAC_PRINT_LIMIT of them. */
ODLAC_HELPER void odlac_print_output(FILE *f, const char *name, int32_t data_type, int rank,
                                     const int64_t *dims, const void *data, size_t bytes) {
  const unsigned char *b = (const unsigned char *)data;
  size_t elem = data_type == 8 ? sizeof(const char *) : odlac_elem_size(data_type);
  size_t n = elem ? bytes / elem : 0, i;
  odlac_print_text(f, name);
  fprintf(f, ": ONNX type %d, shape ", (int)data_type);
  odlac_print_dims(f, rank, dims);
  fprintf(f, ":");
  for (i = 0; i < n && i < ODLAC_PRINT_LIMIT; ++i) {
    const unsigned char *e = b + i * elem;
    union {
      float f32;
      double f64;
      int8_t i8;
      int16_t i16;
      int32_t i32;
      int64_t i64;
      uint16_t u16;
      uint32_t u32;
      uint64_t u64;
      const char *str;
    } v;
    memcpy(&v, e, elem);
    fputc(' ', f);
    switch (data_type) {
    case 1:
      fprintf(f, "%.9g", v.f32);
      break;
    case 11:
      fprintf(f, "%.17g", v.f64);
      break;
    case 10:
    case 16:
      fprintf(f, "%.5g", odlac_half(v.u16, data_type == 16));
      break;
    case 3:
      fprintf(f, "%d", v.i8);
      break;
    case 5:
      fprintf(f, "%d", v.i16);
      break;
    case 6:
      fprintf(f, "%ld", (long)v.i32);
      break;
    case 7:
      fprintf(f, "%lld", (long long)v.i64);
      break;
    case 4:
      fprintf(f, "%u", (unsigned)v.u16);
      break;
    case 12:
      fprintf(f, "%lu", (unsigned long)v.u32);
      break;
    case 13:
      fprintf(f, "%llu", (unsigned long long)v.u64);
      break;
    case 8:
      fputc('"', f);
      odlac_print_text(f, v.str);
      fputc('"', f);
      break;
    default: /* uint8, bool, and the one-byte codes of the 8-, 4- and 2-bit types */
      fprintf(f, "%u", (unsigned)e[0]);
    }
  }
  if (n > ODLAC_PRINT_LIMIT)
    fprintf(f, " ... (%lu values in all)", (unsigned long)n);
  fputc('\n', f);
}

/* An input file's bytes: a .npy file (by its magic) or an ONNX TensorProto. */
ODLAC_HELPER int odlac_parse_input(const unsigned char *buf, size_t size, odlac_tensor *t,
                                   const char *path) {
  return size >= sizeof odlac_npy_magic && memcmp(buf, odlac_npy_magic, sizeof odlac_npy_magic) == 0
             ? odlac_parse_npy(buf, size, t, path)
             : odlac_parse_tensor(buf, size, t, path);
}

ODLAC_HELPER int odlac_load_tensor(const char *path, odlac_tensor *t) {
  size_t size = 0;
  unsigned char *buf = odlac_read_file(path, &size);
  int rc;
  if (!buf)
    return -1;
  rc = odlac_parse_input(buf, size, t, path);
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
 * element for the types ONNX packs, which are packed here), or for a string tensor (type 8,
 * `data` an array of NUL-terminated string pointers) string_data. */
ODLAC_HELPER int odlac_save_tensor(const char *path, const char *name, int32_t data_type, int rank,
                                   const int64_t *dims, const void *data, size_t bytes) {
  unsigned bits = odlac_bits(data_type);
  unsigned char *packed = NULL;
  FILE *f;
  int i, failed;
  if (bits < 8) {
    packed = (unsigned char *)malloc(bytes ? bytes : 1);
    if (!packed) {
      fprintf(stderr, "%s: cannot allocate %lu bytes\n", path, (unsigned long)bytes);
      return -1;
    }
    odlac_pack((const unsigned char *)data, bytes, bits, packed);
    data = packed;
    bytes = odlac_file_units(data_type, bytes);
  }
  f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "%s: cannot write: %s\n", path, strerror(errno));
    free(packed);
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
  if (data_type == 8) { /* strings: one string_data entry per element pointer */
    size_t k;
    for (k = 0; k < bytes / sizeof(const char *); ++k) {
      const char *s = ((const char *const *)data)[k];
      odlac_put_varint(f, (6 << 3) | 2);
      odlac_put_varint(f, strlen(s));
      fwrite(s, 1, strlen(s), f);
    }
  } else {
    odlac_put_varint(f, (9 << 3) | 2);
    odlac_put_varint(f, bytes);
    if (bytes)
      fwrite(data, 1, bytes, f);
  }
  free(packed);
  failed = ferror(f);
  if (fclose(f) != 0 || failed) {
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

/* The path of `file` in the folder holding this executable (for files installed beside it),
 * into out[cap]. Returns 0, or prints why and returns -1 when it does not fit. */
ODLAC_HELPER int odlac_beside_exe(const char *argv0, const char *file, char *out, size_t cap) {
  char dir[4096];
  char *slash;
  int n;
  dir[0] = 0;
#if defined(__linux__)
  {
    ssize_t len = readlink("/proc/self/exe", dir, sizeof dir);
    dir[len > 0 && (size_t)len < sizeof dir ? len : 0] = 0;
  }
#endif
  if (!dir[0] && strlen(argv0) < sizeof dir)
    strcpy(dir, argv0);
  slash = strrchr(dir, '/');
  if (slash)
    *slash = 0;
  else
    strcpy(dir, ".");
  n = snprintf(out, cap, "%s/%s", dir, file);
  if (n < 0 || (size_t)n >= cap) {
    fprintf(stderr, "%s: the path of %s beside this program is too long\n", argv0, file);
    return -1;
  }
  return 0;
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

/* --repeat's value: decimal digits only, at most ODLAC_MAX_REPEAT. */
ODLAC_HELPER int odlac_parse_repeat(const char *text, long *out) {
  long v = 0;
  const char *c = text;
  for (; *c >= '0' && *c <= '9' && v <= ODLAC_MAX_REPEAT; ++c)
    v = v * 10 + (*c - '0');
  if (c == text || *c || v > ODLAC_MAX_REPEAT) {
    fprintf(stderr, "--repeat '%s': expected a number of runs from 0 to %ld\n", text,
            ODLAC_MAX_REPEAT);
    return -1;
  }
  *out = v;
  return 0;
}

/* Checks a loaded input against the model's declared type and shape. */
ODLAC_HELPER int odlac_check_input(const odlac_tensor *t, const char *path, const char *name,
                                   int32_t data_type, int rank, const int64_t *dims) {
  int i, same = t->data_type == data_type && t->rank == rank;
  for (i = 0; same && i < rank; ++i)
    same = t->dims[i] == dims[i];
  if (same)
    return 0;
  fprintf(stderr, "%s: input '", path);
  odlac_print_text(stderr, name);
  fprintf(stderr, "' must have ONNX type %d and shape ", (int)data_type);
  odlac_print_dims(stderr, rank, dims);
  fprintf(stderr, ", the file holds type %d and shape ", (int)t->data_type);
  odlac_print_dims(stderr, t->rank, t->dims);
  fprintf(stderr, "\n");
  return -1;
}
