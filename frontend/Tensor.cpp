// Decodes ONNX TensorProtos into IR constants. External data files are mapped, not copied,
// and must resolve to a file inside the model's folder.
#include "Tensor.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace odlac {
namespace {

template <class To, class From>
std::shared_ptr<const Buffer> narrow(const google::protobuf::RepeatedField<From> &src) {
  std::vector<To> tmp(src.begin(), src.end());
  return Buffer::copyOf(tmp.data(), tmp.size() * sizeof(To));
}

std::string externalLocation(const onnx::TensorProto &t) {
  for (const auto &kv : t.external_data())
    if (kv.key() == "location")
      return kv.value();
  return "";
}

// Resolves an external data location to a real path inside the model's folder.
Expected<std::string> confinedPath(const onnx::TensorProto &t, const std::string &modelDir) {
  std::string location = externalLocation(t);
  std::string what = "tensor '" + t.name() + "': external data '" + location + "'";
  if (location.empty())
    return Status::error(what + " has no location");
  if (location[0] == '/')
    return Status::error(what + " is an absolute path; it must be relative to the model's folder");
  char dirReal[PATH_MAX], fileReal[PATH_MAX];
  std::string path = modelDir + "/" + location;
  if (!realpath(modelDir.c_str(), dirReal) || !realpath(path.c_str(), fileReal))
    return Status::error(what + " does not exist (looked for " + path + ")");
  std::string dir = std::string(dirReal) + "/";
  if (std::strncmp(fileReal, dir.c_str(), dir.size()) != 0)
    return Status::error(what + " resolves outside the model's folder");
  return std::string(fileReal);
}

Expected<std::shared_ptr<const Buffer>> mapExternal(const onnx::TensorProto &t,
                                                    const std::string &modelDir, size_t want) {
  uint64_t offset = 0, length = want;
  bool hasLength = false;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "offset")
      offset = std::strtoull(kv.value().c_str(), nullptr, 10);
    else if (kv.key() == "length") {
      length = std::strtoull(kv.value().c_str(), nullptr, 10);
      hasLength = true;
    }
  }
  std::string what = "tensor '" + t.name() + "': external data '" + externalLocation(t) + "'";
  auto real = confinedPath(t, modelDir);
  if (!real)
    return real.takeStatus();
  const char *fileReal = real->c_str();
  if (hasLength && length != want)
    return Status::error(what + " has length " + std::to_string(length) + " but the tensor needs " +
                         std::to_string(want) + " bytes");
  int fd = open(fileReal, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0)
      close(fd);
    return Status::error(what + " cannot be opened");
  }
  if (offset + want > static_cast<uint64_t>(st.st_size)) {
    close(fd);
    return Status::error(what + ": bytes " + std::to_string(offset) + ".." +
                         std::to_string(offset + want) + " lie past its end (" +
                         std::to_string(st.st_size) + " bytes)");
  }
  auto buf = std::make_shared<Buffer>();
  buf->size = want;
  if (want == 0) {
    close(fd);
    buf->data = "";
    return std::shared_ptr<const Buffer>(buf);
  }
  // mmap needs a page-aligned offset; map from the page start and point inside.
  long page = sysconf(_SC_PAGESIZE);
  uint64_t start = offset / page * page;
  size_t mapLen = static_cast<size_t>(offset - start + want);
  void *m = mmap(nullptr, mapLen, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
  close(fd);
  if (m == MAP_FAILED)
    return Status::error(what + " cannot be mapped");
  buf->data = static_cast<const char *>(m) + (offset - start);
  buf->owner = std::shared_ptr<const void>(m, [mapLen](const void *p) {
    munmap(const_cast<void *>(p), mapLen);
  });
  return std::shared_ptr<const Buffer>(buf);
}

} // namespace

Status checkExternalData(const onnx::ModelProto &m, const std::string &modelDir,
                         std::set<std::string> *files) {
  Status all;
  auto check = [&](const onnx::TensorProto &t) {
    if (t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL) {
      auto p = confinedPath(t, modelDir);
      if (!p)
        all.append(p.status());
      else if (files)
        files->insert(modelDir + "/" + externalLocation(t));
    }
  };
  for (const onnx::TensorProto &t : m.graph().initializer())
    check(t);
  for (const onnx::NodeProto &n : m.graph().node())
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.has_t())
        check(a.t());
  return all;
}

// Raw data this large lives in its own heap block (not inside the string object), aligned
// for any element type: it can be referenced in place.
constexpr size_t kMinShared = 64;

static bool isExternal(const onnx::TensorProto &t) {
  return t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL;
}

static bool graphUsesExternalData(const onnx::GraphProto &g);

static bool nodesUseExternalData(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &ns) {
  for (const onnx::NodeProto &n : ns)
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.has_t() && isExternal(a.t()))
        return true;
      for (const onnx::TensorProto &t : a.tensors())
        if (isExternal(t))
          return true;
      if (a.has_g() && graphUsesExternalData(a.g()))
        return true;
      for (const onnx::GraphProto &b : a.graphs())
        if (graphUsesExternalData(b))
          return true;
    }
  return false;
}

static bool graphUsesExternalData(const onnx::GraphProto &g) {
  for (const onnx::TensorProto &t : g.initializer())
    if (isExternal(t))
      return true;
  for (const onnx::SparseTensorProto &t : g.sparse_initializer())
    if (isExternal(t.values()) || isExternal(t.indices()))
      return true;
  return nodesUseExternalData(g.node());
}

bool usesExternalData(const onnx::ModelProto &m) {
  if (graphUsesExternalData(m.graph()))
    return true;
  for (const onnx::FunctionProto &f : m.functions())
    if (nodesUseExternalData(f.node()))
      return true;
  return false;
}

namespace {

// The 4- and 2-bit types are packed in files, the first element in the lowest bits; IR buffers
// hold one per byte, the signed ones sign-extended (odla_ext_types.h).
std::shared_ptr<const Buffer> unpackNarrow(const unsigned char *packed, size_t count, DType t) {
  unsigned bits = dtypeInfo(t).bits, perByte = 8 / bits, mask = (1u << bits) - 1;
  std::vector<unsigned char> out(count);
  for (size_t i = 0; i < count; ++i) {
    unsigned v = (packed[i / perByte] >> (bits * (i % perByte))) & mask;
    if (dtypeInfo(t).isSigned && !dtypeInfo(t).isFloat && (v >> (bits - 1)))
      v |= ~mask; // sign-extend INT4 and INT2
    out[i] = static_cast<unsigned char>(v);
  }
  return Buffer::copyOf(out.data(), out.size());
}

// Bytes a file holds for `count` elements of `t`.
size_t fileBytes(size_t count, DType t) {
  unsigned bits = dtypeInfo(t).bits;
  return bits < 8 ? (count * bits + 7) / 8 : count * dtypeBytes(t);
}

} // namespace

Expected<DecodedTensor> decodeTensor(const onnx::TensorProto &t, const std::string &modelDir,
                                     const std::shared_ptr<const void> &keepAlive) {
  std::string what = "tensor '" + t.name() + "'";
  auto dtype = dtypeFromOnnx(t.data_type());
  if (!dtype)
    return Status::error(what + ": element type " + onnxTypeName(t.data_type()) +
                         " is not supported");
  DecodedTensor out;
  out.type.dtype = *dtype;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return Status::error(what + ": negative dim " + std::to_string(d));
    out.type.dims.push_back(d);
  }
  size_t count = static_cast<size_t>(out.type.numElements());
  size_t bytes = fileBytes(count, *dtype);
  bool packed = dtypeInfo(*dtype).bits < 8;
  if (t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL) {
    auto mapped = mapExternal(t, modelDir, bytes);
    if (!mapped)
      return mapped.takeStatus();
    out.data = packed ? unpackNarrow((*mapped)->as<unsigned char>(), count, *dtype) : *mapped;
    return out;
  }
  if (t.has_raw_data() && packed) {
    if (t.raw_data().size() != bytes)
      return Status::error(what + ": raw_data holds " + std::to_string(t.raw_data().size()) +
                           " bytes, its type " + toString(out.type) + " needs " +
                           std::to_string(bytes) + " (packed)");
    out.data = unpackNarrow(reinterpret_cast<const unsigned char *>(t.raw_data().data()), count,
                            *dtype);
    return out;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != bytes)
      return Status::error(what + ": raw_data holds " + std::to_string(t.raw_data().size()) +
                           " bytes, its type " + toString(out.type) + " needs " +
                           std::to_string(bytes));
    if (keepAlive && bytes >= kMinShared) {
      auto shared = std::make_shared<Buffer>();
      shared->data = t.raw_data().data();
      shared->size = bytes;
      shared->owner = keepAlive;
      out.data = shared;
    } else {
      out.data = Buffer::copyOf(t.raw_data().data(), bytes);
    }
    return out;
  }
  // The low-precision types keep one byte (one value, or packed values) per int32_data entry.
  if (isExtensionType(*dtype))
    for (int i = 0; i < t.int32_data_size(); ++i)
      if (t.int32_data(i) < 0 || t.int32_data(i) > 255)
        return Status::error(what + ": int32_data[" + std::to_string(i) + "] = " +
                             std::to_string(t.int32_data(i)) + " does not fit a byte of " +
                             toString(out.type) + " (0 to 255)");
  size_t have = 0;
  switch (*dtype) {
  case DType::F32: have = t.float_data_size(); out.data = narrow<float>(t.float_data()); break;
  case DType::F64: have = t.double_data_size(); out.data = narrow<double>(t.double_data()); break;
  case DType::I64: have = t.int64_data_size(); out.data = narrow<int64_t>(t.int64_data()); break;
  case DType::I32: have = t.int32_data_size(); out.data = narrow<int32_t>(t.int32_data()); break;
  case DType::I16: have = t.int32_data_size(); out.data = narrow<int16_t>(t.int32_data()); break;
  case DType::I8: have = t.int32_data_size(); out.data = narrow<int8_t>(t.int32_data()); break;
  case DType::U16:
  case DType::F16:
  case DType::BF16: have = t.int32_data_size(); out.data = narrow<uint16_t>(t.int32_data()); break;
  case DType::U8:
  case DType::Bool:
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ:
  case DType::F8E8M0: have = t.int32_data_size(); out.data = narrow<uint8_t>(t.int32_data()); break;
  case DType::U32: have = t.uint64_data_size(); out.data = narrow<uint32_t>(t.uint64_data()); break;
  case DType::U64: have = t.uint64_data_size(); out.data = narrow<uint64_t>(t.uint64_data()); break;
  case DType::F4E2M1:
  case DType::I4:
  case DType::U4:
  case DType::I2:
  case DType::U2: { // each int32 holds 8 / bits elements in its low byte
    size_t perInt = 8 / dtypeInfo(*dtype).bits;
    if (static_cast<size_t>(t.int32_data_size()) != (count + perInt - 1) / perInt)
      return Status::error(what + ": holds " + std::to_string(t.int32_data_size()) +
                           " int32_data entries, its type " + toString(out.type) + " needs " +
                           std::to_string((count + perInt - 1) / perInt) + " (packed)");
    std::vector<unsigned char> low(t.int32_data().begin(), t.int32_data().end());
    out.data = unpackNarrow(low.data(), count, *dtype);
    have = count;
    break;
  }
  }
  if (have != count)
    return Status::error(what + ": holds " + std::to_string(have) + " elements, its type " +
                         toString(out.type) + " needs " + std::to_string(count));
  return out;
}

} // namespace odlac
