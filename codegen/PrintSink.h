// The sink that prints each ODLA call as one line of C (DESIGN §6): results are local
// variables named after the model's tensors, value ids are the tensor names.
#pragma once

#include "CWriter.h"
#include "Codegen.h"
#include "lower/OdlaSink.h"

#include <map>
#include <string>
#include <vector>

namespace odlac {

// How generated code writes value ids: string literals of the tensor names, or, for a backend
// that indexes a table with them (the manifest's `value_ids integers N`), the numbers 1, 2,
// ... in the order the names first appear.
class ValueIds {
public:
  explicit ValueIds(bool integers) : integers_(integers) {}
  std::string literal(const std::string &name);

private:
  bool integers_;
  std::map<std::string, int64_t> numbers_;
};

class PrintSink : public lower::OdlaSink {
public:
  // `checkMacro` wraps status-returning calls, e.g. NET_CHECK(odla_SetValueAsOutput(y));
  // `prefix` is the model's (--name): variables never take the names of its symbols; `ids`
  // writes the value ids.
  PrintSink(CWriter &w, std::string checkMacro, const std::string &prefix, ValueIds &ids)
      : w_(w), checkMacro_(std::move(checkMacro)), prefix_(prefix), variables_(prefix), ids_(ids) {}
  // Whether any printed argument needs <math.h> (HUGE_VALF, NAN).
  bool usesMath() const { return usesMath_; }
  // Whether any call is an extension function (odla_Ext...), which needs <ODLA/odla_ext.h>.
  bool usesExtensions() const { return usesExtensions_; }
  // How many value types and shapes one call takes at most: PREFIX_type and PREFIX_shape
  // (shapeHelpers) build them into the function's locals types_[] and shapes_[] (shapeLocals).
  int typeSlots() const { return typeSlots_; }
  int shapeSlots() const { return shapeSlots_; }
  // --dim: prints the numbers that depend on the symbolic dims as expressions of the fields
  // of `*dims_` (a const NAME_dims *), the small integer constants among them from the arrays
  // sd_->i64 and sd_->i32 (a NAME_shape_data_ *), filled before the call that makes the
  // constant, and a constant that is a leading block of its data at the largest dims from
  // that data (its first rows) or from sd_->blocks, where NAME_sub_block_ copies the block.
  void setSymbolic(const SymbolicCalls *symbolic) { symbolic_ = symbolic; }
  // How many elements of each array the printed calls fill, and whether they copy blocks.
  int shapeI64() const { return shapeI64_; }
  int shapeI32() const { return shapeI32_; }
  uint64_t blockBytes() const { return blockBytes_; }
  // Prints `(void)var;` so that -Wunused-variable stays quiet about a value nothing reads.
  void markUnused(lower::Val v) override {
    if (!v.isNull())
      line("(void)" + vars_[v.index] + ";");
  }

protected:
  std::vector<lower::Val> emit(lower::Call &call) override;
  // For sinks that print more lines about values (InterpretSink).
  const std::string &variableOf(lower::Val v) const { return vars_[v.index]; }
  void printLine(const std::string &text) { line(text); }
  ValueIds &ids() { return ids_; }

private:
  std::string arg(const lower::Arg &a);
  // Element `e` of the argument being printed: its literal, or the expression of the dims.
  std::string number(int e, const std::string &literal, const char *cast = "");
  const DimPolynomial *symbolicAt(int e) const;
  bool symbolicArg() const; // whether any element of the argument being printed is symbolic
  std::string shapeArgs(const lower::Shape &s);
  std::string symbolicData(const lower::Data &d);
  std::string subBlock(const lower::Data &d);
  std::string typeName(odla_element_type t);
  std::string customParams(const lower::CustomParams &p);
  // Prints one line, indented by how deep it sits in if/loop regions.
  void line(const std::string &text);
  void callLine(const std::string &head, const std::string &function,
                const std::vector<std::string> &args, const std::string &tail);

  CWriter &w_;
  std::string checkMacro_, prefix_;
  std::vector<std::string> vars_; // C variable of each Val
  CScope variables_;
  ValueIds &ids_;
  int depth_ = 0; // open odla_BeginIf / odla_BeginLoop regions
  bool usesMath_ = false;
  bool usesExtensions_ = false;
  int typesInCall_ = 0, shapesInCall_ = 0; // slots the call being printed took
  int typeSlots_ = 0, shapeSlots_ = 0;
  const SymbolicCalls *symbolic_ = nullptr;
  const lower::Call *call_ = nullptr; // the call being printed, its index and argument's
  int callIndex_ = -1, argIndex_ = 0;
  int shapeI64_ = 0, shapeI32_ = 0;
  uint64_t blockBytes_ = 0;
};

// A polynomial of the symbolic dims as C: the fields of `*dims_` (odla_int64).
std::string dimExpression(const DimPolynomial &p, const SymbolicCalls &s);

// The static functions PREFIX_shape(&shapes_[k], rank, dims...) and PREFIX_type(&types_[k],
// element type, rank, dims...) that fill a slot of the calling function's locals and return
// it, so that a call passes *PREFIX_type(...) by value (dims as long long). A compound literal
// (odla_value_type){...} at block scope, or a function's struct result, would take its own
// bytes of the build function's stack frame, which GCC does not share between statements:
// the frame grew with the model (21.6 KB for MobileNetV1 0.25's), where the slots take a few
// hundred bytes whatever its size. A call's k-th type (shape) takes slot k. Writes the ones
// the calls use: types, shapes, or neither.
void shapeHelpers(CWriter &w, const std::string &prefix, bool types, bool shapes);
// The declarations of a function's slots, as the first lines of its body (indented `indent`).
std::string shapeLocals(int typeSlots, int shapeSlots, const std::string &indent);

} // namespace odlac
