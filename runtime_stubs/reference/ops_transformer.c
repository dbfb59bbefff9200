/* ops_transformer.c: the transformer extension ops of odla_ext_transformer.h in the reference
 * backend: layer normalization (two passes over each row for the statistics, one to write)
 * and scaled dot-product attention, which never stores the whole [..., Sq, Sk] scores:
 * float32 computes a tile of REF_ATTENTION_ROWS query rows at a time with the blocked
 * ref_sgemm (scores, softmax in place, product with the values), the other float types one
 * query row at a time; either way the scores live in the node's scratch. */
#include "ref.h"
#include "ref_types.h"
#include "threads.h"

#include <math.h>
#include <string.h>

/* ---- odla_ExtLayerNorm ----------------------------------------------------------------- */

typedef struct {
  int64_t rows, cols;
  double epsilon;
} ref_layernorm_params;

/* Statistics in double: mean, then the variance about it (two passes, no cancellation). */
#define REF_DEFINE_LAYERNORM(E, S, C, SFX)                                                         \
  REF_HOT static void ref_layernorm_##SFX(const ref_layernorm_params *p, const S *x,               \
                                          const S *scale, const S *bias, S *y) {                   \
    int64_t r, j;                                                                                  \
    for (r = 0; r < p->rows; ++r) {                                                                \
      const S *xr = x + r * p->cols;                                                               \
      S *yr = y + r * p->cols;                                                                     \
      double sum = 0.0, sq = 0.0, mean;                                                            \
      C m, inv;                                                                                    \
      for (j = 0; j < p->cols; ++j)                                                                \
        sum += (double)REF_LOAD_##SFX(xr, j);                                                      \
      mean = sum / (double)p->cols;                                                                \
      for (j = 0; j < p->cols; ++j) {                                                              \
        const double d = (double)REF_LOAD_##SFX(xr, j) - mean;                                     \
        sq += d * d;                                                                               \
      }                                                                                            \
      m = (C)mean;                                                                                 \
      inv = (C)(1.0 / sqrt(sq / (double)p->cols + p->epsilon));                                    \
      for (j = 0; j < p->cols; ++j) {                                                              \
        C v = (REF_LOAD_##SFX(xr, j) - m) * inv;                                                   \
        if (scale)                                                                                 \
          v *= REF_LOAD_##SFX(scale, j);                                                           \
        if (bias)                                                                                  \
          v += REF_LOAD_##SFX(bias, j);                                                            \
        REF_STORE_##SFX(yr, j, v);                                                                 \
      }                                                                                            \
    }                                                                                              \
  }
REF_FOR_FLOAT_TYPES(REF_DEFINE_LAYERNORM)
#undef REF_DEFINE_LAYERNORM

static odla_status ref_layernorm_run(const ref_node *node, const ref_io *io) {
  const ref_layernorm_params *p = (const ref_layernorm_params *)node->params;
  switch (node->outputs[0]->type.element_type) {
#define REF_CASE(E, S, C, SFX)                                                                     \
  case E:                                                                                          \
    ref_layernorm_##SFX(p, (const S *)io->in[0], (const S *)io->in[1], (const S *)io->in[2],       \
                        (S *)io->out[0]);                                                          \
    break;
    REF_FOR_FLOAT_TYPES(REF_CASE)
#undef REF_CASE
  default:
    return ODLA_UNSUPPORTED_DATATYPE; /* the builder admits float types only */
  }
  return ODLA_SUCCESS;
}

/* Checks an optional per-element parameter of layer normalization: x's element type and the
 * normalized dims (x's dims from `axis` on). */
static int ref_layernorm_param(const char *what, odla_value v, const odla_value_type *x, int axis) {
  char s1[128], s2[128];
  odla_value_shape norm;
  int d;
  if (!v)
    return 1;
  if (!ref_check_operands("ExtLayerNorm", 1, &v))
    return 0;
  norm.size = x->shape.size - axis;
  for (d = 0; d < norm.size; ++d)
    norm.dims[d] = x->shape.dims[axis + d];
  if (v->type.element_type != x->element_type || !ref_same_shape(&v->type.shape, &norm)) {
    ref_fail(ODLA_INVALID_PARAM, "ExtLayerNorm", "%s %s %s must be %s %s (the normalized dims)",
             what, ref_type_name(v->type.element_type),
             ref_shape_str(&v->type.shape, s1, sizeof s1), ref_type_name(x->element_type),
             ref_shape_str(&norm, s2, sizeof s2));
    return 0;
  }
  return 1;
}

odla_value odla_ExtLayerNorm(odla_value input, odla_int32 axis, odla_float32 epsilon,
                             odla_value scale, odla_value bias, const odla_value_id value_id) {
  ref_layernorm_params p;
  odla_value in[3], v;
  int d;
  if (!ref_check_operands("ExtLayerNorm", 1, &input))
    return NULL;
  if (!ref_is_float(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtLayerNorm",
                    "element type %s is not supported (float32, float64, float16, bfloat16)",
                    ref_type_name(input->type.element_type));
  if (axis < 0 || axis >= input->type.shape.size)
    return ref_fail(ODLA_INVALID_PARAM, "ExtLayerNorm", "axis %d out of range for rank %d",
                    (int)axis, (int)input->type.shape.size);
  if (!(epsilon >= 0.0f))
    return ref_fail(ODLA_INVALID_PARAM, "ExtLayerNorm", "epsilon %g must be >= 0", (double)epsilon);
  if (!ref_layernorm_param("scale", scale, &input->type, axis) ||
      !ref_layernorm_param("bias", bias, &input->type, axis))
    return NULL;
  p.cols = 1;
  for (d = axis; d < input->type.shape.size; ++d)
    p.cols *= input->type.shape.dims[d];
  p.rows = p.cols ? ref_count(&input->type.shape) / p.cols : 0;
  p.epsilon = epsilon;
  in[0] = input;
  in[1] = scale;
  in[2] = bias;
  v = ref_add_op("ExtLayerNorm", ref_layernorm_run, 3, in, ref_type_of(input), value_id, &p,
                 sizeof p);
  if (v) /* each row is read whole before any of its elements is written */
    v->node->inplace_input = 0;
  return v;
}

/* ---- odla_ExtAttention ----------------------------------------------------------------- */

typedef struct {
  int64_t batch, sq, sk, d, dv; /* batch: the product of the leading dims */
  /* The mask's element strides along the scores' axes (0 where it broadcasts): the leading
   * (batch) axes, then Sq and Sk. */
  int batch_rank;
  int64_t batch_dims[ODLA_MAX_DIMENSION];
  int64_t mask_strides[ODLA_MAX_DIMENSION];
  int64_t mask_q, mask_k;
} ref_attention_params;

/* The offset of batch b's first mask element. */
static int64_t ref_attention_mask_base(const ref_attention_params *p, int64_t b) {
  int64_t off = 0;
  int a;
  for (a = p->batch_rank - 1; a >= 0; --a) {
    off += (b % p->batch_dims[a]) * p->mask_strides[a];
    b /= p->batch_dims[a];
  }
  return off;
}

/* The mask's first element for query row i of batch b (0 without a mask). */
static const float *ref_attention_mask_row(const ref_attention_params *p, const float *mask,
                                           int64_t b, int64_t i) {
  return mask + ref_attention_mask_base(p, b) + i * p->mask_q;
}

/* Query rows per tile of the float32 kernel: the tile's scores (rows x Sk floats) stay in
 * cache between the two products. */
#define REF_ATTENTION_ROWS 32

/* Floats of scratch the float32 kernel needs: one tile of scores (rounded to 64 bytes), then
 * ref_sgemm's packing buffer for the larger of the two products. */
static size_t ref_attention_f32_scratch(const ref_attention_params *p, size_t *pack_offset) {
  int64_t rows = p->sq < REF_ATTENTION_ROWS ? p->sq : REF_ATTENTION_ROWS;
  size_t qk = ref_sgemm_scratch(rows, p->sk, p->d), pv = ref_sgemm_scratch(rows, p->dv, p->sk);
  *pack_offset = ((size_t)(rows * p->sk) + 15) / 16 * 16;
  return *pack_offset + (qk > pv ? qk : pv);
}

REF_HOT static void ref_attention_f32_tiled(const ref_attention_params *p, const float *q,
                                            const float *k, const float *v, const float *scale,
                                            const float *mask, float *y, float *scratch) {
  size_t pack_offset;
  float *scores = scratch, *pack;
  int64_t b, i0, r, j;
  ref_attention_f32_scratch(p, &pack_offset);
  pack = scratch + pack_offset;
  for (b = 0; b < p->batch; ++b) {
    const float *kb = k + b * p->sk * p->d, *vb = v + b * p->sk * p->dv;
    for (i0 = 0; i0 < p->sq; i0 += REF_ATTENTION_ROWS) {
      int64_t rows = p->sq - i0 < REF_ATTENTION_ROWS ? p->sq - i0 : REF_ATTENTION_ROWS;
      ref_sgemm(0, 1, rows, p->sk, p->d, *scale, q + (b * p->sq + i0) * p->d, p->d, kb, p->d, 0.0f,
                scores, p->sk, pack);
      for (r = 0; r < rows; ++r) {
        float *s = scores + r * p->sk, max = -INFINITY, sum = 0.0f, inv;
        if (mask) {
          const float *m = ref_attention_mask_row(p, mask, b, i0 + r);
          for (j = 0; j < p->sk; ++j)
            s[j] += m[j * p->mask_k];
        }
        for (j = 0; j < p->sk; ++j)
          max = s[j] > max ? s[j] : max;
        for (j = 0; j < p->sk; ++j) {
          s[j] = expf(s[j] - max);
          sum += s[j];
        }
        inv = 1.0f / sum;
        for (j = 0; j < p->sk; ++j)
          s[j] *= inv;
      }
      ref_sgemm(0, 0, rows, p->dv, p->sk, 1.0f, scores, p->sk, vb, p->dv, 0.0f,
                y + (b * p->sq + i0) * p->dv, p->dv, pack);
    }
  }
}

/* One query row per batch (a decoder's step, each head a batch): the scores as dot products
 * straight from the keys and the result as a sum of value rows, where ref_sgemm would copy the
 * keys and values into panels for a single row; the batches split over the context's threads
 * (each batch on one thread, so the result does not depend on their number). */
typedef struct {
  const ref_attention_params *p;
  const float *q, *k, *v, *mask;
  float scale;
  float *y;
} ref_attention_row_job;

REF_HOT static void ref_attention_row_part(void *arg, int index, int parts,
                                           unsigned char *scratch) {
  const ref_attention_row_job *job = (const ref_attention_row_job *)arg;
  const ref_attention_params *p = job->p;
  float *s = (float *)scratch; /* sk scores */
  int64_t b, lo, hi, j, t;
  ref_split(p->batch, 1, index, parts, &lo, &hi);
  for (b = lo; b < hi; ++b) {
    const float *q = job->q + b * p->d, *kb = job->k + b * p->sk * p->d,
                *vb = job->v + b * p->sk * p->dv;
    const float *m = job->mask ? ref_attention_mask_row(p, job->mask, b, 0) : NULL;
    float *y = job->y + b * p->dv, max = -INFINITY, sum = 0.0f, inv;
    for (j = 0; j < p->sk; ++j) {
      const float *kj = kb + j * p->d;
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}, dot;
      for (t = 0; t + 8 <= p->d; t += 8) {
        int u;
        for (u = 0; u < 8; ++u)
          acc[u] += q[t + u] * kj[t + u];
      }
      for (; t < p->d; ++t)
        acc[0] += q[t] * kj[t];
      dot = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
      s[j] = dot * job->scale + (m ? m[j * p->mask_k] : 0.0f);
      max = s[j] > max ? s[j] : max;
    }
    for (j = 0; j < p->sk; ++j) {
      s[j] = expf(s[j] - max);
      sum += s[j];
    }
    for (t = 0; t < p->dv; ++t)
      y[t] = 0.0f;
    for (j = 0; j < p->sk; ++j) {
      const float *vj = vb + j * p->dv, w = s[j];
      for (t = 0; t < p->dv; ++t)
        y[t] += w * vj[t];
    }
    inv = 1.0f / sum;
    for (t = 0; t < p->dv; ++t)
      y[t] *= inv;
  }
}

/* Other float types, for each query row: scores s[j] = scale * q.k_j + mask, softmax over j
 * (max subtracted), then y = sum_j s[j] v_j / sum_j s[j]. `s` and `acc` are scratch of sk and
 * dv elements. */
#define REF_DEFINE_ATTENTION(E, S, C, SFX)                                                         \
  static void ref_attention_##SFX(const ref_attention_params *p, const S *q, const S *k,           \
                                  const S *v, const S *scale_ptr, const S *mask, S *y, C *s,       \
                                  C *acc) {                                                        \
    int64_t b, i, j, t;                                                                            \
    const C scale = REF_LOAD_##SFX(scale_ptr, 0);                                                  \
    for (b = 0; b < p->batch; ++b) {                                                               \
      const S *kb = k + b * p->sk * p->d, *vb = v + b * p->sk * p->dv;                             \
      const int64_t mb = mask ? ref_attention_mask_base(p, b) : 0;                                 \
      for (i = 0; i < p->sq; ++i) {                                                                \
        const S *qi = q + (b * p->sq + i) * p->d;                                                  \
        S *yi = y + (b * p->sq + i) * p->dv;                                                       \
        C max = -(C)INFINITY, sum = 0;                                                             \
        for (j = 0; j < p->sk; ++j) {                                                              \
          const S *kj = kb + j * p->d;                                                             \
          C dot = 0;                                                                               \
          for (t = 0; t < p->d; ++t)                                                               \
            dot += REF_LOAD_##SFX(qi, t) * REF_LOAD_##SFX(kj, t);                                  \
          dot *= scale;                                                                            \
          if (mask)                                                                                \
            dot += REF_LOAD_##SFX(mask, mb + i * p->mask_q + j * p->mask_k);                       \
          s[j] = dot;                                                                              \
          max = dot > max ? dot : max;                                                             \
        }                                                                                          \
        for (j = 0; j < p->sk; ++j) {                                                              \
          s[j] = (C)exp((double)(s[j] - max));                                                     \
          sum += s[j];                                                                             \
        }                                                                                          \
        for (t = 0; t < p->dv; ++t)                                                                \
          acc[t] = 0;                                                                              \
        for (j = 0; j < p->sk; ++j) {                                                              \
          const S *vj = vb + j * p->dv;                                                            \
          const C w = s[j];                                                                        \
          for (t = 0; t < p->dv; ++t)                                                              \
            acc[t] += w * REF_LOAD_##SFX(vj, t);                                                   \
        }                                                                                          \
        for (t = 0; t < p->dv; ++t)                                                                \
          REF_STORE_##SFX(yi, t, acc[t] / sum);                                                    \
      }                                                                                            \
    }                                                                                              \
  }
REF_FOR_FLOAT_TYPES(REF_DEFINE_ATTENTION)
#undef REF_DEFINE_ATTENTION

static odla_status ref_attention_run(const ref_node *node, const ref_io *io) {
  const ref_attention_params *p = (const ref_attention_params *)node->params;
  if (node->outputs[0]->type.element_type == ODLA_FLOAT32 && p->sq == 1) {
    ref_attention_row_job job;
    int parts = ref_threads_count(ref_io_threads(io));
    job.p = p;
    job.q = (const float *)io->in[0];
    job.k = (const float *)io->in[1];
    job.v = (const float *)io->in[2];
    job.scale = *(const float *)io->in[3];
    job.mask = (const float *)io->in[4];
    job.y = (float *)io->out[0];
    if (parts > p->batch)
      parts = (int)p->batch;
    if (p->batch * p->sk * (p->d + p->dv) < ((int64_t)1 << 15))
      parts = 1; /* a small step: waking the threads costs more */
    ref_parallel(ref_io_threads(io), parts, ref_attention_row_part, &job,
                 (unsigned char *)io->scratch);
    return ODLA_SUCCESS;
  }
  if (node->outputs[0]->type.element_type == ODLA_FLOAT32) {
    ref_attention_f32_tiled(p, (const float *)io->in[0], (const float *)io->in[1],
                            (const float *)io->in[2], (const float *)io->in[3],
                            (const float *)io->in[4], (float *)io->out[0], (float *)io->scratch);
    return ODLA_SUCCESS;
  }
  switch (node->outputs[0]->type.element_type) {
#define REF_CASE(E, S, C, SFX)                                                                     \
  case E:                                                                                          \
    ref_attention_##SFX(p, (const S *)io->in[0], (const S *)io->in[1], (const S *)io->in[2],       \
                        (const S *)io->in[3], (const S *)io->in[4], (S *)io->out[0],               \
                        (C *)io->scratch, (C *)io->scratch + p->sk);                               \
    break;
    REF_FOR_FLOAT_TYPES(REF_CASE)
#undef REF_CASE
  default:
    return ODLA_UNSUPPORTED_DATATYPE; /* the builder admits float types only */
  }
  return ODLA_SUCCESS;
}

odla_value odla_ExtAttention(odla_value query, odla_value key, odla_value value, odla_value scale,
                             odla_value mask, const odla_value_id value_id) {
  ref_attention_params p;
  odla_value in[5], v;
  odla_value_type out;
  const odla_value_shape *q, *k, *vs;
  char s1[128], s2[128], s3[128];
  int rank, a;
  odla_value qkvs[4];
  qkvs[0] = query;
  qkvs[1] = key;
  qkvs[2] = value;
  qkvs[3] = scale;
  if (!ref_check_operands("ExtAttention", 4, qkvs) ||
      (mask && !ref_check_operands("ExtAttention", 1, &mask)))
    return NULL;
  q = &query->type.shape;
  k = &key->type.shape;
  vs = &value->type.shape;
  if (!ref_is_float(query->type.element_type) ||
      key->type.element_type != query->type.element_type ||
      value->type.element_type != query->type.element_type ||
      scale->type.element_type != query->type.element_type ||
      (mask && mask->type.element_type != query->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtAttention",
                    "query, key, value, scale and mask must have one float element type; query "
                    "is %s",
                    ref_type_name(query->type.element_type));
  if (ref_count(&scale->type.shape) != 1)
    return ref_fail(ODLA_INVALID_PARAM, "ExtAttention", "scale %s must hold one element",
                    ref_shape_str(&scale->type.shape, s1, sizeof s1));
  rank = q->size;
  if (rank < 2 || k->size != rank || vs->size != rank)
    return ref_fail(ODLA_INVALID_PARAM, "ExtAttention",
                    "query %s, key %s and value %s must have one rank >= 2",
                    ref_shape_str(q, s1, sizeof s1), ref_shape_str(k, s2, sizeof s2),
                    ref_shape_str(vs, s3, sizeof s3));
  memset(&p, 0, sizeof p);
  p.batch = 1;
  for (a = 0; a < rank - 2; ++a) {
    if (k->dims[a] != q->dims[a] || vs->dims[a] != q->dims[a])
      return ref_fail(ODLA_INVALID_PARAM, "ExtAttention",
                      "query %s, key %s and value %s must share their leading dims",
                      ref_shape_str(q, s1, sizeof s1), ref_shape_str(k, s2, sizeof s2),
                      ref_shape_str(vs, s3, sizeof s3));
    p.batch *= q->dims[a];
    p.batch_dims[a] = q->dims[a];
  }
  p.batch_rank = rank - 2;
  p.sq = q->dims[rank - 2];
  p.d = q->dims[rank - 1];
  p.sk = k->dims[rank - 2];
  p.dv = vs->dims[rank - 1];
  if (k->dims[rank - 1] != p.d || vs->dims[rank - 2] != p.sk)
    return ref_fail(ODLA_INVALID_PARAM, "ExtAttention",
                    "key %s must be [..., Sk, %lld] and value %s [..., Sk, Dv]",
                    ref_shape_str(k, s1, sizeof s1), (long long)p.d,
                    ref_shape_str(vs, s2, sizeof s2));
  if (mask) {
    /* Right-aligned numpy broadcast onto the scores [..., Sq, Sk]. */
    const odla_value_shape *m = &mask->type.shape;
    int64_t stride = 1, scores[ODLA_MAX_DIMENSION], strides[ODLA_MAX_DIMENSION];
    for (a = 0; a < rank; ++a)
      scores[a] = a < rank - 2 ? q->dims[a] : (a == rank - 2 ? p.sq : p.sk);
    if (m->size > rank)
      return ref_fail(ODLA_INVALID_PARAM, "ExtAttention",
                      "mask %s has a higher rank than the "
                      "scores",
                      ref_shape_str(m, s1, sizeof s1));
    for (a = rank - 1; a >= 0; --a) {
      int md = a - (rank - m->size);
      int64_t dim = md >= 0 ? m->dims[md] : 1;
      if (dim != 1 && dim != scores[a])
        return ref_fail(ODLA_INVALID_PARAM, "ExtAttention",
                        "mask %s does not broadcast onto the scores (axis %d: %lld)",
                        ref_shape_str(m, s1, sizeof s1), a, (long long)scores[a]);
      strides[a] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
    for (a = 0; a < rank - 2; ++a)
      p.mask_strides[a] = strides[a];
    p.mask_q = strides[rank - 2];
    p.mask_k = strides[rank - 1];
  }
  out.element_type = query->type.element_type;
  out.shape = ref_shape_copy(q);
  out.shape.dims[rank - 1] = p.dv;
  in[0] = query;
  in[1] = key;
  in[2] = value;
  in[3] = scale;
  in[4] = mask;
  v = ref_add_op("ExtAttention", ref_attention_run, 5, in, out, value_id, &p, sizeof p);
  if (v) {
    size_t pack_offset;
    odla_element_type t = query->type.element_type;
    v->node->scratch_bytes =
        t == ODLA_FLOAT32 && p.sq == 1 ? (size_t)p.sk * sizeof(float) /* the one-row kernel's */
        : t == ODLA_FLOAT32
            ? ref_attention_f32_scratch(&p, &pack_offset) * sizeof(float)
            : (size_t)(p.sk + p.dv) * (t == ODLA_FLOAT64 ? sizeof(double) : sizeof(float));
  }
  return v;
}
