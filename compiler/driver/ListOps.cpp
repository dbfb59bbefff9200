#include "ListOps.h"

#include "Import.h"
#include "Rules.h"
#include "Schema.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

namespace odlac {
namespace {

// A cell of a Markdown table: '|' would end it, a line break would end the row.
std::string cell(const std::string &s) {
  std::string out;
  for (char ch : s)
    out += ch == '|' ? "\\|" : ch == '\n' ? " " : std::string(1, ch);
  return out;
}

std::string range(int64_t since, int64_t until) {
  return until < 0        ? std::to_string(since) + "+"
         : until == since ? std::to_string(since)
                          : std::to_string(since) + "-" + std::to_string(until);
}

std::string status(const ImportRule &r) {
  if (r.unsupported)
    return std::string("refused: ") + r.unsupported;
  if (r.irOp)
    return std::string("imported as `") + r.irOp + "`";
  return "imported by its rule's function (checked, then mapped or decomposed)";
}

// What the manifest says of the ODLA builder named like the IR op (or, for a rule's function,
// like the ONNX op, whose IR op it usually is): its element types and limits. A node that
// lowers to other calls (extensions, decompositions) is checked at compile time, where every
// call the code would make must meet the manifest.
std::string backendCell(const Target &t, const ImportRule &r) {
  if (r.unsupported)
    return "";
  if (t.allOps)
    return "yes";
  const std::string fn = r.irOp ? r.irOp : r.onnxOp;
  if (!t.hasOp(fn))
    return "no `odla_" + fn + "`: a node it cannot lower otherwise is refused at compile time";
  std::string s = "`odla_" + fn + "`";
  const std::set<std::string> &types = t.ops.at(fn);
  if (!types.empty()) {
    s += ":";
    for (const std::string &type : types)
      s += " " + type;
  }
  for (const Limit &l : t.limits)
    if (l.function == fn) {
      s += "; " + l.condition.text;
      for (size_t i = 0; i < l.guards.size(); ++i)
        s += (i ? " " : " when ") + l.guards[i].text;
    }
  return s;
}

} // namespace

std::string listOps(const Target &target, bool backend) {
  // The rows of each op, by domain and name, in opset order.
  std::map<std::pair<std::string, std::string>, std::vector<const ImportRule *>> rows;
  for (const ImportRule *r : allRules())
    rows[{r->domain, r->onnxOp}].push_back(r);
  std::map<std::string, std::vector<int64_t>> versions;
  for (auto &[op, since] : onnxOpVersions()) {
    versions[op] = since;
    rows[{"", op}]; // an op of ONNX's without rows is listed too
  }
  std::ostringstream o;
  o << "| op | opsets | odlac |" << (backend ? " " + cell(target.backend) + " |" : "") << "\n"
    << "|---|---|---|" << (backend ? "---|" : "") << "\n";
  for (auto &[key, list] : rows) {
    const std::string &domain = key.first, &op = key.second;
    const std::string name = domain.empty() ? op : domain + "." + op;
    std::sort(list.begin(), list.end(), [](const ImportRule *a, const ImportRule *b) {
      return a->sinceOpset < b->sinceOpset;
    });
    auto line = [&](const std::string &opsets, const std::string &what,
                    const std::string &onBackend) {
      o << "| " << cell(name) << " | " << opsets << " | " << cell(what) << " |"
        << (backend ? " " + cell(onBackend) + " |" : "") << "\n";
    };
    auto known = versions.find(op);
    const int64_t first = domain.empty() && known != versions.end() ? known->second.front() : -1;
    if (list.empty()) { // Constant has none: the importer reads it itself (Importer.cpp)
      line(range(first, -1),
           domain.empty() && op == "Constant" ? "imported as a constant of the graph"
                                              : "not supported: odlac has no import rule for it",
           "");
      continue;
    }
    // Opsets before the rules: a model older than kOldestImportedOpset is upgraded to it by
    // libonnx's version converter first (frontend/Importer.cpp), so its op is imported as at
    // that opset where a rule covers it.
    const int64_t ruled = list.front()->sinceOpset;
    if (first >= 0 && first < ruled && first < kOldestImportedOpset) {
      const int64_t last = std::min(ruled, kOldestImportedOpset) - 1;
      line(range(first, last),
           ruled <= kOldestImportedOpset
               ? "upgraded to opset " + std::to_string(kOldestImportedOpset) +
                     " by libonnx's version converter, then imported as there"
               : "not supported at these opsets (the rules start at " + std::to_string(ruled) + ")",
           "");
    }
    if (first >= 0 && std::max(first, kOldestImportedOpset) < ruled)
      line(range(std::max(first, kOldestImportedOpset), ruled - 1),
           "not supported at these opsets (the rules start at " + std::to_string(ruled) + ")", "");
    for (size_t i = 0; i < list.size(); ++i) {
      const int64_t until = i + 1 < list.size() ? list[i + 1]->sinceOpset - 1 : -1;
      line(range(list[i]->sinceOpset, until), status(*list[i]), backendCell(target, *list[i]));
    }
  }
  return o.str();
}

} // namespace odlac
