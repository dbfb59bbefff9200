// ODLA 0.5 values: value handles and ids, shape/type structs, and value accessors.
//
// An odla_value is a node of the current computation (compile mode) or a live
// tensor (interpret mode). An odla_value_id names a value. It is an opaque
// pointer type, but generated code stores a C string in it, the tensor's name:
// (const odla_value_id)"conv1". Backends compare ids by string content, never
// by pointer. A backend may document small integer ids cast to the pointer
// type instead.

#ifndef _ODLA_VALUE_H_
#define _ODLA_VALUE_H_

#include <ODLA/odla_common.h>

// Largest rank an odla_value_shape can describe.
#define ODLA_MAX_DIMENSION 10
// Largest number of values an odla_values / odla_value_ids can carry.
#define ODLA_MAX_OUTPUTS 64

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _odla_value *odla_value;
typedef struct _odla_value_id *odla_value_id;

// Shape of a value. size is the rank: 0 for a scalar, -1 for an unknown rank.
// dims[i] == -1 marks an unknown dimension. Entries past size are unused.
typedef struct {
  odla_int32 size;
  odla_int64 dims[ODLA_MAX_DIMENSION];
} odla_value_shape;

// Element type and shape of a value.
typedef struct {
  odla_element_type element_type;
  odla_value_shape shape;
} odla_value_type;

// A tagged scalar; data_type says which union member is valid. Filled in by
// odla_GetDeviceInfo. The anonymous union is C11 (or a GNU extension in C99),
// hence the __extension__ marker; it does not change the layout.
// clang-format off
typedef struct {
  odla_element_type data_type;
#if defined(__GNUC__)
  __extension__
#endif
  union {
    odla_int32 val_int32;
    odla_uint32 val_uint32;
    odla_int64 val_int64;
    odla_uint64 val_uint64;
    odla_float32 val_fp32;
    odla_float64 val_fp64;
    odla_string val_str;
  };
} odla_scalar_value;
// clang-format on

// Up to ODLA_MAX_OUTPUTS values or value ids; size entries are valid. Both are
// passed and returned by value (multi-output ops return odla_values).
typedef struct {
  odla_size_t size;
  odla_value values[ODLA_MAX_OUTPUTS];
} odla_values;

typedef struct {
  odla_size_t size;
  odla_value_id value_ids[ODLA_MAX_OUTPUTS];
} odla_value_ids;

// Data access. The *ById forms look the value up by its id in the current
// computation. In interpret mode, generated code feeds inputs with
// odla_SetValueData; results are read back with odla_GetValueData
// (odla_compute.h), passing a NULL context.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetValueData(odla_value value,
                                                                   const odla_void *data_ptr);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetValueDataById(const odla_value_id value_id,
                                                                       const odla_void *data_ptr);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetRawDataPtr(const odla_value value,
                                                                    odla_void **data_ptr);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetValueDataById(const odla_value_id value_id,
                                                                       odla_void *data_ptr);

// Introspection: type, id, and lookup by id.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetValueType(const odla_value value,
                                                                   odla_value_type *value_type);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetValueTypeById(const odla_value_id value_id,
                                                                       odla_value_type *value_type);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetValueId(const odla_value value,
                                                                 odla_value_id *value_id);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_FindValueById(const odla_value_id value_id,
                                                                    odla_value *value);

// Marks values of the current computation as its outputs, in call order.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetValueAsOutput(odla_value value);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetValuesAsOutput(odla_values values);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_SetValueAsOutputById(const odla_value_id value_id);

// Releases a value's storage (interpret mode, emitted with -emit-value-reset).
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ReleaseValue(odla_value value);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ReleaseValueById(odla_value_id value_id);

// Prints a value for debugging; the format is up to the backend.
extern ODLA_API_EXPORT void ODLA_API_CALL odla_Dump(odla_value value);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_VALUE_H_
