// Element types of IR tensors, and how each maps to ONNX, ODLA and C.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace odlac {

// One row per element type in dtypeInfo(); the order here is the table's order.
enum class DType : uint8_t {
  F32,
  F64,
  F16,
  BF16,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  Bool,
  // ONNX's 8-bit floats and 4- and 2-bit types (opsets 19 to 25), one byte per element
  // (runtime_stubs/include/ODLA/ext/odla_ext_types.h says how each encodes its values).
  F8E4M3FN,
  F8E4M3FNUZ,
  F8E5M2,
  F8E5M2FNUZ,
  F8E8M0,
  F4E2M1,
  I4,
  U4,
  I2,
  U2,
  // ONNX string tensors: ODLA 0.5's ODLA_STRING, one odla_string (a `const char *` to a
  // NUL-terminated UTF-8 string) per element (docs/generated-code.md, "String tensors").
  Str,
};
constexpr int kNumDTypes = 24;

struct DTypeInfo {
  DType dtype;
  const char *irName;   // f32, i64, bool ...
  int onnxType;         // onnx::TensorProto_DataType value
  const char *odlaEnum; // ODLA_FLOAT32 ...
  int odlaType;         // numeric odla_element_type value
  const char *cType;    // C type used in generated code
  unsigned bytes;       // storage size of one element
  bool isFloat;
  bool isSigned;
  unsigned bits; // bits of one value: 8 * bytes, or 4 and 2 for the types ONNX packs
};

const DTypeInfo &dtypeInfo(DType t);
inline unsigned dtypeBytes(DType t) { return dtypeInfo(t).bytes; }
inline const char *dtypeName(DType t) { return dtypeInfo(t).irName; }
inline bool isFloat(DType t) { return dtypeInfo(t).isFloat; }
inline bool isInteger(DType t) {
  return !dtypeInfo(t).isFloat && t != DType::Bool && t != DType::Str;
}
// An element type ODLA 0.5 has no value for (odla_ext_types.h).
bool isExtensionType(DType t);

std::optional<DType> dtypeFromOnnx(int onnxType);
std::optional<DType> dtypeFromName(std::string_view irName);
// Name of an ONNX TensorProto data type, for messages ("float16", "string", ...).
const char *onnxTypeName(int onnxType);

// A bit set of element types, used by op type constraints.
using DTypeMask = uint32_t;
constexpr DTypeMask maskOf(DType t) { return 1u << static_cast<unsigned>(t); }
constexpr DTypeMask kFloatTypes =
    maskOf(DType::F32) | maskOf(DType::F64) | maskOf(DType::F16) | maskOf(DType::BF16);
constexpr DTypeMask kSignedIntTypes =
    maskOf(DType::I8) | maskOf(DType::I16) | maskOf(DType::I32) | maskOf(DType::I64);
constexpr DTypeMask kUnsignedIntTypes =
    maskOf(DType::U8) | maskOf(DType::U16) | maskOf(DType::U32) | maskOf(DType::U64);
constexpr DTypeMask kIntTypes = kSignedIntTypes | kUnsignedIntTypes;
constexpr DTypeMask kNumericTypes = kFloatTypes | kIntTypes;
constexpr DTypeMask kAllTypes = kNumericTypes | maskOf(DType::Bool);
constexpr DTypeMask kIndexTypes = maskOf(DType::I32) | maskOf(DType::I64);
// The low-precision types of quantization, which ops only convert, move or quantize (ONNX
// allows no arithmetic on them).
constexpr DTypeMask kFloat8Types = maskOf(DType::F8E4M3FN) | maskOf(DType::F8E4M3FNUZ) |
                                   maskOf(DType::F8E5M2) | maskOf(DType::F8E5M2FNUZ);
constexpr DTypeMask kNarrowIntTypes =
    maskOf(DType::I4) | maskOf(DType::U4) | maskOf(DType::I2) | maskOf(DType::U2);
constexpr DTypeMask kLowPrecisionTypes =
    kFloat8Types | kNarrowIntTypes | maskOf(DType::F8E8M0) | maskOf(DType::F4E2M1);
// Every element type but strings: for ops that only move or reinterpret data.
constexpr DTypeMask kStorageTypes = kAllTypes | kLowPrecisionTypes;
// String tensors: only the string ops, Equal, and ops that move whole elements take them.
constexpr DTypeMask kStringTypes = maskOf(DType::Str);

} // namespace odlac
