/* odla_ext_string.h: odlac's extension ops on string tensors (beyond ODLA 0.5). Included by
 * odla_ext.h; see there for when generated code may use them.
 *
 * String tensors are ODLA 0.5's ODLA_STRING values: one odla_string (`const char *`) per
 * element, each pointing at a NUL-terminated UTF-8 string. ODLA 0.5 defines the type but no
 * op on it; these ops are ONNX's string ops (and ai.onnx.ml's LabelEncoder). Core ops that
 * only move elements (Reshape, Transpose, Gather, Concat, Slice, ...) and odla_Equal /
 * odla_NotEqual also take ODLA_STRING operands on the backends that declare these functions.
 *
 * Who owns the strings: an argument's and a constant's strings are the caller's and must
 * stay valid while the computation runs. The strings of a result (each element pointer the
 * backend writes into a result or a bound output) belong to the context that ran the
 * computation: they stay valid until the next execution on that context or until the context
 * is destroyed (interpret mode: until the computation is destroyed). A result element may
 * also point at one of the operands' strings, which then lives as long as that operand. */
#ifndef _ODLA_EXT_STRING_H_
#define _ODLA_EXT_STRING_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How StringNormalizer changes case. */
#define ODLA_EXT_CASE_NONE 0
#define ODLA_EXT_CASE_LOWER 1
#define ODLA_EXT_CASE_UPPER 2

/* ONNX StringConcat: lhs[i] followed by rhs[i], numpy-broadcast, both ODLA_STRING. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtStringConcat(odla_value lhs, odla_value rhs,
                                                                     const odla_value_id value_id);

/* ONNX StringNormalizer on a [C] or [1, C] ODLA_STRING input: drops the elements equal to one
 * of `stopwords` (a rank-1 ODLA_STRING constant, or NULL for none; compared byte for byte when
 * is_case_sensitive, else after both sides are lowercased), then changes the case of the rest
 * (ODLA_EXT_CASE_*). Case mapping is that of the "C" and "en_US" locales, which is all `locale`
 * may name ("" is "en_US"): ASCII letters, plus the Latin-1 Supplement, Latin Extended-A and
 * Greek and Cyrillic basic letters whose case pair has an encoding of the same length.
 * output_dims is the result's shape, known in advance: [K] or [1, K] with K the number of
 * elements kept, or [1] (or [1, 1]) holding "" when none is kept (ONNX's rule). Execution
 * fails with ODLA_INVALID_PARAM when the data keeps another number. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtStringNormalizer(odla_value input, odla_value stopwords, odla_int32 case_change_action,
                         odla_bool is_case_sensitive, const odla_char *locale,
                         odla_value_shape output_dims, const odla_value_id value_id);

/* ONNX StringSplit: splits every element of an ODLA_STRING input at `delimiter` (NULL or "":
 * at runs of ASCII whitespace, leading and trailing ones dropped), at most `maxsplit` times
 * (< 0: no limit). Results: the substrings, shape input's + [width] (ODLA_STRING, each row
 * padded with ""), and the number of substrings of each element (ODLA_INT64, input's shape).
 * width is output_dims' last extent, known in advance; execution fails with
 * ODLA_INVALID_PARAM when an element splits into more parts. */
extern ODLA_API_EXPORT odla_values ODLA_API_CALL
odla_ExtStringSplit(odla_value input, const odla_char *delimiter, odla_int64 maxsplit,
                    odla_value_shape output_dims, const odla_value_ids value_ids);

/* ONNX RegexFullMatch: whether each element of an ODLA_STRING input matches `pattern` as a
 * whole (ODLA_BOOL result, input's shape), in time linear in the element's length. The pattern
 * is RE2 syntax without flags: literals (UTF-8), '.', classes [...] of ASCII members and
 * ranges, \d \D \w \W \s \S (ASCII, as RE2's), escaped punctuation, \n \t \r \f \v \a,
 * groups (...) and (?:...), '|', the repetitions * + ? {n} {n,} {n,m} (up to 1000, lazy forms
 * too), ^ \A $ \z (text start and end) and \b \B (ASCII word boundaries). The builder rejects
 * anything else (flags, named groups, \p classes, \x, \Q, POSIX classes, non-ASCII class
 * members) with ODLA_UNSUPPORTED_DATATYPE and a message naming the pattern and the problem. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL
odla_ExtRegexFullMatch(odla_value input, const odla_char *pattern, const odla_value_id value_id);

/* ai.onnx.ml LabelEncoder: each element of input is looked up in `keys` (a rank-1 constant of
 * input's element type; strings compare byte for byte, floats by value with NaN matching NaN)
 * and replaced by the `values` element at the first matching position (a constant of keys'
 * length, any element type, which the result takes), or by `default_value` (a one-element
 * constant of values' type) when none matches. */
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_ExtLabelEncoder(odla_value input,
                                                                     odla_value keys,
                                                                     odla_value values,
                                                                     odla_value default_value,
                                                                     const odla_value_id value_id);

#ifdef __cplusplus
}
#endif

#endif /* _ODLA_EXT_STRING_H_ */
