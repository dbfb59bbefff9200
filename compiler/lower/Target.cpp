// Reading capability manifests.
#include "lower/Target.h"

#include <sstream>
#include <vector>

namespace odlac {

// The manifests of the shipped backends, embedded at build time (Manifests.cpp, generated
// from runtime_stubs/*/manifest.txt).
extern const std::vector<std::pair<const char *, const char *>> kShippedManifests;

Expected<Target> parseManifest(const std::string &text, const std::string &origin) {
  Target t;
  t.allOps = false;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  bool sawBackend = false;
  while (std::getline(in, line)) {
    ++lineNo;
    std::string where = origin + ":" + std::to_string(lineNo) + ": ";
    size_t hash = line.find('#');
    std::istringstream words(hash == std::string::npos ? line : line.substr(0, hash));
    std::string key, word;
    if (!(words >> key))
      continue;
    std::vector<std::string> values;
    while (words >> word)
      values.push_back(word);
    if (key == "backend" || key == "library" || key == "layout") {
      if (values.size() != 1)
        return Status::error(where + key + " takes one value");
      (key == "backend" ? t.backend : key == "library" ? t.library : t.layout) = values[0];
      sawBackend |= key == "backend";
      if (key == "layout" && values[0] != "channels_first" && values[0] != "channels_last")
        return Status::error(where + "layout must be channels_first or channels_last");
    } else if (key == "modes") {
      t.modes.insert(values.begin(), values.end());
    } else if (key == "features") {
      t.features.insert(values.begin(), values.end());
    } else if (key == "extensions") {
      for (const std::string &v : values)
        (v == "*" ? (void)(t.allExtensions = true) : (void)t.extensions.insert(v));
    } else if (key == "ops") {
      for (const std::string &v : values) {
        if (v == "*") {
          t.allOps = true;
          continue;
        }
        size_t colon = v.find(':');
        std::set<std::string> &types = t.ops[v.substr(0, colon)];
        if (colon == std::string::npos)
          continue;
        std::istringstream list(v.substr(colon + 1));
        for (std::string ty; std::getline(list, ty, ',');)
          types.insert(ty);
      }
    } else {
      return Status::error(where + "unknown key '" + key + "'");
    }
  }
  if (!sawBackend)
    return Status::error(origin + ": the manifest names no backend");
  return t;
}

Expected<Target> shippedTarget(const std::string &backend) {
  std::string names;
  for (const auto &[name, text] : kShippedManifests) {
    if (backend == name)
      return parseManifest(text, std::string("manifest of ") + name);
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  return Status::error("unknown backend '" + backend + "'; odlac ships: " + names +
                       " (use --backend-manifest=FILE for another)");
}

Target coreProfile(Target t) {
  t.extensions.clear();
  t.allExtensions = false;
  return t;
}

const Target &referenceTarget() {
  static const Target t = [] {
    auto parsed = shippedTarget("reference");
    return parsed ? *parsed : Target{};
  }();
  return t;
}

} // namespace odlac
