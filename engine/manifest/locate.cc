#include "engine/manifest/locate.h"

#include <charconv>

#include "engine/manifest/yaml_value.h"

namespace cairn {

std::string LocationText(const SourceLocation& l) {
  std::string out = l.file;
  if (l.has_position()) out += ":" + std::to_string(l.line) + ":" + std::to_string(l.column);
  return out;
}

std::string PointerToken(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

YamlNode ChildNode(const YamlNode& map, const std::string& key) {
  if (map.IsMap()) {
    for (auto it = map.pairs().begin(); it != map.pairs().end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
    }
  }
  return YamlNode();
}

SourceLocation KeyLoc(const std::string& file, const YamlNode& map, const std::string& key) {
  if (map.IsMap()) {
    for (auto it = map.pairs().begin(); it != map.pairs().end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) return NodeLoc(file, it->first);
    }
  }
  return NodeLoc(file, map);
}

std::pair<YamlNode, YamlNode> Descend(YamlNode base, const std::string& pointer) {
  YamlNode cur = base;
  YamlNode key_node;
  size_t pos = pointer.empty() ? std::string::npos : 1;
  while (pos != std::string::npos && pos <= pointer.size()) {
    size_t next = pointer.find('/', pos);
    std::string seg =
        pointer.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    std::string un;
    for (size_t i = 0; i < seg.size(); ++i) {
      if (seg[i] == '~' && i + 1 < seg.size()) {
        un += seg[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        un += seg[i];
      }
    }
    bool last = next == std::string::npos;
    YamlNode child;
    if (cur.IsMap()) {
      for (auto it = cur.pairs().begin(); it != cur.pairs().end(); ++it) {
        if (it->first.IsScalar() && it->first.Scalar() == un) {
          child = it->second;
          if (last) key_node = it->first;
          break;
        }
      }
    } else if (cur.IsSequence()) {
      size_t i = 0;
      auto [ptr, ec] = std::from_chars(un.data(), un.data() + un.size(), i);
      if (ec == std::errc() && ptr == un.data() + un.size() && i < cur.size()) child = cur[i];
    }
    if (!child.IsDefined()) break;
    cur = child;
    if (last) return {cur, key_node};
    pos = next + 1;
  }
  return {cur, YamlNode()};
}

SourceLocation Locate(const std::string& file, YamlNode base, const std::string& pointer,
                      bool at_key) {
  auto [node, key] = Descend(base, pointer);
  if (at_key && key.IsDefined()) return NodeLoc(file, key);
  return NodeLoc(file, node);
}

}  // namespace cairn
