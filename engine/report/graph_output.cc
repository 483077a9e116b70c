#include "engine/report/graph_output.h"

#include <algorithm>
#include <map>

#include "base/value.h"

namespace cairn {
namespace {

// A qualitative palette (ColorBrewer Set3), light enough for black text.
const char* const kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};

std::string DotQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

namespace {

// The resources of `config` by the module instance they are declared in
// (the stack's own under the empty path), each list in the stack's order.
using ByModule = std::map<std::vector<ModuleStep>, std::vector<const ResourceConfig*>,
                          bool (*)(const std::vector<ModuleStep>&, const std::vector<ModuleStep>&)>;

bool PathLess(const std::vector<ModuleStep>& a, const std::vector<ModuleStep>& b) {
  return ModulePathPrefix(a) < ModulePathPrefix(b);
}

// Emits the nodes declared at module path `path` and, for each module
// instance under it, a cluster holding that instance's nodes in turn.
void DotNodes(const ByModule& by_module, const std::vector<std::string>& kinds,
              const std::vector<ModuleStep>& path, const std::string& indent, std::string& out) {
  std::vector<std::vector<ModuleStep>> children;
  for (const auto& [m, resources] : by_module) {
    if (m.size() <= path.size() || !std::equal(path.begin(), path.end(), m.begin())) continue;
    std::vector<ModuleStep> child(m.begin(), m.begin() + static_cast<long>(path.size()) + 1);
    if (std::find(children.begin(), children.end(), child) == children.end())
      children.push_back(std::move(child));
  }
  if (auto own = by_module.find(path); own != by_module.end()) {
    for (const ResourceConfig* r : own->second) {
      auto it = std::find(kinds.begin(), kinds.end(), r->kind);
      size_t color =
          it == kinds.end() ? 8 : static_cast<size_t>(it - kinds.begin()) % std::size(kPalette);
      std::string addr = r->address.ToString();
      out += indent + DotQuote(addr) + " [label=" + DotQuote(addr) + ", fillcolor=\"" +
             kPalette[color] + "\"];\n";
    }
  }
  for (const auto& child : children) {
    std::string name = ModulePathPrefix(child);
    name.pop_back();  // the trailing "."
    out += indent + "subgraph " + DotQuote("cluster_" + name) + " {\n";
    out += indent + "  label=" + DotQuote(name) + ";\n";
    out += indent + "  style=\"rounded,dashed\";\n";
    out += indent + "  color=\"#888888\";\n";
    DotNodes(by_module, kinds, child, indent + "  ", out);
    out += indent + "}\n";
  }
}

}  // namespace

std::string GraphToDot(const StackConfig& config, const std::vector<std::string>& kinds) {
  std::string out = "digraph cairn {\n";
  out += "  rankdir=LR;\n";
  out +=
      "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
      "fillcolor=\"#ffffff\"];\n";
  out += "  edge [color=\"#555555\"];\n";
  ByModule by_module(PathLess);
  for (const auto& r : config.resources) by_module[r.address.module].push_back(&r);
  DotNodes(by_module, kinds, {}, "  ", out);
  for (const auto& r : config.resources) {
    for (const auto& dep : r.depends_on) {
      out += "  " + DotQuote(r.address.ToString()) + " -> " + DotQuote(dep.ToString()) + ";\n";
    }
  }
  out += "}\n";
  return out;
}

std::string GraphToJson(const StackConfig& config) {
  Value nodes = Value::array();
  Value edges = Value::array();
  Value order = Value::array();
  for (const auto& r : config.resources) {
    Value n = {{"address", r.address.ToString()}, {"kind", r.kind}, {"name", r.address.name}};
    if (const int* i = std::get_if<int>(&r.address.index)) n["index"] = *i;
    if (const std::string* k = std::get_if<std::string>(&r.address.index)) n["index"] = *k;
    if (!r.address.module.empty()) {
      std::string module = ModulePathPrefix(r.address.module);
      module.pop_back();
      n["module"] = module;
    }
    nodes.push_back(std::move(n));
    order.push_back(r.address.ToString());
    for (const auto& dep : r.depends_on) {
      edges.push_back({{"from", r.address.ToString()}, {"to", dep.ToString()}});
    }
  }
  Value out = {
      {"nodes", std::move(nodes)}, {"edges", std::move(edges)}, {"order", std::move(order)}};
  return out.dump(2, ' ', false, Value::error_handler_t::replace) + "\n";
}

}  // namespace cairn
