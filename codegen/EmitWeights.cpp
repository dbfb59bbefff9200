// Writes the weights: NAME_weights.c (C arrays), or NAME.weights.bin (a blob) and the loader
// that NAME.c and NAME_store.c read it with. WeightsMode::Obj's NAME_weights.o is the driver's
// (ObjectWriter.h).
#include "Emitter.h"

#include <fmt/format.h>

#include <cassert>
#include <cstring>

namespace odlac::emit {

namespace {

// n literals (literal(i) for element i), as many to a line of an array's initializer as fit
// in 100 columns after its indentation of 4.
template <class F> std::string join(size_t n, F literal) {
  constexpr size_t kWidth = 100 - 4;
  std::string out;
  size_t column = 0;
  for (size_t i = 0; i < n; ++i) {
    std::string item = literal(i) + (i + 1 == n ? "" : ",");
    if (column && column + 1 + item.size() > kWidth) {
      out += "\n    ";
      column = 0;
    }
    out += (column ? " " : "") + item;
    column += (column ? 1 : 0) + item.size();
  }
  return out;
}

template <class T> std::string ints(const void *data, size_t n) {
  const T *p = static_cast<const T *>(data);
  return join(n, [&](size_t i) { return std::to_string(p[i]); });
}

// Infinities and NaN are written as HUGE_VALF, HUGE_VAL and NAN, which need <math.h>.
template <class T>
std::string floats(const void *data, size_t n, std::string (*literal)(T), bool &needMath) {
  const T *p = static_cast<const T *>(data);
  return join(n, [&](size_t i) {
    std::string f = literal(p[i]);
    needMath |= f.find_first_of("HN") != std::string::npos;
    return f;
  });
}

// The elements of constant `c` (at least one) as C literals. Types without literals of
// their own (float16, bfloat16, float8, float4, the packed 4- and 2-bit integers, bool) are
// written as the integers of their storage type: encodings or values.
std::string elements(const Value &c, bool &needMath) {
  const void *d = c.data()->data;
  size_t n = static_cast<size_t>(c.type().numElements());
  switch (c.dtype()) {
  case DType::F32:
    return floats<float>(d, n, cFloat, needMath);
  case DType::F64:
    return floats<double>(d, n, cDouble, needMath);
  case DType::I64: {
    const int64_t *p = static_cast<const int64_t *>(d);
    return join(n, [&](size_t i) {
      return p[i] == INT64_MIN ? std::string("(-9223372036854775807LL - 1)")
                               : std::to_string(p[i]) + "LL";
    });
  }
  case DType::U64: {
    const uint64_t *p = static_cast<const uint64_t *>(d);
    return join(n, [&](size_t i) { return std::to_string(p[i]) + "ULL"; });
  }
  default:
    break; // the rest by storage type, below; strings are never weights (NAME.c holds them)
  }
  const DTypeInfo &info = dtypeInfo(c.dtype());
  bool isSigned = info.isSigned && !info.isFloat; // encodings are unsigned
  switch (info.bytes) {
  case 1:
    return isSigned ? ints<int8_t>(d, n) : ints<uint8_t>(d, n);
  case 2:
    return isSigned ? ints<int16_t>(d, n) : ints<uint16_t>(d, n);
  default:
    assert(info.bytes == 4);
    return isSigned ? ints<int32_t>(d, n) : ints<uint32_t>(d, n);
  }
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

std::string weightsC(const Emitter &e) {
  std::string out = e.banner(e.n + "_weights.c", "the model's weights as C arrays (" +
                                                     std::to_string(e.totalWeights) + " bytes).");
  bool needMath = false;
  std::string arrays;
  for (const WeightSlot &s : e.slots) {
    const Value &c = *s.value;
    size_t n = static_cast<size_t>(c.type().numElements());
    arrays += "\n/* " + cComment(c.name()) + ": " + toString(c.type()) + " */\n";
    arrays += "const " + e.ctype(&c) + " " + s.symbol + "[" +
              std::to_string(std::max<size_t>(1, n)) + "] " + e.N + "_WEIGHTS_ALIGN = {\n    ";
    arrays += n ? elements(c, needMath) : "0";
    arrays += "};\n";
  }
  out += needMath ? "#include <math.h>\n\n" : "\n";
  out += "#include <ODLA/odla_common.h>\n\n";
  // --weights-section (letters, digits, '.', '_' and '$' only: Options.cpp checked it).
  std::string section = e.config.options.weightsSection.empty()
                            ? ""
                            : ", section(\"" + e.config.options.weightsSection + "\")";
  out += "#if defined(__GNUC__)\n#define " + e.N + "_WEIGHTS_ALIGN __attribute__((aligned(" +
         std::to_string(kBlobAlign) + ")" + section + "))\n#else\n#define " + e.N +
         "_WEIGHTS_ALIGN\n#endif\n";
  if (e.slots.empty())
    out += "\ntypedef int " + e.n + "_no_weights; /* keeps this translation unit non-empty */\n";
  return out + arrays;
}

std::string weightsBlob(const Emitter &e) {
  std::string blob(kBlobHeader + e.blobBytes, '\0');
  std::memcpy(&blob[0], "ODLACWB1", 8);
  for (int i = 0; i < 8; ++i) {
    blob[8 + i] = static_cast<char>((e.blobBytes >> (8 * i)) & 0xff);
    blob[16 + i] = static_cast<char>((e.fingerprint >> (8 * i)) & 0xff);
  }
  for (const WeightSlot &s : e.slots)
    if (s.value->data()->size) // an empty constant may have no data pointer
      std::memcpy(&blob[kBlobHeader + s.offset], s.value->data()->data, s.value->data()->size);
  return blob;
}

} // namespace odlac::emit
