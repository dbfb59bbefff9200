// Prints ODLA calls as C99.
#include "PrintSink.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <type_traits>

namespace odlac {

using namespace lower;

std::string dimExpression(const DimPolynomial &p, const SymbolicCalls &s) {
  std::string r;
  for (const auto &[mask, coef] : p.terms) {
    if (!coef)
      continue;
    std::string term;
    for (size_t i = 0; i < s.dims.size(); ++i)
      if (mask & (1u << i))
        term += (term.empty() ? "" : " * ") + std::string("dims_->") + s.dims[i].field;
    uint64_t c = coef < 0 ? 0 - static_cast<uint64_t>(coef) : static_cast<uint64_t>(coef);
    std::string num = std::to_string(c) + (c > INT32_MAX ? "LL" : "");
    if (term.empty())
      term = num;
    else if (c != 1)
      term = num + " * " + term;
    r += r.empty() ? (coef < 0 ? "-" : "") + term : (coef < 0 ? " - " : " + ") + term;
  }
  return r.empty() ? "0" : "(" + r + ")";
}

// A constant whose data at the run's dims is the leading block of `d` (its data at the
// largest): those first rows of it where only the first dim varies, else a copy of the block
// into sd_->blocks, made by PREFIX_sub_block_ before the call.
std::string PrintSink::subBlock(const lower::Data &d) {
  const VType &t = std::get<VType>(call_->args[0]);
  size_t elem = 0;
  for (int k = 0; k < kNumDTypes; ++k)
    if (dtypeInfo(static_cast<DType>(k)).odlaType == static_cast<int>(t.elementType))
      elem = dtypeBytes(static_cast<DType>(k));
  assert(elem);
  const int argument = argIndex_;
  argIndex_ = 0; // the type's dims
  std::string top, dims;
  bool inner = false; // a dim after the first varies
  uint64_t bytes = elem;
  for (size_t i = 0; i < t.shape.dims.size(); ++i) {
    top += (i ? ", " : "") + std::to_string(t.shape.dims[i]);
    dims += (i ? ", " : "") + number(static_cast<int>(i), std::to_string(t.shape.dims[i]));
    inner |= i > 0 && symbolicAt(static_cast<int>(i));
    bytes *= static_cast<uint64_t>(t.shape.dims[i]);
  }
  argIndex_ = argument;
  if (!inner)
    return d.cExpr;
  uint64_t at = blockBytes_;
  blockBytes_ += (bytes + 63) / 64 * 64;
  line(prefix_ + "_sub_block_((unsigned char *)sd_->blocks + " + std::to_string(at) + ", " +
       d.cExpr + ", " + std::to_string(elem) + ", " + std::to_string(t.shape.dims.size()) +
       ", (const odla_int64[]){" + top + "}, (const odla_int64[]){" + dims + "});");
  return "(const void *)((unsigned char *)sd_->blocks + " + std::to_string(at) + ")";
}

// The rank and dims of s as PREFIX_shape's and PREFIX_type's arguments.
std::string PrintSink::shapeArgs(const lower::Shape &s) {
  std::string r = std::to_string(s.rank);
  for (size_t i = 0; i < s.dims.size(); ++i)
    r += ", " + number(static_cast<int>(i), std::to_string(s.dims[i]) + "LL", "long long");
  return r;
}

bool PrintSink::symbolicArg() const {
  if (!symbolic_)
    return false;
  auto it = symbolic_->args.lower_bound({callIndex_, argIndex_, 0});
  return it != symbolic_->args.end() && std::get<0>(it->first) == callIndex_ &&
         std::get<1>(it->first) == argIndex_;
}

const DimPolynomial *PrintSink::symbolicAt(int e) const {
  if (!symbolic_)
    return nullptr;
  auto it = symbolic_->args.find({callIndex_, argIndex_, e});
  return it == symbolic_->args.end() ? nullptr : &it->second;
}

std::string PrintSink::number(int e, const std::string &literal, const char *cast) {
  const DimPolynomial *p = symbolicAt(e);
  if (!p)
    return literal;
  return *cast ? std::string("(") + cast + ")" + dimExpression(*p, *symbolic_)
               : dimExpression(*p, *symbolic_);
}

// A small integer constant whose elements depend on the symbolic dims: the elements are
// written into the next slots of shape_i64_ or shape_i32_, which the call then points to.
std::string PrintSink::symbolicData(const lower::Data &d) {
  const VType *t = nullptr;
  for (const Arg &a : call_->args)
    if (!t)
      t = std::get_if<VType>(&a);
  assert(t && (t->elementType == ODLA_INT64 || t->elementType == ODLA_INT32));
  bool wide = t->elementType == ODLA_INT64;
  int64_t count = 1;
  for (int64_t v : t->shape.dims)
    count *= v;
  int &used = wide ? shapeI64_ : shapeI32_;
  std::string array = wide ? "sd_->i64" : "sd_->i32";
  const char *type = wide ? "odla_int64" : "odla_int32";
  for (int64_t e = 0; e < count; ++e) {
    std::string literal;
    if (wide) {
      int64_t v;
      std::memcpy(&v, static_cast<const unsigned char *>(d.ptr) + 8 * e, 8);
      literal = std::to_string(v) + "LL";
    } else {
      int32_t v;
      std::memcpy(&v, static_cast<const unsigned char *>(d.ptr) + 4 * e, 4);
      literal = std::to_string(v);
    }
    line(array + "[" + std::to_string(used + e) +
         "] = " + number(static_cast<int>(e), literal, type) + ";");
  }
  std::string r = "(const void *)(" + array + " + " + std::to_string(used) + ")";
  used += static_cast<int>(count);
  return r;
}

void shapeHelpers(CWriter &w, const std::string &prefix, bool types, bool shapes) {
  if (!types && !shapes)
    return;
  w.line("/* Value shapes and types filled into a slot of the caller's and passed as *slot: a");
  w.line(
      "   compound literal would take its own bytes of the caller's stack frame for each call. */");
  w.line("static void " + prefix + "_fill(odla_value_shape *s, int rank, va_list dims) {");
  w.line("  int i;");
  w.line("  s->size = rank;");
  w.line("  for (i = 0; i < ODLA_MAX_DIMENSION; ++i)");
  w.line("    s->dims[i] = i < rank ? (odla_int64)va_arg(dims, long long) : 0;");
  w.line("}");
  w.line();
  if (shapes) {
    w.line("static const odla_value_shape *" + prefix +
           "_shape(odla_value_shape *s, int rank, ...) {");
    w.line("  va_list dims;");
    w.line("  va_start(dims, rank);");
    w.line("  " + prefix + "_fill(s, rank, dims);");
    w.line("  va_end(dims);");
    w.line("  return s;");
    w.line("}");
    w.line();
  }
  if (types) {
    w.line("static const odla_value_type *" + prefix +
           "_type(odla_value_type *t, odla_element_type element_type, int rank, ...) {");
    w.line("  va_list dims;");
    w.line("  va_start(dims, rank);");
    w.line("  t->element_type = element_type;");
    w.line("  " + prefix + "_fill(&t->shape, rank, dims);");
    w.line("  va_end(dims);");
    w.line("  return t;");
    w.line("}");
    w.line();
  }
}

std::string shapeLocals(int typeSlots, int shapeSlots, const std::string &indent) {
  std::string r;
  if (typeSlots)
    r += indent + "odla_value_type types_[" + std::to_string(typeSlots) + "];\n";
  if (shapeSlots)
    r += indent + "odla_value_shape shapes_[" + std::to_string(shapeSlots) + "];\n";
  return r;
}

std::string ValueIds::literal(const std::string &name) {
  if (!integers_)
    return "(const odla_value_id)" + cString(name);
  auto it = numbers_.emplace(name, static_cast<int64_t>(numbers_.size()) + 1).first;
  return "(const odla_value_id)(odla_size_t)" + std::to_string(it->second);
}

// An element type's name; the extension types are defined in odla_ext_types.h.
std::string PrintSink::typeName(odla_element_type t) {
  std::string name = enumName(t);
  usesExtensions_ |= name.rfind("ODLA_EXT_", 0) == 0;
  return name;
}

std::string PrintSink::arg(const Arg &a) {
  return std::visit(
      [&](const auto &v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Val>)
          return v.isNull() ? "NULL" : vars_[v.index];
        else if constexpr (std::is_same_v<T, Id>)
          return ids_.literal(v.name);
        else if constexpr (std::is_same_v<T, Ids>) {
          std::string r =
              "(odla_value_ids){.size = " + std::to_string(v.names.size()) + ", .value_ids = {";
          for (size_t i = 0; i < v.names.size(); ++i)
            r += (i ? ", " : "") + ids_.literal(v.names[i]);
          return r + "}}";
        } else if constexpr (std::is_same_v<T, Vals>) {
          std::string r =
              "(odla_values){.size = " + std::to_string(v.vals.size()) + ", .values = {";
          for (size_t i = 0; i < v.vals.size(); ++i)
            r += (i ? ", " : "") + arg(v.vals[i]);
          return r + "}}";
        } else if constexpr (std::is_same_v<T, U32s> || std::is_same_v<T, I32s>) {
          constexpr bool u = std::is_same_v<T, U32s>;
          std::string r;
          for (size_t i = 0; i < v.v.size(); ++i)
            r += (i ? ", " : "") + number(static_cast<int>(i), std::to_string(v.v[i]),
                                          u ? "odla_uint32" : "odla_int32");
          return v.v.empty() ? "NULL"
                             : std::string(u ? "(const odla_uint32[]){" : "(const odla_int32[]){") +
                                   r + "}";
        } else if constexpr (std::is_same_v<T, lower::Shape>) {
          int k = shapesInCall_++;
          shapeSlots_ = std::max(shapeSlots_, shapesInCall_);
          return "*" + prefix_ + "_shape(&shapes_[" + std::to_string(k) + "], " + shapeArgs(v) +
                 ")";
        } else if constexpr (std::is_same_v<T, VType>) {
          int k = typesInCall_++;
          typeSlots_ = std::max(typeSlots_, typesInCall_);
          return "*" + prefix_ + "_type(&types_[" + std::to_string(k) + "], " +
                 typeName(v.elementType) + ", " + shapeArgs(v.shape) + ")";
        } else if constexpr (std::is_same_v<T, Flag>)
          return v.on ? "1" : "0";
        else if constexpr (std::is_same_v<T, Data>)
          return symbolic_ && symbolic_->subBlocks.count(callIndex_) ? subBlock(v)
                 : symbolicArg()                                     ? symbolicData(v)
                                                                     : v.cExpr;
        else if constexpr (std::is_same_v<T, Str>)
          return cString(v.s);
        else if constexpr (std::is_same_v<T, EnumArg>) {
          usesExtensions_ |= v.name.rfind("ODLA_EXT_", 0) == 0; // odla_ext_types.h
          return v.name;
        } else if constexpr (std::is_same_v<T, LoopModes>) {
          std::string r = "(const odla_loop_output_mode[]){";
          for (size_t i = 0; i < v.v.size(); ++i)
            r += (i ? ", " : "") + std::string(enumName(v.v[i]));
          return v.v.empty() ? "NULL" : r + "}";
        } else if constexpr (std::is_same_v<T, CustomParams>)
          return customParams(v);
        else if constexpr (std::is_same_v<T, float>) {
          std::string f = cFloat(v);
          usesMath_ |= f.find_first_of("HN") != std::string::npos;
          return f;
        } else if constexpr (std::is_same_v<T, int64_t>)
          return number(0, (v > INT32_MAX || v < INT32_MIN) ? std::to_string(v) + "LL"
                                                            : std::to_string(v));
        else
          return number(0, v > UINT32_MAX ? std::to_string(v) + "ULL" : std::to_string(v));
      },
      a);
}

// A C99 integer literal of any int64 value (INT64_MIN has no literal of its own).
static std::string int64Literal(int64_t v) {
  if (v == INT64_MIN)
    return "(-9223372036854775807LL - 1)";
  return (v > INT32_MAX || v < INT32_MIN) ? std::to_string(v) + "LL" : std::to_string(v);
}

// odla_CustomOp's attribute block (odla_ext_custom.h) as a compound literal: the backend
// copies what it points to during the call.
std::string PrintSink::customParams(const CustomParams &p) {
  usesExtensions_ = true;
  std::string attrs;
  for (const CustomAttr &a : p.attrs) {
    static const char *const kinds[] = {"ODLA_EXT_ATTR_INT", "ODLA_EXT_ATTR_FLOAT",
                                        "ODLA_EXT_ATTR_STRING", "ODLA_EXT_ATTR_INTS",
                                        "ODLA_EXT_ATTR_FLOATS"};
    std::string data, count;
    if (a.kind == ODLA_EXT_ATTR_STRING) {
      count = std::to_string(a.str.size());
      data = cString(a.str);
    } else if (a.kind == ODLA_EXT_ATTR_INT || a.kind == ODLA_EXT_ATTR_INTS) {
      count = std::to_string(a.ints.size());
      for (int64_t v : a.ints)
        data += (data.empty() ? "" : ", ") + int64Literal(v);
      data = a.ints.empty() ? "NULL" : "(const odla_int64[]){" + data + "}";
    } else {
      count = std::to_string(a.floats.size());
      for (float v : a.floats)
        data += (data.empty() ? "" : ", ") + arg(Arg{v});
      data = a.floats.empty() ? "NULL" : "(const odla_float32[]){" + data + "}";
    }
    attrs += (attrs.empty() ? "" : ", ") + std::string("{") + cString(a.name) + ", " +
             kinds[a.kind] + ", " + count + ", " + data + "}";
  }
  std::string types;
  for (const VType &t : p.resultTypes)
    types += (types.empty() ? "" : ", ") + arg(Arg{t});
  return "&(const odla_ext_custom_params){ODLA_EXT_CUSTOM_VERSION, " +
         std::to_string(p.attrs.size()) + ", " +
         (attrs.empty() ? "NULL" : "(const odla_ext_custom_attr[]){" + attrs + "}") + ", " +
         (types.empty() ? "NULL" : "(const odla_value_type[]){" + types + "}") + "}";
}

void PrintSink::line(const std::string &text) {
  w_.line(std::string(static_cast<size_t>(depth_) * 2, ' ') + text);
}

// A literal says nothing by itself: a flag, a number, an array of numbers, an absent operand
// print with the name of their parameter, as in odla_Gemm(a, /*A_transpose=*/0, ...).
static bool isBareLiteral(const Arg &a) {
  if (const Val *v = std::get_if<Val>(&a))
    return v->isNull();
  return std::holds_alternative<Flag>(a) || std::holds_alternative<int64_t>(a) ||
         std::holds_alternative<uint64_t>(a) || std::holds_alternative<float>(a) ||
         std::holds_alternative<U32s>(a) || std::holds_alternative<I32s>(a);
}

// `head` + `function(args)` + `tail` on one line when it fits in kLineWidth columns, else the
// arguments packed onto continuation lines indented four more.
void PrintSink::callLine(const std::string &head, const std::string &function,
                         const std::vector<std::string> &args, const std::string &tail) {
  constexpr size_t kLineWidth = 100;
  size_t indent = w_.indent() + static_cast<size_t>(depth_) * 2;
  std::string one = head + function + "(";
  for (size_t i = 0; i < args.size(); ++i)
    one += (i ? ", " : "") + args[i];
  one += ")" + tail;
  if (indent + one.size() <= kLineWidth) {
    line(one);
    return;
  }
  line(head + function + "(");
  const std::string pad(4, ' ');
  std::string cur;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string piece = args[i] + (i + 1 < args.size() ? "," : ")" + tail);
    if (!cur.empty() && indent + pad.size() + cur.size() + 1 + piece.size() > kLineWidth) {
      line(pad + cur);
      cur.clear();
    }
    cur += (cur.empty() ? "" : " ") + piece;
  }
  line(pad + cur);
}

std::vector<Val> PrintSink::emit(Call &call) {
  std::string fn = call.function;
  usesExtensions_ |= fn.rfind("odla_Ext", 0) == 0;
  typesInCall_ = shapesInCall_ = 0;
  // Control-flow bodies print one level deeper than the calls that bracket them:
  // odla_BeginIf, each odla_EnterBranchBody and odla_EndIf line up, as do odla_BeginLoop
  // and odla_EndLoop; the ops in between are indented.
  if (fn == "odla_EnterBranchBody" || fn == "odla_EndIf" || fn == "odla_EndLoop")
    --depth_;
  std::vector<std::string> args, params = call.paramNames();
  std::vector<std::string> resultIds;
  call_ = &call;
  ++callIndex_;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Arg &a = call.args[i];
    argIndex_ = static_cast<int>(i);
    bool named = isBareLiteral(a) && params.size() == call.args.size();
    args.push_back((named ? "/*" + params[i] + "=*/" : std::string()) + arg(a));
    if (const Id *id = std::get_if<Id>(&a))
      resultIds = {id->name};
    else if (const Ids *ids = std::get_if<Ids>(&a))
      resultIds = ids->names;
  }
  std::vector<Val> results;
  switch (call.returns) {
  case Returns::Status:
    callLine(checkMacro_ + "(", fn, args, ");");
    break;
  case Returns::Value: {
    assert(resultIds.size() == 1);
    std::string var = variables_.add(resultIds[0]);
    callLine("odla_value " + var + " = ", fn, args, ";");
    results.push_back(Val{static_cast<int>(vars_.size())});
    vars_.push_back(var);
    break;
  }
  case Returns::Values: {
    std::string group = variables_.add(resultIds.empty() ? "results" : resultIds[0] + "_all");
    callLine("odla_values " + group + " = ", fn, args, ";");
    for (size_t i = 0; i < resultIds.size(); ++i) {
      std::string var = variables_.add(resultIds[i]);
      line("odla_value " + var + " = " + group + ".values[" + std::to_string(i) + "];");
      results.push_back(Val{static_cast<int>(vars_.size())});
      vars_.push_back(var);
    }
    break;
  }
  }
  if (fn == "odla_BeginIf" || fn == "odla_EnterBranchBody" || fn == "odla_BeginLoop")
    ++depth_;
  return results;
}

} // namespace odlac
