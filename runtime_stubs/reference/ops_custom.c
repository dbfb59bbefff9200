/* ops_custom.c: odla_CustomOp and odla_ExtRegisterCustomOp (odla_ext_custom.h): custom ops
 * whose kernels and shape functions the application registers by name.
 *
 * A CustomOp node's parameter block holds everything the node needs: the op and function
 * names, the input and result types, and a deep copy of the attributes, found through
 * offsets from the block's start; ref_custom_bind derives from those the pointers a kernel
 * sees (odla_ext_custom_call, the attributes' name and data) and finds the kernel in the
 * registry. odla_CustomOp is variadic, so it records itself in the computation's call log
 * (calls.h) and ref_replay_CustomOp replays it: a stored executable keeps the op's name and
 * attributes, and loading it builds the node again among the ops the loading program
 * registered (registered kernels live in the application, not in this library). */
#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L
#endif

#include "calls.h"
#include "ref.h"
#include "threads.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define REF_CUSTOM_NAME_MAX 255

/* ---- Registry ----------------------------------------------------------------------- */

typedef struct {
  char name[REF_CUSTOM_NAME_MAX + 1];
  odla_ext_custom_kernel kernel;
  odla_ext_custom_shape_fn shape_fn;
  odla_void *user_data;
} ref_custom_entry;

static ref_mutex ref_custom_lock = REF_MUTEX_INITIALIZER;
static ref_custom_entry *ref_custom_ops;
static int ref_custom_num, ref_custom_cap;

/* Copies the registration of `name` into *e; 0 when none. */
static int ref_custom_find(const char *name, ref_custom_entry *e) {
  int i, found = 0;
  ref_mutex_lock(&ref_custom_lock);
  for (i = 0; i < ref_custom_num && !found; ++i)
    if (strcmp(ref_custom_ops[i].name, name) == 0) {
      *e = ref_custom_ops[i];
      found = 1;
    }
  ref_mutex_unlock(&ref_custom_lock);
  return found;
}

odla_status odla_ExtRegisterCustomOp(const odla_char *op_name, odla_ext_custom_kernel kernel,
                                     odla_ext_custom_shape_fn shape_fn, odla_void *user_data) {
  odla_status s = ODLA_SUCCESS;
  int i;
  if (!op_name || !kernel || !shape_fn) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "ExtRegisterCustomOp",
               "op_name, kernel and shape_fn must not be NULL");
    return ODLA_INVALID_PARAM;
  }
  if (op_name[0] == '\0' || strlen(op_name) > REF_CUSTOM_NAME_MAX) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "ExtRegisterCustomOp",
               "op name must have 1 to %d bytes, got %lu", REF_CUSTOM_NAME_MAX,
               (unsigned long)strlen(op_name));
    return ODLA_INVALID_PARAM;
  }
  ref_mutex_lock(&ref_custom_lock);
  for (i = 0; i < ref_custom_num; ++i) {
    const ref_custom_entry *e = &ref_custom_ops[i];
    if (strcmp(e->name, op_name) != 0)
      continue;
    if (e->kernel != kernel || e->shape_fn != shape_fn || e->user_data != user_data) {
      ref_report(ODLA_LOG_LEVEL_ERROR, "ExtRegisterCustomOp",
                 "'%s' is already registered with another kernel, shape function or user data",
                 op_name);
      s = ODLA_INVALID_PARAM;
    }
    ref_mutex_unlock(&ref_custom_lock);
    return s;
  }
  if (ref_custom_num == ref_custom_cap) {
    int cap = ref_custom_cap ? 2 * ref_custom_cap : 16;
    ref_custom_entry *ops =
        (ref_custom_entry *)ref_realloc(ref_custom_ops, (size_t)cap * sizeof *ops);
    if (!ops) {
      ref_mutex_unlock(&ref_custom_lock);
      return ODLA_MEM_ERROR;
    }
    ref_custom_ops = ops;
    ref_custom_cap = cap;
  }
  memset(&ref_custom_ops[ref_custom_num], 0, sizeof ref_custom_ops[0]);
  strcpy(ref_custom_ops[ref_custom_num].name, op_name);
  ref_custom_ops[ref_custom_num].kernel = kernel;
  ref_custom_ops[ref_custom_num].shape_fn = shape_fn;
  ref_custom_ops[ref_custom_num].user_data = user_data;
  ++ref_custom_num;
  ref_mutex_unlock(&ref_custom_lock);
  return ODLA_SUCCESS;
}

/* ---- The parameter block ------------------------------------------------------------ */

/* Layout: this header, then (each 8-byte aligned) input types[num_inputs], result
 * types[num_outputs], attrs[num_attrs], attribute offsets[2 * num_attrs] (name, data), then
 * the bytes of names, strings and attribute data. `kernel`, `call` and the attrs' pointers
 * are derived (ref_custom_relink); the rest is the stored truth. */
typedef struct {
  odla_ext_custom_kernel kernel;
  odla_ext_custom_call call;
  uint64_t name_at, function_at, inputs_at, outputs_at, attrs_at, attr_offsets_at;
  int32_t num_inputs, num_outputs, num_attrs, unused;
} ref_custom_params;

/* Bytes of one attribute's data (0 for an empty list), or (size_t)-1 for a bad kind. */
static size_t ref_attr_bytes(int32_t kind, int32_t count) {
  switch (kind) {
  case ODLA_EXT_ATTR_INT:
    return sizeof(odla_int64);
  case ODLA_EXT_ATTR_FLOAT:
    return sizeof(odla_float32);
  case ODLA_EXT_ATTR_STRING:
    return (size_t)count + 1;
  case ODLA_EXT_ATTR_INTS:
    return (size_t)count * sizeof(odla_int64);
  case ODLA_EXT_ATTR_FLOATS:
    return (size_t)count * sizeof(odla_float32);
  default:
    return (size_t)-1;
  }
}

static size_t ref_up8(size_t n) { return (n + 7) / 8 * 8; }

/* Whether [at, at + n) lies in a block of `size` bytes. */
static int ref_in_block(uint64_t at, uint64_t n, size_t size) {
  return at <= size && n <= size - at;
}

/* A NUL-terminated string at `at` inside the block, or NULL. */
static const char *ref_block_str(const unsigned char *b, size_t size, uint64_t at) {
  if (at >= size || !memchr(b + at, '\0', size - (size_t)at))
    return NULL;
  return (const char *)(b + at);
}

/* Records (and logs) that the op `name` is not registered. */
static odla_status ref_custom_unregistered(const char *name, const char *function) {
  ref_fail(ODLA_UNSUPPORTED_OP, "CustomOp",
           "custom op '%s' is not registered (function '%s'); register it with "
           "odla_ExtRegisterCustomOp before building or loading a computation that uses it",
           name, function);
  return ODLA_UNSUPPORTED_OP;
}

/* Derives a block's pointers from its offsets after checking them, and resolves its kernel
 * in the registry (errors are recorded in the computation). */
static odla_status ref_custom_bind(unsigned char *b, size_t size) {
  ref_custom_params *p = (ref_custom_params *)b;
  const char *where = "CustomOp";
  odla_ext_custom_attr *attrs;
  const uint64_t *offsets;
  ref_custom_entry e;
  int32_t i;
  const char *name, *function;
  if (size < sizeof *p || p->num_inputs < 0 || p->num_inputs > ODLA_MAX_OUTPUTS ||
      p->num_outputs < 1 || p->num_outputs > ODLA_MAX_OUTPUTS || p->num_attrs < 0 ||
      !ref_in_block(p->inputs_at, (uint64_t)p->num_inputs * sizeof(odla_value_type), size) ||
      !ref_in_block(p->outputs_at, (uint64_t)p->num_outputs * sizeof(odla_value_type), size) ||
      !ref_in_block(p->attrs_at, (uint64_t)p->num_attrs * sizeof(odla_ext_custom_attr), size) ||
      !ref_in_block(p->attr_offsets_at, (uint64_t)p->num_attrs * 2 * sizeof(uint64_t), size) ||
      p->inputs_at % 8 || p->outputs_at % 8 || p->attrs_at % 8 || p->attr_offsets_at % 8 ||
      !(name = ref_block_str(b, size, p->name_at)) ||
      !(function = ref_block_str(b, size, p->function_at))) {
    ref_report(ODLA_LOG_LEVEL_ERROR, where, "corrupt CustomOp parameters");
    return ODLA_INVALID_PARAM;
  }
  attrs = (odla_ext_custom_attr *)(b + p->attrs_at);
  offsets = (const uint64_t *)(b + p->attr_offsets_at);
  for (i = 0; i < p->num_attrs; ++i) {
    size_t n = ref_attr_bytes(attrs[i].kind, attrs[i].count);
    const char *attr_name = ref_block_str(b, size, offsets[2 * i]);
    if (!attr_name || attrs[i].count < 0 || n == (size_t)-1 || offsets[2 * i + 1] % 8 ||
        !ref_in_block(offsets[2 * i + 1], n, size) ||
        (attrs[i].kind == ODLA_EXT_ATTR_STRING &&
         b[offsets[2 * i + 1] + (size_t)attrs[i].count] != '\0')) {
      ref_report(ODLA_LOG_LEVEL_ERROR, where, "corrupt CustomOp parameters (attribute %d)", i);
      return ODLA_INVALID_PARAM;
    }
    attrs[i].name = attr_name;
    attrs[i].data = n ? (const odla_void *)(b + offsets[2 * i + 1]) : NULL;
  }
  if (!ref_custom_find(name, &e))
    return ref_custom_unregistered(name, function);
  p->kernel = e.kernel;
  p->call.op_name = name;
  p->call.function_name = function;
  p->call.num_inputs = p->num_inputs;
  p->call.input_types = (const odla_value_type *)(b + p->inputs_at);
  p->call.num_outputs = p->num_outputs;
  p->call.output_types = (const odla_value_type *)(b + p->outputs_at);
  p->call.num_attrs = p->num_attrs;
  p->call.attrs = p->num_attrs ? attrs : NULL;
  p->call.user_data = e.user_data;
  p->call.declared_types = NULL;
  return ODLA_SUCCESS;
}

/* Checks the caller's attribute description; returns the block's size, or 0 (recorded). */
static size_t ref_custom_check(const odla_ext_custom_params *cp, int num_inputs, int num_outputs,
                               size_t name_bytes, size_t function_bytes) {
  size_t size = ref_up8(sizeof(ref_custom_params));
  int32_t i, j;
  size += ref_up8((size_t)num_inputs * sizeof(odla_value_type));
  size += ref_up8((size_t)num_outputs * sizeof(odla_value_type));
  size += ref_up8(name_bytes) + ref_up8(function_bytes);
  if (!cp)
    return size;
  if (cp->version != ODLA_EXT_CUSTOM_VERSION) {
    ref_fail(ODLA_INVALID_PARAM, "CustomOp",
             "the attribute block has version %d; this backend reads version %d (pass one "
             "const odla_ext_custom_params * or NULL as the only variadic argument)",
             (int)cp->version, ODLA_EXT_CUSTOM_VERSION);
    return 0;
  }
  if (cp->num_attrs < 0 || (cp->num_attrs > 0 && !cp->attrs)) {
    ref_fail(ODLA_INVALID_PARAM, "CustomOp", "%d attributes without an attribute array",
             (int)cp->num_attrs);
    return 0;
  }
  size += ref_up8((size_t)cp->num_attrs * sizeof(odla_ext_custom_attr));
  size += (size_t)cp->num_attrs * 2 * sizeof(uint64_t);
  for (i = 0; i < cp->num_attrs; ++i) {
    const odla_ext_custom_attr *a = &cp->attrs[i];
    size_t n = ref_attr_bytes(a->kind, a->count);
    if (!a->name || !a->name[0]) {
      ref_fail(ODLA_INVALID_PARAM, "CustomOp", "attribute %d has no name", i);
      return 0;
    }
    for (j = 0; j < i; ++j)
      if (strcmp(cp->attrs[j].name, a->name) == 0) {
        ref_fail(ODLA_INVALID_PARAM, "CustomOp", "attribute '%s' is given twice", a->name);
        return 0;
      }
    if (n == (size_t)-1 || a->count < 0 ||
        ((a->kind == ODLA_EXT_ATTR_INT || a->kind == ODLA_EXT_ATTR_FLOAT) && a->count != 1) ||
        (n > 0 && !a->data) ||
        (a->kind == ODLA_EXT_ATTR_STRING &&
         (!a->data || strlen((const char *)a->data) != (size_t)a->count))) {
      ref_fail(ODLA_INVALID_PARAM, "CustomOp",
               "attribute '%s': kind %d with count %d and %s data does not follow "
               "odla_ext_custom.h",
               a->name, (int)a->kind, (int)a->count, a->data ? "non-NULL" : "NULL");
      return 0;
    }
    size += ref_up8(strlen(a->name) + 1) + ref_up8(n);
  }
  return size;
}

/* Appends `n` bytes at *at (8-aligned) in block b; returns their offset. */
static uint64_t ref_put_bytes(unsigned char *b, size_t *at, const void *data, size_t n) {
  uint64_t here = *at;
  if (n)
    memcpy(b + *at, data, n);
  *at = ref_up8(*at + n);
  return here;
}

/* Whether a shape function's result type is complete and valid. */
static int ref_custom_type_ok(const odla_value_type *t) {
  int d;
  if (ref_elem_size(t->element_type) == 0 || t->shape.size < 0 ||
      t->shape.size > ODLA_MAX_DIMENSION)
    return 0;
  for (d = 0; d < t->shape.size; ++d)
    if (t->shape.dims[d] < 0)
      return 0;
  return 1;
}

static odla_status ref_custom_run(const ref_node *node, const ref_io *io) {
  const ref_custom_params *p = (const ref_custom_params *)node->params;
  odla_status s =
      p->kernel(&p->call, (const odla_void *const *)io->in, (odla_void *const *)io->out);
  if (s != ODLA_SUCCESS)
    ref_report(ODLA_LOG_LEVEL_ERROR, "CustomOp", "the kernel of '%s' returned status %d",
               p->call.op_name, (int)s);
  return s;
}

/* The builder: odla_CustomOp with its variadic argument. */
static odla_values ref_custom_op(odla_values inputs, const odla_char *op_name,
                                 const odla_char *function_name, const odla_value_ids ids,
                                 const odla_ext_custom_params *cp) {
  odla_values result;
  odla_value_type types[ODLA_MAX_OUTPUTS];
  ref_custom_params *p;
  ref_custom_entry e;
  unsigned char *b;
  size_t size, at;
  ref_node *node;
  odla_status s;
  int i, num_in = (int)inputs.size, num_out = (int)ids.size;
  memset(&result, 0, sizeof result);
  if (inputs.size > ODLA_MAX_OUTPUTS) {
    ref_fail(ODLA_INVALID_PARAM, "CustomOp", "%lu inputs; at most %d are allowed",
             (unsigned long)inputs.size, ODLA_MAX_OUTPUTS);
    return result;
  }
  if (!ref_check_operands("CustomOp", num_in, inputs.values))
    return result;
  if (!function_name)
    function_name = "";
  if (!op_name || !op_name[0] || strlen(op_name) > REF_CUSTOM_NAME_MAX) {
    ref_fail(ODLA_INVALID_PARAM, "CustomOp", "op_name must have 1 to %d bytes",
             REF_CUSTOM_NAME_MAX);
    return result;
  }
  if (ids.size < 1 || ids.size > ODLA_MAX_OUTPUTS) {
    ref_fail(ODLA_INVALID_PARAM, "CustomOp", "'%s': %d value ids; 1 to %d results are allowed",
             op_name, num_out, ODLA_MAX_OUTPUTS);
    return result;
  }
  if (!ref_custom_find(op_name, &e)) {
    ref_custom_unregistered(op_name, function_name);
    return result;
  }
  size = ref_custom_check(cp, num_in, num_out, strlen(op_name) + 1, strlen(function_name) + 1);
  if (!size)
    return result;
  if (!(b = (unsigned char *)ref_calloc(1, size))) {
    ref_fail(ODLA_MEM_ERROR, "CustomOp", "out of memory");
    return result;
  }
  p = (ref_custom_params *)b;
  at = ref_up8(sizeof *p);
  p->num_inputs = num_in;
  p->num_outputs = num_out;
  p->num_attrs = cp ? cp->num_attrs : 0;
  p->inputs_at = at;
  for (i = 0; i < num_in; ++i) {
    const odla_value_type t = ref_type_of(inputs.values[i]);
    ref_put_bytes(b, &at, &t, sizeof t);
  }
  p->outputs_at = at;
  at = ref_up8(at + (size_t)num_out * sizeof(odla_value_type));
  p->attrs_at = at;
  at = ref_up8(at + (size_t)p->num_attrs * sizeof(odla_ext_custom_attr));
  p->attr_offsets_at = at;
  at += (size_t)p->num_attrs * 2 * sizeof(uint64_t);
  p->name_at = ref_put_bytes(b, &at, op_name, strlen(op_name) + 1);
  p->function_at = ref_put_bytes(b, &at, function_name, strlen(function_name) + 1);
  for (i = 0; i < p->num_attrs; ++i) {
    const odla_ext_custom_attr *a = &cp->attrs[i];
    odla_ext_custom_attr *copy = (odla_ext_custom_attr *)(b + p->attrs_at) + i;
    uint64_t *offsets = (uint64_t *)(b + p->attr_offsets_at);
    copy->kind = a->kind;
    copy->count = a->count;
    offsets[2 * i] = ref_put_bytes(b, &at, a->name, strlen(a->name) + 1);
    offsets[2 * i + 1] = ref_put_bytes(b, &at, a->data, ref_attr_bytes(a->kind, a->count));
  }
  /* The shape function sees the block as the kernel will, without result types. */
  if ((s = ref_custom_bind(b, size)) != ODLA_SUCCESS) {
    ref_free(b);
    return result;
  }
  p->call.output_types = NULL;
  p->call.declared_types = cp ? cp->result_types : NULL;
  memset(types, 0, sizeof types);
  s = e.shape_fn(&p->call, types);
  p->call.declared_types = NULL;
  if (s != ODLA_SUCCESS) {
    ref_fail(s, "CustomOp", "the shape function of '%s' returned status %d", op_name, (int)s);
    ref_free(b);
    return result;
  }
  for (i = 0; i < num_out; ++i) {
    char got[160], want[160];
    if (!ref_custom_type_ok(&types[i])) {
      ref_fail(ODLA_INVALID_PARAM, "CustomOp",
               "the shape function of '%s' gives result %d an invalid or undefined type "
               "(element type %d, %s)",
               op_name, i, (int)types[i].element_type,
               ref_shape_str(&types[i].shape, got, sizeof got));
      ref_free(b);
      return result;
    }
    if (cp && cp->result_types &&
        (cp->result_types[i].element_type != types[i].element_type ||
         cp->result_types[i].shape.size != types[i].shape.size ||
         !ref_same_shape(&cp->result_types[i].shape, &types[i].shape))) {
      ref_fail(ODLA_INVALID_PARAM, "CustomOp",
               "'%s' result %d ('%s'): the shape function gives %s%s, the caller declared %s%s",
               op_name, i, (const char *)ids.value_ids[i], ref_type_name(types[i].element_type),
               ref_shape_str(&types[i].shape, got, sizeof got),
               ref_type_name(cp->result_types[i].element_type),
               ref_shape_str(&cp->result_types[i].shape, want, sizeof want));
      ref_free(b);
      return result;
    }
  }
  memcpy(b + p->outputs_at, types, (size_t)num_out * sizeof(odla_value_type));
  node = ref_add_node("CustomOp", ref_custom_run, num_in, inputs.values, num_out, types,
                      ids.value_ids, b, size);
  ref_free(b);
  if (!node || ref_custom_bind((unsigned char *)node->params, node->params_size) != ODLA_SUCCESS)
    return result;
  result.size = ids.size;
  for (i = 0; i < num_out; ++i)
    result.values[i] = node->outputs[i];
  return result;
}

/* The attribute block in the call log: u32 flags (1: a block, 2: with result types); then
 * i32 version, u32 attributes, each a name, i32 kind, i32 count and its data as bytes
 * (ref_attr_bytes of them); then one type per result. */
static void ref_custom_record(ref_rec *r, const odla_ext_custom_params *cp, int num_out) {
  uint32_t flags = (cp ? 1u : 0u) | (cp && cp->result_types ? 2u : 0u), n;
  int32_t i;
  ref_rec_4(r, &flags);
  if (!cp)
    return;
  ref_rec_4(r, &cp->version);
  n = (uint32_t)cp->num_attrs;
  ref_rec_4(r, &n);
  for (i = 0; i < cp->num_attrs; ++i) {
    const odla_ext_custom_attr *a = &cp->attrs[i];
    ref_rec_str(r, a->name);
    ref_rec_4(r, &a->kind);
    ref_rec_4(r, &a->count);
    ref_rec_bytes(r, a->data, (uint32_t)ref_attr_bytes(a->kind, a->count));
  }
  for (i = 0; cp->result_types && i < num_out; ++i)
    ref_rec_type(r, &cp->result_types[i]);
}

/* ODLA 0.5's custom op, with odla_ext_custom.h's conventions: the one variadic argument is a
 * const odla_ext_custom_params * (or NULL). */
odla_values odla_CustomOp(odla_values inputs, const odla_char *op_name,
                          const odla_char *function_name, const odla_value_ids ids, ...) {
  const odla_ext_custom_params *cp;
  odla_values result;
  ref_rec rec;
  va_list ap;
  va_start(ap, ids);
  cp = va_arg(ap, const odla_ext_custom_params *);
  va_end(ap);
  result = ref_custom_op(inputs, op_name, function_name, ids, cp);
  if (ref_rec_begin(&rec, ref_current(), REF_CALL_odla_CustomOp, 1)) {
    ref_rec_values(&rec, &inputs);
    ref_rec_str(&rec, op_name);
    ref_rec_str(&rec, function_name);
    ref_rec_ids(&rec, &ids);
    ref_custom_record(&rec, cp, (int)ids.size);
    ref_rec_end(&rec);
  }
  return result;
}

odla_status ref_replay_CustomOp(ref_replay *r) {
  odla_values inputs = ref_get_values(r);
  const char *op_name = ref_get_str(r), *function_name = ref_get_str(r);
  odla_value_ids ids = ref_get_ids(r);
  odla_ext_custom_params *cp = NULL;
  uint32_t flags, n = 0, i;
  ref_get_4(r, &flags);
  if (flags & ~3u)
    ref_replay_refuse(r, "attribute block flags %lu", (unsigned long)flags);
  if (flags & 1u && (cp = (odla_ext_custom_params *)ref_replay_alloc(r, sizeof *cp)) != NULL) {
    odla_ext_custom_attr *attrs;
    odla_value_type *types;
    ref_get_4(r, &cp->version);
    ref_get_4(r, &n);
    cp->num_attrs = (int32_t)n;
    if (n > (r->len - r->at) / 16) /* each attribute takes at least 16 bytes */
      ref_replay_refuse(r, "%lu attributes", (unsigned long)n);
    attrs = (odla_ext_custom_attr *)ref_replay_alloc(r, (size_t)n * sizeof *attrs + 1);
    for (i = 0; i < n && !r->bad; ++i) {
      size_t bytes;
      attrs[i].name = ref_get_str(r);
      ref_get_4(r, &attrs[i].kind);
      ref_get_4(r, &attrs[i].count);
      /* The builder reads ref_attr_bytes of a valid kind's data: exactly what is stored. */
      bytes = attrs[i].count < 0 ? (size_t)-1 : ref_attr_bytes(attrs[i].kind, attrs[i].count);
      attrs[i].data = ref_get_bytes(r, bytes == (size_t)-1 ? (uint64_t)-1 : (uint64_t)bytes);
      if (!r->bad && attrs[i].kind == ODLA_EXT_ATTR_STRING && attrs[i].data &&
          ((const char *)attrs[i].data)[attrs[i].count] != '\0')
        ref_replay_refuse(r, "string attribute '%s' does not end with a NUL",
                          attrs[i].name ? attrs[i].name : "");
    }
    cp->attrs = attrs;
    if (flags & 2u &&
        (types = (odla_value_type *)ref_replay_alloc(r, ids.size * sizeof *types + 1)) != NULL) {
      for (i = 0; i < ids.size && !r->bad; ++i)
        types[i] = ref_get_type(r);
      cp->result_types = types;
    }
  }
  if (r->bad)
    return ref_replay_bad(r);
  return ref_replay_values(r, odla_CustomOp(inputs, op_name, function_name, ids, cp));
}
