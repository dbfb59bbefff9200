// Checks the import rows against ONNX's own schemas (tests/unit/data/onnx_schemas.txt, written
// by gen_onnx_schemas.py from ONNX 1.23): every op version of the default domain that a model
// can use (opset 7 on: older models are upgraded first; rows for older ones only need to be
// reachable) has a row that imports or rejects it,
// and a row that imports, of any domain, lists every attribute of every version it covers
// (used, or without effect and why), so importNode() never meets an attribute of a valid node
// that its row does not know. It also finds rows that list attributes no version they cover
// has, and rows that no opset reaches.
#include "Import.h"
#include "Rules.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace odlac::test {
namespace {

struct SchemaVersion {
  int since;
  std::map<std::string, std::string> attrs; // name -> ONNX kind (INT, FLOATS, GRAPH...)
};

// "domain/op" (the default domain without "domain/") -> its versions, oldest first.
using Schemas = std::map<std::string, std::vector<SchemaVersion>>;

std::string domainOf(const std::string &key) {
  size_t slash = key.find('/');
  return slash == std::string::npos ? "" : key.substr(0, slash);
}

std::string opOf(const std::string &key) { return key.substr(key.find('/') + 1); }

std::string keyOf(const ImportRule &r) {
  return *r.domain ? std::string(r.domain) + "/" + r.onnxOp : r.onnxOp;
}

// `newest`: each domain's newest opset.
Schemas readSchemas(std::map<std::string, int> &newest) {
  Schemas schemas;
  std::ifstream in(std::string(ODLAC_SOURCE_DIR) + "/tests/unit/data/onnx_schemas.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream words(line);
    std::string key, word;
    SchemaVersion v;
    words >> key >> v.since;
    while (words >> word && word != ":") {
    }
    while (words >> word) {
      size_t colon = word.find(':');
      v.attrs[word.substr(0, colon)] = word.substr(colon + 1);
    }
    int &n = newest[domainOf(key)];
    n = std::max(n, v.since);
    schemas[key].push_back(v);
  }
  return schemas;
}

// The version of an op in effect at `opset`; nullptr before the op existed.
const SchemaVersion *versionAt(const std::vector<SchemaVersion> &versions, int opset) {
  const SchemaVersion *found = nullptr;
  for (const SchemaVersion &v : versions)
    if (v.since <= opset)
      found = &v;
  return found;
}

const char *irKindOf(const std::string &onnxKind) {
  static const std::map<std::string, AttrKind> kinds = {
      {"INT", AttrKind::Int},   {"FLOAT", AttrKind::Float},   {"STRING", AttrKind::String},
      {"INTS", AttrKind::Ints}, {"FLOATS", AttrKind::Floats}, {"STRINGS", AttrKind::Strings}};
  auto it = kinds.find(onnxKind);
  return it == kinds.end() ? "none" : attrKindName(it->second);
}

std::string rowName(const ImportRule &r) {
  return keyOf(r) + " row from opset " + std::to_string(r.sinceOpset);
}

// Problems found, one line each, each once, in the order found.
class Problems {
public:
  void push_back(const std::string &p) {
    if (seen_.insert(p).second)
      list_.push_back(p);
  }
  bool empty() const { return list_.empty(); }
  const std::vector<std::string> &list() const { return list_; }

private:
  std::vector<std::string> list_;
  std::set<std::string> seen_;
};

std::vector<std::string> coverageProblems() {
  std::map<std::string, int> newest;
  Schemas schemas = readSchemas(newest);
  Problems problems;
  if (schemas.empty())
    return {"tests/unit/data/onnx_schemas.txt is missing or empty"};
  // The importer turns Constant nodes into constants itself and refuses every attribute but
  // the one value it reads.
  const std::set<std::string> importedElsewhere = {"Constant"};

  std::map<const ImportRule *, std::set<int>> reached; // row -> the opsets it serves
  for (const auto &[op, versions] : schemas) {
    if (importedElsewhere.count(op))
      continue;
    std::string domain = domainOf(op);
    // Models of older default-domain opsets are upgraded before import, so rows for them are
    // optional: they serve models that libonnx's converter does not upgrade (or upgrades into
    // one that does not import). Such a row must be reachable, but need not know every
    // attribute of those versions: importNode refuses one it does not list.
    int oldest = domain.empty() ? static_cast<int>(kOldestImportedOpset) : 1;
    for (int opset = versions.front().since; opset <= newest[domain]; ++opset) {
      const SchemaVersion *v = versionAt(versions, opset);
      const ImportRule *row = findRule(domain, opOf(op), opset);
      if (!row && opset < oldest)
        continue;
      if (!row) {
        if (domain.empty())
          problems.push_back(op + " at opset " + std::to_string(opset) +
                             ": no row imports or rejects it");
        break;
      }
      reached[row].insert(opset);
      if (row->unsupported || opset < oldest)
        continue;
      for (const auto &[name, kind] : v->attrs) {
        bool listed = false;
        for (const AttrRule &a : row->attrs)
          listed |= name == a.onnxName;
        if (!listed)
          problems.push_back(rowName(*row) + ": attribute '" + name + "' (" + kind + ") of " + op +
                             "-" + std::to_string(v->since) + " is not listed");
      }
    }
  }
  for (const ImportRule *row : allRules()) {
    auto known = schemas.find(keyOf(*row));
    if (known == schemas.end()) {
      problems.push_back(rowName(*row) + ": ONNX has no such op");
      continue;
    }
    const std::set<int> &opsets = reached[row];
    if (opsets.empty()) {
      problems.push_back(rowName(*row) + ": no opset up to " + std::to_string(newest[row->domain]) +
                         " reaches it (a later row replaces it, or older models are upgraded)");
      continue;
    }
    if (row->unsupported)
      continue;
    std::map<std::string, std::string> any; // attributes of the versions the row serves
    for (int opset : opsets)
      for (const auto &a : versionAt(known->second, opset)->attrs)
        any.insert(a);
    for (const AttrRule &a : row->attrs) {
      auto schema = any.find(a.onnxName);
      if (schema == any.end()) {
        problems.push_back(rowName(*row) + ": lists attribute '" + a.onnxName +
                           "', which no version it serves has");
        continue;
      }
      if (row->irOp && !a.irName && !a.noEffect)
        problems.push_back(rowName(*row) + ": attribute '" + a.onnxName +
                           "' has neither an IR name nor a reason it has no effect");
      if (a.dflt && std::string(attrKindName(attrKind(*a.dflt))) != irKindOf(schema->second))
        problems.push_back(rowName(*row) + ": the default of '" + a.onnxName + "' is " +
                           attrKindName(attrKind(*a.dflt)) + ", the attribute " + schema->second);
    }
  }
  return problems.list();
}

TEST(SchemaCoverage, EveryOpVersionHasARowThatListsEachOfItsAttributes) {
  std::vector<std::string> problems = coverageProblems();
  std::string all;
  for (const std::string &p : problems)
    all += "\n  " + p;
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems:" << all;
}

} // namespace
} // namespace odlac::test
