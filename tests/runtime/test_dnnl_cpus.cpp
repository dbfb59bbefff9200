// libodla_dnnl's default thread count under a cgroup CPU quota (runtime_stubs/dnnl/cpus.cpp):
// cgroupCpus reads /proc/self/cgroup's lines and the cgroup files they lead to, here a folder
// made to look like a host's: cgroup v2 (cpu.max, the tightest of a cgroup and its ancestors,
// "max" for none), v1 (cpu.cfs_quota_us / cpu.cfs_period_us, -1 for none, under cpu or
// cpu,cpuacct), hybrids (v2 mounted at unified/), fractions rounded up, and files that are
// missing or malformed (no limit). The process's own default is what OpenMP would use unless
// a quota is smaller.
#include <gtest/gtest.h>

#include <omp.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace odla_dnnl { // cpus.cpp, as dnnl_backend.h declares them
int cgroupCpus(const std::string &procCgroup, const std::string &root);
int defaultThreads();
} // namespace odla_dnnl

namespace {

namespace fs = std::filesystem;

class Cgroups : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("odlac-cgroups-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void file(const std::string &path, const std::string &text) {
    fs::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text << "\n";
  }
  int cpus(const std::string &procCgroup) {
    file("proc-self-cgroup", procCgroup);
    return odla_dnnl::cgroupCpus((root_ / "proc-self-cgroup").string(), (root_ / "fs").string());
  }
  fs::path root_;
};

TEST_F(Cgroups, V2TakesTheTightestQuotaOfTheCgroupAndItsAncestors) {
  file("fs/cpu.max", "max 100000");
  file("fs/kubepods/cpu.max", "400000 100000");      // 4 CPUs
  file("fs/kubepods/pod1/cpu.max", "150000 100000"); // 1.5: 2 CPUs
  file("fs/kubepods/pod1/ctr/cpu.max", "max 100000");
  EXPECT_EQ(cpus("0::/kubepods/pod1/ctr"), 2);
  EXPECT_EQ(cpus("0::/kubepods"), 4);
  EXPECT_EQ(cpus("0::/"), 0); // "max": no limit
}

TEST_F(Cgroups, V1ReadsTheCfsQuotaOfTheCpuController) {
  file("fs/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000");
  file("fs/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000"); // 2.5: 3 CPUs
  file("fs/cpu,cpuacct/cpu.cfs_quota_us", "-1");
  file("fs/cpu,cpuacct/cpu.cfs_period_us", "100000");
  EXPECT_EQ(cpus("4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n"), 3);
  EXPECT_EQ(cpus("3:cpu,cpuacct:/\n"), 0);       // -1: no limit
  EXPECT_EQ(cpus("3:cpuacct:/docker/abc\n"), 0); // not the cpu controller's line
}

TEST_F(Cgroups, HybridsReadV2UnderUnifiedAndTakeTheLeastOfBoth) {
  file("fs/cpu/cpu.cfs_quota_us", "600000");
  file("fs/cpu/cpu.cfs_period_us", "100000");      // 6
  file("fs/unified/job/cpu.max", "100000 100000"); // 1
  EXPECT_EQ(cpus("1:cpu:/\n0::/job\n"), 1);
}

TEST_F(Cgroups, MissingOrMalformedFilesLimitNothing) {
  EXPECT_EQ(cpus("0::/nowhere\n1:cpu:/nowhere\n"), 0);
  file("fs/a/cpu.max", "lots 100000");
  file("fs/b/cpu.max", "100000 0");
  file("fs/c/cpu.max", "");
  EXPECT_EQ(cpus("0::/a\n"), 0);
  EXPECT_EQ(cpus("0::/b\n"), 0);
  EXPECT_EQ(cpus("0::/c\n"), 0);
  EXPECT_EQ(cpus("garbage without colons\n"), 0);
  EXPECT_EQ(odla_dnnl::cgroupCpus((root_ / "no-such-file").string(), root_.string()), 0);
}

TEST(DefaultThreads, LeavesOpenMPsCountUnlessAQuotaIsSmaller) {
  int quota = odla_dnnl::cgroupCpus("/proc/self/cgroup", "/sys/fs/cgroup");
  int want =
      std::getenv("OMP_NUM_THREADS") || quota <= 0 || quota >= omp_get_num_procs() ? 0 : quota;
  EXPECT_EQ(odla_dnnl::defaultThreads(), want);
}

} // namespace
