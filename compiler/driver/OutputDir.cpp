// Atomic output: stage every file in a temporary sibling folder, then rename into place; and
// the cleanup of interrupted and killed compiles (see OutputDir.h).
#include "OutputDir.h"

#include "Progress.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace odlac {
namespace {

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr const char *kStagingPrefix = ".odlac-tmp-";
constexpr const char *kOutputList = ".odlac-outputs-"; // + the model's name

// What a cleanup signal removes: the staging folders and temporary files of this process.
// The handler reads it while the main thread may be changing it, so a slot is claimed
// (Filling) before it is written and Armed only when complete; std::atomic<int> is lock-free
// and so safe in a handler.
enum SlotState { Free, Filling, Armed };
struct CleanupSlot {
  std::atomic<int> state{Free};
  int dirFd = -1; // a staging folder's descriptor (its files are listed through it); -1: a file
  char path[PATH_MAX];
};
CleanupSlot gSlots[8]; // a compile stages one folder and one depfile at a time
std::atomic<pid_t> gChild{0};

// Blocks the cleanup signals for a scope: registering a folder, moving outputs into place.
class SignalsHeld {
public:
  SignalsHeld() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kCleanupSignals)
      sigaddset(&set, s);
    sigprocmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalsHeld() { sigprocmask(SIG_SETMASK, &old_, nullptr); }

private:
  sigset_t old_;
};

int registerCleanup(const std::string &path, int dirFd) {
  if (path.size() >= PATH_MAX)
    return -1;
  for (int i = 0; i < static_cast<int>(std::size(gSlots)); ++i) {
    int expected = Free;
    if (!gSlots[i].state.compare_exchange_strong(expected, Filling))
      continue;
    std::memcpy(gSlots[i].path, path.c_str(), path.size() + 1);
    gSlots[i].dirFd = dirFd;
    gSlots[i].state = Armed;
    return i;
  }
  return -1; // no slot: the stale sweep of a later compile is the fallback
}

void unregisterCleanup(int slot) {
  if (slot >= 0)
    gSlots[slot].state = Free;
}

// Removes a staging folder's files through its descriptor, then the folder, with system
// calls only (async-signal-safe; getdents64 lists the folder without opendir's malloc).
// Listing again until nothing is left covers a writer that adds a file meanwhile.
void removeFolderNow(int dirFd, const char *path) {
  for (int round = 0; round < 64 && rmdir(path) != 0 && errno == ENOTEMPTY; ++round) {
    alignas(struct dirent64) char buf[4096];
    lseek(dirFd, 0, SEEK_SET);
    ssize_t n;
    while ((n = getdents64(dirFd, buf, sizeof buf)) > 0)
      for (ssize_t off = 0; off < n;) {
        const struct dirent64 *d = reinterpret_cast<const struct dirent64 *>(buf + off);
        if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0)
          unlinkat(dirFd, d->d_name, 0);
        off += d->d_reclen;
      }
  }
}

extern "C" void onCleanupSignal(int sig) {
  int savedErrno = errno;
  if (pid_t child = gChild.load(); child > 0) {
    kill(child, sig);
    waitpid(child, nullptr, 0);
  }
  for (CleanupSlot &s : gSlots) {
    if (s.state.load() != Armed)
      continue;
    if (s.dirFd >= 0)
      removeFolderNow(s.dirFd, s.path);
    else
      unlink(s.path);
  }
  // Die of the same signal, so that the shell or build tool sees what happened.
  signal(sig, SIG_DFL);
  raise(sig);
  errno = savedErrno;
}

std::string parentOf(const std::string &path) {
  std::string d = path;
  while (d.size() > 1 && d.back() == '/')
    d.pop_back();
  size_t slash = d.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : d.substr(0, slash));
}

// The pid in ".odlac-tmp-<pid>-XXXXXX", or 0 when `name` is not a name odlac gives.
pid_t stagingOwner(const std::string &name) {
  size_t prefix = std::strlen(kStagingPrefix);
  if (name.compare(0, prefix, kStagingPrefix) != 0)
    return 0;
  size_t dash = name.find('-', prefix);
  if (dash == std::string::npos || dash == prefix || dash - prefix > 9 || name.size() != dash + 7)
    return 0;
  for (size_t i = prefix; i < name.size(); ++i)
    if (i != dash && !std::isalnum(static_cast<unsigned char>(name[i])))
      return 0;
  for (size_t i = prefix; i < dash; ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i])))
      return 0;
  return static_cast<pid_t>(std::atol(name.substr(prefix, dash - prefix).c_str()));
}

// Whether a folder holds plain files only, as a staging folder does; removes them if `remove`.
bool plainFilesOnly(int dirFd, bool remove) {
  DIR *d = fdopendir(dup(dirFd)); // the copy shares its position: start from the top
  if (!d)
    return false;
  rewinddir(d);
  bool plain = true;
  while (struct dirent *f = readdir(d)) {
    struct stat st;
    if (std::strcmp(f->d_name, ".") == 0 || std::strcmp(f->d_name, "..") == 0)
      continue;
    if (fstatat(dirFd, f->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      plain = false;
    else if (remove)
      unlinkat(dirFd, f->d_name, 0);
  }
  closedir(d);
  return plain;
}

// Removes what killed compiles left in `parent`: entries named as odlac names them, owned by
// this user, whose owning process is gone (kill(pid, 0)) and whose lock is free (flock: it
// dies with its holder, and holds across PID namespaces where pids mislead). A folder is
// removed only if it holds nothing but plain files, as odlac leaves them; anything else with
// such a name stays untouched.
void removeStale(const std::string &parent) {
  DIR *d = opendir(parent.c_str());
  if (!d)
    return;
  int parentFd = dirfd(d);
  while (struct dirent *e = readdir(d)) {
    pid_t owner = stagingOwner(e->d_name);
    if (owner <= 0 || owner == getpid() || kill(owner, 0) == 0 || errno != ESRCH)
      continue;
    int fd = openat(parentFd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
      continue;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && flock(fd, LOCK_EX | LOCK_NB) == 0) {
      if (S_ISREG(st.st_mode))
        unlinkat(parentFd, e->d_name, 0);
      else if (S_ISDIR(st.st_mode) && plainFilesOnly(fd, false) && plainFilesOnly(fd, true))
        unlinkat(parentFd, e->d_name, AT_REMOVEDIR);
    }
    close(fd);
  }
  closedir(d);
}

void removeTree(const std::string &dir) {
  if (DIR *d = opendir(dir.c_str())) {
    while (struct dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..")
        unlink((dir + "/" + n).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

Status writeFile(const std::string &path, const std::string &contents) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return Status::error(path + ": cannot create: " + std::strerror(errno));
  // A file of kProgressBytes or more in hundredths, each shown on the progress bar.
  const size_t size = contents.size(),
               chunk = size >= kProgressBytes ? (size + 99) / 100 : std::max<size_t>(size, 1);
  const std::string name = path.substr(path.find_last_of('/') + 1);
  bool ok = true;
  for (size_t at = 0; ok && at < size; at += chunk) {
    const size_t n = std::min(chunk, size - at);
    ok = std::fwrite(contents.data() + at, 1, n, f) == n;
    if (size >= kProgressBytes)
      Progress::bytes(name, at + n, size);
  }
  ok &= std::fclose(f) == 0;
  if (!ok)
    return Status::error(path + ": write failed: " + std::strerror(errno));
  return Status::ok();
}

// A streamed file (the weights): its pieces written as the stream puts them, with the
// progress bar's hundredths where its size is known and reaches kProgressBytes.
Status writeStream(const std::string &path, const GeneratedFile &g) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return Status::error(path + ": cannot create: " + std::strerror(errno));
  const std::string name = path.substr(path.find_last_of('/') + 1);
  const bool bar = g.size >= kProgressBytes;
  const uint64_t hundredth = (g.size + 99) / 100;
  uint64_t written = 0;
  Status s = g.stream([&](const char *data, size_t size) -> Status {
    while (size) {
      // Up to the next hundredth, so that each is shown as it is reached.
      size_t n =
          bar ? static_cast<size_t>(std::min<uint64_t>(size, hundredth - written % hundredth))
              : size;
      if (std::fwrite(data, 1, n, f) != n)
        return Status::error(path + ": write failed: " + std::strerror(errno));
      data += n, size -= n, written += n;
      if (bar && (written % hundredth == 0 || written == g.size))
        Progress::bytes(name, std::min(written, g.size), g.size);
    }
    return Status::ok();
  });
  bool closed = std::fclose(f) == 0;
  if (s.isOk() && !closed)
    return Status::error(path + ": write failed: " + std::strerror(errno));
  if (s.isOk() && g.size && written != g.size)
    return Status::error(path + ": wrote " + std::to_string(written) + " bytes, expected " +
                         std::to_string(g.size));
  return s;
}

// The names in the list of outputs at `path` that a compile may remove: lines naming an entry
// of its folder itself (no '/', not "." or "..", not odlac's own).
std::vector<std::string> listedOutputs(const std::string &path) {
  std::vector<std::string> names;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return names;
  std::string line;
  for (int c; (c = std::fgetc(f)) != EOF && names.size() < 4096;) {
    if (c != '\n') {
      line += static_cast<char>(c);
      continue;
    }
    if (!line.empty() && line.size() < NAME_MAX && line.find('/') == std::string::npos &&
        line.find('\0') == std::string::npos && line != "." && line != ".." &&
        line.compare(0, 6, ".odlac") != 0)
      names.push_back(line);
    line.clear();
  }
  std::fclose(f);
  return names;
}

// "PARENT/.odlac-tmp-<pid>-XXXXXX", the template of mkdtemp and mkstemp.
std::vector<char> stagingTemplate(const std::string &parent) {
  std::string t = parent + "/" + kStagingPrefix + std::to_string(getpid()) + "-XXXXXX";
  return std::vector<char>(t.c_str(), t.c_str() + t.size() + 1);
}

} // namespace

Expected<std::vector<std::string>> makeFolders(const std::string &dir) {
  std::vector<std::string> missing;
  struct stat st;
  for (std::string d = dir; stat(d.c_str(), &st) != 0; d = parentOf(d)) {
    if (errno != ENOENT)
      return Status::error(d + ": " + std::strerror(errno));
    missing.insert(missing.begin(), d);
  }
  for (size_t i = 0; i < missing.size(); ++i)
    if (mkdir(missing[i].c_str(), 0777) != 0) {
      Status s = Status::error(missing[i] + ": cannot create: " + std::strerror(errno));
      while (i-- > 0)
        rmdir(missing[i].c_str());
      return s;
    }
  return missing;
}

void installCleanupHandlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = onCleanupSignal;
  sigemptyset(&sa.sa_mask);
  for (int s : kCleanupSignals)
    sigaddset(&sa.sa_mask, s); // one cleanup at a time
  for (int s : kCleanupSignals) {
    struct sigaction old;
    // A signal ignored when odlac started (nohup) stays ignored.
    if (sigaction(s, nullptr, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(s, &sa, nullptr);
  }
}

int runChild(const std::string &dir, const std::vector<std::string> &argv) {
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  {
    // The handler must know the child from its first moment; the child gets the default
    // handlers back before it runs the tool (exec keeps a blocked mask).
    SignalsHeld held;
    pid = fork();
    if (pid == 0) {
      for (int s : kCleanupSignals)
        signal(s, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      if (chdir(dir.c_str()) == 0) {
        dup2(STDERR_FILENO, STDOUT_FILENO);
        execvp(args[0], args.data());
        std::fprintf(stderr, "odlac: error: cannot run '%s': %s\n", args[0], std::strerror(errno));
      }
      _exit(127);
    }
    if (pid < 0)
      return -1;
    gChild = pid;
  }
  int status = 0;
  pid_t got;
  while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  {
    SignalsHeld held;
    gChild = 0;
  }
  return got < 0 ? -1 : status;
}

Expected<Staging> Staging::create(const std::string &dir, const std::string &name) {
  std::string parent = parentOf(dir);
  auto created = makeFolders(parent);
  if (!created)
    return created.takeStatus();
  removeStale(parent);
  std::vector<char> buf = stagingTemplate(parent);
  SignalsHeld held; // the folder is registered before a signal can find it unregistered
  auto fail = [&](Status s) {
    for (auto d = created->rbegin(); d != created->rend(); ++d)
      rmdir(d->c_str());
    return s;
  };
  if (!mkdtemp(buf.data()))
    return fail(
        Status::error(parent + ": cannot create a temporary folder: " + std::strerror(errno)));
  int fd = open(buf.data(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || flock(fd, LOCK_EX) != 0) {
    Status s = Status::error(std::string(buf.data()) + ": cannot open: " + std::strerror(errno));
    if (fd >= 0)
      close(fd);
    rmdir(buf.data());
    return fail(s);
  }
  std::string clean = dir; // "out/" names its files "out/net.h", not "out//net.h"
  while (clean.size() > 1 && clean.back() == '/')
    clean.pop_back();
  return Staging(clean, buf.data(), kOutputList + name, fd, registerCleanup(buf.data(), fd),
                 std::move(*created));
}

Staging::Staging(Staging &&other) noexcept
    : dir_(std::move(other.dir_)), staging_(std::move(other.staging_)),
      list_(std::move(other.list_)), fd_(other.fd_), slot_(other.slot_),
      createdParents_(std::move(other.createdParents_)), committed_(other.committed_),
      outputs_(std::move(other.outputs_)) {
  other.staging_.clear();
  other.fd_ = other.slot_ = -1;
}

Staging::~Staging() {
  if (staging_.empty())
    return;
  SignalsHeld held;
  unregisterCleanup(slot_);
  removeTree(staging_);
  close(fd_); // releases the lock last
  if (!committed_)
    for (auto d = createdParents_.rbegin(); d != createdParents_.rend(); ++d)
      rmdir(d->c_str());
}

Status Staging::write(const GeneratedFile &f, bool output) {
  if (Status s = f.stream ? writeStream(pathOf(f.name), f) : writeFile(pathOf(f.name), f.contents))
    return s;
  if (output)
    adopt(f.name);
  return Status::ok();
}

std::vector<std::string> Staging::destinations() const {
  std::vector<std::string> paths;
  for (const std::string &name : outputs_)
    paths.push_back(dir_ + "/" + name);
  return paths;
}

Expected<std::vector<std::string>> Staging::commit() {
  SignalsHeld held;
  struct stat st;
  bool created = false;
  if (stat(dir_.c_str(), &st) != 0) {
    if (mkdir(dir_.c_str(), 0777) != 0)
      return Status::error(dir_ + ": cannot create: " + std::strerror(errno));
    created = true;
  } else if (!S_ISDIR(st.st_mode)) {
    return Status::error(dir_ + ": exists and is not a folder");
  }
  std::vector<std::string> done = destinations();
  const std::vector<std::string> &names = outputs_;
  std::string list;
  for (const std::string &n : names)
    list += n + "\n";
  if (Status s = writeFile(pathOf(list_), list))
    return s;
  // The previous list, and when it was written: an output rewritten since is not its any more.
  const std::string listPath = dir_ + "/" + list_;
  std::vector<std::string> previous = listedOutputs(listPath);
  struct stat listed;
  if (stat(listPath.c_str(), &listed) != 0)
    previous.clear();
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (std::rename(pathOf(outputs_[i]).c_str(), done[i].c_str()) != 0) {
      Status s = Status::error(done[i] + ": cannot move into place: " + std::strerror(errno));
      if (created)
        removeTree(dir_);
      return s;
    }
  }
  committed_ = true;
  for (const std::string &old : previous) {
    struct stat st;
    std::string path = dir_ + "/" + old;
    if (std::find(names.begin(), names.end(), old) == names.end() &&
        lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        (st.st_mtim.tv_sec < listed.st_mtim.tv_sec ||
         (st.st_mtim.tv_sec == listed.st_mtim.tv_sec &&
          st.st_mtim.tv_nsec <= listed.st_mtim.tv_nsec)))
      unlink(path.c_str());
  }
  std::rename(pathOf(list_).c_str(), listPath.c_str());
  return done;
}

Status writeFileAtomically(const std::string &path, const std::string &contents) {
  std::string parent = parentOf(path);
  removeStale(parent);
  std::vector<char> buf = stagingTemplate(parent);
  int fd, slot;
  {
    SignalsHeld held;
    fd = mkostemp(buf.data(), O_CLOEXEC);
    if (fd < 0)
      return Status::error(path + ": cannot create a temporary file: " + std::strerror(errno));
    flock(fd, LOCK_EX); // held until the file is renamed or removed
    slot = registerCleanup(buf.data(), -1);
  }
  fchmod(fd, 0644); // mkstemp's 0600 would make the depfile private
  Status s = writeFile(buf.data(), contents);
  if (!s && std::rename(buf.data(), path.c_str()) != 0)
    s = Status::error(path + ": cannot move into place: " + std::strerror(errno));
  SignalsHeld held;
  unregisterCleanup(slot);
  if (s)
    unlink(buf.data());
  close(fd);
  return s;
}

} // namespace odlac
