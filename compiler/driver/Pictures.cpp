#include "Pictures.h"

#include "OutputDir.h"
#include "ir/Printer.h"
#include "ops/OpDef.h"
#include "support/Text.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace odlac {
namespace {

// Labels stay readable: a longer name or attribute value is cut, saying so.
constexpr size_t kTextLimit = 60;
constexpr int kConstantsShown = 4;

std::string cut(const std::string &s) {
  return s.size() <= kTextLimit ? s : s.substr(0, kTextLimit) + "...";
}

// Text for a DOT quoted string: printable() first (controls and invisible characters as
// \xHH), then DOT's own escapes, so that a name can neither end the string nor start one of
// DOT's label escapes (\N, \G, \l...). Lines are joined by `\n` by the callers.
std::string dotText(const std::string &s) {
  std::string out;
  for (char ch : printable(cut(s))) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    out += ch;
  }
  return out;
}

std::string xmlText(const std::string &s) {
  std::string out;
  for (char ch : printable(s)) {
    switch (ch) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      out += ch;
    }
  }
  return out;
}

std::string bytesText(uint64_t b) {
  char buf[32];
  if (b >= 10 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
  else if (b >= 10 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  return buf;
}

} // namespace

std::string graphDot(const Graph &g, const MemoryPlan &plan) {
  std::map<std::string, const MemoryPlanEntry *> placed;
  for (const MemoryPlanEntry &e : plan.entries)
    placed.emplace(e.name, &e);
  std::map<const Value *, std::string> producers; // the DOT node that makes each value
  std::ostringstream o;
  o << "digraph \"" << dotText(g.name()) << "\" {\n"
    << "  graph [rankdir=TB, fontname=\"Helvetica\", labelloc=t, label=\"" << dotText(g.name())
    << " (arena " << bytesText(plan.arenaBytes) << ")\"];\n"
    << "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#e8eefc\", "
       "fontname=\"Helvetica\", fontsize=10];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n";
  int k = 0;
  for (const Value *in : g.inputs()) {
    std::string id = "in" + std::to_string(k++);
    producers[in] = id;
    o << "  " << id << " [shape=ellipse, fillcolor=\"#dff3df\", label=\"" << dotText(in->name())
      << "\\n"
      << dotText(toString(in->type())) << "\"];\n";
  }
  k = 0;
  for (const Node *n : g.nodes()) {
    std::string id = "n" + std::to_string(k++);
    for (const Value *out : n->outputs())
      producers[out] = id;
    std::string label = dotText(n->op().name) + "\\n" + dotText(n->name());
    for (const auto &[name, value] : n->attrs())
      label += "\\n" + dotText(name + " = " + attrText(value));
    int constants = 0;
    for (const Value *in : n->inputs())
      if (in && in->isConstant() && constants++ < kConstantsShown)
        label += "\\n" + dotText(in->name() + ": " + toString(in->type()));
    if (constants > kConstantsShown)
      label += "\\n+" + std::to_string(constants - kConstantsShown) + " constants";
    o << "  " << id << " [label=\"" << label << "\"];\n";
  }
  // Edges: each use of a computed value, labeled once per value with its type and arena place.
  auto edgeLabel = [&](const Value *v) {
    std::string label = dotText(toString(v->type()));
    auto p = placed.find(v->name());
    if (p != placed.end())
      label +=
          "\\n@" + std::to_string(p->second->offset) + " (" + bytesText(p->second->bytes) + ")";
    return label;
  };
  k = 0;
  for (const Node *n : g.nodes()) {
    std::string id = "n" + std::to_string(k++);
    for (const Value *in : n->inputs()) {
      auto from = in ? producers.find(in) : producers.end();
      if (from != producers.end())
        o << "  " << from->second << " -> " << id << " [label=\"" << edgeLabel(in) << "\"];\n";
    }
  }
  k = 0;
  for (const Value *out : g.outputs()) {
    std::string id = "out" + std::to_string(k++);
    o << "  " << id << " [shape=ellipse, fillcolor=\"#fbe3cf\", label=\"" << dotText(out->name())
      << "\\n"
      << dotText(toString(out->type())) << "\"];\n";
    auto from = producers.find(out);
    if (from != producers.end())
      o << "  " << from->second << " -> " << id << " [label=\"" << edgeLabel(out) << "\"];\n";
  }
  o << "}\n";
  return o.str();
}

std::string memoryPlanSvg(const MemoryPlan &plan, const std::string &title) {
  // x: node index (a column of 4 to 48 pixels a node, about 960 pixels in all), y: offset
  // (the arena kHeight pixels high, at least kMinBox a buffer), offset 0 at the bottom.
  constexpr double kHeight = 480, kLeft = 90, kTop = 40, kMinBox = 1;
  const int nodes = plan.numNodes > 0 ? plan.numNodes : 1;
  const double kColumn = std::max(4.0, std::min(48.0, 960.0 / nodes));
  const double arena = plan.arenaBytes > 0 ? static_cast<double>(plan.arenaBytes) : 1;
  const double width = std::max(640.0, kLeft + nodes * kColumn + 20), height = kTop + kHeight + 50;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"Helvetica, sans-serif\" font-size=\"11\">\n"
    << "<title>" << xmlText(title) << "</title>\n"
    << "<text x=\"" << kLeft << "\" y=\"20\" font-size=\"13\">" << xmlText(title)
    << ": activation arena " << plan.arenaBytes << " bytes, " << plan.entries.size()
    << " buffers over " << plan.numNodes << " nodes</text>\n"
    << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << nodes * kColumn
    << "\" height=\"" << kHeight << "\" fill=\"#f7f7f7\" stroke=\"#999999\"/>\n";
  static const char *kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                  "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};
  size_t i = 0;
  for (const MemoryPlanEntry &e : plan.entries) {
    const double x = kLeft + e.firstNode * kColumn,
                 w = (e.lastNode - e.firstNode + 1) * kColumn - 2;
    double h = e.bytes / arena * kHeight;
    if (h < kMinBox)
      h = kMinBox;
    const double y = kTop + kHeight - (e.offset / arena * kHeight) - h;
    o << "<rect x=\"" << x + 1 << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h
      << "\" fill=\"" << kColors[i++ % 8] << "\" fill-opacity=\"0.8\" stroke=\"#333333\" "
      << "stroke-width=\"0.5\"><title>" << xmlText(e.name) << ": " << e.bytes << " bytes at offset "
      << e.offset << ", nodes " << e.firstNode << " to " << e.lastNode << "</title></rect>\n";
  }
  o << "<text x=\"" << kLeft - 6 << "\" y=\"" << kTop + kHeight
    << "\" text-anchor=\"end\">0</text>\n"
    << "<text x=\"" << kLeft - 6 << "\" y=\"" << kTop + 10 << "\" text-anchor=\"end\">"
    << plan.arenaBytes << "</text>\n"
    << "<text x=\"" << kLeft << "\" y=\"" << kTop + kHeight + 18 << "\">node 0</text>\n"
    << "<text x=\"" << kLeft + nodes * kColumn << "\" y=\"" << kTop + kHeight + 18
    << "\" text-anchor=\"end\">node " << nodes - 1 << "</text>\n"
    << "<text x=\"" << kLeft << "\" y=\"" << kTop + kHeight + 36
    << "\" fill=\"#555555\">offset (bytes, up) over execution order (nodes, across); hover a "
       "buffer for its value</text>\n"
    << "</svg>\n";
  return o.str();
}

Status writeGraphPicture(const std::string &path, const std::string &dot) {
  if (path.size() < 4 || path.compare(path.size() - 4, 4, ".svg") != 0)
    return writeFileAtomically(path, dot);
  // Graphviz reads the DOT from a file and writes the SVG into a private temporary folder; the
  // SVG then moves into place like every other output.
  const char *tmp = std::getenv("TMPDIR");
  std::string folder = std::string(tmp && *tmp ? tmp : "/tmp") + "/odlac-dot-XXXXXX";
  if (!mkdtemp(folder.data()))
    return Status::error(path + ": cannot create a temporary folder: " + std::strerror(errno));
  const std::string source = folder + "/graph.dot", svg = folder + "/graph.svg";
  Status s = writeFileAtomically(source, dot);
  if (!s) {
    int status = runChild(folder, {"dot", "-Tsvg", "-o", svg, source});
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      s = Status::error(path + ": Graphviz's dot " +
                        (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 127
                             ? std::string("is not installed (Debian: graphviz); ") +
                                   "--dump-graph=FILE.dot writes the source it draws"
                             : std::string("failed to draw the graph")));
  }
  std::string drawn;
  if (!s) {
    std::ifstream in(svg, std::ios::binary);
    std::ostringstream b;
    b << in.rdbuf();
    drawn = b.str();
  }
  unlink(source.c_str());
  unlink(svg.c_str());
  rmdir(folder.c_str());
  return s ? s : writeFileAtomically(path, drawn);
}

} // namespace odlac
