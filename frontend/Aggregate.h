// Sequences and optionals as the frontend holds them: compile-time structures over IR tensor
// values. They never reach the IR or ODLA (ODLA values are tensors only): a sequence is an
// ordered list of IR values whose length is known at import, an optional is absent or holds
// one tensor or one sequence. Sequence and optional ops are resolved on these at import
// (rules/Sequence.cpp); a graph input or output of these kinds is flattened into one tensor
// of the generated API per element (Importer.cpp, docs/cli.md's --sequence-length).
#pragma once

#include "ir/Graph.h"

#include <optional>
#include <string>
#include <vector>

namespace odlac {

struct Aggregate {
  enum class Kind { Sequence, Optional };
  Kind kind = Kind::Sequence;
  // A sequence's elements; an optional's value: nothing when absent, else one tensor, or the
  // elements of the sequence it holds when `ofSequence`.
  std::vector<Value *> elements;
  bool present = false;    // optionals: whether it holds a value
  bool ofSequence = false; // optionals: the value is a sequence
  // The element type when known without an element (SequenceEmpty's dtype, a declared type).
  std::optional<DType> elemType;

  static Aggregate sequence(std::vector<Value *> elements, std::optional<DType> elemType = {}) {
    Aggregate a;
    a.elements = std::move(elements);
    a.elemType = elemType;
    return a;
  }
  static Aggregate optional(bool present, bool ofSequence, std::vector<Value *> elements = {}) {
    Aggregate a;
    a.kind = Kind::Optional;
    a.present = present;
    a.ofSequence = ofSequence;
    a.elements = std::move(elements);
    return a;
  }
  bool isSequence() const { return kind == Kind::Sequence; }
  // "a sequence of 3", "an absent optional", ... for messages.
  std::string describe() const {
    if (isSequence())
      return "a sequence of " + std::to_string(elements.size());
    if (!present)
      return std::string("an absent optional ") + (ofSequence ? "sequence" : "tensor");
    return ofSequence ? "an optional holding a sequence of " + std::to_string(elements.size())
                      : std::string("an optional holding a tensor");
  }
};

// A value as an ONNX node sees it: a tensor, or a sequence or optional (absent: neither).
struct Operand {
  Value *tensor = nullptr;
  std::optional<Aggregate> aggregate;
  bool absent() const { return !tensor && !aggregate; }
};

} // namespace odlac
