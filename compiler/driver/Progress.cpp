#include "Progress.h"

#include "support/Text.h"

#include <chrono>
#include <cstdio>
#include <unistd.h>

namespace odlac {
namespace {

const auto kStart = std::chrono::steady_clock::now();

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kStart).count();
}

} // namespace

bool Progress::quiet = false;
bool Progress::shown = false;
bool Progress::partial = false;

void Progress::decide(bool forced, uint64_t weightBytes) {
  partial = isatty(STDERR_FILENO) != 0;
  shown = !quiet && (shown || forced || (partial && weightBytes >= kProgressBytes));
}

void Progress::phase(const std::string &what) {
  if (shown)
    std::fprintf(stderr, "odlac: [%.1f s] %s\n", seconds(), printable(what).c_str());
}

void Progress::bytes(const std::string &what, uint64_t done, uint64_t total) {
  if (!shown || total == 0)
    return;
  const int percent = static_cast<int>(done * 100 / total), width = 40;
  if (partial) { // one line, redrawn
    std::fprintf(stderr, "\rodlac: writing %s [", printable(what).c_str());
    for (int i = 0; i < width; ++i)
      std::fputc(i < percent * width / 100 ? '#' : ' ', stderr);
    std::fprintf(stderr, "] %3d%% of %llu MiB%s", percent,
                 static_cast<unsigned long long>(total >> 20), done == total ? "\n" : "");
  } else if (done == 0 || done == total || percent % 25 == 0) { // a log: the quarters
    std::fprintf(stderr, "odlac: [%.1f s] writing %s: %d%% of %llu MiB\n", seconds(),
                 printable(what).c_str(), percent, static_cast<unsigned long long>(total >> 20));
  }
  std::fflush(stderr);
}

} // namespace odlac
