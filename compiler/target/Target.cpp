// Reading capability manifests.
#include "target/Target.h"

#include "lower/OdlaSink.h"

#include <cctype>
#include <sstream>
#include <vector>

namespace odlac {
namespace {

// An element type as manifests name it: "float32" for ODLA_FLOAT32.
bool isTypeName(const std::string &name) {
  for (int t = ODLA_INT8; t <= ODLA_STRING; ++t) {
    std::string known = lower::enumName(static_cast<odla_element_type>(t)) + 5;
    for (char &ch : known)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (name == known)
      return true;
  }
  return false;
}

// One condition of a limit line: SUBJECT=ALT|ALT... or SUBJECT!=ALT|ALT...
Expected<Condition> parseCondition(const std::string &cond, const std::string &where) {
  Condition c;
  c.text = cond;
  size_t eq = cond.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == cond.size())
    return Status::error(where + "limit condition '" + cond +
                         "' must read SUBJECT=VALUE or SUBJECT!=VALUE");
  c.negated = cond[eq - 1] == '!';
  c.subject = cond.substr(0, eq - (c.negated ? 1 : 0));
  std::istringstream alts(cond.substr(eq + 1));
  for (std::string a; std::getline(alts, a, '|');) {
    if (a.empty())
      return Status::error(where + "limit condition '" + cond + "' has an empty alternative");
    c.alternatives.push_back(a);
  }
  if (c.subject.empty() || c.alternatives.empty())
    return Status::error(where + "limit condition '" + cond + "' needs a subject and a value");
  return c;
}

// limit FUNCTION COND... [when GUARD...]: one Limit per condition, each with all the guards.
Status parseLimits(const std::vector<std::string> &values, const std::string &where,
                   std::vector<Limit> &into) {
  size_t when = 1;
  while (when < values.size() && values[when] != "when")
    ++when;
  if (values.size() < 2 || when == 1 || when + 1 == values.size())
    return Status::error(where + "limit takes a function, at least one condition and, after "
                                 "'when', at least one guard");
  std::vector<Condition> guards;
  for (size_t i = when + 1; i < values.size(); ++i) {
    auto g = parseCondition(values[i], where);
    if (!g)
      return g.takeStatus();
    guards.push_back(*g);
  }
  for (size_t i = 1; i < when; ++i) {
    auto c = parseCondition(values[i], where);
    if (!c)
      return c.takeStatus();
    into.push_back({values[0], *c, guards});
  }
  return Status::ok();
}

} // namespace

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
    } else if (key == "runtime") {
      t.allRuntime = false;
      for (const std::string &v : values)
        (v == "*" ? (void)(t.allRuntime = true) : (void)t.runtime.insert(v));
    } else if (key == "types") {
      for (const std::string &v : values) {
        if (!isTypeName(v))
          return Status::error(where + "'" + v + "' is no element type (float32, int64, ...)");
        t.types.insert(v);
      }
    } else if (key == "value_ids") {
      if (values.size() == 1 && values[0] == "strings") {
        t.integerIds = false;
      } else if (values.size() == 2 && values[0] == "integers" &&
                 values[1].find_first_not_of("0123456789") == std::string::npos &&
                 values[1].size() < 10 && std::stoll(values[1]) >= 2) {
        t.integerIds = true;
        t.idLimit = std::stoll(values[1]);
      } else {
        return Status::error(where + "value_ids takes 'strings' or 'integers N' (N >= 2)");
      }
    } else if (key == "views") {
      t.views.insert(values.begin(), values.end());
    } else if (key == "limit") {
      if (Status s = parseLimits(values, where, t.limits))
        return s;
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
  t.core = true;
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
