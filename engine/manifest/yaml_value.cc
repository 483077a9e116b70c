#include "engine/manifest/yaml_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/schema/formats.h"

namespace cairn {
std::string ValidUtf8(const std::string& s) {
  if (std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return s;
  return Value::parse(Value(s).dump(-1, ' ', false, Value::error_handler_t::replace))
      .get<std::string>();
}

// Plain (unquoted) YAML scalars take YAML 1.2 core schema types.
Value PlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  char c0 = s[0];
  if (std::isdigit(static_cast<unsigned char>(c0)) || c0 == '-' || c0 == '+' || c0 == '.') {
    const char* p = (c0 == '+') ? b + 1 : b;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
      long long n = 0;
      auto [ptr, ec] = std::from_chars(b + 2, e, n, s[1] == 'x' ? 16 : 8);
      if (ec == std::errc() && ptr == e) return n;
      return s;
    }
    long long n = 0;
    auto [ptr, ec] = std::from_chars(p, e, n);
    if (ec == std::errc() && ptr == e) return n;
    bool numeric_shape = std::all_of(p, e, [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
             c == '-' || c == '+';
    });
    if (numeric_shape &&
        std::any_of(p, e, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      double d = 0;
      auto [dptr, dec] = std::from_chars(p, e, d);
      if (dec == std::errc() && dptr == e && std::isfinite(d)) return d;
    }
  }
  return s;
}

SourceLocation NodeLoc(const std::string& file, const YamlNode& n) {
  SourceLocation l;
  l.file = file;
  if (!n.IsDefined()) return l;
  YamlMark m = n.Mark();
  if (m.is_null() || m.line < 0) return l;
  l.line = m.line + 1;
  l.column = m.column + 1;
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (!s.empty() && s.find('\n') == std::string::npos && s.size() < 200) {
      l.length = static_cast<int>(s.size()) + (n.quoted() ? 2 : 0);
    }
  }
  return l;
}

Value YamlToValue(const std::string& file, const YamlNode& n, int depth, size_t& budget,
                  std::vector<Diagnostic>& out) {
  if (++budget > kMaxNodesPerDocument) {
    if (budget == kMaxNodesPerDocument + 1) {
      AddError(out, "document_too_large",
               "document has more than " + std::to_string(kMaxNodesPerDocument) + " nodes",
               NodeLoc(file, n),
               "aliases may expand it; write the values out or split the document");
    }
    return nullptr;
  }
  if (depth > kMaxYamlDepth) {
    AddError(out, "document_too_deep",
             "document nests deeper than " + std::to_string(kMaxYamlDepth) + " levels",
             NodeLoc(file, n));
    budget = kMaxNodesPerDocument + 2;
    return nullptr;
  }
  switch (n.type()) {
    case YamlNode::Type::kScalar:
      if (!IsValidUtf8(n.Scalar())) {
        AddError(out, "invalid_utf8", "text is not valid UTF-8", NodeLoc(file, n),
                 "manifests are UTF-8; save the file in that encoding");
        return ValidUtf8(n.Scalar());
      }
      if (n.quoted()) return n.Scalar();
      return PlainScalar(n.Scalar());
    case YamlNode::Type::kSequence: {
      Value arr = Value::array();
      for (const auto& item : n.items())
        arr.push_back(YamlToValue(file, item, depth + 1, budget, out));
      return arr;
    }
    case YamlNode::Type::kMap: {
      Value obj = Value::object();
      for (const auto& [key_node, value_node] : n.pairs()) {
        if (!key_node.IsScalar()) {
          AddError(out, "invalid_key", "mapping keys must be plain strings",
                   NodeLoc(file, key_node));
          continue;
        }
        if (!IsValidUtf8(key_node.Scalar())) {
          AddError(out, "invalid_utf8", "text is not valid UTF-8", NodeLoc(file, key_node),
                   "manifests are UTF-8; save the file in that encoding");
          continue;
        }
        const std::string& key = key_node.Scalar();
        if (obj.contains(key)) {
          AddError(out, "duplicate_key", "key \"" + key + "\" appears twice in the same mapping",
                   NodeLoc(file, key_node));
          continue;
        }
        obj[key] = YamlToValue(file, value_node, depth + 1, budget, out);
      }
      return obj;
    }
    default:
      return nullptr;
  }
}

}  // namespace cairn
