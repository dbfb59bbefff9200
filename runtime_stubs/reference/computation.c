/* computation.c: computations, values, contexts, binding and execution of the reference
 * backend, and the logging it reports errors through. */
#include "calls.h"
#include "ref.h"
#include "ref_isa.h"
#include "ref_types.h"
#include "threads.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The current computation of this thread: ODLA's op builders take no computation handle.
 * Without threads (ODLA_REFERENCE_NO_THREADS; bare metal has no thread-local storage) a plain
 * static. */
#if defined(__GNUC__) && !defined(ODLA_REFERENCE_NO_THREADS)
static __thread odla_computation ref_current_comp;
#else
static odla_computation ref_current_comp; /* no thread-local storage: one builder thread */
#endif

static odla_log_level ref_log_level = ODLA_LOG_LEVEL_ERROR;
static odla_logging_func ref_logger;

static void ref_log(odla_log_level level, const char *func, const char *msg) {
  if (level > ref_log_level || level == ODLA_LOG_LEVEL_OFF)
    return;
  if (ref_logger)
    ref_logger(__FILE__, __LINE__, func, level, msg);
#ifndef ODLA_REFERENCE_NO_STDIO
  else
    fprintf(stderr, "odla_reference: %s: %s\n", func, msg);
#endif
}

odla_status odla_SetLogLevel(odla_log_level level) {
  ref_log_level = level;
  return ODLA_SUCCESS;
}

odla_status odla_SetLogger(odla_logging_func logger) {
  ref_logger = logger;
  return ODLA_SUCCESS;
}

odla_logging_func odla_GetLogger(void) { return ref_logger; }

const char *odla_GetVersionString(void) { return "odla_reference 0.1.0 (ODLA 0.5)"; }

odla_computation ref_current(void) { return ref_current_comp; }

void ref_set_current(odla_computation comp) { ref_current_comp = comp; }

odla_value ref_fail(odla_status status, const char *op, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  ref_vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (ref_current_comp && ref_current_comp->error == ODLA_SUCCESS)
    ref_current_comp->error = status;
  if (ref_current_comp && ref_current_comp->replaying) { /* a stored file's call */
    char where[256];
    ref_replay_where(ref_current_comp->replaying, where, sizeof where);
    ref_report(ODLA_LOG_LEVEL_ERROR, ref_current_comp->replaying->func, "%s: %s: %s", where, op,
               msg);
  } else {
    ref_log(ODLA_LOG_LEVEL_ERROR, op, msg);
  }
  return NULL;
}

void ref_report(odla_log_level level, const char *func, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  ref_vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ref_log(level, func, msg);
}

static char *ref_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = (char *)ref_malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

/* ---- Types and shapes -------------------------------------------------------------- */

size_t ref_elem_size(odla_element_type t) {
  if (ref_is_ext_type(t))
    return 1; /* odla_ext_types.h */
  switch (t) {
  case ODLA_STRING:
    return sizeof(odla_string); /* odla_ext_string.h */
  case ODLA_INT8:
  case ODLA_UINT8:
  case ODLA_QINT8:
  case ODLA_QUINT8:
  case ODLA_BOOL:
    return 1;
  case ODLA_INT16:
  case ODLA_UINT16:
  case ODLA_QINT16:
  case ODLA_QUINT16:
  case ODLA_FLOAT16:
  case ODLA_BFLOAT16:
    return 2;
  case ODLA_INT32:
  case ODLA_UINT32:
  case ODLA_QINT32:
  case ODLA_QUINT32:
  case ODLA_FLOAT32:
    return 4;
  case ODLA_INT64:
  case ODLA_UINT64:
  case ODLA_QINT64:
  case ODLA_QUINT64:
  case ODLA_FLOAT64:
    return 8;
  default:
    return 0;
  }
}

const char *ref_type_name(odla_element_type t) {
  static const char *const names[] = {
      "int8",    "int16",    "int32",   "int64",   "uint8",  "uint16",  "uint32",  "uint64",
      "qint8",   "qint16",   "qint32",  "qint64",  "quint8", "quint16", "quint32", "quint64",
      "float16", "bfloat16", "float32", "float64", "bool",   "string"};
  static const char *const ext[] = {
      "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float8e8m0",
      "float4e2m1",   "int4",           "uint4",      "int2",           "uint2"};
  if (ref_is_ext_type(t))
    return ext[t - ODLA_EXT_TYPE_BASE];
  return (unsigned)t <= ODLA_STRING ? names[t] : "?";
}

int64_t ref_count(const odla_value_shape *s) {
  int64_t n = 1;
  int i;
  for (i = 0; i < s->size; ++i)
    n *= s->dims[i];
  return n;
}

size_t ref_bytes(const odla_value_type *t) {
  return (size_t)ref_count(&t->shape) * ref_elem_size(t->element_type);
}

int ref_same_shape(const odla_value_shape *a, const odla_value_shape *b) {
  int i;
  if (a->size != b->size)
    return 0;
  for (i = 0; i < a->size; ++i)
    if (a->dims[i] != b->dims[i])
      return 0;
  return 1;
}

const char *ref_shape_str(const odla_value_shape *s, char *buf, size_t cap) {
  size_t len = 0;
  int i;
  len += (size_t)ref_snprintf(buf, cap, "[");
  for (i = 0; i < s->size && len < cap; ++i)
    len +=
        (size_t)ref_snprintf(buf + len, cap - len, "%s%lld", i ? "," : "", (long long)s->dims[i]);
  if (len < cap)
    ref_snprintf(buf + len, cap - len, "]");
  return buf;
}

int ref_shape_conflicts(const odla_value_shape *given, const odla_value_shape *inferred) {
  return given->size >= 0 && !ref_same_shape(given, inferred);
}

int ref_type_bytes(const odla_value_type *t, uint64_t *bytes) {
  uint64_t n = ref_elem_size(t->element_type);
  int i, empty = 0;
  if (n == 0 || t->shape.size < 0 || t->shape.size > ODLA_MAX_DIMENSION)
    return 0;
  /* The non-zero dims too must fit: ref_count multiplies them all, in any order. */
  for (i = 0; i < t->shape.size; ++i) {
    uint64_t d = (uint64_t)t->shape.dims[i];
    if (t->shape.dims[i] < 0 || (d != 0 && n > REF_MAX_VALUE_BYTES / d))
      return 0;
    if (d == 0)
      empty = 1;
    else
      n *= d;
  }
  *bytes = empty ? 0 : n;
  return 1;
}

int ref_result_fits(const char *op, const odla_value_type *out) {
  uint64_t bytes;
  char s[128];
  if (ref_type_bytes(out, &bytes))
    return 1;
  ref_fail(ODLA_INVALID_PARAM, op, "the result %s %s holds more than 2^48 bytes",
           ref_type_name(out->element_type), ref_shape_str(&out->shape, s, sizeof s));
  return 0;
}

static int ref_valid_type(const odla_value_type *t) {
  uint64_t bytes;
  return ref_type_bytes(t, &bytes);
}

/* ---- Computations and values ------------------------------------------------------- */

odla_status odla_CreateComputation(odla_computation *computation) {
  odla_computation c;
  if (!computation)
    return ODLA_INVALID_PARAM;
  c = (odla_computation)ref_calloc(1, sizeof *c);
  if (!c)
    return ODLA_MEM_ERROR;
  ref_current_comp = c;
  *computation = c;
  ref_count_computation(1);
  return ODLA_SUCCESS;
}

odla_status odla_DestroyComputation(odla_computation comp) {
  int i;
  if (!comp)
    return ODLA_INVALID_PARAM;
  for (i = 0; i < comp->num_values; ++i) {
    ref_release_held(comp->values[i]);
    if (!comp->static_ids)
      ref_free((void *)comp->values[i]->id);
    ref_value_free(comp->values[i]);
  }
  for (i = 0; i < comp->num_nodes; ++i) {
    if (comp->nodes[i]->prepare)
      comp->nodes[i]->prepare(comp->nodes[i], 1);
    ref_node_free(comp->nodes[i]);
  }
  ref_free(comp->values);
  ref_free(comp->nodes);
  ref_free_call_log(comp);
  ref_free_regions(comp);
  ref_free_loaded_computation(comp);
  ref_profile_forget(comp);
  ref_string_pool_free(&comp->strings);
  for (i = 0; i < comp->num_made_ids; ++i)
    ref_free(comp->made_ids[i]);
  ref_free(comp->made_ids);
  if (ref_current_comp == comp)
    ref_current_comp = NULL;
  ref_free(comp);
  if (ref_count_computation(-1))
    ref_threads_free_idle(); /* the pools wait for executions while a computation lives */
  return ODLA_SUCCESS;
}

odla_value_id ref_made_id(const char *text) {
  odla_computation comp = ref_current_comp;
  char *copy;
  if (!comp || !comp->static_ids)
    return (odla_value_id)text;
  if (comp->num_made_ids == comp->cap_made_ids) {
    const int cap = comp->cap_made_ids ? 2 * comp->cap_made_ids : 8;
    char **ids = (char **)ref_realloc(comp->made_ids, (size_t)cap * sizeof *ids);
    if (!ids)
      return NULL;
    comp->made_ids = ids;
    comp->cap_made_ids = cap;
  }
  if ((copy = ref_strdup(text)) != NULL)
    comp->made_ids[comp->num_made_ids++] = copy;
  return (odla_value_id)copy;
}

static odla_value ref_new_value(odla_computation comp, const char *op, odla_value_type type,
                                odla_value_id id, ref_value_kind kind) {
  odla_value v;
  const char *name = id ? (const char *)id : "";
  if (!ref_valid_type(&type)) {
    char dims[160] = "";
    if (type.shape.size >= 0 && type.shape.size <= ODLA_MAX_DIMENSION)
      ref_shape_str(&type.shape, dims, sizeof dims);
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "value '%s': invalid type (element type %d, rank %d %s: a known element type, "
                    "rank 0 to %d, dims >= 0, at most 2^48 bytes)",
                    name, (int)type.element_type, (int)type.shape.size, dims, ODLA_MAX_DIMENSION);
  }
  if (comp->num_values >= REF_MAX_VALUES)
    return ref_fail(ODLA_MEM_ERROR, op,
                    "value '%s': the computation holds %d values, the most it can", name,
                    comp->num_values);
  if (comp->num_values == comp->cap_values) { /* by half (on a microcontroller the unused
                                                  tail is RAM: 66 values took 128 entries) */
    int cap = comp->cap_values ? comp->cap_values + comp->cap_values / 2 : 16;
    odla_value *vs = (odla_value *)ref_realloc(comp->values, (size_t)cap * sizeof *vs);
    if (!vs)
      return ref_fail(ODLA_MEM_ERROR, op, "out of memory");
    comp->values = vs;
    comp->cap_values = cap;
  }
  v = ref_value_alloc(kind, type.shape.size);
  if (!v || !(v->id = comp->static_ids ? name : ref_strdup(name))) {
    ref_value_free(v);
    return ref_fail(ODLA_MEM_ERROR, op, "out of memory");
  }
  memcpy(&v->type, &type,
         offsetof(odla_value_type, shape.dims) +
             (size_t)type.shape.size * sizeof type.shape.dims[0]);
  v->index = comp->num_values;
  comp->values[comp->num_values++] = v;
  return v;
}

odla_value ref_value_alloc(ref_value_kind kind, int rank) {
  /* the type's dims up to its rank only (ref_type_of) */
  const size_t room = kind == REF_CONSTANT ? 0 : REF_PLACE_ROOM;
  unsigned char *block = (unsigned char *)ref_calloc(
      1, room + offsetof(struct _odla_value, type.shape.dims) +
             (size_t)rank * sizeof(((odla_value)NULL)->type.shape.dims[0]));
  odla_value v = block ? (odla_value)(void *)(block + room) : NULL;
  if (v)
    v->kind = (unsigned int)kind;
  return v;
}

void ref_value_free(odla_value v) {
  if (!v)
    return;
  if (v->kind != REF_CONSTANT)
    ref_free((void *)ref_where(v)->bounds);
  ref_free(v->kind == REF_CONSTANT ? (void *)v : (void *)ref_where(v));
}

odla_value_shape ref_shape_copy(const odla_value_shape *s) {
  odla_value_shape c;
  memset(&c, 0, sizeof c);
  memcpy(&c, s, offsetof(odla_value_shape, dims) + (size_t)s->size * sizeof c.dims[0]);
  return c;
}

odla_value_type ref_type_of(odla_value v) {
  odla_value_type t;
  t.element_type = v->type.element_type;
  t.shape = ref_shape_copy(&v->type.shape);
  return t;
}

int ref_check_operands(const char *op, int n, const odla_value *values) {
  int i;
  odla_computation comp = ref_current_comp;
  if (!comp) {
    ref_fail(ODLA_INVALID_PARAM, op, "no current computation (call odla_CreateComputation)");
    return 0;
  }
  if (comp->compiled) {
    ref_fail(ODLA_INVALID_PARAM, op, "the computation is already compiled");
    return 0;
  }
  if (comp->interpret && ref_interpret_pending(comp) != ODLA_SUCCESS)
    return 0;
  for (i = 0; i < n; ++i) {
    if (!values[i]) {
      /* A NULL operand follows an earlier failure, which was reported; report only if not. */
      if (comp->error == ODLA_SUCCESS)
        ref_fail(ODLA_INVALID_PARAM, op, "operand %d is NULL", i);
      return 0;
    }
    if (values[i]->index >= comp->num_values || comp->values[values[i]->index] != values[i]) {
      ref_fail(ODLA_INVALID_PARAM, op, "operand %d belongs to another computation", i);
      return 0;
    }
  }
  return 1;
}

odla_value odla_CreateArgument(const odla_value_type value_type, const odla_value_id value_id) {
  if (!ref_check_operands("CreateArgument", 0, NULL))
    return NULL;
  return ref_new_value(ref_current_comp, "CreateArgument", value_type, value_id, REF_ARGUMENT);
}

odla_value odla_CreateConstant(const odla_value_type value_type, const odla_void *data_ptr,
                               const odla_value_id value_id) {
  odla_value v;
  if (!ref_check_operands("CreateConstant", 0, NULL))
    return NULL;
  if (!data_ptr && ref_valid_type(&value_type) && ref_bytes(&value_type) > 0)
    return ref_fail(ODLA_INVALID_PARAM, "CreateConstant", "value '%s': data is NULL",
                    value_id ? (const char *)value_id : "");
  v = ref_new_value(ref_current_comp, "CreateConstant", value_type, value_id, REF_CONSTANT);
  if (v)
    v->data = data_ptr;
  return v;
}

/* A parameter block packed (ref_add_sealed_op): control bytes, each L << 4 | Z followed by L
 * bytes of the block, then Z zero bytes of it (L, Z < 16). Writes it to `packed` unless NULL;
 * returns its size. */
static size_t ref_params_pack(const unsigned char *block, size_t n, unsigned char *packed) {
  size_t i = 0, at = 0;
  while (i < n) {
    size_t l = 0, z = 0;
    while (i + l < n && l < 15 && block[i + l] != 0)
      ++l;
    while (i + l + z < n && z < 15 && block[i + l + z] == 0)
      ++z;
    if (packed) {
      packed[at] = (unsigned char)(l << 4 | z);
      memcpy(packed + at + 1, block + i, l);
    }
    at += 1 + l;
    i += l + z;
  }
  return at;
}

/* Expands a packed block of n bytes into `block` (REF_PACKED_PARAMS_MAX bytes, 8-aligned):
 * zeroed by words, then the literal bytes placed (a few hundred instructions for a quantized
 * convolution's on a Cortex-M4). */
static void ref_params_expand(const unsigned char *packed, unsigned char *block, size_t n) {
  unsigned char *const end = block + n;
  uint32_t *word = (uint32_t *)(void *)block;
  size_t i;
  for (i = 0; i < (n + 3) / 4; ++i)
    word[i] = 0;
  while (block < end) {
    const unsigned c = *packed++;
    unsigned l = c >> 4;
    while (l--)
      *block++ = *packed++;
    block += c & 15u;
  }
}

/* Kept apart from ref_node_run so that only nodes with packed parameters take the block's
 * room on the stack. */
static REF_NOINLINE odla_status ref_node_run_packed(const ref_node *n, const ref_io *io) {
  union {
    unsigned char bytes[REF_PACKED_PARAMS_MAX];
    double d; /* the alignment of a parameter block's fields */
    int64_t i;
    void *p;
  } block;
  ref_node copy = *n;
  ref_params_expand((const unsigned char *)n->params, block.bytes, n->params_size);
  copy.params = block.bytes;
  copy.params_packed = 0;
  return n->run(&copy, io);
}

odla_status ref_node_run(const ref_node *n, const ref_io *io) {
  return n->params_packed ? ref_node_run_packed(n, io) : n->run(n, io);
}

/* The lists in a node's block, after the node. */
static odla_value *ref_node_own_lists(ref_node *n) { return (odla_value *)(void *)(n + 1); }

void ref_node_free_params(ref_node *n) {
  if (!n->params_inline)
    ref_free(n->params);
  n->params = NULL;
  n->params_packed = n->params_inline = 0;
}

void ref_node_free_lists(ref_node *n) {
  if (n->inputs != ref_node_own_lists(n))
    ref_free(n->inputs);
  n->inputs = n->outputs = NULL;
}

void ref_node_free(ref_node *n) {
  if (!n)
    return;
  ref_node_free_params(n);
  ref_node_free_lists(n);
  ref_free(n);
}

static ref_node *ref_add_node_as(const char *op, ref_kernel run, int num_inputs,
                                 const odla_value *inputs, int num_outputs,
                                 const odla_value_type *out_types, const odla_value_id *out_ids,
                                 const void *params, size_t params_size, int sealed) {
  odla_computation comp = ref_current_comp;
  size_t stored = params_size;
  ref_node *n;
  int i;
  if (sealed && params_size <= REF_PACKED_PARAMS_MAX && ref_memory_in_region()) {
    const size_t bytes = ref_params_pack((const unsigned char *)params, params_size, NULL);
    sealed = bytes < params_size;
    stored = sealed ? bytes : params_size;
  } else {
    sealed = 0;
  }
  if (comp->num_nodes == comp->cap_nodes) {
    int cap = comp->cap_nodes ? comp->cap_nodes + comp->cap_nodes / 2 : 16; /* as values' */
    ref_node **ns = (ref_node **)ref_realloc(comp->nodes, (size_t)cap * sizeof *ns);
    if (!ns) {
      ref_fail(ODLA_MEM_ERROR, op, "out of memory");
      return NULL;
    }
    comp->nodes = ns;
    comp->cap_nodes = cap;
  }
  { /* one block: the node, its lists, its parameters (aligned as malloc's blocks are, or
       packed bytes; a microcontroller's structures then have one block header a node) */
    const size_t lists = (size_t)(num_inputs + num_outputs) * sizeof(odla_value),
                 unit = sealed ? 1 : 2 * sizeof(size_t),
                 at = (sizeof *n + lists + unit - 1) / unit * unit;
    n = (ref_node *)ref_calloc(1, stored ? at + stored : sizeof *n + lists);
    if (!n) {
      ref_fail(ODLA_MEM_ERROR, op, "out of memory");
      return NULL;
    }
    n->inputs = ref_node_own_lists(n);
    n->params = stored ? (unsigned char *)n + at : NULL;
    n->params_packed = (unsigned)sealed;
    n->params_inline = 1;
  }
  n->op = op;
  n->run = run;
  n->inplace_input = -1;
  n->view_input = -1;
  n->num_inputs = num_inputs;
  n->num_outputs = num_outputs;
  n->outputs = n->inputs + num_inputs;
  for (i = 0; i < num_inputs; ++i)
    n->inputs[i] = inputs[i];
  n->params_size = params_size;
  if (sealed)
    ref_params_pack((const unsigned char *)params, params_size, (unsigned char *)n->params);
  else if (stored)
    memcpy(n->params, params, stored);
  for (i = 0; i < num_outputs; ++i) {
    odla_value v = ref_new_value(comp, op, out_types[i], out_ids ? out_ids[i] : NULL, REF_RESULT);
    if (!v) {
      ref_node_free(n);
      return NULL;
    }
    v->node = n;
    n->outputs[i] = v;
  }
  n->index = comp->num_nodes;
  comp->nodes[comp->num_nodes++] = n;
  return n;
}

ref_node *ref_add_node(const char *op, ref_kernel run, int num_inputs, const odla_value *inputs,
                       int num_outputs, const odla_value_type *out_types,
                       const odla_value_id *out_ids, const void *params, size_t params_size) {
  return ref_add_node_as(op, run, num_inputs, inputs, num_outputs, out_types, out_ids, params,
                         params_size, 0);
}

odla_value ref_add_op(const char *op, ref_kernel run, int num_inputs, const odla_value *inputs,
                      odla_value_type out_type, odla_value_id out_id, const void *params,
                      size_t params_size) {
  ref_node *n =
      ref_add_node_as(op, run, num_inputs, inputs, 1, &out_type, &out_id, params, params_size, 0);
  return n ? n->outputs[0] : NULL;
}

odla_value ref_add_sealed_op(const char *op, ref_kernel run, int num_inputs,
                             const odla_value *inputs, odla_value_type out_type,
                             odla_value_id out_id, const void *params, size_t params_size) {
  ref_node *n =
      ref_add_node_as(op, run, num_inputs, inputs, 1, &out_type, &out_id, params, params_size, 1);
  return n ? n->outputs[0] : NULL;
}

odla_status odla_SetValueAsOutput(const odla_value value) {
  if (!value)
    return ref_current_comp && ref_current_comp->error ? ref_current_comp->error
                                                       : ODLA_INVALID_PARAM;
  if (ref_current_comp && ref_current_comp->regions)
    return ref_set_region_result(ref_current_comp, value);
  if (value->kind != REF_RESULT) {
    ref_fail(ODLA_INVALID_PARAM, "SetValueAsOutput",
             "value '%s' is an argument or constant; copy it with odla_CloneValue first",
             value->id);
    return ODLA_INVALID_PARAM;
  }
  value->is_output = 1;
  return ODLA_SUCCESS;
}

odla_status odla_GetValueType(const odla_value value, odla_value_type *value_type) {
  if (!value || !value_type)
    return ODLA_INVALID_PARAM;
  *value_type = ref_type_of(value);
  return ODLA_SUCCESS;
}

odla_status odla_GetValueId(const odla_value value, odla_value_id *value_id) {
  if (!value || !value_id)
    return ODLA_INVALID_PARAM;
  *value_id = (odla_value_id)value->id;
  return ODLA_SUCCESS;
}

static odla_status ref_nth(odla_computation comp, int want_output, odla_uint32 idx, odla_value *out,
                           odla_uint32 *count) {
  int i;
  odla_uint32 k = 0;
  if (!comp)
    return ODLA_INVALID_PARAM;
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    if (want_output ? v->is_output : v->kind == REF_ARGUMENT) {
      if (out && k == idx) {
        *out = v;
        return ODLA_SUCCESS;
      }
      ++k;
    }
  }
  if (count) {
    *count = k;
    return ODLA_SUCCESS;
  }
  return ODLA_INVALID_PARAM;
}

odla_status odla_GetNumOfArgsFromComputation(const odla_computation computation,
                                             odla_uint32 *num_args) {
  return num_args ? ref_nth(computation, 0, 0, NULL, num_args) : ODLA_INVALID_PARAM;
}

odla_status odla_GetArgFromComputationByIdx(const odla_computation computation,
                                            const odla_uint32 arg_idx, odla_value *arg_value) {
  return arg_value ? ref_nth(computation, 0, arg_idx, arg_value, NULL) : ODLA_INVALID_PARAM;
}

odla_status odla_GetNumOfOutputsFromComputation(const odla_computation computation,
                                                odla_uint32 *num_outputs) {
  return num_outputs ? ref_nth(computation, 1, 0, NULL, num_outputs) : ODLA_INVALID_PARAM;
}

odla_status odla_GetOutputFromComputationByIdx(const odla_computation computation,
                                               const odla_uint32 output_idx,
                                               odla_value *output_value) {
  return output_value ? ref_nth(computation, 1, output_idx, output_value, NULL)
                      : ODLA_INVALID_PARAM;
}

/* ---- Compilation -------------------------------------------------------------------- */

static odla_status ref_compile(odla_computation comp) {
  if (comp->error != ODLA_SUCCESS)
    return comp->error;
  if (comp->regions) {
    ref_fail(ODLA_INVALID_PARAM, "CompileComputation",
             "an odla_BeginIf or odla_BeginLoop has no matching odla_EndIf / odla_EndLoop");
    return comp->error;
  }
  if (comp->interpret) /* its ops ran as they were built: there is nothing to compile */
    return ODLA_INVALID_PARAM;
  if (!comp->compiled) {
    /* the lists grew by half: up to a third of them unused, which on a microcontroller is
       RAM (a region shrinks a block in place; where a shrink fails the lists stay as they
       are) */
    odla_value *vs =
        comp->num_values
            ? (odla_value *)ref_realloc(comp->values, (size_t)comp->num_values * sizeof *vs)
            : NULL;
    ref_node **ns = comp->num_nodes ? (ref_node **)ref_realloc(comp->nodes,
                                                               (size_t)comp->num_nodes * sizeof *ns)
                                    : NULL;
    if (vs) {
      comp->values = vs;
      comp->cap_values = comp->num_values;
    }
    if (ns) {
      comp->nodes = ns;
      comp->cap_nodes = comp->num_nodes;
    }
    comp->arena_bytes = ref_plan(comp);
    comp->compiled = 1;
    /* the scratch was the caller's for this compile only */
    comp->compile_scratch.base = NULL;
    comp->compile_scratch.bytes = 0;
  }
  return ODLA_SUCCESS;
}

odla_status odla_CompileComputation(const odla_computation computation, const odla_device device,
                                    odla_executable *executable) {
  odla_status s;
  int i;
  (void)device;
  if (!computation || !executable)
    return ODLA_INVALID_PARAM;
  s = ref_compile(computation);
  if (s != ODLA_SUCCESS)
    return s;
  for (i = 0; i < computation->num_nodes; ++i) /* once for every execution */
    if (computation->nodes[i]->prepare)
      computation->nodes[i]->prepare(computation->nodes[i], 0);
  *executable = (odla_executable)ref_calloc(1, sizeof **executable);
  if (!*executable)
    return ODLA_MEM_ERROR;
  (*executable)->comp = computation;
  return ODLA_SUCCESS;
}

odla_status odla_DestroyExecutable(odla_executable executable) {
  if (!executable)
    return ODLA_INVALID_PARAM;
  if (ref_free_loaded(executable))
    odla_DestroyComputation(executable->comp);
  ref_free(executable);
  return ODLA_SUCCESS;
}

odla_status odla_ExtGetArenaBytes(odla_computation computation, odla_size_t *bytes) {
  odla_status s;
  if (!computation || !bytes)
    return ODLA_INVALID_PARAM;
  s = ref_compile(computation);
  if (s == ODLA_SUCCESS)
    *bytes = computation->arena_bytes;
  return s;
}

odla_status odla_ExtGetNumNodes(odla_computation computation, odla_int32 *num_nodes) {
  odla_status s;
  if (!computation || !num_nodes)
    return ODLA_INVALID_PARAM;
  s = ref_compile(computation);
  if (s == ODLA_SUCCESS)
    *num_nodes = computation->num_nodes;
  return s;
}

odla_status odla_ExtGetNodeInfo(odla_computation computation, odla_int32 node,
                                const odla_char **op_name, odla_value *first_result,
                                odla_size_t *scratch_offset, odla_size_t *scratch_bytes) {
  const ref_node *n;
  odla_status s;
  if (!computation || node < 0 || node >= computation->num_nodes)
    return ODLA_INVALID_PARAM;
  s = ref_compile(computation);
  if (s != ODLA_SUCCESS)
    return s;
  n = computation->nodes[node];
  if (op_name)
    *op_name = n->op;
  if (first_result)
    *first_result = n->num_outputs ? n->outputs[0] : NULL;
  if (scratch_offset)
    *scratch_offset = n->scratch_offset;
  if (scratch_bytes)
    *scratch_bytes = n->scratch_bytes;
  return ODLA_SUCCESS;
}

odla_status odla_ExtGetValuePlacement(odla_value value, odla_size_t *offset, odla_size_t *bytes,
                                      odla_int32 *first_node, odla_int32 *last_node) {
  if (!value || value->kind != REF_RESULT || value->is_output || ref_bytes(&value->type) == 0)
    return ODLA_INVALID_PARAM;
  if (offset)
    *offset = ref_where(value)->offset;
  if (bytes)
    *bytes = ref_bytes(&value->type);
  if (first_node)
    *first_node = ref_where(value)->first_use;
  if (last_node)
    *last_node = ref_where(value)->last_use;
  return ODLA_SUCCESS;
}

/* ---- Contexts and binding ----------------------------------------------------------- */

odla_status odla_CreateContext(odla_context *context) {
  if (!context)
    return ODLA_INVALID_PARAM;
  *context = (odla_context)ref_calloc(1, sizeof **context);
  return *context ? ODLA_SUCCESS : ODLA_MEM_ERROR;
}

odla_status odla_DestroyContext(odla_context ctx) {
  int i;
  if (!ctx)
    return ODLA_INVALID_PARAM;
  for (i = 0; i < ctx->num_args; ++i)
    ref_free(ctx->args[i].id);
  for (i = 0; i < ctx->num_outs; ++i)
    ref_free(ctx->outs[i].id);
  ref_free(ctx->args);
  ref_free(ctx->outs);
  ref_arena_release(ctx->arena_alloc, ctx->arena_alloc_bytes);
  ref_free_shapes(ctx);
  ref_string_pool_free(&ctx->strings);
  ref_free(ctx);
  return ODLA_SUCCESS;
}

odla_status odla_SetContextItem(odla_context context, odla_item_type type, odla_item_value value) {
  if (!context)
    return ODLA_INVALID_PARAM;
  if (type == ODLA_EXT_ITEM_ARENA) {
    const odla_ext_arena *a = (const odla_ext_arena *)value;
    if (!a || !a->base || ((uintptr_t)a->base % REF_ALIGN) != 0)
      return ODLA_INVALID_PARAM;
    ref_free(context->arena_alloc);
    context->arena_alloc = NULL;
    context->arena = (unsigned char *)a->base;
    context->arena_bytes = a->bytes;
    return ODLA_SUCCESS;
  }
  if (type == ODLA_RUN_BATCH_SIZE)
    return ref_set_run_batch(context, value);
  return ref_set_context_item(context, type, value);
}

static odla_status ref_bind(ref_binding **list, int *num, int *cap, const char *id, void *data,
                            size_t bytes) {
  int i;
  for (i = 0; i < *num; ++i)
    if (strcmp((*list)[i].id, id) == 0) {
      (*list)[i].data = data;
      (*list)[i].bytes = bytes;
      return ODLA_SUCCESS;
    }
  if (*num == *cap) { /* from one entry: most models bind a port or two, and on a
                         microcontroller the unused entries are RAM */
    int c = *cap ? 2 * *cap : 1;
    ref_binding *b = (ref_binding *)ref_realloc(*list, (size_t)c * sizeof *b);
    if (!b)
      return ODLA_MEM_ERROR;
    *list = b;
    *cap = c;
  }
  if (!((*list)[*num].id = ref_strdup(id)))
    return ODLA_MEM_ERROR;
  (*list)[*num].bytes = bytes;
  (*list)[(*num)++].data = data;
  return ODLA_SUCCESS;
}

odla_status ref_bind_value(odla_context context, int output, const char *id, void *data,
                           size_t bytes) {
  return output ? ref_bind(&context->outs, &context->num_outs, &context->cap_outs, id, data, bytes)
                : ref_bind(&context->args, &context->num_args, &context->cap_args, id, data, bytes);
}

odla_status odla_BindToArgumentById(const odla_value_id value_id, const odla_void *data_ptr,
                                    odla_context context) {
  if (!value_id || !context)
    return ODLA_INVALID_PARAM;
  return ref_bind(&context->args, &context->num_args, &context->cap_args, (const char *)value_id,
                  (void *)(uintptr_t)data_ptr, 0);
}

odla_status odla_BindToOutputById(const odla_value_id value_id, odla_void *data_ptr,
                                  odla_context context) {
  if (!value_id || !context)
    return ODLA_INVALID_PARAM;
  return ref_bind(&context->outs, &context->num_outs, &context->cap_outs, (const char *)value_id,
                  data_ptr, 0);
}

odla_status odla_BindToArgument(odla_value value, const odla_void *data_ptr, odla_context context) {
  if (!value)
    return ODLA_INVALID_PARAM;
  return odla_BindToArgumentById((odla_value_id)value->id, data_ptr, context);
}

odla_status odla_BindToOutput(odla_value value, odla_void *data_ptr, odla_context context) {
  if (!value)
    return ODLA_INVALID_PARAM;
  return odla_BindToOutputById((odla_value_id)value->id, data_ptr, context);
}

static void *ref_lookup(const ref_binding *list, int num, const char *id) {
  int i;
  for (i = 0; i < num; ++i)
    if (strcmp(list[i].id, id) == 0)
      return list[i].data;
  return NULL;
}

/* ---- Execution ---------------------------------------------------------------------- */

/* A value bound with odla_BindValueTo*ById must hold at least the bytes of what it is bound
 * to (the binding knows its bytes; a plain pointer's are the caller's business). */
static odla_status ref_check_bound_value(odla_context ctx, odla_value v) {
  const ref_binding *list = v->is_output ? ctx->outs : ctx->args;
  int i, num = v->is_output ? ctx->num_outs : ctx->num_args;
  if (v->kind == REF_CONSTANT || (v->kind == REF_RESULT && !v->is_output))
    return ODLA_SUCCESS;
  for (i = 0; i < num; ++i)
    if (strcmp(list[i].id, v->id) == 0 && list[i].bytes && list[i].bytes < ref_bytes(&v->type)) {
      char msg[300];
      ref_snprintf(msg, sizeof msg, "%s '%s' is bound to a value of %lu bytes; it needs %lu",
                   v->is_output ? "output" : "argument", v->id, (unsigned long)list[i].bytes,
                   (unsigned long)ref_bytes(&v->type));
      ref_log(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation", msg);
      return ODLA_INVALID_PARAM;
    }
  return ODLA_SUCCESS;
}

/* Where a value's data lives during an execution of `comp` on `ctx`. A view's bytes are its
 * argument's from its offset on (ref_plan_views points a view at the argument itself, never at
 * another view: no recursion, which the footprint table's stack bound could not follow). */
void *ref_value_data(odla_context ctx, odla_value v) {
  const odla_value view_of = ref_view_source(v);
  if (view_of) {
    unsigned char *base = (unsigned char *)ref_lookup(ctx->args, ctx->num_args, view_of->id);
    return base ? base + ref_where(v)->offset : NULL;
  }
  switch (v->kind) {
  case REF_ARGUMENT:
    return ref_lookup(ctx->args, ctx->num_args, v->id);
  case REF_CONSTANT:
    return (void *)(uintptr_t)(ctx->constants && ctx->constants[v->index] ? ctx->constants[v->index]
                                                                          : v->data);
  default:
    if (v->is_output)
      return ref_lookup(ctx->outs, ctx->num_outs, v->id);
    return ctx->arena ? ctx->arena + ref_where(v)->offset
                      : NULL; /* no arena: every value is empty */
  }
}

odla_status ref_run_nodes(ref_exec *x, int first, int last) {
  enum { kMaxIo = 2 * ODLA_MAX_OUTPUTS };
  const void *in[kMaxIo];
  void *out[kMaxIo];
  ref_io io;
  int i, k;
  odla_context ctx = x->ctx;
  if (x->forward_only && x->comp->num_forward_nodes > 0 && last > x->comp->num_forward_nodes)
    last = x->comp->num_forward_nodes;
  io.in = in;
  io.out = out;
  io.exec = x;
  io.strings = &ctx->strings;
  for (i = first; i < last; ++i) {
    const ref_node *n = x->comp->nodes[i];
    odla_status s;
    if (n->num_inputs > kMaxIo || n->num_outputs > kMaxIo)
      return ODLA_INTERNAL_LOGIC_ERR;
    if (n->num_outputs == 1 && ref_view_source(n->outputs[0])) { /* a view (ref_plan_views) */
      for (k = 0; k < n->num_inputs; ++k)
        if (n->inputs[k] && n->inputs[k]->kind == REF_CONSTANT && ctx->constants &&
            ctx->constants[n->inputs[k]->index]) {
          ref_report(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation",
                     "node %d (%s): its constant '%s', which places the view '%s', is replaced "
                     "for this execution",
                     i, n->op, n->inputs[k]->id, n->outputs[0]->id);
          return ODLA_INVALID_PARAM;
        }
      continue;
    }
    for (k = 0; k < n->num_inputs; ++k)
      in[k] = n->inputs[k] ? ref_value_data(ctx, n->inputs[k]) : NULL;
    for (k = 0; k < n->num_outputs; ++k)
      out[k] = ref_value_data(ctx, n->outputs[k]);
    io.scratch = n->scratch_bytes ? ctx->arena + n->scratch_offset : NULL;
    x->next = -1;
    s = x->profile ? ref_profile_run(x, i, &io) : ref_node_run(n, &io);
    if (s != ODLA_SUCCESS) {
      char msg[300];
      ref_snprintf(msg, sizeof msg, "node %d (%s) producing '%s' failed with status %d", i, n->op,
                   n->num_outputs ? n->outputs[0]->id : "", (int)s);
      ref_log(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation", msg);
      return s;
    }
    if (x->next >= 0)
      i = x->next - 1; /* a control-flow kernel ran the region it opens */
  }
  return ODLA_SUCCESS;
}

static odla_status ref_execute(odla_computation comp, odla_context ctx, int forward_only) {
  ref_exec x;
  int i;
  odla_status s = ref_compile(comp);
  if (s != ODLA_SUCCESS)
    return s;
  if (ctx->arena_bytes < comp->arena_bytes) {
    void *mem;
    if (!ctx->arena_alloc && ctx->arena) {
      ref_log(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation", "the caller's arena is too small");
      return ODLA_MEM_ERROR;
    }
    ref_free(ctx->arena_alloc);
    mem = ref_arena_take(comp->arena_bytes + REF_ALIGN, &ctx->arena_alloc_bytes);
    ctx->arena_alloc = mem;
    if (!mem) {
      ctx->arena = NULL;
      ctx->arena_bytes = 0;
      return ODLA_MEM_ERROR;
    }
    ctx->arena = (unsigned char *)mem + (REF_ALIGN - (uintptr_t)mem % REF_ALIGN) % REF_ALIGN;
    ctx->arena_bytes = ctx->arena_alloc_bytes - (size_t)(ctx->arena - (unsigned char *)mem);
  }
  /* Every argument and output must be bound. */
  for (i = 0; i < comp->num_values; ++i) {
    odla_value v = comp->values[i];
    if (forward_only && comp->num_forward_nodes > 0 && v->node &&
        v->node->index >= comp->num_forward_nodes)
      continue; /* a gradient, which ODLA_COMPUTE_INFERENCE does not compute */
    if ((v->kind == REF_ARGUMENT || v->is_output) && ref_bytes(&v->type) > 0 &&
        !ref_value_data(ctx, v)) {
      char msg[300];
      ref_snprintf(msg, sizeof msg, "%s '%s' is not bound", v->is_output ? "output" : "argument",
                   v->id);
      ref_log(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation", msg);
      return ODLA_INVALID_PARAM;
    }
    if ((s = ref_check_bound_value(ctx, v)) != ODLA_SUCCESS)
      return s;
  }
  ref_string_pool_free(&ctx->strings); /* the last execution's string results */
  x.comp = comp;
  x.ctx = ctx;
  x.next = -1;
  if ((s = ref_threads_prepare(comp, ctx, &x.threads)) != ODLA_SUCCESS)
    return s; /* the worker threads */
  x.forward_only = forward_only;
  x.profile = ref_profile_begin();
  s = ref_run_batches(&x); /* ref_run_nodes over the run batch */
  if (x.profile)
    ref_profile_end();
  ref_threads_done(x.threads);
  return s;
}

odla_status odla_ExecuteComputation(const odla_computation computation, const odla_context context,
                                    const odla_compute_mode mode, odla_device device) {
  (void)device;
  if (!computation || !context)
    return ODLA_INVALID_PARAM;
  if (mode == ODLA_COMPUTE_TRAINING && !computation->num_forward_nodes) {
    ref_log(ODLA_LOG_LEVEL_ERROR, "ExecuteComputation",
            "ODLA_COMPUTE_TRAINING needs a "
            "computation that odla_DifferentiateComputation has differentiated");
    return ODLA_INVALID_PARAM;
  }
  return ref_execute(computation, context, mode != ODLA_COMPUTE_TRAINING);
}

odla_status odla_LaunchExecutable(odla_executable executable, odla_context context) {
  if (!executable || !context)
    return ODLA_INVALID_PARAM;
  return ref_execute(executable->comp, context, 0); /* no mode: a backward pass runs too */
}
