// Runs the C compiler and archiver for --emit, inside the staging folder so that the
// objects record relative file names only (byte-identical builds from any folder).
#include "Build.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace odlac {
namespace {

std::vector<std::string> splitWords(const std::string &s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;)
    words.push_back(w);
  return words;
}

std::string envOr(const char *name, const std::string &fallback) {
  const char *v = std::getenv(name);
  return v && *v ? v : fallback;
}

// The CPU flags a bare-metal Arm triple implies, which arm-none-eabi-gcc does not infer.
std::vector<std::string> armFlags(const std::string &arch, const std::string &env) {
  struct Row {
    const char *arch;
    const char *cpu;
  };
  static const Row kRows[] = {{"thumbv6m", "cortex-m0"},
                              {"thumbv7m", "cortex-m3"},
                              {"thumbv7em", "cortex-m4"},
                              {"thumbv8m.base", "cortex-m23"},
                              {"thumbv8m.main", "cortex-m33"}};
  for (const Row &r : kRows)
    if (arch == r.arch) {
      std::vector<std::string> f{std::string("-mcpu=") + r.cpu, "-mthumb"};
      if (env == "eabihf")
        f.insert(f.end(), {"-mfloat-abi=hard", "-mfpu=auto"});
      return f;
    }
  return {};
}

bool exists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string quoted(const std::vector<std::string> &argv) {
  std::string s;
  for (const std::string &a : argv)
    s += (s.empty() ? "" : " ") + a;
  return s;
}

} // namespace

Status runIn(const std::string &dir, const std::vector<std::string> &argv) {
  int status = runChild(dir, argv);
  if (status < 0)
    return Status::error(std::string("cannot run ") + argv[0] + ": " + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return Status::ok();
  return Status::error(
      "`" + quoted(argv) + "` failed (exit status " +
      std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) + ")");
}

std::string odlaPrefix(const Options &opts) {
  if (!opts.odlaPrefix.empty())
    return opts.odlaPrefix;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return "";
  std::string p(exe, static_cast<size_t>(n));
  for (int up = 0; up < 2; ++up)
    p = p.substr(0, std::max<size_t>(1, p.find_last_of('/')));
  return p;
}

Toolchain toolchainFor(const std::string &triple) {
  Toolchain t;
  std::string prefix; // "aarch64-linux-gnu-" for a cross toolchain
  if (!triple.empty()) {
    std::vector<std::string> parts;
    for (size_t pos = 0;;) {
      size_t dash = triple.find('-', pos);
      parts.push_back(triple.substr(pos, dash == std::string::npos ? dash : dash - pos));
      if (dash == std::string::npos)
        break;
      pos = dash + 1;
    }
    const std::string &arch = parts[0], &env = parts.back();
    bool onLinux = triple.find("-linux") != std::string::npos;
    t.hosted = onLinux;
    std::string gccArch = arch;
    if (arch.rfind("arm", 0) == 0 || arch.rfind("thumb", 0) == 0)
      gccArch = "arm";
    else if (arch == "i386" || arch == "i486" || arch == "i586" || arch == "i686")
      gccArch = "i686";
    prefix = gccArch + (onLinux ? "-linux-" : "-none-") + (parts.size() > 1 ? env : "elf") + "-";
    t.cc = {prefix + "gcc"};
    for (const std::string &f : armFlags(arch, env))
      t.cc.push_back(f);
    // The host's own triple needs no cross toolchain.
    char machine[256] = "";
    if (FILE *p = popen("cc -dumpmachine 2>/dev/null", "r")) {
      if (!std::fgets(machine, sizeof machine, p))
        machine[0] = '\0';
      pclose(p);
    }
    if (prefix == std::string(machine).substr(0, std::strcspn(machine, "\n")) + "-")
      prefix.clear();
  }
  if (prefix.empty())
    t.cc = {"cc"};
  if (const char *cc = std::getenv("CC"); cc && *cc)
    t.cc = splitWords(cc);
  t.ar = splitWords(envOr("AR", prefix + "ar"));
  return t;
}

Status buildArtifact(const Options &opts, Staging &staging, const std::vector<std::string> &sources,
                     const std::vector<std::string> &objects) {
  const std::string &name = opts.codegen.name;
  Toolchain tc = toolchainFor(opts.triple);
  if (opts.emit == Options::Emit::Shared && !tc.hosted)
    return Status::error("--emit=shared: target '" + opts.triple +
                         "' has no operating system to load shared libraries; use --emit=static");
  std::string prefix = odlaPrefix(opts);
  std::string include = prefix + "/" ODLAC_INSTALL_INCLUDEDIR;
  if (!exists(include + "/ODLA/odla.h"))
    return Status::error("--emit: no ODLA headers in " + include +
                         "/ODLA; pass --odla-prefix with the folder that holds include/ODLA");
  char real[PATH_MAX];
  if (realpath(include.c_str(), real))
    include = real; // the compiler runs in the staging folder

  std::vector<std::string> members;
  for (const std::string &src : sources) {
    std::string obj = src.substr(0, src.rfind('.')) + (src == name + ".c" ? "_code.o" : ".o");
    std::vector<std::string> argv = tc.cc;
    argv.insert(argv.end(), {"-std=c99", "-O2"});
    if (tc.hosted)
      argv.push_back("-fPIC");
    for (const std::string &f : splitWords(envOr("CFLAGS", "")))
      argv.push_back(f);
    argv.insert(argv.end(), {"-I" + include, "-c", src, "-o", obj});
    if (Status s = runIn(staging.path(), argv))
      return s;
    members.push_back(obj);
  }
  members.insert(members.end(), objects.begin(), objects.end());

  std::vector<std::string> argv;
  std::string artifact;
  switch (opts.emit) {
  case Options::Emit::C:
    return Status::ok();
  case Options::Emit::Obj:
    artifact = name + ".o";
    argv = tc.cc;
    argv.insert(argv.end(), {"-r", "-nostdlib", "-o", artifact});
    break;
  case Options::Emit::Static:
    artifact = "lib" + name + ".a";
    argv = tc.ar;
    argv.insert(argv.end(), {"rcsD", artifact});
    break;
  case Options::Emit::Shared: {
    artifact = "lib" + name + ".so";
    std::string lib = prefix + "/" ODLAC_INSTALL_LIBDIR;
    std::string backend = "libodla_" + opts.linkBackend;
    if (!exists(lib + "/" + backend + ".so") && !exists(lib + "/" + backend + ".a"))
      return Status::error("--emit=shared: no " + backend + ".so or .a in " + lib +
                           " to link (--link-backend=" + opts.linkBackend + ")");
    if (realpath(lib.c_str(), real))
      lib = real;
    argv = tc.cc;
    argv.insert(argv.end(), {"-shared", "-o", artifact});
    argv.insert(argv.end(), members.begin(), members.end());
    argv.insert(argv.end(), {"-L" + lib, "-lodla_" + opts.linkBackend, "-lm"});
    members.clear();
    break;
  }
  }
  argv.insert(argv.end(), members.begin(), members.end());
  if (Status s = runIn(staging.path(), argv))
    return s;
  staging.adopt(artifact);
  return Status::ok();
}

} // namespace odlac
