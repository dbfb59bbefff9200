// The thread count libodla_dnnl runs with when neither OMP_NUM_THREADS nor ODLA_PROCESSOR_NUM
// gives one: libgomp's default, the CPUs of the process's affinity mask, capped by the CPU
// quota of its cgroup (a container given 2 CPUs of a 64-core host ran 64 OpenMP threads, each
// waiting its turn at every barrier).
#include "dnnl_backend.h"

#include <omp.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace odla_dnnl {
namespace {

// The first line of a file; empty when it cannot be read.
std::string firstLine(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// ceil(quota / period) for positive numbers; 0 for none ("max", -1, unreadable).
int cpusOf(const std::string &quota, const std::string &period) {
  char *end = nullptr;
  long long q = std::strtoll(quota.c_str(), &end, 10);
  if (quota.empty() || *end || q <= 0)
    return 0;
  long long p = std::strtoll(period.c_str(), &end, 10);
  if (period.empty() || *end || p <= 0)
    return 0;
  long long n = (q + p - 1) / p;
  return n > 4096 ? 4096 : static_cast<int>(n);
}

// `path` and each of its ancestors, deepest first ("/a/b": "/a/b", "/a", "").
std::vector<std::string> withAncestors(std::string path) {
  std::vector<std::string> all;
  while (!path.empty() && path.back() == '/')
    path.pop_back();
  for (;;) {
    all.push_back(path);
    size_t slash = path.rfind('/');
    if (slash == std::string::npos || path.empty())
      break;
    path.resize(slash);
  }
  return all;
}

} // namespace

int cgroupCpus(const std::string &procCgroup, const std::string &root) {
  int least = 0;
  auto take = [&](int n) {
    if (n > 0 && (least == 0 || n < least))
      least = n;
  };
  std::ifstream in(procCgroup);
  std::string line;
  while (std::getline(in, line)) { // "hierarchy:controllers:path"
    size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos)
      continue;
    std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controllers.empty()) { // cgroup v2: cpu.max holds "QUOTA PERIOD" or "max PERIOD"
      for (const std::string &mount : {root, root + "/unified"})
        for (const std::string &p : withAncestors(path)) {
          std::istringstream max(firstLine(mount + p + "/cpu.max"));
          std::string quota, period;
          max >> quota >> period;
          take(cpusOf(quota, period));
        }
      continue;
    }
    std::istringstream list(controllers); // cgroup v1: the cpu controller's CFS quota
    bool cpu = false;
    for (std::string c; std::getline(list, c, ',');)
      cpu |= c == "cpu";
    if (!cpu)
      continue;
    for (const std::string &mount : {root + "/cpu", root + "/cpu,cpuacct", root + "/cpuacct,cpu"})
      for (const std::string &p : withAncestors(path))
        take(cpusOf(firstLine(mount + p + "/cpu.cfs_quota_us"),
                    firstLine(mount + p + "/cpu.cfs_period_us")));
  }
  return least;
}

namespace {
bool threadsFromEnvironment() {
  const char *env = std::getenv("OMP_NUM_THREADS");
  return env && *env;
}
} // namespace

int defaultThreads() {
  static const int threads = [] {
    if (threadsFromEnvironment())
      return 0; // the user's count, as libgomp read it
    int quota = cgroupCpus("/proc/self/cgroup", "/sys/fs/cgroup");
    return quota > 0 && quota < omp_get_num_procs() ? quota : 0;
  }();
  return threads;
}

bool chosenThreads() {
  static const bool chosen = [] {
    if (threadsFromEnvironment())
      return false;
    int threads = defaultThreads();
    return (threads ? threads : omp_get_max_threads()) > 1;
  }();
  return chosen;
}

} // namespace odla_dnnl
