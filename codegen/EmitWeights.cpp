// Writes the weights: NAME_weights.c (C arrays), or NAME.weights.bin (a blob) and the loader
// that NAME.c and NAME_store.c read it with. WeightsMode::Obj's NAME_weights.o is the driver's
// (ObjectWriter.h).
#include "Emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <vector>

namespace odlac::emit {

namespace {

// Array initializers written in pieces: literals as many to a line as fit in 100 columns
// after an indentation of 4, the text handed to the sink whenever 1 MiB has gathered.
class Literals {
public:
  explicit Literals(const FileSink &sink) : sink_(sink) {}
  // The next literal; `last` leaves its comma off.
  Status add(const std::string &literal, bool last) {
    constexpr size_t kWidth = 100 - 4;
    size_t size = literal.size() + (last ? 0 : 1);
    if (column_ && column_ + 1 + size > kWidth) {
      text_ += "\n    ";
      column_ = 0;
    }
    text_ += column_ ? " " : "";
    text_ += literal;
    text_ += last ? "" : ",";
    column_ += (column_ ? 1 : 0) + size;
    return text_.size() >= (1u << 20) ? flush() : Status::ok();
  }
  void raw(const std::string &text) {
    text_ += text;
    column_ = 0;
  }
  Status flush() {
    Status s = sink_(text_.data(), text_.size());
    text_.clear();
    return s;
  }

private:
  const FileSink &sink_;
  std::string text_;
  size_t column_ = 0;
};

// The literal of element i of constant data `d` of type `t`. Types without literals of their
// own (float16, bfloat16, float8, float4, the packed 4- and 2-bit integers, bool) are written
// as the integers of their storage type: encodings or values. Infinities and NaN are written
// as HUGE_VALF, HUGE_VAL and NAN, which need <math.h>.
std::string literal(const void *d, DType t, size_t i) {
  switch (t) {
  case DType::F32:
    return cFloat(static_cast<const float *>(d)[i]);
  case DType::F64:
    return cDouble(static_cast<const double *>(d)[i]);
  case DType::I64: {
    int64_t v = static_cast<const int64_t *>(d)[i];
    return v == INT64_MIN ? std::string("(-9223372036854775807LL - 1)") : std::to_string(v) + "LL";
  }
  case DType::U64:
    return std::to_string(static_cast<const uint64_t *>(d)[i]) + "ULL";
  default:
    break; // the rest by storage type, below; strings are never weights (NAME.c holds them)
  }
  const DTypeInfo &info = dtypeInfo(t);
  bool isSigned = info.isSigned && !info.isFloat; // encodings are unsigned
  switch (info.bytes) {
  case 1:
    return isSigned ? std::to_string(static_cast<const int8_t *>(d)[i])
                    : std::to_string(static_cast<const uint8_t *>(d)[i]);
  case 2:
    return isSigned ? std::to_string(static_cast<const int16_t *>(d)[i])
                    : std::to_string(static_cast<const uint16_t *>(d)[i]);
  default:
    assert(info.bytes == 4);
    return isSigned ? std::to_string(static_cast<const int32_t *>(d)[i])
                    : std::to_string(static_cast<const uint32_t *>(d)[i]);
  }
}

// Elements of a constant read 8 MiB at a time: mapped external data leaves memory as it is
// read (Buffer::dropPages).
constexpr size_t kReadBytes = size_t{8} << 20;

template <class T> bool anyNonFinite(const Buffer &b, size_t n) {
  const T *p = b.as<T>();
  const size_t step = kReadBytes / sizeof(T);
  bool any = false;
  for (size_t from = 0; from < n; from += step) {
    size_t to = std::min(n, from + step);
    for (size_t i = from; i < to; ++i)
      any |= !std::isfinite(p[i]);
    b.dropPages(p + from, (to - from) * sizeof(T));
  }
  return any;
}

// Whether a float constant holds an infinity or NaN (its literals then need <math.h>).
bool nonFinite(const Value &c) {
  size_t n = static_cast<size_t>(c.type().numElements());
  if (c.dtype() == DType::F32)
    return anyNonFinite<float>(*c.data(), n);
  if (c.dtype() == DType::F64)
    return anyNonFinite<double>(*c.data(), n);
  return false;
}

} // namespace

// The blob loader: checks magic, version, size and fingerprint before trusting the file.
void writeBlobLoader(CWriter &w, const Emitter &e) {
  std::string fp = fmt::format("{:#018x}ull", e.fingerprint);
  w.line("/* Weights blob layout: bytes 0-7 \"ODLACWB1\", 8-15 payload size, 16-23 fingerprint");
  w.line(" * (FNV-1a of the tensors), little-endian; tensors start at byte " +
         std::to_string(kBlobHeader) + ", each " + std::to_string(kBlobAlign) +
         "-byte aligned. */");
  w.line("#define " + e.N + "_BLOB_PAYLOAD " + std::to_string(e.blobBytes) + "ull");
  w.line("#define " + e.N + "_BLOB_FINGERPRINT " + fp);
  w.line();
  w.open("static unsigned long long " + e.n + "_le64(const unsigned char *p)");
  w.line("unsigned long long v = 0;");
  w.line("int i;");
  w.line("for (i = 7; i >= 0; --i)");
  w.line("  v = (v << 8) | p[i];");
  w.line("return v;");
  w.close();
  w.line();
  w.open("static odla_status " + e.n + "_load_weights(const char *path, unsigned char **out)");
  w.line("unsigned char head[" + std::to_string(kBlobHeader) + "];");
  w.line("unsigned char *blob;");
  w.line("size_t total = (size_t)(" + std::to_string(kBlobHeader) + " + " + e.N +
         "_BLOB_PAYLOAD);");
  w.line("FILE *f = fopen(path, \"rb\");");
  w.line("int valid;");
  w.line("*out = NULL;");
  w.line("if (!f)");
  w.line("  return ODLA_FILE_NOT_EXIST;");
  w.line("valid = fread(head, 1, sizeof head, f) == sizeof head && memcmp(head, \"ODLACWB1\", 8) "
         "== 0 &&");
  w.line("        " + e.n + "_le64(head + 8) == " + e.N + "_BLOB_PAYLOAD &&");
  w.line("        " + e.n + "_le64(head + 16) == " + e.N + "_BLOB_FINGERPRINT;");
  w.open("if (!valid)");
  w.line("fclose(f);");
  w.line("return ODLA_INVALID_PARAM; /* not this model's weights */");
  w.close();
  w.line("blob = (unsigned char *)malloc(total);");
  w.open("if (!blob)");
  w.line("fclose(f);");
  w.line("return ODLA_MEM_ERROR;");
  w.close();
  w.line("memcpy(blob, head, sizeof head);");
  w.open("if (fread(blob + sizeof head, 1, total - sizeof head, f) != total - sizeof head || "
         "fgetc(f) != EOF)");
  w.line("free(blob);");
  w.line("fclose(f);");
  w.line("return ODLA_INVALID_PARAM; /* truncated or overlong */");
  w.close();
  w.line("fclose(f);");
  w.line("*out = blob;");
  w.line("return ODLA_SUCCESS;");
  w.close();
  w.line();
}

GeneratedFile weightsC(const Emitter &e) {
  std::string head = e.banner(e.n + "_weights.c", "the model's weights as C arrays (" +
                                                      std::to_string(e.totalWeights) + " bytes).");
  bool needMath = false;
  for (const WeightSlot &s : e.slots)
    needMath = needMath || nonFinite(*s.value);
  head += needMath ? "#include <math.h>\n\n" : "\n";
  head += "#include <ODLA/odla_common.h>\n\n";
  // --weights-section (letters, digits, '.', '_' and '$' only: Options.cpp checked it).
  std::string section = e.config.options.weightsSection.empty()
                            ? ""
                            : ", section(\"" + e.config.options.weightsSection + "\")";
  head += "#if defined(__GNUC__)\n#define " + e.N + "_WEIGHTS_ALIGN __attribute__((aligned(" +
          std::to_string(kBlobAlign) + ")" + section + "))\n#else\n#define " + e.N +
          "_WEIGHTS_ALIGN\n#endif\n";
  if (e.slots.empty())
    head += "\ntypedef int " + e.n + "_no_weights; /* keeps this translation unit non-empty */\n";
  // Each array's declaration, then its elements read from the constant as they are written.
  struct Array {
    std::string declaration;
    const Value *value;
  };
  std::vector<Array> arrays;
  for (const WeightSlot &s : e.slots) {
    const Value &c = *s.value;
    size_t n = static_cast<size_t>(c.type().numElements());
    arrays.push_back({"\n/* " + cComment(c.name()) + ": " + toString(c.type()) + " */\nconst " +
                          e.ctype(&c) + " " + s.symbol + "[" +
                          std::to_string(std::max<size_t>(1, n)) + "] " + e.N +
                          "_WEIGHTS_ALIGN = {\n    ",
                      &c});
  }
  GeneratedFile f(e.n + "_weights.c", "");
  f.stream = [head, arrays](const FileSink &sink) -> Status {
    Literals out(sink);
    out.raw(head);
    for (const Array &a : arrays) {
      out.raw(a.declaration);
      const Buffer &b = *a.value->data();
      const DType t = a.value->dtype();
      const size_t n = static_cast<size_t>(a.value->type().numElements()),
                   bytes = dtypeInfo(t).bytes, step = kReadBytes / bytes;
      if (!n)
        out.raw("0");
      for (size_t from = 0; from < n; from += step) {
        size_t to = std::min(n, from + step);
        for (size_t i = from; i < to; ++i)
          if (Status s = out.add(literal(b.data, t, i), i + 1 == n))
            return s;
        b.dropPages(static_cast<const char *>(b.data) + from * bytes, (to - from) * bytes);
      }
      out.raw("};\n");
    }
    return out.flush();
  };
  return f;
}

GeneratedFile weightsBlob(const Emitter &e) {
  std::string header(kBlobHeader, '\0');
  std::memcpy(&header[0], "ODLACWB1", 8);
  for (int i = 0; i < 8; ++i) {
    header[8 + i] = static_cast<char>((e.blobBytes >> (8 * i)) & 0xff);
    header[16 + i] = static_cast<char>((e.fingerprint >> (8 * i)) & 0xff);
  }
  std::vector<WeightSlot> slots = e.slots;
  const uint64_t total = e.blobBytes;
  GeneratedFile f(e.n + ".weights.bin", "");
  f.size = kBlobHeader + total;
  // The header, then each constant's bytes at its offset, zeros between: the constants are
  // read where they lie (the model's raw data, mapped external data) as the file is written.
  f.stream = [header, slots, total](const FileSink &sink) -> Status {
    static const std::string zeros(kBlobAlign, '\0');
    if (Status s = sink(header.data(), header.size()))
      return s;
    uint64_t at = 0;
    for (const WeightSlot &s : slots) {
      for (; at < s.offset; at += std::min<uint64_t>(zeros.size(), s.offset - at))
        if (Status st = sink(zeros.data(), std::min<uint64_t>(zeros.size(), s.offset - at)))
          return st;
      const Buffer &b = *s.value->data();
      // 8 MiB at a time: mapped external data leaves memory as it is written.
      for (size_t done = 0; done < b.size;) { // an empty constant may have no data pointer
        size_t n = std::min<size_t>(b.size - done, size_t{8} << 20);
        const char *p = static_cast<const char *>(b.data) + done;
        if (Status st = sink(p, n))
          return st;
        b.dropPages(p, n);
        done += n;
      }
      at += b.size;
    }
    for (; at < total; at += std::min<uint64_t>(zeros.size(), total - at))
      if (Status st = sink(zeros.data(), std::min<uint64_t>(zeros.size(), total - at)))
        return st;
    return Status::ok();
  };
  return f;
}

} // namespace odlac::emit
