// Tensor types of IR values: an element type and a static shape.
#pragma once

#include "ir/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace odlac {

using Dims = std::vector<int64_t>;

struct TensorType {
  DType dtype = DType::F32;
  Dims dims; // empty for a scalar; every dim is known (import pins symbolic ones)

  int rank() const { return static_cast<int>(dims.size()); }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  }
  uint64_t byteSize() const { return static_cast<uint64_t>(numElements()) * dtypeBytes(dtype); }
  bool operator==(const TensorType &o) const { return dtype == o.dtype && dims == o.dims; }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
};

// "f32[1,3,224,224]"; a scalar prints as "f32[]".
std::string toString(const TensorType &t);
// "[1,3,224,224]"
std::string dimsToString(const Dims &dims);

} // namespace odlac
