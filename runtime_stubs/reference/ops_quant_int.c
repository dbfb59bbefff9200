/* ops_quant_int.c: the integer-only quantized products of odla_ext_quant.h in the reference
 * backend, odla_ExtQLinearConv and odla_ExtQLinearMatMul: uint8/int8 operands, int32
 * accumulation, exact fixed-point requantization and the fused clamp (the header's comment
 * "Integer-only quantized products" is the contract).
 *
 * Both run as one integer GEMM, rows x cols x k, whose rows are output pixels (Conv) or
 * matrix rows (MatMul) and whose cols are output channels. Both operands are int16 with
 * their zero point already subtracted (x - xz and w - wz[c] lie in [-255, 255]) and stored
 * k-contiguous, so that each output is a dot product the compiler vectorizes into int16
 * multiply-adds into int32 lanes (pmaddwd; vpdpwssd with VNNI), 16 of them at once in a
 * 4 x 4 register tile (ref_qi_tile). The kernel operand is packed that way (w - wz[c] per
 * output channel, k-contiguous) once: in the builder, into the node's parameter block, when
 * it and its zero point are constants, else into scratch when the node runs. The input is
 * staged per image as int16 (x - xz) in channels-last order whatever its layout, so that a
 * convolution's im2col rows are copies of channel runs, built a block of pixels at a time in
 * scratch (at most REF_QI_COL_VALUES values); a 1x1 convolution with stride 1 and no padding
 * reads the staged input itself, and a depthwise one (one input and one output channel per
 * group) runs a direct loop along the channels, or on channels-first data along rows of
 * pixels of the untransposed input (ref_qconv_cf). Padding
 * contributes nothing: ONNX pads the quantized input with its zero point, whose x - xz is 0.
 *
 * Every output then goes through ref_qi_requantize (a run of one channel's outputs at a time
 * where the layout makes them contiguous). Work splits over blocks of rows on the
 * node's threads (threads.h); integer results are the same at any thread count.
 *
 * Multipliers and shifts that are constants are checked by the builders; ones computed in the
 * graph are checked as the node runs (ODLA_INVALID_PARAM), since a shift outside [1, 62]
 * cannot be computed. */
#include "ops_channels_last.h"
#include "threads.h"

#include <stdlib.h>
#include <string.h>

/* The node's operands, in the builders' parameter order (Conv's and MatMul's alike). */
enum {
  REF_QI_X,
  REF_QI_XZ,
  REF_QI_W,
  REF_QI_WZ,
  REF_QI_BIAS,
  REF_QI_MULT,
  REF_QI_SHIFT,
  REF_QI_YZ,
  REF_QI_OPERANDS
};
static const char *const ref_qi_names[REF_QI_OPERANDS] = {
    "input", "input_zero_point", "kernel", "kernel_zero_point",
    "bias",  "multiplier",       "shift",  "output_zero_point"};

/* The GEMM's register tile (rows x cols); im2col blocks hold at most this many values; a
 * channels-first image is transposed this many pixels at a time. */
enum { REF_QI_TILE = 4, REF_QI_COL_VALUES = 1 << 16, REF_QI_STAGE_PIXELS = 32 };
/* Products under this many multiply-adds stay on one thread (as ops_gemm.c's floats). */
#define REF_QI_PARALLEL_MIN ((int64_t)1 << 21)

static int64_t ref_qi_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- Requantization ------------------------------------------------------------------------ */

/* clamp(round_half_to_even(acc * mult / 2^shift) + zp, lo, hi) in int64 integer arithmetic:
 * |acc| <= 2^31 and 0 <= mult < 2^31 keep the product below 2^62, shift is in [1, 62].
 * Without branches: floor((prod + 2^(shift-1) - 1 + odd) / 2^shift), where odd is whether
 * floor(prod / 2^shift) is odd, rounds up exactly the remainders above one half and the half
 * of an odd quotient. Each floor is an unsigned shift of the sum offset by 2^62 (no negative
 * number is shifted: that is implementation-defined in C99), less the offset's shift. */
static int32_t ref_qi_requantize(int32_t acc, int32_t mult, int32_t shift, int32_t zp, int32_t lo,
                                 int32_t hi) {
  const uint64_t offset = (uint64_t)1 << 62;
  const int64_t prod = (int64_t)acc * mult, fo = (int64_t)(offset >> shift);
  const int64_t odd = (int64_t)(((uint64_t)(prod + (int64_t)offset) >> shift) & 1);
  const int64_t half = ((int64_t)1 << shift >> 1) - 1 + odd;
  const int64_t q = (int64_t)((uint64_t)(prod + (int64_t)offset + half) >> shift) - fo + zp;
  return (int32_t)(q < lo ? lo : q > hi ? hi : q);
}

static int ref_qi_scale_ok(int32_t mult, int32_t shift) {
  return mult >= 0 && shift >= 1 && shift <= 62;
}

/* What the epilogue reads: per output channel bias, multiplier and shift (scalars expanded),
 * the output zero point and clamp, and where outputs go (element (row, col) at
 * y[row * y_row + col * y_col], one byte each). */
typedef struct {
  const int32_t *bias, *mult, *shift;
  int32_t zp, lo, hi;
  int y_signed;
  unsigned char *y;
  int64_t y_row, y_col;
} ref_qi_out;

/* Stores output (row, col) of a product's tile: rows [row, row + n) of column col, whose sums
 * are s[0], s[stride], ... */
static void ref_qi_store(const ref_qi_out *o, int64_t row, int64_t n, int64_t col, const int32_t *s,
                         int64_t stride) {
  const int32_t bias = o->bias[col], mult = o->mult[col], shift = o->shift[col];
  unsigned char *at = o->y + row * o->y_row + col * o->y_col;
  int64_t i;
  for (i = 0; i < n; ++i, at += o->y_row) {
    const int32_t v = ref_qi_requantize((int32_t)((int64_t)s[i * stride] + bias), mult, shift,
                                        o->zp, o->lo, o->hi);
    if (o->y_signed)
      *(int8_t *)at = (int8_t)v;
    else
      *at = (unsigned char)v;
  }
}

/* ---- Operands -------------------------------------------------------------------------------- */

static int32_t ref_qi_load(odla_element_type t, const void *p, int64_t i) {
  return t == ODLA_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* dst[i * stride] = src[i] - zp for n uint8 or int8 values: the staged int16 operand. */
static void ref_qi_widen(odla_element_type t, const void *src, int64_t n, int32_t zp, int16_t *dst,
                         int64_t stride) {
  int64_t i;
  if (t == ODLA_INT8)
    for (i = 0; i < n; ++i)
      dst[i * stride] = (int16_t)(((const int8_t *)src)[i] - zp);
  else
    for (i = 0; i < n; ++i)
      dst[i * stride] = (int16_t)(((const uint8_t *)src)[i] - zp);
}

/* What both builders' parameter blocks start with. */
typedef struct {
  odla_element_type x_type, w_type, y_type;
  int32_t lo, hi;   /* output_min, output_max */
  int64_t channels; /* output channels: the epilogue's per-channel arrays */
  int packed;       /* the packed kernel follows the block, at packed_at; else wp_at */
  size_t packed_at;
  size_t chan_at, xs_at, wp_at, bytes; /* scratch: channel arrays, staged input, kernel */
} ref_qi_common;

/* Fills the epilogue from the node's operands: the channel arrays (3 x channels int32 at
 * `chan`), zero point and clamp. ODLA_INVALID_PARAM when a multiplier or shift computed in
 * the graph is out of range. */
static odla_status ref_qi_epilogue(const ref_node *node, const ref_io *io, const ref_qi_common *q,
                                   int32_t *chan, ref_qi_out *o) {
  const int64_t m = q->channels;
  const int64_t nm = ref_count(&node->inputs[REF_QI_MULT]->type.shape);
  const int64_t ns = ref_count(&node->inputs[REF_QI_SHIFT]->type.shape);
  const int32_t *bias = (const int32_t *)io->in[REF_QI_BIAS];
  const int32_t *mult = (const int32_t *)io->in[REF_QI_MULT];
  const int32_t *shift = (const int32_t *)io->in[REF_QI_SHIFT];
  int64_t c;
  for (c = 0; c < m; ++c) {
    chan[c] = bias ? bias[c] : 0;
    chan[m + c] = mult[nm == 1 ? 0 : c];
    chan[2 * m + c] = shift[ns == 1 ? 0 : c];
    if (!ref_qi_scale_ok(chan[m + c], chan[2 * m + c]))
      return ODLA_INVALID_PARAM;
  }
  o->bias = chan;
  o->mult = chan + m;
  o->shift = chan + 2 * m;
  o->zp = ref_qi_load(q->y_type, io->in[REF_QI_YZ], 0);
  o->lo = q->lo;
  o->hi = q->hi;
  o->y_signed = q->y_type == ODLA_INT8;
  return ODLA_SUCCESS;
}

/* The packed kernel: the parameter block's, or packed now into scratch by `pack`. */
typedef void (*ref_qi_pack_fn)(const void *params, const void *w, const void *wz,
                               int wz_per_channel, int16_t *dst);
static const int16_t *ref_qi_kernel(const ref_node *node, const ref_io *io, const ref_qi_common *q,
                                    ref_qi_pack_fn pack) {
  int16_t *wp;
  if (q->packed)
    return (const int16_t *)((const unsigned char *)node->params + q->packed_at);
  wp = (int16_t *)ref_scratch_at(io->scratch, q->wp_at);
  pack(node->params, io->in[REF_QI_W], io->in[REF_QI_WZ],
       io->in[REF_QI_WZ] && ref_count(&node->inputs[REF_QI_WZ]->type.shape) != 1, wp);
  return wp;
}

/* ---- The integer GEMM ------------------------------------------------------------------------ */

/* s[i * 4 + j] = sum over p < k of a_i[p] * b_j[p]: 16 dot products in one pass, each a
 * reduction the compiler vectorizes as int16 x int16 -> int32 multiply-adds. Products are at
 * most 255^2; the caller's bound on the sum of their magnitudes (the header: acc fits in
 * int32) keeps every partial sum in int32. */
static void ref_qi_tile(int64_t k, const int16_t *restrict a0, const int16_t *restrict a1,
                        const int16_t *restrict a2, const int16_t *restrict a3,
                        const int16_t *restrict b0, const int16_t *restrict b1,
                        const int16_t *restrict b2, const int16_t *restrict b3,
                        int32_t *restrict s) {
  int32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
  int32_t s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
  int64_t p;
  for (p = 0; p < k; ++p) {
    const int32_t x0 = a0[p], x1 = a1[p], x2 = a2[p], x3 = a3[p];
    const int32_t w0 = b0[p], w1 = b1[p], w2 = b2[p], w3 = b3[p];
    s00 += x0 * w0;
    s01 += x0 * w1;
    s02 += x0 * w2;
    s03 += x0 * w3;
    s10 += x1 * w0;
    s11 += x1 * w1;
    s12 += x1 * w2;
    s13 += x1 * w3;
    s20 += x2 * w0;
    s21 += x2 * w1;
    s22 += x2 * w2;
    s23 += x2 * w3;
    s30 += x3 * w0;
    s31 += x3 * w1;
    s32 += x3 * w2;
    s33 += x3 * w3;
  }
  s[0] = s00, s[1] = s01, s[2] = s02, s[3] = s03;
  s[4] = s10, s[5] = s11, s[6] = s12, s[7] = s13;
  s[8] = s20, s[9] = s21, s[10] = s22, s[11] = s23;
  s[12] = s30, s[13] = s31, s[14] = s32, s[15] = s33;
}

/* One product: rows x cols outputs over k. A is dense (a, lda) or, for a convolution that
 * is not pointwise, the im2col matrix of the staged image (win set): row = output pixel,
 * k = (kd, kh, kw, ci) over the group's cpg channels at `a` (an image row of x_channels). B is
 * cols rows of k values. */
typedef struct {
  int64_t rows, cols, k;
  const int16_t *a;
  int64_t lda;
  const ref_window *win;
  int64_t x_channels, cpg;
  const int16_t *b;
  ref_qi_out out;
  int64_t block; /* rows per im2col block (a multiple of REF_QI_TILE) */
  size_t col_at; /* the im2col block's offset in each thread's scratch */
} ref_qi_gemm;

/* Rows [first, first + n) of the im2col matrix into `col` (n x k). */
static void ref_qi_im2col(const ref_qi_gemm *g, int64_t first, int64_t n, int16_t *col) {
  const ref_window *w = g->win;
  const size_t run = (size_t)g->cpg * sizeof *col;
  int64_t pix, kd, kh, kw;
  for (pix = first; pix < first + n; ++pix) {
    const int64_t ow = pix % w->out[2], oh = pix / w->out[2] % w->out[1];
    const int64_t od = pix / (w->out[2] * w->out[1]);
    for (kd = 0; kd < w->k[0]; ++kd) {
      const int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];
      for (kh = 0; kh < w->k[1]; ++kh) {
        const int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];
        for (kw = 0; kw < w->k[2]; ++kw, col += g->cpg) {
          const int64_t iw = ow * w->stride[2] - w->pad[2] + kw * w->dil[2];
          if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1] || iw < 0 || iw >= w->in[2])
            memset(col, 0, run);
          else
            memcpy(col, g->a + ((id * w->in[1] + ih) * w->in[2] + iw) * g->x_channels, run);
        }
      }
    }
  }
}

/* Outputs of rows [r0, r0 + n), whose A rows are a (stride lda): tile by tile, a column quad
 * of B (in L1) against every row quad of the block. Edge tiles repeat their last row or
 * column and store only the real ones. */
static void ref_qi_rows(const ref_qi_gemm *g, int64_t r0, int64_t n, const int16_t *a,
                        int64_t lda) {
  const int64_t k = g->k;
  int32_t s[REF_QI_TILE * REF_QI_TILE];
  int64_t c0, i0, j;
  for (c0 = 0; c0 < g->cols; c0 += REF_QI_TILE) {
    const int64_t nc = ref_qi_min(REF_QI_TILE, g->cols - c0);
    const int16_t *b = g->b + c0 * k;
    const int16_t *b1 = b + ref_qi_min(1, nc - 1) * k, *b2 = b + ref_qi_min(2, nc - 1) * k;
    const int16_t *b3 = b + ref_qi_min(3, nc - 1) * k;
    for (i0 = 0; i0 < n; i0 += REF_QI_TILE) {
      const int64_t nr = ref_qi_min(REF_QI_TILE, n - i0);
      const int16_t *a0 = a + i0 * lda;
      ref_qi_tile(k, a0, a0 + ref_qi_min(1, nr - 1) * lda, a0 + ref_qi_min(2, nr - 1) * lda,
                  a0 + ref_qi_min(3, nr - 1) * lda, b, b1, b2, b3, s);
      for (j = 0; j < nc; ++j)
        ref_qi_store(&g->out, r0 + i0, nr, c0 + j, s + j, REF_QI_TILE);
    }
  }
}

/* Part `index` of `parts` of a product: its share of the rows, block by block. */
static void ref_qi_gemm_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qi_gemm *g = (const ref_qi_gemm *)arg;
  int16_t *col = g->win ? (int16_t *)ref_scratch_at(scratch, g->col_at) : NULL;
  int64_t lo, hi, r, n;
  ref_split(g->rows, REF_QI_TILE, index, parts, &lo, &hi);
  for (r = lo; r < hi; r += n) {
    n = ref_qi_min(g->block, hi - r);
    if (g->win) {
      ref_qi_im2col(g, r, n, col);
      ref_qi_rows(g, r, n, col, g->k);
    } else {
      ref_qi_rows(g, r, n, g->a + r * g->lda, g->lda);
    }
  }
}

/* How many parts a product of `macs` multiply-adds over `rows` rows splits into. */
static int ref_qi_parts(const ref_io *io, int64_t macs, int64_t rows) {
  const int64_t threads = ref_threads_count(ref_io_threads(io));
  const int64_t quads = (rows + REF_QI_TILE - 1) / REF_QI_TILE;
  if (macs < REF_QI_PARALLEL_MIN)
    return 1;
  return (int)(threads < quads ? threads : quads);
}

static void ref_qi_gemm_run(const ref_io *io, ref_qi_gemm *g) {
  const int parts = ref_qi_parts(io, g->rows * g->cols * g->k, g->rows);
  if (g->rows > 0 && g->cols > 0)
    ref_parallel(ref_io_threads(io), parts, ref_qi_gemm_part, g, (unsigned char *)io->scratch);
}

/* ---- Checks both builders share ------------------------------------------------------------ */

static int ref_qi_is_8bit(odla_element_type t) { return t == ODLA_UINT8 || t == ODLA_INT8; }

/* Presence, computation and element types of the operands, and the zero points' counts. */
static int ref_qi_check_types(const char *op, const odla_value *in) {
  static const int required[REF_QI_OPERANDS] = {1, 0, 1, 0, 0, 1, 1, 1};
  static const int quantized[2] = {REF_QI_X, REF_QI_W}; /* each followed by its zero point */
  char s1[128];
  int i;
  if (!ref_check_operands(op, 0, NULL))
    return 0;
  for (i = 0; i < REF_QI_OPERANDS; ++i) {
    if (in[i] && !ref_check_operands(op, 1, &in[i]))
      return 0;
    if (!in[i] && required[i]) {
      /* A NULL operand follows an earlier failure, which was reported; report only if not. */
      if (ref_current()->error == ODLA_SUCCESS)
        ref_fail(ODLA_INVALID_PARAM, op, "%s is NULL", ref_qi_names[i]);
      return 0;
    }
  }
  for (i = 0; i < 2; ++i) {
    const odla_value x = in[quantized[i]], zp = in[quantized[i] + 1];
    if (!ref_qi_is_8bit(x->type.element_type)) {
      ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "%s has element type %s; uint8 or int8 is required",
               ref_qi_names[quantized[i]], ref_type_name(x->type.element_type));
      return 0;
    }
    if (zp && zp->type.element_type != x->type.element_type) {
      ref_fail(ODLA_INVALID_PARAM, op, "%s has element type %s, the %s %s",
               ref_qi_names[quantized[i] + 1], ref_type_name(zp->type.element_type),
               ref_qi_names[quantized[i]], ref_type_name(x->type.element_type));
      return 0;
    }
  }
  if (in[REF_QI_XZ] && ref_count(&in[REF_QI_XZ]->type.shape) != 1) {
    ref_fail(ODLA_INVALID_PARAM, op, "input_zero_point %s must hold 1 element",
             ref_shape_str(&in[REF_QI_XZ]->type.shape, s1, sizeof s1));
    return 0;
  }
  if (!ref_qi_is_8bit(in[REF_QI_YZ]->type.element_type) ||
      ref_count(&in[REF_QI_YZ]->type.shape) != 1) {
    ref_fail(ODLA_INVALID_PARAM, op,
             "output_zero_point is %s %s; it must be one uint8 or int8 element (the output's type)",
             ref_type_name(in[REF_QI_YZ]->type.element_type),
             ref_shape_str(&in[REF_QI_YZ]->type.shape, s1, sizeof s1));
    return 0;
  }
  return 1;
}

/* Whether v holds one element or one per channel ([channels]). */
static int ref_qi_per_tensor_or_channel(odla_value v, int64_t channels) {
  const odla_value_shape *s = &v->type.shape;
  return ref_count(s) == 1 || (s->size == 1 && s->dims[0] == channels);
}

/* What depends on the output channels: the kernel zero point's, bias', multiplier's and
 * shift's shapes, constant multipliers and shifts, and the clamp. Fills q's types and clamp. */
static int ref_qi_check_channels(const char *op, const odla_value *in, int64_t channels,
                                 odla_int32 output_min, odla_int32 output_max, ref_qi_common *q) {
  const odla_value wz = in[REF_QI_WZ], bias = in[REF_QI_BIAS];
  const odla_element_type yt = in[REF_QI_YZ]->type.element_type;
  const int32_t type_lo = yt == ODLA_INT8 ? INT8_MIN : 0,
                type_hi = yt == ODLA_INT8 ? INT8_MAX : 255;
  char s1[128];
  int i;
  if (wz && !ref_qi_per_tensor_or_channel(wz, channels)) {
    ref_fail(ODLA_INVALID_PARAM, op,
             "kernel_zero_point %s must hold 1 element or %lld (one per output channel)",
             ref_shape_str(&wz->type.shape, s1, sizeof s1), (long long)channels);
    return 0;
  }
  if (bias && (bias->type.element_type != ODLA_INT32 || bias->type.shape.size != 1 ||
               bias->type.shape.dims[0] != channels)) {
    ref_fail(ODLA_INVALID_PARAM, op,
             "bias is %s %s; it must be int32 [%lld] (one per output "
             "channel)",
             ref_type_name(bias->type.element_type),
             ref_shape_str(&bias->type.shape, s1, sizeof s1), (long long)channels);
    return 0;
  }
  for (i = REF_QI_MULT; i <= REF_QI_SHIFT; ++i) {
    const odla_value v = in[i];
    int64_t e, n = ref_count(&v->type.shape);
    if (v->type.element_type != ODLA_INT32 || !ref_qi_per_tensor_or_channel(v, channels)) {
      ref_fail(ODLA_INVALID_PARAM, op,
               "%s is %s %s; it must be int32 with 1 element or %lld "
               "(one per output channel)",
               ref_qi_names[i], ref_type_name(v->type.element_type),
               ref_shape_str(&v->type.shape, s1, sizeof s1), (long long)channels);
      return 0;
    }
    for (e = 0; v->kind == REF_CONSTANT && v->data && e < n; ++e) {
      const int32_t x = ((const int32_t *)v->data)[e];
      if (i == REF_QI_MULT ? x < 0 : (x < 1 || x > 62)) {
        ref_fail(ODLA_INVALID_PARAM, op, "%s[%lld] is %ld; it must be in %s", ref_qi_names[i],
                 (long long)e, (long)x, i == REF_QI_MULT ? "[0, 2^31)" : "[1, 62]");
        return 0;
      }
    }
  }
  if (output_min < type_lo || output_max > type_hi || output_min > output_max) {
    ref_fail(ODLA_INVALID_PARAM, op,
             "output_min %ld and output_max %ld must satisfy %ld <= output_min <= output_max <= "
             "%ld (the output type %s)",
             (long)output_min, (long)output_max, (long)type_lo, (long)type_hi, ref_type_name(yt));
    return 0;
  }
  q->x_type = in[REF_QI_X]->type.element_type;
  q->w_type = in[REF_QI_W]->type.element_type;
  q->y_type = yt;
  q->lo = output_min;
  q->hi = output_max;
  q->channels = channels;
  return 1;
}

/* Whether the kernel can be packed in the builder: it and its zero point are constants. */
static int ref_qi_constant_kernel(const odla_value *in) {
  const odla_value w = in[REF_QI_W], wz = in[REF_QI_WZ];
  return w->kind == REF_CONSTANT && w->data && (!wz || (wz->kind == REF_CONSTANT && wz->data));
}

/* Adds the node. With a constant kernel (q->packed, ref_qi_constant_kernel), `params` (head bytes)
 * is followed in the node's block by the kernel packed by `pack` (packed_values int16), and the
 * node does not read the kernel and its zero point (a constants array cannot replace them: they
 * shaped the block). `q` is the common head of `params`. */
static odla_value ref_qi_add(const char *op, ref_kernel run, odla_value *in, void *params,
                             size_t head, ref_qi_common *q, int64_t packed_values,
                             ref_qi_pack_fn pack, odla_value_type out, odla_value_id id) {
  const size_t packed_at = (head + 15) / 16 * 16;
  const size_t bytes = packed_at + (size_t)packed_values * sizeof(int16_t);
  unsigned char *block;
  odla_value v;
  if (!q->packed)
    return ref_add_op(op, run, REF_QI_OPERANDS, in, out, id, params, head);
  q->packed_at = packed_at;
  block = (unsigned char *)calloc(1, bytes);
  if (!block)
    return ref_fail(ODLA_MEM_ERROR, op, "no memory for the packed kernel (%lu bytes)",
                    (unsigned long)bytes);
  memcpy(block, params, head);
  pack(params, in[REF_QI_W]->data, in[REF_QI_WZ] ? in[REF_QI_WZ]->data : NULL,
       in[REF_QI_WZ] && ref_count(&in[REF_QI_WZ]->type.shape) != 1, (int16_t *)(block + packed_at));
  in[REF_QI_W] = in[REF_QI_WZ] = NULL;
  v = ref_add_op(op, run, REF_QI_OPERANDS, in, out, id, block, bytes);
  free(block);
  return v;
}

/* ---- odla_ExtQLinearConv ------------------------------------------------------------------- */

typedef struct {
  ref_qi_common q;
  ref_window w;
  int64_t n, c, m, group, cpg, mpg;
  int64_t kg;            /* dot product length: kernel volume x cpg */
  int channels_last;     /* data [N, spatial..., C], kernel SIO; else [N, C, spatial...], OIS */
  int pointwise;         /* 1x1, stride 1, no padding: the staged input is the im2col matrix */
  int depthwise;         /* cpg == mpg == 1: the direct loop; kernel packed [kernel cell][M] */
  int64_t block;         /* im2col rows per block */
  size_t col_at, acc_at; /* scratch: im2col block (GEMM), channel sums (depthwise) */
} ref_qconv_params;

/* Packs the kernel as int16 w - wz[c]: channel c's kg values, (kernel cell, group input
 * channel) as the im2col rows order them, at c * kg; depthwise, cell t of channel c at
 * t * M + c. */
static void ref_qconv_pack(const void *params, const void *w, const void *wz, int wz_per_channel,
                           int16_t *dst) {
  const ref_qconv_params *p = (const ref_qconv_params *)params;
  const int64_t kvol = ref_window_k_count(&p->w);
  int64_t c, t, ci;
  for (c = 0; c < p->m; ++c) {
    const int32_t z = wz ? ref_qi_load(p->q.w_type, wz, wz_per_channel ? c : 0) : 0;
    for (t = 0; t < kvol; ++t)
      for (ci = 0; ci < p->cpg; ++ci) {
        const int64_t src =
            p->channels_last ? (t * p->cpg + ci) * p->m + c : (c * p->cpg + ci) * kvol + t;
        const int64_t at = p->depthwise ? t * p->m + c : c * p->kg + t * p->cpg + ci;
        dst[at] = (int16_t)(ref_qi_load(p->q.w_type, w, src) - z);
      }
  }
}

/* One image's depthwise convolution over the staged input, output pixels split in parts. */
typedef struct {
  const ref_qconv_params *p;
  const int16_t *xs, *wp;
  ref_qi_out out;
} ref_qconv_depthwise;

static void ref_qconv_depthwise_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_depthwise *d = (const ref_qconv_depthwise *)arg;
  const ref_qconv_params *p = d->p;
  const ref_window *w = &p->w;
  const int64_t ch = p->c;
  int32_t *acc = (int32_t *)ref_scratch_at(scratch, p->acc_at);
  int64_t lo, hi, pix, kd, kh, kw, c;
  ref_split(ref_window_out_count(w), 1, index, parts, &lo, &hi);
  for (pix = lo; pix < hi; ++pix) {
    const int64_t ow = pix % w->out[2], oh = pix / w->out[2] % w->out[1];
    const int64_t od = pix / (w->out[2] * w->out[1]);
    for (c = 0; c < ch; ++c)
      acc[c] = 0;
    for (kd = 0; kd < w->k[0]; ++kd) {
      const int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];
      if (id < 0 || id >= w->in[0])
        continue;
      for (kh = 0; kh < w->k[1]; ++kh) {
        const int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];
        if (ih < 0 || ih >= w->in[1])
          continue;
        for (kw = 0; kw < w->k[2]; ++kw) {
          const int64_t iw = ow * w->stride[2] - w->pad[2] + kw * w->dil[2];
          const int16_t *xp, *kp;
          if (iw < 0 || iw >= w->in[2])
            continue;
          xp = d->xs + ((id * w->in[1] + ih) * w->in[2] + iw) * ch;
          kp = d->wp + ((kd * w->k[1] + kh) * w->k[2] + kw) * ch;
          for (c = 0; c < ch; ++c)
            acc[c] += (int32_t)xp[c] * kp[c];
        }
      }
    }
    for (c = 0; c < ch; ++c)
      ref_qi_store(&d->out, pix, 1, c, acc + c, 0);
  }
}

/* Channels-first depthwise convolutions run along rows of pixels, as that layout stores
 * them: the staged input is x - xz as int16 in the input's own order [C][pixels], a row of
 * one channel's outputs sums in int32, then requantizes with one multiplier and shift
 * (ref_qi_store_run), which compilers vectorize (per-lane 64-bit shifts they do not). With
 * 9 terms a sum (MobileNetV2's 3x3 layers) the channels-last loop spent its time in the
 * one-output-at-a-time requantization (3.7 ms for MobileNetV2's first one, now 0.8). */

/* Requantizes the n sums s of output channel `col` into y[0..n). */
static void ref_qi_store_run(const ref_qi_out *o, int64_t col, const int32_t *restrict s, int64_t n,
                             unsigned char *restrict y) {
  const int32_t bias = o->bias[col], mult = o->mult[col], shift = o->shift[col];
  int64_t i;
  if (o->y_signed)
    for (i = 0; i < n; ++i)
      ((int8_t *)y)[i] = (int8_t)ref_qi_requantize((int32_t)((int64_t)s[i] + bias), mult, shift,
                                                   o->zp, o->lo, o->hi);
  else
    for (i = 0; i < n; ++i)
      y[i] = (unsigned char)ref_qi_requantize((int32_t)((int64_t)s[i] + bias), mult, shift, o->zp,
                                              o->lo, o->hi);
}

typedef struct {
  const ref_qconv_params *p;
  const int16_t *xs, *wp; /* staged image [C][in pixels]; packed kernel */
  ref_qi_out out;         /* out.y: the image's result [M][out pixels] */
} ref_qconv_cf;

/* Depthwise: one output row at a time, each kernel tap adding the input row segment it
 * reads in bounds (padding reads x_zero_point: nothing) to the row's sums (scratch at
 * acc_at, a row's width); the parts split the channels. Kernel tap t of channel c at
 * t * M + c. */
static void ref_qconv_depthwise_cf_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_cf *d = (const ref_qconv_cf *)arg;
  const ref_qconv_params *p = d->p;
  const ref_window *w = &p->w;
  const int64_t ow_n = w->out[2], sw = w->stride[2];
  int32_t *acc = (int32_t *)ref_scratch_at(scratch, p->acc_at);
  int64_t lo, hi, c, od, oh, kd, kh, kw, ow;
  ref_split(p->c, 1, index, parts, &lo, &hi);
  for (c = lo; c < hi; ++c)
    for (od = 0; od < w->out[0]; ++od)
      for (oh = 0; oh < w->out[1]; ++oh) {
        for (ow = 0; ow < ow_n; ++ow)
          acc[ow] = 0;
        for (kd = 0; kd < w->k[0]; ++kd) {
          const int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];
          if (id < 0 || id >= w->in[0])
            continue;
          for (kh = 0; kh < w->k[1]; ++kh) {
            const int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];
            const int16_t *xrow;
            if (ih < 0 || ih >= w->in[1])
              continue;
            xrow = d->xs + ((c * w->in[0] + id) * w->in[1] + ih) * w->in[2];
            for (kw = 0; kw < w->k[2]; ++kw) {
              /* iw = ow * sw + off within [0, in): ow in [first, last) */
              const int64_t off = kw * w->dil[2] - w->pad[2];
              const int64_t first = off >= 0 ? 0 : (-off + sw - 1) / sw;
              const int64_t last =
                  w->in[2] - off <= 0 ? 0 : ref_qi_min(ow_n, (w->in[2] - off - 1) / sw + 1);
              const int32_t k = d->wp[((kd * w->k[1] + kh) * w->k[2] + kw) * p->m + c];
              const int16_t *xs = xrow + off;
              if (sw == 1)
                for (ow = first; ow < last; ++ow)
                  acc[ow] += k * xs[ow];
              else
                for (ow = first; ow < last; ++ow)
                  acc[ow] += k * xs[ow * sw];
            }
          }
        }
        ref_qi_store_run(&d->out, c, acc, ow_n,
                         d->out.y + ((c * w->out[0] + od) * w->out[1] + oh) * ow_n);
      }
}

/* Staging one image's input (x - xz as int16): as it is, or transposed to channels-last a
 * block of pixels (in L1) at a time; the parts split the pixels. */
enum { REF_QI_STAGE_PARALLEL_MIN = 1 << 15 };

typedef struct {
  const ref_qconv_params *p;
  const unsigned char *x;
  int32_t xz;
  int16_t *xs;
  int transpose;
} ref_qconv_stage;

static void ref_qconv_stage_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_stage *st = (const ref_qconv_stage *)arg;
  const ref_qconv_params *p = st->p;
  const int64_t ipix = ref_window_in_count(&p->w);
  const size_t size = p->q.x_type == ODLA_INT8 ? sizeof(int8_t) : sizeof(uint8_t);
  int64_t lo, hi, p0, ci;
  (void)scratch;
  if (!st->transpose) {
    ref_split(ipix * p->c, 64, index, parts, &lo, &hi);
    ref_qi_widen(p->q.x_type, st->x + lo * size, hi - lo, st->xz, st->xs + lo, 1);
    return;
  }
  ref_split(ipix, REF_QI_STAGE_PIXELS, index, parts, &lo, &hi);
  for (p0 = lo; p0 < hi; p0 += REF_QI_STAGE_PIXELS)
    for (ci = 0; ci < p->c; ++ci)
      ref_qi_widen(p->q.x_type, st->x + (ci * ipix + p0) * size,
                   ref_qi_min(REF_QI_STAGE_PIXELS, hi - p0), st->xz, st->xs + p0 * p->c + ci, p->c);
}

static odla_status ref_qconv_run(const ref_node *node, const ref_io *io) {
  const ref_qconv_params *p = (const ref_qconv_params *)node->params;
  const int64_t ipix = ref_window_in_count(&p->w), opix = ref_window_out_count(&p->w);
  unsigned char *scratch = (unsigned char *)io->scratch;
  int16_t *xs = (int16_t *)ref_scratch_at(scratch, p->q.xs_at);
  const int32_t xz = io->in[REF_QI_XZ] ? ref_qi_load(p->q.x_type, io->in[REF_QI_XZ], 0) : 0;
  const unsigned char *x = (const unsigned char *)io->in[REF_QI_X];
  /* channels-first depthwise: ref_qconv_cf */
  const int direct = !p->channels_last && p->depthwise;
  const int16_t *wp;
  ref_qi_out out;
  int64_t n, g;
  odla_status s;
  if (p->n == 0 || p->m == 0)
    return ODLA_SUCCESS; /* no outputs (and perhaps no scratch) */
  s = ref_qi_epilogue(node, io, &p->q, (int32_t *)ref_scratch_at(scratch, p->q.chan_at), &out);
  if (s != ODLA_SUCCESS)
    return s;
  wp = ref_qi_kernel(node, io, &p->q, ref_qconv_pack);
  /* Output element (pixel, channel) of one image. */
  out.y_row = p->channels_last ? p->m : 1;
  out.y_col = p->channels_last ? 1 : opix;
  for (n = 0; n < p->n; ++n) {
    const unsigned char *xn = x + n * p->c * ipix;
    unsigned char *yn = (unsigned char *)io->out[0] + n * p->m * opix;
    {
      ref_qconv_stage st;
      st.p = p;
      st.x = xn;
      st.xz = xz;
      st.xs = xs;
      st.transpose = !p->channels_last && !direct;
      ref_parallel(ref_io_threads(io),
                   ipix * p->c < REF_QI_STAGE_PARALLEL_MIN ? 1
                                                           : ref_threads_count(ref_io_threads(io)),
                   ref_qconv_stage_part, &st, scratch);
    }
    if (direct) {
      ref_qconv_cf d;
      d.p = p;
      d.xs = xs;
      d.wp = wp;
      d.out = out;
      d.out.y = yn;
      ref_parallel(ref_io_threads(io),
                   ref_qi_parts(io, opix * p->m * ref_window_k_count(&p->w), p->c),
                   ref_qconv_depthwise_cf_part, &d, scratch);
      continue;
    }
    if (p->depthwise) {
      ref_qconv_depthwise d;
      d.p = p;
      d.xs = xs;
      d.wp = wp;
      d.out = out;
      d.out.y = yn;
      ref_parallel(ref_io_threads(io),
                   ref_qi_parts(io, opix * p->m * ref_window_k_count(&p->w), opix),
                   ref_qconv_depthwise_part, &d, scratch);
      continue;
    }
    for (g = 0; g < p->group; ++g) {
      ref_qi_gemm gm;
      gm.rows = opix;
      gm.cols = p->mpg;
      gm.k = p->kg;
      gm.a = xs + g * p->cpg;
      gm.lda = p->c;
      gm.win = p->pointwise ? NULL : &p->w;
      gm.x_channels = p->c;
      gm.cpg = p->cpg;
      gm.b = wp + g * p->mpg * p->kg;
      gm.out = out;
      gm.out.bias += g * p->mpg;
      gm.out.mult += g * p->mpg;
      gm.out.shift += g * p->mpg;
      gm.out.y = yn + g * p->mpg * out.y_col;
      gm.block = p->block;
      gm.col_at = p->col_at;
      ref_qi_gemm_run(io, &gm);
    }
  }
  return ODLA_SUCCESS;
}

/* Lays out a Conv node's scratch: channel arrays, staged image, kernel (unless packed by the
 * builder), im2col block or depthwise sums. */
static void ref_qconv_scratch(ref_qconv_params *p) {
  const int64_t opix = ref_window_out_count(&p->w);
  size_t at = 0;
  p->q.chan_at = at;
  at += ref_nn_align((size_t)(3 * p->m) * sizeof(int32_t));
  p->q.xs_at = at;
  at += ref_nn_align((size_t)(ref_window_in_count(&p->w) * p->c) * sizeof(int16_t));
  p->q.wp_at = at;
  if (!p->q.packed)
    at += ref_nn_align((size_t)(p->m * p->kg) * sizeof(int16_t));
  /* im2col blocks of whole tiles, at most REF_QI_COL_VALUES values (at least one tile) */
  p->block = p->kg > 0 ? REF_QI_COL_VALUES / p->kg / REF_QI_TILE * REF_QI_TILE : opix;
  p->block = p->block < REF_QI_TILE ? REF_QI_TILE : p->block;
  p->block = ref_qi_min(p->block, (opix + REF_QI_TILE - 1) / REF_QI_TILE * REF_QI_TILE);
  p->col_at = p->acc_at = at;
  if (p->depthwise) /* channel sums (channels last) or a row's sums (channels first) */
    at += ref_nn_align((size_t)(p->c > p->w.out[2] ? p->c : p->w.out[2]) * sizeof(int32_t));
  else if (!p->pointwise)
    at += ref_nn_align((size_t)(p->block * p->kg) * sizeof(int16_t));
  p->q.bytes = at;
}

/* odla_Conv's geometry and checks: channels-first data [N, C, spatial...] with an OIS kernel
 * [M, C / group, k...], or channels-last data [N, spatial..., C] with an SIO kernel
 * [k..., C / group, M]; 1 to 3 spatial axes, groups, strides, dilations, pads. The result,
 * in the data's layout, has output_zero_point's element type. */
odla_value odla_ExtQLinearConv(
    odla_value input, odla_value input_zero_point, odla_memory_layout input_layout,
    odla_uint32 group, odla_value kernel, odla_value kernel_zero_point,
    odla_memory_layout kernel_layout, const odla_uint32 *strides, const odla_uint32 *dilations,
    const odla_uint32 *paddings_front, const odla_uint32 *paddings_back, odla_value bias,
    odla_value multiplier, odla_value shift, odla_value output_zero_point, odla_int32 output_min,
    odla_int32 output_max, odla_value_shape output_dims, const odla_value_id value_id) {
  static const char *const op = "ExtQLinearConv";
  ref_qconv_params p;
  odla_value in[REF_QI_OPERANDS], v;
  odla_value_type out;
  odla_value_shape cf;
  const odla_value_shape *xs, *ws;
  int64_t kernel_dims[REF_SPATIAL], kc;
  int i, r, cl;
  char s1[128], s2[128];
  in[REF_QI_X] = input;
  in[REF_QI_XZ] = input_zero_point;
  in[REF_QI_W] = kernel;
  in[REF_QI_WZ] = kernel_zero_point;
  in[REF_QI_BIAS] = bias;
  in[REF_QI_MULT] = multiplier;
  in[REF_QI_SHIFT] = shift;
  in[REF_QI_YZ] = output_zero_point;
  if (!ref_qi_check_types(op, in))
    return NULL;
  cl = input_layout == ODLA_CHANNELS_LAST;
  if (!(input_layout == ODLA_CHANNELS_FIRST && kernel_layout == ODLA_OIS) &&
      !(cl && kernel_layout == ODLA_SIO))
    return ref_fail(ODLA_UNSUPPORTED_OP, op,
                    "channels-first data needs an OIS kernel, channels-last data an SIO kernel");
  xs = &input->type.shape;
  ws = &kernel->type.shape;
  r = xs->size;
  memset(&p, 0, sizeof p);
  if (r >= 3 && ws->size == r) {
    p.c = cl ? xs->dims[r - 1] : xs->dims[1];
    p.m = cl ? ws->dims[r - 1] : ws->dims[0];
  }
  kc = r >= 3 && ws->size == r ? ws->dims[cl ? r - 2 : 1] : 0;
  if (r < 3 || ws->size != r || group < 1 || !ref_product_is(kc, group, p.c) || p.m % group != 0)
    return cl ? ref_fail(ODLA_INVALID_PARAM, op,
                         "channels-last input %s, SIO kernel %s and group %u do not fit: input "
                         "channels (last dim) must be kernel dim %d times group, kernel dim %d a "
                         "multiple of group",
                         ref_shape_str(xs, s1, sizeof s1), ref_shape_str(ws, s2, sizeof s2), group,
                         r - 2, r - 1)
              : ref_fail(ODLA_INVALID_PARAM, op,
                         "input %s, kernel %s and group %u do not fit: input channels must be "
                         "kernel dim 1 times group, and kernel dim 0 a multiple of group",
                         ref_shape_str(xs, s1, sizeof s1), ref_shape_str(ws, s2, sizeof s2), group);
  for (i = 0; i < r - 2 && i < REF_SPATIAL; ++i)
    kernel_dims[i] = ws->dims[cl ? i : i + 2];
  cf = cl ? ref_cl_as_channels_first(xs) : *xs;
  if (!ref_make_window(op, &cf, kernel_dims, strides, dilations, paddings_front, paddings_back,
                       NULL, &p.w))
    return NULL;
  if (!ref_qi_check_channels(op, in, p.m, output_min, output_max, &p.q))
    return NULL;
  if (cl) {
    out.element_type = p.q.y_type;
    out.shape = *xs;
    out.shape.dims[r - 1] = p.m;
    ref_cl_out_dims(&p.w, r, &out.shape);
    if (ref_shape_conflicts(&output_dims, &out.shape))
      return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s differ from the computed %s",
                      ref_shape_str(&output_dims, s1, sizeof s1),
                      ref_shape_str(&out.shape, s2, sizeof s2));
    if (!ref_result_fits(op, &out))
      return NULL;
  } else if (!ref_window_result(op, xs, p.m, p.q.y_type, &p.w, &output_dims, &out)) {
    return NULL;
  }
  p.n = xs->dims[0];
  p.group = group;
  p.cpg = p.c / group;
  p.mpg = p.m / group;
  p.kg = p.cpg * ref_window_k_count(&p.w);
  p.channels_last = cl;
  p.depthwise = p.cpg == 1 && p.mpg == 1;
  p.pointwise = ref_window_k_count(&p.w) == 1;
  for (i = 0; i < REF_SPATIAL; ++i)
    p.pointwise &= p.w.stride[i] == 1 && p.w.pad[i] == 0 && p.w.pad_end[i] == 0;
  p.q.packed = ref_qi_constant_kernel(in);
  ref_qconv_scratch(&p);
  v = ref_qi_add(op, ref_qconv_run, in, &p, sizeof p, &p.q, p.m * p.kg, ref_qconv_pack, out,
                 value_id);
  if (v) {
    v->node->scratch_bytes = p.q.bytes;
    v->node->flops = ref_mul_sat(2 * p.n * p.m * ref_window_out_count(&p.w), p.kg);
  }
  return v;
}

/* ---- odla_ExtQLinearMatMul ----------------------------------------------------------------- */

typedef struct {
  ref_qi_common q;
  int64_t m, n, k;
  int64_t kernel_batches;                                 /* matrices in the kernel */
  int batch_rank;                                         /* >= 1 (a batch of 1 when none) */
  int64_t batch[ODLA_MAX_DIMENSION];                      /* output batch dims */
  int64_t sa[ODLA_MAX_DIMENSION], sb[ODLA_MAX_DIMENSION]; /* matrix strides, 0 = broadcast */
} ref_qmm_params;

/* Packs each kernel matrix [K, N] transposed as int16 w - wz[n]: column n's k values at
 * (batch * N + n) * K. */
static void ref_qmm_pack(const void *params, const void *w, const void *wz, int wz_per_channel,
                         int16_t *dst) {
  const ref_qmm_params *p = (const ref_qmm_params *)params;
  int64_t b, col, i;
  for (b = 0; b < p->kernel_batches; ++b)
    for (col = 0; col < p->n; ++col) {
      const int32_t z = wz ? ref_qi_load(p->q.w_type, wz, wz_per_channel ? col : 0) : 0;
      int16_t *d = dst + (b * p->n + col) * p->k;
      for (i = 0; i < p->k; ++i)
        d[i] = (int16_t)(ref_qi_load(p->q.w_type, w, (b * p->k + i) * p->n + col) - z);
    }
}

static odla_status ref_qmm_run(const ref_node *node, const ref_io *io) {
  const ref_qmm_params *p = (const ref_qmm_params *)node->params;
  unsigned char *scratch = (unsigned char *)io->scratch;
  int16_t *xs = (int16_t *)ref_scratch_at(scratch, p->q.xs_at);
  const int32_t xz = io->in[REF_QI_XZ] ? ref_qi_load(p->q.x_type, io->in[REF_QI_XZ], 0) : 0;
  const unsigned char *x = (const unsigned char *)io->in[REF_QI_X];
  unsigned char *y = (unsigned char *)io->out[0];
  int64_t idx[ODLA_MAX_DIMENSION] = {0}, oa = 0, ob = 0;
  const int16_t *wp;
  ref_qi_gemm gm;
  odla_status s;
  int d;
  if (ref_count(&node->outputs[0]->type.shape) == 0)
    return ODLA_SUCCESS;
  s = ref_qi_epilogue(node, io, &p->q, (int32_t *)ref_scratch_at(scratch, p->q.chan_at), &gm.out);
  if (s != ODLA_SUCCESS)
    return s;
  wp = ref_qi_kernel(node, io, &p->q, ref_qmm_pack);
  gm.rows = p->m;
  gm.cols = p->n;
  gm.k = p->k;
  gm.a = xs;
  gm.lda = p->k;
  gm.win = NULL;
  gm.block = (p->m + REF_QI_TILE - 1) / REF_QI_TILE * REF_QI_TILE;
  gm.out.y_row = p->n;
  gm.out.y_col = 1;
  for (;;) { /* the batches, as odla_BatchMatMul walks them */
    ref_qi_widen(p->q.x_type, x + oa * p->m * p->k, p->m * p->k, xz, xs, 1);
    gm.b = wp + ob * p->n * p->k;
    gm.out.y = y;
    ref_qi_gemm_run(io, &gm);
    y += p->m * p->n;
    for (d = p->batch_rank - 1; d >= 0; --d) {
      oa += p->sa[d];
      ob += p->sb[d];
      if (++idx[d] < p->batch[d])
        break;
      oa -= p->sa[d] * p->batch[d];
      ob -= p->sb[d] * p->batch[d];
      idx[d] = 0;
    }
    if (d < 0)
      return ODLA_SUCCESS;
  }
}

/* ONNX MatMul over rank >= 2 operands (odla_BatchMatMul's rule; odlac reshapes rank-1 ones):
 * input [..., M, K] times kernel [..., K, N], the batch axes broadcast numpy-style. The
 * output channel is the column. */
odla_value odla_ExtQLinearMatMul(odla_value input, odla_value input_zero_point, odla_value kernel,
                                 odla_value kernel_zero_point, odla_value bias,
                                 odla_value multiplier, odla_value shift,
                                 odla_value output_zero_point, odla_int32 output_min,
                                 odla_int32 output_max, odla_value_shape output_dims,
                                 const odla_value_id value_id) {
  static const char *const op = "ExtQLinearMatMul";
  ref_qmm_params p;
  odla_value in[REF_QI_OPERANDS], v;
  odla_value_type out;
  const odla_value_shape *as, *bs;
  int64_t stride_a = 1, stride_b = 1;
  size_t at = 0;
  int i;
  char s1[128], s2[128];
  in[REF_QI_X] = input;
  in[REF_QI_XZ] = input_zero_point;
  in[REF_QI_W] = kernel;
  in[REF_QI_WZ] = kernel_zero_point;
  in[REF_QI_BIAS] = bias;
  in[REF_QI_MULT] = multiplier;
  in[REF_QI_SHIFT] = shift;
  in[REF_QI_YZ] = output_zero_point;
  if (!ref_qi_check_types(op, in))
    return NULL;
  as = &input->type.shape;
  bs = &kernel->type.shape;
  if (as->size < 2 || bs->size < 2)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "input %s and kernel %s need rank >= 2 (reshape a vector to a matrix)",
                    ref_shape_str(as, s1, sizeof s1), ref_shape_str(bs, s2, sizeof s2));
  memset(&p, 0, sizeof p);
  p.m = as->dims[as->size - 2];
  p.k = as->dims[as->size - 1];
  p.n = bs->dims[bs->size - 1];
  if (bs->dims[bs->size - 2] != p.k)
    return ref_fail(ODLA_INVALID_PARAM, op, "inner dimensions of input %s and kernel %s differ",
                    ref_shape_str(as, s1, sizeof s1), ref_shape_str(bs, s2, sizeof s2));
  p.batch_rank = (as->size > bs->size ? as->size : bs->size) - 2;
  for (i = p.batch_rank - 1; i >= 0; --i) {
    int ia = i - (p.batch_rank - (as->size - 2)), ib = i - (p.batch_rank - (bs->size - 2));
    int64_t da = ia >= 0 ? as->dims[ia] : 1, db = ib >= 0 ? bs->dims[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return ref_fail(ODLA_INVALID_PARAM, op,
                      "batch dims of input %s and kernel %s do not "
                      "broadcast",
                      ref_shape_str(as, s1, sizeof s1), ref_shape_str(bs, s2, sizeof s2));
    p.batch[i] = da == 1 ? db : da;
    p.sa[i] = da == 1 ? 0 : stride_a;
    p.sb[i] = db == 1 ? 0 : stride_b;
    stride_a *= da;
    stride_b *= db;
  }
  p.kernel_batches = stride_b;
  if (!ref_qi_check_channels(op, in, p.n, output_min, output_max, &p.q))
    return NULL;
  out.element_type = p.q.y_type;
  out.shape.size = p.batch_rank + 2;
  for (i = 0; i < p.batch_rank; ++i)
    out.shape.dims[i] = p.batch[i];
  out.shape.dims[p.batch_rank] = p.m;
  out.shape.dims[p.batch_rank + 1] = p.n;
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  if (!ref_result_fits(op, &out))
    return NULL;
  if (p.batch_rank == 0) { /* keep the batch loop uniform: one batch of extent 1 */
    p.batch_rank = 1;
    p.batch[0] = 1;
  }
  p.q.packed = ref_qi_constant_kernel(in);
  p.q.chan_at = at;
  at += ref_nn_align((size_t)(3 * p.n) * sizeof(int32_t));
  p.q.xs_at = at;
  at += ref_nn_align((size_t)(p.m * p.k) * sizeof(int16_t));
  p.q.wp_at = at;
  if (!p.q.packed)
    at += ref_nn_align((size_t)(p.kernel_batches * p.n * p.k) * sizeof(int16_t));
  p.q.bytes = at;
  v = ref_qi_add(op, ref_qmm_run, in, &p, sizeof p, &p.q, p.kernel_batches * p.n * p.k,
                 ref_qmm_pack, out, value_id);
  if (v) {
    v->node->scratch_bytes = p.q.bytes;
    v->node->flops = ref_mul_sat(2 * p.m * p.n, p.k);
    for (i = 0; i < p.batch_rank; ++i)
      v->node->flops = ref_mul_sat(v->node->flops, p.batch[i]);
  }
  return v;
}
