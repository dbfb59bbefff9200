/* runtime_device.c: vendors, devices, device configurations and memory of the reference
 * backend. There is one vendor (ODLA_VENDOR_DEFAULT) and one device, the host CPU
 * (ODLA_DEVICE_DEFAULT or ODLA_DEVICE_INTEL_X86, index 0); device memory is host memory.
 * Device figures are the machine's own: processors and memory from sysconf where POSIX has
 * it, processor utilization from /proc/stat on Linux. A NULL device anywhere means it. */
#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>
#define REF_HAVE_SYSCONF 1
#endif

#include "ref.h"
#include "threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct _odla_vendor {
  const char *description;
};

struct _odla_device {
  odla_int32 index;
};

struct _odla_device_config {
  int unused;
};

static struct _odla_vendor ref_vendor = {"odlac reference backend: portable C99 on the host CPU"};

odla_status odla_GetVendor(const odla_vendor_name vendor_name, odla_vendor *vendor) {
  if (!vendor)
    return ODLA_INVALID_PARAM;
  if (vendor_name != ODLA_VENDOR_DEFAULT) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "GetVendor", "vendor %d: only ODLA_VENDOR_DEFAULT exists here",
               (int)vendor_name);
    return ODLA_UNSUPPORTED_DEVICE_TYPE;
  }
  *vendor = &ref_vendor;
  return ODLA_SUCCESS;
}

odla_status odla_GetVendorInfo(const odla_vendor vendor, const odla_vendor_info info_name,
                               const odla_size_t allocated_info_value_size, odla_void *info_value,
                               odla_size_t *retrieved_info_value_size) {
  const char *text;
  size_t n;
  if (!vendor)
    return ODLA_INVALID_PARAM;
  text = info_name == OVI_DESCRIPTION ? vendor->description : "compile interpret load";
  n = strlen(text) + 1;
  if (retrieved_info_value_size)
    *retrieved_info_value_size = n;
  if (info_value) {
    if (allocated_info_value_size < n)
      return ODLA_MEM_ERROR;
    memcpy(info_value, text, n);
  }
  return ODLA_SUCCESS;
}

odla_status odla_AllocateDevice(odla_vendor vendor, odla_device_name device_name,
                                odla_int32 device_idx, odla_device *device) {
  if (!device || (vendor && vendor != &ref_vendor))
    return ODLA_INVALID_PARAM;
  if ((device_name != ODLA_DEVICE_DEFAULT && device_name != ODLA_DEVICE_INTEL_X86) ||
      device_idx != 0) {
    ref_report(ODLA_LOG_LEVEL_ERROR, "AllocateDevice",
               "device %d index %d: only the host CPU (default or x86, index 0) exists here",
               (int)device_name, (int)device_idx);
    return ODLA_UNSUPPORTED_DEVICE_TYPE;
  }
  *device = (odla_device)ref_calloc(1, sizeof **device);
  return *device ? ODLA_SUCCESS : ODLA_MEM_ERROR;
}

odla_status odla_InitDevice(odla_device device, const odla_device_config config) {
  (void)device;
  (void)config;
  return ODLA_SUCCESS; /* nothing to initialize on the host */
}

odla_status odla_SetCurrentDevice(odla_device device) {
  (void)device; /* there is one device */
  return ODLA_SUCCESS;
}

odla_status odla_DestroyDevice(odla_device device) {
  if (!device)
    return ODLA_INVALID_PARAM;
  ref_free(device);
  return ODLA_SUCCESS;
}

odla_status odla_CreateDeviceConfig(odla_device_config *device_config) {
  if (!device_config)
    return ODLA_INVALID_PARAM;
  *device_config = (odla_device_config)ref_calloc(1, sizeof **device_config);
  return *device_config ? ODLA_SUCCESS : ODLA_MEM_ERROR;
}

odla_status odla_SetDeviceConfigItem(odla_device_config device_config,
                                     odla_device_config_item device_config_item, ...) {
  (void)device_config_item;
  /* The host device has no configuration items. */
  return device_config ? ODLA_UNSUPPORTED_DATATYPE : ODLA_INVALID_PARAM;
}

odla_status odla_DestroyDeviceConfig(odla_device_config device_config) {
  if (!device_config)
    return ODLA_INVALID_PARAM;
  ref_free(device_config);
  return ODLA_SUCCESS;
}

/* Fraction of processor time not idle since boot, from /proc/stat; -1 where unknown. */
static double ref_processor_util(void) {
  unsigned long long v[8] = {0};
  double busy = 0, total = 0;
  int i, n;
  FILE *f = fopen("/proc/stat", "r");
  if (!f)
    return -1;
  n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
             &v[5], &v[6], &v[7]);
  fclose(f);
  if (n < 4)
    return -1;
  for (i = 0; i < n; ++i) {
    total += (double)v[i];
    if (i != 3 && i != 4) /* idle, iowait */
      busy += (double)v[i];
  }
  return total > 0 ? busy / total : -1;
}

odla_status odla_GetDeviceInfo(odla_device device, odla_device_info info_type,
                               odla_scalar_value *info_value) {
  long pages = -1, avail = -1, page = -1;
  double util;
  if (!info_value)
    return ODLA_INVALID_PARAM;
#ifdef REF_HAVE_SYSCONF
  pages = sysconf(_SC_PHYS_PAGES);
#ifdef _SC_AVPHYS_PAGES
  avail = sysconf(_SC_AVPHYS_PAGES);
#endif
  page = sysconf(_SC_PAGESIZE);
#endif
  switch (info_type) {
  case ODLA_DEVICE_INFO_ODLA_LIB_VERSION:
    info_value->data_type = ODLA_STRING;
    info_value->val_str = odla_GetVersionString();
    return ODLA_SUCCESS;
  case ODLA_DEVICE_INFO_DEV_COUNT:
    info_value->data_type = ODLA_INT32;
    info_value->val_int32 = 1;
    return ODLA_SUCCESS;
  case ODLA_DEVICE_INFO_DEV_INDEX:
    info_value->data_type = ODLA_INT32;
    info_value->val_int32 = device ? device->index : 0;
    return ODLA_SUCCESS;
  case ODLA_DEVICE_INFO_DEV_TYPE:
    info_value->data_type = ODLA_STRING;
    info_value->val_str = "cpu";
    return ODLA_SUCCESS;
  case ODLA_DEVICE_INFO_TOTAL_MEMORY:
  case ODLA_DEVICE_INFO_USED_MEMORY:
  case ODLA_DEVICE_INFO_MEMORY_UTIL:
    if (pages <= 0 || page <= 0 || (info_type != ODLA_DEVICE_INFO_TOTAL_MEMORY && avail < 0))
      return ODLA_UNSUPPORTED_DATATYPE;
    if (info_type == ODLA_DEVICE_INFO_MEMORY_UTIL) {
      info_value->data_type = ODLA_FLOAT32;
      info_value->val_fp32 = (float)(pages - avail) / (float)pages;
    } else {
      info_value->data_type = ODLA_INT64;
      info_value->val_int64 =
          (odla_int64)(info_type == ODLA_DEVICE_INFO_TOTAL_MEMORY ? pages : pages - avail) * page;
    }
    return ODLA_SUCCESS;
  case ODLA_DEVICE_INFO_PROCESSOR_UTIL:
    if ((util = ref_processor_util()) < 0)
      return ODLA_UNSUPPORTED_DATATYPE;
    info_value->data_type = ODLA_FLOAT32;
    info_value->val_fp32 = (float)util;
    return ODLA_SUCCESS;
  default: /* power, driver and SDK versions: the host CPU has none to report */
    return ODLA_UNSUPPORTED_DATATYPE;
  }
}

/* ---- Memory: device memory is host memory ------------------------------------------ */

odla_status odla_AllocateDeviceMemory(odla_void **dev_ptr, odla_size_t size) {
  return odla_AllocateHostMemory(dev_ptr, size);
}

odla_status odla_FreeDeviceMemory(odla_void *ptr) { return odla_FreeHostMemory(ptr); }

odla_status odla_AllocateHostMemory(odla_void **host_ptr, odla_size_t size) {
  if (!host_ptr)
    return ODLA_INVALID_PARAM;
  *host_ptr = ref_malloc(size ? size : 1);
  return *host_ptr ? ODLA_SUCCESS : ODLA_MEM_ERROR;
}

odla_status odla_FreeHostMemory(odla_void *ptr) {
  ref_free(ptr);
  return ODLA_SUCCESS;
}

odla_status odla_CopyMemory(odla_void *dst, odla_void *src, odla_size_t size,
                            odla_memcpy_type type) {
  if ((!dst || !src) && size)
    return ODLA_INVALID_PARAM;
  if ((unsigned)type > ODLA_MEMCPY_D2D)
    return ODLA_INVALID_PARAM;
  if (size)
    memmove(dst, src, size);
  return ODLA_SUCCESS;
}

/* ---- Computation items -------------------------------------------------------------- */

odla_status odla_SetComputationItem(odla_computation computation, odla_item_type type,
                                    odla_item_value value) {
  if (!computation)
    return ODLA_INVALID_PARAM;
  if (type <= ODLA_RUN_BATCH_SIZE) /* the batch items (runtime_shapes.c) */
    return ref_set_batch_item(computation, type, value);
  if (type == ODLA_PROCESSOR_NUM) /* the threads of its executions (threads.h) */
    return ref_threads_item("SetComputationItem", value, &computation->threads);
  if (type == ODLA_EXT_ITEM_LEAST_MEMORY) {
    if (!value)
      return ODLA_INVALID_PARAM;
    computation->least_memory = *(const odla_bool *)value != 0;
    return ODLA_SUCCESS;
  }
  if (type == ODLA_EXT_ITEM_STATIC_IDS) {
    if (!value)
      return ODLA_INVALID_PARAM;
    if (computation->num_values) { /* the ids given so far were copied */
      ref_report(ODLA_LOG_LEVEL_ERROR, "SetComputationItem",
                 "ODLA_EXT_ITEM_STATIC_IDS is set before the computation's first value");
      return ODLA_INVALID_PARAM;
    }
    computation->static_ids = *(const odla_bool *)value != 0;
    return ODLA_SUCCESS;
  }
  if (type == ODLA_EXT_ITEM_COMPILE_SCRATCH) {
    if (!value)
      return ODLA_INVALID_PARAM;
    computation->compile_scratch = *(const odla_ext_arena *)value;
    return ODLA_SUCCESS;
  }
  /* Shapes other than the batch are fixed when the graph is built, and there is no engine
   * cache or quantization table: no other item applies. */
  ref_report(ODLA_LOG_LEVEL_WARN, "SetComputationItem", "item %d does not apply to this backend",
             (int)type);
  return ODLA_UNSUPPORTED_DATATYPE;
}
