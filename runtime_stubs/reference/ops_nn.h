/* ops_nn.h: what the nn family's kernel files of the reference backend share: the
 * sliding-window geometry of convolution and pooling (ops_nn.c), the double-precision GEMM
 * (ops_gemm.c), and bulk conversion of float16/bfloat16 data to and from float. */
#ifndef ODLA_REFERENCE_OPS_NN_H_
#define ODLA_REFERENCE_OPS_NN_H_

#include "ref.h"
#include "ref_types.h"

/* Spatial ops handle 1 to 3 spatial axes by treating missing leading axes as extent 1. */
#define REF_SPATIAL 3

/* Sliding-window geometry shared by convolution and pooling, padded to 3 spatial axes. */
typedef struct {
  int64_t in[REF_SPATIAL], k[REF_SPATIAL], out[REF_SPATIAL];
  int64_t stride[REF_SPATIAL], dil[REF_SPATIAL], pad[REF_SPATIAL], pad_end[REF_SPATIAL];
} ref_window;

/* Output extent of a window along one axis (0 when it does not fit). ceil_mode: the last
 * window must start inside the input or the leading padding (PyTorch's and ONNX's rule). */
int64_t ref_window_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                       int ceil_mode);

/* Fills `w` from ODLA's per-spatial-axis arrays of an input of shape `x` (NULL strides,
 * dilations or paddings mean 1, 1 and 0). ODLA's pooling builders have no ceil-mode flag, so
 * the rounding is read from `given`: the output extents are floor-rounded unless `given` is
 * defined and names the ceil-rounded ones. Returns 0 after reporting an error. */
int ref_make_window(const char *op, const odla_value_shape *x, const int64_t *kernel,
                    const odla_uint32 *strides, const odla_uint32 *dilations,
                    const odla_uint32 *pad_front, const odla_uint32 *pad_back,
                    const odla_value_shape *given, ref_window *w);

/* The channels-first result [N, channels, out...] of a window op over x (out: w's output
 * extents) into *out, checked against the builder's output_dims `given`. Returns 0 after
 * reporting a conflict. */
int ref_window_result(const char *op, const odla_value_shape *x, int64_t channels,
                      odla_element_type type, const ref_window *w, const odla_value_shape *given,
                      odla_value_type *out);

/* How many of the window's taps along axis i, starting at `start` (padding counted from 0 at
 * -pad), fall inside the padded input [-pad, in + pad_end): the divisor of an average that
 * counts padding. */
int64_t ref_window_padded_taps(const ref_window *w, int i, int64_t start);

static inline int64_t ref_window_in_count(const ref_window *w) {
  return w->in[0] * w->in[1] * w->in[2];
}
static inline int64_t ref_window_out_count(const ref_window *w) {
  return w->out[0] * w->out[1] * w->out[2];
}
static inline int64_t ref_window_k_count(const ref_window *w) {
  return w->k[0] * w->k[1] * w->k[2];
}

/* C = alpha * op(A) * op(B) + beta * C in double precision (beta == 0 ignores C's contents);
 * the same contract as ref_sgemm, blocked for the caches but without packing. */
void ref_dgemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, double alpha,
               const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c,
               int64_t ldc);

/* float16 / bfloat16 <-> float for n elements; `t` is ODLA_FLOAT16 or ODLA_BFLOAT16. */
static inline void ref_nn_to_float(odla_element_type t, const uint16_t *src, float *dst,
                                   int64_t n) {
  int64_t i;
  if (t == ODLA_FLOAT16)
    for (i = 0; i < n; ++i)
      dst[i] = ref_half_to_float(src[i]);
  else
    for (i = 0; i < n; ++i)
      dst[i] = ref_bf16_to_float(src[i]);
}

static inline void ref_nn_from_float(odla_element_type t, const float *src, uint16_t *dst,
                                     int64_t n) {
  int64_t i;
  if (t == ODLA_FLOAT16)
    for (i = 0; i < n; ++i)
      dst[i] = ref_float_to_half(src[i]);
  else
    for (i = 0; i < n; ++i)
      dst[i] = ref_float_to_bf16(src[i]);
}

/* Rounds a scratch size in bytes up so that the next scratch area stays 64-byte aligned. */
static inline size_t ref_nn_align(size_t bytes) {
  return (bytes + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN;
}

#endif /* ODLA_REFERENCE_OPS_NN_H_ */
