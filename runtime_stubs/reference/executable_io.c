/* executable_io.c: stored executables of the reference backend (load mode):
 * odla_StoreExecutable writes a compiled computation (graph, memory plan, weights) to a
 * file or a caller's buffer, odla_LoadExecutable reads it back without any op builder
 * running, and the executable queries (odla_GetNumOfArgsFromExecutable, ...). Stored
 * computations (odla_StoreComputation / odla_LoadComputation) use the same format under the
 * magic "ODLAREFC" with the plan's fields zero (a loaded computation is planned again when
 * compiled); constants arrays have a format of their own (below, "Constants arrays").
 *
 * Format (version 1), in the byte order of the machine that stored it, which is checked:
 *   header, 64 bytes: "ODLAREFX", u32 version, u32 0x01020304, u64 build id, u64 layout
 *     signature, u64 file bytes, u64 FNV-1a of the structure (bytes 64 up to the weights:
 *     hashing the weights would cost more than the rest of loading), u64 weights offset, u64 0;
 *   u64 arena bytes, u32 values, u32 nodes;
 *   each value: u32 kind, u32 is_output, u32 element type, i32 rank, i64 dims[rank],
 *     u64 arena offset, i32 first use, i32 last use, i32 shared buffer's value (-1: none),
 *     string id, u64 weights offset and u64 bytes (constants; 0 otherwise);
 *   each node: string op, i64 kernel, u32 inputs, u32 outputs, i32 value indices (-1: absent),
 *     u64 params bytes and the params, u32 code pointers and u16 offsets, u64 scratch bytes,
 *     u64 scratch offset, i32 in-place operand;
 *   the weights, from the weights offset, each constant 64-byte aligned.
 * Strings are u32 length + bytes. Code (kernels, and the code pointers builders declare in
 * params with ref_declare_code_pointer) is written as its distance from
 * odla_CreateComputation: a stored executable is valid for the backend binary that wrote it.
 * Custom ops' kernels are the application's, not the library's: a CustomOp node's params
 * keep the op's name, and loading finds the kernel again among the ops the loading program
 * registered (ref_custom_relink), refusing with ODLA_UNSUPPORTED_OP when one is missing.
 * The build id (a hash of the backend's sources and compile settings, made by the build)
 * and the layout signature (where one function of every source file lies) refuse anything
 * else with ODLA_INVALID_PARAM: link libodla_reference.so, or store and load from one
 * program when linking the static library. Every count, index, offset and size is checked
 * against the file before use; a missing file gives ODLA_FILE_NOT_EXIST. Where POSIX mmap
 * exists a file is mapped rather than read, so that loading costs the structure's parse
 * and the weights are paged in as they are used, as with weights compiled into a program. */
#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L
#define REF_HAVE_MMAP 1 /* files are mapped: weights are paged in as kernels first read them */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "ref.h"
#include "ref_build_id.h"
#include "ref_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_EXE_MAGIC "ODLAREFX"
#define REF_COMP_MAGIC "ODLAREFC"
#define REF_CONST_MAGIC "ODLAREFK"
#define REF_EXE_VERSION 1u
#define REF_EXE_BOM 0x01020304u
#define REF_EXE_HEADER 64u

typedef void (*ref_code)(void);

/* One public function of every source file: if each lies at the same distance from the
 * anchor as when the executable was stored, so does all code of the same build. */
static ref_code ref_layout_probe(int i) {
  switch (i) {
  case 0: return (ref_code)odla_SetLogLevel;           /* computation.c */
  case 1: return (ref_code)odla_Add;                   /* ops_binary.c */
  case 2: return (ref_code)odla_Equal;                 /* ops_binary_logic.c */
  case 3: return (ref_code)odla_Conv;                  /* ops_conv.c */
  case 4: return (ref_code)odla_Reshape;               /* ops_data.c */
  case 5: return (ref_code)odla_Not;                   /* ops_elementwise.c */
  case 6: return (ref_code)odla_ExtConv;               /* ops_fused.c */
  case 7: return (ref_code)odla_Gemm;                  /* ops_gemm.c */
  case 8: return (ref_code)odla_Einsum;                /* ops_gemm_linalg.c */
  case 9: return (ref_code)odla_Gather;                /* ops_index.c */
  case 10: return (ref_code)odla_NegativeLogLikeliHoodLoss; /* ops_loss.c */
  case 11: return (ref_code)odla_NMS;                  /* ops_misc.c */
  case 12: return (ref_code)odla_ExtGridSample;        /* ops_misc_signal.c */
  case 13: return (ref_code)odla_BatchNormalization;   /* ops_nn.c */
  case 14: return (ref_code)odla_InstanceNormalization; /* ops_norm.c */
  case 15: return (ref_code)odla_MaxPool;              /* ops_pool.c */
  case 16: return (ref_code)odla_Quantize;             /* ops_quant.c */
  case 17: return (ref_code)odla_ReduceSum;            /* ops_reduce.c */
  case 18: return (ref_code)odla_Softmax;              /* ops_reduce_axis.c */
  case 19: return (ref_code)odla_Resize;               /* ops_resize.c */
  case 20: return (ref_code)odla_RNN;                  /* ops_rnn.c */
  case 21: return (ref_code)odla_Cast;                 /* ops_unary_cast.c */
  case 22: return (ref_code)ref_plan;                  /* planner.c */
  case 23: return (ref_code)ref_is_float;              /* types.c */
  case 24: return (ref_code)odla_CreateValue;          /* runtime_interpret.c */
  case 25: return (ref_code)odla_StoreExecutable;      /* executable_io.c */
  case 26: return (ref_code)odla_BeginIf;              /* ops_control_flow.c */
  case 27: return (ref_code)odla_ExtLayerNorm;         /* ops_transformer.c */
  case 28: return (ref_code)odla_PostProcess;          /* ops_yolo.c */
  case 29: return (ref_code)odla_CustomOp;             /* ops_custom.c */
  default: return NULL;
  }
}

static int64_t ref_code_delta(ref_code f) {
  return (int64_t)((uintptr_t)f - (uintptr_t)(ref_code)odla_CreateComputation);
}

static ref_code ref_code_at(int64_t delta) {
  return (ref_code)((uintptr_t)(ref_code)odla_CreateComputation + (uintptr_t)delta);
}

static uint64_t ref_fnv1a(const unsigned char *p, size_t n, uint64_t h) {
  size_t i;
  for (i = 0; i < n; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static uint64_t ref_layout_signature(void) {
  uint64_t h = 1469598103934665603ull;
  int i;
  for (i = 0; ref_layout_probe(i); ++i) {
    int64_t d = ref_code_delta(ref_layout_probe(i));
    h = ref_fnv1a((const unsigned char *)&d, sizeof d, h);
  }
  return h;
}

void ref_declare_code_pointer(ref_node *node, size_t offset) {
  /* A builder bug, not an input problem: the offsets are compile-time constants. */
  if (node->num_code < (int)(sizeof node->code_at / sizeof node->code_at[0]))
    node->code_at[node->num_code++] = (unsigned short)offset;
  else
    ref_fail(ODLA_INTERNAL_LOGIC_ERR, node->op, "too many code pointers in params");
}

/* ---- Writing ------------------------------------------------------------------------ */

typedef struct {
  unsigned char *p;
  size_t len, cap;
  int failed;
} ref_writer;

static void ref_put(ref_writer *w, const void *data, size_t n) {
  if (w->failed)
    return;
  if (w->len + n > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    unsigned char *p;
    while (cap < w->len + n)
      cap *= 2;
    if (!(p = (unsigned char *)realloc(w->p, cap))) {
      w->failed = 1;
      return;
    }
    w->p = p;
    w->cap = cap;
  }
  if (n)
    memcpy(w->p + w->len, data, n);
  w->len += n;
}

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

static uint64_t ref_align_up(uint64_t n) { return (n + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN; }

/* Serializes a computation into w under `magic`: with its arena plan when `planned` (a
 * compiled computation), else with the plan's fields zero (offsets, uses, scratch offsets;
 * no shared buffers), for odla_StoreComputation, whose loader plans again. */
static odla_status ref_serialize(odla_computation comp, ref_writer *w, const char *magic,
                                 int planned) {
  uint64_t weights = 0, zero = 0;
  int i, k;
  unsigned char header[REF_EXE_HEADER];
  memset(header, 0, sizeof header);
  ref_put(w, header, sizeof header); /* filled in at the end */
  ref_put_u64(w, planned ? comp->arena_bytes : 0);
  ref_put_u32(w, (uint32_t)comp->num_values);
  ref_put_u32(w, (uint32_t)comp->num_nodes);
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    ref_put_u32(w, (uint32_t)v->kind);
    ref_put_u32(w, (uint32_t)v->is_output);
    ref_put_u32(w, (uint32_t)v->type.element_type);
    ref_put_i32(w, (int32_t)v->type.shape.size);
    for (k = 0; k < v->type.shape.size; ++k)
      ref_put_i64(w, v->type.shape.dims[k]);
    ref_put_u64(w, planned ? v->offset : 0);
    ref_put_i32(w, planned ? v->first_use : 0);
    ref_put_i32(w, planned ? v->last_use : 0);
    ref_put_i32(w, planned && v->shares ? v->shares->index : -1);
    ref_put_str(w, v->id);
    if (v->kind == REF_CONSTANT) {
      ref_put_u64(w, weights);
      ref_put_u64(w, ref_bytes(&v->type));
      weights = ref_align_up(weights + ref_bytes(&v->type));
    } else {
      ref_put_u64(w, zero);
      ref_put_u64(w, zero);
    }
  }
  for (i = 0; i < comp->num_nodes; ++i) {
    const ref_node *n = comp->nodes[i];
    ref_put_str(w, n->op);
    ref_put_i64(w, ref_code_delta((ref_code)n->run));
    ref_put_u32(w, (uint32_t)n->num_inputs);
    ref_put_u32(w, (uint32_t)n->num_outputs);
    for (k = 0; k < n->num_inputs; ++k)
      ref_put_i32(w, n->inputs[k] ? n->inputs[k]->index : -1);
    for (k = 0; k < n->num_outputs; ++k)
      ref_put_i32(w, n->outputs[k]->index);
    ref_put_u64(w, n->params_size);
    if (n->params_size) {
      size_t at = w->len;
      ref_put(w, n->params, n->params_size);
      for (k = 0; k < n->num_code && !w->failed; ++k) {
        ref_code f;
        int64_t d;
        memcpy(&f, w->p + at + n->code_at[k], sizeof f);
        d = ref_code_delta(f);
        memcpy(w->p + at + n->code_at[k], &d, sizeof d);
      }
    }
    ref_put_u32(w, (uint32_t)n->num_code);
    for (k = 0; k < n->num_code; ++k) {
      uint16_t at = n->code_at[k];
      ref_put(w, &at, sizeof at);
    }
    ref_put_u64(w, n->scratch_bytes);
    ref_put_u64(w, planned ? n->scratch_offset : 0);
    ref_put_i32(w, n->inplace_input);
  }
  ref_pad_to(w, REF_ALIGN);
  weights = w->len;
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    if (v->kind == REF_CONSTANT) {
      ref_put(w, v->data, ref_bytes(&v->type));
      ref_pad_to(w, REF_ALIGN);
    }
  }
  if (w->failed)
    return ODLA_MEM_ERROR;
  {
    uint32_t version = REF_EXE_VERSION, bom = REF_EXE_BOM;
    uint64_t build = REF_BUILD_ID, layout = ref_layout_signature(), total = w->len;
    uint64_t sum = ref_fnv1a(w->p + REF_EXE_HEADER, (size_t)weights - REF_EXE_HEADER,
                             1469598103934665603ull);
    memcpy(w->p, magic, 8);
    memcpy(w->p + 8, &version, 4);
    memcpy(w->p + 12, &bom, 4);
    memcpy(w->p + 16, &build, 8);
    memcpy(w->p + 24, &layout, 8);
    memcpy(w->p + 32, &total, 8);
    memcpy(w->p + 40, &sum, 8);
    memcpy(w->p + 48, &weights, 8);
  }
  return ODLA_SUCCESS;
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
  free(w->p);
  return s;
}

static int ref_storable_location(const char *func, odla_resource_location location) {
  if (location.location_type == ODLA_LOCATION_PATH ||
      location.location_type == ODLA_LOCATION_MEMORY)
    return 1;
  ref_report(ODLA_LOG_LEVEL_ERROR, func, "only PATH and MEMORY locations are supported");
  return 0;
}

odla_status odla_StoreExecutable(odla_resource_location location, odla_executable executable) {
  ref_writer w = {NULL, 0, 0, 0};
  odla_status s;
  if (!executable || !location.location)
    return ODLA_INVALID_PARAM;
  if (!ref_storable_location("StoreExecutable", location))
    return ODLA_INVALID_PARAM;
  s = ref_serialize(executable->comp, &w, REF_EXE_MAGIC, 1);
  if (s != ODLA_SUCCESS) {
    free(w.p);
    return s;
  }
  return ref_write_location("StoreExecutable", location, &w);
}

odla_status odla_ExtGetStoredExecutableBytes(odla_executable executable, odla_size_t *bytes) {
  ref_writer w = {NULL, 0, 0, 0};
  odla_status s;
  if (!executable || !bytes)
    return ODLA_INVALID_PARAM;
  s = ref_serialize(executable->comp, &w, REF_EXE_MAGIC, 1);
  if (s == ODLA_SUCCESS)
    *bytes = w.len;
  free(w.p);
  return s;
}

/* ---- Reading ------------------------------------------------------------------------ */

typedef struct {
  const unsigned char *p;
  size_t len, at;
  int bad;
} ref_reader;

static void ref_read(ref_reader *r, void *out, size_t n) {
  if (n == 0) /* out may then be NULL (a node without params), which memcpy must not get */
    return;
  if (r->bad || n > r->len - r->at) {
    r->bad = 1;
    memset(out, 0, n);
    return;
  }
  memcpy(out, r->p + r->at, n);
  r->at += n;
}

static uint32_t ref_get_u32(ref_reader *r) { uint32_t v; ref_read(r, &v, sizeof v); return v; }
static int32_t ref_get_i32(ref_reader *r) { int32_t v; ref_read(r, &v, sizeof v); return v; }
static uint64_t ref_get_u64(ref_reader *r) { uint64_t v; ref_read(r, &v, sizeof v); return v; }
static int64_t ref_get_i64(ref_reader *r) { int64_t v; ref_read(r, &v, sizeof v); return v; }

/* A NUL-terminated copy of a stored string of at most `max` bytes; NULL when bad. */
static char *ref_get_str(ref_reader *r, uint32_t max) {
  uint32_t n = ref_get_u32(r);
  char *s;
  if (r->bad || n > max || n > r->len - r->at || !(s = (char *)malloc((size_t)n + 1))) {
    r->bad = 1;
    return NULL;
  }
  memcpy(s, r->p + r->at, n);
  s[n] = '\0';
  r->at += n;
  return s;
}

/* What a loaded executable owns besides its computation. */
typedef struct {
  void *bytes_alloc; /* the file's bytes (weights are read in place), or NULL */
  void *mapped;      /* or the file's mapping, of mapped_bytes */
  size_t mapped_bytes;
  char **ops;        /* node op names */
  int num_ops;
} ref_loaded;

static void ref_free_storage(ref_loaded *l) {
  int i;
  for (i = 0; i < l->num_ops; ++i)
    free(l->ops[i]);
  free(l->ops);
  free(l->bytes_alloc);
#ifdef REF_HAVE_MMAP
  if (l->mapped)
    munmap(l->mapped, l->mapped_bytes);
#endif
  free(l);
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

/* What is being loaded: an executable (planned) or a computation (not planned). */
typedef struct {
  const char *magic, *func, *what;
  int planned;
} ref_format;

static const ref_format ref_executable_format = {REF_EXE_MAGIC, "LoadExecutable", "executable", 1};
static const ref_format ref_computation_format = {REF_COMP_MAGIC, "LoadComputation",
                                                  "stored computation", 0};

static odla_status ref_refuse(const ref_format *fmt, odla_status s, const char *why) {
  ref_report(ODLA_LOG_LEVEL_ERROR, fmt->func, "%s: %s", fmt->what, why);
  return s;
}

/* Checks the header of `n` bytes at p (n >= the header). */
static odla_status ref_check_header(const ref_format *fmt, const unsigned char *p,
                                    uint64_t *total) {
  uint32_t version, bom;
  uint64_t build, layout;
  memcpy(&version, p + 8, 4);
  memcpy(&bom, p + 12, 4);
  memcpy(&build, p + 16, 8);
  memcpy(&layout, p + 24, 8);
  memcpy(total, p + 32, 8);
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
    char msg[128];
    sprintf(msg, "format version %u; this backend reads version %u", (unsigned)version,
            REF_EXE_VERSION);
    return ref_refuse(fmt, ODLA_INVALID_PARAM, msg);
  }
  if (build != REF_BUILD_ID || layout != ref_layout_signature())
    return ref_refuse(fmt, ODLA_INVALID_PARAM,
                      "stored by another build or link of libodla_reference; store it again "
                      "with this one");
  if (*total < REF_EXE_HEADER)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt header (size)");
  return ODLA_SUCCESS;
}

/* Whether a shape's byte count fits comfortably (no overflow in ref_bytes). */
static int ref_sane_type(const odla_value_type *t) {
  uint64_t n = 1;
  int i;
  if (ref_elem_size(t->element_type) == 0 || t->shape.size < 0 ||
      t->shape.size > ODLA_MAX_DIMENSION)
    return 0;
  for (i = 0; i < t->shape.size; ++i) {
    if (t->shape.dims[i] < 0 || (t->shape.dims[i] > 0 && n > (1ull << 48) / (uint64_t)t->shape.dims[i]))
      return 0;
    n *= (uint64_t)t->shape.dims[i];
  }
  return 1;
}

/* Builds the computation from a checked file image `p` of `len` bytes (weights read in place). */
static odla_status ref_deserialize(const ref_format *fmt, const unsigned char *p, size_t len,
                                   odla_computation comp, ref_loaded *l) {
  ref_reader r = {NULL, 0, REF_EXE_HEADER, 0};
  uint64_t weights, arena;
  uint32_t nv, nn, i, k;
  int32_t *shares;
  r.p = p;
  r.len = len;
  memcpy(&weights, p + 48, 8);
  if (weights > len || weights % REF_ALIGN != 0)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt header (weights offset)");
  arena = ref_get_u64(&r);
  nv = ref_get_u32(&r);
  nn = ref_get_u32(&r);
  if (r.bad || nv > len / 16 || nn > len / 16)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt counts");
  comp->values = (odla_value *)calloc(nv ? nv : 1, sizeof *comp->values);
  comp->nodes = (ref_node **)calloc(nn ? nn : 1, sizeof *comp->nodes);
  l->ops = (char **)calloc(nn ? nn : 1, sizeof *l->ops);
  shares = (int32_t *)calloc(nv ? nv : 1, sizeof *shares);
  if (!comp->values || !comp->nodes || !l->ops || !shares) {
    free(shares);
    return ODLA_MEM_ERROR;
  }
  comp->cap_values = (int)(nv ? nv : 1);
  comp->cap_nodes = (int)(nn ? nn : 1);
  comp->arena_bytes = (size_t)arena;
  for (i = 0; i < nv && !r.bad; ++i) {
    odla_value v = (odla_value)calloc(1, sizeof *v);
    uint64_t woff, wbytes;
    if (!v)
      break;
    comp->values[comp->num_values++] = v;
    v->index = (int)i;
    v->kind = (ref_value_kind)ref_get_u32(&r);
    v->is_output = (int)ref_get_u32(&r);
    v->type.element_type = (odla_element_type)ref_get_u32(&r);
    v->type.shape.size = ref_get_i32(&r);
    if (v->kind > REF_RESULT || v->type.shape.size < 0 || v->type.shape.size > ODLA_MAX_DIMENSION) {
      r.bad = 1;
      break;
    }
    for (k = 0; k < (uint32_t)v->type.shape.size; ++k)
      v->type.shape.dims[k] = ref_get_i64(&r);
    v->offset = (size_t)ref_get_u64(&r);
    v->first_use = ref_get_i32(&r);
    v->last_use = ref_get_i32(&r);
    shares[i] = ref_get_i32(&r);
    v->id = ref_get_str(&r, 1u << 16);
    woff = ref_get_u64(&r);
    wbytes = ref_get_u64(&r);
    if (r.bad || !ref_sane_type(&v->type) || shares[i] < -1 || shares[i] >= (int32_t)nv ||
        (!fmt->planned && shares[i] != -1)) {
      r.bad = 1;
      break;
    }
    if (v->kind == REF_CONSTANT) {
      if (wbytes != ref_bytes(&v->type) || woff % REF_ALIGN != 0 || woff > len - weights ||
          wbytes > len - weights - woff) {
        r.bad = 1;
        break;
      }
      v->data = p + weights + woff;
    } else if (fmt->planned && v->kind == REF_RESULT && !v->is_output && shares[i] < 0 &&
               (v->offset > arena || ref_bytes(&v->type) > arena - v->offset)) {
      r.bad = 1;
      break;
    }
  }
  for (i = 0; i < nn && !r.bad; ++i) {
    ref_node *n = (ref_node *)calloc(1, sizeof *n);
    uint32_t ni, no;
    uint64_t ps;
    if (!n)
      break;
    comp->nodes[comp->num_nodes++] = n;
    n->index = (int)i;
    l->ops[l->num_ops++] = ref_get_str(&r, 256);
    n->op = l->ops[l->num_ops - 1];
    n->run = (ref_kernel)ref_code_at(ref_get_i64(&r));
    ni = ref_get_u32(&r);
    no = ref_get_u32(&r);
    if (r.bad || ni > 2 * ODLA_MAX_OUTPUTS || no > 2 * ODLA_MAX_OUTPUTS ||
        !(n->inputs = (odla_value *)calloc((size_t)(ni + no) + 1, sizeof(odla_value)))) {
      r.bad = 1;
      break;
    }
    n->num_inputs = (int)ni;
    n->num_outputs = (int)no;
    n->outputs = n->inputs + ni;
    for (k = 0; k < ni + no; ++k) {
      int32_t idx = ref_get_i32(&r);
      if (idx < (k < ni ? -1 : 0) || idx >= (int32_t)nv) {
        r.bad = 1;
        break;
      }
      n->inputs[k] = idx < 0 ? NULL : comp->values[idx];
      if (k >= ni) { /* a result: produced by this node only */
        if (n->inputs[k]->kind != REF_RESULT || n->inputs[k]->node) {
          r.bad = 1;
          break;
        }
        n->inputs[k]->node = n;
      }
    }
    ps = ref_get_u64(&r);
    if (r.bad || ps > r.len - r.at || (ps && !(n->params = malloc((size_t)ps)))) {
      r.bad = 1;
      break;
    }
    n->params_size = (size_t)ps;
    ref_read(&r, n->params, (size_t)ps);
    n->num_code = (int)ref_get_u32(&r);
    if (n->num_code < 0 || n->num_code > (int)(sizeof n->code_at / sizeof n->code_at[0])) {
      r.bad = 1;
      break;
    }
    for (k = 0; k < (uint32_t)n->num_code; ++k) {
      uint16_t at;
      int64_t d;
      ref_code f;
      ref_read(&r, &at, sizeof at);
      if (r.bad || (size_t)at + sizeof d > ps) {
        r.bad = 1;
        break;
      }
      n->code_at[k] = at;
      memcpy(&d, (unsigned char *)n->params + at, sizeof d);
      f = ref_code_at(d);
      memcpy((unsigned char *)n->params + at, &f, sizeof f);
    }
    n->scratch_bytes = (size_t)ref_get_u64(&r);
    n->scratch_offset = (size_t)ref_get_u64(&r);
    n->inplace_input = ref_get_i32(&r);
    if (r.bad || (fmt->planned && (n->scratch_offset > arena ||
                                   n->scratch_bytes > arena - n->scratch_offset)) ||
        n->inplace_input < -1 || n->inplace_input >= (int)ni)
      r.bad = 1;
  }
  for (i = 0; i < (uint32_t)comp->num_values && !r.bad; ++i) {
    odla_value v = comp->values[i];
    if (v->kind == REF_RESULT && !v->node)
      r.bad = 1; /* a result nothing produces */
    else if (shares[i] >= 0)
      v->shares = comp->values[shares[i]];
  }
  free(shares);
  if (r.bad || comp->num_values != (int)nv || comp->num_nodes != (int)nn || r.at > weights)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt or truncated");
  /* Custom ops' kernels live in the application: found again by name (ops_custom.c). */
  for (i = 0; i < nn; ++i)
    if (strcmp(comp->nodes[i]->op, "CustomOp") == 0) {
      odla_status s = ref_custom_relink(comp->nodes[i]);
      if (s != ODLA_SUCCESS)
        return s;
    }
  comp->compiled = fmt->planned;
  return ODLA_SUCCESS;
}

#ifndef REF_HAVE_MMAP
/* Reads the file at `path` into 64-byte aligned memory after checking its header. */
static odla_status ref_read_file(const ref_format *fmt, const char *path, unsigned char **alloc,
                                 unsigned char **bytes,
                                 size_t *len) {
  unsigned char head[REF_EXE_HEADER];
  uint64_t total;
  odla_status s;
  FILE *f = fopen(path, "rb");
  unsigned char *mem;
  if (!f) {
    ref_report(ODLA_LOG_LEVEL_ERROR, fmt->func, "cannot open '%s'", path);
    return ODLA_FILE_NOT_EXIST;
  }
  if (fread(head, 1, sizeof head, f) != sizeof head) {
    fclose(f);
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated (no header)");
  }
  if ((s = ref_check_header(fmt, head, &total)) != ODLA_SUCCESS) {
    fclose(f);
    return s;
  }
  if (total > ((uint64_t)1 << 46) || !(mem = (unsigned char *)malloc((size_t)total + REF_ALIGN))) {
    fclose(f);
    return total > ((uint64_t)1 << 46)
               ? ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt header (size)")
               : ODLA_MEM_ERROR;
  }
  *alloc = mem;
  *bytes = mem + (REF_ALIGN - (uintptr_t)mem % REF_ALIGN) % REF_ALIGN;
  memcpy(*bytes, head, sizeof head);
  if (fread(*bytes + sizeof head, 1, (size_t)total - sizeof head, f) != (size_t)total - sizeof head ||
      fgetc(f) != EOF) {
    fclose(f);
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated or overlong file");
  }
  fclose(f);
  *len = (size_t)total;
  return ODLA_SUCCESS;
}
#endif

#ifdef REF_HAVE_MMAP
/* Maps the file at `path` (read-only, private) after checking its header and size. */
static odla_status ref_map_file(const ref_format *fmt, const char *path, void **mapped,
                                size_t *len) {
  struct stat st;
  uint64_t total;
  odla_status s;
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
  if ((uint64_t)st.st_size < REF_EXE_HEADER) {
    close(fd);
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated (no header)");
  }
  p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return ref_refuse(fmt, ODLA_FAILURE, "cannot map the file");
  s = ref_check_header(fmt, (const unsigned char *)p, &total);
  if (s == ODLA_SUCCESS && total != (uint64_t)st.st_size)
    s = ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated or overlong file");
  if (s != ODLA_SUCCESS) {
    munmap(p, (size_t)st.st_size);
    return s;
  }
  *mapped = p;
  *len = (size_t)st.st_size;
  return ODLA_SUCCESS;
}
#endif

/* Reads the image at `location` (a PATH file, mapped where possible, or a MEMORY buffer,
 * copied when not 64-byte aligned) and checks its header, size and checksum. On success the
 * caller owns *alloc and *mapped (of *len bytes), either of which may be NULL. */
static odla_status ref_load_image(const ref_format *fmt, odla_resource_location location,
                                  unsigned char **alloc, void **mapped, unsigned char **bytes,
                                  size_t *len) {
  uint64_t total, sum;
  odla_status s;
  *alloc = NULL;
  *mapped = NULL;
  *bytes = NULL;
  *len = 0;
  if (location.location_type == ODLA_LOCATION_PATH) {
#ifdef REF_HAVE_MMAP
    s = ref_map_file(fmt, (const char *)location.location, mapped, len);
    *bytes = (unsigned char *)*mapped;
#else
    s = ref_read_file(fmt, (const char *)location.location, alloc, bytes, len);
#endif
  } else if (location.location_type == ODLA_LOCATION_MEMORY) {
    *bytes = (unsigned char *)(uintptr_t)location.location;
    if (location.size < REF_EXE_HEADER)
      s = ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated (no header)");
    else if ((s = ref_check_header(fmt, *bytes, &total)) == ODLA_SUCCESS && total != location.size)
      s = ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated or overlong in memory");
    *len = (size_t)location.size;
    if (s == ODLA_SUCCESS && (uintptr_t)*bytes % REF_ALIGN != 0) {
      /* Weights are read in place and kernels expect them aligned: copy. */
      if (!(*alloc = (unsigned char *)malloc(*len + REF_ALIGN)))
        s = ODLA_MEM_ERROR;
      else {
        *bytes = *alloc + (REF_ALIGN - (uintptr_t)*alloc % REF_ALIGN) % REF_ALIGN;
        memcpy(*bytes, location.location, *len);
      }
    }
  } else {
    s = ref_refuse(fmt, ODLA_INVALID_PARAM, "only PATH and MEMORY locations are supported");
  }
  if (s == ODLA_SUCCESS) {
    uint64_t weights;
    memcpy(&sum, *bytes + 40, 8);
    memcpy(&weights, *bytes + 48, 8);
    if (weights < REF_EXE_HEADER || weights > *len)
      s = ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt header (weights offset)");
    else if (ref_fnv1a(*bytes + REF_EXE_HEADER, (size_t)weights - REF_EXE_HEADER,
                       1469598103934665603ull) != sum)
      s = ref_refuse(fmt, ODLA_INVALID_PARAM, "checksum mismatch: corrupt");
  }
  if (s != ODLA_SUCCESS) {
    free(*alloc);
    *alloc = NULL;
#ifdef REF_HAVE_MMAP
    if (*mapped)
      munmap(*mapped, *len);
    *mapped = NULL;
#endif
  }
  return s;
}

/* Frees an image ref_load_image read, when nothing took it over. */
static void ref_drop_image(unsigned char *alloc, void *mapped, size_t len) {
  free(alloc);
#ifdef REF_HAVE_MMAP
  if (mapped)
    munmap(mapped, len);
#else
  (void)mapped;
  (void)len;
#endif
}

odla_status odla_LoadExecutable(odla_resource_location location, odla_device device,
                                odla_executable *executable) {
  const ref_format *fmt = &ref_executable_format;
  unsigned char *alloc, *bytes;
  void *mapped;
  size_t len;
  odla_status s;
  odla_computation comp;
  ref_loaded *l;
  (void)device;
  if (!executable || !location.location)
    return ODLA_INVALID_PARAM;
  *executable = NULL;
  if ((s = ref_load_image(fmt, location, &alloc, &mapped, &bytes, &len)) != ODLA_SUCCESS)
    return s;
  comp = (odla_computation)calloc(1, sizeof *comp);
  l = (ref_loaded *)calloc(1, sizeof *l);
  *executable = (odla_executable)calloc(1, sizeof **executable);
  if (!comp || !l || !*executable) {
    free(comp);
    free(l);
    free(*executable);
    *executable = NULL;
    ref_drop_image(alloc, mapped, len);
    return ODLA_MEM_ERROR;
  }
  l->bytes_alloc = alloc;
  l->mapped = mapped;
  l->mapped_bytes = len;
  (*executable)->comp = comp;
  (*executable)->storage = l;
  s = ref_deserialize(fmt, bytes, len, comp, l);
  if (s != ODLA_SUCCESS) {
    odla_DestroyExecutable(*executable);
    *executable = NULL;
  }
  return s;
}

/* ---- Stored computations -------------------------------------------------------------- */

odla_status odla_StoreComputation(odla_resource_location location, odla_computation computation) {
  ref_writer w = {NULL, 0, 0, 0};
  odla_status s;
  if (!computation || !location.location)
    return ODLA_INVALID_PARAM;
  if (!ref_storable_location("StoreComputation", location))
    return ODLA_INVALID_PARAM;
  if (computation->error != ODLA_SUCCESS) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "StoreComputation",
               "the computation has a failed builder (status %d)", (int)computation->error);
    return computation->error;
  }
  if (computation->interpret || computation->regions) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "StoreComputation", "%s",
               computation->interpret
                   ? "an interpret-mode computation has run its ops: there is no graph to store"
                   : "an odla_BeginIf or odla_BeginLoop is still open");
    return ODLA_INVALID_PARAM;
  }
  s = ref_serialize(computation, &w, REF_COMP_MAGIC, 0);
  if (s != ODLA_SUCCESS) {
    free(w.p);
    return s;
  }
  return ref_write_location("StoreComputation", location, &w);
}

odla_status odla_LoadComputation(odla_resource_location location, odla_computation *computation) {
  const ref_format *fmt = &ref_computation_format;
  unsigned char *alloc, *bytes;
  void *mapped;
  size_t len;
  odla_status s;
  ref_loaded *l;
  if (!computation || !location.location)
    return ODLA_INVALID_PARAM;
  *computation = NULL;
  if ((s = ref_load_image(fmt, location, &alloc, &mapped, &bytes, &len)) != ODLA_SUCCESS)
    return s;
  l = (ref_loaded *)calloc(1, sizeof *l);
  if (!l || (s = odla_CreateComputation(computation)) != ODLA_SUCCESS) {
    free(l);
    ref_drop_image(alloc, mapped, len);
    return l ? s : ODLA_MEM_ERROR;
  }
  l->bytes_alloc = alloc;
  l->mapped = mapped;
  l->mapped_bytes = len;
  (*computation)->loaded = l;
  s = ref_deserialize(fmt, bytes, len, *computation, l);
  if (s != ODLA_SUCCESS) {
    odla_DestroyComputation(*computation);
    *computation = NULL;
  }
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
  return executable
             ? odla_GetOutputFromComputationByIdx(executable->comp, output_idx, output_value)
             : ODLA_INVALID_PARAM;
}

/* ---- Constants arrays ------------------------------------------------------------------ */

/* A constants array is a set of constants by id: made from the current computation's
 * constants (odla_CreateConstantsArray copies them), stored to and loaded from a file, and
 * given to odla_AsyncLaunchExecutable, whose execution then reads each array entry instead
 * of the executable's constant of the same id: one executable, several sets of weights. An
 * entry must match a constant that a kernel reads, in element type and shape; integer and
 * bool entries must also keep the executable's values (they may size the plan). 
 * File format (version 1, the storing machine's byte order, which is checked; independent of
 * the backend's build, as it holds data only): a 64-byte header "ODLAREFK", u32 version,
 * u32 0x01020304, u64 0, u64 0, u64 file bytes, u64 FNV-1a of bytes 64 up to the data, u64
 * data offset, u64 0; u32 entries; each entry: string id, u32 element type, i32 rank,
 * i64 dims[rank], u64 data offset (from the data offset, 64-byte aligned), u64 bytes; then
 * the data. */
typedef struct {
  char *id;
  odla_value_type type;
  const void *data; /* 64-byte aligned, in the array's block */
} ref_constant_entry;

struct _odla_constants_array {
  int num;
  ref_constant_entry *entries;
  void *block; /* malloc'd: the copied data, or the loaded file's bytes */
};

static const ref_format ref_constants_format = {REF_CONST_MAGIC, "LoadConstantsArray",
                                                "constants array", 0};

odla_status odla_DestroyConstantsArray(odla_constants_array constants_array) {
  int i;
  if (!constants_array)
    return ODLA_INVALID_PARAM;
  for (i = 0; i < constants_array->num; ++i)
    free(constants_array->entries[i].id);
  free(constants_array->entries);
  free(constants_array->block);
  free(constants_array);
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
  if (!(a = (odla_constants_array)calloc(1, sizeof *a)) ||
      !(a->entries = (ref_constant_entry *)calloc((size_t)(n ? n : 1), sizeof *a->entries)) ||
      !(a->block = malloc(total + REF_ALIGN))) {
    if (a)
      free(a->entries);
    free(a);
    return ODLA_MEM_ERROR;
  }
  base = (unsigned char *)a->block + (REF_ALIGN - (uintptr_t)a->block % REF_ALIGN) % REF_ALIGN;
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    ref_constant_entry *e = &a->entries[a->num];
    size_t bytes = ref_bytes(&v->type);
    if (v->kind != REF_CONSTANT)
      continue;
    if (!(e->id = (char *)malloc(strlen(v->id) + 1))) {
      odla_DestroyConstantsArray(a);
      return ODLA_MEM_ERROR;
    }
    strcpy(e->id, v->id);
    e->type = v->type;
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
  unsigned char header[REF_EXE_HEADER];
  uint64_t offset = 0, data;
  int i, k;
  if (!file_name || !constants_array)
    return ODLA_INVALID_PARAM;
  memset(header, 0, sizeof header);
  ref_put(&w, header, sizeof header); /* filled in at the end */
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
  if (!w.failed) {
    uint32_t version = REF_EXE_VERSION, bom = REF_EXE_BOM;
    uint64_t total = w.len;
    uint64_t sum = ref_fnv1a(w.p + REF_EXE_HEADER, (size_t)data - REF_EXE_HEADER,
                             1469598103934665603ull);
    memcpy(w.p, REF_CONST_MAGIC, 8);
    memcpy(w.p + 8, &version, 4);
    memcpy(w.p + 12, &bom, 4);
    memcpy(w.p + 32, &total, 8);
    memcpy(w.p + 40, &sum, 8);
    memcpy(w.p + 48, &data, 8);
  }
  location.location_type = ODLA_LOCATION_PATH;
  location.location = file_name;
  location.size = 0;
  return ref_write_location("StoreConstantsArray", location, &w);
}

/* Parses a checked file image (`len` bytes at p, which the array then owns) into `a`. */
static odla_status ref_parse_constants(const unsigned char *p, size_t len, odla_constants_array a) {
  const ref_format *fmt = &ref_constants_format;
  ref_reader r = {NULL, 0, REF_EXE_HEADER, 0};
  uint64_t data, sum;
  uint32_t n, i, k;
  int j;
  r.p = p;
  r.len = len;
  memcpy(&sum, p + 40, 8);
  memcpy(&data, p + 48, 8);
  if (data < REF_EXE_HEADER || data > len || data % REF_ALIGN != 0)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt header (data offset)");
  if (ref_fnv1a(p + REF_EXE_HEADER, (size_t)data - REF_EXE_HEADER, 1469598103934665603ull) != sum)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "checksum mismatch: corrupt");
  n = ref_get_u32(&r);
  if (r.bad || n > len / 16)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt count");
  if (!(a->entries = (ref_constant_entry *)calloc(n ? n : 1, sizeof *a->entries)))
    return ODLA_MEM_ERROR;
  for (i = 0; i < n && !r.bad; ++i) {
    ref_constant_entry *e = &a->entries[i];
    uint64_t off, bytes;
    if (!(e->id = ref_get_str(&r, 1u << 16)))
      break;
    ++a->num;
    e->type.element_type = (odla_element_type)ref_get_u32(&r);
    e->type.shape.size = ref_get_i32(&r);
    if (r.bad || e->type.shape.size < 0 || e->type.shape.size > ODLA_MAX_DIMENSION) {
      r.bad = 1;
      break;
    }
    for (k = 0; k < (uint32_t)e->type.shape.size; ++k)
      e->type.shape.dims[k] = ref_get_i64(&r);
    off = ref_get_u64(&r);
    bytes = ref_get_u64(&r);
    if (r.bad || !ref_sane_type(&e->type) || bytes != ref_bytes(&e->type) ||
        off % REF_ALIGN != 0 || off > len - data || bytes > len - data - off) {
      r.bad = 1;
      break;
    }
    e->data = p + data + off;
    for (j = 0; j < (int)i; ++j)
      if (strcmp(a->entries[j].id, e->id) == 0) {
        r.bad = 1;
        break;
      }
  }
  if (r.bad || a->num != (int)n || r.at > data)
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "corrupt or truncated (entries)");
  return ODLA_SUCCESS;
}

odla_status odla_LoadConstantsArray(const odla_char *file_name,
                                    odla_constants_array *constants_array) {
  const ref_format *fmt = &ref_constants_format;
  unsigned char head[REF_EXE_HEADER], *bytes;
  uint32_t version, bom;
  uint64_t total;
  odla_constants_array a;
  odla_status s;
  long size;
  FILE *f;
  if (!file_name || !constants_array)
    return ODLA_INVALID_PARAM;
  *constants_array = NULL;
  if (!(f = fopen(file_name, "rb"))) {
    ref_report(ODLA_LOG_LEVEL_ERROR, fmt->func, "cannot open '%s'", file_name);
    return ODLA_FILE_NOT_EXIST;
  }
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "not a regular file");
  }
  if ((size_t)size < REF_EXE_HEADER || fread(head, 1, sizeof head, f) != sizeof head) {
    fclose(f);
    return ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated (no header)");
  }
  memcpy(&version, head + 8, 4);
  memcpy(&bom, head + 12, 4);
  memcpy(&total, head + 32, 8);
  s = ODLA_SUCCESS;
  if (memcmp(head, REF_CONST_MAGIC, 8) != 0)
    s = ref_refuse(fmt, ODLA_INVALID_PARAM, "not a constants array of libodla_reference "
                                            "(bad magic)");
  else if (bom != REF_EXE_BOM)
    s = ref_refuse(fmt, ODLA_INVALID_PARAM, "stored on a machine of another byte order");
  else if (version != REF_EXE_VERSION)
    s = ref_refuse(fmt, ODLA_INVALID_PARAM, "another format version");
  else if (total != (uint64_t)size || total > ((uint64_t)1 << 46))
    s = ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated or overlong file");
  if (s != ODLA_SUCCESS) {
    fclose(f);
    return s;
  }
  if (!(a = (odla_constants_array)calloc(1, sizeof *a)) ||
      !(a->block = malloc((size_t)size + REF_ALIGN))) {
    free(a);
    fclose(f);
    return ODLA_MEM_ERROR;
  }
  bytes = (unsigned char *)a->block + (REF_ALIGN - (uintptr_t)a->block % REF_ALIGN) % REF_ALIGN;
  memcpy(bytes, head, sizeof head);
  if (fread(bytes + sizeof head, 1, (size_t)size - sizeof head, f) != (size_t)size - sizeof head)
    s = ref_refuse(fmt, ODLA_INVALID_PARAM, "truncated file");
  fclose(f);
  if (s == ODLA_SUCCESS)
    s = ref_parse_constants(bytes, (size_t)size, a);
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
  read = (unsigned char *)calloc((size_t)comp->num_values + 1, 1);
  t = (const void **)calloc((size_t)comp->num_values + 1, sizeof *t);
  if (!read || !t) {
    free(read);
    free(t);
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
    if (!v || v->kind != REF_CONSTANT || !read[v->index] || v->type.element_type !=
        e->type.element_type || !ref_same_shape(&v->type.shape, &e->type.shape)) {
      if (!v || v->kind != REF_CONSTANT)
        ref_report(ODLA_LOG_LEVEL_ERROR, func, "the executable has no constant '%s'", e->id);
      else if (!read[v->index])
        ref_report(ODLA_LOG_LEVEL_ERROR, func,
                   "constant '%s' is not read when the executable runs (its data shaped the "
                   "graph when it was built): it cannot be replaced", e->id);
      else
        ref_report(ODLA_LOG_LEVEL_ERROR, func, "constant '%s' is %s%s; the array holds %s%s",
                   e->id, ref_type_name(v->type.element_type),
                   ref_shape_str(&v->type.shape, s1, sizeof s1),
                   ref_type_name(e->type.element_type),
                   ref_shape_str(&e->type.shape, s2, sizeof s2));
      free(read);
      free(t);
      return ODLA_INVALID_PARAM;
    }
    /* Integer and bool constants may size the plan (a Loop's trip count, axes, shapes):
     * they must keep their values; float constants are the weights an array replaces. */
    if (!ref_is_float(e->type.element_type) && ref_bytes(&e->type) &&
        memcmp(e->data, v->data, ref_bytes(&e->type)) != 0) {
      ref_report(ODLA_LOG_LEVEL_ERROR, func,
                 "constant '%s' (%s) differs from the executable's: only float constants may "
                 "change (integer ones may have shaped the plan)", e->id,
                 ref_type_name(e->type.element_type));
      free(read);
      free(t);
      return ODLA_INVALID_PARAM;
    }
    t[v->index] = e->data;
  }
  free(read);
  *table = t;
  return ODLA_SUCCESS;
}
