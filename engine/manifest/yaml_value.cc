#include "engine/manifest/yaml_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "base/schema/formats.h"
#include "base/schema/suggest.h"

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

bool CheckYamlKeys(const std::string& file, const YamlNode& node,
                   const std::vector<std::string>& allowed, const std::string& what,
                   std::vector<Diagnostic>& out) {
  bool ok = true;
  for (const auto& [k, v] : node.pairs()) {
    const std::string key = k.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    AddError(out, "unknown_field", "unknown key \"" + key + "\" in " + what, NodeLoc(file, k),
             DidYouMean(key, allowed));
    ok = false;
  }
  return ok;
}

namespace {

// One walk of a document against the bounds. A node is free the first time
// the walk meets it, since the text holds it (and the text's size is
// bounded); met again through an alias, it and all below it count in
// `budget`.
struct BoundsWalk {
  const std::string& file;
  size_t& budget;
  std::vector<Diagnostic>& out;
  std::set<const void*> aliased_met;  // aliased nodes met once already
  YamlNode written;  // the last node met as written: where what aliases expand to is reported
};

// Counts `n`, met at nesting `depth` (`repeated`: below a node met again
// through an alias). False when the document is over the bounds, reported
// once, at the first node over them; `repeated` becomes what `n`'s children
// are.
bool Charge(BoundsWalk& w, const YamlNode& n, int depth, bool& repeated) {
  if (w.budget > kMaxNodesPerDocument) return false;
  if (n.aliased() && !repeated) repeated = !w.aliased_met.insert(n.id()).second;
  if (!repeated) w.written = n;
  if (repeated && ++w.budget > kMaxNodesPerDocument) {
    AddError(w.out, "document_too_large",
             "aliases expand the document by more than " + std::to_string(kMaxNodesPerDocument) +
                 " nodes",
             NodeLoc(w.file, w.written),
             "each use of an alias repeats all it names; write the values out or split the "
             "document");
    return false;
  }
  if (depth > kMaxYamlDepth) {
    AddError(w.out, "document_too_deep",
             "document nests deeper than " + std::to_string(kMaxYamlDepth) + " levels",
             NodeLoc(w.file, n));
    w.budget = kMaxNodesPerDocument + 2;
    return false;
  }
  return true;
}

bool WithinBounds(BoundsWalk& w, const YamlNode& n, int depth, bool repeated);

Value ToValue(BoundsWalk& w, const YamlNode& n, int depth, bool repeated) {
  if (!Charge(w, n, depth, repeated)) return nullptr;
  std::vector<Diagnostic>& out = w.out;
  const std::string& file = w.file;
  switch (n.type()) {
    case YamlNode::Type::kScalar:
      // Raw bytes that are not UTF-8 were reported with the text
      // (AddTextDiagnostics); escapes can still make some ("\ud800").
      if (!IsValidUtf8(n.Scalar())) {
        AddError(out, "invalid_utf8", "text is not valid UTF-8", NodeLoc(file, n),
                 "manifests are UTF-8; save the file in that encoding");
        return ValidUtf8(n.Scalar());
      }
      if (n.quoted()) return n.Scalar();
      return PlainScalar(n.Scalar());
    case YamlNode::Type::kSequence: {
      Value arr = Value::array();
      for (const auto& item : n.items()) arr.push_back(ToValue(w, item, depth + 1, repeated));
      return arr;
    }
    case YamlNode::Type::kMap: {
      Value obj = Value::object();
      for (const auto& [key_node, value_node] : n.pairs()) {
        // Keys count too, though only a scalar is read: `fmt` compares all.
        if (!WithinBounds(w, key_node, depth + 1, repeated)) break;
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
        obj[key] = ToValue(w, value_node, depth + 1, repeated);
      }
      return obj;
    }
    default:
      return nullptr;
  }
}

bool WithinBounds(BoundsWalk& w, const YamlNode& n, int depth, bool repeated) {
  if (!Charge(w, n, depth, repeated)) return false;
  for (const auto& item : n.items()) {
    if (!WithinBounds(w, item, depth + 1, repeated)) return false;
  }
  for (const auto& [key, value] : n.pairs()) {
    if (!WithinBounds(w, key, depth + 1, repeated) || !WithinBounds(w, value, depth + 1, repeated))
      return false;
  }
  return true;
}

// The line of `text` that `mark` is on ("" when there is none).
std::string_view LineAt(std::string_view text, const YamlMark& mark) {
  if (text.empty() || mark.is_null()) return {};
  size_t begin = 0;
  for (int line = 0; line < mark.line; ++line) {
    begin = text.find('\n', begin);
    if (begin == std::string_view::npos) return {};
    ++begin;
  }
  size_t end = text.find('\n', begin);
  return text.substr(begin, end == std::string_view::npos ? end : end - begin);
}

// Whether `mark` falls inside a "${...}" of its line that the line does
// not close before it: the usual YAML error of an expression holding ": ".
bool InsideUnquotedExpression(std::string_view text, const YamlMark& mark) {
  std::string_view row = LineAt(text, mark);
  size_t col = static_cast<size_t>(mark.column);
  size_t open = row.rfind("${", col < row.size() ? col : row.size());
  if (open == std::string_view::npos || open >= col) return false;
  size_t close = row.find('}', open);
  return close == std::string_view::npos || close >= col;
}

}  // namespace

void AddTextDiagnostics(const std::string& file, const YamlTree& tree, std::vector<Diagnostic>& out,
                        std::string_view text) {
  for (size_t i = 0; i < tree.bad_bytes.size(); ++i) {
    const YamlBadBytes& b = tree.bad_bytes[i];
    SourceLocation at{file, b.mark.line + 1, b.mark.column + 1, static_cast<int>(b.length)};
    std::string detail;
    if (i + 1 == tree.bad_bytes.size() && tree.bad_byte_runs > tree.bad_bytes.size()) {
      detail = std::to_string(tree.bad_byte_runs - tree.bad_bytes.size()) +
               " more such places in this file are not listed; ";
    }
    if (b.kind == YamlBadBytes::Kind::kNul) {
      AddError(out, "nul_byte", "NUL byte in the text", at,
               detail + "YAML text cannot hold NUL; write \"\\0\" in a double-quoted string");
    } else if (b.kind == YamlBadBytes::Kind::kControl) {
      char cp[16];
      std::snprintf(cp, sizeof cp, "%04X", static_cast<unsigned>(b.code_point));
      AddError(out, "control_character", std::string("control character U+") + cp + " in the text",
               at,
               detail + "YAML text cannot hold control characters; write \"\\u" + cp +
                   "\" in a double-quoted string");
    } else {
      AddError(out, "invalid_utf8", "text is not valid UTF-8", at,
               detail + "manifests are UTF-8; save the file in that encoding");
    }
  }
  if (tree.error) {
    SourceLocation l{file, 0, 0, 1};
    if (!tree.error->mark.is_null()) {
      l.line = tree.error->mark.line + 1;
      l.column = tree.error->mark.column + 1;
    }
    std::string hint;
    std::string_view row = LineAt(text, tree.error->mark);
    if (InsideUnquotedExpression(text, tree.error->mark)) {
      hint =
          "the error is inside an unquoted ${...}: YAML ends a plain value at \": \" and \" #\"; "
          "quote the whole value with single quotes, e.g. count: '${var.prod ? 2 : 1}'";
    } else if (row.find('\t') < row.find_first_not_of(" \t")) {
      hint = "the line is indented with a tab; YAML indents with spaces only";
    }
    AddError(out, "yaml_syntax", "YAML syntax error: " + tree.error->message, l, hint);
  }
}

bool DocumentWithinBounds(const std::string& file, const YamlNode& root,
                          std::vector<Diagnostic>& out) {
  size_t budget = 0;
  BoundsWalk w{file, budget, out, {}};
  return WithinBounds(w, root, 0, false);
}

Value YamlToValue(const std::string& file, const YamlNode& n, int depth, size_t& budget,
                  std::vector<Diagnostic>& out) {
  BoundsWalk w{file, budget, out, {}};
  return ToValue(w, n, depth, false);
}

}  // namespace cairn
