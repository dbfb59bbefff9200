/* ref.h: internals of the reference backend (libodla_reference).
 *
 * Model: a computation records values and nodes as the ODLA builders are called (compile
 * mode). Each builder checks its operands, works out its result type, and appends a node
 * with a kernel and a parameter block. Compiling plans one activation arena for the whole
 * computation (planner.c); executing runs the nodes in order over a context's arena and the
 * caller's bound buffers. Kernels check nothing at run time: builders checked everything.
 *
 * Errors: a builder that rejects its operands records the first error in the computation
 * and returns NULL; later builders given NULL return NULL; odla_CompileComputation and
 * odla_ExecuteComputation then report the recorded status. */
#ifndef ODLA_REFERENCE_REF_H_
#define ODLA_REFERENCE_REF_H_

/* First: it renames the public builders (calls.h), before the ODLA headers declare them. */
#include "ref_call_names.h"

#include "ref_isa.h"

#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define REF_ALIGN 64

/* ODLA's enums hold values past a byte (the extension element types of odla_ext_types.h): a
 * target whose enums are smaller by default (arm-none-eabi's) needs -fno-short-enums, or this
 * array has a negative size. */
typedef char ref_enums_need_32_bits[sizeof(odla_element_type) >= 4 ? 1 : -1];

typedef enum { REF_ARGUMENT, REF_CONSTANT, REF_RESULT } ref_value_kind;
/* The most values a computation holds (struct _odla_value's index). */
enum { REF_MAX_VALUES = 1 << 24 };

typedef struct ref_node ref_node;

/* One execution of a compiled computation (compile mode), for control-flow kernels, which
 * run ranges of nodes themselves (ops_control_flow.c): a kernel that sets `next` makes the
 * executor continue at that node index. */
typedef struct ref_exec {
  odla_computation comp;
  odla_context ctx;
  int next;         /* -1: the next node in order */
  int forward_only; /* ODLA_COMPUTE_INFERENCE: a differentiated computation's backward pass
                       (nodes from comp->num_forward_nodes on) does not run */
  struct ref_threads *threads; /* the execution's worker pool, or NULL: one thread (threads.h) */
  int profile; /* the device profiler times this execution's nodes (runtime_profiler.c) */
} ref_exec;

/* Every allocation of the backend (memory.c): the current odla_ExtSetMemory region, else the
 * C library's heap (none built with ODLA_REFERENCE_NO_HEAP). C's semantics; ref_free takes a
 * block of either. */
void *ref_malloc(size_t bytes);
void *ref_calloc(size_t count, size_t size);
void *ref_realloc(void *p, size_t bytes);
void ref_free(void *p);
/* Whether allocations come from a region (odla_ExtSetMemory) now: memory the application
 * counts, where a node's sealed parameters are stored packed (ref_add_sealed_op). */
int ref_memory_in_region(void);

/* A context's arena outlives it while a computation is alive (memory.c): ref_arena_release
 * keeps the largest released heap arena (any other is freed), ref_arena_take hands it to the
 * next context (grown by realloc where it is smaller), and it is freed when the last
 * computation is destroyed (ref_count_computation, which says when that was the last: then
 * the worker pools waiting for the next execution go too, threads.h). A computation built for other
 * dims in place of the last one (odlac's --dim) then runs in the memory the last one had touched: a
 * new arena's pages would fault in again on every build. */
void ref_arena_release(void *alloc, size_t bytes);
void *ref_arena_take(size_t bytes, size_t *got);
int ref_count_computation(int delta);
/* Temporaries of one call, zeroed (memory.c): bumped from [at, end) while they fit (a
 * computation's ODLA_EXT_ITEM_COMPILE_SCRATCH memory, which --no-heap code gives from its arena
 * while the arena is unused: the planner's lists then add nothing to the instance's memory),
 * else from ref_calloc. ref_temp_free frees a block of the latter kind; the bumped ones go
 * with the call. */
typedef struct {
  unsigned char *base, *at, *end;
} ref_temp;
void *ref_temp_alloc(ref_temp *t, size_t count, size_t size);
void ref_temp_free(const ref_temp *t, void *p);

/* Message formatting (format.c): the C library's vsnprintf, or the backend's own built with
 * ODLA_REFERENCE_NO_STDIO (its messages' conversions only). */
int ref_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap);
int ref_snprintf(char *buf, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The bytes of the strings that string ops produce (odla_ext_string.h): blocks from the heap,
 * the one thing the reference backend allocates while it executes (a computation without
 * string results never does). A context's pool is emptied when an execution starts and freed
 * with the context; interpret mode uses the computation's. */
typedef struct ref_string_block ref_string_block;
typedef struct {
  ref_string_block *head;
} ref_string_pool;
/* Room for `bytes` bytes in `pool`, or NULL when the heap has none. */
char *ref_string_alloc(ref_string_pool *pool, size_t bytes);
void ref_string_pool_free(ref_string_pool *pool);

/* Pointers to a node's operand and result data during one execution. */
typedef struct {
  const void *const *in;
  void *const *out;
  void *scratch;            /* the node's scratch_bytes of arena, 64-byte aligned */
  ref_exec *exec;           /* compile mode only; control-flow kernels use it */
  ref_string_pool *strings; /* where string results' bytes go */
} ref_io;

/* `offset` bytes into a node's scratch, or NULL where it has none (a kernel then reads none:
 * arithmetic on a NULL pointer is undefined, even by 0). */
static inline void *ref_scratch_at(void *scratch, size_t offset) {
  return scratch ? (unsigned char *)scratch + offset : NULL;
}

typedef odla_status (*ref_kernel)(const ref_node *node, const ref_io *io);

/* A value: one per argument, constant and result. Its flags are bytes, and its type is last,
 * stored up to its rank: a value holds the dims it has, not ODLA_MAX_DIMENSION of them (a
 * 32-bit target's constant of rank 1 takes 48 bytes with its block's header, not 152: on a
 * microcontroller, RAM for each of them). Read the type's fields (their dims below the rank)
 * in place; a copy of the whole type is ref_type_of's. An argument or a result has a
 * ref_value_place in front of it, in the same block (ref_where); a constant, most of a
 * model's values, has none. Values are made by ref_value_alloc and freed by ref_value_free. */
struct _odla_value {
  const char *id;   /* a copy, or the caller's string (ODLA_EXT_ITEM_STATIC_IDS) */
  const void *data; /* constants: the caller's bytes, which must outlive the computation */
  ref_node *node;   /* results: the producing node */
  /* One word, so that on a 32-bit target the type starts 16 bytes in, not 24: its position in
   * the computation's value list (under REF_MAX_VALUES), a ref_value_kind, flags. */
  unsigned int index : 24;
  unsigned int kind : 2;
  unsigned int is_output : 1, released : 1;
  unsigned int is_view : 1; /* its place's link is the argument it is a view of */
  /* odla_CreateVariable (autodiff.c): an argument that odla_DifferentiateComputation takes
   * the loss's gradient with respect to. */
  unsigned int is_variable : 1;
  odla_value_type type; /* last: its dims up to type.shape.size only */
};

/* Where an argument's or a result's bytes are, and what else the backend keeps for it. */
typedef struct {
  /* Planning (planner.c): arena offset and the node indices of first and last use. */
  size_t offset;
  int first_use, last_use;
  /* A value that reuses an operand's buffer in place: the value that owns the buffer
   * (ref_shares); a result whose bytes are an argument's, from `offset` on (ref_plan_views:
   * no buffer of its own, and its node runs nothing): that argument, with is_view set
   * (ref_view_source). One field: a view has no buffer to share. */
  odla_value link;
  /* Interpret mode (runtime_interpret.c): the value's own data, or NULL; `released` after
   * odla_ReleaseValue. */
  void *held;
  /* odla_SetInputValueInfo (runtime_shapes.c): the caller's per-element bounds of an
   * argument's data, checked before each execution: minimum and maximum (each may be NULL), in
   * a block of their own (few values have them), or NULL. */
  const void **bounds;
} ref_value_place;

/* The bytes in front of an argument or a result: its place, padded to the value's alignment. */
#define REF_PLACE_ROOM ((sizeof(ref_value_place) + 7) / 8 * 8)

/* The place of `v`, an argument or a result (never a constant's: it has none). */
static inline ref_value_place *ref_where(odla_value v) {
  return (ref_value_place *)(void *)((unsigned char *)v - REF_PLACE_ROOM);
}
/* The argument a result is a view of, or NULL (also for every constant). */
static inline odla_value ref_view_source(odla_value v) {
  return v->kind != REF_CONSTANT && v->is_view ? ref_where(v)->link : NULL;
}
/* The value whose buffer v reuses in place, or NULL. */
static inline odla_value ref_shares(odla_value v) {
  return v->kind != REF_CONSTANT && !v->is_view ? ref_where(v)->link : NULL;
}
/* Makes v, an argument or a result, a view of `source` (NULL: none). */
static inline void ref_set_view(odla_value v, odla_value source) {
  ref_where(v)->link = source;
  v->is_view = source != NULL;
}
/* Makes v, an argument or a result, reuse the buffer of `owner` (NULL: none). */
static inline void ref_set_shares(odla_value v, odla_value owner) {
  ref_where(v)->link = owner;
  v->is_view = 0;
}

/* A zeroed value of `kind` with room for `rank` dims (its place in front unless a constant),
 * or NULL; ref_value_free frees one (NULL is ignored). */
odla_value ref_value_alloc(ref_value_kind kind, int rank);
void ref_value_free(odla_value v);

/* The whole type of `v`, its dims past the rank 0. */
odla_value_type ref_type_of(odla_value v);
/* A copy of *s (a value's, which holds dims up to its rank only), its dims past the rank 0. */
odla_value_shape ref_shape_copy(const odla_value_shape *s);

struct ref_node {
  const char *op; /* the ODLA function that built it, without "odla_" */
  ref_kernel run;
  int num_inputs;
  unsigned int num_outputs : 30;
  /* params holds the parameter block packed (ref_add_sealed_op): params_size is the block's
   * size once ref_node_run has expanded it for a run. */
  unsigned int params_packed : 1;
  /* The node's block holds it, its operand and result lists (num_inputs + num_outputs
   * entries) and its parameters (params_inline; ref_add_node); lists or parameters set later
   * (libodla_dnnl's) are allocations of their own (ref_node_free_lists, ref_node_free_params). */
  unsigned int params_inline : 1;
  odla_value *inputs; /* NULL entries are absent optional operands */
  odla_value *outputs;
  void *params; /* the op's parameter block, owned by the node */
  size_t params_size;
  size_t scratch_bytes; /* temporary memory the kernel needs while it runs */
  size_t scratch_offset;
  int index;
  /* The operand whose buffer the (single) result may reuse, or -1. A builder sets it when
   * its kernel reads element i of that operand before writing element i of the result
   * (elementwise ops on an operand of the result's shape, reshapes). The planner reuses the
   * buffer only when that operand dies at this node (a Reshape, a view, always; planner.c). */
  int inplace_input;
  /* The operand whose bytes from view_offset on are the (single) result's, or -1: a Reshape's
   * (offset 0), a Gather's of one constant index along the leading axis. When that operand is
   * an argument or a view of one, the result is a view of it (ref_plan_views). */
  int view_input;
  size_t view_offset;
  /* For the device profiler (runtime_profiler.c): floating-point operations of one run, set
   * by the builders of Conv, Gemm and BatchMatMul (0: not known), and the engine that runs
   * the node when it is not the reference kernel (a backend's name, e.g. "dnnl"), or NULL. */
  int64_t flops;
  const char *engine;
  /* What the node prepares once for every execution when its computation is compiled
   * (odla_CompileComputation calls it with release 0) and frees when the computation is
   * destroyed (release 1), or NULL: a float32 GEMM Conv packs its constant kernel (ops_conv.c).
   * Set by its builder, so that only the builders a model calls bring it into a program. */
  void (*prepare)(ref_node *node, int release);
};

struct _odla_computation {
  odla_value *values;
  int num_values, cap_values;
  ref_node **nodes;
  int num_nodes, cap_nodes;
  int compiled;
  size_t arena_bytes;
  odla_status error;          /* the first builder error */
  struct ref_region *regions; /* control-flow regions being built, innermost first */
  int interpret;              /* ops run as they are built (runtime_interpret.c) */
  int num_run;                /* interpret mode: nodes already run */
  void *loaded; /* odla_LoadComputation (executable_io.c): the file image its constants use */
  struct ref_call_log *calls;         /* the calls that built it, for storing it (calls.h) */
  const struct ref_replay *replaying; /* while loading: the call being replayed, which
                                         builders' messages name (calls.h) */
  /* odla_DifferentiateComputation (autodiff.c): the nodes before the appended backward pass,
   * all that ODLA_COMPUTE_INFERENCE runs; 0 when not differentiated. */
  int num_forward_nodes;
  int threads;      /* the ODLA_PROCESSOR_NUM item, 0 where unset (threads.h) */
  int least_memory; /* the ODLA_EXT_ITEM_LEAST_MEMORY item: builders pick kernels with
                       the least scratch */
  int static_ids;   /* the ODLA_EXT_ITEM_STATIC_IDS item: values' ids are the caller's */
  odla_ext_arena compile_scratch; /* the ODLA_EXT_ITEM_COMPILE_SCRATCH item: where compiling
                                     puts its temporaries (ref_temp), or {NULL, 0} */
  char **made_ids; /* with static ids, the ids the backend makes (ref_made_id), its own */
  int num_made_ids, cap_made_ids;
  ref_string_pool strings; /* interpret mode: the string results' bytes */
  /* Dynamic batch (runtime_shapes.c): the ODLA_DYNAMIC_BATCH and ODLA_{MIN,MAX,OPT}_BATCH_SIZE
   * items; 0 where unset. */
  struct {
    odla_bool dynamic;
    odla_int32 min, max, opt;
  } batch;
};

struct _odla_executable {
  odla_computation comp;
  void *storage; /* a loaded executable (executable_io.c): the memory its computation lives in */
};

typedef struct {
  char *id;
  void *data;
  size_t bytes; /* an odla_value's bytes (odla_BindValueTo*ById), checked before executing;
                   0 for a plain pointer */
} ref_binding;

struct _odla_context {
  ref_binding *args, *outs;
  int num_args, num_outs, cap_args, cap_outs;
  unsigned char *arena; /* 64-byte aligned */
  size_t arena_bytes;
  void *arena_alloc;        /* what to free when the arena is ours; NULL when the caller's */
  size_t arena_alloc_bytes; /* its bytes (from ref_arena_take) */
  /* Asynchronous execution (runtime_async.c): the ODLA_ASYNC_CALLBACK_FUNC / _ARG items. */
  int (*async_callback)(void *arg, odla_status status);
  void *async_arg;
  /* odla_AsyncLaunchExecutable with a constants array (executable_io.c): per value index, the
   * data that replaces a constant's during that execution (NULL entries: the constant's own),
   * or NULL. */
  const void *const *constants;
  /* Threads (threads.h): the ODLA_PROCESSOR_NUM item (0 where unset). */
  int threads;
  /* Runtime shapes (runtime_shapes.c): the ODLA_RUN_BATCH_SIZE item or the batch the
   * arguments' runtime shapes set (0: the built batch), what those shapes and a batched run
   * need, and the computation last executed on the context. */
  odla_int32 run_batch;
  struct ref_shapes *shapes;
  odla_computation last_comp;
  ref_string_pool strings; /* string results' bytes of the last execution */
};

/* Builder support (computation.c). */
odla_computation ref_current(void);
/* Makes `comp` the thread's current computation (loading replays calls into it). */
void ref_set_current(odla_computation comp);
/* Records the first error of the current computation and logs `fmt`. Returns NULL. */
odla_value ref_fail(odla_status status, const char *op, const char *fmt, ...);
/* An id the backend makes for a value of its own (a fused op's "<id>/product"): where the
 * current computation keeps ids by pointer (ODLA_EXT_ITEM_STATIC_IDS), a copy of `text` that
 * the computation frees (NULL when there is no memory for it: the value is then nameless);
 * else `text` itself, which the value copies. */
odla_value_id ref_made_id(const char *text);
/* Logs `fmt` at `level` for the function `func`, recording nothing (runtime functions). */
void ref_report(odla_log_level level, const char *func, const char *fmt, ...);
/* Appends a node with `num_outputs` results of the given types. Returns the node, or NULL on
 * allocation failure (recorded). `params` (params_size bytes) is copied into the node. */
ref_node *ref_add_node(const char *op, ref_kernel run, int num_inputs, const odla_value *inputs,
                       int num_outputs, const odla_value_type *out_types,
                       const odla_value_id *out_ids, const void *params, size_t params_size);
/* The one-result form: returns the result value or NULL. */
odla_value ref_add_op(const char *op, ref_kernel run, int num_inputs, const odla_value *inputs,
                      odla_value_type out_type, odla_value_id out_id, const void *params,
                      size_t params_size);
/* ref_add_op for a builder whose parameter block is read by its own kernel only, and by
 * nothing else at any time (no other builder, fusion or compile step reads or writes it): where
 * the node is built in a region (ref_memory_in_region), a block of at most
 * REF_PACKED_PARAMS_MAX bytes is stored packed, its runs of zero bytes (int64 fields of small
 * numbers, unused dims) dropped, and ref_node_run expands it on the stack for each run.
 * A microcontroller's quantized convolution keeps about 85 of its 384 bytes. */
enum { REF_PACKED_PARAMS_MAX = 512 };
odla_value ref_add_sealed_op(const char *op, ref_kernel run, int num_inputs,
                             const odla_value *inputs, odla_value_type out_type,
                             odla_value_id out_id, const void *params, size_t params_size);
/* Runs node n's kernel (every executor calls it): with its parameter block expanded where it
 * is packed. */
odla_status ref_node_run(const ref_node *n, const ref_io *io);
/* Free a node's parameters (params NULL after), its lists (inputs and outputs NULL after),
 * where they are not in the node's block, and the node with all it holds. */
void ref_node_free_params(ref_node *n);
void ref_node_free_lists(ref_node *n);
void ref_node_free(ref_node *n);
/* Checks that operands are present (optional ones may be NULL by passing -1 in `required`)
 * and belong to the current computation. */
int ref_check_operands(const char *op, int n, const odla_value *values);

/* Interpret mode (runtime_interpret.c): runs the nodes built since the last call; builders
 * call it through ref_check_operands before adding a node. */
odla_status ref_interpret_pending(odla_computation comp);
/* Frees the data interpret mode holds for a value. */
void ref_release_held(odla_value value);
/* Context items beyond the arena (runtime_async.c): the async callback and its argument,
 * ODLA_PROCESSOR_NUM. */
odla_status ref_set_context_item(odla_context context, odla_item_type type, odla_item_value value);
/* Frees what a loaded executable owns (executable_io.c); 0 when it owns nothing. */
int ref_free_loaded(odla_executable executable);
/* Stored computations and constants arrays (executable_io.c): frees what a loaded computation
 * owns (comp->loaded); builds the per-value table of ctx->constants for running `comp` with
 * `array` (NULL entries keep a constant's own data; the caller frees the table). */
void ref_free_loaded_computation(odla_computation comp);
odla_status ref_constants_table(odla_computation comp, odla_constants_array array,
                                const void ***table);
/* Binds `data` of `bytes` bytes (an odla_value's) as an argument or output (computation.c). */
odla_status ref_bind_value(odla_context context, int output, const char *id, void *data,
                           size_t bytes);

/* Runtime shapes (runtime_shapes.c): computation and context items of the batch; runs a
 * computation's nodes over the context's run batch (several passes over row slices of the
 * bound buffers for a dynamic-batch computation); frees a context's shape state. */
odla_status ref_set_batch_item(odla_computation comp, odla_item_type type, odla_item_value value);
odla_status ref_set_run_batch(odla_context context, odla_item_value value);
odla_status ref_run_batches(ref_exec *x);
void ref_free_shapes(odla_context context);

/* Execution (computation.c): runs nodes [first, last) of x->comp on x->ctx, following the
 * jumps control-flow kernels make; where a value's data lives during an execution. */
odla_status ref_run_nodes(ref_exec *x, int first, int last);
void *ref_value_data(odla_context ctx, odla_value v);

/* Device profiler (runtime_profiler.c). ref_profile_begin says whether an execution starting
 * now is profiled (counting it in flight); such an execution runs each node through
 * ref_profile_run, which times it, and ends with ref_profile_end. ref_profile_forget detaches
 * a destroyed computation's entries. */
int ref_profile_begin(void);
void ref_profile_end(void);
odla_status ref_profile_run(const ref_exec *x, int node, const ref_io *io);
void ref_profile_forget(odla_computation comp);

/* Control flow (ops_control_flow.c). Inside an If branch odla_SetValueAsOutput marks a
 * branch result: ref_set_region_result handles it when a region is open. ref_plan_regions
 * extends lifetimes so that loop bodies can run repeatedly over one plan (planner.c calls
 * it before placing buffers); ref_free_regions frees regions left open. */
odla_status ref_set_region_result(odla_computation comp, odla_value value);
void ref_plan_regions(odla_computation comp);
void ref_free_regions(odla_computation comp);

/* Shapes and types. */
size_t ref_elem_size(odla_element_type t);
int64_t ref_count(const odla_value_shape *s);
size_t ref_bytes(const odla_value_type *t);
/* Whether `t` is a valid type of a value: a known element type, rank 0 to ODLA_MAX_DIMENSION,
 * dims >= 0 and at most REF_MAX_VALUE_BYTES bytes, counting its non-zero dims only (so that
 * no product of its dims overflows); stores the bytes in *bytes. Products are overflow-checked:
 * a type from a file or a hostile caller may hold any numbers. */
int ref_type_bytes(const odla_value_type *t, uint64_t *bytes);
/* Whether a builder's computed result type is valid (ref_type_bytes); reports "the result T
 * [dims] holds more than 2^48 bytes" for `op` when not. Builders call it before sizing scratch
 * or plans from the result's dims, which may each be valid while their product is not. */
int ref_result_fits(const char *op, const odla_value_type *out);
/* Whether a * b == want, without forming a product that may overflow (dims, strides and
 * groups come from a builder's arguments: a stored file can hold any). */
static inline int ref_product_is(int64_t a, int64_t b, int64_t want) {
  if (b == 0)
    return want == 0;
  if (b == -1)
    return a != INT64_MIN && -a == want;
  return want % b == 0 && want / b == a;
}
/* a * b for a, b >= 0, saturated at INT64_MAX: for counts such as a node's flops, whose
 * factors a stored file may make as large as the value bounds allow. */
static inline int64_t ref_mul_sat(int64_t a, int64_t b) {
  return b > 0 && a > INT64_MAX / b ? INT64_MAX : a * b;
}
/* The same bound as odlac's kMaxTensorBytes (compiler/ir/Limits.h): the 48-bit address space
 * of the largest targets. odlac lowers every graph it compiles through this backend, so a
 * smaller bound here would refuse tensors that --size-limit allows. */
#define REF_MAX_VALUE_BYTES ((uint64_t)1 << 48)
int ref_same_shape(const odla_value_shape *a, const odla_value_shape *b);
const char *ref_type_name(odla_element_type t);
/* Formats a shape as "[1,3,224,224]" into buf. */
const char *ref_shape_str(const odla_value_shape *s, char *buf, size_t cap);
/* Whether `given` is a defined shape (size >= 0) that differs from `inferred`. */
int ref_shape_conflicts(const odla_value_shape *given, const odla_value_shape *inferred);

/* Planner (planner.c): assigns arena offsets; returns the arena size. */
size_t ref_plan(odla_computation comp);
/* Lets the node producing `v` (one result) give it the buffer of its operand `operand` (see
 * ref_node.inplace_input); returns v, which may be NULL (a failed builder). */
odla_value ref_inplace_of(odla_value v, int operand);
/* Marks v's node as a view of operand `operand` from byte `offset` on (ref_node.view_input);
 * returns v, which may be NULL. */
odla_value ref_view_of(odla_value v, int operand, size_t offset);
/* The planners' first step: makes each result whose node names a view operand that is an
 * argument, or a view of one, a view of that argument. The caller's buffer outlives the
 * execution and nothing writes an argument, so the result needs no copy; such a value takes
 * no arena buffer and no node computes into it. */
void ref_plan_views(odla_computation comp);
/* One buffer to place: `size` bytes live from node `first` to node `last`. */
typedef struct {
  size_t size;
  int first, last, order;
  size_t *offset; /* where the planner stores the buffer's offset */
  size_t placed;
} ref_buffer;
/* Places `n` buffers (planner.c, steps 3 to 5), storing each offset through `offset` and
 * `placed`, its lists from `temp` (NULL: ref_calloc's); returns the arena size, or (size_t)-1
 * when out of memory. */
size_t ref_plan_buffers(ref_buffer *bufs, int n, ref_temp *temp);

/* Kernels shared between op files. `pack` is packing scratch of ref_sgemm_scratch floats;
 * NULL with m = 1 computes without packing (a least-memory computation's products). */
void ref_sgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc, float *pack);
/* Floats of packing scratch that ref_sgemm needs for an m x n x k product. */
size_t ref_sgemm_scratch(int64_t m, int64_t n, int64_t k);
/* Writes rows [p0, p0+kc) and columns [j0, j0+nc) of a virtual B matrix into `dst` as
 * 32-column panels (kc rows of 32 floats each, zero-padded past nc): how ref_sgemm_packed_b
 * reads a B that is never stored whole, such as a convolution's im2col matrix. */
typedef void (*ref_pack_b_fn)(const void *ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                              float *dst);
enum { REF_SGEMM_NR = 32 };
/* C += alpha * op(A) * B for a B produced panel by panel by `pack_b`; `pack` as ref_sgemm. */
void ref_sgemm_packed_b(int trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                        int64_t lda, ref_pack_b_fn pack_b, const void *b_ctx, float *c, int64_t ldc,
                        float *pack);
/* The same two products on the threads of the node running with `io` (threads.h), `pack`
 * inside io->scratch, bit-identical to the one-thread result: C = beta * C, or C = row_bias[i]
 * on row i where row_bias is given, then C += alpha * op(A) op(B).
 * `packed_a` (or NULL): op(A), untransposed, packed by ref_sgemm_pack_a, read in place of
 * packing A as the product runs (a convolution's constant kernel, packed once). */
void ref_sgemm_mt(const ref_io *io, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                  float alpha, const float *a, int64_t lda, const float *packed_a, const float *b,
                  int64_t ldb, float beta, const float *row_bias, float *c, int64_t ldc,
                  float *pack);
void ref_sgemm_packed_b_mt(const ref_io *io, int trans_a, int64_t m, int64_t n, int64_t k,
                           float alpha, const float *a, int64_t lda, const float *packed_a,
                           ref_pack_b_fn pack_b, const void *b_ctx, float beta,
                           const float *row_bias, float *c, int64_t ldc, float *pack);
/* A (m x k, row-major with leading dimension lda) packed whole for this CPU's register tile
 * into dst, of ref_sgemm_packed_a_floats(m, k) floats: the panels the products above pack of
 * it block by block, every block in the order they read them. The tile is the CPU's, so the
 * packing is this process's (a stored executable repacks when it is loaded). */
size_t ref_sgemm_packed_a_floats(int64_t m, int64_t k);
void ref_sgemm_pack_a(const float *a, int64_t lda, int64_t m, int64_t k, float *dst);

#endif /* ODLA_REFERENCE_REF_H_ */
