/* profiled_graph.c: the program test_profiler_interposer.py runs under libodla_profiler. It
 * builds conv_gemm_graph.h's graph through the ODLA headers alone and executes it RUNS times
 * (argv[1]) on one context, printing the output. */
#include <ODLA/odla.h>

#include <stdio.h>
#include <stdlib.h>

#include "conv_gemm_graph.h"

static float out_data[10];

int main(int argc, char **argv) {
  odla_computation comp = NULL;
  odla_executable exec = NULL;
  odla_context ctx;
  odla_status s;
  int i, runs = argc > 1 ? atoi(argv[1]) : 1;
  if ((s = build_conv_gemm(&comp)) == ODLA_SUCCESS &&
      (s = odla_CompileComputation(comp, NULL, &exec)) == ODLA_SUCCESS &&
      (s = odla_CreateContext(&ctx)) == ODLA_SUCCESS) {
    for (i = 0; i < runs && s == ODLA_SUCCESS; ++i)
      if ((s = odla_BindToArgumentById((const odla_value_id) "x", x_data, ctx)) == ODLA_SUCCESS &&
          (s = odla_BindToOutputById((const odla_value_id) "out", out_data, ctx)) == ODLA_SUCCESS)
        s = odla_ExecuteComputation(comp, ctx, ODLA_COMPUTE_INFERENCE, NULL);
    odla_DestroyContext(ctx);
  }
  odla_DestroyExecutable(exec);
  odla_DestroyComputation(comp);
  if (s != ODLA_SUCCESS) {
    fprintf(stderr, "status %d\n", (int)s);
    return 1;
  }
  for (i = 0; i < 10; ++i)
    printf("%s%.9g", i ? " " : "", out_data[i]);
  printf("\n");
  return 0;
}
