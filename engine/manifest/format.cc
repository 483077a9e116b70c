#include "engine/manifest/format.h"

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

// The two line patterns below are matched by hand, in time linear in the
// line: std::regex recursed once per character and overflowed the stack on
// a line of a few megabytes.
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }
bool IsAsciiLetter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// A key or sequence item whose value is a block scalar: `key: |`, `- >-`:
// after the start, a colon or a dash, a `|` or `>` with its indicators, then
// nothing but a comment.
bool StartsBlockScalar(const std::string& s) {
  for (size_t p = 0; p < s.size(); ++p) {
    if (s[p] != '|' && s[p] != '>') continue;
    size_t b = p;
    while (b > 0 && IsSpace(s[b - 1])) --b;
    if (b != 0 && s[b - 1] != ':' && s[b - 1] != '-') continue;
    size_t e = p + 1;
    while (e < s.size() && (IsAsciiDigit(s[e]) || s[e] == '+' || s[e] == '-')) ++e;
    while (e < s.size() && IsSpace(s[e])) ++e;
    if (e == s.size() || s[e] == '#') return true;
  }
  return false;
}

// `key:   value` (a plain key, or one after "- ") with one space after the
// colon; any other line as it is.
std::string OneSpaceAfterKey(const std::string& s) {
  size_t i = s.rfind("- ", 0) == 0 ? 2 : 0;
  if (i >= s.size() || !(IsAsciiLetter(s[i]) || s[i] == '_')) return s;
  for (++i;
       i < s.size() && (IsAsciiLetter(s[i]) || IsAsciiDigit(s[i]) || s[i] == '_' || s[i] == '-');
       ++i) {
  }
  if (i >= s.size() || s[i] != ':') return s;
  size_t value = i + 1;
  while (value < s.size() && s[value] == ' ') ++value;
  if (value - i - 1 < 2 || value >= s.size() || IsSpace(s[value])) return s;
  return s.substr(0, i + 1) + " " + s.substr(value);
}

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
  AddTextDiagnostics(file, *before, refused, input);
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
    if (content[0] != '#') content = OneSpaceAfterKey(content);
    out.push_back(std::string(now, ' ') + content);
    if (content[0] != '#' && StartsBlockScalar(content)) {
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
