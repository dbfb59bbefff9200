// Reading calibration input sets (Calibration.h).
#include "Calibration.h"

#include "Tensor.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <climits>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

namespace odlac {
namespace {

// At most this many sets: each runs through the float model twice.
constexpr size_t kMaxSets = 100000;

bool isDirectory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The test_data_set_<k> folders of `dir`, by k.
Expected<std::vector<std::string>> setFolders(const std::string &dir) {
  DIR *d = opendir(dir.c_str());
  if (!d)
    return Status::error("--calibration '" + dir + "': cannot open the folder");
  std::vector<std::pair<long long, std::string>> found;
  const std::string prefix = "test_data_set_";
  while (dirent *e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() ||
        name.size() > prefix.size() + 9 ||
        name.find_first_not_of("0123456789", prefix.size()) != std::string::npos)
      continue;
    if (isDirectory(dir + "/" + name))
      found.emplace_back(std::stoll(name.substr(prefix.size())), name);
  }
  closedir(d);
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto &f : found)
    out.push_back(dir + "/" + f.second);
  if (out.empty())
    out.push_back(dir);
  if (out.size() > kMaxSets)
    return Status::error("--calibration '" + dir + "': more than " + std::to_string(kMaxSets) +
                         " input sets");
  return out;
}

Expected<std::shared_ptr<const Buffer>> readInput(const std::string &path, const Value &input) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return Status::error(path + ": cannot open the calibration input (each set needs one "
                                "input_<i>.pb per graph input)");
  google::protobuf::io::FileInputStream raw(fd);
  raw.SetCloseOnDelete(true);
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  auto t = std::make_shared<onnx::TensorProto>();
  if (!t->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    return Status::error(path + ": not a TensorProto (protobuf parse failed)");
  std::string folder = path.substr(0, path.find_last_of('/'));
  auto decoded = decodeTensor(*t, folder, t);
  if (!decoded)
    return Status::error(path + ": " + decoded.status().message());
  if (decoded->type != input.type())
    return Status::error(path + ": " + toString(decoded->type) + " does not match input '" +
                         input.name() + "', " + toString(input.type()) + " as compiled");
  return decoded->data;
}

} // namespace

Expected<std::vector<std::vector<std::shared_ptr<const Buffer>>>>
loadCalibrationSets(const std::string &dir, const Graph &g) {
  auto folders = setFolders(dir);
  if (!folders)
    return folders.takeStatus();
  std::vector<std::vector<std::shared_ptr<const Buffer>>> sets;
  for (const std::string &f : *folders) {
    std::vector<std::shared_ptr<const Buffer>> set;
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      auto b = readInput(f + "/input_" + std::to_string(i) + ".pb", *g.inputs()[i]);
      if (!b)
        return b.takeStatus();
      set.push_back(*b);
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

} // namespace odlac
