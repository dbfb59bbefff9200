// Compile-only test: <ODLA/odla.h> must build as C++17 with -Wall -Wextra -Werror (odlac uses it).

#include <ODLA/odla.h>

#include <type_traits>

static_assert(sizeof(odla_bool) == 4, "odla_bool is four bytes, not bool");
static_assert(std::is_pointer<odla_value_id>::value, "value ids are opaque pointers");
static_assert(ODLA_MAX_DIMENSION == 10 && ODLA_MAX_OUTPUTS == 64, "ODLA 0.5 limits");
static_assert(BF16_PERFORMACE_MODE == 2 && ODLA_EyeLike == 0, "ODLA 0.5 enum values");

int odla_api_strict_probe();

int odla_api_strict_probe() {
  odla_value_shape shape = {2, {1, 784}};
  odla_value_type type = {ODLA_FLOAT32, shape};
  odla_scalar_value info{};
  info.data_type = ODLA_INT64;
  info.val_int64 = shape.dims[1]; // the anonymous union member
  odla_value (*conv)(odla_value, odla_memory_layout, odla_uint32, odla_value, odla_memory_layout,
                     const odla_uint32 *, const odla_uint32 *, const odla_uint32 *,
                     const odla_uint32 *, odla_value, odla_value_shape, const odla_value_id) =
      odla_Conv;
  odla_value bias = NULL; // optional operands are passed as NULL
  return static_cast<int>(type.shape.size + info.val_int64) + (conv != nullptr) + (bias == nullptr);
}
