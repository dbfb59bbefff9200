/* test_devices.c: the management interfaces of an ODLA backend through the ODLA headers only:
 * vendor and device queries (figures checked against the machine's own /proc/meminfo where
 * it exists), host and device memory, the logger, and value lookups by id. */
#include <ODLA/odla.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char logged[512];
static void logger(const char *file, int line, const char *func, odla_log_level level,
                   const char *msg) {
  (void)file;
  (void)line;
  (void)level;
  snprintf(logged, sizeof logged, "%s: %s", func, msg);
}

/* MemTotal from /proc/meminfo in bytes, or -1 where there is none. */
static long long meminfo_total(void) {
  char line[256];
  long long kb = -1;
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f)
    return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemTotal: %lld kB", &kb) == 1)
      break;
  fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

int main(void) {
  odla_vendor vendor, other_vendor;
  odla_device device, other;
  odla_scalar_value v;
  odla_size_t n = 0;
  char desc[256];
  void *host = NULL, *dev = NULL;
  long long total = meminfo_total();
  odla_computation comp;
  odla_value x, found = NULL;
  odla_value_type t;

  CHECK(odla_GetVendor(ODLA_VENDOR_DEFAULT, &vendor) == ODLA_SUCCESS, "GetVendor");
  CHECK(odla_GetVendorInfo(vendor, OVI_DESCRIPTION, sizeof desc, desc, &n) == ODLA_SUCCESS &&
            n == strlen(desc) + 1 && n > 1,
        "GetVendorInfo");
  CHECK(odla_GetVendorInfo(vendor, OVI_DESCRIPTION, 1, desc, &n) == ODLA_MEM_ERROR,
        "a too-small buffer must be refused");
  odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
  CHECK(odla_GetVendor(ODLA_VENDOR_NVIDIA, &other_vendor) == ODLA_UNSUPPORTED_DEVICE_TYPE,
        "GetVendor of a vendor this backend is not");
  CHECK(odla_AllocateDevice(vendor, ODLA_DEVICE_NVIDIA_GPU, 0, &other) ==
            ODLA_UNSUPPORTED_DEVICE_TYPE,
        "a device this backend lacks");
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  CHECK(odla_AllocateDevice(vendor, ODLA_DEVICE_DEFAULT, 0, &device) == ODLA_SUCCESS,
        "AllocateDevice");
  CHECK(odla_GetDeviceInfo(device, ODLA_DEVICE_INFO_ODLA_LIB_VERSION, &v) == ODLA_SUCCESS &&
            v.data_type == ODLA_STRING && strcmp(v.val_str, odla_GetVersionString()) == 0,
        "LIB_VERSION");
  CHECK(odla_GetDeviceInfo(device, ODLA_DEVICE_INFO_DEV_COUNT, &v) == ODLA_SUCCESS &&
            v.data_type == ODLA_INT32 && v.val_int32 >= 1,
        "DEV_COUNT");
  if (total > 0) {
    CHECK(odla_GetDeviceInfo(device, ODLA_DEVICE_INFO_TOTAL_MEMORY, &v) == ODLA_SUCCESS &&
              v.data_type == ODLA_INT64 && v.val_int64 > total * 99 / 100 &&
              v.val_int64 < total * 101 / 100,
          "TOTAL_MEMORY %lld, /proc/meminfo says %lld", (long long)v.val_int64, total);
    CHECK(odla_GetDeviceInfo(device, ODLA_DEVICE_INFO_USED_MEMORY, &v) == ODLA_SUCCESS &&
              v.val_int64 > 0 && v.val_int64 < total,
          "USED_MEMORY %lld of %lld", (long long)v.val_int64, total);
    CHECK(odla_GetDeviceInfo(device, ODLA_DEVICE_INFO_PROCESSOR_UTIL, &v) == ODLA_SUCCESS &&
              v.data_type == ODLA_FLOAT32 && v.val_fp32 >= 0 && v.val_fp32 <= 1,
          "PROCESSOR_UTIL %g", (double)v.val_fp32);
  }
  CHECK(odla_DestroyDevice(device) == ODLA_SUCCESS, "DestroyDevice");

  CHECK(odla_AllocateHostMemory(&host, 64) == ODLA_SUCCESS && host, "AllocateHostMemory");
  CHECK(odla_AllocateDeviceMemory(&dev, 64) == ODLA_SUCCESS && dev, "AllocateDeviceMemory");
  memset(host, 0x5a, 64);
  CHECK(odla_CopyMemory(dev, host, 64, ODLA_MEMCPY_H2D) == ODLA_SUCCESS &&
            memcmp(dev, host, 64) == 0,
        "CopyMemory");
  odla_FreeDeviceMemory(dev);
  odla_FreeHostMemory(host);

  /* Lookups by id, and an error reported through the logger. */
  odla_SetLogger(logger);
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  memset(&t, 0, sizeof t);
  t.element_type = ODLA_FLOAT32;
  t.shape.size = 1;
  t.shape.dims[0] = 3;
  x = odla_CreateArgument(t, (const odla_value_id) "x");
  CHECK(odla_FindValueById((const odla_value_id) "x", &found) == ODLA_SUCCESS && found == x,
        "FindValueById");
  t.shape.dims[0] = 0;
  CHECK(odla_GetValueTypeById((const odla_value_id) "x", &t) == ODLA_SUCCESS &&
            t.shape.dims[0] == 3,
        "GetValueTypeById");
  CHECK(odla_Add(x, NULL, (const odla_value_id) "bad") == NULL && strstr(logged, "Add") != NULL,
        "the logger did not receive the builder's error (got '%s')", logged);
  odla_SetLogger(NULL);
  odla_DestroyComputation(comp);
  if (failures == 0)
    printf("devices: vendor, device figures, memory, logger and lookups as expected\n");
  return failures ? 1 : 0;
}
