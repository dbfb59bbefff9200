// Attribute values of IR nodes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace odlac {

enum class AttrKind { Int, Float, String, Ints, Floats, Strings };

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>>;

inline AttrKind attrKind(const AttrValue &v) { return static_cast<AttrKind>(v.index()); }
const char *attrKindName(AttrKind k);

// Attributes by name; std::map keeps printing order stable.
using AttrMap = std::map<std::string, AttrValue>;

} // namespace odlac
