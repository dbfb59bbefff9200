// runInChild: fork, limits in the child, the answer over a pipe (see ChildProcess.h).
#include "ChildProcess.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <exception>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace odlac {
namespace {

// Exit status of a child whose job returned an error (its message is the payload).
constexpr int kJobFailed = 2;

bool writeAll(int fd, const std::string &bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The child's address space now, from /proc/self/statm (0 if unreadable).
uint64_t mappedBytes() {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  char text[64] = {};
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0)
    return 0;
  return std::strtoull(text, nullptr, 10) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// The child: no way back into the parent's handlers, limits, the job, its answer, _exit.
[[noreturn]] void childMain(const std::function<Expected<std::string>()> &job,
                            const ChildLimits &limits, int out, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL); // dies with odlac
  if (getppid() != parent)
    _exit(127);
  // The parent's handlers (e.g. one that removes a staging folder on SIGINT) must not run
  // here, and a crash must end the child, not be caught by a sanitizer's handler.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                  SIGABRT, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU})
    std::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int devNull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devNull >= 0) {
    dup2(devNull, 0);
    dup2(devNull, 1);
    dup2(devNull, 2);
  }
  rlimit core{0, 0}; // a crash leaves no core file behind
  setrlimit(RLIMIT_CORE, &core);
  rlim_t cpu = static_cast<rlim_t>(limits.seconds) + 1; // a backstop: the parent kills first
  rlimit cpuLimit{cpu, cpu + 1};
  setrlimit(RLIMIT_CPU, &cpuLimit);
  if (uint64_t now = mappedBytes()) {
    rlimit as{static_cast<rlim_t>(now + limits.extraBytes),
              static_cast<rlim_t>(now + limits.extraBytes)};
    setrlimit(RLIMIT_AS, &as);
  }
  int status = kJobFailed;
  std::string payload;
  try {
    Expected<std::string> result = job();
    if (result) {
      payload = std::move(*result);
      status = 0;
    } else {
      payload = result.status().message();
    }
  } catch (const std::exception &e) {
    payload = e.what();
  } catch (...) {
    payload = "an exception that is not a std::exception";
  }
  _exit(writeAll(out, payload) ? status : 127);
}

std::string signalText(int sig) {
  const char *name = strsignal(sig);
  return "died with signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

} // namespace

Expected<std::string> runInChild(const std::function<Expected<std::string>()> &job,
                                 const ChildLimits &limits, bool *timedOutOut) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return Status::error(std::string("cannot create a pipe: ") + std::strerror(errno));
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return Status::error(std::string("cannot start a child process: ") + std::strerror(err));
  }
  if (pid == 0) {
    close(fds[0]);
    childMain(job, limits, fds[1], parent);
  }
  close(fds[1]);
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::seconds(limits.seconds);
  std::string payload;
  bool timedOut = false;
  char chunk[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timedOut = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0) {
      timedOut = true;
      break;
    }
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; // end of the answer: the child has exited or is about to
    payload.append(chunk, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timedOut)
    kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOutOut)
    *timedOutOut = timedOut;
  if (timedOut)
    return Status::error("did not finish within " + std::to_string(limits.seconds) + " s");
  if (WIFSIGNALED(status))
    return Status::error(WTERMSIG(status) == SIGXCPU
                             ? "used more than " + std::to_string(limits.seconds) + " s of CPU"
                             : signalText(WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return payload;
  if (WIFEXITED(status) && WEXITSTATUS(status) == kJobFailed)
    return Status::error(payload.empty() ? "failed without a message" : payload);
  return Status::error("exited with status " + std::to_string(WEXITSTATUS(status)));
}

} // namespace odlac
