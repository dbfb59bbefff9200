// Overflow-checked integer arithmetic for sizes: element counts, byte sizes, strides, offsets,
// products of dims and sums of sizes, wherever a model's dims, attributes or data take part.
// A CheckedInt carries its value and whether any step that produced it overflowed int64
// (built on the compiler's __builtin_*_overflow, so an overflow is a flag, never undefined
// behaviour); callers test valid() once at the end and report the numbers.
//
//   CheckedInt o = (CheckedInt(in) - 1) * stride + span;
//   if (!o.valid()) return fail("... overflows");
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>

namespace odlac {

class CheckedInt {
public:
  constexpr CheckedInt(int64_t v = 0) : v_(v) {}

  bool valid() const { return ok_; }
  // The value; only for a valid result (an invariant: test valid() first).
  int64_t value() const {
    assert(ok_ && "CheckedInt::value() of an overflowed result");
    return v_;
  }
  std::optional<int64_t> get() const { return ok_ ? std::optional<int64_t>(v_) : std::nullopt; }

  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    CheckedInt r;
    r.ok_ = a.ok_ && b.ok_ && !__builtin_add_overflow(a.v_, b.v_, &r.v_);
    return r;
  }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) {
    CheckedInt r;
    r.ok_ = a.ok_ && b.ok_ && !__builtin_sub_overflow(a.v_, b.v_, &r.v_);
    return r;
  }
  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    CheckedInt r;
    r.ok_ = a.ok_ && b.ok_ && !__builtin_mul_overflow(a.v_, b.v_, &r.v_);
    return r;
  }
  // Truncating division, as C's; division by zero and INT64_MIN / -1 are invalid results.
  friend CheckedInt operator/(CheckedInt a, CheckedInt b) {
    CheckedInt r;
    r.ok_ = a.ok_ && b.ok_ && b.v_ != 0 && !(a.v_ == INT64_MIN && b.v_ == -1);
    r.v_ = r.ok_ ? a.v_ / b.v_ : 0;
    return r;
  }
  friend CheckedInt operator%(CheckedInt a, CheckedInt b) {
    CheckedInt r;
    r.ok_ = a.ok_ && b.ok_ && b.v_ != 0 && !(a.v_ == INT64_MIN && b.v_ == -1);
    r.v_ = r.ok_ ? a.v_ % b.v_ : 0;
    return r;
  }
  CheckedInt operator-() const { return CheckedInt(0) - *this; }
  CheckedInt &operator+=(CheckedInt b) { return *this = *this + b; }
  CheckedInt &operator-=(CheckedInt b) { return *this = *this - b; }
  CheckedInt &operator*=(CheckedInt b) { return *this = *this * b; }

private:
  int64_t v_ = 0;
  bool ok_ = true;
};

// The product of a range of int64 values (dims), or nullopt when it overflows.
template <class Range> std::optional<int64_t> checkedProduct(const Range &values) {
  CheckedInt p = 1;
  for (int64_t v : values)
    p *= v;
  return p.get();
}

// The sum of a range of int64 values (sizes), or nullopt when it overflows.
template <class Range> std::optional<int64_t> checkedSum(const Range &values) {
  CheckedInt s = 0;
  for (int64_t v : values)
    s += v;
  return s.get();
}

} // namespace odlac
