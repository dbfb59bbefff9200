// Error values for everything a model or a user can trigger (DESIGN §11): a Status carries
// one or more precise messages; Expected<T> is a value or a Status. Internal invariants use
// assert instead.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace odlac {

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.messages_.push_back(std::move(message));
    return s;
  }

  bool isOk() const { return messages_.empty(); }
  explicit operator bool() const { return !isOk(); } // true when it is an error
  const std::vector<std::string> &messages() const { return messages_; }
  std::string message() const {
    std::string all;
    for (const std::string &m : messages_)
      all += (all.empty() ? "" : "\n") + m;
    return all;
  }
  // Collects several independent errors so that one run reports all of them.
  void append(const Status &other) {
    messages_.insert(messages_.end(), other.messages_.begin(), other.messages_.end());
  }

private:
  std::vector<std::string> messages_;
};

template <class T> class [[nodiscard]] Expected {
public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Status error) : v_(std::move(error)) { assert(!std::get<Status>(v_).isOk()); }

  bool hasValue() const { return v_.index() == 0; }
  explicit operator bool() const { return hasValue(); }
  T &operator*() { return std::get<T>(v_); }
  const T &operator*() const { return std::get<T>(v_); }
  T *operator->() { return &std::get<T>(v_); }
  const T *operator->() const { return &std::get<T>(v_); }
  const Status &status() const { return std::get<Status>(v_); }
  Status takeStatus() { return std::move(std::get<Status>(v_)); }

private:
  std::variant<T, Status> v_;
};

} // namespace odlac
