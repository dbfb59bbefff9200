// ODLA 0.5 devices: vendors, device kinds, device queries and configuration.

#ifndef _ODLA_DEVICE_H_
#define _ODLA_DEVICE_H_

#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ODLA_VENDOR_DEFAULT,
  ODLA_VENDOR_ALIBABA,
  ODLA_VENDOR_ARM,
  ODLA_VENDOR_CAMBRICON,
  ODLA_VENDOR_GRAPHCORE,
  ODLA_VENDOR_HABANA,
  ODLA_VENDOR_INTEL,
  ODLA_VENDOR_NVIDIA,
  ODLA_VENDOR_QUALCOMM,
} odla_vendor_name;

// What odla_GetVendorInfo returns.
typedef enum {
  OVI_DESCRIPTION,
  OVI_FEATURE_SET,
} odla_vendor_info;

typedef enum {
  ODLA_DEVICE_DEFAULT,
  ODLA_DEVICE_ALIBABA_HANGUANG,
  ODLA_DEVICE_ARM_CORTEX_M,
  ODLA_DEVICE_CAMBRICON_MLU220,
  ODLA_DEVICE_CAMBRICON_MLU270,
  ODLA_DEVICE_GRAPHCORE_IPU,
  ODLA_DEVICE_HABANA_GAUDI,
  ODLA_DEVICE_HABANA_GOYA,
  ODLA_DEVICE_INTEL_X86,
  ODLA_DEVICE_INTEL_DNNL,
  ODLA_DEVICE_NVIDIA_GPU,
  ODLA_DEVICE_NVIDIA_TENSORRT,
  ODLA_DEVICE_QUALCOMM_AIC100,
} odla_device_name;

// Keys for odla_GetDeviceInfo, with the odla_scalar_value member each one fills.
typedef enum {
  ODLA_DEVICE_INFO_ODLA_LIB_VERSION, // val_str
  ODLA_DEVICE_INFO_DEV_COUNT,        // val_int32
  ODLA_DEVICE_INFO_DEV_INDEX,        // val_int32
  ODLA_DEVICE_INFO_DEV_TYPE,         // val_str
  ODLA_DEVICE_INFO_DEV_UUID,         // val_str, 16 bytes
  ODLA_DEVICE_INFO_PROCESSOR_UTIL,   // val_fp32, in [0, 1]
  ODLA_DEVICE_INFO_MEMORY_UTIL,      // val_fp32, in [0, 1]
  ODLA_DEVICE_INFO_TOTAL_MEMORY,     // val_int64, bytes
  ODLA_DEVICE_INFO_USED_MEMORY,      // val_int64, bytes
  ODLA_DEVICE_INFO_POWER_USAGE,      // val_fp32, watts
  ODLA_DEVICE_INFO_POWER_LIMIT,      // val_fp32, watts
  ODLA_DEVICE_INFO_DRIVER_VERSION,   // val_str
  ODLA_DEVICE_INFO_SDK_VERSION,      // val_str
} odla_device_info;

typedef struct _odla_vendor *odla_vendor;
typedef struct _odla_device *odla_device;
typedef struct _odla_device_config *odla_device_config;
typedef struct _odla_device_config_item *odla_device_config_item;

// Vendor lookup and vendor information. odla_GetVendorInfo copies at most
// allocated_info_value_size bytes into info_value and reports the full size.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetVendor(const odla_vendor_name vendor_name,
                                                                odla_vendor *vendor);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_GetVendorInfo(const odla_vendor vendor, const odla_vendor_info info_name,
                   const odla_size_t allocated_info_value_size, odla_void *info_value,
                   odla_size_t *retrieved_info_value_size);

// Device lifetime and queries. odla_GetDeviceInfo fills the odla_scalar_value
// member named next to each odla_device_info key above.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_AllocateDevice(odla_vendor vendor,
                                                                     odla_device_name device_name,
                                                                     odla_int32 device_idx,
                                                                     odla_device *device);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_GetDeviceInfo(odla_device device,
                                                                    odla_device_info info_type,
                                                                    odla_scalar_value *info_value);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_InitDevice(odla_device device,
                                                                 const odla_device_config config);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetCurrentDevice(odla_device device);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_DestroyDevice(odla_device device);

// Device configuration; the variadic tail of odla_SetDeviceConfigItem holds the
// item's value(s), interpreted according to the item.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_CreateDeviceConfig(odla_device_config *device_config);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetDeviceConfigItem(
    odla_device_config device_config, odla_device_config_item device_config_item, ...);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_DestroyDeviceConfig(odla_device_config device_config);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_DEVICE_H_
