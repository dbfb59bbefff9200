// The reference backend's footprint for a model, from the measured table (BackendFootprint.h).
//
// The table (scripts/backend_footprint.py) holds, for each public odla_* function and each
// element-type configuration of the backend (every type, or one ODLA_REFERENCE_WITH_<TYPE>):
// the input sections a link of that function alone keeps (-Wl,--gc-sections), the C
// library's included, with their flash and RAM bytes; which of those functions its direct
// calls do not reach (the kernels its builders store, run through pointers) with the deepest
// stack of running each so; and the stack of its own call tree without indirect calls (a) and
// at its deepest indirect call (b).
#include "BackendFootprint.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace odlac {

namespace {

struct CodeFit {
  int64_t fixed, perCall, stackPerCall;
};
struct Symbol {
  uint32_t name, flash, ram;
  int32_t level; // running it through a pointer; -1: its tree recurses
};
constexpr uint32_t kAbsent = UINT32_MAX;
struct Cell {
  uint32_t symbols, targets; // offsets into kLists, or kAbsent
  int32_t a, b;              // a: -1 where the tree recurses; b: -1 without indirect calls
};
constexpr size_t kNumConfigs = 14; // every type, and each of the 13 ODLA_REFERENCE_WITH_<TYPE>
struct Entry {
  const char *name;
  Cell cells[kNumConfigs];
};

#include "BackendFootprintTable.inc"

static_assert(std::size(kConfigs) == kNumConfigs);

// Each symbol of the list at `offset` and of the lists it extends.
template <typename F> void forList(uint32_t offset, F f) {
  for (uint32_t at = offset + 1; at; at = kLists[at - 1])
    for (uint32_t i = 0; i < kLists[at]; ++i)
      f(kSymbols[kLists[at + 1 + i]]);
}

} // namespace

bool hasFootprintTable(const std::string &backend, const std::string &triple) {
  return backend == "reference" && triple == kTriple;
}

BackendFootprint backendFootprint(const std::map<std::string, int> &calls,
                                  const std::vector<std::string> &types) {
  std::vector<size_t> configs;
  for (size_t c = 0; c < kNumConfigs; ++c)
    if (types.empty() ? c == 0 : std::count(types.begin(), types.end(), kConfigs[c]) > 0)
      configs.push_back(c);
  BackendFootprint f;
  f.compiler = kCompiler;
  int64_t sites = 0;
  for (const auto &[fn, n] : calls)
    sites += n;
  f.codeFlash =
      static_cast<uint64_t>(std::max<int64_t>(0, kCodeFit.fixed + kCodeFit.perCall * sites));
  f.codeStack = static_cast<uint64_t>(kCodeFit.stackPerCall * sites);
  // A section linked under several configurations counts once, at its largest.
  std::map<uint32_t, Symbol> linked;
  int64_t deepestTarget = 0;
  bool bounded = true;
  std::vector<std::pair<const Entry *, const Cell *>> called;
  for (const auto &call : calls) {
    const std::string &fn = call.first;
    const Entry *e = std::find_if(std::begin(kEntries), std::end(kEntries),
                                  [&](const Entry &x) { return fn == x.name; });
    if (e == std::end(kEntries)) {
      f.unknown.push_back(fn);
      continue;
    }
    for (size_t c : configs) {
      const Cell &cell = e->cells[c];
      if (cell.symbols == kAbsent)
        continue;
      called.emplace_back(e, &cell);
      forList(cell.symbols, [&](const Symbol &s) {
        Symbol &l = linked.try_emplace(s.name, Symbol{s.name, 0, 0, 0}).first->second;
        l.flash = std::max(l.flash, s.flash);
        l.ram = std::max(l.ram, s.ram);
      });
      forList(cell.targets, [&](const Symbol &s) {
        bounded &= s.level >= 0;
        deepestTarget = std::max<int64_t>(deepestTarget, s.level);
      });
    }
  }
  for (const auto &[name, s] : linked) {
    // The C library's archives name a member: libm.a(lib_a-e_exp.o).
    bool library = std::string(kNames[name]).find(".a(") != std::string::npos;
    (library ? f.libraryFlash : f.backendFlash) += s.flash;
    f.staticRam += s.ram;
  }
  int64_t deepest = 0;
  for (const auto &[e, cell] : called) {
    bounded &= cell->a >= 0;
    int64_t depth = std::max<int64_t>(cell->a, cell->b >= 0 ? cell->b + deepestTarget : 0);
    if (depth > deepest) {
      deepest = depth;
      f.stackEntry = e->name;
    }
  }
  if (bounded)
    f.stack = f.codeStack + static_cast<uint64_t>(deepest);
  return f;
}

} // namespace odlac
