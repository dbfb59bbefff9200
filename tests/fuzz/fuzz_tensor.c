/* libFuzzer target `tensor`: the input file reader of generated drivers, TensorProto and .npy
 * (codegen/templates/main_support.c, compiled in as odlac copies it into every main.c) on
 * arbitrary bytes, then the driver's input check against a declared input. A tensor the
 * reader accepts must have dims >= 0 whose element count times the element size is exactly
 * its byte count, without overflow; every byte is read. */
#define _POSIX_C_SOURCE 200809L /* as generated main.c files define it */
#include "main_support.c"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const int64_t dims[] = {1, 3, 2, 2};
  volatile unsigned char sink = 0;
  odlac_tensor t;
  if (odlac_parse_input(data, size, &t, "input_0.pb") == 0) {
    size_t bytes = odlac_elem_size(t.data_type), i;
    int k;
    for (k = 0; k < t.rank; ++k)
      if (t.dims[k] < 0 || __builtin_mul_overflow(bytes, (size_t)t.dims[k], &bytes))
        abort(); /* accepted a tensor no buffer can hold */
    if (bytes != t.bytes)
      abort();
    for (i = 0; i < t.bytes; ++i)
      sink ^= t.data[i];
    (void)odlac_check_input(&t, "input_0.pb", "input", 1, 4, dims);
  }
  (void)sink;
  free(t.data);
  return 0;
}
