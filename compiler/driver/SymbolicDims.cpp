// Symbolic dims (SymbolicDims.h): compile at several sizes, fit each differing number.
#include "SymbolicDims.h"

#include "CWriter.h"
#include "Import.h"
#include "lower/Lowering.h"
#include "passes/Pipeline.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <variant>

namespace odlac {

using namespace lower;

namespace {

// At most this many dims vary: 2^k + 1 compiles.
constexpr size_t kMaxVaryingDims = 4;
// Rounds of compiles, each leaving the values whose data differed in the one before to the
// generated code (a value computed from them may differ only then).
constexpr int kMaxRefoldRounds = 16;
// Integer constants of at most this many elements may depend on the dims (shape tensors).
constexpr int64_t kMaxShapeConstant = 64;

// One call as lowerGraph makes it, without the function that makes it: a constant's Data
// holds, in place of C, what the comparison needs (constantKey) beside a pointer to the data
// (alive with the probe's graph).
struct Recorded {
  std::string function;
  const char *params; // Call::params
  std::vector<Arg> args;
};

class RecordingSink : public OdlaSink {
public:
  std::vector<Recorded> calls;

protected:
  std::vector<Val> emit(Call &call) override {
    calls.push_back({call.function, call.params, call.args});
    size_t results = 0;
    if (call.returns == Returns::Value)
      results = 1;
    else if (call.returns == Returns::Values)
      for (const Arg &a : call.args)
        if (const Ids *ids = std::get_if<Ids>(&a))
          results = ids->names.size();
    std::vector<Val> vals;
    for (size_t i = 0; i < results; ++i)
      vals.push_back(Val{next_++});
    return vals;
  }

private:
  int next_ = 0;
};

// A constant's data as the comparison sees it: the integers of a small integer constant
// ("i:" then the numbers), else its size and a hash of its bytes.
std::string constantKey(const Value &c) {
  const Buffer &k = *c.data();
  const auto *bytes = static_cast<const unsigned char *>(k.data);
  uint64_t n = c.type().byteSize();
  int64_t count = c.type().numElements();
  DType t = c.dtype();
  if ((t == DType::I64 || t == DType::I32) && count <= kMaxShapeConstant) {
    std::string r = "i:";
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = 0;
      if (t == DType::I64)
        std::memcpy(&v, bytes + 8 * i, 8);
      else {
        int32_t w;
        std::memcpy(&w, bytes + 4 * i, 4);
        v = w;
      }
      r += std::to_string(v) + ",";
    }
    return r;
  }
  uint64_t h = 1469598103934665603ull; // FNV-1a
  if (t == DType::Str)
    for (int64_t i = 0; i < count; ++i)
      for (const char *ch = k.as<const char *>()[i];; ++ch) {
        h = (h ^ static_cast<unsigned char>(*ch)) * 1099511628211ull;
        if (!*ch)
          break;
      }
  else
    for (uint64_t i = 0; i < n; ++i)
      h = (h ^ bytes[i]) * 1099511628211ull;
  return "h:" + std::to_string(t == DType::Str ? 0 : dtypeBytes(t)) + ":" + toString(c.type()) +
         ":" + std::to_string(h);
}

// The integers of an argument, in element order, or nullopt for a kind without any (which
// must then be equal as a whole).
std::optional<std::vector<int64_t>> integers(const Arg &a) {
  if (const auto *v = std::get_if<int64_t>(&a))
    return std::vector<int64_t>{*v};
  if (const auto *v = std::get_if<uint64_t>(&a))
    return std::vector<int64_t>{static_cast<int64_t>(*v)};
  if (const auto *v = std::get_if<U32s>(&a))
    return std::vector<int64_t>(v->v.begin(), v->v.end());
  if (const auto *v = std::get_if<I32s>(&a))
    return std::vector<int64_t>(v->v.begin(), v->v.end());
  if (const auto *v = std::get_if<lower::Shape>(&a))
    return v->dims;
  if (const auto *v = std::get_if<VType>(&a))
    return v->shape.dims;
  if (const auto *v = std::get_if<Data>(&a)) {
    if (v->cExpr.rfind("i:", 0) != 0)
      return std::nullopt;
    std::vector<int64_t> r;
    for (size_t p = 2; p < v->cExpr.size();) {
      size_t comma = v->cExpr.find(',', p);
      r.push_back(std::stoll(v->cExpr.substr(p, comma - p)));
      p = comma + 1;
    }
    return r;
  }
  return std::nullopt;
}

// Floats compared as their bits: a NaN attribute equals itself, -0 differs from 0.
std::vector<uint32_t> bitsOf(const std::vector<float> &v) {
  std::vector<uint32_t> bits(v.size());
  if (!v.empty())
    std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
  return bits;
}

// What must be equal besides the integers: the kind, a shape's rank, a type's element type,
// the count of an array; the whole of an argument without integers.
bool sameApartFromIntegers(const Arg &a, const Arg &b) {
  if (a.index() != b.index())
    return false;
  if (const auto *v = std::get_if<lower::Shape>(&a))
    return v->rank == std::get<lower::Shape>(b).rank;
  if (const auto *v = std::get_if<VType>(&a))
    return v->elementType == std::get<VType>(b).elementType &&
           v->shape.rank == std::get<VType>(b).shape.rank;
  if (const auto *v = std::get_if<Data>(&a)) {
    const std::string &x = v->cExpr, &y = std::get<Data>(b).cExpr;
    return x.rfind("i:", 0) == 0 ? y.rfind("i:", 0) == 0 && std::count(x.begin(), x.end(), ',') ==
                                                                std::count(y.begin(), y.end(), ',')
                                 : x == y;
  }
  if (integers(a))
    return true; // scalars and arrays: their counts are compared with the integers
  return std::visit(
      [&](const auto &x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T &y = std::get<T>(b);
        if constexpr (std::is_same_v<T, Val>)
          return x.index == y.index;
        else if constexpr (std::is_same_v<T, Id>)
          return x.name == y.name;
        else if constexpr (std::is_same_v<T, Str>)
          return x.s == y.s;
        else if constexpr (std::is_same_v<T, Ids>)
          return x.names == y.names;
        else if constexpr (std::is_same_v<T, Vals>) {
          if (x.vals.size() != y.vals.size())
            return false;
          for (size_t i = 0; i < x.vals.size(); ++i)
            if (x.vals[i].index != y.vals[i].index)
              return false;
          return true;
        } else if constexpr (std::is_same_v<T, Flag>)
          return x.on == y.on;
        else if constexpr (std::is_same_v<T, EnumArg>)
          return x.name == y.name;
        else if constexpr (std::is_same_v<T, LoopModes>)
          return x.v == y.v;
        else if constexpr (std::is_same_v<T, float>)
          return bitsOf({x}) == bitsOf({y});
        else if constexpr (std::is_same_v<T, CustomParams>) {
          if (x.attrs.size() != y.attrs.size() || x.resultTypes.size() != y.resultTypes.size())
            return false;
          for (size_t i = 0; i < x.attrs.size(); ++i)
            if (x.attrs[i].name != y.attrs[i].name || x.attrs[i].ints != y.attrs[i].ints ||
                bitsOf(x.attrs[i].floats) != bitsOf(y.attrs[i].floats) ||
                x.attrs[i].str != y.attrs[i].str)
              return false;
          for (size_t i = 0; i < x.resultTypes.size(); ++i)
            if (x.resultTypes[i].shape.dims != y.resultTypes[i].shape.dims)
              return false;
          return true;
        } else
          return false;
      },
      a);
}

// One compile of the model at some dims.
struct Probe {
  std::vector<int64_t> dims;
  std::vector<Recorded> calls;
  std::vector<Dims> inputDims, outputDims;
  std::unique_ptr<Graph> graph; // the graph compiled, when it was not given
};

std::string dimsText(const std::vector<SymbolicDim> &d, const std::vector<int64_t> &v) {
  std::string r;
  for (size_t i = 0; i < d.size(); ++i)
    r += (i ? ", " : "") + d[i].name + "=" + std::to_string(v[i]);
  return r;
}

Expected<Probe> compileAt(const Options &opts, const ImportOptions &baseImport, const Graph *bound,
                          const std::vector<int64_t> &at, const PassContext &ctx) {
  Probe p;
  p.dims = at;
  std::unique_ptr<Graph> own;
  const Graph *g = bound;
  if (!g) {
    ImportOptions import = baseImport;
    for (size_t i = 0; i < opts.dims.size(); ++i)
      import.dimValues[opts.dims[i].name] = at[i];
    auto imported = importOnnxFile(opts.model, import);
    std::string where = "--dim: compiling at " + dimsText(opts.dims, at) + ": ";
    if (!imported)
      return Status::error(where + imported.status().message());
    PipelineOptions quiet = opts.pipeline;
    quiet.printAfter.clear();
    if (Status s = runPipeline(**imported, quiet, ctx))
      return Status::error(where + s.message());
    if (opts.tapValues)
      for (const Node *n : (*imported)->nodes())
        for (Value *v : n->outputs())
          if (v && !(*imported)->isGraphOutput(v))
            (*imported)->addOutput(v);
    own = std::move(*imported);
    g = own.get();
  }
  RecordingSink sink;
  lowerGraph(
      *g, sink,
      [](const Value &c, size_t) {
        return Data{c.data()->data, constantKey(c)};
      },
      opts.target);
  p.calls = std::move(sink.calls);
  for (const Value *v : g->inputs())
    p.inputDims.push_back(v->dims());
  for (const Value *v : g->outputs())
    p.outputDims.push_back(v->dims());
  p.graph = std::move(own);
  return p;
}

using Wide = __int128;

bool fitsInt64(Wide v) { return v >= INT64_MIN && v <= INT64_MAX; }

} // namespace

int64_t evaluate(const DimPolynomial &p, const std::vector<int64_t> &dims) {
  Wide sum = 0;
  for (const auto &[mask, coef] : p.terms) {
    Wide t = coef;
    for (size_t i = 0; i < dims.size(); ++i)
      if (mask & (1u << i))
        t *= dims[i];
    sum += t;
  }
  return static_cast<int64_t>(sum);
}

namespace {

// The multilinear polynomial through values at the corners of the box (corner m has dim i at
// low[i] where bit i of m is set, else at low[i] + 1), over the varying dims `vary` (indices
// into all dims). Nullopt when a coefficient leaves int64.
std::optional<DimPolynomial> fit(const std::vector<int64_t> &corner,
                                 const std::vector<size_t> &vary, const std::vector<int64_t> &low) {
  size_t k = vary.size(), full = (size_t{1} << k) - 1;
  // f = sum over subsets T of c_T * prod_{i in T} x_i, x_i = S_i - low_i in {0, 1}; the corner
  // with x_i = 1 exactly for i in U is mask full & ~U.
  std::vector<Wide> c(size_t{1} << k, 0);
  for (size_t T = 0; T <= full; ++T)
    for (size_t U = T;; U = (U - 1) & T) {
      int sign = (__builtin_popcountll(T) - __builtin_popcountll(U)) % 2 ? -1 : 1;
      c[T] += sign * static_cast<Wide>(corner[full & ~U]);
      if (!U)
        break;
    }
  // In monomials of S: prod_{i in T} (S_i - low_i) = sum_{U subset T} prod_{U} S_i *
  // prod_{T \ U} (-low_i).
  std::vector<Wide> d(size_t{1} << k, 0);
  for (size_t T = 0; T <= full; ++T) {
    if (!c[T])
      continue;
    for (size_t U = T;; U = (U - 1) & T) {
      Wide t = c[T];
      for (size_t i = 0; i < k; ++i)
        if ((T & ~U) & (size_t{1} << i)) {
          t *= -static_cast<Wide>(low[vary[i]]);
          if (!fitsInt64(t))
            return std::nullopt;
        }
      d[U] += t;
      if (!U)
        break;
    }
  }
  DimPolynomial p;
  for (size_t U = 0; U <= full; ++U) {
    if (!d[U])
      continue;
    if (!fitsInt64(d[U]))
      return std::nullopt;
    unsigned mask = 0;
    for (size_t i = 0; i < k; ++i)
      if (U & (size_t{1} << i))
        mask |= 1u << vary[i];
    p.terms.push_back({mask, static_cast<int64_t>(d[U])});
  }
  return p;
}

} // namespace

namespace {

// Whether constant argument a of call c holds, at every probe, the leading block of the
// bound's (probes[0]) data that the probe's dims cover: a mask or table of T x T, an iota or a
// fill, which the code then takes from the bound's data (SymbolicCalls::subBlocks).
bool isSubBlockEverywhere(const std::vector<Probe> &probes, size_t c, size_t a) {
  const Recorded &b = probes[0].calls[c];
  const auto *bt = std::get_if<VType>(&b.args[0]);
  const auto &bd = std::get<Data>(b.args[a]);
  if (!bt || !bd.ptr)
    return false;
  // constantKey: "h:<element bytes>:...", or "i:" for a small int32 or int64 constant.
  size_t elem = bd.cExpr.rfind("i:", 0) == 0 ? (bt->elementType == ODLA_INT64 ? 8 : 4)
                                             : std::stoul(bd.cExpr.substr(2));
  if (!elem)
    return false; // strings
  const Dims &top = bt->shape.dims;
  for (size_t m = 1; m < probes.size(); ++m) {
    const Recorded &p = probes[m].calls[c];
    const auto *pt = std::get_if<VType>(&p.args[0]);
    const auto &pd = std::get<Data>(p.args[a]);
    if (!pt || !pd.ptr || pt->shape.dims.size() != top.size())
      return false;
    const Dims &dims = pt->shape.dims;
    int64_t rows = 1, inner = dims.empty() ? 1 : dims.back();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] > top[d])
        return false;
      if (d + 1 < dims.size())
        rows *= dims[d];
    }
    // Row r of the probe (the index over all but the last dim) sits at the bound's row of
    // the same index.
    for (int64_t r = 0; r < rows; ++r) {
      int64_t at = 0, rest = r;
      for (size_t d = dims.empty() ? 0 : dims.size() - 1; d-- > 0;) {
        int64_t stride = 1;
        for (size_t e = d + 1; e + 1 < top.size(); ++e)
          stride *= top[e];
        at += rest % dims[d] * stride;
        rest /= dims[d];
      }
      if (std::memcmp(static_cast<const unsigned char *>(pd.ptr) + r * inner * elem,
                      static_cast<const unsigned char *>(bd.ptr) +
                          at * (top.empty() ? 1 : top.back()) * elem,
                      static_cast<size_t>(inner) * elem) != 0)
        return false;
    }
  }
  return true;
}

// Compares the probes (SymbolicDims.h); `result` has the dims. Collects in `keep` the values
// whose constant data differs between sizes (folded, or made by import) and are not kept
// computed yet: the result is then unfinished, and the caller compiles again.
Expected<SymbolicCalls> compareProbes(const Options &opts, const PassContext &ctx,
                                      std::vector<Probe> &probes, const std::vector<size_t> &vary,
                                      const std::vector<int64_t> &low, size_t corners,
                                      SymbolicCalls result, std::set<std::string> &keep) {
  const Probe &base = probes[0];
  auto differ = [&](const Probe &p, const std::string &what) {
    return Status::error("--dim: the code odlac generates differs in more than sizes between " +
                         dimsText(opts.dims, base.dims) + " and " + dimsText(opts.dims, p.dims) +
                         ": " + what);
  };
  // Fits the numbers at one position across the probes; `what` names it for messages.
  auto fitAt = [&](const std::vector<int64_t> &seen,
                   const std::function<std::string()> &what) -> Expected<DimPolynomial> {
    std::vector<int64_t> corner(seen.begin(), seen.begin() + static_cast<long>(corners));
    bool same = std::all_of(seen.begin(), seen.end(), [&](int64_t v) { return v == seen[0]; });
    if (same)
      return DimPolynomial{{{0u, seen[0]}}};
    auto p = fit(corner, vary, low);
    bool ok = p.has_value();
    for (size_t m = 0; ok && m < probes.size(); ++m)
      ok = evaluate(*p, probes[m].dims) == seen[m];
    if (!ok) {
      std::string values;
      for (size_t m = 0; m < probes.size(); ++m)
        values += (m ? "; " : "") + std::to_string(seen[m]) + " at " +
                  dimsText(opts.dims, probes[m].dims);
      return Status::error("--dim: " + what() + " is " + values +
                           ": not a sum of products of the dims (a stride or a division over a "
                           "symbolic dim?), which the code cannot compute from them");
    }
    return *p;
  };
  for (const Probe &p : probes)
    if (p.inputDims.size() != base.inputDims.size() ||
        p.outputDims.size() != base.outputDims.size())
      return differ(p, "the graph inputs or outputs differ in number");
  for (const Probe &p : probes) {
    if (p.calls.size() == base.calls.size())
      continue;
    size_t c = 0;
    while (c < p.calls.size() && c < base.calls.size() &&
           p.calls[c].function == base.calls[c].function)
      ++c;
    auto which = [&](const std::vector<Recorded> &calls) {
      return c < calls.size() ? calls[c].function + " for '" + lastId(calls[c].args) + "'"
                              : std::string("nothing");
    };
    return differ(p, std::to_string(base.calls.size()) + " ODLA calls against " +
                         std::to_string(p.calls.size()) + ", the first difference call " +
                         std::to_string(c) + ": " + which(base.calls) + " against " +
                         which(p.calls) +
                         " (a pass removed or added an op at one size: a slice of a whole "
                         "axis, say)");
  }
  for (size_t c = 0; c < base.calls.size(); ++c) {
    const Recorded &call = base.calls[c];
    std::string label = call.function + " for '" + lastId(call.args) + "'";
    for (const Probe &p : probes)
      if (p.calls[c].function != call.function || p.calls[c].args.size() != call.args.size())
        return differ(p, "call " + std::to_string(c) + " is " + label + " against " +
                             p.calls[c].function + " for '" + lastId(p.calls[c].args) + "'");
    std::vector<std::string> params =
        Call{call.function.c_str(), call.params, Returns::Status, {}, {}}.paramNames();
    for (size_t a = 0; a < call.args.size(); ++a) {
      std::string param = a < params.size() ? params[a] : "argument " + std::to_string(a);
      const auto *data = std::get_if<Data>(&call.args[a]);
      bool same = std::all_of(probes.begin(), probes.end(), [&](const Probe &p) {
        return sameApartFromIntegers(call.args[a], p.calls[c].args[a]);
      });
      if (data && !same && isSubBlockEverywhere(probes, c, a)) {
        result.subBlocks.insert(static_cast<int>(c));
        continue;
      }
      bool kept = false;
      for (const Probe &p : probes)
        if (!sameApartFromIntegers(call.args[a], p.calls[c].args[a])) {
          const std::string folded = "/folded", id = lastId(call.args);
          if (data) {
            // Folded (or computed by import, as a Range): leave it to the generated code.
            std::string value = id.size() > folded.size() && id.compare(id.size() - folded.size(),
                                                                        folded.size(), folded) == 0
                                    ? id.substr(0, id.size() - folded.size())
                                    : id;
            if (!ctx.keepComputed.count(value)) {
              keep.insert(value); // the next round compiles it as computed
              kept = true;
              break;
            }
          }
          return differ(p, label + ": its " + param +
                               (data ? " (a constant's data) differs: a constant computed from "
                                       "a symbolic dim (such as a mask of T x T) cannot be "
                                       "written as numbers of the dims"
                                     : " differs"));
        }
      auto ints = integers(call.args[a]);
      if (kept || !ints)
        continue;
      for (const Probe &p : probes)
        if (integers(p.calls[c].args[a])->size() != ints->size())
          return differ(p, label + ": its " + param + " has " + std::to_string(ints->size()) +
                               " numbers against " +
                               std::to_string(integers(p.calls[c].args[a])->size()));
      for (size_t e = 0; e < ints->size(); ++e) {
        std::vector<int64_t> seen;
        for (const Probe &p : probes)
          seen.push_back((*integers(p.calls[c].args[a]))[e]);
        if (std::all_of(seen.begin(), seen.end(), [&](int64_t v) { return v == seen[0]; }))
          continue;
        auto poly = fitAt(
            seen, [&] { return label + ": number " + std::to_string(e) + " of its " + param; });
        if (!poly)
          return poly.status();
        result.args[{static_cast<int>(c), static_cast<int>(a), static_cast<int>(e)}] = *poly;
      }
    }
  }
  auto portDims = [&](bool input, std::vector<std::vector<DimPolynomial>> &out) -> Status {
    const auto &baseDims = input ? base.inputDims : base.outputDims;
    for (size_t v = 0; v < baseDims.size(); ++v) {
      std::vector<DimPolynomial> dims;
      for (size_t d = 0; d < baseDims[v].size(); ++d) {
        std::vector<int64_t> seen;
        for (const Probe &p : probes) {
          const Dims &pd = (input ? p.inputDims : p.outputDims)[v];
          if (pd.size() != baseDims[v].size())
            return differ(p, std::string("the rank of graph ") + (input ? "input " : "output ") +
                                 std::to_string(v));
          seen.push_back(pd[d]);
        }
        auto poly = fitAt(seen, [&] {
          return std::string(input ? "graph input " : "graph output ") + std::to_string(v) +
                 ": dim " + std::to_string(d);
        });
        if (!poly)
          return poly.status();
        dims.push_back(*poly);
      }
      out.push_back(std::move(dims));
    }
    return Status::ok();
  };
  if (Status s = portDims(true, result.inputDims))
    return s;
  if (Status s = portDims(false, result.outputDims))
    return s;
  for (size_t d = 0; d < result.dims.size() && opts.codegen.emitMain; ++d)
    if (!dimOfInputs(result, d))
      return Status::error("--emit-main: no input has a dim that is " + result.dims[d].name +
                           " alone, so the driver cannot take it from its input files");
  return result;
}

} // namespace

Expected<SymbolicCalls> probeSymbolicDims(const Options &opts, std::unique_ptr<Graph> &bound,
                                          PassContext ctx) {
  SymbolicCalls result;
  result.dims = opts.dims;
  CScope fields("", {"dims"});
  for (SymbolicDim &d : result.dims) {
    d.field = fields.add(d.name);
    if (!bound->info().symbolicDims.count(d.name)) {
      std::string used;
      for (const std::string &s : bound->info().symbolicDims)
        used += (used.empty() ? "" : ", ") + s;
      return Status::error("--dim " + d.name + ": no graph input has a dim of that name (" +
                           (used.empty() ? std::string("the inputs' dims are all fixed")
                                         : "the symbolic dims in use: " + used) +
                           "; --input-shape names a dim, as in x:Tx64)");
    }
  }
  size_t n = opts.dims.size();
  std::vector<size_t> vary;
  std::vector<int64_t> low(n), top(n), check(n);
  bool checkNew = false;
  for (size_t i = 0; i < n; ++i) {
    const SymbolicDim &d = opts.dims[i];
    top[i] = d.max;
    low[i] = d.max - 1;
    check[i] = d.max;
    if (d.min < d.max)
      vary.push_back(i);
    if (d.max - d.min >= 2) { // a third size: the middle of the range, below both corners
      check[i] = std::min(std::max(d.min, (d.min + d.max) / 2), d.max - 2);
      checkNew = true;
    }
  }
  if (vary.size() > kMaxVaryingDims)
    return Status::error("--dim: at most " + std::to_string(kMaxVaryingDims) +
                         " dims may vary (odlac compiles the model at 2^k + 1 sizes)");
  ImportOptions import = opts.import;
  // Corner m: dim vary[i] at low where bit i is set. Each round compiles every size; the
  // values whose constant data differs between sizes go to keepComputed (folding's and
  // import's), and the next round compiles the model again with them left to the code.
  for (int round = 0;; ++round) {
    std::vector<Probe> probes;
    size_t corners = size_t{1} << vary.size();
    for (size_t m = 0; m < corners + (checkNew ? 1 : 0); ++m) {
      std::vector<int64_t> at = top;
      if (m == corners)
        at = check;
      else
        for (size_t i = 0; i < vary.size(); ++i)
          if (m & (size_t{1} << i))
            at[vary[i]] = low[vary[i]];
      auto p = compileAt(opts, import, m == 0 && round == 0 ? bound.get() : nullptr, at, ctx);
      if (!p)
        return p.status();
      probes.push_back(std::move(*p));
    }
    std::set<std::string> keep;
    auto calls = compareProbes(opts, ctx, probes, vary, low, corners, result, keep);
    if (!calls)
      return calls;
    if (keep.empty()) {
      if (round)
        bound = std::move(probes[0].graph);
      return calls;
    }
    if (round == kMaxRefoldRounds)
      return Status::error("--dim: after " + std::to_string(round) +
                           " rounds of leaving values computed from the dims to the code, '" +
                           *keep.begin() + "' still differs between sizes");
    ctx.keepComputed.insert(keep.begin(), keep.end());
    import.keepComputed.insert(keep.begin(), keep.end());
  }
}

} // namespace odlac
