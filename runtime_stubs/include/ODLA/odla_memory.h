// ODLA 0.5 memory: host and device allocation and copies between them.

#ifndef _ODLA_MEMORY_H_
#define _ODLA_MEMORY_H_

#include <ODLA/odla_common.h>

#ifdef __cplusplus
extern "C" {
#endif

// Direction of odla_CopyMemory: H = host, D = device.
typedef enum {
  ODLA_MEMCPY_H2H,
  ODLA_MEMCPY_H2D,
  ODLA_MEMCPY_D2H,
  ODLA_MEMCPY_D2D,
} odla_memcpy_type;

// Allocation on the current device and on the host; free each block with the
// matching Free call.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_AllocateDeviceMemory(odla_void **dev_ptr,
                                                                           odla_size_t size);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_FreeDeviceMemory(odla_void *ptr);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_AllocateHostMemory(odla_void **host_ptr,
                                                                         odla_size_t size);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_FreeHostMemory(odla_void *ptr);

// Copies size bytes from src to dst in the direction given by type.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_CopyMemory(odla_void *dst, odla_void *src,
                                                                 odla_size_t size,
                                                                 odla_memcpy_type type);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_MEMORY_H_
