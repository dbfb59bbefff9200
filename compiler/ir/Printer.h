// The IR's text form, for --print-ir and pass tests:
//
//   graph @digits(%input: f32[1,1,8,8]) {
//     const %w: f32[8,1,3,3] = <288 bytes>
//     const %s: f32[] = dense<[0.0625]>
//     %c = Conv(%input, %w, none) {dilations = [1,1], group = 1, pads = [1,1,1,1], strides = [1,1]}
//     : f32[1,8,8,8] return %out
//   }
//
// A node with subgraphs (If, Loop) prints each after its result types, indented, as
// `name = graph @name(...) { ... }`; bodies have their own value names.
//
// Names that are not plain identifiers are quoted (%"conv1/Conv_output_0"). Constants of at
// most `denseLimit` elements print their values; larger ones print their size.
#pragma once

#include "ir/Graph.h"

#include <string>

namespace odlac {

std::string printGraph(const Graph &g, size_t denseLimit = 16);
// An attribute value as printGraph writes it: 3, 0.5, "text" (escaped), [1,2].
std::string attrText(const AttrValue &v);

} // namespace odlac
