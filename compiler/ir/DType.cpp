// The element type table: one row per DType, in enum order.
#include "ir/DType.h"

#include <ODLA/ext/odla_ext_types.h>
#include <ODLA/odla_common.h>

#include <cassert>
#include <string_view>

namespace odlac {
namespace {

// ONNX TensorProto.DataType numbers (onnx.proto), kept here so the IR does not depend on
// the protobuf headers.
enum OnnxType {
  kOnnxUndefined = 0,
  kOnnxFloat = 1,
  kOnnxUint8 = 2,
  kOnnxInt8 = 3,
  kOnnxUint16 = 4,
  kOnnxInt16 = 5,
  kOnnxInt32 = 6,
  kOnnxInt64 = 7,
  kOnnxString = 8,
  kOnnxBool = 9,
  kOnnxFloat16 = 10,
  kOnnxDouble = 11,
  kOnnxUint32 = 12,
  kOnnxUint64 = 13,
  kOnnxComplex64 = 14,
  kOnnxComplex128 = 15,
  kOnnxBfloat16 = 16,
  kOnnxFloat8E4M3FN = 17,
  kOnnxFloat8E4M3FNUZ = 18,
  kOnnxFloat8E5M2 = 19,
  kOnnxFloat8E5M2FNUZ = 20,
  kOnnxUint4 = 21,
  kOnnxInt4 = 22,
  kOnnxFloat4E2M1 = 23,
  kOnnxFloat8E8M0 = 24,
  kOnnxUint2 = 25,
  kOnnxInt2 = 26,
  kOnnxFloat6E2M3 = 27,
  kOnnxFloat6E3M2 = 28,
};

// ODLA_BOOL tensors hold one byte per element, as ONNX's do (odla_bool scalar parameters of
// the API are 4 bytes; tensors are not).
const DTypeInfo kTable[kNumDTypes] = {
    {DType::F32, "f32", kOnnxFloat, "ODLA_FLOAT32", ODLA_FLOAT32, "float", 4, true, true, 32},
    {DType::F64, "f64", kOnnxDouble, "ODLA_FLOAT64", ODLA_FLOAT64, "double", 8, true, true, 64},
    {DType::F16, "f16", kOnnxFloat16, "ODLA_FLOAT16", ODLA_FLOAT16, "odla_float16", 2, true, true,
     16},
    {DType::BF16, "bf16", kOnnxBfloat16, "ODLA_BFLOAT16", ODLA_BFLOAT16, "odla_bfloat16", 2, true,
     true, 16},
    {DType::I8, "i8", kOnnxInt8, "ODLA_INT8", ODLA_INT8, "odla_int8", 1, false, true, 8},
    {DType::I16, "i16", kOnnxInt16, "ODLA_INT16", ODLA_INT16, "odla_int16", 2, false, true, 16},
    {DType::I32, "i32", kOnnxInt32, "ODLA_INT32", ODLA_INT32, "odla_int32", 4, false, true, 32},
    {DType::I64, "i64", kOnnxInt64, "ODLA_INT64", ODLA_INT64, "odla_int64", 8, false, true, 64},
    {DType::U8, "u8", kOnnxUint8, "ODLA_UINT8", ODLA_UINT8, "odla_uint8", 1, false, false, 8},
    {DType::U16, "u16", kOnnxUint16, "ODLA_UINT16", ODLA_UINT16, "odla_uint16", 2, false, false,
     16},
    {DType::U32, "u32", kOnnxUint32, "ODLA_UINT32", ODLA_UINT32, "odla_uint32", 4, false, false,
     32},
    {DType::U64, "u64", kOnnxUint64, "ODLA_UINT64", ODLA_UINT64, "odla_uint64", 8, false, false,
     64},
    {DType::Bool, "bool", kOnnxBool, "ODLA_BOOL", ODLA_BOOL, "odla_uint8", 1, false, false, 8},
    {DType::F8E4M3FN, "f8e4m3fn", kOnnxFloat8E4M3FN, "ODLA_EXT_FLOAT8E4M3FN", ODLA_EXT_FLOAT8E4M3FN,
     "odla_uint8", 1, true, true, 8},
    {DType::F8E4M3FNUZ, "f8e4m3fnuz", kOnnxFloat8E4M3FNUZ, "ODLA_EXT_FLOAT8E4M3FNUZ",
     ODLA_EXT_FLOAT8E4M3FNUZ, "odla_uint8", 1, true, true, 8},
    {DType::F8E5M2, "f8e5m2", kOnnxFloat8E5M2, "ODLA_EXT_FLOAT8E5M2", ODLA_EXT_FLOAT8E5M2,
     "odla_uint8", 1, true, true, 8},
    {DType::F8E5M2FNUZ, "f8e5m2fnuz", kOnnxFloat8E5M2FNUZ, "ODLA_EXT_FLOAT8E5M2FNUZ",
     ODLA_EXT_FLOAT8E5M2FNUZ, "odla_uint8", 1, true, true, 8},
    {DType::F8E8M0, "f8e8m0", kOnnxFloat8E8M0, "ODLA_EXT_FLOAT8E8M0", ODLA_EXT_FLOAT8E8M0,
     "odla_uint8", 1, true, false, 8},
    {DType::F4E2M1, "f4e2m1", kOnnxFloat4E2M1, "ODLA_EXT_FLOAT4E2M1", ODLA_EXT_FLOAT4E2M1,
     "odla_uint8", 1, true, true, 4},
    {DType::I4, "i4", kOnnxInt4, "ODLA_EXT_INT4", ODLA_EXT_INT4, "odla_int8", 1, false, true, 4},
    {DType::U4, "u4", kOnnxUint4, "ODLA_EXT_UINT4", ODLA_EXT_UINT4, "odla_uint8", 1, false, false,
     4},
    {DType::I2, "i2", kOnnxInt2, "ODLA_EXT_INT2", ODLA_EXT_INT2, "odla_int8", 1, false, true, 2},
    {DType::U2, "u2", kOnnxUint2, "ODLA_EXT_UINT2", ODLA_EXT_UINT2, "odla_uint8", 1, false, false,
     2},
    // The element is a pointer: its size is the host's (odlac and the generated code agree on
    // it only for targets with the host's pointer width; see docs/generated-code.md).
    {DType::Str, "str", kOnnxString, "ODLA_STRING", ODLA_STRING, "odla_string",
     sizeof(const char *), false, false, 8 * sizeof(const char *)},
};

} // namespace

const DTypeInfo &dtypeInfo(DType t) {
  const DTypeInfo &info = kTable[static_cast<unsigned>(t)];
  assert(info.dtype == t && "DType table out of enum order");
  return info;
}

bool isExtensionType(DType t) { return dtypeInfo(t).odlaType >= ODLA_EXT_TYPE_BASE; }

std::optional<DType> dtypeFromOnnx(int onnxType) {
  for (const DTypeInfo &info : kTable)
    if (info.onnxType == onnxType)
      return info.dtype;
  return std::nullopt;
}

std::optional<DType> dtypeFromName(std::string_view irName) {
  for (const DTypeInfo &info : kTable)
    if (irName == info.irName)
      return info.dtype;
  return std::nullopt;
}

const char *onnxTypeName(int onnxType) {
  switch (onnxType) {
  case kOnnxFloat:
    return "float";
  case kOnnxUint8:
    return "uint8";
  case kOnnxInt8:
    return "int8";
  case kOnnxUint16:
    return "uint16";
  case kOnnxInt16:
    return "int16";
  case kOnnxInt32:
    return "int32";
  case kOnnxInt64:
    return "int64";
  case kOnnxString:
    return "string";
  case kOnnxBool:
    return "bool";
  case kOnnxFloat16:
    return "float16";
  case kOnnxDouble:
    return "double";
  case kOnnxUint32:
    return "uint32";
  case kOnnxUint64:
    return "uint64";
  case kOnnxComplex64:
    return "complex64";
  case kOnnxComplex128:
    return "complex128";
  case kOnnxBfloat16:
    return "bfloat16";
  case kOnnxFloat8E4M3FN:
    return "float8e4m3fn";
  case kOnnxFloat8E4M3FNUZ:
    return "float8e4m3fnuz";
  case kOnnxFloat8E5M2:
    return "float8e5m2";
  case kOnnxFloat8E5M2FNUZ:
    return "float8e5m2fnuz";
  case kOnnxUint4:
    return "uint4";
  case kOnnxInt4:
    return "int4";
  case kOnnxFloat4E2M1:
    return "float4e2m1";
  case kOnnxFloat8E8M0:
    return "float8e8m0";
  case kOnnxUint2:
    return "uint2";
  case kOnnxInt2:
    return "int2";
  case kOnnxFloat6E2M3:
    return "float6e2m3";
  case kOnnxFloat6E3M2:
    return "float6e3m2";
  default:
    return "undefined";
  }
}

} // namespace odlac
