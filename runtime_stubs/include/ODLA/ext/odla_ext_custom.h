/* odla_ext_custom.h: custom ops, computed by kernels the application registers (odlac's
 * extension of ODLA 0.5's odla_CustomOp). Included by odla_ext.h.
 *
 * ODLA 0.5 declares odla_CustomOp(inputs, op_name, function_name, ids, ...) and leaves the
 * meaning of the variadic tail and how a backend finds the implementation open. odlac
 * fixes both:
 *
 * 1. The application registers each custom op once, before building a computation that
 *    uses it: odla_ExtRegisterCustomOp(op_name, kernel, shape_fn, user_data).
 * 2. odla_CustomOp looks op_name up among the registered ops (an unknown name fails the
 *    build: NULL values, ODLA_UNSUPPORTED_OP recorded and logged), calls the shape function
 *    to get the result types, and adds a node that runs the kernel at execution.
 * 3. The variadic tail is exactly one argument: a `const odla_ext_custom_params *` (NULL when
 *    the op has no attributes and the caller declares no result types). It describes typed,
 *    named attributes and, optionally, the result types the caller expects. The backend
 *    copies everything it points to before odla_CustomOp returns (compound literals and
 *    stack arrays are fine).
 *
 * function_name is free for the caller (odlac passes the ONNX domain of the node); it is not
 * part of the lookup, and kernels see it in odla_ext_custom_call.
 *
 * Kernels live in the application, not in the backend: a stored executable (load mode)
 * records a custom op by op_name and resolves it again among the ops registered in the
 * loading program; loading fails (ODLA_UNSUPPORTED_OP, logged) when one is not registered. */
#ifndef _ODLA_EXT_CUSTOM_H_
#define _ODLA_EXT_CUSTOM_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The layout of odla_ext_custom_params; a backend refuses another version. */
#define ODLA_EXT_CUSTOM_VERSION 1

/* Attribute kinds (ONNX's INT, FLOAT, STRING, INTS and FLOATS) and what `data` points to:
 * INT const odla_int64[1]; FLOAT const odla_float32[1]; STRING const odla_char[count + 1],
 * NUL-terminated, count bytes before the NUL (no NUL inside); INTS const odla_int64[count] and
 * FLOATS const odla_float32[count] (NULL when count is 0). */
#define ODLA_EXT_ATTR_INT 0
#define ODLA_EXT_ATTR_FLOAT 1
#define ODLA_EXT_ATTR_STRING 2
#define ODLA_EXT_ATTR_INTS 3
#define ODLA_EXT_ATTR_FLOATS 4

/* One named attribute. Names are unique within an op. */
typedef struct {
  const odla_char *name;
  odla_int32 kind;  /* ODLA_EXT_ATTR_* */
  odla_int32 count; /* elements: 1 for INT and FLOAT, bytes for STRING, length for lists */
  const odla_void *data;
} odla_ext_custom_attr;

/* The one variadic argument of odla_CustomOp. */
typedef struct {
  odla_int32 version; /* ODLA_EXT_CUSTOM_VERSION */
  odla_int32 num_attrs;
  const odla_ext_custom_attr *attrs; /* num_attrs entries (NULL when 0) */
  /* NULL, or one type per result (ids.size entries): the types the caller expects. When
   * given, building fails (ODLA_INVALID_PARAM, logged with both types) unless the shape
   * function gives exactly these: a caller that sized its buffers at compile time (odlac
   * does) learns of a disagreement at build time, not by an overrun. */
  const odla_value_type *result_types;
} odla_ext_custom_params;

/* What a shape function and a kernel see of one custom op node. Everything is owned by the
 * backend and stays valid while the computation (or loaded executable) lives. */
typedef struct {
  const odla_char *op_name;
  const odla_char *function_name; /* as given to odla_CustomOp; "" when NULL */
  odla_int32 num_inputs;
  const odla_value_type *input_types;
  odla_int32 num_outputs;
  const odla_value_type *output_types; /* NULL in the shape function */
  odla_int32 num_attrs;
  const odla_ext_custom_attr *attrs;
  odla_void *user_data; /* as registered */
  /* In the shape function: the caller's odla_ext_custom_params.result_types (NULL when it
   * declared none), for ops whose result types are whatever the caller asks for; NULL in
   * the kernel. */
  const odla_value_type *declared_types;
} odla_ext_custom_call;

/* Called when the op is built: fills output_types[0 .. call->num_outputs) from the inputs'
 * types and the attributes. Any status but ODLA_SUCCESS fails the build (logged). Result
 * shapes must be fully defined (no -1). */
typedef odla_status (*odla_ext_custom_shape_fn)(const odla_ext_custom_call *call,
                                                odla_value_type *output_types);

/* Called at every execution (compile, interpret and load modes): reads inputs[i] (data of
 * input_types[i], dense, row-major) and writes every element of outputs[i] (output_types[i]).
 * Results never alias inputs. Any status but ODLA_SUCCESS fails the execution with it. */
typedef odla_status (*odla_ext_custom_kernel)(const odla_ext_custom_call *call,
                                              const odla_void *const *inputs,
                                              odla_void *const *outputs);

/* Registers (process-wide, thread-safe) the op `op_name` (copied; at most 255 bytes).
 * Registering a name again with the same kernel, shape function and user_data succeeds and
 * changes nothing; with others it gives ODLA_INVALID_PARAM: a name means one op for the
 * life of the process, so computations built or loaded earlier keep meaning what they did.
 * NULL arguments (but user_data) give ODLA_INVALID_PARAM. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_ExtRegisterCustomOp(const odla_char *op_name, odla_ext_custom_kernel kernel,
                         odla_ext_custom_shape_fn shape_fn, odla_void *user_data);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_CUSTOM_H_ */
