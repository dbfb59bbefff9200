#include "RunCommand.h"

#include "Build.h"
#include "Options.h"
#include "OutputDir.h"
#include "odlac_version.h"
#include "support/Text.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace odlac {

int error(const std::string &message) {
  std::fprintf(stderr, "odlac: error: %s\n", printable(message).c_str());
  return 1;
}

namespace {

// FNV-1a, 64 bits: names cache folders and stamps their builds (not a security boundary: the
// cache is the user's own).
uint64_t fnv(const std::string &data, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : data)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string cacheRoot() {
  if (const char *d = std::getenv("ODLAC_CACHE_DIR"); d && *d)
    return d;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/odlac/run";
  const char *home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/odlac/run";
}

} // namespace

Expected<std::string> buildDriver(const std::vector<std::string> &options,
                                  const std::string &model) {
  char real[PATH_MAX];
  if (!realpath(model.c_str(), real))
    return Status::error(model + ": cannot open: " + std::strerror(errno));
  // One folder per model path and options; the compile rewrites what changed in it.
  std::string key = std::string(real) + "\n" + ODLAC_VERSION_STRING;
  for (const std::string &o : options)
    key += "\n" + o;
  const std::string dir = cacheRoot() + "/" + hex(fnv(key));
  if (auto made = makeFolders(dir); !made)
    return made.takeStatus();
  std::vector<std::string> compile = options;
  compile.insert(compile.end(), {model, "--emit-main", "-o", dir});
  auto opts = parseOptions(compile);
  if (!opts)
    return opts.takeStatus();
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return Status::error("cannot find odlac's own executable");
  self[n] = '\0';
  compile.insert(compile.begin(), self);
  if (runChild(".", compile) != 0)
    return Status::error(model + ": the compile failed (above)");

  // The build: the README's line against the installed headers and backend.
  const std::string prefix = odlaPrefix(*opts);
  std::string include = prefix + "/" ODLAC_INSTALL_INCLUDEDIR,
              lib = prefix + "/" ODLAC_INSTALL_LIBDIR;
  if (access((include + "/ODLA/odla.h").c_str(), R_OK) != 0)
    return Status::error("no ODLA headers in " + include +
                         "/ODLA; pass --odla-prefix with the folder that holds include/ODLA and "
                         "lib");
  // The manifest's library (--backend-manifest names another backend's), unless --link-backend
  // chose one.
  const std::string backend =
      opts->linkBackend == opts->backend ? opts->target.library : "odla_" + opts->linkBackend;
  if (access((lib + "/lib" + backend + ".so").c_str(), R_OK) != 0 &&
      access((lib + "/lib" + backend + ".a").c_str(), R_OK) != 0)
    return Status::error("no lib" + backend + ".so or .a in " + lib);
  if (realpath(include.c_str(), real))
    include = real;
  if (realpath(lib.c_str(), real))
    lib = real;
  std::vector<std::string> sources;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string f = e->d_name;
      if (f[0] != '.' && ((f.size() > 2 && f.compare(f.size() - 2, 2, ".c") == 0) ||
                          (f.size() > 10 && f.compare(f.size() - 10, 10, "_weights.o") == 0)))
        sources.push_back(f);
    }
    closedir(d);
  }
  std::sort(sources.begin(), sources.end());
  Toolchain tc = toolchainFor("");
  std::vector<std::string> build = tc.cc;
  build.insert(build.end(), {"-std=c99", "-O2", "-I" + include});
  build.insert(build.end(), sources.begin(), sources.end());
  build.insert(build.end(), {"-L" + lib, "-Wl,-rpath," + lib, "-l" + backend, "-lm", "-lpthread"});
  // Rebuilt only when the generated files or the build line changed.
  uint64_t stamp = fnv(std::string(ODLAC_VERSION_STRING));
  for (const std::string &a : build)
    stamp = fnv(a + "\n", stamp);
  for (const std::string &f : sources)
    stamp = fnv(f + "\n" + readAll(dir + "/" + f), stamp);
  const std::string exe = dir + "/run", stampFile = dir + "/.odlac-run-stamp";
  if (access(exe.c_str(), X_OK) == 0 && readAll(stampFile) == hex(stamp))
    return exe;
  const std::string tmp = ".run-" + std::to_string(getpid());
  build.insert(build.end(), {"-o", tmp});
  if (Status s = runIn(dir, build)) {
    unlink((dir + "/" + tmp).c_str());
    return s;
  }
  if (std::rename((dir + "/" + tmp).c_str(), exe.c_str()) != 0)
    return Status::error(exe + ": cannot move into place: " + std::strerror(errno));
  if (Status s = writeFileAtomically(stampFile, hex(stamp)))
    return s;
  return exe;
}

bool splitAtModel(const std::vector<std::string> &args, const char *command,
                  std::vector<std::string> &options, std::string &model,
                  std::vector<std::string> &rest) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (!model.empty()) {
      rest.push_back(a);
    } else if (a.empty() || a[0] != '-' || a == "-") {
      model = a;
    } else {
      if (a.rfind("-o", 0) == 0 || a.rfind("--emit", 0) == 0) {
        error(std::string("odlac ") + command + ": '" + a + "' is not an option of " + command +
              ", which compiles into its cache: options before the model are odlac's, after it " +
              command + "'s");
        return false;
      }
      options.push_back(a);
      if (takesNextArgument(a) && i + 1 < args.size())
        options.push_back(args[++i]);
    }
  }
  if (model.empty())
    error(std::string("odlac ") + command + ": no model given (see odlac --help)");
  return !model.empty();
}

int runCommand(const std::vector<std::string> &args) {
  std::vector<std::string> options, driverArgs;
  std::string model;
  if (!splitAtModel(args, "run", options, model, driverArgs))
    return 1;
  auto exe = buildDriver(options, model);
  if (!exe)
    return error("odlac run: " + exe.status().message());
  std::vector<char *> argv{const_cast<char *>(exe->c_str())};
  for (const std::string &a : driverArgs)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  execv(exe->c_str(), argv.data());
  return error(*exe + ": cannot run: " + std::strerror(errno));
}

} // namespace odlac
