// Builds a graph on the linked reference backend to read its memory plan.
#include "lower/ReferencePlan.h"

#include "lower/DirectSink.h"
#include "lower/Lowering.h"

#include <ODLA/odla_ext.h>

namespace odlac {

Expected<uint64_t> referenceArenaBytes(const Graph &g) {
  odla_computation comp = nullptr;
  if (odla_CreateComputation(&comp) != ODLA_SUCCESS)
    return Status::error("internal: the reference backend cannot create a computation");
  lower::DirectSink sink;
  lowerGraph(g, sink, [](const Value &c, size_t) { return lower::Data{c.data()->data, ""}; });
  odla_size_t bytes = 0;
  odla_status s = odla_ExtGetArenaBytes(comp, &bytes);
  odla_DestroyComputation(comp);
  if (!sink.firstError().empty() || s != ODLA_SUCCESS)
    return Status::error("internal: the reference backend rejects the lowered graph: " +
                         (sink.firstError().empty() ? "status " + std::to_string(s)
                                                    : sink.firstError()));
  return static_cast<uint64_t>(bytes);
}

} // namespace odlac
