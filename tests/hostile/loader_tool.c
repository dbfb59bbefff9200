/* loader_tool.c: the stored-file operations test_loader.py's cases need, through the ODLA API
 * alone; the exit status is the odla_status of the first call that fails (0: all succeeded),
 * and the backend logs its reasons on stderr.
 *
 *   loader_tool load FILE [KEY]          odla_LoadExecutable (PATH), then run it on zeros
 *   loader_tool load-memory FILE [KEY]   the same from an ODLA_LOCATION_MEMORY buffer
 *   loader_tool load-computation FILE [KEY]   odla_LoadComputation, then compile it
 *   loader_tool resign IN OUT KEY        load IN without a key, store it as OUT signed with KEY
 *   loader_tool resign-computation IN OUT KEY   the same for a stored computation
 *   loader_tool constants-store OUT [KEY]   store a constants array of one constant
 *   loader_tool constants-load FILE [KEY]   load a constants array
 *   loader_tool set-key KEY              odla_ExtSetExecutableKey alone
 * KEY is a string whose bytes are the key ("-" for none). */
#include <ODLA/odla.h>
#include <ODLA/odla_ext.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static odla_resource_location path_location(const char *path) {
  odla_resource_location loc;
  loc.location_type = ODLA_LOCATION_PATH;
  loc.location = path;
  loc.size = 0;
  return loc;
}

static odla_status set_key(const char *key) {
  if (!key || strcmp(key, "-") == 0)
    return odla_ExtSetExecutableKey(NULL, 0);
  return odla_ExtSetExecutableKey(key, strlen(key));
}

/* Binds zero-filled buffers to every argument and output, and runs. */
static odla_status run(odla_executable exe) {
  odla_uint32 na = 0, no = 0, i;
  void *bufs[2 * ODLA_MAX_OUTPUTS];
  odla_context ctx;
  odla_status s = ODLA_SUCCESS;
  int nb = 0;
  odla_GetNumOfArgsFromExecutable(exe, &na);
  odla_GetNumOfOutputsFromExecutable(exe, &no);
  if (odla_CreateContext(&ctx) != ODLA_SUCCESS)
    return ODLA_MEM_ERROR;
  for (i = 0; i < na + no && s == ODLA_SUCCESS && nb < 2 * ODLA_MAX_OUTPUTS; ++i) {
    odla_value v;
    odla_value_type t;
    odla_value_id id;
    size_t bytes = 8;
    int d;
    s = i < na ? odla_GetArgFromExecutableByIdx(exe, i, &v)
               : odla_GetOutputFromExecutableByIdx(exe, i - na, &v);
    if (s == ODLA_SUCCESS)
      s = odla_GetValueType(v, &t);
    if (s == ODLA_SUCCESS)
      s = odla_GetValueId(v, &id);
    for (d = 0; s == ODLA_SUCCESS && d < t.shape.size; ++d)
      bytes *= (size_t)t.shape.dims[d];
    if (s == ODLA_SUCCESS && !(bufs[nb++] = calloc(1, bytes)))
      s = ODLA_MEM_ERROR;
    if (s == ODLA_SUCCESS)
      s = i < na ? odla_BindToArgumentById(id, bufs[nb - 1], ctx)
                 : odla_BindToOutputById(id, bufs[nb - 1], ctx);
  }
  if (s == ODLA_SUCCESS)
    s = odla_LaunchExecutable(exe, ctx);
  odla_DestroyContext(ctx);
  while (nb > 0)
    free(bufs[--nb]);
  return s;
}

static odla_status load_memory(const char *path, odla_executable *exe) {
  FILE *f = fopen(path, "rb");
  odla_resource_location loc;
  unsigned char *p = NULL;
  long n = -1;
  odla_status s;
  if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (p = (unsigned char *)malloc((size_t)n + 1)) != NULL &&
      fread(p + 1, 1, (size_t)n, f) != (size_t)n) /* p + 1: not 64-byte aligned */
    n = -1;
  if (f)
    fclose(f);
  if (n < 0) {
    free(p);
    return ODLA_FILE_NOT_EXIST;
  }
  loc.location_type = ODLA_LOCATION_MEMORY;
  loc.location = p + 1;
  loc.size = (odla_size_t)n;
  s = odla_LoadExecutable(loc, NULL, exe);
  free(p);
  return s;
}

int main(int argc, char **argv) {
  const char *cmd = argc > 1 ? argv[1] : "";
  odla_executable exe = NULL;
  odla_computation comp = NULL;
  odla_status s;
  if (argc < 3) {
    fprintf(stderr, "usage: loader_tool load|load-memory|load-computation|resign|"
                    "resign-computation|constants-store|constants-load|set-key ...\n");
    return 99;
  }
  if (strcmp(cmd, "set-key") == 0)
    return set_key(argv[2]);
  if (strcmp(cmd, "resign") == 0) {
    if (argc != 5)
      return 99;
    if ((s = odla_LoadExecutable(path_location(argv[2]), NULL, &exe)) != ODLA_SUCCESS ||
        (s = set_key(argv[4])) != ODLA_SUCCESS)
      return s;
    s = odla_StoreExecutable(path_location(argv[3]), exe);
    odla_DestroyExecutable(exe);
    return s;
  }
  if (strcmp(cmd, "resign-computation") == 0) {
    if (argc != 5)
      return 99;
    if ((s = odla_LoadComputation(path_location(argv[2]), &comp)) != ODLA_SUCCESS ||
        (s = set_key(argv[4])) != ODLA_SUCCESS)
      return s;
    s = odla_StoreComputation(path_location(argv[3]), comp);
    odla_DestroyComputation(comp);
    return s;
  }
  if ((s = set_key(argc > 3 ? argv[3] : NULL)) != ODLA_SUCCESS)
    return s;
  if (strcmp(cmd, "load") == 0 || strcmp(cmd, "load-memory") == 0) {
    s = cmd[4] ? load_memory(argv[2], &exe)
               : odla_LoadExecutable(path_location(argv[2]), NULL, &exe);
    if (s == ODLA_SUCCESS) {
      s = run(exe);
      odla_DestroyExecutable(exe);
    } else if (exe) {
      fprintf(stderr, "loader_tool: a refused load returned an executable\n");
      return 98;
    }
    return s;
  }
  if (strcmp(cmd, "load-computation") == 0) {
    if ((s = odla_LoadComputation(path_location(argv[2]), &comp)) != ODLA_SUCCESS)
      return comp ? 98 : s;
    s = odla_CompileComputation(comp, NULL, &exe);
    if (s == ODLA_SUCCESS)
      s = run(exe);
    if (exe)
      odla_DestroyExecutable(exe);
    odla_DestroyComputation(comp);
    return s;
  }
  if (strcmp(cmd, "constants-store") == 0) {
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    odla_value_type t;
    odla_constants_array a;
    memset(&t, 0, sizeof t);
    t.element_type = ODLA_FLOAT32;
    t.shape.size = 2;
    t.shape.dims[0] = 2;
    t.shape.dims[1] = 3;
    if ((s = odla_CreateComputation(&comp)) != ODLA_SUCCESS)
      return s;
    if (!odla_CreateConstant(t, w, (const odla_value_id) "w"))
      return ODLA_FAILURE;
    if ((s = odla_CreateConstantsArray(&a)) == ODLA_SUCCESS) {
      s = odla_StoreConstantsArray(argv[2], a);
      odla_DestroyConstantsArray(a);
    }
    odla_DestroyComputation(comp);
    return s;
  }
  if (strcmp(cmd, "constants-load") == 0) {
    odla_constants_array a = NULL;
    s = odla_LoadConstantsArray(argv[2], &a);
    if (a)
      odla_DestroyConstantsArray(a);
    return s == ODLA_SUCCESS || !a ? s : 98;
  }
  fprintf(stderr, "loader_tool: unknown command '%s'\n", cmd);
  return 99;
}
