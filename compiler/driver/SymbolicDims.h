// Symbolic dims (--dim NAME=MAX): how the ODLA calls that record a model depend on the sizes
// its inputs take at run time, found by compiling the model at several sizes.
//
// odlac compiles every graph at fixed shapes, and the generated code records the model with
// ODLA calls whose shapes, axes, slice bounds and small shape constants are numbers. With
// symbolic dims the code builds the computation again for each run's dims (NAME_run_shaped),
// so each such number must become an expression of the dims. They are found without a
// symbolic shape algebra: the model is imported, optimized and lowered at the largest dims and
// at each corner of a box one below them (2^k compiles for k dims that vary), each number that
// differs is the multilinear polynomial of the dims through those values (the sum of
// products of the dims that covers N*T as well as T + 1), and one more compile at the middle
// of every range checks each polynomial where it was not fitted. The calls must otherwise be
// the same at every size: the same functions, operands, names, floats and constants (a
// constant folded from a symbolic dim, such as a mask of T x T, has data that no polynomial
// gives: such a value is computed by the generated code instead). Anything else is refused
// with the call, the value it makes and the numbers seen.
#pragma once

#include "Codegen.h"
#include "Options.h"
#include "ir/Graph.h"
#include "passes/Pass.h"
#include "support/Status.h"

namespace odlac {

// `bound` is the model as compiled at the largest dims (opts.import.dimValues); the others
// are compiled from opts.model with the same options and `ctx`. A constant folded from a value
// whose data differs between sizes (a mask of T x T) is left to the generated code instead
// (PassContext::keepComputed), and every size compiled again: `bound` is then replaced. The
// result names the dims in opts.dims' order, each with its NAME_dims field.
Expected<SymbolicCalls> probeSymbolicDims(const Options &opts, std::unique_ptr<Graph> &bound,
                                          PassContext ctx);

// The polynomial's value at `dims` (one per SymbolicCalls::dims).
int64_t evaluate(const DimPolynomial &p, const std::vector<int64_t> &dims);

} // namespace odlac
