/* autodiff.h: what the gradient rules of the reference backend (autodiff.c) read from the
 * forward nodes they differentiate. Each op file with a gradient rule describes its own nodes
 * here, so that its parameter block stays private to it. Every function returns 0 when
 * `node` is not one of its op's nodes in the form the rule handles (another kernel, such as
 * the channels-last Conv, or another op sharing the name), and then leaves its outputs
 * unset. */
#ifndef ODLA_REFERENCE_AUTODIFF_H_
#define ODLA_REFERENCE_AUTODIFF_H_

#include "ops_nn.h"

/* odla_Gemm (ops_gemm.c): y = alpha * op(A) op(B) + beta * C. */
int ref_gemm_describe(const ref_node *node, int *trans_a, int *trans_b, float *alpha, float *beta);
/* The epilogue node of odla_ExtGemm / odla_ExtConv (ops_fused.c): y = act(product + residual). */
int ref_epilogue_describe(const ref_node *node, odla_ext_fused_activation *act);
/* odla_Conv on channels-first data (ops_conv.c): its window and group count. */
int ref_conv_describe(const ref_node *node, ref_window *w, int64_t *group);
/* odla_MaxPool and odla_ExtMaxPool on channels-first data (ops_pool.c): the window. */
int ref_maxpool_describe(const ref_node *node, ref_window *w);
/* odla_ReduceSum and odla_ReduceMean (ops_reduce.c): the input seen as `rank` merged axes
 * of extents dims, where output element sum(i_k * out_strides[k]) collects input element
 * (i_0, ..., i_rank-1) (strides 0 along reduced axes), scaled by `scale` (1 or 1 / count). */
int ref_reduce_describe(const ref_node *node, int *rank, int64_t *dims, int64_t *out_strides,
                        double *scale);
/* odla_LogSoftmax (ops_reduce_axis.c): the input as [outer, axis, inner]. */
int ref_logsoftmax_describe(const ref_node *node, int64_t *outer, int64_t *axis, int64_t *inner);
/* odla_NegativeLogLikeliHoodLoss (ops_loss.c): input [n, c, d], targets [n, d]. */
int ref_nll_describe(const ref_node *node, int64_t *n, int64_t *c, int64_t *d, int64_t *ignored,
                     odla_reduction_mode *reduction, int *index64);

#endif /* ODLA_REFERENCE_AUTODIFF_H_ */
