// Writing the generated files so that a failure leaves nothing behind: files are written
// into a temporary folder beside the destination and moved into place only when all of
// them are complete.
#pragma once

#include "Codegen.h"
#include "support/Status.h"

#include <string>
#include <vector>

namespace odlac {

Status writeOutputs(const std::string &dir, const std::vector<GeneratedFile> &files);

} // namespace odlac
