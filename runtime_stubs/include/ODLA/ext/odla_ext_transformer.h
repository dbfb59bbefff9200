/* odla_ext_transformer.h: the transformer building blocks that odlac's optimizer recognizes
 * in exported models (beyond ODLA 0.5): layer normalization and scaled dot-product
 * attention. Included by odla_ext.h. A backend without them gets the same computation as
 * core ODLA calls (InstanceNormalization over a row view, Mul and Add; BatchMatMul, Mul, Add,
 * Softmax and BatchMatMul). */
#ifndef _ODLA_EXT_TRANSFORMER_H_
#define _ODLA_EXT_TRANSFORMER_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Layer normalization over the axes from `axis` (0 <= axis < rank) to the last:
 *   y = (x - mean) / sqrt(var + epsilon) * scale + bias
 * with mean and (biased) variance of each row of x viewed as [rows, D], D the product of the
 * normalized dims. scale and bias are optional (NULL: 1 and 0); when given they have the
 * normalized dims (x's dims from `axis` on) and x's element type. The result has x's type. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtLayerNorm(odla_value input, odla_int32 axis,
                                                                  odla_float32 epsilon,
                                                                  odla_value scale, odla_value bias,
                                                                  const odla_value_id value_id);

/* Scaled dot-product attention:
 *   y = softmax(scale * query x key^T + mask, along the last axis) x value
 * query [..., Sq, D], key [..., Sk, D], value [..., Sk, Dv], all of one float element type
 * and with the same leading (batch, head) dims; scale holds one element of that type; mask
 * (optional, NULL for none) broadcasts onto the scores [..., Sq, Sk] in numpy's way. The
 * result is [..., Sq, Dv]. The scores need not be stored whole: a backend may compute them
 * one query row at a time. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtAttention(odla_value query, odla_value key,
                                                                  odla_value value,
                                                                  odla_value scale, odla_value mask,
                                                                  const odla_value_id value_id);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_TRANSFORMER_H_ */
