/* regions.h: whether the backend under test builds in a memory region (odla_ext_memory.h), as
 * --no-heap code does: the reference backend must, libodla_dnnl must refuse (its compiler keeps
 * what it makes on the C++ heap). The runtime tests that repeat their cases in a region ask. */
#ifndef ODLAC_TESTS_RUNTIME_REGIONS_H
#define ODLAC_TESTS_RUNTIME_REGIONS_H

#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <string.h>

#include "check.h"

static int backend_takes_regions(void *region, odla_size_t bytes) {
  const int dnnl = strstr(odla_GetVersionString(), "dnnl") != NULL;
  const odla_status s = odla_ExtSetMemory(region, bytes);
  odla_ExtSetMemory(NULL, 0);
  CHECK(dnnl ? s == ODLA_UNSUPPORTED_OP : s == ODLA_SUCCESS, "%s: odla_ExtSetMemory: status %d",
        odla_GetVersionString(), (int)s);
  if (s == ODLA_SUCCESS)
    CHECK(odla_ExtReleaseMemory(region) == ODLA_SUCCESS, "the region is empty");
  return s == ODLA_SUCCESS;
}

#endif
