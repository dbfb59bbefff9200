// Tensor types of IR values: an element type and a static shape.
#pragma once

#include "ir/DType.h"
#include "support/Checked.h"

#include <cstdint>
#include <string>
#include <vector>

namespace odlac {

using Dims = std::vector<int64_t>;

struct TensorType {
  DType dtype = DType::F32;
  Dims dims; // empty for a scalar; every dim is known (import pins symbolic ones)

  int rank() const { return static_cast<int>(dims.size()); }
  // Counts of a type a Value holds always fit: the IR never holds a type beyond
  // ir/Limits.h's kMaxElements (shapeProblem). A type built from untrusted numbers is checked
  // with shapeProblem before these are asked.
  int64_t numElements() const {
    auto n = checkedProduct(dims);
    assert(n && "numElements() of a type beyond kMaxElements (check it with shapeProblem)");
    return n.value_or(0);
  }
  uint64_t byteSize() const { return static_cast<uint64_t>(numElements()) * dtypeBytes(dtype); }
  bool operator==(const TensorType &o) const { return dtype == o.dtype && dims == o.dims; }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
};

// "f32[1,3,224,224]"; a scalar prints as "f32[]".
std::string toString(const TensorType &t);
// "[1,3,224,224]"
std::string dimsToString(const Dims &dims);
// A count, extent or index in a message.
inline std::string str(int64_t v) { return std::to_string(v); }

} // namespace odlac
