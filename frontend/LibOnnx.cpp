// libonnx's checker and version converter, each in a child process (see LibOnnx.h).
#include "LibOnnx.h"

#include "Schema.h"
#include "Tensor.h"

#include <onnx/checker.h>
#include <onnx/common/version.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <cctype>
#include <climits>

namespace odlac {
namespace {

// libonnx's messages span lines ("...\n\n==> Context: ..."); a diagnostic is one line, and
// what the model names in it (node names) must not forge more lines.
std::string oneLine(const std::string &text) {
  constexpr size_t kMaxChars = 400;
  std::string line;
  for (char ch : text) {
    bool space = std::isspace(static_cast<unsigned char>(ch)) ||
                 std::iscntrl(static_cast<unsigned char>(ch));
    if (space && (line.empty() || line.back() == ' '))
      continue;
    line += space ? ' ' : ch;
  }
  while (!line.empty() && line.back() == ' ')
    line.pop_back();
  if (line.size() > kMaxChars)
    line = line.substr(0, kMaxChars) + "...";
  return line;
}

} // namespace

std::string libonnxName() { return std::string("libonnx ") + onnx::LAST_RELEASE_VERSION; }

bool libonnxKnows(const onnx::ModelProto &m) {
  if (m.ir_version() > onnx::IR_VERSION)
    return false;
  const auto &known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const onnx::OperatorSetIdProto &os : m.opset_import()) {
    auto it = known.find(canonicalDomain(os.domain()));
    if (it != known.end() && os.version() > it->second.second)
      return false;
  }
  return true;
}

std::optional<std::string> libonnxCheckerComplaint(const onnx::ModelProto &m,
                                                   const std::string &path,
                                                   const ChildLimits &limits) {
  if (!libonnxKnows(m))
    return std::nullopt;
  auto verdict = runInChild(
      [&]() -> Expected<std::string> {
        // The path form re-reads the file so that the checker resolves external data beside
        // the model; a model without external data is checked as already parsed.
        // A verdict is the checker's ValidationError; anything else (bad_alloc, a crash)
        // means it gave none.
        try {
          if (usesExternalData(m))
            onnx::checker::check_model(path);
          else
            onnx::checker::check_model(m);
        } catch (const onnx::checker::ValidationError &e) {
          return std::string(e.what());
        }
        return std::string();
      },
      limits);
  if (!verdict)
    return libonnxName() + "'s ONNX checker gave no verdict on the model (" +
           oneLine(verdict.status().message()) + ")";
  if (verdict->empty())
    return std::nullopt;
  return libonnxName() + "'s ONNX checker rejects the model: " + oneLine(*verdict);
}

Expected<onnx::ModelProto> upgradeWithLibonnx(const onnx::ModelProto &m, int64_t to,
                                              const ChildLimits &limits, bool *timedOut) {
  auto bytes = runInChild(
      [&]() -> Expected<std::string> {
        onnx::ModelProto inferred = m;
        onnx::shape_inference::InferShapes(inferred);
        onnx::ModelProto upgraded = onnx::version_conversion::ConvertVersion(inferred, to);
        std::string out;
        if (!upgraded.SerializeToString(&out))
          return Status::error("the upgraded model does not serialize (over 2 GB?)");
        return out;
      },
      limits, timedOut);
  if (!bytes)
    return Status::error(oneLine(bytes.status().message()));
  onnx::ModelProto upgraded;
  if (bytes->size() > static_cast<size_t>(INT_MAX) ||
      !upgraded.ParseFromArray(bytes->data(), static_cast<int>(bytes->size())))
    return Status::error("its output is not a model");
  return upgraded;
}

} // namespace odlac
