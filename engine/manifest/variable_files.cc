#include "engine/manifest/variable_files.h"

#include <algorithm>
#include <filesystem>

#include "base/env.h"
#include "base/redact.h"
#include "engine/manifest/key_material.h"
#include "engine/manifest/loader.h"
#include "engine/manifest/read_files.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {

namespace fs = std::filesystem;

std::vector<VariableFileEntry> ReadVariableFile(const Env& env, const std::string& path,
                                                const std::map<std::string, VariableDecl>& decls,
                                                SourceFiles& sources,
                                                std::vector<Diagnostic>& diags) {
  std::vector<VariableFileEntry> out;
  auto text = env.ReadFile(path, kMaxManifestFileBytes);
  if (!text.ok()) {
    AddUnreadable(diags, "cannot read variable file " + path, text.status(), {}, "");
    return out;
  }
  std::string display = fs::path(path).lexically_normal().string();
  if (!AddSourceRefusingKeys(sources, display, *text, nullptr, diags)) return out;
  // Bad bytes and syntax errors are reported where they are; a file holding
  // key material in a scalar is refused whole.
  auto tree = YamlTree::Parse(*text);
  AddTextDiagnostics(display, *tree, diags, *text);
  if (RefuseKeyScalars(sources, display, ScalarsHoldingKeys(*tree), diags)) return out;
  for (const auto& node : tree->documents) {
    if (node.IsNull()) continue;
    if (!node.IsMap()) {
      AddError(diags, "invalid_document",
               "a variable file must be a mapping of variable names to values",
               NodeLoc(display, node));
      continue;
    }
    for (auto it = node.pairs().begin(); it != node.pairs().end(); ++it) {
      std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      size_t budget = 0;
      auto decl = decls.find(name);
      Value v = decl != decls.end() ? YamlToValue(display, it->second, 0, budget, diags) : Value();
      if (decl != decls.end() && decl->second.sensitive)
        HideValueText(sources, display, it->second);
      out.push_back({std::move(name), std::move(v), NodeLoc(display, it->first),
                     NodeLoc(display, it->second)});
    }
  }
  return out;
}

void HideValueText(SourceFiles& sources, const std::string& file, const YamlNode& value) {
  if (!value.IsDefined() || value.Mark().is_null()) return;
  auto [first, last] = NodeLines(sources, file, value);
  std::vector<std::string> lines;
  for (int n = 1;; ++n) {
    auto line = sources.Line(file, n);
    if (!line) break;
    std::string text(*line);
    if (n == first) {
      size_t col = std::min<size_t>(static_cast<size_t>(value.Mark().column), text.size());
      text = text.substr(0, col) + std::string(kRedacted);
    } else if (n > first && n <= last) {
      size_t indent = text.find_first_not_of(" \t");
      text = (indent == std::string::npos ? text : text.substr(0, indent)) + std::string(kRedacted);
    }
    lines.push_back(std::move(text));
  }
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  sources.Add(file, std::move(text));
}

}  // namespace cairn
