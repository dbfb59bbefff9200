// Fixed-point requantization factors (Requantize.h).
#include "ops/Requantize.h"

#include "ir/Type.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <string>

namespace odlac {

namespace {

std::string num(double v) { return fmt::format("{:g}", v); }

// IEEE binary16 bits as a double.
double halfToDouble(uint16_t h) {
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v = exponent == 0    ? std::ldexp(mantissa, -24)
             : exponent == 31 ? (mantissa ? NAN : INFINITY)
                              : std::ldexp(mantissa | 0x400, exponent - 25);
  return (h & 0x8000) ? -v : v;
}

// bfloat16 bits (the upper half of a float32) as a double.
double bfloat16ToDouble(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

} // namespace

Expected<FixedPoint> fixedPoint(double factor) {
  if (!std::isfinite(factor) || factor < 0)
    return Status::error("requantization factor " + num(factor) + " is not a finite value >= 0");
  if (factor < std::ldexp(1.0, -32))
    return FixedPoint{0, 1};
  if (factor >= std::ldexp(1.0, 30))
    return Status::error("requantization factor " + num(factor) +
                         " is 2^30 or more (input scale times kernel scale over output scale)");
  int e = 0;
  double f = std::frexp(factor, &e); // factor = f * 2^e, f in [0.5, 1)
  auto m = static_cast<int64_t>(std::llround(std::ldexp(f, 31)));
  if (m == (int64_t{1} << 31)) { // f rounded up to 1
    m >>= 1;
    ++e;
  }
  // factor = m * 2^(e - 31): e in [-31, 30] gives a shift of 31 - e in [1, 62].
  return FixedPoint{static_cast<int32_t>(m), 31 - e};
}

Expected<Requantization> requantization(double inputScale, const std::vector<double> &kernelScale,
                                        double outputScale, const std::string &what) {
  Requantization r;
  for (size_t c = 0; c < kernelScale.size(); ++c) {
    double factor = inputScale * kernelScale[c] / outputScale;
    auto fp = fixedPoint(factor);
    if (!fp)
      return Status::error(
          what + (kernelScale.size() > 1 ? " channel " + str(static_cast<int64_t>(c)) : "") + ": " +
          fp.status().message() + " (input scale " + num(inputScale) + ", kernel scale " +
          num(kernelScale[c]) + ", output scale " + num(outputScale) + ")");
    r.multiplier.push_back(fp->multiplier);
    r.shift.push_back(fp->shift);
  }
  return r;
}

int32_t quantMin(DType t) { return t == DType::U8 ? 0 : -128; }
int32_t quantMax(DType t) { return t == DType::U8 ? 255 : 127; }

bool accumulatorFits(int64_t terms, double maxBias) {
  return static_cast<double>(terms) * 255.0 * 255.0 + maxBias <= 2147483647.0;
}

std::optional<std::vector<double>> constantFloats(const Value &v) {
  if (!v.isConstant())
    return std::nullopt;
  int64_t n = v.type().numElements();
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (v.dtype()) {
    case DType::F32:
      out[i] = v.data()->as<float>()[i];
      break;
    case DType::F64:
      out[i] = v.data()->as<double>()[i];
      break;
    case DType::F16:
      out[i] = halfToDouble(v.data()->as<uint16_t>()[i]);
      break;
    case DType::BF16:
      out[i] = bfloat16ToDouble(v.data()->as<uint16_t>()[i]);
      break;
    default:
      return std::nullopt;
    }
  }
  return out;
}

} // namespace odlac
