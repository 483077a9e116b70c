#include "engine/manifest/format.h"

#include <regex>
#include <vector>

#include "engine/manifest/yaml_tree.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

size_t IndentOf(const std::string& line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}

bool IsBlank(const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; }

// The node trees of two parses are the same: types, scalars (and whether
// quoted), keys in order. Bounded, since aliases may make cycles.
bool SameNode(const YamlNode& a, const YamlNode& b, int depth) {
  if (depth > 256) return true;
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case YamlNode::Type::kScalar:
      return a.Scalar() == b.Scalar() && a.quoted() == b.quoted();
    case YamlNode::Type::kSequence:
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!SameNode(a[i], b[i], depth + 1)) return false;
      }
      return true;
    case YamlNode::Type::kMap:
      if (a.pairs().size() != b.pairs().size()) return false;
      for (size_t i = 0; i < a.pairs().size(); ++i) {
        if (!SameNode(a.pairs()[i].first, b.pairs()[i].first, depth + 1) ||
            !SameNode(a.pairs()[i].second, b.pairs()[i].second, depth + 1)) {
          return false;
        }
      }
      return true;
    default:
      return true;
  }
}

// Old indentation -> new, for the enclosing levels of the current line.
class Levels {
 public:
  // The new indentation of a content line at `old`, entering or leaving levels.
  size_t Place(size_t old) {
    while (!stack_.empty() && stack_.back().first > old) stack_.pop_back();
    if (stack_.empty()) {
      stack_.push_back({old, 0});
    } else if (stack_.back().first < old) {
      stack_.push_back({old, stack_.back().second + 2});
    }
    return stack_.back().second;
  }
  // The same, for a comment line: looked up, levels unchanged.
  size_t Peek(size_t old) const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (it->first == old) return it->second;
      if (it->first < old) return it->second + 2;
    }
    return 0;
  }
  void Reset() { stack_.clear(); }

 private:
  std::vector<std::pair<size_t, size_t>> stack_;
};

}  // namespace

Result<std::string> FormatManifest(const std::string& text) {
  std::vector<Diagnostic> diags;
  auto formatted = FormatManifest(text, "", diags);
  if (formatted.ok() || diags.empty()) return formatted;
  const Diagnostic& d = diags.front();
  std::string where;
  if (d.location.has_position()) {
    where = "line " + std::to_string(d.location.line) + ", column " +
            std::to_string(d.location.column) + ": ";
  }
  return Status::InvalidArgument(where + d.summary + " [" + d.code + "]");
}

Result<std::string> FormatManifest(const std::string& input, const std::string& file,
                                   std::vector<Diagnostic>& diags) {
  auto before = YamlTree::Parse(input);
  std::vector<Diagnostic> refused;
  AddTextDiagnostics(file, *before, refused);
  for (const YamlNode& document : before->documents) DocumentWithinBounds(file, document, refused);
  if (HasErrors(refused)) {
    diags.insert(diags.end(), refused.begin(), refused.end());
    return Status::InvalidArgument("refused: " + refused.front().summary);
  }
  std::vector<std::string> lines;
  {
    std::string line;
    for (char c : input) {
      if (c == '\n') {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(line);
        line.clear();
      } else {
        line += c;
      }
    }
    if (!line.empty()) lines.push_back(line);
  }
  // A key or sequence item whose value is a block scalar: `key: |`, `- >-`.
  static const std::regex kBlockStart(R"((^|:|-)\s*[|>][0-9+-]*\s*(#.*)?$)");
  // `key:   value` (a plain key): one space after the colon.
  static const std::regex kKeySpaces(R"(^((?:- )?[A-Za-z_][A-Za-z0-9_-]*):  +(\S))");

  std::vector<std::string> out;
  Levels levels;
  bool in_block = false;
  size_t seq_at = std::string::npos;  // indentation of a sequence at its key's
  bool key_open = false;              // the last content line was "key:" alone
  size_t key_indent = 0;
  size_t block_parent_old = 0, block_parent_new = 0;
  for (const std::string& raw : lines) {
    if (in_block) {
      if (IsBlank(raw)) {
        out.push_back(raw.size() > block_parent_old ? raw : "");  // content: kept
        continue;
      }
      size_t indent = IndentOf(raw);
      if (indent > block_parent_old) {
        // Moved with its key, every byte after the shift kept.
        if (block_parent_new >= block_parent_old) {
          out.push_back(std::string(block_parent_new - block_parent_old, ' ') + raw);
        } else {
          out.push_back(raw.substr(block_parent_old - block_parent_new));
        }
        continue;
      }
      in_block = false;
    }
    std::string line = raw;
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.empty()) {
      if (!out.empty() && !out.back().empty() && out.back() != "---") out.push_back("");
      continue;
    }
    if (line == "---" || line.rfind("--- ", 0) == 0 || line == "...") {
      while (!out.empty() && out.back().empty()) out.pop_back();
      if (!out.empty() || line != "---") out.push_back(line);
      levels.Reset();
      seq_at = std::string::npos;
      key_open = false;
      continue;
    }
    size_t old = IndentOf(line);
    std::string content = line.substr(old);
    // A block sequence written at its key's indentation ("key:\n- a") is
    // placed one level in, like any value: its items count one column deeper.
    size_t level_at = old;
    if (content[0] != '#') {
      const bool item = content == "-" || content.rfind("- ", 0) == 0;
      if (item && (old == seq_at || (key_open && key_indent == old))) {
        seq_at = old;
        level_at = old + 1;
      } else if (seq_at != std::string::npos && old <= seq_at) {
        seq_at = std::string::npos;
      }
      key_open = content.back() == ':' && content[0] != '-';
      key_indent = old;
    }
    size_t now = content[0] == '#' ? levels.Peek(level_at) : levels.Place(level_at);
    if (content[0] != '#') content = std::regex_replace(content, kKeySpaces, "$1: $2");
    out.push_back(std::string(now, ' ') + content);
    if (content[0] != '#' && std::regex_search(content, kBlockStart)) {
      in_block = true;
      block_parent_old = old;
      block_parent_new = now;
    }
  }
  while (!out.empty() && out.back().empty()) out.pop_back();
  std::string text;
  for (const std::string& l : out) text += l + "\n";

  auto after = YamlTree::Parse(text);
  bool same = !after->error && after->documents.size() == before->documents.size();
  for (size_t i = 0; same && i < before->documents.size(); ++i) {
    same = SameNode(before->documents[i], after->documents[i], 0);
  }
  if (!same) {
    return Status::FailedPrecondition(
        "its layout cannot be made canonical without changing what it means (left as it is)");
  }
  return text;
}

}  // namespace cairn
