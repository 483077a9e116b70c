#include "base/diagnostic.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <tuple>

#include "base/redact.h"

namespace cairn {
namespace {

// One character of a line as shown: `size` bytes of the original from
// `begin`, printed as `shown` (itself, or an escape).
struct ShownChar {
  size_t begin;
  size_t size;
  std::string shown;
};

// The length of the valid UTF-8 sequence at `s[i]` (2 to 4), or 0.
size_t Utf8SequenceAt(std::string_view s, size_t i, uint32_t* code_point) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char lead = b(0);
  size_t n = lead >= 0xC2 && lead <= 0xDF   ? 2
             : lead >= 0xE0 && lead <= 0xEF ? 3
             : lead >= 0xF0 && lead <= 0xF4 ? 4
                                            : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t cp = lead & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  *code_point = cp;
  return n;
}

std::vector<ShownChar> ShownChars(std::string_view text, bool keep_newlines) {
  std::vector<ShownChar> out;
  out.reserve(text.size());
  char buf[8];
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      bool plain = (c >= 0x20 && c != 0x7F) || c == '\t' || (keep_newlines && c == '\n');
      if (plain) {
        out.push_back({i, 1, std::string(1, static_cast<char>(c))});
      } else {
        std::snprintf(buf, sizeof(buf), "\\x%02x", c);
        out.push_back({i, 1, buf});
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    size_t n = Utf8SequenceAt(text, i, &cp);
    if (n == 0) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out.push_back({i, 1, buf});
      ++i;
    } else if (cp >= 0x80 && cp <= 0x9F) {  // C1 controls
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
      out.push_back({i, n, buf});
      i += n;
    } else {
      out.push_back({i, n, std::string(text.substr(i, n))});
      i += n;
    }
  }
  return out;
}

// At most `limit` bytes of `text` (cut back to a whole UTF-8 character),
// escaped, with "..." where it was cut.
std::string BoundedLine(std::string_view text, size_t limit) {
  bool cut = text.size() > limit;
  if (cut) {
    size_t end = limit;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text = text.substr(0, end);
  }
  std::string out = EscapeForTerminal(text);
  if (cut) out += "...";
  return out;
}

// Every line of `text` bounded by BoundedLine.
std::string BoundedLines(std::string_view text, size_t limit) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t nl = text.find('\n', start);
    out += BoundedLine(text.substr(start, nl == std::string_view::npos ? nl : nl - start), limit);
    if (nl == std::string_view::npos) break;
    out += '\n';
    start = nl + 1;
  }
  return out;
}

const char* SeverityColor(Severity s) {
  switch (s) {
    case Severity::kError:
      return "\033[1;31m";
    case Severity::kWarning:
      return "\033[1;35m";
    case Severity::kNote:
      return "\033[1;36m";
  }
  return "";
}

}  // namespace

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

void SortDiagnostics(std::vector<Diagnostic>& diags) {
  std::stable_sort(diags.begin(), diags.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.location.file, a.location.line, a.location.column, a.code) <
           std::tie(b.location.file, b.location.line, b.location.column, b.code);
  });
}

std::string EscapeForTerminal(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (const ShownChar& c : ShownChars(text, keep_newlines)) out += c.shown;
  return out;
}

bool HasErrors(const std::vector<Diagnostic>& diags) {
  return std::any_of(diags.begin(), diags.end(), [](const Diagnostic& d) { return d.is_error(); });
}

void AddError(std::vector<Diagnostic>& out, std::string code, std::string summary,
              SourceLocation at, std::string detail) {
  out.push_back(
      {Severity::kError, std::move(code), std::move(summary), std::move(detail), std::move(at)});
}

void AddWarning(std::vector<Diagnostic>& out, std::string code, std::string summary,
                SourceLocation at, std::string detail) {
  out.push_back(
      {Severity::kWarning, std::move(code), std::move(summary), std::move(detail), std::move(at)});
}

std::string JoinNames(const std::vector<std::string>& names, std::string_view sep) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += sep;
    out += n;
  }
  return out;
}

void SourceFiles::Add(std::string name, std::string content) {
  File& f = files_[std::move(name)];
  f.text = std::move(content);
  f.starts.clear();
  f.redacted.clear();
  // Lines end at "\n" (a "\r" before it is not shown); the text after the
  // last one is a line when it is not empty.
  for (size_t at = 0; at < f.text.size();) {
    f.starts.push_back(at);
    const size_t nl = f.text.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
}

std::optional<std::string_view> SourceFiles::Line(const std::string& name, int line) {
  auto it = files_.find(name);
  if (it == files_.end()) return std::nullopt;  // never read here: only what was Add()ed
  const File& f = it->second;
  if (line < 1 || static_cast<size_t>(line) > f.starts.size()) return std::nullopt;
  if (auto r = f.redacted.find(line); r != f.redacted.end()) return r->second;
  const size_t begin = f.starts[line - 1];
  size_t end = f.text.find('\n', begin);
  if (end == std::string::npos) return std::string_view(f.text).substr(begin);
  if (end > begin && f.text[end - 1] == '\r') --end;
  return std::string_view(f.text).substr(begin, end - begin);
}

void SourceFiles::RedactLines(const std::string& name, int first, int last) {
  auto it = files_.find(name);
  if (it == files_.end()) return;
  File& f = it->second;
  first = std::max(first, 1);
  last = std::min<int64_t>(last, static_cast<int64_t>(f.starts.size()));
  for (int line = first; line <= last; ++line) {
    std::string_view l = *Line(name, line);
    if (l.find(kRedactedLine) != std::string_view::npos) continue;
    size_t indent = l.find_first_not_of(" \t");
    f.redacted[line] =
        std::string(indent == std::string_view::npos ? l : l.substr(0, indent)) + kRedactedLine;
  }
}

std::string RenderDiagnostic(const Diagnostic& d, SourceFiles& sources, const RenderOptions& opts) {
  const char* bold = opts.color ? "\033[1m" : "";
  const char* reset = opts.color ? "\033[0m" : "";
  const char* sev_color = opts.color ? SeverityColor(d.severity) : "";
  const char* caret_color = opts.color ? "\033[1;32m" : "";

  std::string out;
  if (!d.location.file.empty()) {
    out += bold;
    out += BoundedLine(d.location.file, kMaxMessageLine);
    if (d.location.has_position()) {
      out += ":" + std::to_string(d.location.line) + ":" + std::to_string(d.location.column);
    }
    out += ":";
    out += reset;
    out += " ";
  }
  out += sev_color;
  out += SeverityName(d.severity);
  out += ":";
  out += reset;
  out += " ";
  out += bold;
  out += BoundedLine(d.summary, kMaxMessageLine);
  out += reset;
  if (!d.code.empty()) out += " [" + d.code + "]";
  out += "\n";

  if (d.location.has_position()) {
    if (auto line = sources.Line(d.location.file, d.location.line)) {
      // The line as shown: escaped, and cut to a window around the caret.
      // A character shows as at least one byte and is at most four, so the
      // window lies within 4 * kMaxExcerptWidth bytes of the caret: only
      // those are looked at, however long the line.
      std::string_view text = *line;
      size_t at = static_cast<size_t>(std::max(1, d.location.column) - 1);  // a byte of the line
      // A column past the line's end (a position from a parser that counts
      // differently) points just after its last byte.
      at = std::min(at, text.size());
      size_t until = at + static_cast<size_t>(std::max(1, d.location.length));
      size_t lo = at > 4 * kMaxExcerptWidth ? at - 4 * kMaxExcerptWidth : 0;
      size_t hi = std::min(text.size(), std::max(until, at + 1) + 4 * kMaxExcerptWidth);
      auto continuation = [&](size_t i) {
        return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
      };
      while (lo > 0 && continuation(lo)) --lo;
      while (hi < text.size() && continuation(hi)) ++hi;
      bool cut_before = lo > 0, cut_after = hi < text.size();
      std::vector<ShownChar> chars = ShownChars(text.substr(lo, hi - lo), false);
      at = at > lo ? at - lo : 0;
      until = until > lo ? until - lo : 0;
      size_t caret_char = chars.size(), caret_end = chars.size();
      for (size_t i = 0; i < chars.size(); ++i) {
        if (caret_char == chars.size() && chars[i].begin + chars[i].size > at) caret_char = i;
        if (chars[i].begin >= until) {
          caret_end = i;
          break;
        }
      }
      caret_end = std::max(caret_end, caret_char + 1);
      // A window of whole characters of at most kMaxExcerptWidth bytes shown,
      // starting a third of the way before the caret.
      auto width = [&](size_t from, size_t to) {
        size_t w = 0;
        for (size_t i = from; i < to && i < chars.size(); ++i) w += chars[i].shown.size();
        return w;
      };
      size_t first = 0, last = chars.size();
      if (width(0, chars.size()) > kMaxExcerptWidth) {
        first = caret_char;
        while (first > 0 && width(first - 1, caret_char) <= kMaxExcerptWidth / 3) --first;
        last = first;
        while (last < chars.size() && width(first, last + 1) <= kMaxExcerptWidth) ++last;
      }
      std::string shown = first > 0 || cut_before ? "..." : "";
      // Tabs are kept in the caret line so the caret lines up under the text;
      // a multi-byte character takes one column, an escape as many as shown.
      std::string caret(shown.size(), ' ');
      for (size_t i = first; i < last && i < caret_char; ++i) {
        bool utf8 = chars[i].size > 1 && chars[i].shown.size() == chars[i].size;
        caret += chars[i].shown == "\t" ? std::string("\t")
                                        : std::string(utf8 ? 1 : chars[i].shown.size(), ' ');
      }
      for (size_t i = first; i < last; ++i) shown += chars[i].shown;
      if (last < chars.size() || cut_after) shown += "...";
      caret += '^';
      size_t underline = width(caret_char, std::min(caret_end, last));
      for (size_t i = 1; i < underline; ++i) caret += '~';
      out += "    " + shown + "\n";
      out += "    ";
      out += caret_color;
      out += caret;
      out += reset;
      out += "\n";
    }
  }
  if (!d.detail.empty()) {
    std::istringstream detail(d.detail);
    for (std::string l; std::getline(detail, l);) {
      out += "  " + BoundedLine(l, kMaxMessageLine) + "\n";
    }
  }
  return Redact(out);
}

std::string RenderDiagnostics(const std::vector<Diagnostic>& diags, SourceFiles& sources,
                              const RenderOptions& opts) {
  std::string out;
  int errors = 0, warnings = 0;
  for (const auto& d : diags) {
    out += RenderDiagnostic(d, sources, opts);
    if (d.severity == Severity::kError) ++errors;
    if (d.severity == Severity::kWarning) ++warnings;
  }
  if (errors || warnings) {
    out += std::to_string(errors) + (errors == 1 ? " error" : " errors") + ", " +
           std::to_string(warnings) + (warnings == 1 ? " warning" : " warnings") + "\n";
  }
  return out;
}

std::string DiagnosticsToJson(const std::vector<Diagnostic>& diags) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& d : diags) {
    nlohmann::json j = {{"severity", SeverityName(d.severity)},
                        {"code", d.code},
                        {"summary", Redact(BoundedLines(d.summary, kMaxMessageLine))},
                        {"detail", Redact(BoundedLines(d.detail, kMaxMessageLine))}};
    if (!d.location.file.empty()) j["file"] = d.location.file;
    if (d.location.has_position()) {
      j["line"] = d.location.line;
      j["column"] = d.location.column;
    }
    arr.push_back(std::move(j));
  }
  return arr.dump(2);
}

}  // namespace cairn
