/* ops_quant_int.c: the integer-only quantized products of odla_ext_quant.h in the reference
 * backend, odla_ExtQLinearConv and odla_ExtQLinearMatMul: uint8/int8 operands, int32
 * accumulation, exact fixed-point requantization and the fused clamp (the header's comment
 * "Integer-only quantized products" is the contract).
 *
 * Both run on the integer GEMM of qgemm.h, whose operands are int16 with their zero point
 * already subtracted (x - xz and w - wz[c] lie in [-255, 255]): a row operand P of k-pairs
 * and a column operand V of pair-interleaved panels. Which operand is which follows the
 * output's layout, so that a tile's outputs are contiguous and requantize together:
 * - channels-first convolution: P = the kernel (rows = output channels), V = the im2col
 *   matrix of a block of output pixels, built from the uint8/int8 input per block;
 * - channels-last convolution: P = im2col rows of the input staged as int16 (rows = pixels;
 *   a pointwise one reads the staged input itself), V = the kernel (columns = channels);
 * - MatMul: P = the input rows staged as int16, V = the kernel (columns = output columns).
 * The kernel operand is packed once: in the builder, into the node's parameter block, when it
 * and its zero point are constants, else into scratch when the node runs. A depthwise
 * convolution (one input and one output channel per group) runs a direct loop along the
 * channels (channels last) or along rows of pixels (channels first; ref_qconv_cf). Padding
 * contributes nothing: ONNX pads the quantized input with its zero point, whose x - xz is 0.
 *
 * In a least-memory computation a product whose kernel is a constant int8 tensor with zero
 * points 0 runs "lean" instead (ref_qi_lean): the kernel and the epilogue's operands are read
 * where they are, and the scratch is an im2col block of a few output pixels.
 *
 * Work splits over blocks of pixels or rows (or output channels, where a product has too
 * few) on the node's threads (threads.h); integer results are the same at any thread count.
 *
 * Multipliers and shifts that are constants are checked by the builders; ones computed in the
 * graph are checked as the node runs (ODLA_INVALID_PARAM), since a shift outside [1, 62]
 * cannot be computed. */
#include "ops_binary.h"
#include "ops_channels_last.h"
#include "qgemm.h"
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

/* im2col blocks hold at most this many values (in L2 beside the kernel rows that run over
 * them); a channels-last convolution's rows come in blocks of this many pixels at most. */
enum { REF_QI_COL_VALUES = 1 << 17, REF_QI_ROW_BLOCK = 64 * REF_QG_MR };
/* Products under this many multiply-adds stay on one thread (as ops_gemm.c's floats). A
 * depthwise convolution's multiply-add counts as REF_QI_DW_COST of them: without a register
 * tile it runs at a few GMAC/s (MobileNetV2's 14 x 14 x 384 layers, 0.7 M of them, took 0.2 ms
 * on one thread, about 15x a GEMM's time for as many). */
#define REF_QI_PARALLEL_MIN ((int64_t)1 << 21)
enum { REF_QI_DW_COST = 16 };
/* The most bytes of epilogue arrays a node's parameter block holds (ref_qi_add): 64 MiB, some
 * 2.4 million output channels. */
#define REF_QI_BUILT_CHANNELS_MAX ((size_t)1 << 26)

static int64_t ref_qi_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ref_qi_even(int64_t k) { return (k + 1) / 2 * 2; }
static int64_t ref_qi_round_up(int64_t n, int64_t unit) { return (n + unit - 1) / unit * unit; }

static int ref_qi_scale_ok(int32_t mult, int32_t shift) {
  return mult >= 0 && shift >= 1 && shift <= 62;
}

/* ---- Operands -------------------------------------------------------------------------------- */

static int32_t ref_qi_load(odla_element_type t, const void *p, int64_t i) {
  return t == ODLA_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* dst[i * stride] = src[i * step] - zp for n uint8 or int8 values: the staged int16 operand. */
static void ref_qi_widen(odla_element_type t, const void *src, int64_t step, int64_t n, int32_t zp,
                         int16_t *dst, int64_t stride) {
  int64_t i;
  if (step == 1 && stride == 1) /* the common case */
    ref_qg_widen((const unsigned char *)src, n, t == ODLA_INT8, zp, dst);
  else if (t == ODLA_INT8)
    for (i = 0; i < n; ++i)
      dst[i * stride] = (int16_t)(((const int8_t *)src)[i * step] - zp);
  else
    for (i = 0; i < n; ++i)
      dst[i * stride] = (int16_t)(((const uint8_t *)src)[i * step] - zp);
}

/* dst[i] = src[i] ^ flip for n bytes (int8 data staged as unsigned: flip 0x80), 8 a step from
 * the source (flipping dst after a memcpy into it stalls on store forwarding). */
static void ref_qi_flip_copy(unsigned char *dst, const unsigned char *src, int64_t n,
                             unsigned char flip) {
  const uint64_t flip8 = flip * (uint64_t)0x0101010101010101u;
  int64_t i = 0;
  if (!flip) {
    memcpy(dst, src, (size_t)n);
    return;
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    memcpy(&v, src + i, 8);
    v ^= flip8;
    memcpy(dst + i, &v, 8);
  }
  for (; i < n; ++i)
    dst[i] = (unsigned char)(src[i] ^ flip);
}

/* What both builders' parameter blocks start with. */
typedef struct {
  odla_element_type x_type, w_type, y_type;
  int raw;          /* no requantization: int32 results */
  int32_t lo, hi;   /* output_min, output_max */
  int64_t channels; /* output channels: the epilogue's per-channel arrays */
  int packed;       /* the packed kernel follows the block, at packed_at; else wp_at */
  int lean;         /* kernel and epilogue read in place (ref_qi_lean) */
  int lean_known, lean_sum_bits, lean_fast; /* ref_qi_lean_know */
  size_t packed_at;
  /* the epilogue's operands are constants: its channel arrays follow the block, at
     epilogue_at (else at chan_at in scratch, filled by each run), its zero point and
     ref_qg_prepare's verdict are here */
  int epilogue_built, fast;
  int32_t zp;
  size_t epilogue_at;
  size_t chan_at, xs_at, wp_at, bytes; /* scratch: channel arrays, staged input, kernel */
  /* lean convolutions whose kernel's last row ends inside its last group of 4 depths: that
     row and the one before, then zeros to the last row's group's end, follow the block at
     tail_at (0: none), so that the last pair of rows reads whole groups too
     (ref_qconv_lean_part) */
  size_t tail_at;
  /* the 8-bit product (ref_qg8, ref_qi_u8s8) of a packed kernel: bytes to a depth of kq, the
     kernel's sums (int32, for sub) at sums_at bytes into the packed kernel; scratch at sub_at:
     sub. kq and sub_at are set for every packed kernel, so that the scratch is the same size
     whatever the CPU takes */
  int u8s8;
  int64_t kq;
  size_t sums_at, sub_at;
} ref_qi_common;

/* Bytes of the epilogue's channel arrays: float64 scales, then bias, multiplier, shift and
 * ref_qg_prepare's range, int32. */
static size_t ref_qi_chan_bytes(int64_t channels) {
  return ref_nn_align((size_t)channels * (sizeof(double) + 5 * sizeof(int32_t)));
}

/* Points o at the channel arrays at chan. */
static void ref_qi_out_at(const ref_qi_common *q, const void *chan, int32_t zp, int fast,
                          ref_qg_out *o) {
  const int64_t m = q->channels;
  const int32_t *ints = (const int32_t *)((const double *)chan + m);
  memset(o, 0, sizeof *o);
  o->bias = ints;
  o->mult = ints + m;
  o->shift = ints + 2 * m;
  o->smin = ints + 3 * m;
  o->smax = ints + 4 * m;
  o->scale = (const double *)chan;
  o->fast = fast;
  o->zp = zp;
  o->lo = q->lo;
  o->hi = q->hi;
  o->y_signed = q->y_type == ODLA_INT8;
  o->raw = q->raw;
}

/* Fills the channel arrays at chan from the bias (or none), multipliers and shifts (nm and ns
 * of them: 1 or one per channel) and the output zero point; *fast is ref_qg_prepare's verdict.
 * 0 when a multiplier or shift is out of range. */
static int ref_qi_fill_channels(const ref_qi_common *q, const int32_t *bias, const int32_t *mult,
                                int64_t nm, const int32_t *shift, int64_t ns, int32_t zp,
                                void *chan, int *fast) {
  const int64_t m = q->channels;
  double *scale = (double *)chan;
  int32_t *ints = (int32_t *)(scale + m);
  int64_t c;
  for (c = 0; c < m; ++c) {
    ints[c] = bias ? bias[c] : 0;
    ints[m + c] = mult ? mult[nm == 1 ? 0 : c] : 0;
    ints[2 * m + c] = shift ? shift[ns == 1 ? 0 : c] : 1;
    if (!ref_qi_scale_ok(ints[m + c], ints[2 * m + c]))
      return 0;
  }
  *fast = !q->raw && ref_qg_prepare(m, ints + m, ints + 2 * m, zp, q->lo, q->hi, scale,
                                    ints + 3 * m, ints + 4 * m);
  return 1;
}

/* The epilogue of a run: the block's, or filled now from the node's operands into the scratch
 * at `chan`. ODLA_INVALID_PARAM when a multiplier or shift computed in the graph is out of
 * range. */
static odla_status ref_qi_epilogue(const ref_node *node, const ref_io *io, const ref_qi_common *q,
                                   void *chan, ref_qg_out *o) {
  int32_t zp;
  int fast;
  if (q->epilogue_built) {
    ref_qi_out_at(q, (const unsigned char *)node->params + q->epilogue_at, q->zp, q->fast, o);
    return ODLA_SUCCESS;
  }
  zp = q->raw ? 0 : ref_qi_load(q->y_type, io->in[REF_QI_YZ], 0);
  if (!ref_qi_fill_channels(
          q, (const int32_t *)io->in[REF_QI_BIAS], (const int32_t *)io->in[REF_QI_MULT],
          q->raw ? 1 : ref_count(&node->inputs[REF_QI_MULT]->type.shape),
          (const int32_t *)io->in[REF_QI_SHIFT],
          q->raw ? 1 : ref_count(&node->inputs[REF_QI_SHIFT]->type.shape), zp, chan, &fast))
    return ODLA_INVALID_PARAM;
  ref_qi_out_at(q, chan, zp, fast, o);
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

/* ---- Splitting a product over threads ------------------------------------------------------ */

/* How many parts a product of `macs` multiply-adds splits into, at most `units`. */
static int ref_qi_parts(const ref_io *io, int64_t macs, int64_t units) {
  const int64_t threads = ref_threads_count(ref_io_threads(io));
  if (macs < REF_QI_PARALLEL_MIN || units < 1)
    return 1;
  return (int)(threads < units ? threads : units);
}

/* A product whose operands are both ready: its rows split over the parts when there are
 * enough of them, else its columns. */
typedef struct {
  ref_qg g;
  int64_t rows, cols;
  const ref_qg8 *g8; /* the 8-bit product's operands instead of g's (g.kp its depth) */
} ref_qi_job;

static int64_t ref_qi_job_row_units(const ref_qi_job *j) {
  return (j->rows + REF_QG_MR - 1) / REF_QG_MR;
}
static int64_t ref_qi_job_col_units(const ref_qi_job *j) {
  return (j->cols + REF_QG_NR - 1) / REF_QG_NR;
}
static int ref_qi_job_by_rows(const ref_qi_job *j, int parts) {
  const int64_t r = ref_qi_job_row_units(j);
  return r >= (int64_t)parts * 4 || r >= ref_qi_job_col_units(j);
}

static void ref_qi_job_tiles(const ref_qi_job *j, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
#if REF_X86_TARGETS /* the 8-bit product's only CPUs */
  if (j->g8) {
    ref_qg8_run(j->g8, r0, r1, c0, c1);
    return;
  }
#endif
  ref_qg_run(&j->g, r0, r1, c0, c1);
}

static void ref_qi_job_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qi_job *j = (const ref_qi_job *)arg;
  int64_t lo, hi;
  (void)scratch;
  if (ref_qi_job_by_rows(j, parts)) {
    ref_split(j->rows, REF_QG_MR, index, parts, &lo, &hi);
    ref_qi_job_tiles(j, lo, hi, 0, j->cols);
  } else {
    ref_split(j->cols, REF_QG_NR, index, parts, &lo, &hi);
    ref_qi_job_tiles(j, 0, j->rows, lo, hi);
  }
}

static void ref_qi_job_run(const ref_io *io, ref_qi_job *j) {
  const int64_t r = ref_qi_job_row_units(j), c = ref_qi_job_col_units(j);
  const int64_t units = r > c ? r : c;
  if (j->rows > 0 && j->cols > 0)
    ref_parallel(ref_io_threads(io), ref_qi_parts(io, j->rows * j->cols * j->g.kp, units),
                 ref_qi_job_part, j, (unsigned char *)io->scratch);
}

/* ---- Checks both builders share ------------------------------------------------------------ */

static int ref_qi_is_8bit(odla_element_type t) { return t == ODLA_UINT8 || t == ODLA_INT8; }

/* Whether the product has no requantization (multiplier, shift and output zero point all
 * NULL): its result is the int32 accumulator. */
static int ref_qi_raw(const odla_value *in) {
  return !in[REF_QI_MULT] && !in[REF_QI_SHIFT] && !in[REF_QI_YZ];
}

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
      if (ref_current()->error != ODLA_SUCCESS)
        return 0;
      if (i >= REF_QI_MULT && ref_qi_raw(in))
        continue; /* no requantization */
      ref_fail(ODLA_INVALID_PARAM, op,
               i >= REF_QI_MULT ? "%s is NULL; multiplier, shift and output_zero_point are given "
                                  "together, or none of them (an int32 result)"
                                : "%s is NULL",
               ref_qi_names[i]);
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
  if (in[REF_QI_YZ] && (!ref_qi_is_8bit(in[REF_QI_YZ]->type.element_type) ||
                        ref_count(&in[REF_QI_YZ]->type.shape) != 1)) {
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
  const int raw = ref_qi_raw(in);
  const odla_element_type yt = raw ? ODLA_INT32 : in[REF_QI_YZ]->type.element_type;
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
  for (i = REF_QI_MULT; i <= REF_QI_SHIFT && !raw; ++i) {
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
  if (!raw && (output_min < type_lo || output_max > type_hi || output_min > output_max)) {
    ref_fail(ODLA_INVALID_PARAM, op,
             "output_min %ld and output_max %ld must satisfy %ld <= output_min <= output_max <= "
             "%ld (the output type %s)",
             (long)output_min, (long)output_max, (long)type_lo, (long)type_hi, ref_type_name(yt));
    return 0;
  }
  q->raw = raw;
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

/* Whether v is absent or a constant with its data. */
static int ref_qi_constant_or_absent(odla_value v) {
  return !v || (v->kind == REF_CONSTANT && v->data);
}

/* Whether a packed kernel's product runs on 8-bit data (ref_qg8): a constant int8 kernel whose
 * zero points are all 0 (ONNX Runtime's symmetric weights), on a CPU with the 8-bit kernels. */
static int ref_qi_u8s8(const odla_value *in) {
#if REF_X86_TARGETS
  const odla_value w = in[REF_QI_W], wz = in[REF_QI_WZ];
  int64_t i, n;
  if (!ref_qg8_available() || w->type.element_type != ODLA_INT8 || !ref_qi_constant_kernel(in))
    return 0;
  n = wz ? ref_count(&wz->type.shape) : 0;
  for (i = 0; i < n; ++i)
    if (ref_qi_load(wz->type.element_type, wz->data, i) != 0)
      return 0;
  return 1;
#else /* the 8-bit kernels are x86's: other targets do not link this path */
  (void)in;
  return 0;
#endif
}

/* The int16 values a packed kernel's room takes: the larger of the int16 form's (`values`) and
 * the 8-bit form's (sums_at bytes, then `sums` int32 sums), whatever this CPU takes, so that the
 * parameters' size is the same on every machine (odlac measures a --no-heap model's structures
 * on the host for its target). */
static int64_t ref_qi_packed_room(int64_t values, size_t sums_at, int64_t sums) {
  const int64_t bytes8 = (int64_t)sums_at + sums * 4;
  return values > (bytes8 + 1) / 2 ? values : (bytes8 + 1) / 2;
}

/* ---- Lean products -------------------------------------------------------------------------- */

/* In a least-memory computation (ODLA_EXT_ITEM_LEAST_MEMORY: a microcontroller's), a product
 * whose kernel is a constant int8 tensor with zero points 0 (symmetric weights: odlac's
 * --quantize=int8 and ONNX Runtime's per-channel ones) reads the kernel, bias, multipliers
 * and shifts where they are (const, in flash with --weights-section) instead of copying them
 * into the node's block as int16 and channel arrays, and its scratch is a lean block of
 * im2col columns (qgemm.h), a staged row or a depthwise convolution's plane: RAM holds little
 * more than the activations. A channels-first convolution multiplies each kernel row by the
 * columns of 4 output pixels at a time (ref_qg_lean_dots), a depthwise one runs along output
 * rows, a MatMul a row at a time (ref_qg_lean_row). Channels-last convolutions and other kernels
 * (uint8, a nonzero zero point, computed) are packed as elsewhere. */
static int ref_qi_lean_kernel(const odla_value *in) {
  const odla_value w = in[REF_QI_W], wz = in[REF_QI_WZ];
  int64_t i, n;
  if (!ref_current()->least_memory || w->type.element_type != ODLA_INT8 ||
      !ref_qi_constant_kernel(in))
    return 0;
  for (i = 0, n = wz ? ref_count(&wz->type.shape) : 0; i < n; ++i)
    if (((const int8_t *)wz->data)[i] != 0)
      return 0;
  return 1;
}

/* o from the operands `in` (their values) at `data`, for sums of `depth` products of an int8
 * kernel value and an input value less its zero point (|w| <= 128, |x - xz| <= 255:
 * o->sum_bits). ODLA_INVALID_PARAM when a multiplier or shift computed in the graph is out of
 * range (constant ones the builder checked). */
static odla_status ref_qi_lean_out_of(const odla_value *in, const void *const *data,
                                      const ref_qi_common *q, int64_t depth, ref_qg_lean_out *o) {
  int64_t c, bound = 0;
  memset(o, 0, sizeof *o);
  o->bias = (const int32_t *)data[REF_QI_BIAS];
  o->raw = q->raw;
  if (q->raw)
    return ODLA_SUCCESS;
  o->mult = (const int32_t *)data[REF_QI_MULT];
  o->shift = (const int32_t *)data[REF_QI_SHIFT];
  o->mult_step = ref_count(&in[REF_QI_MULT]->type.shape) != 1;
  o->shift_step = ref_count(&in[REF_QI_SHIFT]->type.shape) != 1;
  o->zp = ref_qi_load(q->y_type, data[REF_QI_YZ], 0);
  o->lo = q->lo;
  o->hi = q->hi;
  if (q->lean_known) { /* constants: ref_qi_lean_know computed the rest when the node was built */
    o->sum_bits = q->lean_sum_bits;
    o->fast = q->lean_fast;
    return ODLA_SUCCESS;
  }
  for (c = 0; c < q->channels; ++c) {
    const int64_t b = o->bias ? (int64_t)o->bias[c] : 0;
    if (!ref_qi_scale_ok(o->mult[c * o->mult_step], o->shift[c * o->shift_step]))
      return ODLA_INVALID_PARAM;
    bound = b < -bound ? -b : b > bound ? b : bound;
  }
  bound += depth * 128 * 255; /* depth < 2^31 / (128 * 255): the builder bounded the sums */
  while (o->sum_bits < 32 && bound >= (int64_t)1 << o->sum_bits)
    ++o->sum_bits;
  o->fast = ref_qg_lean_fast_all(o, q->channels);
  return ODLA_SUCCESS;
}

/* A lean node's epilogue for one run. */
static odla_status ref_qi_lean_epilogue(const ref_node *node, const ref_io *io,
                                        const ref_qi_common *q, int64_t depth, ref_qg_lean_out *o) {
  return ref_qi_lean_out_of(node->inputs, io->in, q, depth, o);
}

/* When the epilogue's operands are constants (the builder checked their values), q keeps what
 * ref_qi_lean_out_of computes from them, so that runs do not loop over the channels again. */
static void ref_qi_lean_know(const odla_value *in, ref_qi_common *q, int64_t depth) {
  const void *data[REF_QI_OPERANDS] = {NULL};
  ref_qg_lean_out o;
  int i;
  q->lean_known = 0;
  for (i = REF_QI_BIAS; i < REF_QI_OPERANDS; ++i) {
    if (in[i] && !(in[i]->kind == REF_CONSTANT && in[i]->data))
      return;
    data[i] = in[i] ? in[i]->data : NULL;
  }
  if (!q->lean || ref_qi_lean_out_of(in, data, q, depth, &o) != ODLA_SUCCESS)
    return;
  q->lean_sum_bits = o.sum_bits;
  q->lean_fast = o.fast;
  q->lean_known = 1;
}

static size_t ref_qi_lean_esize(const ref_qg_lean_out *o) { return o->raw ? 4 : 1; }

/* Adds the node. `params` (head bytes, whose common head is `q`) is followed in the node's
 * block by the kernel packed by `pack` (packed_values int16) when the kernel is constant
 * (q->packed, ref_qi_constant_kernel), and by the epilogue's channel arrays when its operands
 * are (bias, multiplier, shift and output zero point); the node then does not read those
 * operands (a constants array cannot replace them: they shaped the block). */
static odla_value ref_qi_add(const char *op, ref_kernel run, odla_value *in, void *params,
                             size_t head, ref_qi_common *q, int64_t packed_values,
                             ref_qi_pack_fn pack, odla_value_type out, odla_value_id id,
                             const void *tail, size_t tail_bytes) {
  const size_t packed_at = (head + 15) / 16 * 16;
  const size_t chan_at =
      q->packed ? (packed_at + (size_t)packed_values * sizeof(int16_t) + 15) / 16 * 16 : packed_at;
  /* Built into the block when its operands are constants (all absent: raw) and its arrays
   * are at most REF_QI_BUILT_CHANNELS_MAX bytes: a stored file may declare any number of
   * channels with one per-tensor constant, and loading must not allocate and fill arrays for
   * them (2^31 channels, 56 GiB). Above that the run fills them in the scratch, planned with the
   * arena at the first execution, as for operands computed in the graph. */
  const int built =
      ref_qi_constant_or_absent(in[REF_QI_BIAS]) && ref_qi_constant_or_absent(in[REF_QI_MULT]) &&
      ref_qi_constant_or_absent(in[REF_QI_SHIFT]) && ref_qi_constant_or_absent(in[REF_QI_YZ]) &&
      ref_qi_chan_bytes(q->channels) <= REF_QI_BUILT_CHANNELS_MAX;
  const size_t bytes = built ? chan_at + ref_qi_chan_bytes(q->channels) : chan_at;
  unsigned char *block;
  odla_value v;
  if (q->lean && tail_bytes) { /* the lean tail (ref_qi_common.tail_at) after the block */
    q->tail_at = packed_at;
    block = (unsigned char *)ref_calloc(1, packed_at + tail_bytes);
    if (!block)
      return ref_fail(ODLA_MEM_ERROR, op, "no memory for the node's parameters (%lu bytes)",
                      (unsigned long)(packed_at + tail_bytes));
    memcpy(block, params, head);
    memcpy(block + packed_at, tail, tail_bytes);
    v = ref_add_sealed_op(op, run, REF_QI_OPERANDS, in, out, id, block, packed_at + tail_bytes);
    ref_free(block);
    return v;
  }
  if (q->lean || (!q->packed && !built))
    return ref_add_sealed_op(op, run, REF_QI_OPERANDS, in, out, id, params, head);
  block = (unsigned char *)ref_calloc(1, bytes);
  if (!block)
    return ref_fail(ODLA_MEM_ERROR, op, "no memory for the node's parameters (%lu bytes)",
                    (unsigned long)bytes);
  if (q->packed) {
    q->packed_at = packed_at;
    pack(params, in[REF_QI_W]->data, in[REF_QI_WZ] ? in[REF_QI_WZ]->data : NULL,
         in[REF_QI_WZ] && ref_count(&in[REF_QI_WZ]->type.shape) != 1,
         (int16_t *)(block + packed_at));
    in[REF_QI_W] = in[REF_QI_WZ] = NULL;
  }
  if (built) { /* the builder checked the multipliers and shifts */
    q->epilogue_built = 1;
    q->epilogue_at = chan_at;
    q->zp = q->raw ? 0 : ref_qi_load(q->y_type, in[REF_QI_YZ]->data, 0);
    ref_qi_fill_channels(q, in[REF_QI_BIAS] ? (const int32_t *)in[REF_QI_BIAS]->data : NULL,
                         q->raw ? NULL : (const int32_t *)in[REF_QI_MULT]->data,
                         q->raw ? 1 : ref_count(&in[REF_QI_MULT]->type.shape),
                         q->raw ? NULL : (const int32_t *)in[REF_QI_SHIFT]->data,
                         q->raw ? 1 : ref_count(&in[REF_QI_SHIFT]->type.shape), q->zp,
                         block + chan_at, &q->fast);
    in[REF_QI_BIAS] = in[REF_QI_MULT] = in[REF_QI_SHIFT] = in[REF_QI_YZ] = NULL;
  }
  memcpy(block, params, head); /* after q's changes: q is its head */
  v = ref_add_sealed_op(op, run, REF_QI_OPERANDS, in, out, id, block, bytes);
  ref_free(block);
  return v;
}

/* ---- odla_ExtQLinearConv ------------------------------------------------------------------- */

/* The deepest kernel whose lean tail (ref_qi_common.tail_at) is kept, two rows of it in the
 * builder's stack: a first layer's (3 x 3 x 3 is 27). */
enum { REF_QI_LEAN_TAIL_DEPTH = 64 };

typedef struct {
  ref_qi_common q;
  ref_window w;
  int64_t n, c, m, group, cpg, mpg;
  int64_t kg, kp;        /* dot product length: kernel volume x cpg; kp: kg rounded up to even */
  int channels_last;     /* data [N, spatial..., C], kernel SIO; else [N, C, spatial...], OIS */
  int unit_window;       /* 1x1, stride 1, no padding: an im2col row is a run of an input channel */
  int pointwise;         /* that, channels last, cpg even: P is the staged input */
  int depthwise;         /* cpg == mpg == 1: the direct loop; kernel packed [kernel cell][M] */
  int64_t block;         /* output pixels per im2col block */
  int64_t packed_values; /* int16 values of the packed kernel */
  int taps8;             /* depthwise, packed, every tap less its zero point an int8 */
  /* scratch: im2col block, its two rows and its runs (channels first), or sums (depthwise); a
     channels-first depthwise convolution's padded plane and kernel taps */
  size_t col_at, rows_at, runs_at, acc_at, plane_at, taps_at;
} ref_qconv_params;

/* Packs the kernel as int16 w - wz[c]. Channels first, P: channel c's row at c * kp, in the
 * im2col order (group input channel, kernel cell). Channels last, V: group g's columns
 * (its output channels) from g * ref_qg_v_count(kp, mpg), depth in the order (kernel cell,
 * group input channel). Depthwise: cell t of channel c at t * M + c. Pads are zero. */
static void ref_qconv_pack(const void *params, const void *w, const void *wz, int wz_per_channel,
                           int16_t *dst) {
  const ref_qconv_params *p = (const ref_qconv_params *)params;
  const int64_t kvol = ref_window_k_count(&p->w), vcount = ref_qg_v_count(p->kp, p->mpg);
  int64_t c, t, ci;
  memset(dst, 0, (size_t)p->packed_values * sizeof *dst);
  for (c = 0; c < p->m; ++c) {
    const int32_t z = wz ? ref_qi_load(p->q.w_type, wz, wz_per_channel ? c : 0) : 0;
    for (t = 0; t < kvol; ++t)
      for (ci = 0; ci < p->cpg; ++ci) {
        int64_t src, at;
        if (p->channels_last) {
          src = (t * p->cpg + ci) * p->m + c;
          at = p->depthwise ? t * p->m + c
                            : c / p->mpg * vcount + ref_qg_v_at(p->kp, t * p->cpg + ci, c % p->mpg);
        } else {
          src = (c * p->cpg + ci) * kvol + t;
          at = p->depthwise ? t * p->m + c : c * p->kp + ci * kvol + t;
        }
        dst[at] = (int16_t)(ref_qi_load(p->q.w_type, w, src) - z);
      }
  }
}

#if REF_X86_TARGETS
/* The 8-bit product's kernel (channels first, q.u8s8): channel c's row of int8 at c * kq bytes in
 * ref_qconv_pack's order, the pads zero, then the rows' sums at q.sums_at bytes in. */
static void ref_qconv_pack8(const void *params, const void *w, const void *wz, int wz_per_channel,
                            int16_t *dst) {
  const ref_qconv_params *p = (const ref_qconv_params *)params;
  unsigned char *d = (unsigned char *)dst;
  int32_t *sums = (int32_t *)(void *)(d + p->q.sums_at);
  int64_t c, i;
  (void)wz; /* all 0 (ref_qi_u8s8) */
  (void)wz_per_channel;
  memset(d, 0, p->q.sums_at);
  for (c = 0; c < p->m; ++c) {
    int32_t sum = 0;
    for (i = 0; i < p->kg; ++i) {
      const int8_t v = ((const int8_t *)w)[c * p->kg + i];
      d[c * p->q.kq + i] = (unsigned char)v;
      sum += v;
    }
    sums[c] = sum;
  }
}
#define REF_QCONV_PACK(u8s8) ((u8s8) ? ref_qconv_pack8 : ref_qconv_pack)
#else
#define REF_QCONV_PACK(u8s8) ref_qconv_pack
#endif

/* One image's depthwise convolution over the staged input, output pixels split in parts. */
typedef struct {
  const ref_qconv_params *p;
  const int16_t *xs, *wp;
  ref_qg_out out;
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
    ref_qg_requantize_channels(&d->out, acc, ch, ref_qg_y(&d->out, pix * d->out.y_row));
  }
}

/* Channels-first depthwise convolutions run along rows of output pixels, as that layout
 * stores them: each channel's input is staged as int16 x - xz into a plane padded with the
 * convolution's zeros (scratch at plane_at, whose pads are zeroed once per part), so that
 * every kernel row reads a whole padded input row; ref_qg_depthwise_row sums an output row
 * over all taps in registers (AVX2: pairs of taps as int16 multiply-adds) and
 * ref_qg_requantize_run requantizes the channel's plane with its multiplier and shift. The
 * parts split the channels. */

typedef struct {
  const ref_qconv_params *p;
  const unsigned char *x; /* the image [C][in pixels] */
  int32_t xz;
  const int16_t *wp; /* packed kernel: tap t of channel c at t * M + c */
  ref_qg_out out;    /* out.y: the image's result [M][out pixels] */
} ref_qconv_cf;

/* The padded plane's extents: depth, height and width with the pads. */
static void ref_qconv_plane_dims(const ref_window *w, int64_t dims[3]) {
  int i;
  for (i = 0; i < 3; ++i)
    dims[i] = w->in[i] + w->pad[i] + w->pad_end[i];
}

static int64_t ref_qconv_plane_values(const ref_window *w) {
  int64_t dims[3];
  ref_qconv_plane_dims(w, dims);
  return dims[0] * dims[1] * dims[2] + REF_QG_ROW_SLACK;
}

/* A lean depthwise convolution's plane (ref_qg_depthwise_lean's slack). */
static int64_t ref_qconv_lean_plane_values(const ref_window *w) {
  return ref_qconv_plane_values(w) - REF_QG_ROW_SLACK + REF_QG_LEAN_SLACK;
}

/* Writes channel xc's x - xz into its padded plane (whose pads the caller zeroed), a depth
 * slice's rows by one call of ref_qg_widen_rows. */
static void ref_qconv_fill_plane(const ref_qconv_params *p, const unsigned char *xc, int32_t xz,
                                 int16_t *plane) {
  const ref_window *w = &p->w;
  const int in0 = (int)w->in[0], in1 = (int)w->in[1], in2 = (int)w->in[2];
  const int d1 = (int)(w->in[1] + w->pad[1] + w->pad_end[1]),
            d2 = (int)(w->in[2] + w->pad[2] + w->pad_end[2]);
  int id; /* int arithmetic: the plane is in the scratch */
  for (id = 0; id < in0; ++id, xc += in1 * in2)
    ref_qg_widen_rows(xc, in1, in2, p->q.x_type == ODLA_INT8, xz,
                      plane + ((id + (int)w->pad[0]) * d1 + (int)w->pad[1]) * d2 + (int)w->pad[2],
                      d2);
}

/* The 8-bit products' staged byte of data value v: int8 data taken as unsigned (plus 128). */
static unsigned char ref_qconv_byte(const ref_qconv_params *p, int32_t v) {
  return (unsigned char)((unsigned char)v ^ (p->q.x_type == ODLA_INT8 ? 0x80 : 0));
}

/* Writes channel xc's bytes (ref_qconv_byte) into its padded byte plane, whose pads the caller
 * set to the zero point's byte. */
static void ref_qconv_fill_plane8(const ref_qconv_params *p, const unsigned char *xc,
                                  unsigned char *plane) {
  const ref_window *w = &p->w;
  const unsigned char flip = ref_qconv_byte(p, 0);
  int64_t dims[3], id, ih;
  ref_qconv_plane_dims(w, dims);
  for (id = 0; id < w->in[0]; ++id)
    for (ih = 0; ih < w->in[1]; ++ih, xc += w->in[2])
      ref_qi_flip_copy(plane + ((id + w->pad[0]) * dims[1] + ih + w->pad[1]) * dims[2] + w->pad[2],
                       xc, w->in[2], flip);
}

/* Whether a window is the 3 x 3 depthwise kernels' (ref_qg_dw3_bytes, ref_qg_depthwise3_u8): over
 * a 2-D map, dilation 1, stride 1 or 2 along its rows. */
static int ref_qconv_window3(const ref_window *w) {
  return w->in[0] == 1 && w->k[0] == 1 && w->pad[0] == 0 && w->pad_end[0] == 0 && w->k[1] == 3 &&
         w->k[2] == 3 && w->dil[1] == 1 && w->dil[2] == 1 &&
         (w->stride[2] == 1 || w->stride[2] == 2) && w->out[1] >= 1 && w->out[2] >= 1;
}

/* Whether a channels-first depthwise convolution runs on ref_qg_dw3_bytes: such a window, taps
 * less their zero point int8 (taps8), a CPU with the kernel. Its byte plane fits the int16
 * plane's room with more than the 64 bytes of slack the kernel reads. */
static int ref_qconv_dw3_vbmi(const ref_qconv_params *p) {
  return p->taps8 && ref_qconv_window3(&p->w) && ref_qg_dw3_bytes_available();
}

/* ref_qconv_depthwise_cf_part's channels [lo, hi) on ref_qg_dw3_bytes, each channel's plane
 * of bytes (the pads set once), its sums started at less the zero point's share (the data's
 * zero point, plus 128 for int8, times the taps' sum), then requantized. */
static void ref_qconv_depthwise_bytes(const ref_qconv_cf *d, int64_t lo, int64_t hi,
                                      unsigned char *plane, int32_t *acc) {
  const ref_qconv_params *p = d->p;
  const ref_window *w = &p->w;
  const int64_t ipix = ref_window_in_count(w), opix = ref_window_out_count(w);
  const uint32_t zs = ref_qconv_byte(p, d->xz);
  int64_t dims[3], c;
  ref_qg_dw3_bytes q;
  int t;
  ref_qconv_plane_dims(w, dims);
  memset(plane, (int)zs, (size_t)ref_qconv_plane_values(w) * sizeof(int16_t)); /* with slack */
  q.x = plane;
  q.pitch = dims[2];
  q.row_stride = w->stride[1];
  q.stride = w->stride[2];
  q.oh = w->out[1];
  q.ow = w->out[2];
  q.s = acc;
  for (c = lo; c < hi; ++c) {
    uint32_t sum = 0;
    for (t = 0; t < 9; ++t) {
      q.taps[t] = (int8_t)d->wp[t * p->m + c];
      sum += (uint32_t)q.taps[t];
    }
    q.start = (int32_t)(0u - zs * sum);
    ref_qconv_fill_plane8(p, d->x + c * ipix, plane);
    ref_qg_dw3_bytes_run(&q);
    ref_qg_requantize_run(&d->out, c, acc, opix, ref_qg_y(&d->out, c * opix));
  }
}

/* Kernel rows (kd, kh) summed per call of the row kernel; its sums carry over between calls. */
enum { REF_QI_DW_ROWS = 8 };

static void ref_qconv_depthwise_cf_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_cf *d = (const ref_qconv_cf *)arg;
  const ref_qconv_params *p = d->p;
  const ref_window *w = &p->w;
  const int64_t ipix = ref_window_in_count(w), opix = ref_window_out_count(w);
  const int64_t kvol = ref_window_k_count(w), krows = w->k[0] * w->k[1];
  int16_t *plane = (int16_t *)ref_scratch_at(scratch, p->plane_at);
  int16_t *taps = (int16_t *)ref_scratch_at(scratch, p->taps_at);
  int32_t *acc = (int32_t *)ref_scratch_at(scratch, p->acc_at);
  const int16_t *rows[REF_QI_DW_ROWS];
  int64_t dims[3], lo, hi, c, t, od, oh, r0;
  int r;
  ref_split(p->c, 1, index, parts, &lo, &hi);
  if (lo >= hi)
    return;
  if (ref_qconv_dw3_vbmi(p)) {
    ref_qconv_depthwise_bytes(d, lo, hi, (unsigned char *)plane, acc);
    return;
  }
  ref_qconv_plane_dims(w, dims);
  memset(plane, 0, (size_t)ref_qconv_plane_values(w) * sizeof *plane);
  for (c = lo; c < hi; ++c) {
    for (t = 0; t < kvol; ++t)
      taps[t] = d->wp[t * p->m + c];
    ref_qconv_fill_plane(p, d->x + c * ipix, d->xz, plane);
    /* The plane's sums row by row (a row's kernel may write up to a block of 16 past its
       end: into the next row's sums, which that row then overwrites), requantized at once;
       a 2-D window's rows by one call. */
    if (w->k[0] == 1 && w->out[0] == 1 && krows <= REF_QI_DW_ROWS)
      ref_qg_depthwise_plane(plane, dims[2], w->out[1], w->stride[1], w->dil[1], (int)krows,
                             w->stride[2], w->dil[2], w->k[2], taps, w->out[2], acc);
    else
      for (od = 0; od < w->out[0]; ++od)
        for (oh = 0; oh < w->out[1]; ++oh) {
          int32_t *row = acc + (od * w->out[1] + oh) * w->out[2];
          for (r0 = 0; r0 < krows; r0 += REF_QI_DW_ROWS) {
            const int n = (int)ref_qi_min(REF_QI_DW_ROWS, krows - r0);
            for (r = 0; r < n; ++r) {
              const int kr = (int)r0 + r, kd = kr / (int)w->k[1],
                        kh = kr % (int)w->k[1]; /* 32-bit */
              rows[r] = plane + ((od * w->stride[0] + kd * w->dil[0]) * dims[1] +
                                 oh * w->stride[1] + kh * w->dil[1]) *
                                    dims[2];
            }
            ref_qg_depthwise_row(n, rows, w->stride[2], w->dil[2], w->k[2], taps + r0 * w->k[2],
                                 w->out[2], r0 > 0, row);
          }
        }
    ref_qg_requantize_run(&d->out, c, acc, opix, ref_qg_y(&d->out, c * opix));
  }
}

/* A lean depthwise convolution's image: each channel's input staged into the padded plane,
 * then its outputs summed and requantized by ref_qg_depthwise_lean over the window's rows
 * (rows_at: their offsets in the plane), its taps read in place. The parts split the
 * channels. */
typedef struct {
  const ref_qconv_params *p;
  const unsigned char *x; /* the image [C][in pixels] */
  int32_t xz;
  const int8_t *w; /* the kernel in place, tap t of channel c at c * taps + t */
  ref_qg_lean_out out;
  unsigned char *y;   /* the image's result [M][out pixels] */
  int64_t y_pitch;    /* results from one output channel's to the next's (out pixels; the
                         image's, where a part computes one row of it) */
  const int8_t *tail; /* the kernel's lean tail (ref_qi_common.tail_at), or NULL */
} ref_qconv_lean;

/* Whether a lean depthwise convolution's window is its whole input (one output pixel, no pads,
 * dilation 1): a global pool's. */
static int ref_qconv_global(const ref_qconv_params *p) {
  int i;
  for (i = 0; i < 3; ++i)
    if ((int)p->w.k[i] != (int)p->w.in[i] || (int)p->w.pad[i] != 0 || p->w.pad_end[i] != 0 ||
        (int)p->w.dil[i] != 1 || (int)p->w.out[i] != 1)
      return 0;
  return 1;
}

#if defined(REF_QG_LEAN_WIDE)
/* Whether a lean depthwise convolution takes ref_qg_depthwise3_u8: a 3 x 3 window of dilation 1
 * over a 2-D uint8 map, stride 1 or 2 along its rows, uint8 [0, 255] outputs. Its plane (as
 * bytes) fits in the int16 plane's scratch. */
static int ref_qconv_dw3_bytes(const ref_qconv_params *p, const ref_qg_lean_out *o) {
  return p->q.x_type == ODLA_UINT8 && ref_qconv_window3(&p->w) && ref_qg_depthwise3_u8_ok(o);
}
#endif

static void ref_qconv_depthwise_lean_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_lean *l = (const ref_qconv_lean *)arg;
  const ref_qconv_params *p = l->p;
  const int ipix = (int)p->w.in[0] * (int)p->w.in[1] * (int)p->w.in[2],
            opix = (int)p->w.out[0] * (int)p->w.out[1] * (int)p->w.out[2];
  const int oplane = (int)p->w.out[1] * (int)p->w.out[2],
            kvol = (int)p->w.k[0] * (int)p->w.k[1] * (int)p->w.k[2];
  const int64_t es = (int64_t)ref_qi_lean_esize(&l->out);
  int16_t *plane = (int16_t *)ref_scratch_at(scratch, p->plane_at);
  int *rows = (int *)ref_scratch_at(scratch, p->rows_at);
  int64_t dims[3], lo, hi, c;
  int r, od;
  ref_split(p->c, 1, index, parts, &lo, &hi);
  if (lo >= hi)
    return;
  if (ref_qconv_global(p)) { /* the window a channel's whole input: one dot product */
    for (c = lo; c < hi; ++c) {
      const ref_qg_lean_ch ch = ref_qg_lean_channel(&l->out, c);
      ref_qg_lean_put(
          &ch, ref_qg_dot8(l->x + c * ipix, l->w + c * kvol, kvol, p->q.x_type == ODLA_INT8, l->xz),
          l->y, c);
    }
    return;
  }
  ref_qconv_plane_dims(&p->w, dims);
#if defined(REF_QG_LEAN_WIDE)
  if (ref_qconv_dw3_bytes(p, &l->out)) { /* the plane as bytes, its pads the zero point */
    /* rows a multiple of 4 bytes apart, the input's columns from a word, where that fits in
       the int16 plane's room */
    const int aligned = (int)dims[1] * (((int)dims[2] + 3) / 4 * 4) + 4 + 3 <=
                        (int)ref_qconv_lean_plane_values(&p->w) * (int)sizeof(int16_t);
    const int pitch = aligned ? ((int)dims[2] + 3) / 4 * 4 : (int)dims[2];
    const int pad2 = (int)p->w.pad[2];
    ref_qg_dw3_channels d;
    d.x = l->x;
    d.ipix = ipix;
    d.in1 = (int)p->w.in[1];
    d.in2 = (int)p->w.in[2];
    d.plane = (unsigned char *)plane + (aligned ? (4 - pad2 % 4) % 4 : 0);
    d.pitch = pitch;
    d.at = (int)p->w.pad[1] * pitch + pad2;
    d.stride = (int)p->w.stride[2];
    d.step = (int)p->w.stride[1] * pitch;
    d.taps = l->w;
    d.oh = (int)p->w.out[1];
    d.ow = (int)p->w.out[2];
    d.o = &l->out;
    d.xz = l->xz;
    d.y = l->y;
    d.opix = opix;
    memset(d.plane, (int)(unsigned char)l->xz, (size_t)(dims[1] * pitch + 4));
    ref_qg_depthwise3_u8(&d, lo, hi);
    return;
  }
#endif
  for (r = 0; r < (int)p->w.k[0] * (int)p->w.k[1]; ++r)
    rows[r] = (int)(((r / (int)p->w.k[1]) * (int)p->w.dil[0] * dims[1] +
                     (r % (int)p->w.k[1]) * (int)p->w.dil[1]) *
                    dims[2]);
  memset(plane, 0, (size_t)ref_qconv_lean_plane_values(&p->w) * sizeof *plane);
  for (c = lo; c < hi; ++c) {
    ref_qconv_fill_plane(p, l->x + c * ipix, l->xz, plane);
    for (od = 0; od < (int)p->w.out[0]; ++od)
      ref_qg_depthwise_lean(plane + od * (int)p->w.stride[0] * dims[1] * dims[2], rows,
                            (int)p->w.k[0] * (int)p->w.k[1], (int)p->w.k[2], (int)p->w.dil[2],
                            (int)p->w.stride[2], (int)p->w.stride[1] * dims[2], l->w + c * kvol,
                            (int)p->w.out[1], (int)p->w.out[2], &l->out, c,
                            l->y + (c * opix + od * oplane) * es);
  }
}

/* n values x[t * step] - xz of a window row, int8 (is_signed) or uint8, at to. Returns the
 * position after them. */
static int16_t *ref_qconv_lean_run_of(const unsigned char *x, int n, int step, int is_signed,
                                      int32_t xz, int16_t *to) {
  int t;
  if (is_signed)
    for (t = 0; t < n; ++t)
      *to++ = (int16_t)(((const int8_t *)x)[t * step] - xz);
  else
    for (t = 0; t < n; ++t)
      *to++ = (int16_t)(x[t * step] - xz);
  return to;
}

/* Whether a lean convolution is a 1 x 1 window over a map of one pixel: its column is its
 * input, read as a lean column (ref_qg_lean_column_unit). */
static int ref_qconv_unit_column(const ref_qconv_params *p) {
  return p->unit_window && ref_window_out_count(&p->w) == 1;
}

/* Pixel h of a lean block (at q, pixels REF_QG_LEAN_PIXELS), or a lean column (pixels 1):
 * output pixel j's column over the group's input channels from xg, depth (ci, kernel cell)
 * x - xz of the window's element (int8 where is_signed, else uint8), 0 where it reads padding;
 * staged in depth order in col (kg rounded up to 4 values), then placed (ref_qg_lean_place). ow
 * and rest: j's column and the rest of its index, j = rest * w.out[2] + ow. */
static void ref_qconv_lean_col(const ref_qconv_params *p, const unsigned char *xg, int is_signed,
                               int32_t xz, int ow, int rest, const int *rows, int16_t *col,
                               int pixels, int32_t *q) {
  const int ipix = (int)p->w.in[0] * (int)p->w.in[1] * (int)p->w.in[2], cpg = (int)p->cpg,
            kg = (int)p->kg;
  const int in2 = (int)p->w.in[2], k2 = (int)p->w.k[2], dil2 = (int)p->w.dil[2];
  const int id0 = rest / (int)p->w.out[1] * (int)p->w.stride[0] - (int)p->w.pad[0];
  const int ih0 = rest % (int)p->w.out[1] * (int)p->w.stride[1] - (int)p->w.pad[1];
  const int iw0 = ow * (int)p->w.stride[2] - (int)p->w.pad[2], iw_last = iw0 + (k2 - 1) * dil2;
  int16_t *to = col;
  int ci, kd, kh, kw;
  if (id0 >= 0 && id0 + ((int)p->w.k[0] - 1) * (int)p->w.dil[0] < (int)p->w.in[0] && ih0 >= 0 &&
      ih0 + ((int)p->w.k[1] - 1) * (int)p->w.dil[1] < (int)p->w.in[1] && iw0 >= 0 &&
      iw_last < in2) {
    /* the window inside the input: its rows at the offsets `rows` from its corner */
    const unsigned char *corner = xg + (id0 * (int)p->w.in[1] + ih0) * in2 + iw0;
    const int nrows = cpg * (int)p->w.k[0] * (int)p->w.k[1];
    int r;
    if (k2 == 3 && dil2 == 1 && is_signed) /* a 3 x 3 window's rows, unrolled */
      for (r = 0; r < nrows; ++r, to += 3) {
        const int8_t *x = (const int8_t *)corner + rows[r];
        to[0] = (int16_t)(x[0] - xz);
        to[1] = (int16_t)(x[1] - xz);
        to[2] = (int16_t)(x[2] - xz);
      }
    else if (k2 == 3 && dil2 == 1)
      for (r = 0; r < nrows; ++r, to += 3) {
        const unsigned char *x = corner + rows[r];
        to[0] = (int16_t)(x[0] - xz);
        to[1] = (int16_t)(x[1] - xz);
        to[2] = (int16_t)(x[2] - xz);
      }
    else
      for (r = 0; r < nrows; ++r)
        to = ref_qconv_lean_run_of(corner + rows[r], k2, dil2, is_signed, xz, to);
  } else {
    for (ci = 0; ci < cpg; ++ci)
      for (kd = 0; kd < (int)p->w.k[0]; ++kd) {
        const int id = id0 + kd * (int)p->w.dil[0];
        for (kh = 0; kh < (int)p->w.k[1]; ++kh) {
          const int ih = ih0 + kh * (int)p->w.dil[1];
          const unsigned char *row;
          int iw = iw0;
          if (id < 0 || id >= (int)p->w.in[0] || ih < 0 ||
              ih >= (int)p->w.in[1]) { /* a padding row */
            for (kw = 0; kw < k2; ++kw)
              *to++ = 0;
            continue;
          }
          row = xg + ci * ipix + (id * (int)p->w.in[1] + ih) * in2;
          if (iw0 >= 0 && iw_last < in2) { /* the window row inside the input */
            to = ref_qconv_lean_run_of(row + iw0, k2, dil2, is_signed, xz, to);
            continue;
          }
          for (kw = 0; kw < k2; ++kw, iw += dil2)
            *to++ = (int16_t)(iw < 0 || iw >= in2 ? 0
                              : is_signed         ? ((const int8_t *)row)[iw] - xz
                                                  : row[iw] - xz);
        }
      }
  }
  for (; (to - col) % 4 != 0;)
    *to++ = 0;
  ref_qg_lean_place(col, kg, pixels, q);
}

/* The block of 4 output pixels in one row of a 3-wide window with stride S (1 or 2) along it,
 * every window inside the input (corner: pixel 0's), built in place: 4 window rows a step are
 * 12 depths, 3 whole groups of the block, so that where each value goes is a constant but for
 * the gw words from one group to the next (8 in a lean block, 16 in a wide one, of which the 4
 * pixels are half: qgemm.h's layout: depth d of pixel h at int16
 * (d / 4 * gw + 2h + d % 2) * 2 + d / 2 % 2, little-endian halves: ref_qi_little_endian), and
 * the 2S + 4 input values of a window row serve the 4 pixels; the last nrows % 4 window rows the
 * same way, the pad depths up to the next group zero. */
#define REF_QI_AT(d, h) (((d) / 4 * gw + 2 * (h) + (d) % 2) * 2 + (d) / 2 % 2)
#define REF_QI_PUT(d, h, v)                                                                        \
  do {                                                                                             \
    const int16_t put_ = (int16_t)(v);                                                             \
    memcpy(b + 2 * REF_QI_AT(d, h), &put_, sizeof put_);                                           \
  } while (0)
#define REF_QI_PIXEL3(j, h, a, b, c)                                                               \
  do {                                                                                             \
    REF_QI_PUT(3 * (j), h, a);                                                                     \
    REF_QI_PUT(3 * (j) + 1, h, b);                                                                 \
    REF_QI_PUT(3 * (j) + 2, h, c);                                                                 \
  } while (0)
/* Window row j's depths 3j to 3j + 2 of the 4 pixels from its values v0 to v8: pixel h takes
 * values hS to hS + 2 (S a constant: the choices fold). */
#define REF_QI_STORE3(j, S)                                                                        \
  do {                                                                                             \
    REF_QI_PIXEL3(j, 0, v0, v1, v2);                                                               \
    REF_QI_PIXEL3(j, 1, (S) == 2 ? v2 : v1, (S) == 2 ? v3 : v2, (S) == 2 ? v4 : v3);               \
    REF_QI_PIXEL3(j, 2, (S) == 2 ? v4 : v2, (S) == 2 ? v5 : v3, (S) == 2 ? v6 : v4);               \
    REF_QI_PIXEL3(j, 3, (S) == 2 ? v6 : v3, (S) == 2 ? v7 : v4, (S) == 2 ? v8 : v5);               \
  } while (0)
/* A window row's 3S + 3 values are read before any is stored (the stores may alias x). */
#define REF_QI_ROW3(T, j, S)                                                                       \
  do {                                                                                             \
    const T *x = (const T *)(corner + rows[r + (j)]);                                              \
    const int32_t v0 = x[0] - xz, v1 = x[1] - xz, v2 = x[2] - xz, v3 = x[3] - xz;                  \
    const int32_t v4 = x[4] - xz, v5 = x[5] - xz, v6 = (S) == 2 ? x[6] - xz : 0;                   \
    const int32_t v7 = (S) == 2 ? x[7] - xz : 0, v8 = (S) == 2 ? x[8] - xz : 0;                    \
    REF_QI_STORE3(j, S);                                                                           \
  } while (0)
/* The window rows 4 a step (r: the rows done). */
#define REF_QI_ROWS4(ROW, T, S)                                                                    \
  for (r = 0; r + 4 <= nrows; r += 4, b += 3 * gw * sizeof(int32_t)) {                             \
    ROW(T, 0, S);                                                                                  \
    ROW(T, 1, S);                                                                                  \
    ROW(T, 2, S);                                                                                  \
    ROW(T, 3, S);                                                                                  \
  }
/* The same, then the last nrows % 4 by ROW and their group's pad depths zero. */
#define REF_QI_ROWS(ROW, T, S)                                                                     \
  do {                                                                                             \
    REF_QI_ROWS4(ROW, T, S)                                                                        \
    if (nrows - r >= 1)                                                                            \
      ROW(T, 0, S);                                                                                \
    if (nrows - r >= 2)                                                                            \
      ROW(T, 1, S);                                                                                \
    if (nrows - r >= 3)                                                                            \
      ROW(T, 2, S);                                                                                \
    for (d = 3 * (nrows - r); d % 4 != 0; ++d)                                                     \
      for (h = 0; h < REF_QG_LEAN_PIXELS; ++h)                                                     \
        REF_QI_PUT(d, h, 0);                                                                       \
  } while (0)
static void ref_qconv_lean_block3(const unsigned char *corner, const int *rows, int nrows,
                                  int stride, int is_signed, int32_t xz, int gw, int32_t *q) {
  unsigned char *b = (unsigned char *)q;
  int r, d, h;
  if (is_signed && stride == 1)
    REF_QI_ROWS(REF_QI_ROW3, int8_t, 1);
  else if (is_signed)
    REF_QI_ROWS(REF_QI_ROW3, int8_t, 2);
  else if (stride == 1)
    REF_QI_ROWS(REF_QI_ROW3, uint8_t, 1);
  else
    REF_QI_ROWS(REF_QI_ROW3, uint8_t, 2);
}

/* Whether window row r (ci, kd, kh) of the window whose corner is (id0, ih0) reads an input
 * row, not padding. */
static int ref_qconv_lean_row_in(const ref_qconv_params *p, int id0, int ih0, int r) {
  const int id = id0 + r / (int)p->w.k[1] % (int)p->w.k[0] * (int)p->w.dil[0],
            ih = ih0 + r % (int)p->w.k[1] * (int)p->w.dil[1];
  return id >= 0 && id < (int)p->w.in[0] && ih >= 0 && ih < (int)p->w.in[1];
}

/* ref_qconv_lean_block3 where the windows reach into the padding: window row r's value k (k <
 * 3S + 3) is x[at + rows[r] + k] - xz for the columns k in [kl, kr) of rows that read the
 * input (ref_qconv_lean_row_in, found once for a channel's rows where they are 32 at most), else
 * 0; at: the corner's offset (id0, ih0, iw0), which may lie outside the input. Four rows a
 * step; the last nrows % 4 copied into a patch, the columns and rows outside the input the zero
 * point, which ref_qconv_lean_block3 then builds (their own unrolled code would cost kilobytes
 * of flash). Edge blocks took ref_qconv_lean_col a pixel at a time (every block of an 8-wide
 * ResNet-8 layer). */
#define REF_QI_IN(rr)                                                                              \
  (kk <= 32 ? (int)(in >> ((rr) % kk) & 1u) : ref_qconv_lean_row_in(p, id0, ih0, rr))
#define REF_QI_ROW3E(T, j, S)                                                                      \
  do {                                                                                             \
    const T *x = (const T *)xg;                                                                    \
    const int o_ = at + rows[r + (j)];                                                             \
    const int kl_ = REF_QI_IN(r + (j)) ? kl : 9;                                                   \
    const int32_t v0 = REF_QI_V(0), v1 = REF_QI_V(1), v2 = REF_QI_V(2), v3 = REF_QI_V(3);          \
    const int32_t v4 = REF_QI_V(4), v5 = REF_QI_V(5), v6 = (S) == 2 ? REF_QI_V(6) : 0;             \
    const int32_t v7 = (S) == 2 ? REF_QI_V(7) : 0, v8 = (S) == 2 ? REF_QI_V(8) : 0;                \
    REF_QI_STORE3(j, S);                                                                           \
  } while (0)
#define REF_QI_V(k) ((k) >= kl_ && (k) < kr ? x[o_ + (k)] - xz : 0)
static void ref_qconv_lean_block3e(const ref_qconv_params *p, const unsigned char *xg,
                                   const int *rows, int id0, int ih0, int iw0, int is_signed,
                                   int32_t xz, int gw, int32_t *q) {
  static const int patch_rows[3] = {0, 12, 24}; /* 3S + 3 <= 9 bytes a row */
  const int nrows = (int)p->cpg * (int)p->w.k[0] * (int)p->w.k[1], stride = (int)p->w.stride[2];
  const int at = (id0 * (int)p->w.in[1] + ih0) * (int)p->w.in[2] + iw0, n = 3 * stride + 3;
  const int kl = iw0 < 0 ? -iw0 : 0, kr = (int)p->w.in[2] - iw0; /* the columns inside */
  const int kk = (int)p->w.k[0] * (int)p->w.k[1];                /* window rows a channel */
  unsigned char *b = (unsigned char *)q, patch[36];
  uint32_t in = 0; /* bit t: a channel's window row t reads the input (where kk <= 32) */
  int r, j, k;
  for (r = 0; r < kk && r < 32; ++r)
    in |= (uint32_t)ref_qconv_lean_row_in(p, id0, ih0, r) << r;
  if (is_signed && stride == 1)
    REF_QI_ROWS4(REF_QI_ROW3E, int8_t, 1)
  else if (is_signed)
    REF_QI_ROWS4(REF_QI_ROW3E, int8_t, 2)
  else if (stride == 1)
    REF_QI_ROWS4(REF_QI_ROW3E, uint8_t, 1)
  else
    REF_QI_ROWS4(REF_QI_ROW3E, uint8_t, 2)
  if (r == nrows)
    return;
  for (j = 0; r + j < nrows; ++j) {
    const int inside = REF_QI_IN(r + j), o = at + rows[r + j];
    for (k = 0; k < n; ++k)
      patch[12 * j + k] = inside && k >= kl && k < kr ? xg[o + k] : (unsigned char)xz;
  }
  ref_qconv_lean_block3(patch, patch_rows, j, stride, is_signed, xz, gw, (int32_t *)(void *)b);
}
#undef REF_QI_IN
#undef REF_QI_V
#undef REF_QI_ROW3E
#undef REF_QI_ROWS
#undef REF_QI_ROWS4
#undef REF_QI_ROW3
#undef REF_QI_STORE3
#undef REF_QI_PIXEL3
#undef REF_QI_PUT
#undef REF_QI_AT

/* Whether int16 halves of an int32 are stored low half first (every target here; a constant). */
static int ref_qi_little_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* Whether the block of 4 pixels from j takes ref_qconv_lean_block3 (1: its windows inside the
 * input) or ref_qconv_lean_block3e (2), 0 neither (not one output row, or not a 3-wide window
 * of stride 1 or 2); o: the first window's corner (depth, height, width), maybe in the pads. */
static int ref_qconv_lean_corner3(const ref_qconv_params *p, int j, int o[3]) {
  const int ow = j % (int)p->w.out[2], rest = j / (int)p->w.out[2];
  o[0] = rest / (int)p->w.out[1] * (int)p->w.stride[0] - (int)p->w.pad[0];
  o[1] = rest % (int)p->w.out[1] * (int)p->w.stride[1] - (int)p->w.pad[1];
  o[2] = ow * (int)p->w.stride[2] - (int)p->w.pad[2];
  if (!ref_qi_little_endian() || (int)p->w.k[2] != 3 || (int)p->w.dil[2] != 1 ||
      ((int)p->w.stride[2] != 1 && (int)p->w.stride[2] != 2) ||
      ow + REF_QG_LEAN_PIXELS > (int)p->w.out[2])
    return 0;
  return o[0] < 0 || o[0] + ((int)p->w.k[0] - 1) * (int)p->w.dil[0] >= (int)p->w.in[0] ||
                 o[1] < 0 || o[1] + ((int)p->w.k[1] - 1) * (int)p->w.dil[1] >= (int)p->w.in[1] ||
                 o[2] < 0 ||
                 o[2] + (REF_QG_LEAN_PIXELS - 1) * (int)p->w.stride[2] + 2 >= (int)p->w.in[2]
             ? 2
             : 1;
}

/* Whether a lean convolution may stage a column (ref_qconv_lean_col) in its scratch: unless
 * every output row is whole blocks of 4 of a 3-wide window of stride 1 or 2, which
 * ref_qconv_lean_block3 and ref_qconv_lean_block3e build in place (the parts split the pixels
 * at blocks of 4: ref_split). */
static int ref_qconv_lean_stages(const ref_qconv_params *p) {
  return !ref_qi_little_endian() || p->w.k[2] != 3 || p->w.dil[2] != 1 ||
         (p->w.stride[2] != 1 && p->w.stride[2] != 2) || p->w.out[2] % REF_QG_LEAN_PIXELS != 0;
}

/* The 4 pixels from j (a whole block in one output row or not) of a convolution's windows into
 * q, a lean block (pixels 4) or the half of a wide one from its pixel 0 or 4 (pixels 8): by
 * ref_qconv_lean_block3 or ref_qconv_lean_block3e where the windows are 3 wide along the row
 * (ref_qconv_lean_corner3), else a column at a time through col. */
static void ref_qconv_lean_build(const ref_qconv_params *p, const unsigned char *xg,
                                 const int *rows, int nrows, int j, int pixels, int is_signed,
                                 int32_t xz, int16_t *col, int32_t *q) {
  const int ow = (int)p->w.out[2];
  int o[3], h;
  const int way = ref_qconv_lean_corner3(p, j, o);
  if (way == 1)
    ref_qconv_lean_block3(xg + (o[0] * (int)p->w.in[1] + o[1]) * (int)p->w.in[2] + o[2], rows,
                          nrows, (int)p->w.stride[2], is_signed, xz, 2 * pixels, q);
  else if (way == 2)
    ref_qconv_lean_block3e(p, xg, rows, o[0], o[1], o[2], is_signed, xz, 2 * pixels, q);
  else
    for (h = 0; h < REF_QG_LEAN_PIXELS; ++h)
      ref_qconv_lean_col(p, xg, is_signed, xz, (j + h) % ow, (j + h) / ow, rows, col, pixels,
                         q + 2 * h);
}

/* Blocks of REF_QG_LEAN_PIXELS output pixels (the last repeated in a short block; a lean
 * column where one pixel is left), each multiplied by every kernel row of the group and
 * requantized (ref_qg_lean_dots), or where the target has them (REF_QG_LEAN_WIDE) and the
 * outputs allow, wide blocks of 8 while 8 are left (ref_qg_lean_dots_wide); int indices (the
 * builder checked they fit). Kernel rows read
 * past their end only as far as the kernel goes (ref_qg_lean_over). A 1 x 1 window over a map
 * of one pixel (a product of one row as odlac's matmul-rows-as-conv gives it) reads its column
 * straight from the input (ref_qconv_unit_column). */
static void ref_qconv_lean_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_lean *l = (const ref_qconv_lean *)arg;
  const ref_qconv_params *p = l->p;
  const int ipix = (int)p->w.in[0] * (int)p->w.in[1] * (int)p->w.in[2],
            opix = (int)p->w.out[0] * (int)p->w.out[1] * (int)p->w.out[2];
  const int mpg = (int)p->mpg, kg = (int)p->kg, m = (int)p->m;
  const int64_t es = (int64_t)ref_qi_lean_esize(&l->out); /* a raw result's 4 bytes */
  const int is_signed = p->q.x_type == ODLA_INT8;
  const int unit_column = ref_qconv_unit_column(p);
  int32_t *block = (int32_t *)ref_scratch_at(scratch, p->col_at);
  int16_t *col = ref_qconv_lean_stages(p) && !p->unit_window
                     ? (int16_t *)(block + ref_qg_lean_wide_words(p->kg)) /* staged */
                     : NULL;
  int *rows = (int *)ref_scratch_at(scratch, p->rows_at);
  const int nrows = p->unit_window ? 0 : (int)p->cpg * (int)p->w.k[0] * (int)p->w.k[1];
  int64_t lo, hi;
  int g, j, h, np, r;
  ref_split(opix, REF_QG_LEAN_PIXELS, index, parts, &lo, &hi);
  for (r = 0; r < nrows; ++r) {
    const int ci = r / ((int)p->w.k[0] * (int)p->w.k[1]), kd = r / (int)p->w.k[1] % (int)p->w.k[0],
              kh = r % (int)p->w.k[1];
    rows[r] = ci * ipix +
              (kd * (int)p->w.dil[0] * (int)p->w.in[1] + kh * (int)p->w.dil[1]) * (int)p->w.in[2];
  }
  for (g = 0; g < (int)p->group; ++g) {
    const unsigned char *xg = l->x + g * (int)p->cpg * ipix;
    /* the last group's last two rows from the tail, where there is one */
    const int tail = l->tail && g == (int)p->group - 1 ? 2 : 0;
    const int c = g * mpg, over = (int)ref_qg_lean_over(kg, m, c, mpg - tail);
#if defined(REF_QG_LEAN_WIDE)
    const int wide = !unit_column && ref_qg_lean_wide_ok(mpg - tail, over, &l->out);
#endif
    for (j = (int)lo; j < (int)hi; j += np) {
#if defined(REF_QG_LEAN_WIDE)
      if (wide && (int)hi - j >= REF_QG_LEAN_WIDE_PIXELS) {
        np = REF_QG_LEAN_WIDE_PIXELS;
        if (p->unit_window)
          ref_qg_lean_block_unit_wide(xg + j, ipix, kg, is_signed, l->xz, block);
        else
          for (h = 0; h < REF_QG_LEAN_WIDE_PIXELS; h += REF_QG_LEAN_PIXELS)
            ref_qconv_lean_build(p, xg, rows, nrows, j + h, REF_QG_LEAN_WIDE_PIXELS, is_signed,
                                 l->xz, col, block + 2 * h);
        ref_qg_lean_dots_wide(kg, l->w + (int64_t)c * kg, mpg - tail, block, &l->out, c,
                              l->y + (int64_t)c * l->y_pitch + j, l->y_pitch);
        if (tail)
          ref_qg_lean_dots_wide(kg, l->tail, 2, block, &l->out, m - 2,
                                l->y + (int64_t)(m - 2) * l->y_pitch + j, l->y_pitch);
        continue;
      }
#endif
      np = (int)hi - j < REF_QG_LEAN_PIXELS ? (int)hi - j : REF_QG_LEAN_PIXELS;
      if (unit_column)
        ref_qg_lean_column_unit(xg, kg, is_signed, l->xz, block);
      else if (p->unit_window && np == REF_QG_LEAN_PIXELS)
        ref_qg_lean_block_unit(xg + j, ipix, kg, is_signed, l->xz, block);
      else if (p->unit_window)
        ref_qg_lean_block_unit_n(xg + j, ipix, kg, is_signed, l->xz, np, block);
      else if (np == REF_QG_LEAN_PIXELS)
        ref_qconv_lean_build(p, xg, rows, nrows, j, REF_QG_LEAN_PIXELS, is_signed, l->xz, col,
                             block);
      else if (np == 1)
        ref_qconv_lean_col(p, xg, is_signed, l->xz, j % (int)p->w.out[2], j / (int)p->w.out[2],
                           rows, col, 1, block);
      else
        for (h = 0; h < REF_QG_LEAN_PIXELS; ++h) {
          const int jh = j + (h < np ? h : np - 1);
          ref_qconv_lean_col(p, xg, is_signed, l->xz, jh % (int)p->w.out[2], jh / (int)p->w.out[2],
                             rows, col, REF_QG_LEAN_PIXELS, block + 2 * h);
        }
      ref_qg_lean_dots(kg, l->w + (int64_t)c * kg, mpg - tail, over, block, &l->out, c, np,
                       l->y + ((int64_t)c * l->y_pitch + j) * es, l->y_pitch * es);
      if (tail)
        ref_qg_lean_dots(kg, l->tail, 2, 2, block, &l->out, m - 2, np,
                         l->y + ((int64_t)(m - 2) * l->y_pitch + j) * es, l->y_pitch * es);
    }
  }
}

/* Staging one image's input as int16 x - xz in its own layout (the depthwise loops' and the
 * channels-last products' operand); the parts split the values. */
enum { REF_QI_STAGE_PARALLEL_MIN = 1 << 15 };

typedef struct {
  const ref_qconv_params *p;
  const unsigned char *x;
  int32_t xz;
  int16_t *xs;
} ref_qconv_stage;

static void ref_qconv_stage_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_stage *st = (const ref_qconv_stage *)arg;
  const ref_qconv_params *p = st->p;
  int64_t lo, hi;
  (void)scratch;
  ref_split(ref_window_in_count(&p->w) * p->c, 64, index, parts, &lo, &hi);
  ref_qi_widen(p->q.x_type, st->x + lo, 1, hi - lo, st->xz, st->xs + lo, 1);
}

/* ---- Channels first: P = the kernel, V = im2col blocks of output pixels ---------------------- */

/* Staging one image's padded planes (the im2col rows' source when the window is not a unit
 * one): int16 x - xz with zero pads, or for the 8-bit product (q.u8s8) bytes (ref_qconv_byte)
 * with pads of the zero point's byte, which sub cancels as it cancels the data's zero point.
 * The parts split the channels. */
static void ref_qconv_pad_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_stage *st = (const ref_qconv_stage *)arg;
  const ref_qconv_params *p = st->p;
  const int64_t values = ref_qconv_plane_values(&p->w), ipix = ref_window_in_count(&p->w);
  int64_t lo, hi, c;
  (void)scratch;
  ref_split(p->c, 1, index, parts, &lo, &hi);
  for (c = lo; c < hi; ++c)
    if (p->q.u8s8) {
      unsigned char *plane = (unsigned char *)st->xs + c * values;
      memset(plane, ref_qconv_byte(p, st->xz), (size_t)values);
      ref_qconv_fill_plane8(p, st->x + c * ipix, plane);
    } else {
      memset(st->xs + c * values, 0, (size_t)values * sizeof *st->xs);
      ref_qconv_fill_plane(p, st->x + c * ipix, st->xz, st->xs + c * values);
    }
}

/* One image and group of a channels-first convolution. */
typedef struct {
  const ref_qconv_params *p;
  const unsigned char *x; /* the group's first input channel (a unit window reads it) */
  const int16_t *xp;      /* else its padded plane (ref_qconv_pad_part) */
  int32_t xz;
  ref_qg g; /* P (the group's kernel rows), out (the group's channels); v set per block */
  int64_t block, blocks; /* pixels per block (at most p->block), blocks */
  int by_rows;           /* the parts split the output channels, not the blocks */
  /* the 8-bit product (q.u8s8): the group's byte planes (ref_qconv_pad_part) instead of xp,
     and g8 (P, sub, out) instead of g */
  const unsigned char *xb;
  ref_qg8 g8;
} ref_qconv_cf_gemm;

/* A run of a block's output pixels along an output row: its first pixel j in the block, its
 * length n, and where its first window starts in a padded plane (kernel cell 0). */
typedef struct {
  int64_t j, n, at;
} ref_qconv_run_of;

/* The runs of output pixels [b0, b0 + nb) into runs[], their count returned. */
static int64_t ref_qconv_runs(const ref_qconv_params *p, int64_t b0, int64_t nb,
                              ref_qconv_run_of *runs) {
  const ref_window *w = &p->w;
  const int64_t ow_n = w->out[2];
  int64_t dims[3], pix = b0, count = 0;
  ref_qconv_plane_dims(w, dims);
  while (pix < b0 + nb) {
    const int64_t ow0 = pix % ow_n, oh = pix / ow_n % w->out[1], od = pix / (ow_n * w->out[1]);
    ref_qconv_run_of *r = &runs[count++];
    r->j = pix - b0;
    r->n = ref_qi_min(ow_n - ow0, b0 + nb - pix);
    r->at = (od * w->stride[0] * dims[1] + oh * w->stride[1]) * dims[2] + ow0 * w->stride[2];
    pix += r->n;
  }
  return count;
}

/* Row k = (group input channel ci, kernel cell t) of the im2col matrix for output pixels
 * [b0, b0 + nb) into row[0, nb): x - xz of the window's element, 0 where it reads padding.
 * A unit window's row is a run of the input channel; another window's row copies the
 * block's runs from the channel's padded plane. */
static void ref_qconv_cf_row(const ref_qconv_cf_gemm *c, int64_t ci, int64_t t, int64_t b0,
                             int64_t nb, const ref_qconv_run_of *runs, int64_t nruns,
                             int16_t *row) {
  const ref_qconv_params *p = c->p;
  const ref_window *w = &p->w;
  const int64_t kw = t % w->k[2], kh = t / w->k[2] % w->k[1], kd = t / (w->k[2] * w->k[1]);
  const int64_t sw = w->stride[2];
  int64_t dims[3], r, i;
  const int16_t *plane;
  if (p->unit_window) { /* the output pixels are the input's */
    ref_qi_widen(p->q.x_type, c->x + ci * ref_window_in_count(w) + b0, 1, nb, c->xz, row, 1);
    return;
  }
  ref_qconv_plane_dims(w, dims);
  plane = c->xp + ci * ref_qconv_plane_values(w) +
          (kd * w->dil[0] * dims[1] + kh * w->dil[1]) * dims[2] + kw * w->dil[2];
  for (r = 0; r < nruns; ++r) {
    const int16_t *src = plane + runs[r].at;
    int16_t *to = row + runs[r].j;
    if (sw == 1)
      memcpy(to, src, (size_t)runs[r].n * sizeof *to);
    else
      for (i = 0; i < runs[r].n; ++i)
        to[i] = src[i * sw];
  }
}

/* Depth rows [k0, k1) (even bounds) of the im2col block of output pixels [b0, b0 + nb) as V
 * panels at v: pairs of rows, each built into the two row buffers (nbp values: nb rounded up
 * to whole panels, the rest zero). */
static void ref_qconv_cf_block(const ref_qconv_cf_gemm *c, int64_t b0, int64_t nb, int64_t k0,
                               int64_t k1, int16_t *v, int16_t *rows, ref_qconv_run_of *runs) {
  const ref_qconv_params *p = c->p;
  const int64_t kvol = ref_window_k_count(&p->w), nbp = ref_qi_round_up(nb, REF_QG_NR);
  const int64_t nruns = p->unit_window ? 0 : ref_qconv_runs(p, b0, nb, runs);
  int16_t *r[2];
  int64_t k, j, l;
  int h;
  r[0] = rows;
  r[1] = rows + nbp;
  memset(rows, 0, (size_t)(2 * nbp) * sizeof *rows);
  for (k = k0; k < k1; k += 2) {
    for (h = 0; h < 2; ++h) {
      if (k + h < p->kg)
        ref_qconv_cf_row(c, (k + h) / kvol, (k + h) % kvol, b0, nb, runs, nruns, r[h]);
      else
        memset(r[h], 0, (size_t)nb * sizeof *r[h]);
    }
    for (j = 0; j < nbp; j += REF_QG_NR) {
      int16_t *d = v + j / REF_QG_NR * (p->kp * REF_QG_NR) + k * REF_QG_NR;
      const int16_t *r0 = r[0] + j, *r1 = r[1] + j;
      for (l = 0; l < REF_QG_NR; ++l) {
        d[2 * l] = r0[l];
        d[2 * l + 1] = r1[l];
      }
    }
  }
}

/* ref_qconv_cf_row's row as bytes for the 8-bit product: a unit window's is the input
 * channel's run, read in place (ref_qconv_cf_block8 flips int8 data), another's is copied into
 * row from the byte plane. */
static const unsigned char *ref_qconv_cf_row8(const ref_qconv_cf_gemm *c, int64_t ci, int64_t t,
                                              int64_t b0, const ref_qconv_run_of *runs,
                                              int64_t nruns, unsigned char *row) {
  const ref_window *w = &c->p->w;
  const int64_t kw = t % w->k[2], kh = t / w->k[2] % w->k[1], kd = t / (w->k[2] * w->k[1]);
  const int64_t sw = w->stride[2];
  int64_t dims[3], r, i;
  const unsigned char *plane;
  if (c->p->unit_window)
    return c->x + ci * ref_window_in_count(w) + b0;
  ref_qconv_plane_dims(w, dims);
  plane = c->xb + ci * ref_qconv_plane_values(w) +
          (kd * w->dil[0] * dims[1] + kh * w->dil[1]) * dims[2] + kw * w->dil[2];
  for (r = 0; r < nruns; ++r) {
    const unsigned char *src = plane + runs[r].at;
    unsigned char *to = row + runs[r].j;
    if (sw == 1)
      memcpy(to, src, (size_t)runs[r].n);
    else
      for (i = 0; i < runs[r].n; ++i)
        to[i] = src[i * sw];
  }
  return row;
}

/* ref_qconv_cf_block for the 8-bit product: depth rows [k0, k1) (multiples of 4) as byte
 * panels (ref_qg8_v_at), each group of 4 rows built into the four row buffers (nb bytes each)
 * or read in place; rows past the depth are zeros. */
static void ref_qconv_cf_block8(const ref_qconv_cf_gemm *c, int64_t b0, int64_t nb, int64_t k0,
                                int64_t k1, unsigned char *v, unsigned char *rows,
                                ref_qconv_run_of *runs) {
  const ref_qconv_params *p = c->p;
  const int64_t kvol = ref_window_k_count(&p->w);
  const int64_t nruns = p->unit_window ? 0 : ref_qconv_runs(p, b0, nb, runs);
  const unsigned char flip = p->unit_window && p->q.x_type == ODLA_INT8 ? 0x80 : 0;
  const unsigned char *src[4];
  int64_t k;
  int h;
  for (k = k0; k < k1; k += 4) {
    for (h = 0; h < 4; ++h)
      src[h] = k + h < p->kg ? ref_qconv_cf_row8(c, (k + h) / kvol, (k + h) % kvol, b0, runs, nruns,
                                                 rows + h * nb)
                             : NULL;
    ref_qg8_group_row(src, nb, flip, v, p->q.kq, k);
  }
}

/* The depth of c's V blocks and the unit its parts split it by. */
static int64_t ref_qconv_cf_depth(const ref_qconv_cf_gemm *c, int64_t *unit) {
  *unit = c->p->q.u8s8 ? 4 : 2;
  return c->p->q.u8s8 ? c->p->q.kq : c->p->kp;
}

/* Depth rows [k0, k1) of the block of output pixels [b0, b0 + nb) at v, with the row buffers
 * and runs of `scratch`. */
static void ref_qconv_cf_build(const ref_qconv_cf_gemm *c, int64_t b0, int64_t nb, int64_t k0,
                               int64_t k1, void *v, unsigned char *scratch) {
  const ref_qconv_params *p = c->p;
  ref_qconv_run_of *runs = (ref_qconv_run_of *)ref_scratch_at(scratch, p->runs_at);
  if (p->q.u8s8)
    ref_qconv_cf_block8(c, b0, nb, k0, k1, (unsigned char *)v,
                        (unsigned char *)ref_scratch_at(scratch, p->rows_at), runs);
  else
    ref_qconv_cf_block(c, b0, nb, k0, k1, (int16_t *)v,
                       (int16_t *)ref_scratch_at(scratch, p->rows_at), runs);
}

/* Rows [r0, r1) of the product of the block of output pixels [b0, b0 + nb) at v. */
static void ref_qconv_cf_tiles(const ref_qconv_cf_gemm *c, const void *v, int64_t b0, int64_t nb,
                               int64_t r0, int64_t r1) {
  if (c->p->q.u8s8) {
    ref_qg8 g = c->g8;
    g.v = (const unsigned char *)v;
    g.v_col0 = b0;
    ref_qg8_run(&g, r0, r1, b0, b0 + nb);
  } else {
    ref_qg g = c->g;
    g.v = (const int16_t *)v;
    g.v_col0 = b0;
    ref_qg_run(&g, r0, r1, b0, b0 + nb);
  }
}

/* By blocks (ref_qconv_cf_split): each part builds its blocks in its own scratch and
 * multiplies them by every row. */
static void ref_qconv_cf_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_cf_gemm *c = (const ref_qconv_cf_gemm *)arg;
  const ref_qconv_params *p = c->p;
  const int64_t opix = ref_window_out_count(&p->w);
  void *v = ref_scratch_at(scratch, p->col_at);
  int64_t blo, bhi, b, unit;
  const int64_t depth = ref_qconv_cf_depth(c, &unit);
  ref_split(c->blocks, 1, index, parts, &blo, &bhi);
  for (b = blo; b < bhi; ++b) {
    const int64_t b0 = b * c->block, nb = ref_qi_min(c->block, opix - b0);
    ref_qconv_cf_build(c, b0, nb, 0, depth, v, scratch);
    ref_qconv_cf_tiles(c, v, b0, nb, 0, p->mpg);
  }
}

/* By output channels: block by block, the parts build a shared block (the first part's
 * scratch), each its share of the depth rows, then multiply it by their share of the rows. */
typedef struct {
  const ref_qconv_cf_gemm *c;
  int64_t b0, nb;
  void *v; /* the shared block */
} ref_qconv_cf_shared;

static void ref_qconv_cf_build_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_cf_shared *sh = (const ref_qconv_cf_shared *)arg;
  int64_t lo, hi, unit;
  const int64_t depth = ref_qconv_cf_depth(sh->c, &unit);
  ref_split(depth, unit, index, parts, &lo, &hi);
  if (lo < hi)
    ref_qconv_cf_build(sh->c, sh->b0, sh->nb, lo, hi, sh->v, scratch);
}

static void ref_qconv_cf_rows_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_cf_shared *sh = (const ref_qconv_cf_shared *)arg;
  int64_t lo, hi;
  (void)scratch;
  ref_split(sh->c->p->mpg, REF_QG_MR, index, parts, &lo, &hi);
  ref_qconv_cf_tiles(sh->c, sh->v, sh->b0, sh->nb, lo, hi);
}

/* How c's product splits over the parts (returned): by whole blocks when there are many of
 * them (their count rounded up to a multiple of the parts, so that each part has as many),
 * else by output channels where there are enough of those, for a balance that a few blocks
 * of ResNet-50's small maps (7 x 7: 16, 16, 16 and 1 pixels) would not give. */
static int ref_qconv_cf_split(const ref_io *io, const ref_qconv_params *p, ref_qconv_cf_gemm *c) {
  const int64_t opix = ref_window_out_count(&p->w), rows = (p->mpg + REF_QG_MR - 1) / REF_QG_MR;
  int64_t blocks = (opix + p->block - 1) / p->block;
  const int parts = ref_qi_parts(io, opix * p->mpg * p->kg, blocks > rows ? blocks : rows);
  c->by_rows = parts > 1 && blocks < 4 * parts && rows >= 2 * parts;
  if (parts > 1 && !c->by_rows)
    blocks = (blocks + parts - 1) / parts * parts;
  c->block = ref_qi_round_up((opix + blocks - 1) / blocks, REF_QG_NR);
  c->blocks = (opix + c->block - 1) / c->block;
  return parts;
}

/* One image and group's product, split as ref_qconv_cf_split chooses. */
static void ref_qconv_cf_gemm_run(const ref_io *io, ref_qconv_cf_gemm *c) {
  const ref_qconv_params *p = c->p;
  const int64_t opix = ref_window_out_count(&p->w);
  const int parts = ref_qconv_cf_split(io, p, c);
  ref_qconv_cf_shared sh;
  int64_t b;
  if (!c->by_rows) {
    ref_parallel(ref_io_threads(io), parts, ref_qconv_cf_part, c, (unsigned char *)io->scratch);
    return;
  }
  sh.c = c;
  sh.v = ref_scratch_at(io->scratch, p->col_at);
  for (b = 0; b < c->blocks; ++b) {
    sh.b0 = b * c->block;
    sh.nb = ref_qi_min(c->block, opix - sh.b0);
    ref_parallel(ref_io_threads(io), parts, ref_qconv_cf_build_part, &sh,
                 (unsigned char *)io->scratch);
    ref_parallel(ref_io_threads(io), parts, ref_qconv_cf_rows_part, &sh,
                 (unsigned char *)io->scratch);
  }
}

/* ---- Channels last: P = im2col rows of the staged input, V = the kernel ---------------------- */

typedef struct {
  const ref_qconv_params *p;
  const int16_t *xs; /* the staged image [pixels][C], at the group's first channel */
  ref_qg g;          /* V (the group's kernel panels), out (the group's channels) */
} ref_qconv_cl_gemm;

/* Rows [first, first + n) of the im2col matrix into `col` (n rows of kp; a pad value 0). */
static void ref_qconv_cl_im2col(const ref_qconv_cl_gemm *c, int64_t first, int64_t n,
                                int16_t *col) {
  const ref_qconv_params *p = c->p;
  const ref_window *w = &p->w;
  const size_t run = (size_t)p->cpg * sizeof *col;
  int64_t pix, kd, kh, kw;
  for (pix = first; pix < first + n; ++pix) {
    int16_t *row = col + (pix - first) * p->kp, *at = row;
    const int64_t ow = pix % w->out[2], oh = pix / w->out[2] % w->out[1];
    const int64_t od = pix / (w->out[2] * w->out[1]);
    for (kd = 0; kd < w->k[0]; ++kd) {
      const int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];
      for (kh = 0; kh < w->k[1]; ++kh) {
        const int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];
        for (kw = 0; kw < w->k[2]; ++kw, at += p->cpg) {
          const int64_t iw = ow * w->stride[2] - w->pad[2] + kw * w->dil[2];
          if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1] || iw < 0 || iw >= w->in[2])
            memset(at, 0, run);
          else
            memcpy(at, c->xs + ((id * w->in[1] + ih) * w->in[2] + iw) * p->c, run);
        }
      }
    }
    if (p->kg < p->kp)
      row[p->kg] = 0;
  }
}

/* The parts split the pixels, in blocks of whole tiles. */
static void ref_qconv_cl_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qconv_cl_gemm *c = (const ref_qconv_cl_gemm *)arg;
  const ref_qconv_params *p = c->p;
  int16_t *col = (int16_t *)ref_scratch_at(scratch, p->col_at);
  int64_t lo, hi, r, n;
  ref_qg g = c->g;
  ref_split(ref_window_out_count(&p->w), REF_QG_MR, index, parts, &lo, &hi);
  for (r = lo; r < hi; r += n) {
    n = ref_qi_min(p->block, hi - r);
    if (p->pointwise) {
      ref_qg_run(&g, r, r + n, 0, p->mpg);
      continue;
    }
    ref_qconv_cl_im2col(c, r, n, col);
    g.p = col; /* the block's rows, as rows [0, n) */
    g.out.y = ref_qg_y(&c->g.out, r * g.out.y_row);
    ref_qg_run(&g, 0, n, 0, p->mpg);
  }
}

/* In-place lean convolutions. A result of the input's shape (M = C, every output extent the
 * input's) may take the input's buffer when the input dies at the node (the planner's
 * inplace_input): a depthwise convolution copies each channel's plane into its scratch before it
 * writes that channel, and a 1 x 1 one (one group) each block of pixels into its lean block
 * before it writes those pixels (REF_QCONV_INPLACE_LOCAL). Any other of one group over a 2-D
 * map (depth 1) with a window of stride and dilation 1 down the rows and pads under the window's
 * height runs a row of outputs at a time from a copy of the input rows that row's windows read
 * (REF_QCONV_INPLACE_ROWS; rows in the pads hold the zero point): output row oy overwrites input
 * row oy, which the next rows' windows then read from the copy. An image's largest convolutions
 * (a residual block's 3 x 3 ones) thus need one map and the copy, not two maps. */
enum { REF_QCONV_INPLACE_NONE, REF_QCONV_INPLACE_LOCAL, REF_QCONV_INPLACE_ROWS };

static int ref_qconv_inplace_way(const ref_qconv_params *p) {
  int i;
  if (!p->q.lean || p->q.raw || p->channels_last || p->m != p->c)
    return REF_QCONV_INPLACE_NONE;
  for (i = 0; i < 3; ++i)
    if (p->w.out[i] != p->w.in[i])
      return REF_QCONV_INPLACE_NONE;
  if ((p->depthwise && !ref_qconv_global(p)) || (p->unit_window && p->group == 1))
    return REF_QCONV_INPLACE_LOCAL;
  if (p->group == 1 && !p->depthwise && !p->unit_window && p->w.in[0] == 1 && p->w.stride[1] == 1 &&
      p->w.dil[1] == 1 && p->w.pad[1] < p->w.k[1] && p->w.pad_end[1] < p->w.k[1])
    return REF_QCONV_INPLACE_ROWS;
  return REF_QCONV_INPLACE_NONE;
}

/* Where REF_QCONV_INPLACE_ROWS keeps its input rows in the scratch: after the window rows'
 * offsets (ref_qconv_scratch). */
static size_t ref_qconv_ring_at(const ref_qconv_params *p) {
  return p->rows_at + ref_nn_align((size_t)(p->cpg * p->w.k[0] * p->w.k[1]) * sizeof(int));
}

/* REF_QCONV_INPLACE_ROWS over one image whose result is its input (l->x == l->y): the k rows
 * of the window of output row oy (input rows oy - pad to oy - pad + k - 1) kept in the ring,
 * [C][k][W] bytes, as the input of a window k rows high without pads, one part. */
static void ref_qconv_lean_rows_inplace(const ref_qconv_lean *l, unsigned char *scratch) {
  const ref_qconv_params *p = l->p;
  const int h = (int)p->w.in[1], wd = (int)p->w.in[2], k = (int)p->w.k[1], pad = (int)p->w.pad[1];
  const int c = (int)p->c;
  const unsigned char zero = (unsigned char)l->xz;
  unsigned char *ring = scratch + ref_qconv_ring_at(p);
  ref_qconv_params rp = *p;
  ref_qconv_lean rl = *l;
  int oy, s, ci;
  rp.w.in[1] = k;
  rp.w.out[1] = 1;
  rp.w.pad[1] = rp.w.pad_end[1] = 0;
  rl.p = &rp;
  rl.x = ring;
  for (oy = 0; oy < h; ++oy) {
    for (s = oy == 0 ? 0 : k - 1; s < k; ++s) { /* the new rows: all k at first, then one */
      const int row = oy - pad + s;
      for (ci = 0; ci < c; ++ci) {
        unsigned char *rows = ring + (int64_t)ci * k * wd, *to = rows + (int64_t)s * wd;
        if (oy > 0) /* the rows kept move up one */
          memmove(rows, rows + wd, (size_t)(k - 1) * wd);
        if (row >= 0 && row < h) /* not yet overwritten: rows from oy on are the input's */
          memcpy(to, l->x + ((int64_t)ci * h + row) * wd, (size_t)wd);
        else
          memset(to, zero, (size_t)wd);
      }
    }
    rl.y = l->y + (int64_t)oy * wd * (int64_t)ref_qi_lean_esize(&l->out);
    ref_qconv_lean_part(&rl, 0, 1, scratch);
  }
}

static odla_status ref_qconv_lean_run(const ref_node *node, const ref_io *io) {
  const ref_qconv_params *p = (const ref_qconv_params *)node->params;
  const int64_t ipix = ref_window_in_count(&p->w), opix = ref_window_out_count(&p->w);
  const int32_t xz = io->in[REF_QI_XZ] ? ref_qi_load(p->q.x_type, io->in[REF_QI_XZ], 0) : 0;
  const int64_t macs = opix * p->mpg * p->kg;
  ref_qg_lean_out out;
  int64_t n;
  const odla_status s = ref_qi_lean_epilogue(node, io, &p->q, p->kg, &out);
  if (s != ODLA_SUCCESS)
    return s;
  for (n = 0; n < p->n; ++n) {
    const unsigned char *xn = (const unsigned char *)io->in[REF_QI_X] + n * p->c * ipix;
    unsigned char *yn = (unsigned char *)io->out[0] + n * p->m * opix * ref_qi_lean_esize(&out);
    ref_qconv_lean l;
    l.p = p;
    l.x = xn;
    l.xz = xz;
    l.w = (const int8_t *)io->in[REF_QI_W];
    l.out = out;
    l.y = yn;
    l.y_pitch = opix;
    l.tail = p->q.tail_at ? (const int8_t *)p + p->q.tail_at : NULL;
    if (yn == xn && ref_qconv_inplace_way(p) == REF_QCONV_INPLACE_ROWS)
      ref_qconv_lean_rows_inplace(&l, (unsigned char *)io->scratch);
    else if (p->depthwise)
      ref_parallel(ref_io_threads(io), ref_qi_parts(io, macs, p->c), ref_qconv_depthwise_lean_part,
                   &l, (unsigned char *)io->scratch);
    else
      ref_parallel(ref_io_threads(io),
                   ref_qi_parts(io, macs, (opix + REF_QG_LEAN_PIXELS - 1) / REF_QG_LEAN_PIXELS),
                   ref_qconv_lean_part, &l, (unsigned char *)io->scratch);
  }
  return ODLA_SUCCESS;
}

static odla_status ref_qconv_run(const ref_node *node, const ref_io *io) {
  const ref_qconv_params *p = (const ref_qconv_params *)node->params;
  const int64_t ipix = ref_window_in_count(&p->w), opix = ref_window_out_count(&p->w);
  const int64_t macs = opix * p->mpg * p->kg;
  unsigned char *scratch = (unsigned char *)io->scratch;
  int16_t *xs = (int16_t *)ref_scratch_at(scratch, p->q.xs_at);
  const int32_t xz = io->in[REF_QI_XZ] ? ref_qi_load(p->q.x_type, io->in[REF_QI_XZ], 0) : 0;
  const unsigned char *x = (const unsigned char *)io->in[REF_QI_X];
  const int16_t *wp;
  ref_qg_out out;
  int64_t n, g;
  odla_status s;
  if (p->n == 0 || p->m == 0)
    return ODLA_SUCCESS; /* no outputs (and perhaps no scratch) */
  if (p->q.lean)
    return ref_qconv_lean_run(node, io);
  s = ref_qi_epilogue(node, io, &p->q, ref_scratch_at(scratch, p->q.chan_at), &out);
  if (s != ODLA_SUCCESS)
    return s;
  wp = ref_qi_kernel(node, io, &p->q, REF_QCONV_PACK(p->q.u8s8));
  if (p->q.u8s8) { /* sub: the kernel's sums times the (flipped) zero point, modulo 2^32 */
    const uint32_t zs = (uint32_t)((p->q.x_type == ODLA_INT8 ? 128 : 0) + xz);
    const int32_t *sums = (const int32_t *)(const void *)((const unsigned char *)wp + p->q.sums_at);
    int32_t *sub = (int32_t *)ref_scratch_at(scratch, p->q.sub_at);
    for (g = 0; g < p->m; ++g)
      sub[g] = (int32_t)(zs * (uint32_t)sums[g]);
  }
  for (n = 0; n < p->n; ++n) {
    const unsigned char *xn = x + n * p->c * ipix;
    unsigned char *yn = (unsigned char *)io->out[0] + n * p->m * opix * ref_qg_esize(&out);
    if (p->channels_last || (!p->depthwise && !p->unit_window)) { /* the staged image */
      ref_qconv_stage st;
      st.p = p;
      st.x = xn;
      st.xz = xz;
      st.xs = xs;
      ref_parallel(ref_io_threads(io),
                   ipix * p->c < REF_QI_STAGE_PARALLEL_MIN
                       ? 1
                       : (int)ref_qi_min(ref_threads_count(ref_io_threads(io)), p->c),
                   p->channels_last ? ref_qconv_stage_part : ref_qconv_pad_part, &st, scratch);
    }
    if (p->depthwise && !p->channels_last) {
      ref_qconv_cf d;
      d.p = p;
      d.x = xn;
      d.xz = xz;
      d.wp = wp;
      d.out = out;
      d.out.y = yn;
      ref_parallel(ref_io_threads(io),
                   ref_qi_parts(io, opix * p->m * ref_window_k_count(&p->w) * REF_QI_DW_COST, p->c),
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
      d.out.y_row = p->m;
      ref_parallel(ref_io_threads(io),
                   ref_qi_parts(io, opix * p->m * ref_window_k_count(&p->w) * REF_QI_DW_COST, opix),
                   ref_qconv_depthwise_part, &d, scratch);
      continue;
    }
    for (g = 0; g < p->group; ++g) {
      ref_qg gm;
      gm.kp = p->kp;
      gm.out = ref_qg_out_from(out, g * p->mpg);
      if (p->channels_last) {
        ref_qconv_cl_gemm c;
        gm.p = xs + g * p->cpg; /* pointwise: the staged image's rows; else set per block */
        gm.ldp = p->pointwise ? p->c : p->kp;
        gm.v = wp + g * ref_qg_v_count(p->kp, p->mpg);
        gm.v_col0 = 0;
        gm.out.y = yn + g * p->mpg * ref_qg_esize(&out);
        gm.out.y_row = p->m;
        c.p = p;
        c.xs = xs + g * p->cpg;
        c.g = gm;
        ref_parallel(ref_io_threads(io), ref_qi_parts(io, macs, (opix + REF_QG_MR - 1) / REF_QG_MR),
                     ref_qconv_cl_part, &c, scratch);
      } else {
        ref_qconv_cf_gemm c;
        gm.p = wp + g * p->mpg * p->kp;
        gm.ldp = p->kp;
        gm.out.per_row = 1;
        gm.out.y = yn + g * p->mpg * opix * ref_qg_esize(&out);
        gm.out.y_row = opix;
        c.p = p;
        c.x = xn + g * p->cpg * ipix;
        c.xp = xs + g * p->cpg * ref_qconv_plane_values(&p->w);
        c.xz = xz;
        c.g = gm;
        c.xb = (const unsigned char *)xs + g * p->cpg * ref_qconv_plane_values(&p->w);
        c.g8.kq = p->q.kq;
        c.g8.p = (const unsigned char *)wp + g * p->mpg * p->q.kq;
        c.g8.ldp = p->q.kq;
        c.g8.sub = (const int32_t *)ref_scratch_at(scratch, p->q.sub_at) + g * p->mpg;
        c.g8.kernel_rows = 1;
        c.g8.out = gm.out;
        ref_qconv_cf_gemm_run(io, &c);
      }
    }
  }
  return ODLA_SUCCESS;
}

/* Lays out a Conv node's scratch: channel arrays, staged image (channels last or depthwise),
 * kernel (unless packed by the builder), then the im2col block (channels first: V panels and
 * two row buffers; channels last: P rows) or the depthwise sums. */
static void ref_qconv_scratch(ref_qconv_params *p) {
  const int64_t opix = ref_window_out_count(&p->w);
  size_t at = 0;
  if (p->q.lean && p->depthwise) { /* the padded plane, the window rows' offsets */
    p->plane_at = at;
    at += ref_nn_align((size_t)ref_qconv_lean_plane_values(&p->w) * sizeof(int16_t));
    p->rows_at = at;
    p->q.bytes = at + ref_nn_align((size_t)(p->w.k[0] * p->w.k[1]) * sizeof(int));
    return;
  }
  if (p->q.lean && ref_qconv_unit_column(p)) { /* a lean column */
    p->col_at = p->rows_at = at;
    p->q.bytes = ref_nn_align((size_t)((p->kg + 3) / 4 * 2) * sizeof(int32_t));
    return;
  }
  if (p->q.lean && p->unit_window) { /* a wide lean block, built from the input's runs */
    p->col_at = p->rows_at = at;
    p->q.bytes = ref_nn_align((size_t)ref_qg_lean_wide_words(p->kg) * sizeof(int32_t));
    return;
  }
  if (p->q.lean) { /* a wide lean block and (where it may stage one) a column, the window's rows */
    p->col_at = at;
    at += ref_nn_align((size_t)ref_qg_lean_wide_words(p->kg) * sizeof(int32_t) +
                       (ref_qconv_lean_stages(p) ? (size_t)ref_qi_round_up(p->kg, 4) : 0) *
                           sizeof(int16_t));
    p->rows_at = at;
    at = ref_qconv_ring_at(p); /* then an in-place convolution's input rows */
    if (ref_qconv_inplace_way(p) == REF_QCONV_INPLACE_ROWS)
      at += ref_nn_align((size_t)(p->c * p->w.k[1] * p->w.in[2]));
    p->q.bytes = at;
    return;
  }
  p->q.chan_at = at;
  at += ref_qi_chan_bytes(p->m);
  p->q.xs_at = at; /* the staged image: channels last, or padded planes */
  if (p->channels_last)
    at += ref_nn_align((size_t)(ref_window_in_count(&p->w) * p->c) * sizeof(int16_t));
  else if (!p->depthwise && !p->unit_window)
    at += ref_nn_align((size_t)(ref_qconv_plane_values(&p->w) * p->c) * sizeof(int16_t));
  p->q.wp_at = at;
  if (!p->q.packed)
    at += ref_nn_align((size_t)p->packed_values * sizeof(int16_t));
  p->col_at = p->acc_at = at;
  if (p->depthwise && p->channels_last) { /* one pixel's channel sums */
    at += ref_nn_align((size_t)p->c * sizeof(int32_t));
  } else if (p->depthwise) { /* a plane's sums (the last row's block room), padded plane, taps */
    at +=
        ref_nn_align((size_t)(opix - p->w.out[2] + ref_qg_row_room(p->w.out[2])) * sizeof(int32_t));
    p->plane_at = at;
    at += ref_nn_align((size_t)ref_qconv_plane_values(&p->w) * sizeof(int16_t));
    p->taps_at = at;
    at += ref_nn_align((size_t)ref_window_k_count(&p->w) * sizeof(int16_t));
  } else if (p->channels_last) { /* blocks of whole tiles of pixels */
    p->block = REF_QI_COL_VALUES / p->kp / REF_QG_MR * REF_QG_MR;
    p->block = p->block < REF_QG_MR ? REF_QG_MR : ref_qi_min(p->block, REF_QI_ROW_BLOCK);
    p->block = ref_qi_min(p->block, ref_qi_round_up(opix, REF_QG_MR));
    if (!p->pointwise)
      at += ref_nn_align((size_t)(p->block * p->kp) * sizeof(int16_t));
  } else { /* blocks of whole panels of pixels */
    p->block = REF_QI_COL_VALUES / p->kp / REF_QG_NR * REF_QG_NR;
    p->block = p->block < REF_QG_NR ? REF_QG_NR : p->block;
    p->block = ref_qi_min(p->block, ref_qi_round_up(opix, REF_QG_NR));
    at += ref_nn_align((size_t)(p->block * p->kp) * sizeof(int16_t));
    p->rows_at = at;
    at += ref_nn_align((size_t)(2 * p->block) * sizeof(int16_t));
    p->runs_at = at; /* at most a run a pixel */
    at += ref_nn_align((size_t)p->block * sizeof(ref_qconv_run_of));
    p->q.sub_at =
        at; /* the 8-bit product's sub (its blocks, rows and planes fit the int16 ones') */
    if (p->q.packed)
      at += ref_nn_align((size_t)p->m * sizeof(int32_t));
  }
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
  int8_t tail[2 * REF_QI_LEAN_TAIL_DEPTH + 4];
  size_t tail_bytes = 0;
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
  if (p.c == 0) /* the kernels sum over at least one channel (their blocks divide by it) */
    return ref_fail(ODLA_UNSUPPORTED_OP, op,
                    "input %s has no channels: a convolution over none is not supported",
                    ref_shape_str(xs, s1, sizeof s1));
  for (i = 0; i < r - 2 && i < REF_SPATIAL; ++i)
    kernel_dims[i] = ws->dims[cl ? i : i + 2];
  cf = cl ? ref_cl_as_channels_first(xs) : ref_shape_copy(xs);
  if (!ref_make_window(op, &cf, kernel_dims, strides, dilations, paddings_front, paddings_back,
                       NULL, &p.w))
    return NULL;
  { /* The scratch stages every channel's padded plane (int16): with 32-bit pads far more than
       the input, so its count is checked before the scratch's products are formed. */
    int64_t plane[3], values = p.c;
    ref_qconv_plane_dims(&p.w, plane);
    for (i = 0; i < 3; ++i)
      values = ref_mul_sat(values, plane[i]);
    if (values > (int64_t)(REF_MAX_VALUE_BYTES / sizeof(int16_t)))
      return ref_fail(ODLA_INVALID_PARAM, op,
                      "the padded input planes, %lld channels of %lldx%lldx%lld, pass 2^47 values",
                      (long long)p.c, (long long)plane[0], (long long)plane[1],
                      (long long)plane[2]);
  }
  if (!ref_qi_check_channels(op, in, p.m, output_min, output_max, &p.q))
    return NULL;
  if (cl) {
    out.element_type = p.q.y_type;
    out.shape = ref_shape_copy(xs);
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
  p.kp = ref_qi_even(p.kg);
  p.channels_last = cl;
  p.depthwise = p.cpg == 1 && p.mpg == 1;
  p.unit_window = ref_window_k_count(&p.w) == 1;
  for (i = 0; i < REF_SPATIAL; ++i)
    p.unit_window &= p.w.stride[i] == 1 && p.w.pad[i] == 0 && p.w.pad_end[i] == 0;
  p.pointwise = cl && p.unit_window && p.cpg % 2 == 0;
  p.packed_values = p.depthwise ? p.m * p.kg
                    : cl        ? p.group * ref_qg_v_count(p.kp, p.mpg)
                                : p.m * p.kp;
  p.q.lean = !cl && ref_qi_lean_kernel(in) && ref_count(xs) < INT32_MAX / 2 &&
             ref_count(&out.shape) < INT32_MAX / 2 && ref_count(ws) < INT32_MAX / 2;
  for (i = 0; i < 3; ++i) { /* the int window: every extent and step under 2^20 */
    p.q.lean &= (p.w.in[i] | p.w.out[i] | p.w.k[i] | p.w.stride[i] | p.w.pad[i] | p.w.dil[i]) <
                (int64_t)1 << 20;
  }
  p.q.packed = !p.q.lean && ref_qi_constant_kernel(in);
  if (p.q.packed && p.depthwise && !cl) { /* the 3 x 3 kernels on bytes need int8 taps */
    const odla_value wv = in[REF_QI_W], wzv = in[REF_QI_WZ];
    int64_t t;
    p.taps8 = 1;
    for (t = 0; t < ref_count(&wv->type.shape); ++t) {
      const int32_t tap =
          ref_qi_load(p.q.w_type, wv->data, t) -
          (wzv ? ref_qi_load(p.q.w_type, wzv->data, ref_count(&wzv->type.shape) == 1 ? 0 : t / p.kg)
               : 0);
      p.taps8 &= tap >= -128 && tap <= 127;
    }
  }
  if (p.q.packed && !cl && !p.depthwise) { /* the 8-bit product's room, whatever this CPU takes */
    p.q.u8s8 = ref_qi_u8s8(in);
    p.q.kq = ref_qi_round_up(p.kg, 4);
    p.q.sums_at = (size_t)ref_qi_round_up(p.m * p.q.kq, 16);
    p.packed_values = ref_qi_packed_room(p.packed_values, p.q.sums_at, p.m);
  }
  ref_qi_lean_know(in, &p.q, p.kg);
  ref_qconv_scratch(&p);
  /* The lean tail: the last two rows of a kernel whose last row's last group would read past
     it (depth 3 and up, not a multiple of 4; pairs of rows in the last group), when small. */
  if (p.q.lean && !p.depthwise && p.kg % 4 != 0 && p.kg >= 3 && p.mpg % 2 == 0 &&
      p.kg <= REF_QI_LEAN_TAIL_DEPTH) {
    memset(tail, 0, sizeof tail);
    memcpy(tail, (const int8_t *)in[REF_QI_W]->data + (p.m - 2) * p.kg, (size_t)(2 * p.kg));
    tail_bytes = (size_t)(2 * p.kg + 4 - p.kg % 4);
  }
  v = ref_qi_add(op, ref_qconv_run, in, &p, sizeof p, &p.q, p.packed_values,
                 REF_QCONV_PACK(p.q.u8s8), out, value_id, tail, tail_bytes);
  if (v) {
    v->node->scratch_bytes = p.q.bytes;
    v->node->flops = ref_mul_sat(2 * p.n * p.m * ref_window_out_count(&p.w), p.kg);
    if (ref_qconv_inplace_way(&p) != REF_QCONV_INPLACE_NONE)
      v->node->inplace_input = REF_QI_X;
  }
  return v;
}

/* ---- odla_ExtQLinearMatMul ----------------------------------------------------------------- */

typedef struct {
  ref_qi_common q;
  int64_t m, n, k, kp;                                    /* kp: k rounded up to even */
  int64_t kernel_batches;                                 /* matrices in the kernel */
  int batch_rank;                                         /* >= 1 (a batch of 1 when none) */
  int64_t batch[ODLA_MAX_DIMENSION];                      /* output batch dims */
  int64_t sa[ODLA_MAX_DIMENSION], sb[ODLA_MAX_DIMENSION]; /* matrix strides, 0 = broadcast */
} ref_qmm_params; /* q.u8s8: the packed kernel's byte panels, then each matrix's column sums */

/* Packs each kernel matrix [K, N] as int16 w - wz[n] in V panels (columns = the N output
 * columns), matrix b's from b * ref_qg_v_count(kp, N); pads are zero. */
static void ref_qmm_pack(const void *params, const void *w, const void *wz, int wz_per_channel,
                         int16_t *dst) {
  const ref_qmm_params *p = (const ref_qmm_params *)params;
  const int64_t vcount = ref_qg_v_count(p->kp, p->n);
  int64_t b, col, i;
  memset(dst, 0, (size_t)(p->kernel_batches * vcount) * sizeof *dst);
  for (b = 0; b < p->kernel_batches; ++b)
    for (col = 0; col < p->n; ++col) {
      const int32_t z = wz ? ref_qi_load(p->q.w_type, wz, wz_per_channel ? col : 0) : 0;
      int16_t *d = dst + b * vcount;
      for (i = 0; i < p->k; ++i)
        d[ref_qg_v_at(p->kp, i, col)] =
            (int16_t)(ref_qi_load(p->q.w_type, w, (b * p->k + i) * p->n + col) - z);
    }
}

#if REF_X86_TARGETS
/* The 8-bit product's kernel (ref_qg8_v_at) and its column sums; its zero points are 0. */
static void ref_qmm_pack8(const void *params, const void *w, const void *wz, int wz_per_channel,
                          int16_t *dst) {
  const ref_qmm_params *p = (const ref_qmm_params *)params;
  const int64_t vbytes = ref_qg_v_count(p->q.kq, p->n);
  int8_t *d = (int8_t *)dst;
  int32_t *sums = (int32_t *)(void *)((unsigned char *)dst + p->q.sums_at);
  int64_t b, col, i;
  (void)wz;
  (void)wz_per_channel;
  memset(d, 0, p->q.sums_at);
  for (b = 0; b < p->kernel_batches; ++b)
    for (col = 0; col < p->n; ++col) {
      int32_t sum = 0;
      for (i = 0; i < p->k; ++i) {
        const int8_t v = ((const int8_t *)w)[(b * p->k + i) * p->n + col];
        d[b * vbytes + ref_qg8_v_at(p->q.kq, i, col)] = v;
        sum += v;
      }
      sums[b * p->n + col] = sum;
    }
}
#define REF_QMM_PACK(u8s8) ((u8s8) ? ref_qmm_pack8 : ref_qmm_pack)
#else
#define REF_QMM_PACK(u8s8) ref_qmm_pack
#endif

/* A lean batch: each row of x staged and multiplied by the kernel matrix w in place. */
static void ref_qmm_lean_batch(const ref_qmm_params *p, const ref_qg_lean_out *o,
                               const unsigned char *x, int32_t xz, const int8_t *w,
                               unsigned char *scratch, unsigned char *y) {
  int16_t *xs = (int16_t *)ref_scratch_at(scratch, p->q.xs_at);
  int32_t *acc = (int32_t *)ref_scratch_at(scratch, p->q.chan_at);
  const size_t es = ref_qi_lean_esize(o);
  int64_t r;
  for (r = 0; r < p->m; ++r) {
    ref_qi_widen(p->q.x_type, x + r * p->k, 1, p->k, xz, xs, 1);
    ref_qg_lean_row(p->k, xs, w, p->n, p->n, acc);
    ref_qg_lean_put_channels(o, 0, p->n, acc, y + r * p->n * es);
  }
}

/* Steps idx (the batch index) and the input's and the kernel's matrix offsets oa, ob to the
 * next batch, as odla_BatchMatMul walks them; 0 after the last. */
static int ref_qmm_next_batch(const ref_qmm_params *p, int64_t *idx, int64_t *oa, int64_t *ob) {
  int d;
  for (d = p->batch_rank - 1; d >= 0; --d) {
    *oa += p->sa[d];
    *ob += p->sb[d];
    if (++idx[d] < p->batch[d])
      return 1;
    *oa -= p->sa[d] * p->batch[d];
    *ob -= p->sb[d] * p->batch[d];
    idx[d] = 0;
  }
  return 0;
}

#if REF_X86_TARGETS
/* The batches of an 8-bit product (ref_qi_u8s8): rows staged as bytes (int8 data plus 128),
 * each matrix's col_sub from its column sums and the input's zero point. */
static odla_status ref_qmm_run8(const ref_qmm_params *p, const ref_io *io,
                                const unsigned char *packed, int32_t xz, const ref_qg_out *out) {
  unsigned char *scratch = (unsigned char *)io->scratch;
  uint8_t *xs = (uint8_t *)ref_scratch_at(scratch, p->q.xs_at);
  int32_t *sub = (int32_t *)ref_scratch_at(scratch, p->q.sub_at);
  const int32_t *sums = (const int32_t *)(const void *)(packed + p->q.sums_at);
  const uint32_t shift = (uint32_t)((p->q.x_type == ODLA_INT8 ? 128 : 0) + xz); /* in [0, 255] */
  const unsigned char flip = p->q.x_type == ODLA_INT8 ? 0x80 : 0; /* int8 v as v + 128 */
  const unsigned char *x = (const unsigned char *)io->in[REF_QI_X];
  unsigned char *y = (unsigned char *)io->out[0];
  int64_t idx[ODLA_MAX_DIMENSION] = {0}, oa = 0, ob = 0, r, i, c;
  ref_qg8 g;
  ref_qi_job job;
  g.kq = p->q.kq;
  g.p = xs;
  g.ldp = p->q.kq;
  g.v_col0 = 0;
  g.sub = sub;
  g.kernel_rows = 0;
  g.out = *out;
  g.out.y_row = p->n;
  job.g.kp = p->q.kq;
  job.rows = p->m;
  job.cols = p->n;
  job.g8 = &g;
  for (;;) { /* the batches, as odla_BatchMatMul walks them */
    const unsigned char *xb = x + oa * p->m * p->k;
    for (r = 0; r < p->m; ++r) {
      ref_qi_flip_copy(xs + r * p->q.kq, xb + r * p->k, p->k, flip);
      for (i = p->k; i < p->q.kq; ++i)
        xs[r * p->q.kq + i] = 0;
    }
    for (c = 0; c < p->n; ++c) /* modulo 2^32, as the sums */
      sub[c] = (int32_t)(shift * (uint32_t)sums[ob * p->n + c]);
    g.v = packed + ob * ref_qg_v_count(p->q.kq, p->n);
    g.out.y = y;
    ref_qi_job_run(io, &job);
    y += p->m * p->n * ref_qg_esize(&g.out);
    if (!ref_qmm_next_batch(p, idx, &oa, &ob))
      return ODLA_SUCCESS;
  }
}
#endif

static odla_status ref_qmm_run(const ref_node *node, const ref_io *io) {
  const ref_qmm_params *p = (const ref_qmm_params *)node->params;
  const int64_t vcount = ref_qg_v_count(p->kp, p->n);
  unsigned char *scratch = (unsigned char *)io->scratch;
  int16_t *xs = (int16_t *)ref_scratch_at(scratch, p->q.xs_at);
  const int32_t xz = io->in[REF_QI_XZ] ? ref_qi_load(p->q.x_type, io->in[REF_QI_XZ], 0) : 0;
  const unsigned char *x = (const unsigned char *)io->in[REF_QI_X];
  unsigned char *y = (unsigned char *)io->out[0];
  int64_t idx[ODLA_MAX_DIMENSION] = {0}, oa = 0, ob = 0, r;
  const int16_t *wp = NULL;
  ref_qg_lean_out lean;
  ref_qi_job job;
  odla_status s;
  if (ref_count(&node->outputs[0]->type.shape) == 0)
    return ODLA_SUCCESS;
  s = p->q.lean
          ? ref_qi_lean_epilogue(node, io, &p->q, p->k, &lean)
          : ref_qi_epilogue(node, io, &p->q, ref_scratch_at(scratch, p->q.chan_at), &job.g.out);
  if (s != ODLA_SUCCESS)
    return s;
  if (!p->q.lean)
    wp = ref_qi_kernel(node, io, &p->q, REF_QMM_PACK(p->q.u8s8));
#if REF_X86_TARGETS
  if (p->q.u8s8)
    return ref_qmm_run8(p, io, (const unsigned char *)wp, xz, &job.g.out);
#endif
  job.g8 = NULL;
  job.rows = p->m;
  job.cols = p->n;
  job.g.kp = p->kp;
  job.g.p = xs;
  job.g.ldp = p->kp;
  job.g.v_col0 = 0;
  job.g.out.y_row = p->n;
  for (;;) { /* the batches, as odla_BatchMatMul walks them */
    const unsigned char *xb = x + oa * p->m * p->k;
    if (p->q.lean) {
      ref_qmm_lean_batch(p, &lean, xb, xz, (const int8_t *)io->in[REF_QI_W] + ob * p->k * p->n,
                         scratch, y);
      y += p->m * p->n * ref_qi_lean_esize(&lean);
    } else if (p->kp == p->k) {
      ref_qi_widen(p->q.x_type, xb, 1, p->m * p->k, xz, xs, 1);
    } else {
      for (r = 0; r < p->m; ++r) { /* rows of kp, the pad 0 */
        ref_qi_widen(p->q.x_type, xb + r * p->k, 1, p->k, xz, xs + r * p->kp, 1);
        xs[r * p->kp + p->k] = 0;
      }
    }
    if (!p->q.lean) {
      job.g.v = wp + ob * vcount;
      job.g.out.y = y;
      ref_qi_job_run(io, &job);
      y += p->m * p->n * ref_qg_esize(&job.g.out);
    }
    if (!ref_qmm_next_batch(p, idx, &oa, &ob))
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
  int64_t stride_a = 1, stride_b = 1, packed;
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
  if (p.k == 0) /* the kernels sum over at least one (a run left the output unwritten) */
    return ref_fail(ODLA_UNSUPPORTED_OP, op,
                    "input %s and kernel %s have an inner dimension of 0: not supported",
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
  p.kp = ref_qi_even(p.k);
  p.q.lean = ref_qi_lean_kernel(in);
  p.q.packed = !p.q.lean && ref_qi_constant_kernel(in);
  p.q.u8s8 = p.q.packed && ref_qi_u8s8(in);
  p.q.kq = ref_qi_round_up(p.k, 4);
  p.q.sums_at = (size_t)ref_qi_round_up(p.kernel_batches * ref_qg_v_count(p.q.kq, p.n), 16);
  ref_qi_lean_know(in, &p.q, p.k);
  p.q.chan_at = at; /* lean: a row's sums */
  at += p.q.lean ? ref_nn_align((size_t)p.n * sizeof(int32_t)) : ref_qi_chan_bytes(p.n);
  p.q.xs_at = at; /* the staged input rows (lean: one) */
  at += ref_nn_align((size_t)((p.q.lean ? 1 : p.m) * p.kp) * sizeof(int16_t));
  p.q.wp_at = at;
  if (!p.q.packed && !p.q.lean)
    at += ref_nn_align((size_t)(p.kernel_batches * ref_qg_v_count(p.kp, p.n)) * sizeof(int16_t));
  p.q.sub_at = at; /* the 8-bit product's sub (its staged rows fit in xs: kq <= 2 * kp) */
  if (p.q.packed)
    at += ref_nn_align((size_t)p.n * sizeof(int32_t));
  p.q.bytes = at;
  packed = ref_qi_packed_room(p.kernel_batches * ref_qg_v_count(p.kp, p.n), p.q.sums_at,
                              p.kernel_batches * p.n);
  v = ref_qi_add(op, ref_qmm_run, in, &p, sizeof p, &p.q, packed, REF_QMM_PACK(p.q.u8s8), out,
                 value_id, NULL, 0);
  if (v) {
    v->node->scratch_bytes = p.q.bytes;
    v->node->flops = ref_mul_sat(2 * p.m * p.n, p.k);
    for (i = 0; i < p.batch_rank; ++i)
      v->node->flops = ref_mul_sat(v->node->flops, p.batch[i]);
  }
  return v;
}

/* ---- odla_ExtQLinearAdd, odla_ExtQLinearMul ------------------------------------------------ */

/* The sum or product of two 8-bit values less their zero points times the multipliers is
 * exact in float64 (under 2^41 and 2^48), and so is its scaling by 2^-shift: one rounding,
 * ref_qg_round_even, gives the exact result. Rows of the broadcast (ops_binary.h) run in loops
 * the compiler vectorizes, one per operand and result type. Where float64 is software
 * (REF_QG_FLOAT64 0: 32-bit Arm) the rows compute the same in int64 instead, rounded by
 * ref_qg_round_shift. */
typedef struct {
  ref_bcast_params b; /* first: the row functions' ctx is this block */
  int mul;
  double ma, mb; /* Add: the multipliers / 2^shift; Mul: ma the multiplier / 2^shift */
  double za, zb, zy, lo, hi;
  int32_t ia, ib, shift; /* the multipliers and shift */
  int word;              /* shift <= 31 and every quotient fits in int32: ref_qbin_round_word */
} ref_qbin_params;

#if REF_QG_FLOAT64
#define REF_QBIN_NUM double
#define REF_QBIN_PARAMS                                                                            \
  const double ma = q->ma, mb = q->mb, za = q->za, zb = q->zb, zy = q->zy, lo = q->lo, hi = q->hi
#define REF_QBIN_ADD(x, z) ((x)*ma + (z)*mb)
#define REF_QBIN_MUL(x, z) ((x) * (z)*ma)
/* y[i] from the exact real result v: rounded, shifted by the zero point, clamped, through
 * int32 (a conversion compilers vectorize, where one straight to 8 bits they do not). */
#define REF_QBIN_STORE(Y, EXPR)                                                                    \
  do {                                                                                             \
    double v = ref_qg_round_even(EXPR) + zy;                                                       \
    v = v < lo ? lo : v; /* two steps, each a MAXPD or MINPD */                                    \
    y[i] = (Y)(int32_t)(v > hi ? hi : v);                                                          \
  } while (0)
#else
#define REF_QBIN_NUM int32_t
#define REF_QBIN_PARAMS                                                                            \
  const int32_t ma = q->ia, mb = q->ib, za = (int32_t)q->za, zb = (int32_t)q->zb,                  \
                zy = (int32_t)q->zy, lo = (int32_t)q->lo, hi = (int32_t)q->hi, shift = q->shift
#define REF_QBIN_ADD(x, z) ((int64_t)(x)*ma + (int64_t)(z)*mb)
#define REF_QBIN_MUL(x, z) ((int64_t)((x) * (z)) * ma)
#define REF_QBIN_STORE(Y, EXPR)                                                                    \
  do {                                                                                             \
    const int64_t v = ref_qg_round_shift(EXPR, shift) + zy;                                        \
    y[i] = (Y)(v < lo ? lo : v > hi ? hi : v);                                                     \
  } while (0)
/* ref_qg_round_shift(t, shift) for shifts 1 to 31 where the quotient fits in int32, in 32-bit
 * words: t + 2^(shift-1) by ADDS/ADC, its quotient from the two words, and a tie (the low shift
 * bits of the sum all zero) rounded to even. The adds' shifts (30 and 31 on ResNet-8) took
 * ref_qg_round_shift's 64-bit path, 50 instructions an element on a Cortex-M4. */
static inline int32_t ref_qbin_round_word(int64_t t, int32_t shift) {
  const uint64_t u = (uint64_t)t + ((uint64_t)1 << (shift - 1));
  const uint32_t lo = (uint32_t)u, hi = (uint32_t)(u >> 32);
  const int32_t q = (int32_t)(hi << (32 - shift) | lo >> shift);
  return lo << (32 - shift) == 0 ? (int32_t)((uint32_t)q & ~1u) : q;
}
#define REF_QBIN_STORE_WORD(Y, EXPR)                                                               \
  do {                                                                                             \
    const int32_t v = ref_qbin_round_word(EXPR, shift) + zy;                                       \
    y[i] = (Y)(v < lo ? lo : v > hi ? hi : v);                                                     \
  } while (0)
#endif

/* The row's loops, by the operands' strides (1 or 0: broadcast), each storing by STORE. */
#define REF_QBIN_LOOPS(Y, EXPR, STORE)                                                             \
  do {                                                                                             \
    if (s[0] == 1 && s[1] == 1)                                                                    \
      for (i = 0; i < n; ++i) {                                                                    \
        const REF_QBIN_NUM x = a[i] - za, z = b[i] - zb;                                           \
        STORE(Y, EXPR);                                                                            \
      }                                                                                            \
    else if (s[0] == 1 && s[1] == 0)                                                               \
      for (i = 0; i < n; ++i) {                                                                    \
        const REF_QBIN_NUM x = a[i] - za, z = b[0] - zb;                                           \
        STORE(Y, EXPR);                                                                            \
      }                                                                                            \
    else if (s[0] == 0 && s[1] == 1)                                                               \
      for (i = 0; i < n; ++i) {                                                                    \
        const REF_QBIN_NUM x = a[0] - za, z = b[i] - zb;                                           \
        STORE(Y, EXPR);                                                                            \
      }                                                                                            \
    else                                                                                           \
      for (i = 0; i < n; ++i) {                                                                    \
        const REF_QBIN_NUM x = a[i * s[0]] - za, z = b[i * s[1]] - zb;                             \
        STORE(Y, EXPR);                                                                            \
      }                                                                                            \
  } while (0)

#if REF_QG_FLOAT64
#define REF_QBIN_BODY(Y, EXPR) REF_QBIN_LOOPS(Y, EXPR, REF_QBIN_STORE)
#else /* the word rounding where both operands are contiguous (a residual block's sum) */
#define REF_QBIN_BODY(Y, EXPR)                                                                     \
  do {                                                                                             \
    if (q->word && s[0] == 1 && s[1] == 1)                                                         \
      for (i = 0; i < n; ++i) {                                                                    \
        const REF_QBIN_NUM x = a[i] - za, z = b[i] - zb;                                           \
        REF_QBIN_STORE_WORD(Y, EXPR);                                                              \
      }                                                                                            \
    else                                                                                           \
      REF_QBIN_LOOPS(Y, EXPR, REF_QBIN_STORE);                                                     \
  } while (0)
#endif

#define REF_QBIN_ROW(name, A, B, Y, EXPR)                                                          \
  REF_HOT static void name(void *vy, const void *const *in, const int64_t *s, int64_t n,           \
                           const void *ctx) {                                                      \
    const ref_qbin_params *q = (const ref_qbin_params *)ctx;                                       \
    const A *a = (const A *)in[0];                                                                 \
    const B *b = (const B *)in[1];                                                                 \
    Y *y = (Y *)vy;                                                                                \
    REF_QBIN_PARAMS;                                                                               \
    int64_t i;                                                                                     \
    (void)mb;                                                                                      \
    REF_QBIN_BODY(Y, EXPR);                                                                        \
  }
#define REF_QBIN_ROWS(A, B, Y, SFX)                                                                \
  REF_QBIN_ROW(ref_qadd_##SFX, A, B, Y, REF_QBIN_ADD(x, z))                                        \
  REF_QBIN_ROW(ref_qmul_##SFX, A, B, Y, REF_QBIN_MUL(x, z))
REF_QBIN_ROWS(uint8_t, uint8_t, uint8_t, uuu)
REF_QBIN_ROWS(uint8_t, uint8_t, int8_t, uus)
REF_QBIN_ROWS(uint8_t, int8_t, uint8_t, usu)
REF_QBIN_ROWS(uint8_t, int8_t, int8_t, uss)
REF_QBIN_ROWS(int8_t, uint8_t, uint8_t, suu)
REF_QBIN_ROWS(int8_t, uint8_t, int8_t, sus)
REF_QBIN_ROWS(int8_t, int8_t, uint8_t, ssu)
REF_QBIN_ROWS(int8_t, int8_t, int8_t, sss)
#undef REF_QBIN_ROWS
#undef REF_QBIN_ROW
#undef REF_QBIN_STORE
#undef REF_QBIN_MUL
#undef REF_QBIN_ADD
#undef REF_QBIN_PARAMS
#undef REF_QBIN_NUM

/* Broadcasts of rank <= 2 (most, once ref_bcast_init merged their axes) split over the
 * threads: their rows, or, with too few rows, each row's elements; others run on one. */
enum { REF_QBIN_PARALLEL_MIN = 1 << 15 };

typedef struct {
  const ref_qbin_params *q;
  const ref_io *io;
} ref_qbin_job;

static void ref_qbin_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_qbin_job *j = (const ref_qbin_job *)arg;
  const ref_bcast *bc = &j->q->b.bc;
  const int64_t inner = bc->dims[bc->rank - 1], outer = bc->rank == 2 ? bc->dims[0] : 1;
  const int64_t s0[2] = {bc->strides[0][0], bc->strides[1][0]};
  const int64_t s1[2] = {bc->strides[0][bc->rank - 1], bc->strides[1][bc->rank - 1]};
  const unsigned char *a = (const unsigned char *)j->io->in[0];
  const unsigned char *b = (const unsigned char *)j->io->in[1];
  unsigned char *y = (unsigned char *)j->io->out[0];
  const void *row[2];
  int64_t lo, hi, o;
  (void)scratch;
  if (outer >= parts) {
    ref_split(outer, 1, index, parts, &lo, &hi);
    for (o = lo; o < hi; ++o) {
      row[0] = a + (bc->rank == 2 ? o * s0[0] : 0);
      row[1] = b + (bc->rank == 2 ? o * s0[1] : 0);
      j->q->b.fn(y + o * inner, row, s1, inner, j->q);
    }
    return;
  }
  ref_split(inner, 64, index, parts, &lo, &hi);
  for (o = 0; o < outer && lo < hi; ++o) {
    row[0] = a + (bc->rank == 2 ? o * s0[0] : 0) + lo * s1[0];
    row[1] = b + (bc->rank == 2 ? o * s0[1] : 0) + lo * s1[1];
    j->q->b.fn(y + o * inner + lo, row, s1, hi - lo, j->q);
  }
}

static odla_status ref_qbin_run(const ref_node *node, const ref_io *io) {
  const ref_qbin_params *q = (const ref_qbin_params *)node->params;
  static const size_t esize[2] = {1, 1};
  const int64_t n = ref_count(&node->outputs[0]->type.shape);
  ref_qbin_job job;
  if (n == 0)
    return ODLA_SUCCESS;
  if (q->b.bc.rank > 2 || n < REF_QBIN_PARALLEL_MIN) {
    ref_bcast_run(&q->b.bc, q->b.fn, io->out[0], 1, io->in, esize, q);
    return ODLA_SUCCESS;
  }
  job.q = q;
  job.io = io;
  ref_parallel(ref_io_threads(io), ref_threads_count(ref_io_threads(io)), ref_qbin_part, &job,
               (unsigned char *)io->scratch);
  return ODLA_SUCCESS;
}

/* The row function of an operation (mul) and operand and result types (signed or not). */
static ref_row_fn ref_qbin_fn(int mul, int sa, int sb, int sy) {
  static const ref_row_fn add[8] = {ref_qadd_uuu, ref_qadd_uus, ref_qadd_usu, ref_qadd_uss,
                                    ref_qadd_suu, ref_qadd_sus, ref_qadd_ssu, ref_qadd_sss};
  static const ref_row_fn mult[8] = {ref_qmul_uuu, ref_qmul_uus, ref_qmul_usu, ref_qmul_uss,
                                     ref_qmul_suu, ref_qmul_sus, ref_qmul_ssu, ref_qmul_sss};
  return (mul ? mult : add)[sa * 4 + sb * 2 + sy];
}

/* A zero point: absent, or a constant scalar of its operand's type. */
static int ref_qbin_zero_point(const char *op, const char *what, odla_value zp, odla_value x,
                               double *value) {
  char s1[128];
  *value = 0;
  if (!zp)
    return 1;
  if (!ref_check_operands(op, 1, &zp))
    return 0;
  if (zp->type.element_type != x->type.element_type || ref_count(&zp->type.shape) != 1 ||
      zp->kind != REF_CONSTANT || !zp->data) {
    ref_fail(ODLA_INVALID_PARAM, op,
             "%s is %s %s; it must be a constant scalar of its operand's "
             "type, %s",
             what, ref_type_name(zp->type.element_type),
             ref_shape_str(&zp->type.shape, s1, sizeof s1), ref_type_name(x->type.element_type));
    return 0;
  }
  *value = ref_qi_load(zp->type.element_type, zp->data, 0);
  return 1;
}

static odla_value ref_qbin(const char *op, int mul, odla_value a, odla_value a_zero_point,
                           odla_int32 a_multiplier, odla_value b, odla_value b_zero_point,
                           odla_int32 b_multiplier, odla_int32 shift, odla_value output_zero_point,
                           odla_int32 output_min, odla_int32 output_max,
                           const odla_value_shape *output_dims, odla_value_id id) {
  const odla_value_shape *shapes[2];
  odla_value in[2], v;
  odla_value_type out;
  ref_qbin_params p;
  int32_t type_lo, type_hi;
  char s1[128], s2[128];
  in[0] = a;
  in[1] = b;
  if (!ref_check_operands(op, 2, in))
    return NULL;
  if (!ref_qi_is_8bit(a->type.element_type) || !ref_qi_is_8bit(b->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op,
                    "operands are %s and %s; uint8 or int8 is required",
                    ref_type_name(a->type.element_type), ref_type_name(b->type.element_type));
  memset(&p, 0, sizeof p);
  if (!ref_qbin_zero_point(op, "a_zero_point", a_zero_point, a, &p.za) ||
      !ref_qbin_zero_point(op, "b_zero_point", b_zero_point, b, &p.zb))
    return NULL;
  if (!output_zero_point)
    return ref_fail(ODLA_INVALID_PARAM, op, "output_zero_point is NULL");
  if (!ref_check_operands(op, 1, &output_zero_point))
    return NULL;
  if (!ref_qi_is_8bit(output_zero_point->type.element_type) ||
      ref_count(&output_zero_point->type.shape) != 1 || output_zero_point->kind != REF_CONSTANT ||
      !output_zero_point->data)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "output_zero_point is %s %s; it must be a constant uint8 or int8 scalar",
                    ref_type_name(output_zero_point->type.element_type),
                    ref_shape_str(&output_zero_point->type.shape, s1, sizeof s1));
  if (a_multiplier < 0 || (!mul && b_multiplier < 0) || shift < 1 || shift > 62)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "multipliers %ld and %ld and shift %ld: multipliers must be in [0, 2^31), "
                    "shift in [1, 62]",
                    (long)a_multiplier, (long)b_multiplier, (long)shift);
  out.element_type = output_zero_point->type.element_type;
  type_lo = out.element_type == ODLA_INT8 ? INT8_MIN : 0;
  type_hi = out.element_type == ODLA_INT8 ? INT8_MAX : 255;
  if (output_min < type_lo || output_max > type_hi || output_min > output_max)
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "output_min %ld and output_max %ld must satisfy %ld <= output_min <= "
                    "output_max <= %ld (the output type %s)",
                    (long)output_min, (long)output_max, (long)type_lo, (long)type_hi,
                    ref_type_name(out.element_type));
  shapes[0] = &a->type.shape;
  shapes[1] = &b->type.shape;
  if (!ref_bcast_shape(2, shapes, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, op, "shapes %s and %s do not broadcast",
                    ref_shape_str(shapes[0], s1, sizeof s1),
                    ref_shape_str(shapes[1], s2, sizeof s2));
  if (ref_shape_conflicts(output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s differ from the broadcast shape %s",
                    ref_shape_str(output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  if (!ref_result_fits(op, &out))
    return NULL;
  ref_bcast_init(&p.b.bc, 2, shapes, &out.shape);
  p.b.fn = ref_qbin_fn(mul, a->type.element_type == ODLA_INT8, b->type.element_type == ODLA_INT8,
                       out.element_type == ODLA_INT8);
  p.b.types[0] = a->type.element_type;
  p.b.types[1] = b->type.element_type;
  p.b.out_type = out.element_type;
  p.mul = mul;
  p.ma = ldexp((double)a_multiplier, -shift);
  p.mb = ldexp((double)b_multiplier, -shift);
  p.ia = a_multiplier;
  p.ib = b_multiplier;
  p.shift = shift;
  { /* |quotient| <= (the largest |sum| + 2^(shift-1)) / 2^shift, 8-bit operands less zero points */
    const double most =
        mul ? 255.0 * 255.0 * a_multiplier : 255.0 * ((double)a_multiplier + (double)b_multiplier);
    p.word = shift <= 31 && ldexp(most, -shift) + 1 < 2147483647.0;
  }
  p.zy = ref_qi_load(out.element_type, output_zero_point->data, 0);
  p.lo = output_min;
  p.hi = output_max;
  v = ref_add_sealed_op(op, ref_qbin_run, 2, in, out, id, &p, sizeof p);
  /* The rows read element i of both operands before writing y[i]. */
  if (v && ref_count(shapes[0]) == ref_count(&out.shape))
    ref_inplace_of(v, 0);
  else if (v && ref_count(shapes[1]) == ref_count(&out.shape))
    ref_inplace_of(v, 1);
  return v;
}

odla_value odla_ExtQLinearAdd(odla_value a, odla_value a_zero_point, odla_int32 a_multiplier,
                              odla_value b, odla_value b_zero_point, odla_int32 b_multiplier,
                              odla_int32 shift, odla_value output_zero_point, odla_int32 output_min,
                              odla_int32 output_max, odla_value_shape output_dims,
                              const odla_value_id value_id) {
  return ref_qbin("ExtQLinearAdd", 0, a, a_zero_point, a_multiplier, b, b_zero_point, b_multiplier,
                  shift, output_zero_point, output_min, output_max, &output_dims, value_id);
}

odla_value odla_ExtQLinearMul(odla_value a, odla_value a_zero_point, odla_value b,
                              odla_value b_zero_point, odla_int32 multiplier, odla_int32 shift,
                              odla_value output_zero_point, odla_int32 output_min,
                              odla_int32 output_max, odla_value_shape output_dims,
                              const odla_value_id value_id) {
  return ref_qbin("ExtQLinearMul", 1, a, a_zero_point, multiplier, b, b_zero_point, 0, shift,
                  output_zero_point, output_min, output_max, &output_dims, value_id);
}
