/* test_store_refused.c: a backend whose manifest does not claim load mode refuses stored
 * executables and computations cleanly: each store and load call returns a failure status
 * (no crash, no file written, no executable or computation handed out), and the computation
 * it was given still runs. Uses only the ODLA headers.
 * Usage: test_store_refused SCRATCH_DIR */
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <stdio.h>
#include <string.h>

#include "check.h"

static odla_value_type vec(int n) {
  odla_value_type t;
  memset(&t, 0, sizeof t);
  t.element_type = ODLA_FLOAT32;
  t.shape.size = 1;
  t.shape.dims[0] = n;
  return t;
}

static int exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f)
    fclose(f);
  return f != NULL;
}

int main(int argc, char **argv) {
  static const float x[4] = {-1, 2, -3, 4};
  float y[4];
  char path[4096];
  odla_computation comp, loaded = (odla_computation)1;
  odla_executable exe, none = (odla_executable)1;
  odla_resource_location loc;
  odla_context ctx;
  odla_size_t bytes = 0;
  odla_value out;
  unsigned char buf[4096];
  if (argc != 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  snprintf(path, sizeof path, "%s/refused.odlx", argv[1]);
  remove(path);
  CHECK(odla_CreateComputation(&comp) == ODLA_SUCCESS, "CreateComputation");
  out =
      odla_Relu(odla_CreateArgument(vec(4), (const odla_value_id) "x"), (const odla_value_id) "y");
  CHECK(out && odla_SetValueAsOutput(out) == ODLA_SUCCESS, "building");
  odla_SetLogLevel(ODLA_LOG_LEVEL_OFF);
  loc.location_type = ODLA_LOCATION_PATH;
  loc.location = path;
  loc.size = 0;
  CHECK(odla_StoreComputation(loc, comp) != ODLA_SUCCESS && !exists(path),
        "StoreComputation must be refused, writing nothing");
  CHECK(odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS, "CompileComputation");
  CHECK(odla_StoreExecutable(loc, exe) != ODLA_SUCCESS && !exists(path),
        "StoreExecutable must be refused, writing nothing");
  CHECK(odla_ExtGetStoredExecutableBytes(exe, &bytes) != ODLA_SUCCESS,
        "ExtGetStoredExecutableBytes must be refused");
  loc.location_type = ODLA_LOCATION_MEMORY;
  loc.location = buf;
  loc.size = sizeof buf;
  memset(buf, 0, sizeof buf);
  memcpy(buf, "ODLAREFX", 8);
  CHECK(odla_LoadExecutable(loc, NULL, &none) != ODLA_SUCCESS && none == NULL,
        "LoadExecutable must be refused and hand out no executable");
  CHECK(odla_LoadComputation(loc, &loaded) != ODLA_SUCCESS && loaded == NULL,
        "LoadComputation must be refused and hand out no computation");
  odla_SetLogLevel(ODLA_LOG_LEVEL_ERROR);
  CHECK(odla_CreateContext(&ctx) == ODLA_SUCCESS, "CreateContext");
  odla_BindToArgumentById((const odla_value_id) "x", x, ctx);
  odla_BindToOutputById((const odla_value_id) "y", y, ctx);
  CHECK(odla_LaunchExecutable(exe, ctx) == ODLA_SUCCESS && y[0] == 0 && y[1] == 2 && y[3] == 4,
        "the computation still runs after the refusals");
  odla_DestroyContext(ctx);
  odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
  if (failures == 0)
    printf("store refused: every stored-executable call refused cleanly\n");
  return failures ? 1 : 0;
}
