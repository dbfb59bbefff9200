// ODLA 0.5 computations: graph building, compilation, contexts, bindings and execution.
//
// The "current computation". Op builders (odla_Add, odla_Conv, ...) and the
// value creators (odla_CreateArgument, odla_CreateConstant, ...) take no
// computation handle: they add to the current computation of the calling
// thread, and odla_CreateComputation makes the new computation current. A
// backend keeps that state per thread, so a thread builds one graph at a time
// while other threads build theirs.
//
// Two ways to run:
//  - compile mode: build the graph once (odla_CreateComputation, arguments,
//    constants, op calls, odla_SetValueAsOutput); then for each inference
//    create a context, bind inputs and outputs by id and call
//    odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL).
//  - interpret mode: ops execute eagerly as they are called; inputs come from
//    odla_CreateValue + odla_SetValueData and results are read with
//    odla_GetValueData(value, out_ptr, NULL).
//
// Items (odla_item_type keys) are set through an odla_item_value, which is a
// pointer to the caller's variable, (odla_item_value)&n, for scalar items; the
// string itself for string items; and the callback or user pointer itself for
// ODLA_ASYNC_CALLBACK_FUNC / ODLA_ASYNC_CALLBACK_ARG.

#ifndef _ODLA_COMPUTE_H_
#define _ODLA_COMPUTE_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_device.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ODLA_COMPUTE_DEFAULT,
  ODLA_COMPUTE_INFERENCE,
  ODLA_COMPUTE_TRAINING,
} odla_compute_mode;

// Property keys for computation, context and value items.
// ODLA_ASYNC_CALLBACK_FUNC is an int (*)(void* arg, odla_status status) called
// once when an asynchronous execution on the context finishes;
// ODLA_ASYNC_CALLBACK_ARG is the arg handed back to it.
typedef enum {
  ODLA_DYNAMIC_BATCH,
  ODLA_MIN_BATCH_SIZE,
  ODLA_MAX_BATCH_SIZE,
  ODLA_OPT_BATCH_SIZE,
  ODLA_RUN_BATCH_SIZE,
  ODLA_DYNAMIC_SHAPE,
  ODLA_MIN_SHAPE,
  ODLA_MAX_SHAPE,
  ODLA_OPT_SHAPE,
  ODLA_DYNAMIC_VALUE,
  ODLA_MIN_VALUE,
  ODLA_MAX_VALUE,
  ODLA_OPT_VALUE,
  ODLA_BF16_MODE,
  ODLA_FP16_MODE,
  ODLA_USE_SIM_MODE,
  ODLA_PROCESSOR_NUM,
  ODLA_BATCHES_PER_STEP,
  ODLA_USE_DATA_TYPE,
  ODLA_LOAD_ENGINE_MODE,
  ODLA_USE_DLA_CORE,
  ODLA_QUANT_TABLE,
  ODLA_QUANT_TABLE_SIZE,
  ODLA_AGGREGATE_OPS,
  ODLA_ENABLE_ENGINE_CACHE,
  ODLA_CACHE_DIR,
  ODLA_ASYNC_CALLBACK_FUNC,
  ODLA_ASYNC_CALLBACK_ARG,
} odla_item_type;

// Values for the ODLA_BF16_MODE item. No ODLA_ prefix, and the PERFORMACE
// spelling is the standard's own: both are ABI.
typedef enum {
  BF16_DISABLE,
  BF16_ACCURACY_MODE,
  BF16_PERFORMACE_MODE,
  BF16_AUTO_MODE,
} odla_bf16_mode;

typedef enum {
  ODLA_LOCATION_PATH,
  ODLA_LOCATION_MEMORY,
  ODLA_LOCATION_URI,
} odla_resource_location_type;

// Where a computation or executable is loaded from or stored to. For PATH and
// URI, location is a NUL-terminated string; for MEMORY it is a buffer of size
// bytes.
typedef struct {
  odla_resource_location_type location_type;
  const void *location;
  odla_size_t size;
} odla_resource_location;

typedef struct _odla_computation *odla_computation;
typedef struct _odla_executable *odla_executable;
typedef struct _odla_context *odla_context;
typedef struct _odla_item_value *odla_item_value;
typedef struct _odla_constants_array *odla_constants_array;

// Computation lifetime. odla_CreateComputation also makes the new computation
// the current one of the calling thread (see the top of this file).
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_CreateComputation(odla_computation *computation);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_CompileComputation(
    const odla_computation computation, const odla_device device, odla_executable *executable);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_LoadComputation(odla_resource_location location, odla_computation *computation);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_StoreComputation(odla_resource_location location, odla_computation computation);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_DifferentiateComputation(odla_computation computation);

// Runs a computation on the inputs and outputs bound to the context. A NULL
// device selects the backend's default device. The async form returns at once;
// completion is reported through the context's ODLA_ASYNC_CALLBACK_FUNC item.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_ExecuteComputation(const odla_computation computation, const odla_context context,
                        const odla_compute_mode mode, odla_device device);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_AsyncExecuteComputation(const odla_computation computation, const odla_context context,
                             const odla_compute_mode mode, odla_device device);

// Computation introspection: argument and output counts, and lookup by index.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_GetNumOfArgsFromComputation(const odla_computation computation, odla_uint32 *num_args);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetArgFromComputationByIdx(
    const odla_computation computation, const odla_uint32 arg_idx, odla_value *arg_value);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_GetNumOfOutputsFromComputation(const odla_computation computation, odla_uint32 *num_outputs);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetOutputFromComputationByIdx(
    const odla_computation computation, const odla_uint32 output_idx, odla_value *output_value);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_DestroyComputation(odla_computation computation);

// Computation and value items (see the item notes at the top of this file).
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_SetComputationItem(odla_computation computation, odla_item_type type, odla_item_value value);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_SetValueShapeInfo(odla_value value, odla_item_type type, odla_value_shape value_shape);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_SetInputValueInfo(odla_value value, odla_item_type type, odla_item_value value_input);

// Per-context shapes of dynamically shaped values.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetRuntimeShape(odla_context context,
                                                                      odla_value value,
                                                                      odla_value_shape value_shape);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_GetRuntimeShape(odla_context context, odla_value value, odla_value_shape *value_shape_ptr);

// Constants arrays: sets of constants created, or loaded from and stored to a file.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_CreateConstantsArray(odla_constants_array *constants_array);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_LoadConstantsArray(const odla_char *file_name, odla_constants_array *constants_array);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_StoreConstantsArray(const odla_char *file_name, const odla_constants_array constants_array);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_DestroyConstantsArray(odla_constants_array constants_array);

// Executables: compiled computations. The first parameter of
// odla_StoreExecutable is unnamed in the standard.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_LoadExecutable(
    odla_resource_location location, odla_device device, odla_executable *executable);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_StoreExecutable(odla_resource_location,
                                                                      odla_executable executable);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_LaunchExecutable(odla_executable executable,
                                                                       odla_context context);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_AsyncLaunchExecutable(
    const odla_executable executable, const odla_constants_array constants_array,
    const odla_context context, const odla_compute_mode mode, odla_device device);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_GetNumOfArgsFromExecutable(const odla_executable executable, odla_uint32 *num_args);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetArgFromExecutableByIdx(
    const odla_executable executable, const odla_uint32 arg_idx, odla_value *arg_value);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_GetNumOfOutputsFromExecutable(const odla_executable executable, odla_uint32 *num_outputs);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetOutputFromExecutableByIdx(
    const odla_executable executable, const odla_uint32 output_idx, odla_value *output_value);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_DestroyExecutable(odla_executable executable);

// Contexts hold one execution's bindings and context items.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_CreateContext(odla_context *context);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetContextItem(odla_context context,
                                                                     odla_item_type type,
                                                                     odla_item_value value);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_DestroyContext(odla_context context);

// Bindings: caller-owned buffers (or values) for arguments and outputs. The
// *ById forms take the value id the graph was built with, i.e. a C string.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_BindToArgument(odla_value value,
                                                                     const odla_void *data_ptr,
                                                                     odla_context context);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_BindToArgumentById(
    const odla_value_id value_id, const odla_void *data_ptr, odla_context context);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_BindValueToArgumentById(const odla_value_id value_id, odla_value data, odla_context context);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_BindToOutput(odla_value value,
                                                                   odla_void *data_ptr,
                                                                   odla_context context);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_BindToOutputById(const odla_value_id value_id,
                                                                       odla_void *data_ptr,
                                                                       odla_context context);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_BindValueToOutputById(const odla_value_id value_id, odla_value data, odla_context context);

// Runtime types and output counts after an execution with dynamic shapes.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_SetRuntimeValueType(odla_context context, odla_value value, odla_value_type value_type);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_GetRuntimeValueType(odla_context context, odla_value value, odla_value_type *value_type_ptr);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_GetRuntimeNumOfOutputs(odla_context context, odla_uint32 *num_output_ptr);

// Copies a value's data out. Interpret mode passes a NULL context.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetValueData(const odla_value value,
                                                                   odla_void *data_ptr,
                                                                   odla_context context);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_COMPUTE_H_
