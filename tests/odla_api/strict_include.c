// Compile-only test: <ODLA/odla.h> must build as strict C99 (-pedantic -Wall -Wextra -Werror).
//
// Generated code is C99, so this file uses the headers the way it does: shapes
// as compound literals with designated initialisers, value ids as C strings,
// items passed by address, and the version check backends make.

#include <ODLA/odla.h>

#if ODLA_VERSION_NUMBER < 50
#error "ODLA_VERSION_NUMBER must be at least 50 for ODLA 0.5"
#endif

// Every op builder must be usable through a correctly typed function pointer.
typedef odla_value (*odla_api_binary_op)(odla_value lhs, odla_value rhs,
                                         const odla_value_id value_id);

int odla_api_strict_probe(void);

int odla_api_strict_probe(void) {
  odla_value_type type = {ODLA_FLOAT32, (odla_value_shape){.size = 2, .dims = {1, 784}}};
  odla_value_id id = (const odla_value_id) "input";
  odla_scalar_value info;
  odla_values outputs = {0, {NULL}};
  odla_bf16_mode bf16 = BF16_PERFORMACE_MODE;
  odla_item_value item = (odla_item_value)&bf16;
  odla_api_binary_op add = odla_Add;
  odla_resize_coordinate_mode coord = ODLA_ASSYMMETRIC;
  odla_fill_method fill = ODLA_EyeLike;

  info.data_type = ODLA_INT32;
  info.val_int32 = (odla_int32)type.shape.size; // the anonymous union member
  return (int)sizeof(outputs) + info.val_int32 + (add != NULL) + (item != NULL) + (id != NULL) +
         (int)coord + (int)fill + (int)ODLA_MAX_OUTPUTS;
}
