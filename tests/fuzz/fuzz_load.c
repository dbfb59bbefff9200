/* libFuzzer targets `load_reference` and `load_profiler`: the stored formats an
 * ODLA backend loads, chosen by the input's magic (runtime_stubs/reference/executable_io.c
 * describes them): executables "ODLAREFX" (odla_LoadExecutable from a MEMORY location),
 * stored computations "ODLAREFC" (odla_LoadComputation, then odla_CompileComputation, which
 * plans what was loaded; FUZZ_LOAD_COMPILE=0 skips that) and constants arrays "ODLAREFK"
 * (odla_LoadConstantsArray, whose only location is a path: a memfd's). Whatever loads is queried
 * and destroyed. The same code is linked against libodla_reference and against the profiler
 * interposer, which forwards every call to a reference backend it loads
 * (tests/fuzz/CMakeLists.txt).
 *
 * To reach the parsers, the harness stamps into each input the header fields a loader only
 * compares with fixed values: the call table's signature and the flags (learned at start by
 * storing a computation), the image's size and its FNV-1a checksum. Those comparisons
 * themselves are covered by tests/hostile; fuzzing them would only find the equal values. */
#define _GNU_SOURCE /* memfd_create */
#include <ODLA/odla.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HEADER 64u

static unsigned char build_stamp[16]; /* header bytes 16..32: call table signature, flags */
/* Also compile each loaded computation (FUZZ_LOAD_COMPILE=0: not), which plans what the
 * replayed calls built. */
static int compile_loaded;
static int memfd = -1;
static char memfd_path[64];

static void quiet(const char *file, int line, const char *func, odla_log_level level,
                  const char *msg) {
  (void)file, (void)line, (void)func, (void)level, (void)msg;
}

static void die(const char *what) {
  fprintf(stderr, "fuzz_load: %s\n", what);
  abort();
}

/* Stores a one-op computation to learn the backend build's stamp. */
static void learn_build_stamp(void) {
  static unsigned char image[1 << 16];
  odla_value_type type = {ODLA_FLOAT32, {1, {4}}};
  odla_resource_location at = {ODLA_LOCATION_MEMORY, image, sizeof image};
  odla_computation comp;
  odla_value x;
  if (odla_CreateComputation(&comp) != ODLA_SUCCESS)
    die("odla_CreateComputation failed");
  x = odla_CreateArgument(type, (const odla_value_id) "x");
  if (odla_SetValueAsOutput(odla_Relu(x, (const odla_value_id) "y")) != ODLA_SUCCESS ||
      odla_StoreComputation(at, comp) != ODLA_SUCCESS)
    die("cannot store a computation to learn the call table's signature");
  memcpy(build_stamp, image + 16, sizeof build_stamp);
  odla_DestroyComputation(comp);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
#ifdef FUZZ_PROFILER_BACKEND
  /* The interposer loads its backend on first use; its report goes nowhere. */
  setenv("ODLA_PROFILER_BACKEND", FUZZ_PROFILER_BACKEND, 1);
  setenv("ODLA_PROFILER_OUTPUT", "/dev/null", 1);
#endif
  compile_loaded = !getenv("FUZZ_LOAD_COMPILE") || strcmp(getenv("FUZZ_LOAD_COMPILE"), "0") != 0;
  odla_SetLogger(quiet);
  learn_build_stamp();
  memfd = memfd_create("odlac-fuzz-constants", 0);
  if (memfd < 0)
    die("memfd_create failed");
  snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
  return 0;
}

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 14695981039346656037ull; /* FNV-1a's 64-bit offset basis */
  size_t i;
  for (i = 0; i < n; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Sets the size and, when the offset at 48 (where the checksummed part ends) lies in the
 * image, the checksum at 40. */
static void stamp_size_and_checksum(unsigned char *p, size_t size) {
  uint64_t total = size, end, sum;
  memcpy(p + 32, &total, 8);
  memcpy(&end, p + 48, 8);
  if (end < HEADER || end > size)
    return;
  sum = fnv1a(p + HEADER, (size_t)(end - HEADER));
  memcpy(p + 40, &sum, 8);
}

static void query_outputs_and_args(odla_computation comp, odla_executable exe) {
  odla_uint32 n = 0, i;
  odla_value v;
  odla_value_type type;
  odla_value_id id;
  if ((exe ? odla_GetNumOfArgsFromExecutable(exe, &n)
           : odla_GetNumOfArgsFromComputation(comp, &n)) == ODLA_SUCCESS)
    for (i = 0; i < n; ++i)
      if ((exe ? odla_GetArgFromExecutableByIdx(exe, i, &v)
               : odla_GetArgFromComputationByIdx(comp, i, &v)) == ODLA_SUCCESS) {
        (void)odla_GetValueType(v, &type);
        (void)odla_GetValueId(v, &id);
      }
  n = 0;
  if ((exe ? odla_GetNumOfOutputsFromExecutable(exe, &n)
           : odla_GetNumOfOutputsFromComputation(comp, &n)) == ODLA_SUCCESS)
    for (i = 0; i < n; ++i)
      if ((exe ? odla_GetOutputFromExecutableByIdx(exe, i, &v)
               : odla_GetOutputFromComputationByIdx(comp, i, &v)) == ODLA_SUCCESS)
        (void)odla_GetValueType(v, &type);
}

static void load_executable(const unsigned char *p, size_t size) {
  odla_resource_location at = {ODLA_LOCATION_MEMORY, p, size};
  odla_executable exe = NULL;
  if (odla_LoadExecutable(at, NULL, &exe) != ODLA_SUCCESS)
    return;
  query_outputs_and_args(NULL, exe);
  odla_DestroyExecutable(exe);
}

static void load_computation(const unsigned char *p, size_t size) {
  odla_resource_location at = {ODLA_LOCATION_MEMORY, p, size};
  odla_computation comp = NULL;
  odla_executable exe = NULL;
  if (odla_LoadComputation(at, &comp) != ODLA_SUCCESS)
    return;
  query_outputs_and_args(comp, NULL);
  if (compile_loaded && odla_CompileComputation(comp, NULL, &exe) == ODLA_SUCCESS)
    odla_DestroyExecutable(exe);
  odla_DestroyComputation(comp);
}

static void load_constants(const unsigned char *p, size_t size) {
  odla_constants_array array = NULL;
  if (ftruncate(memfd, 0) != 0 || pwrite(memfd, p, size, 0) != (ssize_t)size)
    die("cannot write the memfd");
  if (odla_LoadConstantsArray(memfd_path, &array) == ODLA_SUCCESS)
    odla_DestroyConstantsArray(array);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Loaded images are read in place and must be 64-byte aligned: a copy that is, with room
   * for the header so that short inputs are still handed over as they are. */
  unsigned char *p = (unsigned char *)aligned_alloc(64, (size + 63) / 64 * 64 + HEADER);
  if (!p)
    die("out of memory");
  memcpy(p, data, size);
  if (size >= HEADER && memcmp(p, "ODLAREFK", 8) == 0) {
    stamp_size_and_checksum(p, size);
    load_constants(p, size);
  } else if (size >= HEADER && memcmp(p, "ODLAREFC", 8) == 0) {
    memcpy(p + 16, build_stamp, sizeof build_stamp);
    stamp_size_and_checksum(p, size);
    load_computation(p, size);
  } else {
    if (size >= HEADER && memcmp(p, "ODLAREFX", 8) == 0) {
      memcpy(p + 16, build_stamp, sizeof build_stamp);
      stamp_size_and_checksum(p, size);
    }
    load_executable(p, size);
  }
  free(p);
  return 0;
}
