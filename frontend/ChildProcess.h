// Runs a function in a forked child process under a time and a memory limit: for third-party
// code (libonnx) that a crafted model can crash, hang or make exhaust memory. Whatever the
// child does, the caller gets its answer or a Status saying how it failed.
#pragma once

#include "support/Status.h"

#include <cstdint>
#include <functional>
#include <string>

namespace odlac {

struct ChildLimits {
  int seconds = 20;                 // wall-clock time before the child is killed
  uint64_t extraBytes = 4ull << 30; // address space the child may map beyond the parent's
};

// Runs `job` in a child process and returns the bytes it returned. An error Status when the
// job returned one (its message), threw (what()), died by a signal, ran past the time limit,
// or exited some other way; the message says which ("died with signal 8 (Floating point
// exception)", "did not finish within 20 s"); `timedOut`, when given, says whether it was the
// time limit, the one outcome that depends on the machine's load rather than on the input.
// The child's stdout and stderr are discarded and it never runs the parent's signal handlers
// or exit handlers. POSIX only.
Expected<std::string> runInChild(const std::function<Expected<std::string>()> &job,
                                 const ChildLimits &limits, bool *timedOut = nullptr);

} // namespace odlac
