/* conv_gemm_graph.h: the graph test_profiler.c and profiled_graph.c profile, built through the
 * ODLA headers alone: y = Conv(x, w) [1,3,8,8] * [4,3,3,3] (2*4*6*6*27 = 7776 FLOPs),
 * r = Relu(y), flat = Reshape(r) [1,144], out = Gemm(flat, b) [144,10] (2*144*10 = 2880
 * FLOPs), with the data test_profiler_interposer.py recomputes in numpy: x[i] = i % 7 - 3,
 * w[i] = (i % 5) / 4 - 0.5, b[i] = i % 3 - 1. Argument "x", output "out". */
#ifndef ODLA_TESTS_CONV_GEMM_GRAPH_H_
#define ODLA_TESTS_CONV_GEMM_GRAPH_H_

#include <ODLA/odla.h>

static float x_data[1 * 3 * 8 * 8], w_data[4 * 3 * 3 * 3], b_data[144 * 10];

static odla_value_shape shape(int n, const odla_int64 *d) {
  odla_value_shape s;
  int i;
  s.size = n;
  for (i = 0; i < n; ++i)
    s.dims[i] = d[i];
  return s;
}

/* Fills the data and builds the graph into a new computation *comp (its output marked). */
static odla_status build_conv_gemm(odla_computation *comp) {
  static const odla_int64 xd[] = {1, 3, 8, 8}, wd[] = {4, 3, 3, 3}, rd[] = {1, 144},
                          bd[] = {144, 10};
  static const odla_uint32 one[] = {1, 1}, zero[] = {0, 0};
  odla_value_type t;
  odla_value x, w, b, y, r, flat, out;
  odla_value_shape undefined;
  odla_status s;
  int i;
  for (i = 0; i < (int)(sizeof x_data / sizeof *x_data); ++i)
    x_data[i] = (float)(i % 7) - 3.0f;
  for (i = 0; i < (int)(sizeof w_data / sizeof *w_data); ++i)
    w_data[i] = (float)(i % 5) * 0.25f - 0.5f;
  for (i = 0; i < (int)(sizeof b_data / sizeof *b_data); ++i)
    b_data[i] = (float)(i % 3) - 1.0f;
  if ((s = odla_CreateComputation(comp)) != ODLA_SUCCESS)
    return s;
  undefined.size = -1;
  t.element_type = ODLA_FLOAT32;
  t.shape = shape(4, xd);
  x = odla_CreateArgument(t, (const odla_value_id) "x");
  t.shape = shape(4, wd);
  w = odla_CreateConstant(t, w_data, (const odla_value_id) "w");
  t.shape = shape(2, bd);
  b = odla_CreateConstant(t, b_data, (const odla_value_id) "b");
  y = odla_Conv(x, ODLA_CHANNELS_FIRST, 1, w, ODLA_OIS, one, one, zero, zero, NULL, undefined,
                (const odla_value_id) "y");
  r = odla_Relu(y, (const odla_value_id) "r");
  flat = odla_Reshape(r, shape(2, rd), (const odla_value_id) "flat");
  out = odla_Gemm(flat, 0, b, 0, 1.0f, 0.0f, NULL, undefined, (const odla_value_id) "out");
  if (!out)
    return ODLA_FAILURE;
  return odla_SetValueAsOutput(out);
}

#endif /* ODLA_TESTS_CONV_GEMM_GRAPH_H_ */
