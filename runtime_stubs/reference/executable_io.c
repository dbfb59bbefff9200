/* executable_io.c: stored executables of the reference backend (load mode):
 * odla_StoreExecutable writes a compiled computation to a file or a caller's buffer,
 * odla_LoadExecutable reads it back, and the executable queries (odla_GetNumOfArgsFromExecutable,
 * ...). Stored computations (odla_StoreComputation / odla_LoadComputation) use the same format
 * under the magic "ODLAREFC" (a loaded computation is uncompiled); constants arrays have a
 * format of their own (below, "Constants arrays").
 *
 * What a stored file holds: the calls that built the computation (calls.h), not its nodes.
 * Loading replays them through the same builders that the application called, so every
 * node's kernel, parameter block, result types, in-place choice and the arena plan are
 * derived and checked by this library, never read from the file: no code pointer, kernel,
 * offset or stride comes from a stranger. What the file does hold is checked before use:
 * each call's index against the library's own table (ref_call_table), each value index
 * against the values built so far, each count, string length, rank and array length against
 * the file and the call's other arguments, each constant's data offset and size (the type's
 * overflow-checked bytes) against the weights section; every other argument goes to a
 * builder, which refuses what an application calling it could not pass either. Replaying
 * costs what building costs (docs/backends.md: 0.3 ms for ResNet-50, against 0.16 ms for the
 * node format this replaces); a file is mapped rather than read where POSIX mmap exists, so
 * weights are paged in as kernels first read them.
 *
 * Format (version 2), in the byte order of the machine that stored it, which is checked:
 *   header, 64 bytes: magic "ODLAREFX" (or "ODLAREFC"), u32 version, u32 0x01020304, u64
 *     REF_CALL_TABLE_SIGNATURE (the table the call indices refer to), u64 flags (bit 0: the
 *     file ends with a 32-byte HMAC-SHA256), u64 file bytes, u64 checksum, u64 weights offset,
 *     u64 0;
 *   the call log: u32 calls, then each call: u32 index in ref_call_table and its arguments
 *     (calls.h, gen_calls.py), zero-padded to 64 bytes;
 *   the weights, from the weights offset: each constant's data, 64-byte aligned, where its
 *     odla_CreateConstant call says;
 *   with flag bit 0, HMAC-SHA256 over every byte before it.
 * The checksum is FNV-1a (64-bit) over the call log (bytes 64 up to the weights; hashing the
 * weights would cost more than the rest of loading). It detects corruption, not an attacker,
 * who can edit a file and sum it again: what protects against edits is the validation above,
 * and what proves where a file comes from is the keyed MAC. With a key set
 * (odla_ExtSetExecutableKey), storing signs every file, and loading refuses a file without a
 * MAC or whose MAC does not match, before reading anything else from it; without a key, a
 * signed file loads as any other. Version 1 files (nodes, code positions) are refused with a
 * message saying to store them again. A missing file gives ODLA_FILE_NOT_EXIST, a file a
 * builder of this program refuses the builder's status (ODLA_UNSUPPORTED_OP for a custom op
 * the loading program has not registered), anything else wrong ODLA_INVALID_PARAM, each with
 * a logged reason. Loading from an ODLA_LOCATION_MEMORY buffer reads nothing else. */
#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L
#define REF_HAVE_MMAP 1 /* files are mapped: weights are paged in as kernels first read them */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "calls.h"
#include "ref.h"
#include "ref_types.h"
#include "sha256.h"
#include "threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_EXE_MAGIC "ODLAREFX"
#define REF_COMP_MAGIC "ODLAREFC"
#define REF_CONST_MAGIC "ODLAREFK"
#define REF_EXE_VERSION 2u
#define REF_EXE_BOM 0x01020304u
#define REF_EXE_HEADER 64u
#define REF_EXE_SIGNED 1u               /* header flag: a MAC ends the file */
#define REF_EXE_MAX ((uint64_t)1 << 46) /* file bytes */
#define REF_KEY_MIN 16                  /* key bytes: at least 128 bits */

/* Header fields (byte offsets). */
enum {
  REF_AT_VERSION = 8,
  REF_AT_BOM = 12,
  REF_AT_TABLE = 16,
  REF_AT_FLAGS = 24,
  REF_AT_TOTAL = 32,
  REF_AT_SUM = 40,
  REF_AT_DATA = 48
};

/* FNV-1a, 64-bit (offset basis 14695981039346656037, prime 1099511628211). */
static uint64_t ref_fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  size_t i;
  for (i = 0; i < n; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static uint64_t ref_align_up(uint64_t n) { return (n + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN; }

/* ---- The key ------------------------------------------------------------------------ */

/* Process-wide, so that no loader in the process can skip it once set. Kept as HMAC's K0
 * (the key, hashed when longer than a block, zero-padded to 64 bytes): the same MAC. */
static struct {
  ref_mutex mu;
  int set;
  unsigned char k0[REF_SHA256_BLOCK];
} ref_key = {REF_MUTEX_INITIALIZER, 0, {0}};

odla_status odla_ExtSetExecutableKey(const odla_void *key, odla_size_t key_bytes) {
  unsigned char k0[REF_SHA256_BLOCK];
  ref_sha256 s;
  if (!key && key_bytes == 0) {
    ref_mutex_lock(&ref_key.mu);
    ref_key.set = 0;
    memset(ref_key.k0, 0, sizeof ref_key.k0);
    ref_mutex_unlock(&ref_key.mu);
    return ODLA_SUCCESS;
  }
  if (!key || key_bytes < REF_KEY_MIN) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "ExtSetExecutableKey",
               "a key of %lu bytes: it needs at least %d (NULL and 0 clear the key)",
               (unsigned long)key_bytes, REF_KEY_MIN);
    return ODLA_INVALID_PARAM;
  }
  memset(k0, 0, sizeof k0);
  if (key_bytes > REF_SHA256_BLOCK) {
    ref_sha256_init(&s);
    ref_sha256_update(&s, key, key_bytes);
    ref_sha256_final(&s, k0);
  } else {
    memcpy(k0, key, key_bytes);
  }
  ref_mutex_lock(&ref_key.mu);
  memcpy(ref_key.k0, k0, sizeof k0);
  ref_key.set = 1;
  ref_mutex_unlock(&ref_key.mu);
  return ODLA_SUCCESS;
}

/* Copies the key's K0 out; returns whether one is set. */
static int ref_get_key(unsigned char k0[REF_SHA256_BLOCK]) {
  int set;
  ref_mutex_lock(&ref_key.mu);
  set = ref_key.set;
  memcpy(k0, ref_key.k0, REF_SHA256_BLOCK);
  ref_mutex_unlock(&ref_key.mu);
  return set;
}

/* ---- Writing ------------------------------------------------------------------------ */

static void ref_put_u32(ref_writer *w, uint32_t v) { ref_put(w, &v, sizeof v); }
static void ref_put_i32(ref_writer *w, int32_t v) { ref_put(w, &v, sizeof v); }
static void ref_put_u64(ref_writer *w, uint64_t v) { ref_put(w, &v, sizeof v); }
static void ref_put_i64(ref_writer *w, int64_t v) { ref_put(w, &v, sizeof v); }
static void ref_put_str(ref_writer *w, const char *s) {
  ref_put_u32(w, (uint32_t)strlen(s));
  ref_put(w, s, strlen(s));
}
static void ref_pad_to(ref_writer *w, size_t align) {
  static const unsigned char zeros[REF_ALIGN] = {0};
  ref_put(w, zeros, (align - w->len % align) % align);
}

/* Starts a file: its header, filled in by ref_finish. */
static void ref_start(ref_writer *w) {
  unsigned char header[REF_EXE_HEADER];
  memset(header, 0, sizeof header);
  ref_put(w, header, sizeof header);
}

/* Completes the header of the file in w (its data, weights or entries' data, from `data`):
 * version, byte order, `table`, size, checksum; and signs it when a key is set. */
static void ref_finish(ref_writer *w, const char *magic, uint64_t table, uint64_t data) {
  unsigned char k0[REF_SHA256_BLOCK], mac[REF_SHA256_BYTES];
  uint32_t version = REF_EXE_VERSION, bom = REF_EXE_BOM;
  int sign = ref_get_key(k0);
  uint64_t flags = sign ? REF_EXE_SIGNED : 0, total = w->len + (sign ? REF_SHA256_BYTES : 0), sum;
  if (w->failed)
    return;
  sum = ref_fnv1a(w->p + REF_EXE_HEADER, (size_t)data - REF_EXE_HEADER);
  memcpy(w->p, magic, 8);
  memcpy(w->p + REF_AT_VERSION, &version, 4);
  memcpy(w->p + REF_AT_BOM, &bom, 4);
  memcpy(w->p + REF_AT_TABLE, &table, 8);
  memcpy(w->p + REF_AT_FLAGS, &flags, 8);
  memcpy(w->p + REF_AT_TOTAL, &total, 8);
  memcpy(w->p + REF_AT_SUM, &sum, 8);
  memcpy(w->p + REF_AT_DATA, &data, 8);
  if (sign) {
    ref_hmac_sha256(k0, sizeof k0, w->p, w->len, mac);
    ref_put(w, mac, sizeof mac);
  }
  memset(k0, 0, sizeof k0);
}

/* Serializes comp's call log into w under `magic`, for the store function `func`. */
static odla_status ref_serialize(const char *func, odla_computation comp, ref_writer *w,
                                 const char *magic) {
  const ref_call_log *log = ref_call_log_of(comp);
  uint64_t weights;
  int i;
#ifdef ODLA_REFERENCE_NO_CALL_LOG
  (void)log, (void)weights, (void)i, (void)w, (void)magic, (void)comp;
  ref_report(ODLA_LOG_LEVEL_ERROR, func,
             "this build of the reference backend does not record "
             "the calls that build a computation, so it cannot store one");
  return ODLA_UNSUPPORTED_OP;
#else
  if (comp->error != ODLA_SUCCESS) {
    ref_report(ODLA_LOG_LEVEL_ERROR, func, "the computation has a failed builder (status %d)",
               (int)comp->error);
    return comp->error;
  }
  if (log && log->w.failed)
    return ODLA_MEM_ERROR;
  if (log && log->has_strings) {
    ref_report(ODLA_LOG_LEVEL_ERROR, func,
               "the computation has a string constant, whose "
               "elements are pointers: it cannot be stored");
    return ODLA_UNSUPPORTED_DATATYPE;
  }
  ref_start(w);
  ref_put_u32(w, log ? log->num_calls : 0);
  if (log)
    ref_put(w, log->w.p, log->w.len);
  ref_pad_to(w, REF_ALIGN);
  weights = w->len;
  for (i = 0; log && i < log->num_data; ++i) {
    ref_put(w, log->data[i], (size_t)log->data_bytes[i]);
    ref_pad_to(w, REF_ALIGN);
  }
  ref_finish(w, magic, REF_CALL_TABLE_SIGNATURE, weights);
  return w->failed ? ODLA_MEM_ERROR : ODLA_SUCCESS;
#endif
}

/* Writes the bytes of w to `location` (a PATH file, never left half-written, or a MEMORY
 * buffer large enough) for the store function `func`; frees w. */
static odla_status ref_write_location(const char *func, odla_resource_location location,
                                      ref_writer *w) {
  odla_status s = w->failed ? ODLA_MEM_ERROR : ODLA_SUCCESS;
  if (s == ODLA_SUCCESS && location.location_type == ODLA_LOCATION_PATH) {
    FILE *f = fopen((const char *)location.location, "wb");
    if (!f) {
      ref_report(ODLA_LOG_LEVEL_ERROR, func, "cannot open '%s' for writing",
                 (const char *)location.location);
      s = ODLA_FILE_NOT_EXIST;
    } else {
      int ok = fwrite(w->p, 1, w->len, f) == w->len;
      if (fclose(f) != 0 || !ok) {
        ref_report(ODLA_LOG_LEVEL_ERROR, func, "writing '%s' failed",
                   (const char *)location.location);
        remove((const char *)location.location); /* no half-written file */
        s = ODLA_FAILURE;
      }
    }
  } else if (s == ODLA_SUCCESS) {
    if (location.size < w->len) {
      ref_report(ODLA_LOG_LEVEL_ERROR, func, "the buffer holds %lu bytes; %lu are needed",
                 (unsigned long)location.size, (unsigned long)w->len);
      s = ODLA_MEM_ERROR;
    } else {
      memcpy((void *)(uintptr_t)location.location, w->p, w->len);
    }
  }
  ref_free(w->p);
  return s;
}

static int ref_storable_location(const char *func, odla_resource_location location) {
  if (location.location_type == ODLA_LOCATION_PATH ||
      location.location_type == ODLA_LOCATION_MEMORY)
    return 1;
  ref_report(ODLA_LOG_LEVEL_ERROR, func, "only PATH and MEMORY locations are supported");
  return 0;
}

/* Stores `comp` at `location` under `magic` for the store function `func`. */
static odla_status ref_store(const char *func, odla_resource_location location,
                             odla_computation comp, const char *magic) {
  ref_writer w = {NULL, 0, 0, 0};
  odla_status s;
  if (!ref_storable_location(func, location))
    return ODLA_INVALID_PARAM;
  s = ref_serialize(func, comp, &w, magic);
  if (s != ODLA_SUCCESS) {
    ref_free(w.p);
    return s;
  }
  return ref_write_location(func, location, &w);
}

odla_status odla_StoreExecutable(odla_resource_location location, odla_executable executable) {
  if (!executable || !location.location)
    return ODLA_INVALID_PARAM;
  return ref_store("StoreExecutable", location, executable->comp, REF_EXE_MAGIC);
}

odla_status odla_ExtGetStoredExecutableBytes(odla_executable executable, odla_size_t *bytes) {
  ref_writer w = {NULL, 0, 0, 0};
  odla_status s;
  if (!executable || !bytes)
    return ODLA_INVALID_PARAM;
  s = ref_serialize("ExtGetStoredExecutableBytes", executable->comp, &w, REF_EXE_MAGIC);
  if (s == ODLA_SUCCESS)
    *bytes = w.len;
  ref_free(w.p);
  return s;
}

/* ---- Reading ------------------------------------------------------------------------ */

/* What is being loaded, for its checks and messages. */
typedef struct {
  const char *magic, *func, *what;
  uint64_t table; /* the header's table signature: the call table, or 0 (constants) */
} ref_format;

static const ref_format ref_executable_format = {REF_EXE_MAGIC, "LoadExecutable", "executable",
                                                 REF_CALL_TABLE_SIGNATURE};
static const ref_format ref_computation_format = {REF_COMP_MAGIC, "LoadComputation",
                                                  "stored computation", REF_CALL_TABLE_SIGNATURE};
static const ref_format ref_constants_format = {REF_CONST_MAGIC, "LoadConstantsArray",
                                                "constants array", 0};

static odla_status ref_refuse(const ref_format *fmt, odla_status s, const char *why) {
  ref_report(ODLA_LOG_LEVEL_ERROR, fmt->func, "%s: %s", fmt->what, why);
  return s;
}

static uint64_t ref_header_u64(const unsigned char *p, int at) {
  uint64_t v;
  memcpy(&v, p + at, 8);
  return v;
}

/* With a key set: whether the `len` bytes at p end with their MAC under it (checked before
 * anything else of the file is read; the flags only choose the message). */
static odla_status ref_check_mac(const ref_format *fmt, const unsigned char *p, size_t len) {
  unsigned char k0[REF_SHA256_BLOCK], mac[REF_SHA256_BYTES];
  int ok;
  if (!ref_get_key(k0))
    return ODLA_SUCCESS;
  ok = len >= REF_EXE_HEADER + REF_SHA256_BYTES;
  if (ok) {
    ref_hmac_sha256(k0, sizeof k0, p, len - REF_SHA256_BYTES, mac);
    ok = ref_equal_secret(mac, p + len - REF_SHA256_BYTES, REF_SHA256_BYTES);
  }
  memset(k0, 0, sizeof k0);
  if (ok)
    return ODLA_SUCCESS;
  if (len < REF_EXE_HEADER || !(ref_header_u64(p, REF_AT_FLAGS) & REF_EXE_SIGNED))
    return ref_refuse(fmt, ODLA_INVALID_PARAM,
                      "not signed, and a key is set (odla_ExtSetExecutableKey): only files "
                      "stored with that key load");
  return ref_refuse(fmt, ODLA_INVALID_PARAM,
                    "the MAC does not match: signed with another key, or modified since");
}

/* Checks a whole file image of `len` bytes: its MAC (with a key set), header, size and
 * checksum. Sets *data and *end to where its data (weights, entries' data) start and end. */
static odla_status ref_check_image(const ref_format *fmt, const unsigned char *p, size_t len,
                                   uint64_t *data, uint64_t *end) {
  uint32_t version, bom;
  uint64_t flags;
  odla_status s;
  char msg[200];
  if ((s = ref_check_mac(fmt, p, len)) != ODLA_SUCCESS)
    return s;
  if (len < REF_EXE_HEADER)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated (no header)");
  memcpy(&version, p + REF_AT_VERSION, 4);
  memcpy(&bom, p + REF_AT_BOM, 4);
  flags = ref_header_u64(p, REF_AT_FLAGS);
  *data = ref_header_u64(p, REF_AT_DATA);
  if (memcmp(p, fmt->magic, 8) != 0)
    return ref_refuse(fmt, ODLA_INVALID_PARAM,
                      memcmp(p, REF_EXE_MAGIC, 8) == 0
                          ? "this is a stored executable (odla_LoadExecutable reads it)"
                          : (memcmp(p, REF_COMP_MAGIC, 8) == 0
                                 ? "this is a stored computation (odla_LoadComputation reads it)"
                                 : "not a file of libodla_reference (bad magic)"));
  if (bom != REF_EXE_BOM)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "stored on a machine of another byte order");
  if (version != REF_EXE_VERSION) {
    ref_snprintf(msg, sizeof msg,
                 "format version %lu; this backend reads version %u%s: store it again",
                 (unsigned long)version, REF_EXE_VERSION,
                 version == 1 ? " (version 1 held nodes and code positions, which could not be "
                                "checked)"
                              : "");
    return ref_refuse(fmt, ODLA_INVALID_PARAM, msg);
  }
  if (ref_header_u64(p, REF_AT_TABLE) != fmt->table)
    return ref_refuse(fmt, ODLA_INVALID_PARAM,
                      "stored by a libodla_reference with another set of ODLA calls (call "
                      "table signature differs): store it again with this one");
  if (flags & ~(uint64_t)REF_EXE_SIGNED)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt header (unknown flags)");
  if (ref_header_u64(p, REF_AT_TOTAL) != (uint64_t)len || (uint64_t)len > REF_EXE_MAX)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated or overlong");
  *end = (uint64_t)len - (flags & REF_EXE_SIGNED ? REF_SHA256_BYTES : 0);
  if (*data < REF_EXE_HEADER || *data > *end || *data % REF_ALIGN != 0 || *end < REF_EXE_HEADER)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt header (data offset)");
  if (ref_fnv1a(p + REF_EXE_HEADER, (size_t)*data - REF_EXE_HEADER) !=
      ref_header_u64(p, REF_AT_SUM))
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "checksum mismatch: corrupt");
  return ODLA_SUCCESS;
}

/* A file image: where its bytes are and what frees them. */
typedef struct {
  unsigned char *bytes; /* 64-byte aligned */
  size_t len;
  void *alloc;  /* malloc'd copy, or NULL */
  void *mapped; /* or the file's mapping, of len bytes */
} ref_image;

static void ref_drop_image(ref_image *im) {
  ref_free(im->alloc);
#ifdef REF_HAVE_MMAP
  if (im->mapped)
    munmap(im->mapped, im->len);
#endif
  memset(im, 0, sizeof *im);
}

/* Reads the regular file at `path` into *im: mapped where possible, else read. */
static odla_status ref_read_file(const ref_format *fmt, const char *path, ref_image *im) {
#ifdef REF_HAVE_MMAP
  struct stat st;
  void *p;
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    ref_report(ODLA_LOG_LEVEL_ERROR, fmt->func, "cannot open '%s'", path);
    return ODLA_FILE_NOT_EXIST;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "not a regular file");
  }
  if ((uint64_t)st.st_size < REF_EXE_HEADER || (uint64_t)st.st_size > REF_EXE_MAX) {
    close(fd);
    return ref_refuse(fmt, ODLA_INVALID_PARAM,
                      st.st_size < (off_t)REF_EXE_HEADER ? "truncated (no header)"
                                                         : "overlong file");
  }
  p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return ref_refuse(fmt, ODLA_FAILURE, "cannot map the file");
  im->mapped = p;
  im->bytes = (unsigned char *)p;
  im->len = (size_t)st.st_size;
  return ODLA_SUCCESS;
#else
  long size;
  FILE *f = fopen(path, "rb");
  if (!f) {
    ref_report(ODLA_LOG_LEVEL_ERROR, fmt->func, "cannot open '%s'", path);
    return ODLA_FILE_NOT_EXIST;
  }
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "not a regular file");
  }
  if ((uint64_t)size < REF_EXE_HEADER || (uint64_t)size > REF_EXE_MAX) {
    fclose(f);
    return ref_refuse(fmt, ODLA_INVALID_PARAM,
                      size < (long)REF_EXE_HEADER ? "truncated (no header)" : "overlong file");
  }
  if (!(im->alloc = ref_malloc((size_t)size + REF_ALIGN))) {
    fclose(f);
    return ODLA_MEM_ERROR;
  }
  im->bytes =
      (unsigned char *)im->alloc + (REF_ALIGN - (uintptr_t)im->alloc % REF_ALIGN) % REF_ALIGN;
  im->len = (size_t)size;
  if (fread(im->bytes, 1, im->len, f) != im->len || fgetc(f) != EOF) {
    fclose(f);
    ref_drop_image(im);
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated or overlong file");
  }
  fclose(f);
  return ODLA_SUCCESS;
#endif
}

/* Reads the image at `location` (a PATH file, or a MEMORY buffer, copied when not 64-byte
 * aligned: weights are read in place and kernels expect them aligned) and checks it. */
static odla_status ref_load_image(const ref_format *fmt, odla_resource_location location,
                                  ref_image *im, uint64_t *data, uint64_t *end) {
  odla_status s = ODLA_SUCCESS;
  memset(im, 0, sizeof *im);
  if (location.location_type == ODLA_LOCATION_PATH) {
    s = ref_read_file(fmt, (const char *)location.location, im);
  } else if (location.location_type == ODLA_LOCATION_MEMORY) {
    im->bytes = (unsigned char *)(uintptr_t)location.location;
    im->len = (size_t)location.size;
    if ((uintptr_t)im->bytes % REF_ALIGN != 0) {
      if (!(im->alloc = ref_malloc(im->len + REF_ALIGN)))
        return ODLA_MEM_ERROR;
      im->bytes =
          (unsigned char *)im->alloc + (REF_ALIGN - (uintptr_t)im->alloc % REF_ALIGN) % REF_ALIGN;
      memcpy(im->bytes, location.location, im->len);
    }
  } else {
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "only PATH and MEMORY locations are supported");
  }
  if (s == ODLA_SUCCESS)
    s = ref_check_image(fmt, im->bytes, im->len, data, end);
  if (s != ODLA_SUCCESS)
    ref_drop_image(im);
  return s;
}

/* What a loaded executable or computation owns besides its computation: the image its
 * constants' data lie in. */
typedef struct {
  ref_image image;
} ref_loaded;

static void ref_free_storage(ref_loaded *l) {
  ref_drop_image(&l->image);
  ref_free(l);
}

int ref_free_loaded(odla_executable executable) {
  if (!executable->storage)
    return 0;
  ref_free_storage((ref_loaded *)executable->storage);
  executable->storage = NULL;
  return 1;
}

void ref_free_loaded_computation(odla_computation comp) {
  if (comp->loaded)
    ref_free_storage((ref_loaded *)comp->loaded);
  comp->loaded = NULL;
}

/* Loads the file at `location` as a new computation built by replaying its calls (it becomes
 * the thread's current computation), which owns the image. */
static odla_status ref_load(const ref_format *fmt, odla_resource_location location,
                            odla_computation *comp) {
  ref_replay r;
  ref_loaded *l;
  uint64_t data, end;
  odla_status s;
  *comp = NULL;
  if (!(l = (ref_loaded *)ref_calloc(1, sizeof *l)))
    return ODLA_MEM_ERROR;
  if ((s = ref_load_image(fmt, location, &l->image, &data, &end)) != ODLA_SUCCESS ||
      (s = odla_CreateComputation(comp)) != ODLA_SUCCESS) {
    ref_free_storage(l);
    return s;
  }
  (*comp)->loaded = l;
  memset(&r, 0, sizeof r);
  r.p = l->image.bytes + REF_EXE_HEADER;
  r.len = (size_t)data - REF_EXE_HEADER;
  r.weights = l->image.bytes + data;
  r.weights_len = end - data;
  r.comp = *comp;
  r.func = fmt->func;
  r.what = fmt->what;
  s = ref_replay_calls(&r);
  if (s == ODLA_SUCCESS && (*comp)->regions)
    s = ref_refuse(fmt, ODLA_INVALID_PARAM, "its calls leave an If or Loop region open");
  if (s != ODLA_SUCCESS) {
    odla_DestroyComputation(*comp);
    *comp = NULL;
  }
  return s;
}

odla_status odla_LoadExecutable(odla_resource_location location, odla_device device,
                                odla_executable *executable) {
  odla_computation outer = ref_current(), comp;
  odla_status s;
  if (!executable || !location.location)
    return ODLA_INVALID_PARAM;
  *executable = NULL;
  s = ref_load(&ref_executable_format, location, &comp);
  if (s == ODLA_SUCCESS && (s = odla_CompileComputation(comp, device, executable)) != ODLA_SUCCESS)
    odla_DestroyComputation(comp);
  if (s == ODLA_SUCCESS) { /* the executable owns the computation and its image */
    (*executable)->storage = comp->loaded;
    comp->loaded = NULL;
  }
  ref_set_current(outer); /* loading an executable leaves the thread's computation alone */
  return s;
}

/* ---- Stored computations -------------------------------------------------------------- */

odla_status odla_StoreComputation(odla_resource_location location, odla_computation computation) {
  if (!computation || !location.location)
    return ODLA_INVALID_PARAM;
  if (computation->interpret || computation->regions) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "StoreComputation", "%s",
               computation->interpret
                   ? "an interpret-mode computation has run its ops: there is no graph to store"
                   : "an odla_BeginIf or odla_BeginLoop is still open");
    return ODLA_INVALID_PARAM;
  }
  return ref_store("StoreComputation", location, computation, REF_COMP_MAGIC);
}

odla_status odla_LoadComputation(odla_resource_location location, odla_computation *computation) {
  odla_computation outer = ref_current();
  odla_status s;
  if (!computation || !location.location)
    return ODLA_INVALID_PARAM;
  s = ref_load(&ref_computation_format, location, computation);
  if (s != ODLA_SUCCESS)
    ref_set_current(outer); /* a refused file leaves the thread's computation as it was */
  return s;
}

/* ---- Executable queries ------------------------------------------------------------- */

odla_status odla_GetNumOfArgsFromExecutable(const odla_executable executable,
                                            odla_uint32 *num_args) {
  return executable ? odla_GetNumOfArgsFromComputation(executable->comp, num_args)
                    : ODLA_INVALID_PARAM;
}

odla_status odla_GetArgFromExecutableByIdx(const odla_executable executable,
                                           const odla_uint32 arg_idx, odla_value *arg_value) {
  return executable ? odla_GetArgFromComputationByIdx(executable->comp, arg_idx, arg_value)
                    : ODLA_INVALID_PARAM;
}

odla_status odla_GetNumOfOutputsFromExecutable(const odla_executable executable,
                                               odla_uint32 *num_outputs) {
  return executable ? odla_GetNumOfOutputsFromComputation(executable->comp, num_outputs)
                    : ODLA_INVALID_PARAM;
}

odla_status odla_GetOutputFromExecutableByIdx(const odla_executable executable,
                                              const odla_uint32 output_idx,
                                              odla_value *output_value) {
  return executable ? odla_GetOutputFromComputationByIdx(executable->comp, output_idx, output_value)
                    : ODLA_INVALID_PARAM;
}

/* ---- Constants arrays ------------------------------------------------------------------ */

/* A constants array is a set of constants by id: made from the current computation's
 * constants (odla_CreateConstantsArray copies them), stored to and loaded from a file, and
 * given to odla_AsyncLaunchExecutable, whose execution then reads each array entry instead
 * of the executable's constant of the same id: one executable, several sets of weights. An
 * entry must match a constant that a kernel reads, in element type and shape; integer and
 * bool entries must also keep the executable's values (they may size the plan).
 * File format (version 2, the storing machine's byte order, which is checked; independent of
 * the backend's build, as it holds data only): the 64-byte header of stored executables
 * under "ODLAREFK" (table signature 0; the checksum covers bytes 64 up to the data, and the
 * MAC, with a key set, everything); u32 entries; each entry: string id, u32 element type,
 * i32 rank, i64 dims[rank], u64 data offset (from the data offset, 64-byte aligned), u64
 * bytes; then the data. */
typedef struct {
  char *id;
  odla_value_type type;
  const void *data; /* 64-byte aligned, in the array's block */
} ref_constant_entry;

struct _odla_constants_array {
  int num;
  ref_constant_entry *entries;
  void *block;     /* malloc'd: the copied data, or NULL */
  ref_image image; /* or the loaded file */
};

odla_status odla_DestroyConstantsArray(odla_constants_array constants_array) {
  int i;
  if (!constants_array)
    return ODLA_INVALID_PARAM;
  for (i = 0; i < constants_array->num; ++i)
    ref_free(constants_array->entries[i].id);
  ref_free(constants_array->entries);
  ref_free(constants_array->block);
  ref_drop_image(&constants_array->image);
  ref_free(constants_array);
  return ODLA_SUCCESS;
}

odla_status odla_CreateConstantsArray(odla_constants_array *constants_array) {
  odla_computation comp = ref_current();
  odla_constants_array a;
  size_t total = 0;
  unsigned char *base;
  int i, n = 0;
  if (!constants_array)
    return ODLA_INVALID_PARAM;
  *constants_array = NULL;
  if (!comp) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "CreateConstantsArray",
               "no current computation: the array is made of its constants");
    return ODLA_INVALID_PARAM;
  }
  for (i = 0; i < comp->num_values; ++i)
    if (comp->values[i]->kind == REF_CONSTANT) {
      ++n;
      total += (size_t)ref_align_up(ref_bytes(&comp->values[i]->type));
    }
  if (!(a = (odla_constants_array)ref_calloc(1, sizeof *a)) ||
      !(a->entries = (ref_constant_entry *)ref_calloc((size_t)(n ? n : 1), sizeof *a->entries)) ||
      !(a->block = ref_malloc(total + REF_ALIGN))) {
    if (a)
      ref_free(a->entries);
    ref_free(a);
    return ODLA_MEM_ERROR;
  }
  base = (unsigned char *)a->block + (REF_ALIGN - (uintptr_t)a->block % REF_ALIGN) % REF_ALIGN;
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    ref_constant_entry *e = &a->entries[a->num];
    size_t bytes = ref_bytes(&v->type);
    if (v->kind != REF_CONSTANT)
      continue;
    if (!(e->id = (char *)ref_malloc(strlen(v->id) + 1))) {
      odla_DestroyConstantsArray(a);
      return ODLA_MEM_ERROR;
    }
    strcpy(e->id, v->id);
    e->type = ref_type_of(v);
    if (bytes)
      memcpy(base, v->data, bytes);
    e->data = base;
    base += ref_align_up(bytes);
    ++a->num;
  }
  *constants_array = a;
  return ODLA_SUCCESS;
}

odla_status odla_StoreConstantsArray(const odla_char *file_name,
                                     const odla_constants_array constants_array) {
  odla_resource_location location;
  ref_writer w = {NULL, 0, 0, 0};
  uint64_t offset = 0, data;
  int i, k;
  if (!file_name || !constants_array)
    return ODLA_INVALID_PARAM;
  ref_start(&w);
  ref_put_u32(&w, (uint32_t)constants_array->num);
  for (i = 0; i < constants_array->num; ++i) {
    const ref_constant_entry *e = &constants_array->entries[i];
    ref_put_str(&w, e->id);
    ref_put_u32(&w, (uint32_t)e->type.element_type);
    ref_put_i32(&w, (int32_t)e->type.shape.size);
    for (k = 0; k < e->type.shape.size; ++k)
      ref_put_i64(&w, e->type.shape.dims[k]);
    ref_put_u64(&w, offset);
    ref_put_u64(&w, ref_bytes(&e->type));
    offset = ref_align_up(offset + ref_bytes(&e->type));
  }
  ref_pad_to(&w, REF_ALIGN);
  data = w.len;
  for (i = 0; i < constants_array->num; ++i) {
    const ref_constant_entry *e = &constants_array->entries[i];
    ref_put(&w, e->data, ref_bytes(&e->type));
    ref_pad_to(&w, REF_ALIGN);
  }
  ref_finish(&w, REF_CONST_MAGIC, 0, data);
  location.location_type = ODLA_LOCATION_PATH;
  location.location = file_name;
  location.size = 0;
  return ref_write_location("StoreConstantsArray", location, &w);
}

/* Reads a string of at most `max` bytes at p[*at] (bounded by `end`) into a new C string. */
static char *ref_take_str(const unsigned char *p, uint64_t *at, uint64_t end, uint32_t max) {
  uint32_t n;
  char *s;
  if (end - *at < 4)
    return NULL;
  memcpy(&n, p + *at, 4);
  if (n > max || n > end - *at - 4 || memchr(p + *at + 4, '\0', n) ||
      !(s = (char *)ref_malloc((size_t)n + 1)))
    return NULL;
  memcpy(s, p + *at + 4, n);
  s[n] = '\0';
  *at += 4 + (uint64_t)n;
  return s;
}

/* Reads `n` bytes at p[*at] (bounded by `end`) into out; returns whether they were there. */
static int ref_take_bytes(const unsigned char *p, uint64_t *at, uint64_t end, void *out, size_t n) {
  if (end - *at < n)
    return 0;
  memcpy(out, p + *at, n);
  *at += n;
  return 1;
}

/* Parses the entries of a checked image whose data lie in [data, end) into `a`. */
static odla_status ref_parse_constants(const unsigned char *p, uint64_t data, uint64_t end,
                                       odla_constants_array a) {
  const ref_format *fmt = &ref_constants_format;
  uint64_t at = REF_EXE_HEADER, need;
  uint32_t n, i;
  int j;
  if (!ref_take_bytes(p, &at, data, &n, 4) || n > (data - at) / 16)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt count");
  if (!(a->entries = (ref_constant_entry *)ref_calloc(n ? n : 1, sizeof *a->entries)))
    return ODLA_MEM_ERROR;
  for (i = 0; i < n; ++i) {
    ref_constant_entry *e = &a->entries[i];
    uint64_t off, bytes;
    uint32_t type;
    int32_t rank;
    if (!(e->id = ref_take_str(p, &at, data, 1u << 16)))
      return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt entry (id)");
    ++a->num;
    if (!ref_take_bytes(p, &at, data, &type, 4) || !ref_take_bytes(p, &at, data, &rank, 4) ||
        rank < 0 || rank > ODLA_MAX_DIMENSION ||
        !ref_take_bytes(p, &at, data, e->type.shape.dims, (size_t)rank * sizeof(int64_t)) ||
        !ref_take_bytes(p, &at, data, &off, 8) || !ref_take_bytes(p, &at, data, &bytes, 8))
      return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt or truncated entry");
    e->type.element_type = (odla_element_type)type;
    e->type.shape.size = rank;
    if (!ref_type_bytes(&e->type, &need) || bytes != need || off % REF_ALIGN != 0 ||
        off > end - data || bytes > end - data - off)
      return ref_refuse(fmt, ODLA_INVALID_PARAM,
                        "corrupt entry (its type, or its data past the end of the file)");
    e->data = p + data + off;
    for (j = 0; j < (int)i; ++j)
      if (strcmp(a->entries[j].id, e->id) == 0)
        return ref_refuse(fmt, ODLA_INVALID_PARAM, "two entries have one id");
  }
  if (ref_align_up(at) != data)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt (bytes after the entries)");
  return ODLA_SUCCESS;
}

odla_status odla_LoadConstantsArray(const odla_char *file_name,
                                    odla_constants_array *constants_array) {
  odla_resource_location location;
  odla_constants_array a;
  uint64_t data, end;
  odla_status s;
  if (!file_name || !constants_array)
    return ODLA_INVALID_PARAM;
  *constants_array = NULL;
  if (!(a = (odla_constants_array)ref_calloc(1, sizeof *a)))
    return ODLA_MEM_ERROR;
  location.location_type = ODLA_LOCATION_PATH;
  location.location = file_name;
  location.size = 0;
  s = ref_load_image(&ref_constants_format, location, &a->image, &data, &end);
  if (s == ODLA_SUCCESS)
    s = ref_parse_constants(a->image.bytes, data, end, a);
  if (s != ODLA_SUCCESS) {
    odla_DestroyConstantsArray(a);
    return s;
  }
  *constants_array = a;
  return ODLA_SUCCESS;
}

odla_status ref_constants_table(odla_computation comp, odla_constants_array array,
                                const void ***table) {
  const char *const func = "AsyncLaunchExecutable";
  unsigned char *read;
  const void **t;
  int i, k;
  char s1[128], s2[128];
  *table = NULL;
  read = (unsigned char *)ref_calloc((size_t)comp->num_values + 1, 1);
  t = (const void **)ref_calloc((size_t)comp->num_values + 1, sizeof *t);
  if (!read || !t) {
    ref_free(read);
    ref_free(t);
    return ODLA_MEM_ERROR;
  }
  for (i = 0; i < comp->num_nodes; ++i)
    for (k = 0; k < comp->nodes[i]->num_inputs; ++k)
      if (comp->nodes[i]->inputs[k])
        read[comp->nodes[i]->inputs[k]->index] = 1;
  for (i = 0; i < array->num; ++i) {
    const ref_constant_entry *e = &array->entries[i];
    odla_value v = NULL;
    for (k = 0; k < comp->num_values && !v; ++k)
      if (strcmp(comp->values[k]->id, e->id) == 0)
        v = comp->values[k];
    if (!v || v->kind != REF_CONSTANT || !read[v->index] ||
        v->type.element_type != e->type.element_type ||
        !ref_same_shape(&v->type.shape, &e->type.shape)) {
      if (!v || v->kind != REF_CONSTANT)
        ref_report(ODLA_LOG_LEVEL_ERROR, func, "the executable has no constant '%s'", e->id);
      else if (!read[v->index])
        ref_report(ODLA_LOG_LEVEL_ERROR, func,
                   "constant '%s' is not read when the executable runs (its data shaped the "
                   "graph when it was built): it cannot be replaced",
                   e->id);
      else
        ref_report(
            ODLA_LOG_LEVEL_ERROR, func, "constant '%s' is %s%s; the array holds %s%s", e->id,
            ref_type_name(v->type.element_type), ref_shape_str(&v->type.shape, s1, sizeof s1),
            ref_type_name(e->type.element_type), ref_shape_str(&e->type.shape, s2, sizeof s2));
      ref_free(read);
      ref_free(t);
      return ODLA_INVALID_PARAM;
    }
    /* Integer and bool constants may size the plan (a Loop's trip count, axes, shapes):
     * they must keep their values; float constants are the weights an array replaces. */
    if (!ref_is_float(e->type.element_type) && ref_bytes(&e->type) &&
        memcmp(e->data, v->data, ref_bytes(&e->type)) != 0) {
      ref_report(ODLA_LOG_LEVEL_ERROR, func,
                 "constant '%s' (%s) differs from the executable's: only float constants may "
                 "change (integer ones may have shaped the plan)",
                 e->id, ref_type_name(e->type.element_type));
      ref_free(read);
      ref_free(t);
      return ODLA_INVALID_PARAM;
    }
    t[v->index] = e->data;
  }
  ref_free(read);
  *table = t;
  return ODLA_SUCCESS;
}
