#include "engine/manifest/key_material.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "base/private_key.h"
#include "base/redact.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {

std::vector<YamlNode> ScalarsHoldingKeys(const YamlTree& tree) {
  std::vector<YamlNode> out;
  for (const YamlNode& s : tree.Scalars()) {
    if (FindPrivateKey(s.Scalar()).found()) out.push_back(s);
  }
  return out;
}

bool MayHoldKey(const Value& v) {
  if (v.is_string())
    return v.get_ref<const std::string&>().find("PRIVATE KEY-----") != std::string::npos;
  if (v.is_structured()) return std::any_of(v.begin(), v.end(), MayHoldKey);
  return false;
}

void KeyPointers(const Value& v, const std::string& pointer, std::vector<std::string>& out) {
  if (v.is_string()) {
    if (FindPrivateKey(v.get_ref<const std::string&>()).found()) out.push_back(pointer);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) KeyPointers(v[i], pointer + "/" + std::to_string(i), out);
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      KeyPointers(*it, pointer + "/" + PointerToken(it.key()), out);
    }
  }
}

std::pair<int, int> NodeLines(SourceFiles& sources, const std::string& file, const YamlNode& node) {
  int first = node.Mark().line + 1;
  YamlMark end = node.EndMark();
  if (end.is_null()) return {first, std::numeric_limits<int>::max()};
  int last = end.line + 1;
  auto text = sources.Line(file, last);
  std::string_view before =
      text ? text->substr(0, std::min<size_t>(text->size(), std::max(end.column, 0))) : "";
  if (before.find_first_not_of(" \t-?") == std::string::npos) --last;
  return {first, std::max(first, last)};
}

void RedactNode(SourceFiles& sources, const std::string& file, const YamlNode& node) {
  if (!node.IsDefined() || node.Mark().is_null()) return;
  auto [first, last] = NodeLines(sources, file, node);
  sources.RedactLines(file, first, last);
}

void HideKeyScalars(SourceFiles& sources, const std::string& file,
                    const std::vector<YamlNode>& scalars) {
  for (const YamlNode& s : scalars) {
    RedactNode(sources, file, s);
    std::string_view value = s.Scalar();
    size_t start = 0;
    while (start < value.size()) {
      size_t nl = value.find('\n', start);
      std::string_view line = value.substr(start, nl == std::string_view::npos ? nl : nl - start);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      if (line.size() >= 8) RegisterSecret(line);
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
  }
}

bool RefuseKeyScalars(SourceFiles& sources, const std::string& file,
                      const std::vector<YamlNode>& scalars, std::vector<Diagnostic>& diags) {
  if (scalars.empty()) return false;
  HideKeyScalars(sources, file, scalars);
  AddError(diags, "private_key_material", "private key material in a manifest",
           NodeLoc(file, scalars[0]),
           "written with escapes, it is still a private key; only public keys belong in a stack, "
           "and the key is not shown. Remove it, and rotate it if it was ever committed");
  return true;
}

bool AddSourceRefusingKeys(SourceFiles& sources, const std::string& display,
                           const std::string& content, const SourceLocation* read_at,
                           std::vector<Diagnostic>& diags) {
  sources.Add(display, RedactPrivateKeys(content));
  PrivateKeyMatch m = FindPrivateKey(content);
  if (!m.found()) return true;
  std::string detail =
      "only public keys belong in a stack; the key is not shown. Remove it, and rotate it if it "
      "was "
      "ever committed";
  if (read_at) detail = "read by file() at " + LocationText(*read_at) + "; " + detail;
  AddError(diags, "private_key_material",
           read_at ? "private key material in a file read by file()"
                   : "private key material in a manifest",
           {display, m.line, m.column, m.length}, detail);
  return false;
}

}  // namespace cairn
