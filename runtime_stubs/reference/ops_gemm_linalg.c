/* ops_gemm_linalg.c: odla_Einsum, odla_Det and odla_Inverse in the reference backend.
 *
 * Einsum follows numpy.einsum: letters a-z and A-Z name axes, one "..." per term stands for
 * the axes no letter names; whitespace is ignored. A letter repeated within a term takes a
 * diagonal; letters missing from the output are summed over. Without "->" the output is the
 * "..." axes followed by the letters used exactly once, in ASCII order. The "..." axes of the
 * operands align from the right and broadcast (extent 1 stretches); letters must agree
 * exactly. Every float and integer type: floats accumulate in double, integers wrap around
 * in their width. */
#include "ops_nn.h"

#include <math.h>
#include <string.h>

#define REF_EINSUM_MAX_OPERANDS 8
#define REF_EINSUM_LETTERS 52 /* a-z then A-Z; the "..." axes get the label ids after them */
#define REF_EINSUM_MAX_LABELS (REF_EINSUM_LETTERS + ODLA_MAX_DIMENSION)

typedef struct {
  int num_operands;
  int num_loops; /* output labels first (num_out of them), then the summed ones */
  int num_out;
  int64_t extent[REF_EINSUM_MAX_LABELS];
  /* Element stride of each operand along each loop (0: absent or broadcast; the sum of the
   * axes' strides for a repeated letter, which walks the diagonal). */
  int64_t stride[REF_EINSUM_MAX_OPERANDS][REF_EINSUM_MAX_LABELS];
} ref_einsum_params;

#define REF_DEFINE_EINSUM(E, S, C, SFX, ACC, MUL)                                                  \
  static odla_status ref_einsum_run_##SFX(const ref_node *node, const ref_io *io) {                \
    const ref_einsum_params *p = (const ref_einsum_params *)node->params;                          \
    S *y = (S *)io->out[0];                                                                        \
    int64_t idx[REF_EINSUM_MAX_LABELS] = {0}, off[REF_EINSUM_MAX_OPERANDS] = {0}, o = 0;           \
    int k, d;                                                                                      \
    for (d = 0; d < p->num_loops; ++d)                                                             \
      if (p->extent[d] == 0) {                                                                     \
        if (d < p->num_out)                                                                        \
          return ODLA_SUCCESS; /* an empty output */                                               \
        for (o = 0; o < ref_count(&node->outputs[0]->type.shape); ++o)                             \
          REF_STORE_##SFX(y, o, 0);                                                                \
        return ODLA_SUCCESS; /* an empty sum */                                                    \
      }                                                                                            \
    for (;;) {                                                                                     \
      ACC acc = 0;                                                                                 \
      /* The summed loops, from their zero position back to it. */                                 \
      for (;;) {                                                                                   \
        ACC prod = 1;                                                                              \
        for (k = 0; k < p->num_operands; ++k)                                                      \
          prod = MUL(prod, (ACC)REF_LOAD_##SFX((const S *)io->in[k], off[k]));                     \
        acc += prod;                                                                               \
        for (d = p->num_loops - 1; d >= p->num_out; --d) {                                         \
          for (k = 0; k < p->num_operands; ++k)                                                    \
            off[k] += p->stride[k][d];                                                             \
          if (++idx[d] < p->extent[d])                                                             \
            break;                                                                                 \
          for (k = 0; k < p->num_operands; ++k)                                                    \
            off[k] -= p->stride[k][d] * p->extent[d];                                              \
          idx[d] = 0;                                                                              \
        }                                                                                          \
        if (d < p->num_out)                                                                        \
          break;                                                                                   \
      }                                                                                            \
      REF_STORE_##SFX(y, o, acc);                                                                  \
      ++o;                                                                                         \
      for (d = p->num_out - 1; d >= 0; --d) {                                                      \
        for (k = 0; k < p->num_operands; ++k)                                                      \
          off[k] += p->stride[k][d];                                                               \
        if (++idx[d] < p->extent[d])                                                               \
          break;                                                                                   \
        for (k = 0; k < p->num_operands; ++k)                                                      \
          off[k] -= p->stride[k][d] * p->extent[d];                                                \
        idx[d] = 0;                                                                                \
      }                                                                                            \
      if (d < 0)                                                                                   \
        return ODLA_SUCCESS;                                                                       \
    }                                                                                              \
  }
#define REF_EINSUM_FMUL(a, b) ((a) * (b))
#define REF_EINSUM_FLOAT(E, S, C, SFX) REF_DEFINE_EINSUM(E, S, C, SFX, double, REF_EINSUM_FMUL)
REF_FOR_FLOAT_TYPES(REF_EINSUM_FLOAT)
/* Integers: products and sums modulo 2^64 (no signed overflow), truncated by the store. */
#define REF_EINSUM_IMUL(a, b) ((uint64_t)(a) * (uint64_t)(b))
#define REF_EINSUM_INT(E, S, C, SFX) REF_DEFINE_EINSUM(E, S, C, SFX, uint64_t, REF_EINSUM_IMUL)
REF_FOR_INT_TYPES(REF_EINSUM_INT)
#undef REF_EINSUM_FLOAT
#undef REF_EINSUM_INT

static int ref_einsum_letter(char c) {
  if (c >= 'a' && c <= 'z')
    return c - 'a';
  if (c >= 'A' && c <= 'Z')
    return 26 + (c - 'A');
  return -1;
}

/* One parsed term: labels per axis (letters 0..51, -1 for the "..." position). */
typedef struct {
  int labels[ODLA_MAX_DIMENSION + 1];
  int count;    /* entries in labels, "..." counted once */
  int ellipsis; /* whether the term has "..." */
} ref_einsum_term;

/* Parses the term starting at *s up to ',' '-' or the end; returns 0 on a syntax error. */
static int ref_einsum_parse_term(const char **s, ref_einsum_term *t) {
  memset(t, 0, sizeof *t);
  while (**s && **s != ',' && **s != '-') {
    int l;
    if (**s == '.') {
      if (t->ellipsis || strncmp(*s, "...", 3) != 0 || t->count > ODLA_MAX_DIMENSION)
        return 0;
      t->ellipsis = 1;
      t->labels[t->count++] = -1;
      *s += 3;
      continue;
    }
    l = ref_einsum_letter(**s);
    if (l < 0 || t->count > ODLA_MAX_DIMENSION)
      return 0;
    t->labels[t->count++] = l;
    ++*s;
  }
  return 1;
}

odla_value odla_Einsum(odla_values inputs, const odla_char *equation, odla_value_shape output_dims,
                       const odla_value_id value_id) {
  static const char *const op = "Einsum";
  ref_einsum_params p;
  ref_einsum_term terms[REF_EINSUM_MAX_OPERANDS], out_term;
  char eq[256];
  const char *s;
  size_t i, n = inputs.size, len = 0;
  int k, a, l, ell_rank = 0, has_arrow = 0, loop_of[REF_EINSUM_MAX_LABELS];
  int uses[REF_EINSUM_MAX_LABELS];
  int64_t extent[REF_EINSUM_MAX_LABELS];
  odla_value_type out;
  odla_element_type type;
  ref_kernel run = NULL;
  char s1[128], s2[128];
  if (n < 1 || n > REF_EINSUM_MAX_OPERANDS)
    return ref_fail(ODLA_INVALID_PARAM, op, "takes 1 to %d operands, got %d",
                    REF_EINSUM_MAX_OPERANDS, (int)n);
  if (!ref_check_operands(op, (int)n, inputs.values))
    return NULL;
  if (!equation)
    return ref_fail(ODLA_INVALID_PARAM, op, "equation is NULL");
  for (s = (const char *)equation; *s; ++s)
    if (*s != ' ' && *s != '\t') {
      if (len + 1 >= sizeof eq)
        return ref_fail(ODLA_INVALID_PARAM, op, "equation is longer than %d characters",
                        (int)sizeof eq - 1);
      eq[len++] = *s;
    }
  eq[len] = '\0';
  type = inputs.values[0]->type.element_type;
  switch (type) {
#define REF_EINSUM_CASE(E, S, C, SFX)                                                              \
  case E:                                                                                          \
    run = ref_einsum_run_##SFX;                                                                    \
    break;
    REF_FOR_NUMERIC_TYPES(REF_EINSUM_CASE)
#undef REF_EINSUM_CASE
  default:
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, op, "element type %s is not supported",
                    ref_type_name(type));
  }
  for (i = 1; i < n; ++i)
    if (inputs.values[i]->type.element_type != type)
      return ref_fail(ODLA_INVALID_PARAM, op, "operand %d is %s, operand 0 %s", (int)i,
                      ref_type_name(inputs.values[i]->type.element_type), ref_type_name(type));
  /* Parse the input terms. */
  s = eq;
  for (i = 0; i < n; ++i) {
    if (!ref_einsum_parse_term(&s, &terms[i]))
      return ref_fail(ODLA_INVALID_PARAM, op, "equation '%s': term %d is malformed", eq, (int)i);
    if (i + 1 < n && *s++ != ',')
      return ref_fail(ODLA_INVALID_PARAM, op, "equation '%s' has fewer terms than the %d operands",
                      eq, (int)n);
  }
  if (*s == ',')
    return ref_fail(ODLA_INVALID_PARAM, op, "equation '%s' has more terms than the %d operands", eq,
                    (int)n);
  if (*s == '-') {
    if (s[1] != '>')
      return ref_fail(ODLA_INVALID_PARAM, op, "equation '%s': '-' must start '->'", eq);
    s += 2;
    has_arrow = 1;
    if (!ref_einsum_parse_term(&s, &out_term) || *s)
      return ref_fail(ODLA_INVALID_PARAM, op, "equation '%s': the output term is malformed", eq);
  }
  /* Extents of the letters and of the "..." axes (right-aligned, broadcasting). */
  for (l = 0; l < REF_EINSUM_MAX_LABELS; ++l) {
    extent[l] = -1;
    uses[l] = 0;
  }
  for (i = 0; i < n; ++i) {
    const odla_value_shape *sh = &inputs.values[i]->type.shape;
    int letters = terms[i].count - terms[i].ellipsis, ell = sh->size - letters;
    if (ell < 0 || (!terms[i].ellipsis && ell != 0))
      return ref_fail(ODLA_INVALID_PARAM, op,
                      "equation '%s': term %d names %d axes, operand %d is %s", eq, (int)i, letters,
                      (int)i, ref_shape_str(sh, s1, sizeof s1));
    if (ell > ell_rank)
      ell_rank = ell;
  }
  for (i = 0; i < n; ++i) {
    const odla_value_shape *sh = &inputs.values[i]->type.shape;
    int ell = sh->size - (terms[i].count - terms[i].ellipsis);
    for (k = 0, a = 0; k < terms[i].count; ++k) {
      int e;
      if (terms[i].labels[k] >= 0) {
        l = terms[i].labels[k];
        if (extent[l] >= 0 && extent[l] != sh->dims[a])
          return ref_fail(
              ODLA_INVALID_PARAM, op, "equation '%s': letter '%c' has extent %lld and %lld", eq,
              l < 26 ? 'a' + l : 'A' + l - 26, (long long)extent[l], (long long)sh->dims[a]);
        extent[l] = sh->dims[a++];
        ++uses[l];
        continue;
      }
      for (e = 0; e < ell; ++e, ++a) {
        l = REF_EINSUM_LETTERS + ell_rank - ell + e;
        if (extent[l] >= 0 && extent[l] != sh->dims[a] && extent[l] != 1 && sh->dims[a] != 1)
          return ref_fail(ODLA_INVALID_PARAM, op, "equation '%s': the '...' axes do not broadcast",
                          eq);
        if (extent[l] < 0 || extent[l] == 1)
          extent[l] = sh->dims[a];
      }
    }
  }
  /* The output term. */
  if (!has_arrow) {
    memset(&out_term, 0, sizeof out_term);
    if (ell_rank > 0) {
      out_term.ellipsis = 1;
      out_term.labels[out_term.count++] = -1;
    }
    for (k = 0; k < 26; ++k) /* A-Z */
      if (uses[26 + k] == 1)
        out_term.labels[out_term.count++] = 26 + k;
    for (k = 0; k < 26; ++k) /* a-z */
      if (uses[k] == 1)
        out_term.labels[out_term.count++] = k;
    if (out_term.count - out_term.ellipsis + ell_rank > ODLA_MAX_DIMENSION)
      return ref_fail(ODLA_INVALID_PARAM, op, "equation '%s': the output has too many axes", eq);
  } else if (ell_rank > 0 && !out_term.ellipsis) {
    return ref_fail(ODLA_INVALID_PARAM, op,
                    "equation '%s': the operands have '...' axes but the output term has no '...'",
                    eq);
  }
  /* Loops: output labels in output order, then the summed ones. */
  memset(&p, 0, sizeof p);
  p.num_operands = (int)n;
  for (l = 0; l < REF_EINSUM_MAX_LABELS; ++l)
    loop_of[l] = -1;
  out.element_type = type;
  out.shape.size = 0;
  for (k = 0; k < out_term.count; ++k) {
    l = out_term.labels[k];
    if (l < 0) {
      int e;
      for (e = 0; e < ell_rank; ++e) {
        loop_of[REF_EINSUM_LETTERS + e] = p.num_loops;
        p.extent[p.num_loops++] = extent[REF_EINSUM_LETTERS + e];
        out.shape.dims[out.shape.size++] = extent[REF_EINSUM_LETTERS + e];
      }
      continue;
    }
    if (extent[l] < 0 || loop_of[l] >= 0)
      return ref_fail(ODLA_INVALID_PARAM, op, "equation '%s': output letter '%c' is %s", eq,
                      l < 26 ? 'a' + l : 'A' + l - 26,
                      extent[l] < 0 ? "in no input term" : "repeated");
    if (out.shape.size >= ODLA_MAX_DIMENSION)
      return ref_fail(ODLA_INVALID_PARAM, op, "equation '%s': the output has too many axes", eq);
    loop_of[l] = p.num_loops;
    p.extent[p.num_loops++] = extent[l];
    out.shape.dims[out.shape.size++] = extent[l];
  }
  p.num_out = p.num_loops;
  for (l = 0; l < REF_EINSUM_MAX_LABELS; ++l)
    if (extent[l] >= 0 && loop_of[l] < 0) {
      loop_of[l] = p.num_loops;
      p.extent[p.num_loops++] = extent[l];
    }
  /* Strides of each operand along each loop. */
  for (i = 0; i < n; ++i) {
    const odla_value_shape *sh = &inputs.values[i]->type.shape;
    int ell = sh->size - (terms[i].count - terms[i].ellipsis);
    int64_t axis_stride[ODLA_MAX_DIMENSION], st = 1;
    for (a = sh->size - 1; a >= 0; --a) {
      axis_stride[a] = st;
      st *= sh->dims[a];
    }
    for (k = 0, a = 0; k < terms[i].count; ++k) {
      int e;
      if (terms[i].labels[k] >= 0) {
        p.stride[i][loop_of[terms[i].labels[k]]] += axis_stride[a++];
        continue;
      }
      for (e = 0; e < ell; ++e, ++a) {
        l = REF_EINSUM_LETTERS + ell_rank - ell + e;
        if (sh->dims[a] != 1 || extent[l] == 1)
          p.stride[i][loop_of[l]] += axis_stride[a];
      }
    }
  }
  if (ref_shape_conflicts(&output_dims, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, op, "output_dims %s differ from the computed %s",
                    ref_shape_str(&output_dims, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  return ref_add_op(op, run, (int)n, inputs.values, out, value_id, &p, sizeof p);
}

/* ---- odla_Det ------------------------------------------------------------------------ */

typedef struct {
  int64_t batch, n;
} ref_det_params;

/* LU decomposition with partial pivoting in double, one matrix at a time. */
static odla_status ref_det_run(const ref_node *node, const ref_io *io) {
  const ref_det_params *p = (const ref_det_params *)node->params;
  odla_element_type t = node->inputs[0]->type.element_type;
  double *a = (double *)io->scratch;
  int64_t b, i, j, r, n = p->n;
  for (b = 0; b < p->batch; ++b) {
    double det = 1.0;
    for (i = 0; i < n * n; ++i)
      a[i] = ref_get(t, io->in[0], b * n * n + i);
    for (i = 0; i < n && det != 0.0; ++i) {
      int64_t piv = i;
      for (r = i + 1; r < n; ++r)
        if (fabs(a[r * n + i]) > fabs(a[piv * n + i]))
          piv = r;
      if (a[piv * n + i] == 0.0) {
        det = 0.0;
        break;
      }
      if (piv != i) {
        for (j = 0; j < n; ++j) {
          double tmp = a[i * n + j];
          a[i * n + j] = a[piv * n + j];
          a[piv * n + j] = tmp;
        }
        det = -det;
      }
      det *= a[i * n + i];
      for (r = i + 1; r < n; ++r) {
        double f = a[r * n + i] / a[i * n + i];
        for (j = i + 1; j < n; ++j)
          a[r * n + j] -= f * a[i * n + j];
      }
    }
    ref_set(t, io->out[0], b, det);
  }
  return ODLA_SUCCESS;
}

/* Determinants of the square matrices in the last two axes of input [..., n, n]: output
 * [...] (rank 0 for one matrix). Float types, computed in double. */
odla_value odla_Det(odla_value input, odla_value_shape output_shape, const odla_value_id value_id) {
  ref_det_params p;
  odla_value_type out;
  odla_value v;
  const odla_value_shape *xs;
  int i;
  char s1[128], s2[128];
  if (!ref_check_operands("Det", 1, &input))
    return NULL;
  if (!ref_is_float(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Det", "element type %s: a float type is required",
                    ref_type_name(input->type.element_type));
  xs = &input->type.shape;
  if (xs->size < 2 || xs->dims[xs->size - 1] != xs->dims[xs->size - 2])
    return ref_fail(ODLA_INVALID_PARAM, "Det", "input %s must be [..., n, n]",
                    ref_shape_str(xs, s1, sizeof s1));
  p.n = xs->dims[xs->size - 1];
  p.batch = 1;
  out.element_type = input->type.element_type;
  out.shape.size = xs->size - 2;
  for (i = 0; i < xs->size - 2; ++i) {
    out.shape.dims[i] = xs->dims[i];
    p.batch *= xs->dims[i];
  }
  if (ref_shape_conflicts(&output_shape, &out.shape))
    return ref_fail(ODLA_INVALID_PARAM, "Det", "output_shape %s differs from the computed %s",
                    ref_shape_str(&output_shape, s1, sizeof s1),
                    ref_shape_str(&out.shape, s2, sizeof s2));
  v = ref_add_op("Det", ref_det_run, 1, &input, out, value_id, &p, sizeof p);
  if (v)
    v->node->scratch_bytes = (size_t)(p.n * p.n) * sizeof(double);
  return v;
}

/* ---- odla_Inverse ---------------------------------------------------------------------- */

/* Gauss-Jordan elimination with partial pivoting in double, one matrix at a time: scratch
 * holds the matrix and its inverse being built, n x 2n. A singular matrix (a zero pivot) is
 * a data error: numpy.linalg.inv raises on it, and no result would be meaningful. */
static odla_status ref_inverse_run(const ref_node *node, const ref_io *io) {
  const ref_det_params *p = (const ref_det_params *)node->params;
  odla_element_type t = node->inputs[0]->type.element_type;
  double *a = (double *)io->scratch;
  int64_t b, i, j, r, n = p->n, w = 2 * p->n;
  for (b = 0; b < p->batch; ++b) {
    for (i = 0; i < n; ++i)
      for (j = 0; j < n; ++j) {
        a[i * w + j] = ref_get(t, io->in[0], b * n * n + i * n + j);
        a[i * w + n + j] = i == j ? 1.0 : 0.0;
      }
    for (i = 0; i < n; ++i) {
      int64_t piv = i;
      double d;
      for (r = i + 1; r < n; ++r)
        if (fabs(a[r * w + i]) > fabs(a[piv * w + i]))
          piv = r;
      if (a[piv * w + i] == 0.0 || a[piv * w + i] != a[piv * w + i]) {
        ref_report(ODLA_LOG_LEVEL_ERROR, "Inverse", "'%s': matrix %lld is singular",
                   node->outputs[0]->id, (long long)b);
        return ODLA_FAILURE;
      }
      if (piv != i)
        for (j = 0; j < w; ++j) {
          double tmp = a[i * w + j];
          a[i * w + j] = a[piv * w + j];
          a[piv * w + j] = tmp;
        }
      d = a[i * w + i];
      for (j = 0; j < w; ++j)
        a[i * w + j] /= d;
      for (r = 0; r < n; ++r) {
        double f = a[r * w + i];
        if (r == i || f == 0.0)
          continue;
        for (j = 0; j < w; ++j)
          a[r * w + j] -= f * a[i * w + j];
      }
    }
    for (i = 0; i < n; ++i)
      for (j = 0; j < n; ++j)
        ref_set(t, io->out[0], b * n * n + i * n + j, a[i * w + n + j]);
  }
  return ODLA_SUCCESS;
}

/* Inverses of the square matrices in the last two axes of input [..., n, n], same shape.
 * Float types, computed in double and rounded once to the element type. A singular matrix
 * fails the execution (ODLA_FAILURE, logged with the matrix's index). */
odla_value odla_Inverse(odla_value input, const odla_value_id value_id) {
  ref_det_params p;
  odla_value v;
  const odla_value_shape *xs;
  int i;
  char s1[128];
  if (!ref_check_operands("Inverse", 1, &input))
    return NULL;
  if (!ref_is_float(input->type.element_type))
    return ref_fail(ODLA_UNSUPPORTED_DATATYPE, "Inverse",
                    "element type %s: a float type is required",
                    ref_type_name(input->type.element_type));
  xs = &input->type.shape;
  if (xs->size < 2 || xs->dims[xs->size - 1] != xs->dims[xs->size - 2])
    return ref_fail(ODLA_INVALID_PARAM, "Inverse", "input %s must be [..., n, n]",
                    ref_shape_str(xs, s1, sizeof s1));
  p.n = xs->dims[xs->size - 1];
  p.batch = 1;
  for (i = 0; i < xs->size - 2; ++i)
    p.batch *= xs->dims[i];
  v = ref_add_op("Inverse", ref_inverse_run, 1, &input, ref_type_of(input), value_id, &p, sizeof p);
  if (v)
    v->node->scratch_bytes = (size_t)(2 * p.n * p.n) * sizeof(double);
  return v;
}
