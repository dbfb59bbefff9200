/* value_types.h: the value types the runtime test programs build their graphs from. vt(t, rank,
 * dims) is a type of element type t and the given dims (DIMS(2, 3) writes such dims in place);
 * any_shape() is the undefined shape (size -1) that asks a builder to compute its result's. */
#ifndef ODLAC_TESTS_RUNTIME_VALUE_TYPES_H
#define ODLAC_TESTS_RUNTIME_VALUE_TYPES_H

#include <ODLA/odla.h>

#include <stdint.h>
#include <string.h>

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

static inline odla_value_type vt(odla_element_type t, int rank, const int64_t *dims) {
  odla_value_type v;
  int i;
  memset(&v, 0, sizeof v);
  v.element_type = t;
  v.shape.size = rank;
  for (i = 0; i < rank; ++i)
    v.shape.dims[i] = dims[i];
  return v;
}

static inline odla_value_shape any_shape(void) {
  odla_value_shape s;
  memset(&s, 0, sizeof s);
  s.size = -1;
  return s;
}

#endif
