// Atomic output: stage every file in a temporary sibling folder, then rename into place.
#include "OutputDir.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

namespace odlac {
namespace {

std::string parentOf(const std::string &path) {
  std::string d = path;
  while (d.size() > 1 && d.back() == '/')
    d.pop_back();
  size_t slash = d.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : d.substr(0, slash));
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
  bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  ok &= std::fclose(f) == 0;
  if (!ok)
    return Status::error(path + ": write failed: " + std::strerror(errno));
  return Status::ok();
}

} // namespace

Expected<Staging> Staging::create(const std::string &dir) {
  std::string parent = parentOf(dir);
  std::string tmpl = parent + "/.odlac-tmp-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    return Status::error(parent + ": cannot create a temporary folder: " + std::strerror(errno));
  std::string clean = dir; // "out/" names its files "out/net.h", not "out//net.h"
  while (clean.size() > 1 && clean.back() == '/')
    clean.pop_back();
  return Staging(clean, buf.data());
}

Staging::Staging(Staging &&other) noexcept
    : dir_(std::move(other.dir_)), staging_(std::move(other.staging_)),
      outputs_(std::move(other.outputs_)) {
  other.staging_.clear();
}

Staging::~Staging() {
  if (!staging_.empty())
    removeTree(staging_);
}

Status Staging::write(const GeneratedFile &f, bool output) {
  if (Status s = writeFile(pathOf(f.name), f.contents))
    return s;
  if (output)
    adopt(f.name);
  return Status::ok();
}

Expected<std::vector<std::string>> Staging::commit() {
  struct stat st;
  bool created = false;
  if (stat(dir_.c_str(), &st) != 0) {
    if (mkdir(dir_.c_str(), 0777) != 0)
      return Status::error(dir_ + ": cannot create: " + std::strerror(errno));
    created = true;
  } else if (!S_ISDIR(st.st_mode)) {
    return Status::error(dir_ + ": exists and is not a folder");
  }
  std::vector<std::string> done;
  for (const std::string &name : outputs_) {
    std::string to = dir_ + "/" + name;
    if (std::rename(pathOf(name).c_str(), to.c_str()) != 0) {
      Status s = Status::error(to + ": cannot move into place: " + std::strerror(errno));
      if (created)
        removeTree(dir_);
      return s;
    }
    done.push_back(to);
  }
  return done;
}

Status writeFileAtomically(const std::string &path, const std::string &contents) {
  std::string tmpl = parentOf(path) + "/.odlac-tmp-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0)
    return Status::error(path + ": cannot create a temporary file: " + std::strerror(errno));
  fchmod(fd, 0644); // mkstemp's 0600 would make the depfile private
  close(fd);
  Status s = writeFile(buf.data(), contents);
  if (!s && std::rename(buf.data(), path.c_str()) != 0)
    s = Status::error(path + ": cannot move into place: " + std::strerror(errno));
  if (s)
    unlink(buf.data());
  return s;
}

} // namespace odlac
