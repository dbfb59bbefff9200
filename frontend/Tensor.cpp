// Decodes ONNX TensorProtos into IR constants. External data files are mapped, not copied,
// and must be regular files that resolve to a path inside the model's folder.
#include "Tensor.h"

#include "ir/Limits.h"
#include "support/Text.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace odlac {
namespace {

template <class To, class From>
std::shared_ptr<const Buffer> narrow(const google::protobuf::RepeatedField<From> &src) {
  std::vector<To> tmp(src.begin(), src.end());
  return Buffer::copyOf(tmp.data(), tmp.size() * sizeof(To));
}

bool isExternal(const onnx::TensorProto &t) {
  return t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL;
}

// Calls `fn` on every tensor of the model: initializers (dense and sparse) and attribute
// tensors, in every graph, every body and every local function.
void forEachTensor(const onnx::GraphProto &g,
                   const std::function<void(const onnx::TensorProto &)> &fn);

void forEachNodeTensor(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                       const std::function<void(const onnx::TensorProto &)> &fn) {
  for (const onnx::NodeProto &n : nodes)
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.has_t())
        fn(a.t());
      for (const onnx::TensorProto &t : a.tensors())
        fn(t);
      if (a.has_sparse_tensor()) {
        fn(a.sparse_tensor().values());
        fn(a.sparse_tensor().indices());
      }
      if (a.has_g())
        forEachTensor(a.g(), fn);
      for (const onnx::GraphProto &b : a.graphs())
        forEachTensor(b, fn);
    }
}

void forEachTensor(const onnx::GraphProto &g,
                   const std::function<void(const onnx::TensorProto &)> &fn) {
  for (const onnx::TensorProto &t : g.initializer())
    fn(t);
  for (const onnx::SparseTensorProto &t : g.sparse_initializer()) {
    fn(t.values());
    fn(t.indices());
  }
  forEachNodeTensor(g.node(), fn);
}

void forEachTensor(const onnx::ModelProto &m,
                   const std::function<void(const onnx::TensorProto &)> &fn) {
  forEachTensor(m.graph(), fn);
  for (const onnx::FunctionProto &f : m.functions())
    forEachNodeTensor(f.node(), fn);
}

// An external-data offset or length: decimal digits only (no sign, no spaces, no suffix),
// at most INT64_MAX.
std::optional<int64_t> parseSize(const std::string &text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  CheckedInt v = 0;
  for (char ch : text)
    v = v * 10 + (ch - '0');
  return v.get();
}

// What a tensor's external_data says and where it resolves to, after every check: a regular
// file inside the model's folder that holds bytes [offset, offset + bytes).
struct ExternalRef {
  std::string location; // as the model gives it (relative to the model's folder)
  int64_t offset = 0;
  int fd = -1; // open, read-only; the caller closes it
};

const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  return "not a regular file";
}

// Validates a tensor's external_data entries and opens the file they name. `bytes` is what
// the tensor's type needs. The file is opened without following a final symlink (the path
// is already resolved) and without blocking (a FIFO would block in open() until a writer
// comes), and must be a regular file.
Expected<ExternalRef> openExternal(const onnx::TensorProto &t, const std::string &modelDir,
                                   int64_t bytes) {
  std::string what = "tensor '" + printable(t.name()) + "': external data";
  ExternalRef ref;
  std::optional<int64_t> length;
  std::set<std::string> seen;
  bool hasLocation = false;
  for (const auto &kv : t.external_data()) {
    const std::string &key = kv.key(), &value = kv.value();
    if ((key == "location" || key == "offset" || key == "length") && !seen.insert(key).second)
      return Status::error(what + ": key '" + key + "' is given twice");
    if (key == "location") {
      ref.location = value;
      hasLocation = true;
    } else if (key == "offset" || key == "length") {
      auto v = parseSize(value);
      if (!v)
        return Status::error(what + ": " + key + " '" + printable(value) +
                             "' is not a byte count (decimal digits only, at most 2^63 - 1)");
      (key == "offset" ? ref.offset : length.emplace()) = *v;
    }
  }
  what += " '" + printable(ref.location) + "'";
  if (!hasLocation || ref.location.empty())
    return Status::error(what + " has no location");
  for (unsigned char ch : ref.location)
    if (ch < 0x20 || ch == 0x7f)
      return Status::error(what + ": the location contains " +
                           (ch == 0 ? std::string("a NUL byte") : "a control character") +
                           "; file names reach depfiles and messages, so odlac refuses them");
  if (ref.location[0] == '/')
    return Status::error(what + " is an absolute path; it must be relative to the model's folder");
  char dirReal[PATH_MAX], fileReal[PATH_MAX];
  std::string path = modelDir + "/" + ref.location;
  if (!realpath(modelDir.c_str(), dirReal) || !realpath(path.c_str(), fileReal))
    return Status::error(what + " does not exist (looked for " + printable(path) + ")");
  std::string dir = std::string(dirReal) + "/";
  if (std::strncmp(fileReal, dir.c_str(), dir.size()) != 0)
    return Status::error(what + " resolves outside the model's folder (to " + printable(fileReal) +
                         ")");
  if (length && *length != bytes)
    return Status::error(what + " has length " + std::to_string(*length) +
                         " but the tensor needs " + std::to_string(bytes) + " bytes");
  int fd = open(fileReal, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  int openError = errno;
  struct stat st;
  bool known = fd >= 0 ? fstat(fd, &st) == 0 : stat(fileReal, &st) == 0;
  if (known && !S_ISREG(st.st_mode)) { // a socket cannot even be opened: say what it is
    if (fd >= 0)
      close(fd);
    return Status::error(what + " is " + fileKind(st.st_mode) +
                         "; external data must be a regular file");
  }
  if (fd < 0 || !known) {
    int error = fd < 0 ? openError : errno;
    if (fd >= 0)
      close(fd);
    return Status::error(what + " cannot be opened: " + std::strerror(error));
  }
  CheckedInt end = CheckedInt(ref.offset) + bytes;
  if (!end.valid() || end.value() > st.st_size) {
    close(fd);
    return Status::error(what + ": bytes " + std::to_string(ref.offset) + ".." +
                         (end.valid() ? std::to_string(end.value()) : std::string("2^63+")) +
                         " lie past its end (" + std::to_string(st.st_size) + " bytes)");
  }
  ref.fd = fd;
  return ref;
}

// The tensor's IR type, or why it has none (an element type odlac lacks, dims beyond what
// the IR represents).
Expected<TensorType> tensorType(const onnx::TensorProto &t) {
  std::string what = "tensor '" + printable(t.name()) + "'";
  auto dtype = dtypeFromOnnx(t.data_type());
  if (!dtype)
    return Status::error(what + ": element type " + onnxTypeName(t.data_type()) +
                         " is not supported");
  TensorType type{*dtype, Dims(t.dims().begin(), t.dims().end())};
  std::string problem = shapeProblem(type);
  if (!problem.empty())
    return Status::error(what + " " + toString(type) + ": " + problem);
  return type;
}

Expected<std::shared_ptr<const Buffer>> mapExternal(const onnx::TensorProto &t,
                                                    const std::string &modelDir, int64_t want) {
  auto ref = openExternal(t, modelDir, want);
  if (!ref)
    return ref.takeStatus();
  int fd = ref->fd;
  auto buf = std::make_shared<Buffer>();
  buf->size = static_cast<size_t>(want);
  if (want == 0) {
    close(fd);
    buf->data = "";
    return std::shared_ptr<const Buffer>(buf);
  }
  // mmap needs a page-aligned offset; map from the page start and point inside.
  int64_t page = sysconf(_SC_PAGESIZE);
  int64_t start = ref->offset / page * page;
  size_t mapLen = static_cast<size_t>(ref->offset - start + want);
  void *m = mmap(nullptr, mapLen, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
  close(fd);
  if (m == MAP_FAILED)
    return Status::error("tensor '" + printable(t.name()) + "': external data '" +
                         printable(ref->location) + "' cannot be mapped: " + std::strerror(errno));
  buf->data = static_cast<const char *>(m) + (ref->offset - start);
  buf->fileMapped = true;
  buf->owner = std::shared_ptr<const void>(
      m, [mapLen](const void *p) { munmap(const_cast<void *>(p), mapLen); });
  return std::shared_ptr<const Buffer>(buf);
}

} // namespace

Status checkExternalData(const onnx::ModelProto &m, const std::string &modelDir,
                         std::set<std::string> *files) {
  Status all;
  forEachTensor(m, [&](const onnx::TensorProto &t) {
    if (!isExternal(t))
      return;
    auto type = tensorType(t);
    auto ref = type ? openExternal(t, modelDir, static_cast<int64_t>(type->byteSize()))
                    : Expected<ExternalRef>(type.status());
    if (!ref) {
      all.append(ref.status());
      return;
    }
    close(ref->fd);
    if (files)
      files->insert(modelDir + "/" + ref->location);
  });
  return all;
}

// Raw data this large lives in its own heap block (not inside the string object), aligned
// for any element type: it can be referenced in place.
constexpr size_t kMinShared = 64;

bool usesExternalData(const onnx::ModelProto &m) {
  bool any = false;
  forEachTensor(m, [&](const onnx::TensorProto &t) { any |= isExternal(t); });
  return any;
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

namespace {

// decodeTensor with the raw data given apart (`raw`: null when the tensor has none), owned by
// `keepAlive` when that is given (then referenced in place).
Expected<DecodedTensor> decode(const onnx::TensorProto &t, const std::string &modelDir,
                               const std::string *raw,
                               const std::shared_ptr<const void> &keepAlive) {
  std::string what = "tensor '" + printable(t.name()) + "'";
  auto type = tensorType(t);
  if (!type)
    return type.takeStatus();
  DecodedTensor out;
  out.type = *type;
  size_t count = static_cast<size_t>(out.type.numElements());
  DType dtype = out.type.dtype;
  if (dtype == DType::Str) {
    // ONNX keeps strings in string_data only (onnx.proto); odlac's string elements are
    // NUL-terminated (docs/generated-code.md, "String tensors"), so a NUL byte is refused.
    if (isExternal(t) || raw)
      return Status::error(what + ": a string tensor keeps its elements in string_data, not " +
                           (isExternal(t) ? "external data" : "raw_data"));
    if (static_cast<size_t>(t.string_data_size()) != count)
      return Status::error(what + ": holds " + std::to_string(t.string_data_size()) +
                           " strings, its type " + toString(out.type) + " needs " +
                           std::to_string(count));
    std::vector<std::string> strings(t.string_data().begin(), t.string_data().end());
    for (size_t i = 0; i < strings.size(); ++i)
      if (strings[i].find('\0') != std::string::npos)
        return Status::error(what + ": string_data[" + std::to_string(i) +
                             "] holds a NUL byte (odlac's strings are NUL-terminated)");
    out.data = Buffer::ofStrings(std::move(strings));
    return out;
  }
  size_t bytes = fileBytes(count, dtype);
  bool packed = dtypeInfo(dtype).bits < 8;
  if (isExternal(t)) {
    auto mapped = mapExternal(t, modelDir, static_cast<int64_t>(bytes));
    if (!mapped)
      return mapped.takeStatus();
    out.data = packed ? unpackNarrow((*mapped)->as<unsigned char>(), count, dtype) : *mapped;
    return out;
  }
  if (raw && packed) {
    if (raw->size() != bytes)
      return Status::error(what + ": raw_data holds " + std::to_string(raw->size()) +
                           " bytes, its type " + toString(out.type) + " needs " +
                           std::to_string(bytes) + " (packed)");
    out.data = unpackNarrow(reinterpret_cast<const unsigned char *>(raw->data()), count, dtype);
    return out;
  }
  if (raw) {
    if (raw->size() != bytes)
      return Status::error(what + ": raw_data holds " + std::to_string(raw->size()) +
                           " bytes, its type " + toString(out.type) + " needs " +
                           std::to_string(bytes));
    if (keepAlive && bytes >= kMinShared) {
      auto shared = std::make_shared<Buffer>();
      shared->data = raw->data();
      shared->size = bytes;
      shared->owner = keepAlive;
      out.data = shared;
    } else {
      out.data = Buffer::copyOf(raw->data(), bytes);
    }
    return out;
  }
  // The low-precision types keep one byte (one value, or packed values) per int32_data entry.
  if (isExtensionType(dtype))
    for (int i = 0; i < t.int32_data_size(); ++i)
      if (t.int32_data(i) < 0 || t.int32_data(i) > 255)
        return Status::error(what + ": int32_data[" + std::to_string(i) +
                             "] = " + std::to_string(t.int32_data(i)) + " does not fit a byte of " +
                             toString(out.type) + " (0 to 255)");
  size_t have = 0;
  switch (out.type.dtype) {
  case DType::F32:
    have = t.float_data_size();
    out.data = narrow<float>(t.float_data());
    break;
  case DType::F64:
    have = t.double_data_size();
    out.data = narrow<double>(t.double_data());
    break;
  case DType::I64:
    have = t.int64_data_size();
    out.data = narrow<int64_t>(t.int64_data());
    break;
  case DType::I32:
    have = t.int32_data_size();
    out.data = narrow<int32_t>(t.int32_data());
    break;
  case DType::I16:
    have = t.int32_data_size();
    out.data = narrow<int16_t>(t.int32_data());
    break;
  case DType::I8:
    have = t.int32_data_size();
    out.data = narrow<int8_t>(t.int32_data());
    break;
  case DType::U16:
  case DType::F16:
  case DType::BF16:
    have = t.int32_data_size();
    out.data = narrow<uint16_t>(t.int32_data());
    break;
  case DType::U8:
  case DType::Bool:
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ:
  case DType::F8E8M0:
    have = t.int32_data_size();
    out.data = narrow<uint8_t>(t.int32_data());
    break;
  case DType::U32:
    have = t.uint64_data_size();
    out.data = narrow<uint32_t>(t.uint64_data());
    break;
  case DType::U64:
    have = t.uint64_data_size();
    out.data = narrow<uint64_t>(t.uint64_data());
    break;
  case DType::Str:
    break; // decoded above
  case DType::F4E2M1:
  case DType::I4:
  case DType::U4:
  case DType::I2:
  case DType::U2: { // each int32 holds 8 / bits elements in its low byte
    size_t perInt = 8 / dtypeInfo(dtype).bits;
    if (static_cast<size_t>(t.int32_data_size()) != (count + perInt - 1) / perInt)
      return Status::error(what + ": holds " + std::to_string(t.int32_data_size()) +
                           " int32_data entries, its type " + toString(out.type) + " needs " +
                           std::to_string((count + perInt - 1) / perInt) + " (packed)");
    std::vector<unsigned char> low(t.int32_data().begin(), t.int32_data().end());
    out.data = unpackNarrow(low.data(), count, dtype);
    have = count;
    break;
  }
  }
  if (have != count)
    return Status::error(what + ": holds " + std::to_string(have) + " elements, its type " +
                         toString(out.type) + " needs " + std::to_string(count));
  return out;
}

} // namespace

Expected<DecodedTensor> decodeTensor(const onnx::TensorProto &t, const std::string &modelDir,
                                     const std::shared_ptr<const void> &keepAlive) {
  return decode(t, modelDir, t.has_raw_data() ? &t.raw_data() : nullptr, keepAlive);
}

Expected<DecodedTensor> takeTensor(onnx::TensorProto &t, const std::string &modelDir) {
  if (!t.has_raw_data())
    return decode(t, modelDir, nullptr, nullptr);
  auto raw = std::make_shared<std::string>(std::move(*t.mutable_raw_data()));
  t.clear_raw_data();
  return decode(t, modelDir, raw.get(), raw);
}

} // namespace odlac
