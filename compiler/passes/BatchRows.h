// Analysis for --dynamic-batch: whether the graph keeps the rows of its batch apart, so that a
// backend may run any batch by running the plan, compiled for B rows, over slices of B rows
// of the inputs and outputs (the backend feature runtime_shapes; docs/backends.md).
//
// Every graph input carries the batch as its leading dim. A value computed from an input is
// "batched": its leading dim is the batch and row i depends only on row i of the inputs. A
// value computed from constants alone is not. Each node with a batched operand must have a
// rule showing that its result is batched again (rules are data, in BatchRows.cpp: by fusion
// class for elementwise and broadcasting ops, by op for the others, each with the condition
// and why). Every graph output must be batched. A node without a rule, or that breaks its
// rule, is reported with its name, op and the rule, all in one Status.
#pragma once

#include "ir/Graph.h"
#include "support/Status.h"

#include <cstdint>

namespace odlac {

// `batch` is the leading dim `g` was imported with (B); `next` is the same model imported and
// optimized at B + 1 rows. Folding turns what a model computes from its batch size (a Shape
// of the input) into constants and attributes; comparing the two graphs finds those that
// depend on it (an arange over the batch, the batch size as a number), which would be wrong
// at any other batch: the graphs must match node for node, with equal constants, and every
// value's dims must be equal or differ only in a batched value's leading dim.
Status checkBatchRows(const Graph &g, const Graph &next, int64_t batch);

} // namespace odlac
