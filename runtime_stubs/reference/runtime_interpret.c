/* runtime_interpret.c: interpret mode and value data access of the reference backend, values
 * bound to a context (odla_BindValueTo*ById) and odla_Dump.
 *
 * A computation interprets once odla_CreateValue has been called on it: its values hold
 * data (odla_SetValueData), and each op runs as soon as it is complete. Builders may still
 * adjust a node after appending it (scratch size, in-place hint), so a node runs when the
 * next builder starts (ref_check_operands calls ref_interpret_pending) or when data is read
 * (odla_GetValueData); every result gets its own buffer, freed by odla_ReleaseValue or when
 * the computation is destroyed. Values of such a computation are REF_ARGUMENT values (from
 * odla_CreateValue), constants, or results. Nothing here is planned: interpret mode trades
 * the arena for simplicity, and compile mode is the way to run a model many times. */
#include "ref.h"
#include "ref_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 64-byte aligned memory; the block's start is kept in the word before the aligned one. */
static void *ref_aligned_alloc(size_t bytes) {
  unsigned char *raw = (unsigned char *)ref_malloc(bytes + REF_ALIGN + sizeof(void *));
  unsigned char *p;
  if (!raw)
    return NULL;
  p = raw + sizeof(void *);
  p += (REF_ALIGN - (uintptr_t)p % REF_ALIGN) % REF_ALIGN;
  memcpy(p - sizeof(void *), &raw, sizeof raw);
  return p;
}

static void ref_aligned_free(void *p) {
  void *raw;
  if (!p)
    return;
  memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
  ref_free(raw);
}

void ref_release_held(odla_value value) {
  if (value->kind == REF_CONSTANT)
    return; /* a constant holds nothing */
  ref_aligned_free(ref_where(value)->held);
  ref_where(value)->held = NULL;
}

/* The data of an operand while interpreting: held data, or a constant's bytes. */
static const void *ref_operand_data(odla_value v) {
  return v->kind == REF_CONSTANT ? v->data : ref_where(v)->held;
}

/* Control-flow nodes (ops_control_flow.c) run ranges of the compiled node list; interpret
 * mode has no such list to jump in. */
static int ref_is_control_flow(const ref_node *n) {
  static const char *const ops[] = {"BeginIf", "EndIf", "BeginLoop", "LoopVariable", "EndLoop"};
  size_t i;
  for (i = 0; i < sizeof ops / sizeof ops[0]; ++i)
    if (strcmp(n->op, ops[i]) == 0)
      return 1;
  return 0;
}

static odla_status ref_run_node(odla_computation comp, ref_node *n) {
  enum { kMaxIo = 2 * ODLA_MAX_OUTPUTS };
  const void *in[kMaxIo];
  void *out[kMaxIo];
  ref_io io;
  odla_status s;
  int k;
  if (n->num_inputs > kMaxIo || n->num_outputs > kMaxIo)
    return ODLA_INTERNAL_LOGIC_ERR;
  if (ref_is_control_flow(n)) {
    ref_fail(ODLA_UNSUPPORTED_OP, n->op, "control flow runs in compile mode only");
    return ODLA_UNSUPPORTED_OP;
  }
  for (k = 0; k < n->num_inputs; ++k) {
    odla_value v = n->inputs[k];
    in[k] = v ? ref_operand_data(v) : NULL;
    if (v && !in[k] && ref_bytes(&v->type) > 0) {
      ref_fail(ODLA_INVALID_PARAM, n->op, "operand %d ('%s') %s", k, v->id,
               v->released ? "was released (odla_ReleaseValue) before its last use"
                           : "holds no data (set it with odla_SetValueData)");
      return ODLA_INVALID_PARAM;
    }
  }
  for (k = 0; k < n->num_outputs; ++k) {
    odla_value v = n->outputs[k];
    if (!ref_where(v)->held)
      ref_where(v)->held = ref_aligned_alloc(ref_bytes(&v->type));
    if (!ref_where(v)->held) {
      ref_fail(ODLA_MEM_ERROR, n->op, "out of memory for result '%s'", v->id);
      return ODLA_MEM_ERROR;
    }
    out[k] = ref_where(v)->held;
  }
  io.in = in;
  io.out = out;
  io.exec = NULL;
  io.strings = &comp->strings;
  io.scratch = n->scratch_bytes ? ref_aligned_alloc(n->scratch_bytes) : NULL;
  if (n->scratch_bytes && !io.scratch) {
    ref_fail(ODLA_MEM_ERROR, n->op, "out of memory for %lu bytes of scratch",
             (unsigned long)n->scratch_bytes);
    return ODLA_MEM_ERROR;
  }
  s = ref_node_run(n, &io);
  ref_aligned_free(io.scratch);
  if (s != ODLA_SUCCESS)
    ref_fail(s, n->op, "producing '%s' failed with status %d",
             n->num_outputs ? n->outputs[0]->id : "", (int)s);
  return s;
}

odla_status ref_interpret_pending(odla_computation comp) {
  if (comp->error != ODLA_SUCCESS)
    return comp->error;
  while (comp->num_run < comp->num_nodes) {
    odla_status s = ref_run_node(comp, comp->nodes[comp->num_run++]);
    if (s != ODLA_SUCCESS)
      return s;
  }
  return ODLA_SUCCESS;
}

/* Runs what is pending on the current computation when it interprets. */
static odla_status ref_settle(void) {
  odla_computation comp = ref_current();
  return comp && comp->interpret ? ref_interpret_pending(comp) : ODLA_SUCCESS;
}

odla_value odla_CreateValue(const odla_value_type value_type, const odla_value_id value_id) {
  odla_computation comp = ref_current();
  if (comp && !comp->interpret && comp->num_nodes > 0)
    return ref_fail(ODLA_INVALID_PARAM, "CreateValue",
                    "the computation already has ops built in compile mode; interpret mode "
                    "starts with odla_CreateValue on a new computation");
  if (comp)
    comp->interpret = 1;
  return odla_CreateArgument(value_type, value_id);
}

odla_status odla_FindValueById(const odla_value_id value_id, odla_value *value) {
  odla_computation comp = ref_current();
  int i;
  if (!comp || !value_id || !value)
    return ODLA_INVALID_PARAM;
  for (i = 0; i < comp->num_values; ++i)
    if (strcmp(comp->values[i]->id, (const char *)value_id) == 0) {
      *value = comp->values[i];
      return ODLA_SUCCESS;
    }
  return ODLA_INVALID_PARAM;
}

odla_status odla_GetValueTypeById(const odla_value_id value_id, odla_value_type *value_type) {
  odla_value v;
  odla_status s = odla_FindValueById(value_id, &v);
  return s == ODLA_SUCCESS ? odla_GetValueType(v, value_type) : s;
}

odla_status odla_SetValueData(odla_value value, const odla_void *data_ptr) {
  odla_computation comp = ref_current();
  size_t bytes;
  if (!value || (!data_ptr && value->type.shape.size >= 0 && ref_bytes(&value->type) > 0))
    return ODLA_INVALID_PARAM;
  if (!comp || !comp->interpret || value->kind != REF_ARGUMENT) {
    ref_fail(ODLA_INVALID_PARAM, "SetValueData",
             "value '%s': only values from odla_CreateValue (interpret mode) take data; "
             "bind arguments to a context in compile mode",
             value->id);
    return ODLA_INVALID_PARAM;
  }
  /* A pending op may read the old data: run it first. */
  if (ref_interpret_pending(comp) != ODLA_SUCCESS)
    return comp->error;
  bytes = ref_bytes(&value->type);
  if (!ref_where(value)->held && !(ref_where(value)->held = ref_aligned_alloc(bytes)))
    return ODLA_MEM_ERROR;
  if (bytes)
    memcpy(ref_where(value)->held, data_ptr, bytes);
  value->released = 0;
  return ODLA_SUCCESS;
}

odla_status odla_SetValueDataById(const odla_value_id value_id, const odla_void *data_ptr) {
  odla_value v;
  odla_status s = odla_FindValueById(value_id, &v);
  return s == ODLA_SUCCESS ? odla_SetValueData(v, data_ptr) : s;
}

static void *ref_bound(const ref_binding *list, int num, const char *id) {
  int i;
  for (i = 0; i < num; ++i)
    if (strcmp(list[i].id, id) == 0)
      return list[i].data;
  return NULL;
}

odla_status odla_GetRawDataPtr(const odla_value value, odla_void **data_ptr) {
  odla_status s;
  if (!value || !data_ptr)
    return ODLA_INVALID_PARAM;
  if ((s = ref_settle()) != ODLA_SUCCESS)
    return s;
  *data_ptr = (odla_void *)(uintptr_t)ref_operand_data(value);
  return *data_ptr || ref_bytes(&value->type) == 0 ? ODLA_SUCCESS : ODLA_INVALID_PARAM;
}

odla_status odla_GetValueData(const odla_value value, odla_void *data_ptr, odla_context context) {
  const void *src;
  size_t bytes;
  odla_status s;
  if (!value || !data_ptr)
    return ODLA_INVALID_PARAM;
  bytes = ref_bytes(&value->type);
  if (context) { /* compile mode: the buffer bound to the context */
    if (value->kind == REF_CONSTANT)
      src = value->data;
    else if (value->kind == REF_ARGUMENT)
      src = ref_bound(context->args, context->num_args, value->id);
    else
      src = value->is_output ? ref_bound(context->outs, context->num_outs, value->id) : NULL;
  } else {
    if ((s = ref_settle()) != ODLA_SUCCESS)
      return s;
    src = ref_operand_data(value);
  }
  if (!src && bytes > 0) {
    char msg[300];
    ref_snprintf(msg, sizeof msg, "value '%s' has no data here%s", value->id,
                 context ? " (only bound arguments, bound outputs and constants do)"
                         : (value->released ? " (it was released)" : ""));
    ref_fail(ODLA_INVALID_PARAM, "GetValueData", "%s", msg);
    return ODLA_INVALID_PARAM;
  }
  if (bytes && src != data_ptr)
    memcpy(data_ptr, src, bytes);
  return ODLA_SUCCESS;
}

odla_status odla_GetValueDataById(const odla_value_id value_id, odla_void *data_ptr) {
  odla_value v;
  odla_status s = odla_FindValueById(value_id, &v);
  return s == ODLA_SUCCESS ? odla_GetValueData(v, data_ptr, NULL) : s;
}

odla_status odla_ReleaseValue(odla_value value) {
  odla_status s;
  if (!value)
    return ODLA_INVALID_PARAM;
  /* Ops built before the release still read the value: run them now. */
  if ((s = ref_settle()) != ODLA_SUCCESS)
    return s;
  ref_release_held(value);
  value->released = 1;
  return ODLA_SUCCESS;
}

odla_status odla_ReleaseValueById(odla_value_id value_id) {
  odla_value v;
  odla_status s = odla_FindValueById(value_id, &v);
  return s == ODLA_SUCCESS ? odla_ReleaseValue(v) : s;
}

odla_status odla_SetValuesAsOutput(odla_values values) {
  odla_size_t i;
  if (values.size > ODLA_MAX_OUTPUTS)
    return ODLA_INVALID_PARAM;
  for (i = 0; i < values.size; ++i) {
    odla_status s = odla_SetValueAsOutput(values.values[i]);
    if (s != ODLA_SUCCESS)
      return s;
  }
  return ODLA_SUCCESS;
}

odla_status odla_SetValueAsOutputById(const odla_value_id value_id) {
  odla_value v;
  odla_status s = odla_FindValueById(value_id, &v);
  return s == ODLA_SUCCESS ? odla_SetValueAsOutput(v) : s;
}

/* ---- Values bound to a context ----------------------------------------------------------- */

/* The data an odla_value offers a context: a constant's bytes, or the data an interpret-mode
 * value holds. An output gets a buffer when the value has none yet (odla_CreateValue without
 * odla_SetValueData); constants are read-only. */
static odla_status ref_value_binding(const char *func, odla_value v, int output, void **data) {
  odla_status s;
  if (!v)
    return ODLA_INVALID_PARAM;
  if (v->kind == REF_CONSTANT) {
    if (output) {
      ref_report(ODLA_LOG_LEVEL_ERROR, func,
                 "value '%s' is a constant; an output needs a value "
                 "that can be written (odla_CreateValue)",
                 v->id);
      return ODLA_INVALID_PARAM;
    }
    *data = (void *)(uintptr_t)v->data;
    return ODLA_SUCCESS;
  }
  if ((s = ref_settle()) != ODLA_SUCCESS) /* the value may be a pending op's result */
    return s;
  if (output && !ref_where(v)->held && v->kind == REF_ARGUMENT && !v->released &&
      !(ref_where(v)->held = ref_aligned_alloc(ref_bytes(&v->type))))
    return ODLA_MEM_ERROR;
  if (!ref_where(v)->held && ref_bytes(&v->type) > 0) {
    ref_report(ODLA_LOG_LEVEL_ERROR, func,
               "value '%s' holds no data: bind a constant or an interpret-mode value (%s)", v->id,
               v->released ? "it was released" : "odla_CreateValue, odla_SetValueData");
    return ODLA_INVALID_PARAM;
  }
  *data = ref_where(v)->held;
  return ODLA_SUCCESS;
}

odla_status odla_BindValueToArgumentById(const odla_value_id value_id, odla_value data,
                                         odla_context context) {
  void *p = NULL;
  odla_status s;
  if (!value_id || !context)
    return ODLA_INVALID_PARAM;
  if ((s = ref_value_binding("BindValueToArgumentById", data, 0, &p)) != ODLA_SUCCESS)
    return s;
  return ref_bind_value(context, 0, (const char *)value_id, p, ref_bytes(&data->type));
}

odla_status odla_BindValueToOutputById(const odla_value_id value_id, odla_value data,
                                       odla_context context) {
  void *p = NULL;
  odla_status s;
  if (!value_id || !context)
    return ODLA_INVALID_PARAM;
  if ((s = ref_value_binding("BindValueToOutputById", data, 1, &p)) != ODLA_SUCCESS)
    return s;
  return ref_bind_value(context, 1, (const char *)value_id, p, ref_bytes(&data->type));
}

/* ---- odla_Dump ------------------------------------------------------------------------ */

#define REF_DUMP_MAX_ELEMENTS 64

/* Prints to stdout: a line "odla_Dump: '<id>' <type>[<dims>] <kind>", where kind is
 * "argument", "constant" or "result of <Op>", then the data where there is some to print,
 * "  data: v0 v1 ..." (at most REF_DUMP_MAX_ELEMENTS elements in row-major order, then
 * "... (<n> more)"; floats as %.9g, integers exactly, bool as 0/1), or "  data: none (<why>)":
 * in compile mode only constants have data outside an execution; in interpret mode a value
 * has data once set or computed (pending ops run first) and until released. */
void odla_Dump(odla_value value) {
  char shape[160];
  const void *data = NULL;
  const char *why = NULL;
  odla_computation comp = ref_current();
  int64_t n, i;
  odla_element_type t;
  if (!value) {
    printf("odla_Dump: NULL value\n");
    fflush(stdout);
    return;
  }
  t = value->type.element_type;
  printf("odla_Dump: '%s' %s%s %s%s\n", value->id, ref_type_name(t),
         ref_shape_str(&value->type.shape, shape, sizeof shape),
         value->kind == REF_ARGUMENT ? "argument"
                                     : (value->kind == REF_CONSTANT ? "constant" : "result of "),
         value->kind == REF_RESULT && value->node ? value->node->op : "");
  if (value->kind == REF_CONSTANT) {
    data = value->data;
  } else {
    /* A value of the current interpreting computation may wait for pending ops. */
    int interpreted = comp && comp->interpret && value->index < comp->num_values &&
                      comp->values[value->index] == value;
    if (interpreted && ref_interpret_pending(comp) != ODLA_SUCCESS)
      why = "the interpreted ops failed";
    else if (!(data = ref_where(value)->held))
      why = value->released ? "released"
                            : (interpreted ? "not set (odla_SetValueData)"
                                           : "compile mode: bind it as an output to see it");
  }
  n = ref_count(&value->type.shape);
  if (!data && n > 0) {
    printf("  data: none (%s)\n", why ? why : "empty");
    fflush(stdout);
    return;
  }
  printf("  data:");
  for (i = 0; i < n && i < REF_DUMP_MAX_ELEMENTS; ++i) {
    if (ref_is_float(t))
      printf(" %.9g", ref_get(t, data, i));
    else if (t == ODLA_UINT64)
      printf(" %llu", (unsigned long long)((const uint64_t *)data)[i]);
    else
      printf(" %lld", (long long)ref_get_int(t, data, i));
  }
  if (n > REF_DUMP_MAX_ELEMENTS)
    printf(" ... (%lld more)", (long long)(n - REF_DUMP_MAX_ELEMENTS));
  printf("\n");
  fflush(stdout);
}
