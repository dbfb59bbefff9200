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

std::string parentOf(const std::string &dir) {
  std::string d = dir;
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

Status writeOutputs(const std::string &dir, const std::vector<GeneratedFile> &files) {
  std::string parent = parentOf(dir);
  std::string tmpl = parent + "/.odlac-tmp-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    return Status::error(parent + ": cannot create a temporary folder: " + std::strerror(errno));
  std::string staging = buf.data();
  for (const GeneratedFile &f : files)
    if (Status s = writeFile(staging + "/" + f.name, f.contents)) {
      removeTree(staging);
      return s;
    }
  struct stat st;
  bool created = false;
  if (stat(dir.c_str(), &st) != 0) {
    if (mkdir(dir.c_str(), 0777) != 0) {
      removeTree(staging);
      return Status::error(dir + ": cannot create: " + std::strerror(errno));
    }
    created = true;
  } else if (!S_ISDIR(st.st_mode)) {
    removeTree(staging);
    return Status::error(dir + ": exists and is not a folder");
  }
  for (const GeneratedFile &f : files)
    if (std::rename((staging + "/" + f.name).c_str(), (dir + "/" + f.name).c_str()) != 0) {
      Status s = Status::error(dir + "/" + f.name + ": cannot move into place: " +
                               std::strerror(errno));
      removeTree(staging);
      if (created)
        removeTree(dir);
      return s;
    }
  rmdir(staging.c_str());
  return Status::ok();
}

} // namespace odlac
