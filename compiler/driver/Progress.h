// What a compile says on stderr beside its errors (docs/cli.md): warnings and notes, unless
// --quiet, and for long compiles their progress: each phase with the time so far, and a bar
// while a file of 100 MiB or more is written. Progress shows with --progress, or when stderr
// is a terminal and the model's weights reach that size; never with --quiet.
#pragma once

#include <cstdint>
#include <string>

namespace odlac {

constexpr uint64_t kProgressBytes = uint64_t{100} << 20;

struct Progress {
  static bool quiet;   // --quiet: errors only
  static bool shown;   // progress lines are printed
  static bool partial; // stderr is a terminal: the bar redraws one line

  // Shows progress from now on when forced, or when the weights reach kProgressBytes and
  // stderr is a terminal; never when quiet.
  static void decide(bool forced, uint64_t weightBytes);
  // "odlac: [1.2 s] what".
  static void phase(const std::string &what);
  // The bar of writing `what`: `done` of `total` bytes.
  static void bytes(const std::string &what, uint64_t done, uint64_t total);
};

} // namespace odlac
