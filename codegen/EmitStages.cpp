// --dim's computation in stages (Emitter.h, StagedBuild): which stage each call goes to, the
// values that cross between stages, and each stage's function NAME_stage_K_.
#include "Emitter.h"

#include <algorithm>
#include <map>
#include <set>

namespace odlac::emit {

namespace {

// One call as the StagingSink printed it.
struct StagedCall {
  std::string function;
  std::string text;           // its lines, and the (void) lines of its results nothing reads
  std::vector<int> inputs;    // the values it reads
  std::vector<int> results;   // the values it makes
  std::string id;             // its (first) result's name
  int shapeArg = -1;          // the argument that states its one result's shape, or -1
  std::vector<int64_t> shape; // that shape at the largest dims
  int64_t axis = 0;           // odla_Concat's
  bool returnsStatus = false; // odla_SetValueAsOutput and the like: no result
  bool source = false;        // an argument or constant, made in each stage that reads it
};

// Prints each call apart, and notes what it reads and makes.
class StagingSink : public PrintSink {
public:
  StagingSink(CWriter &scratch, const Emitter &e, ValueIds &ids)
      : PrintSink(scratch, e.N + "_CHECK", e.n, ids), scratch_(scratch) {}

  std::vector<StagedCall> calls;
  std::vector<int> producer;         // each value's call
  std::vector<std::string> variable; // each value's C variable

  void markUnused(lower::Val v) override {
    PrintSink::markUnused(v);
    if (!v.isNull())
      calls[static_cast<size_t>(producer[static_cast<size_t>(v.index)])].text += scratch_.take();
  }

protected:
  std::vector<lower::Val> emit(lower::Call &call) override {
    StagedCall c;
    c.function = call.function;
    c.returnsStatus = call.returns == lower::Returns::Status;
    c.source = c.function == "odla_CreateArgument" || c.function == "odla_CreateConstant";
    std::vector<std::string> params = call.paramNames();
    for (size_t a = 0; a < call.args.size(); ++a) {
      const lower::Arg &arg = call.args[a];
      if (const auto *v = std::get_if<lower::Val>(&arg)) {
        if (!v->isNull())
          c.inputs.push_back(v->index);
      } else if (const auto *vs = std::get_if<lower::Vals>(&arg)) {
        for (const lower::Val &v : vs->vals)
          if (!v.isNull())
            c.inputs.push_back(v.index);
      } else if (const auto *s = std::get_if<lower::Shape>(&arg)) {
        // A result's shape as the lowering inferred it (a rank of -1 states nothing).
        static const std::set<std::string> shapeParams = {"output_dims", "output_shape",
                                                          "output_dim", "max_output_shape"};
        if (a < params.size() && shapeParams.count(params[a]) && s->rank >= 0) {
          c.shapeArg = static_cast<int>(a);
          c.shape = s->dims;
        }
      } else if (const auto *i = std::get_if<int64_t>(&arg)) {
        if (a < params.size() && params[a] == "axis")
          c.axis = *i;
      }
    }
    c.id = lastId(call.args);
    std::vector<lower::Val> results = PrintSink::emit(call);
    c.text = scratch_.take();
    for (const lower::Val &r : results) {
      if (producer.size() <= static_cast<size_t>(r.index)) {
        producer.resize(static_cast<size_t>(r.index) + 1, -1);
        variable.resize(static_cast<size_t>(r.index) + 1);
      }
      producer[static_cast<size_t>(r.index)] = static_cast<int>(calls.size());
      variable[static_cast<size_t>(r.index)] = variableOf(r);
      c.results.push_back(r.index);
    }
    if (c.results.size() != 1)
      c.shapeArg = -1;
    calls.push_back(std::move(c));
    return results;
  }

private:
  CWriter &scratch_;
};

// The dims that numbers of call `c` (or of its argument `arg`, when not -1) depend on.
unsigned dimsOf(const SymbolicCalls &sym, int c, int arg = -1) {
  unsigned mask = 0;
  for (auto it = sym.args.lower_bound({c, std::max(arg, 0), 0});
       it != sym.args.end() && std::get<0>(it->first) == c &&
       (arg < 0 || std::get<1>(it->first) == arg);
       ++it)
    for (const auto &term : it->second.terms)
      mask |= term.first;
  return mask;
}

} // namespace

StagedBuild stagedBuild(const Emitter &e) {
  const SymbolicCalls &sym = e.config.facts.symbolic;
  StagedBuild b{
      GraphFunction{"", false, false, 0, 0, ValueIds(e.config.facts.target->integerIds)}, {}, {}};
  CWriter scratch(1); // the calls print as lines of a function's body
  StagingSink sink(scratch, e, b.fn.ids);
  sink.setSymbolic(&sym);
  lowerGraph(e.graph, sink, constantData(e), *e.config.facts.target);
  GraphFunction &fn = b.fn;
  fn.shapeI64 = sink.shapeI64();
  fn.shapeI32 = sink.shapeI32();
  fn.blockBytes = sink.blockBytes();
  fn.usesMath = sink.usesMath();
  fn.usesExtensions = sink.usesExtensions();
  fn.typeSlots = std::max(1, sink.typeSlots()); // a crossing's argument takes types_[0]
  fn.shapeSlots = sink.shapeSlots();
  const std::vector<StagedCall> &calls = sink.calls;
  size_t n = calls.size();
  auto producerOf = [&](int v) {
    return static_cast<size_t>(sink.producer[static_cast<size_t>(v)]);
  };

  // The dims each call depends on: its numbers' and its operands' shapes'; a result's shape
  // depends on the dims of the shape the call states for it, else on all of the call's.
  std::vector<unsigned> dims(n), valueDims(sink.producer.size());
  for (size_t c = 0; c < n; ++c) {
    dims[c] = dimsOf(sym, static_cast<int>(c));
    for (int v : calls[c].inputs)
      dims[c] |= valueDims[static_cast<size_t>(v)];
    for (int r : calls[c].results)
      valueDims[static_cast<size_t>(r)] =
          calls[c].shapeArg >= 0 ? dimsOf(sym, static_cast<int>(c), calls[c].shapeArg) : dims[c];
  }
  // A stage keys on the dims that at most half of the calls depend on: those every stage
  // depends on alike (a sequence length) would split nothing off.
  size_t ops = 0;
  std::vector<size_t> users(sym.dims.size());
  for (size_t c = 0; c < n; ++c)
    if (!calls[c].source) {
      ++ops;
      for (size_t d = 0; d < sym.dims.size(); ++d)
        users[d] += (dims[c] >> d) & 1u;
    }
  unsigned common = 0;
  for (size_t d = 0; d < sym.dims.size(); ++d)
    if (2 * users[d] > ops)
      common |= 1u << d;

  // Each call goes to the first stage of its key at or after every stage it reads from (a
  // status call to the stage of the value it takes), which a new stage starts where none
  // is. One stage where that does not fit: control flow, a graph output that is an argument
  // or a constant, and the types above.
  std::vector<int> stageOf(n, -1);
  std::vector<unsigned> keys;
  // One stage too for a model with values of the types the buffers between stages are not
  // sized for (strings, the 8-, 4- and 2-bit types, whose bytes a backend lays out its way).
  auto plain = [](const Value *v) { return !v || v->dtype() <= DType::Bool; };
  bool one = !std::all_of(e.graph.inputs().begin(), e.graph.inputs().end(), plain);
  for (const Node *node : e.graph.nodes())
    one = one || !std::all_of(node->outputs().begin(), node->outputs().end(), plain);
  for (size_t c = 0; c < n && !one; ++c) {
    const StagedCall &call = calls[c];
    if (call.source)
      continue;
    int lo = 0;
    bool produced = false;
    for (int v : call.inputs) {
      size_t p = producerOf(v);
      if (!calls[p].source) {
        lo = std::max(lo, stageOf[p]);
        produced = true;
      }
    }
    bool region = call.function == "odla_BeginIf" || call.function == "odla_EnterBranchBody" ||
                  call.function == "odla_EndIf" || call.function == "odla_BeginLoop" ||
                  call.function == "odla_EndLoop";
    if (region || (call.returnsStatus && !produced)) {
      one = true;
      break;
    }
    if (call.returnsStatus) {
      stageOf[c] = lo;
      continue;
    }
    unsigned key = dims[c] & ~common;
    int s = lo;
    while (s < static_cast<int>(keys.size()) && keys[static_cast<size_t>(s)] != key)
      ++s;
    if (s == static_cast<int>(keys.size()))
      keys.push_back(key);
    stageOf[c] = s;
  }
  if (one || keys.empty()) {
    keys.assign(1, 0);
    for (size_t c = 0; c < n; ++c)
      stageOf[c] = calls[c].source ? -1 : 0;
  }
  // Then each call moves to the last stage of its key before the first that reads it (from
  // the last call back), so that a value lives in the stage that reads it where it can: in
  // that stage's arena, not in a buffer between stages (a decoder's past keys, gathered where
  // the attention reads them); a stage left empty goes.
  std::vector<int> firstReader(n, -1);
  for (size_t c = n; c-- > 0;) {
    const StagedCall &call = calls[c];
    if (call.source || call.returnsStatus)
      continue;
    int last = firstReader[c];
    if (last >= 0) {
      unsigned key = dims[c] & ~common;
      while (last > stageOf[c] && keys[static_cast<size_t>(last)] != key)
        --last;
      stageOf[c] = last;
    }
    for (int v : call.inputs) {
      size_t p = producerOf(v);
      if (!calls[p].source && (firstReader[p] < 0 || firstReader[p] > stageOf[c]))
        firstReader[p] = stageOf[c];
    }
  }
  for (size_t c = 0; c < n; ++c) // a status call stays with the value it takes
    if (calls[c].returnsStatus)
      stageOf[c] = stageOf[producerOf(calls[c].inputs[0])];
  {
    std::vector<int> renumber(keys.size(), -1);
    for (size_t c = 0; c < n; ++c)
      if (stageOf[c] >= 0)
        renumber[static_cast<size_t>(stageOf[c])] = 0;
    std::vector<unsigned> kept;
    for (size_t s = 0; s < keys.size(); ++s)
      if (renumber[s] == 0) {
        renumber[s] = static_cast<int>(kept.size());
        kept.push_back(keys[s]);
      }
    for (size_t c = 0; c < n; ++c)
      if (stageOf[c] >= 0)
        stageOf[c] = renumber[static_cast<size_t>(stageOf[c])];
    keys = kept;
  }
  size_t stages = keys.size();
  b.stages.resize(stages);

  // Where each value is read, the crossings, and the sources each stage makes again.
  std::map<int, size_t> crossingOf; // value -> crossing
  std::vector<std::set<size_t>> sourcesIn(stages);
  std::vector<bool> read(n);
  for (size_t c = 0; c < n; ++c) {
    if (calls[c].source)
      continue;
    size_t s = static_cast<size_t>(stageOf[c]);
    b.stages[s].dims |= dims[c];
    for (int v : calls[c].inputs) {
      size_t p = producerOf(v);
      read[p] = true;
      if (calls[p].source) {
        sourcesIn[s].insert(p);
        continue;
      }
      size_t from = static_cast<size_t>(stageOf[p]);
      if (from == s)
        continue;
      auto [it, added] = crossingOf.emplace(v, b.crossings.size());
      if (added) {
        b.crossings.push_back(
            {sink.variable[static_cast<size_t>(v)], fn.ids.literal(calls[p].id), from, -1, -1, ""});
        b.stages[from].crossOut.push_back(it->second);
      }
      std::vector<size_t> &in = b.stages[s].crossIn;
      if (std::find(in.begin(), in.end(), it->second) == in.end())
        in.push_back(it->second);
    }
  }
  for (size_t c = 0; c < n; ++c) // an argument nothing reads is made in the first stage
    if (calls[c].source && !read[c])
      sourcesIn[0].insert(c);
  // The ports: arguments by their ids, outputs by the value each odla_SetValueAsOutput takes.
  for (size_t s = 0; s < stages; ++s)
    for (size_t c : sourcesIn[s])
      if (calls[c].function == "odla_CreateArgument")
        for (size_t i = 0; i < e.inputs.size(); ++i)
          if (e.inputs[i].value->name() == calls[c].id)
            b.stages[s].inputs.push_back(i);
  for (size_t c = 0; c < n; ++c)
    if (calls[c].function == "odla_SetValueAsOutput")
      for (size_t o = 0; o < e.outputs.size(); ++o)
        if (e.outputs[o].value->name() == calls[producerOf(calls[c].inputs[0])].id) {
          b.stages[static_cast<size_t>(stageOf[c])].outputs.push_back(o);
          auto it = crossingOf.find(calls[c].inputs[0]);
          if (it != crossingOf.end())
            b.crossings[it->second].output = static_cast<int>(o);
        }

  // A graph output made by a Concat of values from other stages (or of Reshapes of them, views
  // of its arguments), along an axis with only 1s before it: each part is a block of the
  // output, which the stage that makes it writes in place.
  auto bytesOf = [&](size_t c, size_t elem) -> std::string {
    uint64_t fixed = elem;
    std::string r;
    for (size_t d = 0; d < calls[c].shape.size(); ++d) {
      auto it = sym.args.find({static_cast<int>(c), calls[c].shapeArg, static_cast<int>(d)});
      if (it == sym.args.end())
        fixed *= static_cast<uint64_t>(calls[c].shape[d]);
      else
        r += " * (size_t)(" + dimExpression(it->second, sym) + ")";
    }
    return "(size_t)" + std::to_string(fixed) + r;
  };
  for (size_t c = 0; c < n; ++c) {
    const StagedCall &cat = calls[c];
    if (cat.function != "odla_Concat" || cat.shapeArg < 0 || cat.results.size() != 1)
      continue;
    int port = -1;
    for (size_t o = 0; o < e.outputs.size(); ++o)
      if (e.outputs[o].value->name() == cat.id)
        port = static_cast<int>(o);
    int64_t axis = cat.axis < 0 ? cat.axis + static_cast<int64_t>(cat.shape.size()) : cat.axis;
    bool fits = port >= 0 && axis >= 0 && axis < static_cast<int64_t>(cat.shape.size());
    for (int64_t d = 0; fits && d < axis; ++d)
      fits = cat.shape[static_cast<size_t>(d)] == 1 &&
             !sym.args.count({static_cast<int>(c), cat.shapeArg, static_cast<int>(d)});
    size_t elem = fits ? dtypeBytes(e.outputs[static_cast<size_t>(port)].value->dtype()) : 0;
    // Each part: the crossing it is (none for a part of the Concat's stage, which the Concat
    // copies), and the call that states its shape.
    std::vector<std::pair<int, size_t>> parts;
    for (size_t i = 0; fits && i < cat.inputs.size(); ++i) {
      int v = cat.inputs[i];
      size_t p = producerOf(v);
      if (!calls[p].source && calls[p].function == "odla_Reshape" && stageOf[p] == stageOf[c] &&
          !calls[p].inputs.empty() && calls[p].shapeArg >= 0)
        v = calls[p].inputs[0]; // a view of the argument it reads
      auto it = crossingOf.find(v);
      int k = it == crossingOf.end() ? -1 : static_cast<int>(it->second);
      if (k >= 0 && (b.crossings[static_cast<size_t>(k)].output >= 0 ||
                     b.crossings[static_cast<size_t>(k)].into >= 0))
        k = -1;
      for (const auto &part : parts)
        if (part.first == k)
          k = -1;
      fits = calls[p].shapeArg >= 0 && elem > 0;
      parts.push_back({k, p});
    }
    if (!fits)
      continue;
    std::string at = "0";
    for (const auto &[k, p] : parts) {
      if (k >= 0) {
        b.crossings[static_cast<size_t>(k)].into = port;
        b.crossings[static_cast<size_t>(k)].at = at;
      }
      at += " + " + bytesOf(p, elem);
    }
  }

  // The stages' functions.
  std::string text;
  const std::string &nm = e.n;
  for (size_t s = 0; s < stages; ++s) {
    const BuildStage &st = b.stages[s];
    std::vector<std::string> named;
    for (size_t d = 0; d < sym.dims.size(); ++d)
      if (st.dims & (1u << d))
        named.push_back(cComment(sym.dims[d].name));
    std::string dimNames;
    for (size_t i = 0; i < named.size(); ++i)
      dimNames += (i == 0 ? "" : i + 1 == named.size() ? " or " : ", ") + named[i];
    CWriter in(1), out(1);
    for (size_t k : st.crossIn) {
      const Crossing &x = b.crossings[k];
      in.line(e.N + "_CHECK(odla_GetValueType(inst->cross[" + std::to_string(k) +
              "].value, &types_[0]));");
      in.line("odla_value " + x.var + " = odla_CreateArgument(types_[0], " + x.id + ");");
    }
    std::string body = in.str();
    for (size_t c = 0; c < n; ++c)
      if (stageOf[c] == static_cast<int>(s) || (calls[c].source && sourcesIn[s].count(c)))
        body += calls[c].text;
    for (size_t k : st.crossOut) {
      const Crossing &x = b.crossings[k];
      if (x.output < 0)
        out.line(e.N + "_CHECK(odla_SetValueAsOutput(" + x.var + "));");
      out.line("inst->cross[" + std::to_string(k) + "].value = " + x.var + ";");
    }
    body += out.str();
    CWriter w;
    w.line("/* Stage " + std::to_string(s) + " of " + std::to_string(stages) +
           (dimNames.empty() ? ": built once" : ": built again when " + dimNames + " changes") +
           " */");
    w.open("static odla_status " + nm + "_stage_" + std::to_string(s) + "_(" + nm +
           "_instance *inst, const " + nm + "_dims *dims_)");
    text +=
        w.str() + shapeLocals(body.find("types_[") != std::string::npos ? fn.typeSlots : 0,
                              body.find("shapes_[") != std::string::npos ? fn.shapeSlots : 0, "  ");
    if (e.bin() && body.find("weights + ") != std::string::npos)
      text += "  const unsigned char *weights = inst->weights;\n";
    if (body.find("sd_->") != std::string::npos)
      text += "  " + nm + "_shape_data_ *sd_ = &inst->shape_data;\n";
    if (body.find("inst->") == std::string::npos)
      text += "  (void)inst; /* it reads no value of another stage, nor the weights */\n";
    if (body.find("dims_->") == std::string::npos)
      text += "  (void)dims_; /* no number of this stage depends on the dims */\n";
    text += body + "  return ODLA_SUCCESS;\n}\n\n";
  }
  fn.text = text;
  return b;
}

} // namespace odlac::emit
