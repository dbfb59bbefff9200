/* Seed maker for the load targets (make_seeds.py builds it with a model's generated
 * net_store.c, net_weights.c and libodla_reference): `seed_store PREFIX` runs net_store, which
 * writes the stored executable PREFIX.odlx, and, linked with -Wl,--wrap=odla_DestroyComputation,
 * catches the computation net_store builds just before it is destroyed to store it too, as a
 * stored computation PREFIX.odlc and as a constants array PREFIX.odlk. */
#include <ODLA/odla.h>

#include <stdio.h>

int net_store(const char *executable_path);
odla_status __real_odla_DestroyComputation(odla_computation computation);

static const char *prefix;

/* net_store's computation is still the thread's current one here, as odla_CreateConstantsArray
 * needs. */
odla_status __wrap_odla_DestroyComputation(odla_computation computation) {
  char path[4096];
  odla_resource_location at = {ODLA_LOCATION_PATH, path, 0};
  odla_constants_array array = NULL;
  snprintf(path, sizeof path, "%s.odlc", prefix);
  if (odla_StoreComputation(at, computation) != ODLA_SUCCESS)
    fprintf(stderr, "seed_store: odla_StoreComputation failed\n");
  snprintf(path, sizeof path, "%s.odlk", prefix);
  if (odla_CreateConstantsArray(&array) != ODLA_SUCCESS ||
      odla_StoreConstantsArray(path, array) != ODLA_SUCCESS)
    fprintf(stderr, "seed_store: storing the constants array failed\n");
  if (array)
    odla_DestroyConstantsArray(array);
  return __real_odla_DestroyComputation(computation);
}

int main(int argc, char **argv) {
  char path[4096];
  int s;
  if (argc != 2) {
    fprintf(stderr, "usage: %s PREFIX\n", argv[0]);
    return 2;
  }
  prefix = argv[1];
  snprintf(path, sizeof path, "%s.odlx", prefix);
  s = net_store(path);
  if (s != 0)
    fprintf(stderr, "seed_store: net_store failed with odla_status %d\n", s);
  return s != 0;
}
