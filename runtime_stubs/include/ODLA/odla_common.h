// ODLA 0.5 common definitions: export macros, scalar typedefs, element types, status codes.
//
// Every other ODLA 0.5 header builds on this one. Names, enum member order and
// struct layouts in these headers are ABI and follow tests/odla_api/API-0.5.md
// exactly, upstream typos included; tests/odla_api/check_odla_api.py keeps the
// two in sync. odlac's own additions never go into these headers: they live in
// a separate, clearly marked extension header.

#ifndef _ODLA_COMMON_H_
#define _ODLA_COMMON_H_

#ifdef __cplusplus
// C++ takes NULL from <cstddef>: the C definition below does not convert to
// other pointer types in C++.
#include <cstddef>
#endif

#ifndef NULL
#define NULL ((void *)0)
#endif

// Public functions are declared
//   extern ODLA_API_EXPORT <ret> ODLA_API_CALL odla_Xxx(...);
// (three exceptions are marked where they are declared). On Windows a backend
// DLL exports them with the stdcall convention; elsewhere both macros are empty.
#if defined(_WIN32)
#define ODLA_API_EXPORT __declspec(dllexport)
#define ODLA_API_CALL __stdcall
#else
#define ODLA_API_EXPORT
#define ODLA_API_CALL
#endif

#ifdef __cplusplus
extern "C" {
#endif

// Fixed-width integers. GCC and Clang provide the __INTn_TYPE__ macros, so no
// libc header is needed; MSVC has the sized __intN keywords.
#if defined(_MSC_VER)
typedef signed __int8 odla_int8;
typedef signed __int16 odla_int16;
typedef signed __int32 odla_int32;
typedef signed __int64 odla_int64;
typedef unsigned __int8 odla_uint8;
typedef unsigned __int16 odla_uint16;
typedef unsigned __int32 odla_uint32;
typedef unsigned __int64 odla_uint64;
#else
typedef __INT8_TYPE__ odla_int8;
typedef __INT16_TYPE__ odla_int16;
typedef __INT32_TYPE__ odla_int32;
typedef __INT64_TYPE__ odla_int64;
typedef __UINT8_TYPE__ odla_uint8;
typedef __UINT16_TYPE__ odla_uint16;
typedef __UINT32_TYPE__ odla_uint32;
typedef __UINT64_TYPE__ odla_uint64;
#endif

// Quantized integers share the storage of the plain integers; scale and zero
// point travel separately (see odla_Quantize / odla_Dequantize).
typedef odla_int8 odla_qint8;
typedef odla_int16 odla_qint16;
typedef odla_int32 odla_qint32;
typedef odla_int64 odla_qint64;
typedef odla_uint8 odla_quint8;
typedef odla_uint16 odla_quint16;
typedef odla_uint32 odla_quint32;
typedef odla_uint64 odla_quint64;

// Half-precision floats are carried as their raw 16-bit patterns.
typedef odla_uint16 odla_float16;
typedef odla_uint16 odla_bfloat16;
typedef float odla_float32;
typedef double odla_float64;

typedef const char *odla_string;
// Four bytes, not _Bool: mind the size when passing a flag by pointer.
typedef odla_uint32 odla_bool;
typedef char odla_char;
#if defined(_MSC_VER)
#if defined(_WIN64)
typedef unsigned __int64 odla_size_t;
#else
typedef unsigned __int32 odla_size_t;
#endif
#else
typedef __SIZE_TYPE__ odla_size_t;
#endif
typedef void odla_void;

// Element type of a value.
typedef enum {
  ODLA_INT8,
  ODLA_INT16,
  ODLA_INT32,
  ODLA_INT64,
  ODLA_UINT8,
  ODLA_UINT16,
  ODLA_UINT32,
  ODLA_UINT64,
  ODLA_QINT8,
  ODLA_QINT16,
  ODLA_QINT32,
  ODLA_QINT64,
  ODLA_QUINT8,
  ODLA_QUINT16,
  ODLA_QUINT32,
  ODLA_QUINT64,
  ODLA_FLOAT16,
  ODLA_BFLOAT16,
  ODLA_FLOAT32,
  ODLA_FLOAT64,
  ODLA_BOOL,
  ODLA_STRING,
} odla_element_type;

// Result of every status-returning call. ODLA_SUCCESS is 0; everything else
// is a failure.
typedef enum {
  ODLA_SUCCESS,
  ODLA_DL_ERROR,
  ODLA_FILE_NOT_EXIST,
  ODLA_INVALID_PARAM,
  ODLA_MEM_ERROR,
  ODLA_UNSUPPORTED_DATATYPE,
  ODLA_UNSUPPORTED_DEVICE_TYPE,
  ODLA_UNSUPPORTED_OP,
  ODLA_TIMEOUT,
  ODLA_INTERNAL_LOGIC_ERR,
  ODLA_RECOVERABLE_ERR,
  ODLA_PARTITION_RESET,
  ODLA_FULL_RESET,
  ODLA_UNRECOVERABLE_ERR,
  ODLA_FAILURE,
} odla_status;

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_COMMON_H_
