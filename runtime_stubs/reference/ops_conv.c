/* ops_conv.c: convolution (odla_Conv), transposed convolution (odla_DeConv) and the extension
 * odla_ExtCol2Im (ONNX Col2Im) in the reference backend: channels-first data, 1 to 3 spatial axes,
 * groups, strides, dilations and asymmetric padding; float32, float64, float16 and bfloat16.
 *
 * float32 Conv is a GEMM per image and group, output = kernel x im2col(input), where the
 * im2col matrix is never stored: ref_sgemm_packed_b asks for it one cache-sized panel at a
 * time and ref_conv_pack_b gathers that panel straight from the input, so the scratch is the
 * GEMM's packing buffers (under 1 MiB) whatever the image size. A 1x1 convolution with
 * stride 1 and no padding multiplies the input itself; one with a single input channel per
 * group (depthwise) runs a direct loop, which beats a GEMM with one row. float64 Conv and
 * DeConv of every type use an explicit im2col / col2im matrix around ref_dgemm or ref_sgemm.
 * float16 and bfloat16 are converted to float32 (in the node's scratch), computed by the
 * float32 code and rounded back once at the end. */
#include "autodiff.h"
#include "ops_channels_last.h"
#include "ops_nn.h"
#include "threads.h"

#include <string.h>

typedef struct {
  ref_window w; /* Conv: in -> out as usual; DeConv: the Conv this one transposes,
                   read backwards (w.in is DeConv's input, w.out its output) */
  int64_t n, c, m, group;
  int64_t kvol;  /* rows of the im2col matrix: (c / group) * kernel volume for Conv,
                    (m / group) * kernel volume for DeConv */
  int pointwise; /* Conv with a 1x1 kernel, stride 1, no padding: the input is its im2col */
  int direct;    /* float Conv with one input channel per group, or any float32 Conv of a
                    least-memory computation: the direct loop, without scratch */
  int plane;     /* a direct 2-D Conv with one input channel per group, stride 1 or 2 and no
                    dilation, outside least memory: ref_conv_plane_f32 (x86-64, aarch64) */
  odla_element_type type;
  /* Scratch layout, byte offsets: im2col matrix, GEMM packing, and for float16/bfloat16 the
   * float copies of input, kernel, bias and output. */
  size_t col_at, pack_at, plane_at, xf_at, wf_at, bf_at, yf_at, bytes;
  /* A float32 GEMM Conv's constant kernel packed when the computation is compiled
   * (ref_conv_prepare), packed_per floats a group, and the data it was packed
   * from: runs whose kernel is that data read it in place of packing the kernel as they go
   * (which took a quarter of ResNet-50's time); NULL: not packed. */
  const float *packed_w;
  const void *packed_from;
  size_t packed_per;
} ref_conv_params;

/* Plain C GEMMs with one signature, for the type-generic code below. */
static void ref_conv_gemm_f32(int ta, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                              const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
                              float *pack) {
  ref_sgemm(ta, 0, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc, pack);
}
static void ref_conv_gemm_f64(int ta, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                              const double *b, int64_t ldb, double beta, double *c, int64_t ldc,
                              float *pack) {
  (void)pack;
  ref_dgemm(ta, 0, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

/* The explicit-im2col Conv for double (T): im2col, then one GEMM per image and group. */
#define REF_DEFINE_CONV(T, SFX)                                                                    \
  /* The im2col matrix of one group of one image: row (ci, kd, kh, kw), column = output            \
   * pixel. */                                                                                     \
  static void ref_im2col_##SFX(const ref_conv_params *p, const T *x, T *col) {                     \
    const ref_window *w = &p->w;                                                                   \
    int64_t cpg = p->c / p->group, ci, kd, kh, kw, od, oh, ow;                                     \
    for (ci = 0; ci < cpg; ++ci)                                                                   \
      for (kd = 0; kd < w->k[0]; ++kd)                                                             \
        for (kh = 0; kh < w->k[1]; ++kh)                                                           \
          for (kw = 0; kw < w->k[2]; ++kw)                                                         \
            for (od = 0; od < w->out[0]; ++od) {                                                   \
              int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];                         \
              for (oh = 0; oh < w->out[1]; ++oh) {                                                 \
                int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];                       \
                if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1]) {                        \
                  memset(col, 0, (size_t)w->out[2] * sizeof *col);                                 \
                  col += w->out[2];                                                                \
                  continue;                                                                        \
                }                                                                                  \
                {                                                                                  \
                  const T *row = x + ((ci * w->in[0] + id) * w->in[1] + ih) * w->in[2];            \
                  int64_t iw0 = -w->pad[2] + kw * w->dil[2], s = w->stride[2];                     \
                  for (ow = 0; ow < w->out[2]; ++ow) {                                             \
                    int64_t iw = iw0 + ow * s;                                                     \
                    col[ow] = iw >= 0 && iw < w->in[2] ? row[iw] : (T)0;                           \
                  }                                                                                \
                  col += w->out[2];                                                                \
                }                                                                                  \
              }                                                                                    \
            }                                                                                      \
  }                                                                                                \
                                                                                                   \
  static void ref_conv_core_##SFX(const ref_conv_params *p, const T *x, const T *wt,               \
                                  const T *bias, T *y, unsigned char *scratch) {                   \
    int64_t ipix = ref_window_in_count(&p->w), opix = ref_window_out_count(&p->w);                 \
    int64_t cpg = p->c / p->group, mpg = p->m / p->group, n, g, i, o;                              \
    T *col = (T *)ref_scratch_at(scratch, p->col_at);                                              \
    float *pack = (float *)ref_scratch_at(scratch, p->pack_at);                                    \
    for (n = 0; n < p->n; ++n) {                                                                   \
      T *yn = y + n * p->m * opix;                                                                 \
      for (i = 0; i < p->m; ++i)                                                                   \
        for (o = 0; o < opix; ++o)                                                                 \
          yn[i * opix + o] = bias ? bias[i] : (T)0;                                                \
      for (g = 0; g < p->group; ++g) {                                                             \
        const T *xg = x + (n * p->c + g * cpg) * ipix;                                             \
        const T *b = xg;                                                                           \
        if (!p->pointwise) {                                                                       \
          ref_im2col_##SFX(p, xg, col);                                                            \
          b = col;                                                                                 \
        }                                                                                          \
        ref_conv_gemm_##SFX(0, mpg, opix, p->kvol, wt + g * mpg * p->kvol, p->kvol, b, opix, (T)1, \
                            yn + g * mpg * opix, opix, pack);                                      \
      }                                                                                            \
    }                                                                                              \
  }
REF_DEFINE_CONV(double, f64)
#undef REF_DEFINE_CONV

/* col2im and DeConv, once for float and once for double (T). */
#define REF_DEFINE_DECONV(T, SFX)                                                                  \
  /* Adds the col matrix of one group (row (mo, kd, kh, kw), column = input pixel) into the        \
   * output channels of that group. */                                                             \
  static void ref_col2im_##SFX(const ref_conv_params *p, const T *col, T *y) {                     \
    const ref_window *w = &p->w;                                                                   \
    int64_t mpg = p->m / p->group, ipix = ref_window_in_count(w), mo, kd, kh, kw, id, ih, iw;      \
    for (mo = 0; mo < mpg; ++mo)                                                                   \
      for (kd = 0; kd < w->k[0]; ++kd)                                                             \
        for (kh = 0; kh < w->k[1]; ++kh)                                                           \
          for (kw = 0; kw < w->k[2]; ++kw, col += ipix) {                                          \
            T *ym = y + mo * ref_window_out_count(w);                                              \
            for (id = 0; id < w->in[0]; ++id) {                                                    \
              int64_t od = id * w->stride[0] - w->pad[0] + kd * w->dil[0];                         \
              if (od < 0 || od >= w->out[0])                                                       \
                continue;                                                                          \
              for (ih = 0; ih < w->in[1]; ++ih) {                                                  \
                int64_t oh = ih * w->stride[1] - w->pad[1] + kh * w->dil[1];                       \
                const T *crow = col + (id * w->in[1] + ih) * w->in[2];                             \
                T *yrow = ym + (od * w->out[1] + oh) * w->out[2];                                  \
                int64_t ow0 = -w->pad[2] + kw * w->dil[2], s = w->stride[2];                       \
                if (oh < 0 || oh >= w->out[1])                                                     \
                  continue;                                                                        \
                for (iw = 0; iw < w->in[2]; ++iw) {                                                \
                  int64_t ow = ow0 + iw * s;                                                       \
                  if (ow >= 0 && ow < w->out[2])                                                   \
                    yrow[ow] += crow[iw];                                                          \
                }                                                                                  \
              }                                                                                    \
            }                                                                                      \
          }                                                                                        \
  }                                                                                                \
                                                                                                   \
  static void ref_deconv_core_##SFX(const ref_conv_params *p, const T *x, const T *wt,             \
                                    const T *bias, T *y, unsigned char *scratch) {                 \
    int64_t ipix = ref_window_in_count(&p->w), opix = ref_window_out_count(&p->w);                 \
    int64_t cpg = p->c / p->group, mpg = p->m / p->group, n, g, i, o;                              \
    T *col = (T *)ref_scratch_at(scratch, p->col_at);                                              \
    float *pack = (float *)ref_scratch_at(scratch, p->pack_at);                                    \
    for (n = 0; n < p->n; ++n) {                                                                   \
      T *yn = y + n * p->m * opix;                                                                 \
      for (i = 0; i < p->m; ++i)                                                                   \
        for (o = 0; o < opix; ++o)                                                                 \
          yn[i * opix + o] = bias ? bias[i] : (T)0;                                                \
      for (g = 0; g < p->group; ++g) {                                                             \
        /* col = W_g^T x_g: W_g is cpg x kvol (rows: input channels), x_g is cpg x ipix. */        \
        ref_conv_gemm_##SFX(1, p->kvol, ipix, cpg, wt + g * cpg * p->kvol, p->kvol,                \
                            x + (n * p->c + g * cpg) * ipix, ipix, (T)0, col, ipix, pack);         \
        ref_col2im_##SFX(p, col, yn + g * mpg * opix);                                             \
      }                                                                                            \
    }                                                                                              \
  }
REF_DEFINE_DECONV(float, f32)
REF_DEFINE_DECONV(double, f64)
#undef REF_DEFINE_DECONV

/* ---- float32 Conv ------------------------------------------------------------------------ */

enum { NR = REF_SGEMM_NR };

/* The im2col matrix of one group of one image, seen by ref_sgemm_packed_b: row
 * (ci, kd, kh, kw), column = output pixel. */
typedef struct {
  const ref_conv_params *p;
  const float *x; /* the group's first input channel */
} ref_conv_im2col;

/* Packs rows [p0, p0+kc) and columns [j0, j0+nc) of the im2col matrix into NR-column
 * panels, reading the input directly. A panel's NR output pixels fall into a few runs along
 * output rows; each run is located once per panel. For each im2col row (one kernel tap of
 * one channel) a run then reads one input row at a fixed stride: the cells whose tap lies
 * outside the input are zero, the others a copy, with no test per value. */
REF_HOT static void ref_conv_pack_b(const void *ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                                    float *dst) {
  const ref_conv_im2col *cb = (const ref_conv_im2col *)ctx;
  const ref_window *w = &cb->p->w;
  const int64_t ipix = ref_window_in_count(w), s2 = w->stride[2];
  int64_t jr;
  for (jr = 0; jr < nc; jr += NR) {
    const int64_t nr = nc - jr < NR ? nc - jr : NR;
    /* Run r covers panel columns [at[r], at[r+1]): output pixels od, oh, ow0.. of one row. */
    int64_t at[NR + 1], id0[NR], ih0[NR], iw0[NR], pp, r, ci, kd, kh, kw;
    int runs = 0;
    while (runs == 0 || at[runs] < nr) {
      int64_t j = runs == 0 ? 0 : at[runs], pix = j0 + jr + j, t = pix / w->out[2];
      int64_t ow = pix % w->out[2];
      at[runs] = j;
      id0[runs] = t / w->out[1] * w->stride[0] - w->pad[0];
      ih0[runs] = t % w->out[1] * w->stride[1] - w->pad[1];
      iw0[runs] = ow * s2 - w->pad[2];
      j += w->out[2] - ow;
      at[++runs] = j < nr ? j : nr;
    }
    r = p0;
    kw = r % w->k[2];
    r /= w->k[2];
    kh = r % w->k[1];
    r /= w->k[1];
    kd = r % w->k[0];
    ci = r / w->k[0];
    for (pp = 0; pp < kc; ++pp, dst += NR) {
      const float *xc = cb->x + ci * ipix;
      const int64_t dd = kd * w->dil[0], dh = kh * w->dil[1], dw = kw * w->dil[2];
      int64_t j;
      int q;
      for (q = 0; q < runs; ++q) {
        const int64_t id = id0[q] + dd, ih = ih0[q] + dh, off = iw0[q] + dw;
        const int64_t len = at[q + 1] - at[q];
        float *d = dst + at[q];
        /* cells c in [lo, hi) read input column off + c * s2, inside [0, in[2]) */
        int64_t lo = off >= 0 ? 0 : (-off + s2 - 1) / s2;
        int64_t hi = w->in[2] - off <= 0 ? 0 : (w->in[2] - off - 1) / s2 + 1;
        const float *src = xc + (id * w->in[1] + ih) * w->in[2] + off;
        if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1])
          lo = hi = len;
        if (hi > len)
          hi = len;
        if (lo > hi)
          lo = hi;
        for (j = 0; j < lo; ++j)
          d[j] = 0.0f;
        if (s2 == 1)
          for (; j < hi; ++j)
            d[j] = src[j];
        else
          for (; j < hi; ++j)
            d[j] = src[j * s2];
        for (; j < len; ++j)
          d[j] = 0.0f;
      }
      for (j = nr; j < NR; ++j)
        dst[j] = 0.0f;
      if (++kw == w->k[2]) {
        kw = 0;
        if (++kh == w->k[1]) {
          kh = 0;
          if (++kd == w->k[0]) {
            kd = 0;
            ++ci;
          }
        }
      }
    }
  }
}

/* The direct loop, in two forms whose sums are the same (the taps that lie inside the input, in
 * the order input channel, kd, kh, kw, from the value already there: the bias). Where the
 * target has float vectors (x86-64, aarch64), each output channel accumulates, for each input
 * channel of its group, its kernel's taps, each tap a scaled run of an input row over the
 * output row's cells whose tap lies inside the input: loops the compiler vectorizes
 * (MobileNetV2's depthwise layers ran 1.5x slower on x86-64 in the other form). Elsewhere
 * (32-bit Arm, microcontrollers, RISC-V) each output is summed in registers, below. */
#if defined(__x86_64__) || defined(__aarch64__)
REF_HOT static void ref_conv_direct_f32(const ref_conv_params *p, const float *xn, const float *wt,
                                        float *yn, int64_t o0, int64_t o1) {
  const ref_window *w = &p->w;
  const int64_t ipix = ref_window_in_count(w), opix = ref_window_out_count(w);
  const int64_t mpg = p->m / p->group, cpg = p->c / p->group, kvol = ref_window_k_count(w);
  const int64_t s2 = w->stride[2];
  int64_t o, ci, kd, kh, kw, od, oh, ow;
  for (o = o0; o < o1; ++o)
    for (ci = 0; ci < cpg; ++ci) {
      const float *xg = xn + (o / mpg * cpg + ci) * ipix, *wo = wt + (o * cpg + ci) * kvol;
      float *yo = yn + o * opix;
      for (kd = 0; kd < w->k[0]; ++kd)
        for (kh = 0; kh < w->k[1]; ++kh)
          for (kw = 0; kw < w->k[2]; ++kw) {
            const float wv = wo[(kd * w->k[1] + kh) * w->k[2] + kw];
            const int64_t off = kw * w->dil[2] - w->pad[2];
            /* ow in [lo, hi) keeps iw = ow * s2 + off inside [0, in[2]). */
            int64_t lo = off >= 0 ? 0 : (-off + s2 - 1) / s2;
            int64_t hi = w->in[2] - off <= 0 ? 0 : (w->in[2] - off - 1) / s2 + 1;
            if (hi > w->out[2])
              hi = w->out[2];
            for (od = 0; od < w->out[0]; ++od) {
              const int64_t id = od * w->stride[0] - w->pad[0] + kd * w->dil[0];
              if (id < 0 || id >= w->in[0])
                continue;
              for (oh = 0; oh < w->out[1]; ++oh) {
                const int64_t ih = oh * w->stride[1] - w->pad[1] + kh * w->dil[1];
                const float *xr = xg + (id * w->in[1] + ih) * w->in[2] + off;
                float *yr = yo + (od * w->out[1] + oh) * w->out[2];
                if (ih < 0 || ih >= w->in[1])
                  continue;
                if (s2 == 1)
                  for (ow = lo; ow < hi; ++ow)
                    yr[ow] += wv * xr[ow];
                else
                  for (ow = lo; ow < hi; ++ow)
                    yr[ow] += wv * xr[ow * s2];
              }
            }
          }
    }
}

/* A depthwise 2-D convolution (p->plane), a channel at a time, in the direct loop's order of
 * sums (from the bias, the taps in the order kh, kw; a tap outside the input adds a zero). The
 * input plane is first copied, zero-padded, into stride x stride phase planes (phase (a, b)
 * holds the padded rows a, a + s, ... and columns b, b + s, ...), each wq wide: output (oh, ow)
 * then reads its tap (i, j) at (oh + i / s) * wq + ow + j / s of phase (i % s, j % s), so the
 * outputs at oh * wq + ow, junk columns ow >= out[2] included, are one run that each tap adds
 * to in one vectorized loop, whatever the map's width (EfficientNet-B0's 5x5 depthwise layers
 * on 7x7 and 14x14 maps ran at 7 GFLOP/s in the row form, a loop per row and tap). */
static void ref_conv_plane_geometry(const ref_window *w, ptrdiff_t *hq, ptrdiff_t *wq) {
  const ptrdiff_t s = (ptrdiff_t)w->stride[2];
  *hq = (ptrdiff_t)w->out[1] + ((ptrdiff_t)w->k[1] - 1) / s;
  *wq = (ptrdiff_t)w->out[2] + ((ptrdiff_t)w->k[2] - 1) / s;
}

/* Floats of a thread's scratch: the phase planes, the reads past the last one (a junk
 * column's taps), the run of sums. */
static size_t ref_conv_plane_floats(const ref_window *w) {
  const ptrdiff_t s = (ptrdiff_t)w->stride[2];
  ptrdiff_t hq, wq;
  ref_conv_plane_geometry(w, &hq, &wq);
  return (size_t)((s * s * hq + 1 + (ptrdiff_t)w->out[1]) * wq);
}

/* The phase planes of input plane x (in[1] x in[2]) into q. */
REF_HOT static void ref_conv_plane_fill(const ref_window *w, const float *x, float *q, ptrdiff_t hq,
                                        ptrdiff_t wq) {
  const ptrdiff_t s = (ptrdiff_t)w->stride[2], ph = (ptrdiff_t)w->pad[1];
  const ptrdiff_t pw = (ptrdiff_t)w->pad[2], in1 = (ptrdiff_t)w->in[1];
  const ptrdiff_t in2 = (ptrdiff_t)w->in[2];
  ptrdiff_t a, b, r, c;
  for (a = 0; a < s; ++a)
    for (b = 0; b < s; ++b, q += hq * wq)
      for (r = 0; r < hq; ++r) {
        const ptrdiff_t ih = r * s + a - ph;
        const float *xr;
        float *qr = q + r * wq;
        if (ih < 0 || ih >= in1) {
          memset(qr, 0, (size_t)wq * sizeof *qr);
          continue;
        }
        xr = x + ih * in2;
        if (s == 1) { /* zeros, the row, zeros */
          const ptrdiff_t lo = pw < wq ? pw : wq;
          const ptrdiff_t hi = pw + in2 < wq ? pw + in2 : wq;
          memset(qr, 0, (size_t)lo * sizeof *qr);
          if (hi > lo)
            memcpy(qr + lo, xr + (lo - pw), (size_t)(hi - lo) * sizeof *qr);
          memset(qr + hi, 0, (size_t)(wq - hi) * sizeof *qr);
          continue;
        }
        { /* zeros, every s-th element of the row from column b - pw, zeros: a strided loop
             the compiler vectorizes (per element with a bound check this fill was most of a
             stride-2 layer's time: EfficientNet-B0's 3x3 one over 112 x 112 took 0.48 ms for
             its 96 channels, 0.34 ms with this) */
          const ptrdiff_t off = b - pw;
          ptrdiff_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
          ptrdiff_t hi = in2 - off <= 0 ? 0 : (in2 - off - 1) / s + 1;
          if (hi > wq)
            hi = wq;
          if (lo > hi)
            lo = hi;
          memset(qr, 0, (size_t)lo * sizeof *qr);
          if (s == 2) /* a constant stride: vector shuffles, where a variable one gathers */
            for (c = lo; c < hi; ++c)
              qr[c] = xr[c * 2 + off];
          else
            for (c = lo; c < hi; ++c)
              qr[c] = xr[c * s + off];
          memset(qr + hi, 0, (size_t)(wq - hi) * sizeof *qr);
        }
      }
}

/* Output channels [o0, o1) of one image into yn, from the bias (or 0); `t` is the thread's
 * scratch of ref_conv_plane_floats. */
REF_HOT static void ref_conv_plane_f32(const ref_conv_params *p, const float *xn, const float *wt,
                                       const float *bias, float *yn, int64_t o0, int64_t o1,
                                       float *t) {
  const ref_window *w = &p->w;
  const ptrdiff_t s = (ptrdiff_t)w->stride[2], k1 = (ptrdiff_t)w->k[1], k2 = (ptrdiff_t)w->k[2];
  const ptrdiff_t out1 = (ptrdiff_t)w->out[1], out2 = (ptrdiff_t)w->out[2];
  const ptrdiff_t ipix = (ptrdiff_t)ref_window_in_count(w), mpg = (ptrdiff_t)(p->m / p->group);
  ptrdiff_t hq, wq, phase, n, filled = -1, o, i, j, l, oh;
  float *q = t, *sums;
  ref_conv_plane_geometry(w, &hq, &wq);
  phase = hq * wq;
  n = out1 * wq;
  sums = q + s * s * phase + wq;
  memset(q + s * s * phase, 0, (size_t)wq * sizeof *q);
  for (o = (ptrdiff_t)o0; o < (ptrdiff_t)o1; ++o) {
    const float *k = wt + o * k1 * k2, b = bias ? bias[o] : 0.0f;
    float *yo = yn + o * out1 * out2;
    if (o / mpg != filled) { /* the input channel's planes (shared by its mpg outputs) */
      filled = o / mpg;
      ref_conv_plane_fill(w, xn + filled * ipix, q, hq, wq);
    }
    for (l = 0; l < n; ++l)
      sums[l] = b;
    for (i = 0; i < k1; ++i)
      for (j = 0; j < k2; ++j) {
        const float kv = k[i * k2 + j];
        const ptrdiff_t a = s == 1 ? 0 : i & 1, c = s == 1 ? 0 : j & 1;
        const float *xp =
            q + (a * s + c) * phase + (s == 1 ? i : i >> 1) * wq + (s == 1 ? j : j >> 1);
        for (l = 0; l < n; ++l)
          sums[l] += kv * xp[l];
      }
    for (oh = 0; oh < out1; ++oh)
      memcpy(yo + oh * out2, sums + oh * wq, (size_t)out2 * sizeof *yo);
  }
}
#define REF_CONV_PLANES 1
#else

/* Each output summed in registers, in the order (input channel, kd, kh, kw) over
 * the taps that lie inside the input (the others skipped, not added as zeros), starting from
 * the value already there (the bias). Four outputs at a time share each kernel tap: four
 * rows of a column where at least four rows have every kh tap inside (the column's kw taps
 * inside shared by the four), and in the other rows four outputs of a row whose every kw tap
 * lies inside; the rest one at a time. A pointwise convolution's plane is one row (small
 * maps have few whole strips). Pointers step through the taps and the indices are
 * ptrdiff_t (they index memory): no 64-bit arithmetic, which a 32-bit core pays for, in the
 * loops. */
typedef struct {
  ptrdiff_t cpg, ipix, kvol; /* input channels of a group, input pixels, kernel volume */
  ptrdiff_t xd, xh, kd, kh;  /* input and kernel steps of a kd and of a kh */
  ptrdiff_t d2;              /* dilation along the row */
  ptrdiff_t km, ym;          /* kernel and output steps of an output channel */
} ref_conv_direct;

/* The taps along `axis` of output o that lie inside the input: k in [*lo, *hi) (counted:
 * kernels are small, and a division in 64 bits is a library call on a 32-bit core). */
static void ref_conv_taps_inside(const ref_window *w, int axis, ptrdiff_t o, ptrdiff_t *lo,
                                 ptrdiff_t *hi) {
  const ptrdiff_t at = o * (ptrdiff_t)w->stride[axis] - (ptrdiff_t)w->pad[axis];
  const ptrdiff_t d = (ptrdiff_t)w->dil[axis], k = (ptrdiff_t)w->k[axis];
  const ptrdiff_t in = (ptrdiff_t)w->in[axis];
  for (*lo = 0; *lo < k && at + *lo * d < 0;)
    ++*lo;
  for (*hi = *lo; *hi < k && at + *hi * d < in;)
    ++*hi;
}

/* The outputs [*lo, *hi) along `axis` whose every tap along it lies inside. */
static void ref_conv_outputs_inside(const ref_window *w, int axis, ptrdiff_t *lo, ptrdiff_t *hi) {
  const ptrdiff_t n = (ptrdiff_t)w->out[axis], k = (ptrdiff_t)w->k[axis];
  ptrdiff_t t0, t1;
  for (*lo = 0; *lo < n; ++*lo) {
    ref_conv_taps_inside(w, axis, *lo, &t0, &t1);
    if (t0 == 0 && t1 == k)
      break;
  }
  for (*hi = *lo; *hi < n; ++*hi) {
    ref_conv_taps_inside(w, axis, *hi, &t0, &t1);
    if (t0 != 0 || t1 != k)
      break;
  }
}

/* One output y over nd x nh kernel rows of nw taps from input x and kernel k (the first tap
 * that lies inside). */
static void ref_conv_direct_one(const ref_conv_direct *c, const float *x, const float *k,
                                ptrdiff_t nd, ptrdiff_t nh, ptrdiff_t nw, float *y) {
  const ptrdiff_t d2 = c->d2;
  float a = *y;
  ptrdiff_t ci, i, j, t;
  for (ci = 0; ci < c->cpg; ++ci, x += c->ipix, k += c->kvol)
    for (i = 0; i < nd; ++i)
      for (j = 0; j < nh; ++j) {
        const float *xr = x + i * c->xd + j * c->xh, *kr = k + i * c->kd + j * c->kh;
        for (t = 0; t < nw; ++t)
          a += kr[t] * xr[t * d2];
      }
  *y = a;
}

/* The same for two output channels of a group at once (their kernels km, their outputs ym
 * apart), sharing each input value. */
static void ref_conv_direct_one_two(const ref_conv_direct *c, const float *x, const float *k,
                                    ptrdiff_t nd, ptrdiff_t nh, ptrdiff_t nw, float *y) {
  const ptrdiff_t d2 = c->d2, km = c->km;
  float a = y[0], b = y[c->ym];
  ptrdiff_t ci, i, j, t;
  for (ci = 0; ci < c->cpg; ++ci, x += c->ipix, k += c->kvol)
    for (i = 0; i < nd; ++i)
      for (j = 0; j < nh; ++j) {
        const float *xr = x + i * c->xd + j * c->xh, *kr = k + i * c->kd + j * c->kh;
        for (t = 0; t < nw; ++t) {
          const float xv = xr[t * d2];
          a += kr[t] * xv;
          b += kr[t + km] * xv;
        }
      }
  y[0] = a;
  y[c->ym] = b;
}

/* The same for the four outputs y[0], y[ys], y[2 ys], y[3 ys], their inputs xs apart. */
static void ref_conv_direct_four(const ref_conv_direct *c, const float *x, const float *k,
                                 ptrdiff_t nd, ptrdiff_t nh, ptrdiff_t nw, ptrdiff_t xs, float *y,
                                 ptrdiff_t ys) {
  const ptrdiff_t d2 = c->d2;
  float a0 = y[0], a1 = y[ys], a2 = y[2 * ys], a3 = y[3 * ys];
  ptrdiff_t ci, i, j, t;
  for (ci = 0; ci < c->cpg; ++ci, x += c->ipix, k += c->kvol)
    for (i = 0; i < nd; ++i)
      for (j = 0; j < nh; ++j) {
        const float *xr = x + i * c->xd + j * c->xh, *kr = k + i * c->kd + j * c->kh;
        for (t = 0; t < nw; ++t, xr += d2) {
          const float kv = kr[t];
          a0 += kv * xr[0];
          a1 += kv * xr[xs];
          a2 += kv * xr[2 * xs];
          a3 += kv * xr[3 * xs];
        }
      }
  y[0] = a0;
  y[ys] = a1;
  y[2 * ys] = a2;
  y[3 * ys] = a3;
}

/* The same for two output channels at once: eight sums in registers. */
static void ref_conv_direct_four_two(const ref_conv_direct *c, const float *x, const float *k,
                                     ptrdiff_t nd, ptrdiff_t nh, ptrdiff_t nw, ptrdiff_t xs,
                                     float *y, ptrdiff_t ys) {
  const ptrdiff_t d2 = c->d2, km = c->km;
  float *z = y + c->ym;
  float a0 = y[0], a1 = y[ys], a2 = y[2 * ys], a3 = y[3 * ys];
  float b0 = z[0], b1 = z[ys], b2 = z[2 * ys], b3 = z[3 * ys];
  ptrdiff_t ci, i, j, t;
  for (ci = 0; ci < c->cpg; ++ci, x += c->ipix, k += c->kvol)
    for (i = 0; i < nd; ++i)
      for (j = 0; j < nh; ++j) {
        const float *xr = x + i * c->xd + j * c->xh, *kr = k + i * c->kd + j * c->kh;
        for (t = 0; t < nw; ++t, xr += d2) {
          const float kv = kr[t], kz = kr[t + km];
          const float x0 = xr[0], x1 = xr[xs], x2 = xr[2 * xs], x3 = xr[3 * xs];
          a0 += kv * x0;
          a1 += kv * x1;
          a2 += kv * x2;
          a3 += kv * x3;
          b0 += kz * x0;
          b1 += kz * x1;
          b2 += kz * x2;
          b3 += kz * x3;
        }
      }
  y[0] = a0;
  y[ys] = a1;
  y[2 * ys] = a2;
  y[3 * ys] = a3;
  z[0] = b0;
  z[ys] = b1;
  z[2 * ys] = b2;
  z[3 * ys] = b3;
}

/* Four outputs of one output channel, or of two (`two`). */
static void ref_conv_direct_fours(const ref_conv_direct *c, int two, const float *x, const float *k,
                                  ptrdiff_t nd, ptrdiff_t nh, ptrdiff_t nw, ptrdiff_t xs, float *y,
                                  ptrdiff_t ys) {
  if (two)
    ref_conv_direct_four_two(c, x, k, nd, nh, nw, xs, y, ys);
  else
    ref_conv_direct_four(c, x, k, nd, nh, nw, xs, y, ys);
}

/* Outputs [ow0, ow1) of a row, one at a time: x, the input row of the first kernel row
 * inside; k, that kernel row. */
static void ref_conv_direct_ones(const ref_conv_direct *c, const ref_window *w, int two,
                                 const float *x, const float *k, ptrdiff_t nd, ptrdiff_t nh,
                                 ptrdiff_t ow0, ptrdiff_t ow1, float *y) {
  const ptrdiff_t s2 = (ptrdiff_t)w->stride[2], p2 = (ptrdiff_t)w->pad[2];
  ptrdiff_t ow, w0, w1;
  for (ow = ow0; ow < ow1; ++ow) {
    ref_conv_taps_inside(w, 2, ow, &w0, &w1);
    if (w0 >= w1)
      continue;
    if (two)
      ref_conv_direct_one_two(c, x + ow * s2 - p2 + w0 * c->d2, k + w0, nd, nh, w1 - w0, y + ow);
    else
      ref_conv_direct_one(c, x + ow * s2 - p2 + w0 * c->d2, k + w0, nd, nh, w1 - w0, y + ow);
  }
}

static void ref_conv_direct_f32(const ref_conv_params *p, const float *xn, const float *wt,
                                float *yn, int64_t o0, int64_t o1) {
  const ref_window *w = &p->w;
  const ptrdiff_t out0 = (ptrdiff_t)w->out[0], out1 = (ptrdiff_t)w->out[1];
  const ptrdiff_t out2 = (ptrdiff_t)w->out[2], k1 = (ptrdiff_t)w->k[1], k2 = (ptrdiff_t)w->k[2];
  const ptrdiff_t s2 = (ptrdiff_t)w->stride[2], p2 = (ptrdiff_t)w->pad[2];
  const ptrdiff_t in1 = (ptrdiff_t)w->in[1], in2 = (ptrdiff_t)w->in[2];
  const ptrdiff_t opix = (ptrdiff_t)ref_window_out_count(w), mpg = (ptrdiff_t)(p->m / p->group);
  const ptrdiff_t xs = (ptrdiff_t)w->stride[1] * in2; /* the input step of an output row */
  ptrdiff_t o, od, oh, ow, d0, d1, h0, h1, w0, w1, row_lo, row_hi, col_lo, col_hi;
  ptrdiff_t row_fours, col_fours; /* where the strips of four end */
  int two = 0;                    /* output channels o and o + 1 at once */
  ref_conv_direct c;
  c.cpg = (ptrdiff_t)(p->c / p->group);
  c.ipix = (ptrdiff_t)ref_window_in_count(w);
  c.kvol = (ptrdiff_t)ref_window_k_count(w);
  c.xd = (ptrdiff_t)(w->dil[0] * w->in[1] * w->in[2]);
  c.xh = (ptrdiff_t)w->dil[1] * in2;
  c.kd = k1 * k2;
  c.kh = k2;
  c.d2 = (ptrdiff_t)w->dil[2];
  c.km = c.cpg * c.kvol;
  c.ym = opix;
  ref_conv_outputs_inside(w, 1, &row_lo, &row_hi); /* rows of a column */
  ref_conv_outputs_inside(w, 2, &col_lo, &col_hi); /* outputs of a row */
  row_fours = row_lo + (row_hi - row_lo) / 4 * 4;
  col_fours = col_lo + (col_hi - col_lo) / 4 * 4;
  for (o = (ptrdiff_t)o0; o < (ptrdiff_t)o1; o += two ? 2 : 1) {
    const float *xg = xn + o / mpg * c.cpg * c.ipix, *wo = wt + o * c.cpg * c.kvol;
    float *yo = yn + o * opix;
    two = o + 1 < (ptrdiff_t)o1 && (o + 1) % mpg != 0; /* o + 1 in the part and the group */
    if (p->pointwise) { /* the output pixels are the input's: the plane as one row */
      for (ow = 0; ow + 4 <= opix; ow += 4)
        ref_conv_direct_fours(&c, two, xg + ow, wo, 1, 1, 1, 1, yo + ow, 1);
      for (; ow < opix; ++ow)
        if (two)
          ref_conv_direct_one_two(&c, xg + ow, wo, 1, 1, 1, yo + ow);
        else
          ref_conv_direct_one(&c, xg + ow, wo, 1, 1, 1, yo + ow);
      continue;
    }
    for (od = 0; od < out0; ++od) {
      const ptrdiff_t id = od * (ptrdiff_t)w->stride[0] - (ptrdiff_t)w->pad[0];
      ref_conv_taps_inside(w, 0, od, &d0, &d1);
      if (d0 == d1)
        continue; /* no tap inside: the bias */
      for (oh = 0; oh < out1;) {
        const ptrdiff_t ih = oh * (ptrdiff_t)w->stride[1] - (ptrdiff_t)w->pad[1];
        float *yr = yo + (od * out1 + oh) * out2;
        const float *xr, *kr;
        if (oh >= row_lo && oh < row_fours) { /* four rows, column by column */
          xr = xg + ((id + d0 * (ptrdiff_t)w->dil[0]) * in1 + ih) * in2;
          kr = wo + d0 * c.kd;
          for (ow = 0; ow < out2; ++ow) {
            if (ow >= col_lo && ow < col_hi) { /* every tap along the row inside */
              w0 = 0;
              w1 = k2;
            } else {
              ref_conv_taps_inside(w, 2, ow, &w0, &w1);
            }
            if (w0 < w1)
              ref_conv_direct_fours(&c, two, xr + ow * s2 - p2 + w0 * c.d2, kr + w0, d1 - d0, k1,
                                    w1 - w0, xs, yr + ow, out2);
          }
          oh += 4;
          continue;
        }
        ref_conv_taps_inside(w, 1, oh, &h0, &h1);
        if (h0 < h1) { /* the row's first kernel row inside, and the input row it reads */
          xr = xg + ((id + d0 * (ptrdiff_t)w->dil[0]) * in1 + ih + h0 * (ptrdiff_t)w->dil[1]) * in2;
          kr = wo + d0 * c.kd + h0 * k2;
          ref_conv_direct_ones(&c, w, two, xr, kr, d1 - d0, h1 - h0, 0, col_lo, yr);
          for (ow = col_lo; ow < col_fours; ow += 4)
            ref_conv_direct_fours(&c, two, xr + ow * s2 - p2, kr, d1 - d0, h1 - h0, k2, s2, yr + ow,
                                  1);
          ref_conv_direct_ones(&c, w, two, xr, kr, d1 - d0, h1 - h0, col_fours, out2, yr);
        }
        ++oh;
      }
    }
  }
}
#endif

/* float32 Conv on the node's threads (threads.h): the GEMMs split into blocks of their
 * result (ref_sgemm_mt, which also writes the bias), the direct loop over output channels,
 * so the result is bit-identical at any thread count. */
typedef struct {
  const ref_conv_params *p;
  const float *xn, *wt, *bias;
  float *yn;
} ref_conv_image;

/* Output channels [lo, hi) of one image's direct convolution, part `index` of `parts`. */
static void ref_conv_direct_part(void *arg, int index, int parts, unsigned char *scratch) {
  const ref_conv_image *im = (const ref_conv_image *)arg;
  const int64_t opix = ref_window_out_count(&im->p->w);
  int64_t lo, hi, i, o;
  ref_split(im->p->m, 1, index, parts, &lo, &hi);
#ifdef REF_CONV_PLANES
  if (im->p->plane) {
    ref_conv_plane_f32(im->p, im->xn, im->wt, im->bias, im->yn, lo, hi,
                       (float *)ref_scratch_at(scratch, im->p->plane_at));
    return;
  }
#else
  (void)scratch;
#endif
  for (i = lo; i < hi; ++i)
    for (o = 0; o < opix; ++o)
      im->yn[i * opix + o] = im->bias ? im->bias[i] : 0.0f;
  ref_conv_direct_f32(im->p, im->xn, im->wt, im->yn, lo, hi);
}

/* Direct convolutions under this many multiply-adds per image stay on one thread. */
#define REF_CONV_PARALLEL_MIN ((int64_t)1 << 18)

static void ref_conv_core_f32(const ref_io *io, const ref_conv_params *p, const float *x,
                              const float *wt, const float *bias, float *y) {
  const int64_t ipix = ref_window_in_count(&p->w), opix = ref_window_out_count(&p->w);
  const int64_t cpg = p->c / p->group, mpg = p->m / p->group;
  unsigned char *scratch = (unsigned char *)io->scratch;
  float *pack = (float *)ref_scratch_at(scratch, p->pack_at);
  const float *packed = p->packed_w && (const void *)wt == p->packed_from ? p->packed_w : NULL;
  int64_t n, g;
  for (n = 0; n < p->n; ++n) {
    const float *xn = x + n * p->c * ipix;
    float *yn = y + n * p->m * opix;
    if (p->direct) {
      ref_threads *pool = ref_io_threads(io);
      const int64_t threads = p->m * opix * ref_window_k_count(&p->w) < REF_CONV_PARALLEL_MIN
                                  ? 1
                                  : ref_threads_count(pool);
      ref_conv_image im;
      im.p = p;
      im.xn = xn;
      im.wt = wt;
      im.bias = bias;
      im.yn = yn;
      ref_parallel(pool, (int)(threads < p->m ? threads : p->m), ref_conv_direct_part, &im,
                   scratch);
      continue;
    }
    for (g = 0; g < p->group; ++g) {
      const float *xg = xn + g * cpg * ipix, *wg = wt + g * mpg * p->kvol;
      const float *bg = bias ? bias + g * mpg : NULL,
                  *pg = packed ? packed + g * p->packed_per : NULL;
      float *yg = yn + g * mpg * opix;
      if (p->pointwise) {
        ref_sgemm_mt(io, 0, 0, mpg, opix, p->kvol, 1.0f, wg, p->kvol, pg, xg, opix, 0.0f, bg, yg,
                     opix, pack);
      } else {
        ref_conv_im2col cb;
        cb.p = p;
        cb.x = xg;
        ref_sgemm_packed_b_mt(io, 0, mpg, opix, p->kvol, 1.0f, wg, p->kvol, pg, ref_conv_pack_b,
                              &cb, 0.0f, bg, yg, opix, pack);
      }
    }
  }
}

static void ref_deconv_lowp_core(const ref_io *io, const ref_conv_params *p, const float *x,
                                 const float *wt, const float *bias, float *y) {
  ref_deconv_core_f32(p, x, wt, bias, y, (unsigned char *)io->scratch);
}

typedef void (*ref_conv_core_f32_fn)(const ref_io *io, const ref_conv_params *, const float *,
                                     const float *, const float *, float *);

/* float16 / bfloat16: converts operands to float in scratch, runs the float32 core, rounds
 * the result back. */
static void ref_conv_lowp(const ref_node *node, const ref_io *io, ref_conv_core_f32_fn core) {
  const ref_conv_params *p = (const ref_conv_params *)node->params;
  unsigned char *s = (unsigned char *)io->scratch;
  float *xf = (float *)(s + p->xf_at), *wf = (float *)(s + p->wf_at);
  float *bf = io->in[2] ? (float *)(s + p->bf_at) : NULL, *yf = (float *)(s + p->yf_at);
  ref_nn_to_float(p->type, (const uint16_t *)io->in[0], xf,
                  ref_count(&node->inputs[0]->type.shape));
  ref_nn_to_float(p->type, (const uint16_t *)io->in[1], wf,
                  ref_count(&node->inputs[1]->type.shape));
  if (bf)
    ref_nn_to_float(p->type, (const uint16_t *)io->in[2], bf, p->m);
  core(io, p, xf, wf, bf, yf);
  ref_nn_from_float(p->type, yf, (uint16_t *)io->out[0], ref_count(&node->outputs[0]->type.shape));
}

static odla_status ref_conv_run(const ref_node *node, const ref_io *io) {
  const ref_conv_params *p = (const ref_conv_params *)node->params;
  if (p->type == ODLA_FLOAT32)
    ref_conv_core_f32(io, p, (const float *)io->in[0], (const float *)io->in[1],
                      (const float *)io->in[2], (float *)io->out[0]);
  else if (p->type == ODLA_FLOAT64)
    ref_conv_core_f64(p, (const double *)io->in[0], (const double *)io->in[1],
                      (const double *)io->in[2], (double *)io->out[0],
                      (unsigned char *)io->scratch);
  else
    ref_conv_lowp(node, io, ref_conv_core_f32);
  return ODLA_SUCCESS;
}

static odla_status ref_deconv_run(const ref_node *node, const ref_io *io) {
  const ref_conv_params *p = (const ref_conv_params *)node->params;
  if (p->type == ODLA_FLOAT32)
    ref_deconv_core_f32(p, (const float *)io->in[0], (const float *)io->in[1],
                        (const float *)io->in[2], (float *)io->out[0],
                        (unsigned char *)io->scratch);
  else if (p->type == ODLA_FLOAT64)
    ref_deconv_core_f64(p, (const double *)io->in[0], (const double *)io->in[1],
                        (const double *)io->in[2], (double *)io->out[0],
                        (unsigned char *)io->scratch);
  else
    ref_conv_lowp(node, io, ref_deconv_lowp_core);
  return ODLA_SUCCESS;
}

/* Operand checks common to Conv and DeConv: presence, layouts, one float element type. */
static int ref_conv_operands(const char *op, odla_value *in, odla_memory_layout input_layout,
                             odla_memory_layout kernel_layout, odla_memory_layout want_kernel) {
  static const char *const names[3] = {"input", "kernel", "bias"};
  int i;
  if (!ref_check_operands(op, 2, in) || (in[2] && !ref_check_operands(op, 1, &in[2])))
    return 0;
  if (input_layout != ODLA_CHANNELS_FIRST || kernel_layout != want_kernel) {
    ref_fail(ODLA_UNSUPPORTED_OP, op, "only channels-first data with %s kernels is supported",
             want_kernel == ODLA_OIS ? "OIS" : "IOS");
    return 0;
  }
  if (!ref_is_float(in[0]->type.element_type)) {
    ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "input has element type %s; a float type is required",
             ref_type_name(in[0]->type.element_type));
    return 0;
  }
  for (i = 1; i < 3; ++i)
    if (in[i] && in[i]->type.element_type != in[0]->type.element_type) {
      ref_fail(ODLA_INVALID_PARAM, op, "%s has element type %s, the input %s", names[i],
               ref_type_name(in[i]->type.element_type), ref_type_name(in[0]->type.element_type));
      return 0;
    }
  return 1;
}

/* Whether a column matrix of rows x cols values of `type` (an im2col or col2im matrix, in
 * float or double) stays within REF_MAX_VALUE_BYTES; reports it when not. Each factor is at
 * most 2^48, their product may not be. */
static int ref_conv_col_fits(const char *op, odla_element_type type, int64_t rows, int64_t cols) {
  size_t elem = type == ODLA_FLOAT64 ? sizeof(double) : sizeof(float);
  if (cols == 0 || rows <= (int64_t)(REF_MAX_VALUE_BYTES / elem) / cols)
    return 1;
  ref_fail(ODLA_INVALID_PARAM, op,
           "its column matrix of %lld x %lld values would exceed 2^48 bytes of scratch",
           (long long)rows, (long long)cols);
  return 0;
}

/* Lays out the scratch of a Conv or DeConv node; `col_elems` is the im2col/col matrix size
 * and m x n x k the shape of its per-group GEMM. */
static void ref_conv_scratch(ref_conv_params *p, const odla_value *in, const odla_value_type *out,
                             int64_t col_elems, int64_t gm, int64_t gn, int64_t gk) {
  size_t elem = p->type == ODLA_FLOAT64 ? sizeof(double) : sizeof(float), at = 0;
  p->col_at = at;
  at += ref_nn_align((size_t)col_elems * elem);
  p->pack_at = at;
  if (p->type != ODLA_FLOAT64)
    at += ref_nn_align(ref_sgemm_scratch(gm, gn, gk) * sizeof(float));
  p->plane_at = at;
#ifdef REF_CONV_PLANES
  if (p->plane)
    at += ref_nn_align(ref_conv_plane_floats(&p->w) * sizeof(float));
#endif
  if (p->type == ODLA_FLOAT16 || p->type == ODLA_BFLOAT16) {
    p->xf_at = at;
    at += ref_nn_align((size_t)ref_count(&in[0]->type.shape) * sizeof(float));
    p->wf_at = at;
    at += ref_nn_align((size_t)ref_count(&in[1]->type.shape) * sizeof(float));
    p->bf_at = at;
    at += ref_nn_align((size_t)p->m * sizeof(float));
    p->yf_at = at;
    at += ref_nn_align((size_t)ref_count(&out->shape) * sizeof(float));
  }
  p->bytes = at;
}

/* ref_node.prepare of a float32 GEMM Conv whose kernel is a constant: packs it for the CPU's
 * register tile (ref_sgemm_pack_a), a group after another; nothing where there is no memory
 * for it (the runs then pack it as they go). */
static void ref_conv_prepare(ref_node *node, int release) {
  ref_conv_params *p = (ref_conv_params *)node->params;
  odla_value w;
  int64_t mpg, g;
  size_t per;
  float *packed;
  if (node->run != ref_conv_run) /* a backend that took the node over (libodla_dnnl's) */
    return;
  w = node->inputs[1];
  if (release) {
    ref_free((void *)p->packed_w);
    p->packed_w = NULL;
    return;
  }
  if (p->packed_w || !w->data)
    return;
  mpg = p->m / p->group;
  per = ref_sgemm_packed_a_floats(mpg, p->kvol);
  if (per > (size_t)-1 / sizeof(float) / (size_t)p->group ||
      !(packed = (float *)ref_malloc(per * (size_t)p->group * sizeof(float))))
    return;
  for (g = 0; g < p->group; ++g)
    ref_sgemm_pack_a((const float *)w->data + g * mpg * p->kvol, p->kvol, mpg, p->kvol,
                     packed + g * per);
  p->packed_w = packed;
  p->packed_from = w->data;
  p->packed_per = per;
}

/* Data is CHANNELS_FIRST [N, C, spatial...], the kernel OIS [M, C / group, k...], the
 * optional bias [M]. Output [N, M, out...] with out = floor((in + pads - span) / stride) + 1,
 * span = (k - 1) * dilation + 1. */
odla_value odla_Conv(odla_value input, odla_memory_layout input_layout, odla_uint32 group,
                     odla_value kernel, odla_memory_layout kernel_layout,
                     const odla_uint32 *strides, const odla_uint32 *dilations,
                     const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                     odla_value bias, odla_value_shape output_dims, const odla_value_id value_id) {
  ref_conv_params p;
  odla_value in[3], v;
  odla_value_type out;
  const odla_value_shape *xs, *ws;
  int64_t kernel_dims[ODLA_MAX_DIMENSION], opix;
  int i;
  char s1[128], s2[128];
  if (input_layout == ODLA_CHANNELS_LAST) /* NHWC data: ops_channels_last.c */
    return ref_conv_channels_last(input, group, kernel, kernel_layout, strides, dilations,
                                  paddings_front, paddings_back, bias, output_dims, value_id);
  in[0] = input;
  in[1] = kernel;
  in[2] = bias;
  if (!ref_conv_operands("Conv", in, input_layout, kernel_layout, ODLA_OIS))
    return NULL;
  xs = &input->type.shape;
  ws = &kernel->type.shape;
  memset(&p, 0, sizeof p);
  p.group = group;
  p.type = input->type.element_type;
  if (xs->size < 3 || ws->size != xs->size || group < 1 ||
      !ref_product_is(ws->dims[1], group, xs->dims[1]) || ws->dims[0] % group != 0)
    return ref_fail(ODLA_INVALID_PARAM, "Conv",
                    "input %s, kernel %s and group %u do not fit: input channels must be kernel "
                    "dim 1 times group, and kernel dim 0 a multiple of group",
                    ref_shape_str(xs, s1, sizeof s1), ref_shape_str(ws, s2, sizeof s2), group);
  if (bias && (bias->type.shape.size != 1 || bias->type.shape.dims[0] != ws->dims[0]))
    return ref_fail(ODLA_INVALID_PARAM, "Conv", "bias %s must have %lld elements",
                    ref_shape_str(&bias->type.shape, s1, sizeof s1), (long long)ws->dims[0]);
  for (i = 2; i < ws->size; ++i)
    kernel_dims[i - 2] = ws->dims[i];
  if (!ref_make_window("Conv", xs, kernel_dims, strides, dilations, paddings_front, paddings_back,
                       NULL, &p.w))
    return NULL;
  p.n = xs->dims[0];
  p.c = xs->dims[1];
  p.m = ws->dims[0];
  p.kvol = p.c / group * ref_window_k_count(&p.w);
  p.pointwise = ref_window_k_count(&p.w) == 1;
  for (i = 0; i < REF_SPATIAL; ++i)
    p.pointwise &= p.w.stride[i] == 1 && p.w.pad[i] == 0 && p.w.pad_end[i] == 0;
  if (!ref_window_result("Conv", xs, p.m, p.type, &p.w, &output_dims, &out))
    return NULL;
  opix = ref_window_out_count(&p.w);
  p.direct = p.type != ODLA_FLOAT64 &&
             (p.c == (int64_t)group || (p.type == ODLA_FLOAT32 && ref_current()->least_memory));
#ifdef REF_CONV_PLANES
  p.plane = p.direct && p.c == (int64_t)group && !ref_current()->least_memory && p.w.k[0] == 1 &&
            p.w.out[0] == 1 && p.w.dil[1] == 1 && p.w.dil[2] == 1 &&
            p.w.stride[1] == p.w.stride[2] && (p.w.stride[2] == 1 || p.w.stride[2] == 2) &&
            opix > 0;
#endif
  if (p.direct)
    ref_conv_scratch(&p, in, &out, 0, 0, 0, 0);
  else if (p.pointwise || p.type != ODLA_FLOAT64)
    ref_conv_scratch(&p, in, &out, 0, p.m / group, opix, p.kvol);
  else if (!ref_conv_col_fits("Conv", p.type, p.kvol, opix))
    return NULL;
  else /* only the float64 GEMM stores its im2col matrix */
    ref_conv_scratch(&p, in, &out, p.kvol * opix, p.m / group, opix, p.kvol);
  v = ref_add_op("Conv", ref_conv_run, 3, in, out, value_id, &p, sizeof p);
  if (v) {
    if (p.type == ODLA_FLOAT32 && !p.direct && kernel->kind == REF_CONSTANT && p.m > 0 &&
        p.kvol > 0)
      v->node->prepare = ref_conv_prepare;
    v->node->scratch_bytes = p.bytes;
    v->node->flops = ref_mul_sat(2 * p.n * p.m * opix, p.kvol); /* a multiply-add per tap */
  }
  return v;
}

/* Transposed convolution, the gradient of odla_Conv with respect to its input. Data is
 * CHANNELS_FIRST [N, C, in...], the kernel IOS [C, M / group, k...] (ONNX ConvTranspose's
 * layout), the optional bias [M]. Output element o along an axis collects x[i] * w[k]
 * wherever i * stride + k * dilation - pad_front == o. Its extent is
 *   base = (in - 1) * stride + (k - 1) * dilation + 1 - pad_front - pad_back
 * plus any extra that output_dims asks for (ONNX's output_padding, or an output_shape larger
 * than base): cells past the last contribution hold the bias. output_dims undefined means
 * base; given, it may not be smaller than base. */
odla_value odla_DeConv(odla_value input, odla_memory_layout input_layout, odla_uint32 group,
                       odla_value kernel, odla_memory_layout kernel_layout,
                       const odla_uint32 *strides, const odla_uint32 *dilations,
                       const odla_uint32 *paddings_front, const odla_uint32 *paddings_back,
                       odla_value bias, odla_value_shape output_dims,
                       const odla_value_id value_id) {
  ref_conv_params p;
  odla_value in[3], v;
  odla_value_type out;
  const odla_value_shape *xs, *ws;
  int i, spatial;
  char s1[128], s2[128];
  in[0] = input;
  in[1] = kernel;
  in[2] = bias;
  if (!ref_conv_operands("DeConv", in, input_layout, kernel_layout, ODLA_IOS))
    return NULL;
  xs = &input->type.shape;
  ws = &kernel->type.shape;
  spatial = xs->size - 2;
  memset(&p, 0, sizeof p);
  p.group = group;
  p.type = input->type.element_type;
  if (xs->size < 3 || xs->size > 2 + REF_SPATIAL || ws->size != xs->size || group < 1 ||
      xs->dims[1] != ws->dims[0] || ws->dims[0] % group != 0)
    return ref_fail(ODLA_INVALID_PARAM, "DeConv",
                    "input %s, kernel %s and group %u do not fit: kernel dim 0 must equal the "
                    "input channels and be a multiple of group; 1 to 3 spatial axes",
                    ref_shape_str(xs, s1, sizeof s1), ref_shape_str(ws, s2, sizeof s2), group);
  if (ws->dims[1] > (int64_t)REF_MAX_VALUE_BYTES / (int64_t)group)
    return ref_fail(ODLA_INVALID_PARAM, "DeConv",
                    "kernel %s with group %u makes more than 2^48 output channels",
                    ref_shape_str(ws, s1, sizeof s1), group);
  p.n = xs->dims[0];
  p.c = xs->dims[1];
  p.m = ws->dims[1] * group;
  if (bias && (bias->type.shape.size != 1 || bias->type.shape.dims[0] != p.m))
    return ref_fail(ODLA_INVALID_PARAM, "DeConv", "bias %s must have %lld elements",
                    ref_shape_str(&bias->type.shape, s1, sizeof s1), (long long)p.m);
  if (output_dims.size >= 0 &&
      (output_dims.size != xs->size || output_dims.dims[0] != p.n || output_dims.dims[1] != p.m))
    return ref_fail(
        ODLA_INVALID_PARAM, "DeConv", "output_dims %s must be [%lld,%lld,...] of rank %d",
        ref_shape_str(&output_dims, s1, sizeof s1), (long long)p.n, (long long)p.m, xs->size);
  out.element_type = p.type;
  out.shape.size = xs->size;
  out.shape.dims[0] = p.n;
  out.shape.dims[1] = p.m;
  for (i = 0; i < REF_SPATIAL; ++i) {
    int j = i - (REF_SPATIAL - spatial);
    int64_t base;
    ref_window *w = &p.w;
    w->in[i] = j < 0 ? 1 : xs->dims[2 + j];
    w->k[i] = j < 0 ? 1 : ws->dims[2 + j];
    w->stride[i] = j < 0 || !strides ? 1 : strides[j];
    w->dil[i] = j < 0 || !dilations ? 1 : dilations[j];
    w->pad[i] = j < 0 || !paddings_front ? 0 : paddings_front[j];
    w->pad_end[i] = j < 0 || !paddings_back ? 0 : paddings_back[j];
    if (w->k[i] < 1 || w->stride[i] < 1 || w->dil[i] < 1)
      return ref_fail(ODLA_INVALID_PARAM, "DeConv",
                      "spatial axis %d: kernel %lld, stride %lld and dilation %lld must be >= 1", j,
                      (long long)w->k[i], (long long)w->stride[i], (long long)w->dil[i]);
    /* in and k are at most 2^48, stride and dilation 32-bit: each product is formed only
     * when it stays below 2^48 (a larger extent is no valid type). */
    if ((w->in[i] > 1 && w->in[i] - 1 > (int64_t)REF_MAX_VALUE_BYTES / w->stride[i]) ||
        w->k[i] - 1 > (int64_t)REF_MAX_VALUE_BYTES / w->dil[i])
      return ref_fail(ODLA_INVALID_PARAM, "DeConv",
                      "spatial axis %d: input extent %lld at stride %lld or kernel %lld at "
                      "dilation %lld spans more than 2^48 output cells",
                      j, (long long)w->in[i], (long long)w->stride[i], (long long)w->k[i],
                      (long long)w->dil[i]);
    base = (w->in[i] > 0 ? (w->in[i] - 1) * w->stride[i] : -w->stride[i]) +
           (w->k[i] - 1) * w->dil[i] + 1 - w->pad[i] - w->pad_end[i];
    w->out[i] = j >= 0 && output_dims.size >= 0 ? output_dims.dims[2 + j] : base;
    if (base < 1 || w->out[i] < base)
      return ref_fail(ODLA_INVALID_PARAM, "DeConv",
                      "spatial axis %d: input extent %lld, kernel %lld, stride %lld, dilation "
                      "%lld and pads %lld+%lld give %lld output cells; output_dims asks for %lld",
                      j, (long long)w->in[i], (long long)w->k[i], (long long)w->stride[i],
                      (long long)w->dil[i], (long long)w->pad[i], (long long)w->pad_end[i],
                      (long long)base, (long long)w->out[i]);
    if (j >= 0)
      out.shape.dims[2 + j] = w->out[i];
  }
  if (!ref_result_fits("DeConv", &out)) /* the scratch sizes below multiply its dims */
    return NULL;
  p.kvol = ws->dims[1] * ref_window_k_count(&p.w);
  if (!ref_conv_col_fits("DeConv", p.type, p.kvol, ref_window_in_count(&p.w)))
    return NULL;
  ref_conv_scratch(&p, in, &out, p.kvol * ref_window_in_count(&p.w), p.kvol,
                   ref_window_in_count(&p.w), p.c / group);
  v = ref_add_op("DeConv", ref_deconv_run, 3, in, out, value_id, &p, sizeof p);
  if (v)
    v->node->scratch_bytes = p.bytes;
  return v;
}

/* ---- odla_ExtCol2Im -------------------------------------------------------------------- */

/* Every image cell gathers the columns whose blocks cover it: cell x of an axis receives block
 * offset k of block position l where l * stride - pad_front + k * dilation == x. Sums are
 * taken in double and rounded once. image_shape and block_shape are read when it runs. */
typedef struct {
  int spatial;
  int64_t n, c, length; /* input [n, c * prod(block), length] */
  int64_t image[REF_SPATIAL], dil[REF_SPATIAL], pad[REF_SPATIAL], pad_end[REF_SPATIAL],
      stride[REF_SPATIAL];
  odla_element_type type;
} ref_col2im_params;

static odla_status ref_col2im_run(const ref_node *node, const ref_io *io) {
  const ref_col2im_params *p = (const ref_col2im_params *)node->params;
  int64_t block[REF_SPATIAL], blocks[REF_SPATIAL], kvol = 1, lvol = 1, cells = 1, x[REF_SPATIAL];
  int64_t plane, cell, k, cols = node->inputs[0]->type.shape.dims[1];
  int i;
  /* block_shape is an input: every product below is bounded before it is formed (the block
   * volume by the columns' dim 1, the block count by their length), so no value of it
   * overflows. The planned image (1 to 2^48) plus odla_uint32 pads cannot. */
  for (i = 0; i < p->spatial; ++i) {
    int64_t padded = p->image[i] + p->pad[i] + p->pad_end[i];
    block[i] = ref_get_int(ODLA_INT64, io->in[2], i);
    if (ref_get_int(ODLA_INT64, io->in[1], i) != p->image[i] || block[i] < 1 ||
        block[i] > cols / kvol)
      return ODLA_INVALID_PARAM; /* another image shape than planned, or a block that is empty
                                    or larger than the columns hold */
    /* The dilated block spans dil * (block - 1) + 1 <= padded cells, or there is no block. */
    blocks[i] = block[i] - 1 <= (padded - 1) / p->dil[i]
                    ? (padded - p->dil[i] * (block[i] - 1) - 1) / p->stride[i] + 1
                    : 0;
    if (blocks[i] && lvol > p->length / blocks[i])
      return ODLA_INVALID_PARAM; /* more blocks than columns */
    kvol *= block[i];
    lvol *= blocks[i];
    cells *= p->image[i];
  }
  if (cols % kvol != 0 || cols / kvol != p->c || lvol != p->length)
    return ODLA_INVALID_PARAM; /* the blocks do not fit the columns */
  for (plane = 0; plane < p->n * p->c; ++plane)
    for (cell = 0; cell < cells; ++cell) {
      int64_t r = cell;
      double sum = 0;
      for (i = p->spatial - 1; i >= 0; --i) {
        x[i] = r % p->image[i];
        r /= p->image[i];
      }
      for (k = 0; k < kvol; ++k) { /* block offset k, row-major over the block's axes */
        int64_t kr = k, l = 0, lstride = 1, ok = 1;
        for (i = p->spatial - 1; i >= 0 && ok; --i) {
          int64_t ki = kr % block[i], at = x[i] + p->pad[i] - ki * p->dil[i];
          kr /= block[i];
          ok = at >= 0 && at % p->stride[i] == 0 && at / p->stride[i] < blocks[i];
          l += ok ? at / p->stride[i] * lstride : 0;
          lstride *= blocks[i];
        }
        if (ok)
          sum +=
              ref_get(p->type, io->in[0],
                      ((plane / p->c) * p->c * kvol + (plane % p->c) * kvol + k) * p->length + l);
      }
      ref_set(p->type, io->out[0], plane * cells + cell, sum);
    }
  return ODLA_SUCCESS;
}

odla_value odla_ExtCol2Im(odla_value input, odla_value image_shape, odla_value block_shape,
                          const odla_uint32 *dilations, const odla_uint32 *paddings_front,
                          const odla_uint32 *paddings_back, const odla_uint32 *strides,
                          odla_value_shape output_dims, const odla_value_id value_id) {
  ref_col2im_params p;
  odla_value in[3];
  odla_value_type out;
  int i;
  char s1[128];
  in[0] = input;
  in[1] = image_shape;
  in[2] = block_shape;
  if (!ref_check_operands("ExtCol2Im", 3, in))
    return NULL;
  if (!ref_is_float(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "ExtCol2Im", "element type %s is not supported",
                    ref_type_name(input->type.element_type));
  memset(&p, 0, sizeof p);
  p.spatial = output_dims.size - 2;
  if (input->type.shape.size != 3 || p.spatial < 1 || p.spatial > REF_SPATIAL ||
      output_dims.dims[0] != input->type.shape.dims[0])
    return ref_fail(ODLA_INVALID_PARAM, "ExtCol2Im",
                    "input %s must be [N, C * block size, L] and output_dims [N, C, 1 to 3 "
                    "image axes]",
                    ref_shape_str(&input->type.shape, s1, sizeof s1));
  for (i = 1; i < 3; ++i)
    if (in[i]->type.element_type != ODLA_INT64 || in[i]->type.shape.size != 1 ||
        in[i]->type.shape.dims[0] != p.spatial)
      return ref_fail(ODLA_INVALID_PARAM, "ExtCol2Im",
                      "%s must be an int64 vector of %d entries (the image axes)",
                      i == 1 ? "image_shape" : "block_shape", p.spatial);
  p.n = input->type.shape.dims[0];
  p.c = output_dims.dims[1];
  p.length = input->type.shape.dims[2];
  p.type = input->type.element_type;
  for (i = 0; i < p.spatial; ++i) {
    p.image[i] = output_dims.dims[2 + i];
    p.dil[i] = dilations ? dilations[i] : 1;
    p.pad[i] = paddings_front ? paddings_front[i] : 0;
    p.pad_end[i] = paddings_back ? paddings_back[i] : 0;
    p.stride[i] = strides ? strides[i] : 1;
    if (p.image[i] < 1 || p.dil[i] < 1 || p.stride[i] < 1)
      return ref_fail(ODLA_INVALID_PARAM, "ExtCol2Im",
                      "image axis %d: extent %lld, dilation %lld and stride %lld must be >= 1", i,
                      (long long)p.image[i], (long long)p.dil[i], (long long)p.stride[i]);
  }
  if (p.c < 1 || input->type.shape.dims[1] % p.c != 0)
    return ref_fail(ODLA_INVALID_PARAM, "ExtCol2Im",
                    "input %s: %lld channels do not divide its %lld columns",
                    ref_shape_str(&input->type.shape, s1, sizeof s1), (long long)p.c,
                    (long long)input->type.shape.dims[1]);
  out.element_type = p.type;
  out.shape = output_dims;
  return ref_add_op("ExtCol2Im", ref_col2im_run, 3, in, out, value_id, &p, sizeof p);
}

/* ---- What the gradient rule reads (autodiff.h) ------------------------------------------ */

int ref_conv_describe(const ref_node *node, ref_window *w, int64_t *group) {
  const ref_conv_params *p = (const ref_conv_params *)node->params;
  if (node->run != ref_conv_run)
    return 0;
  *w = p->w;
  *group = p->group;
  return 1;
}
