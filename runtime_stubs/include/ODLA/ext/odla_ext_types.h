/* odla_ext_types.h: element types beyond ODLA 0.5's odla_element_type, for ONNX's 8-bit floats
 * and 4- and 2-bit types. Included by odla_ext.h. They are values of odla_element_type from
 * ODLA_EXT_TYPE_BASE on; a backend that does not know one rejects it with
 * ODLA_UNSUPPORTED_DATATYPE.
 *
 * Storage: one byte per element for every one of them.
 *   - The 8-bit floats hold ONNX's encodings: FLOAT8E4M3FN (no infinities; NaN is S.1111.111),
 *     FLOAT8E4M3FNUZ (no infinities, no negative zero; NaN is 0x80), FLOAT8E5M2 (IEEE-like,
 *     infinities and NaNs), FLOAT8E5M2FNUZ (no infinities, no negative zero; NaN is 0x80),
 *     FLOAT8E8M0 (a power of two, 2^(e - 127), e = 255 is NaN; no zero and no sign).
 *   - The 4- and 2-bit types hold their value in the low bits of the byte: INT4 and INT2
 *     sign-extended (-8..7, -2..1), UINT4 and UINT2 zero-extended (0..15, 0..3), FLOAT4E2M1 its
 *     4-bit encoding (sign, 2 exponent bits of bias 1, 1 mantissa bit; no infinity or NaN) in the
 *     low nibble, the high nibble zero.
 * ONNX files pack two 4-bit or four 2-bit elements per byte, the first in the low bits;
 * odlac's tools unpack them where they read such files and pack them where they write them. */
#ifndef _ODLA_EXT_TYPES_H_
#define _ODLA_EXT_TYPES_H_

#include <ODLA/odla_common.h>

#define ODLA_EXT_TYPE_BASE 0x100
#define ODLA_EXT_FLOAT8E4M3FN ((odla_element_type)(ODLA_EXT_TYPE_BASE + 0))
#define ODLA_EXT_FLOAT8E4M3FNUZ ((odla_element_type)(ODLA_EXT_TYPE_BASE + 1))
#define ODLA_EXT_FLOAT8E5M2 ((odla_element_type)(ODLA_EXT_TYPE_BASE + 2))
#define ODLA_EXT_FLOAT8E5M2FNUZ ((odla_element_type)(ODLA_EXT_TYPE_BASE + 3))
#define ODLA_EXT_FLOAT8E8M0 ((odla_element_type)(ODLA_EXT_TYPE_BASE + 4))
#define ODLA_EXT_FLOAT4E2M1 ((odla_element_type)(ODLA_EXT_TYPE_BASE + 5))
#define ODLA_EXT_INT4 ((odla_element_type)(ODLA_EXT_TYPE_BASE + 6))
#define ODLA_EXT_UINT4 ((odla_element_type)(ODLA_EXT_TYPE_BASE + 7))
#define ODLA_EXT_INT2 ((odla_element_type)(ODLA_EXT_TYPE_BASE + 8))
#define ODLA_EXT_UINT2 ((odla_element_type)(ODLA_EXT_TYPE_BASE + 9))
/* One past the last extension type. */
#define ODLA_EXT_TYPE_END ((odla_element_type)(ODLA_EXT_TYPE_BASE + 10))

#endif /* _ODLA_EXT_TYPES_H_ */
