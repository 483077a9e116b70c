#include "engine/diagnostic.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "engine/redact.h"

namespace cairn {
namespace {

std::vector<std::string> SplitLines(const std::string& content) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : content) {
    if (c == '\n') {
      if (!cur.empty() && cur.back() == '\r') cur.pop_back();
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

const char* SeverityColor(Severity s) {
  switch (s) {
    case Severity::kError: return "\033[1;31m";
    case Severity::kWarning: return "\033[1;35m";
    case Severity::kNote: return "\033[1;36m";
  }
  return "";
}

}  // namespace

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "error";
}

void SortDiagnostics(std::vector<Diagnostic>& diags) {
  std::stable_sort(diags.begin(), diags.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.location.file, a.location.line, a.location.column, a.code) <
           std::tie(b.location.file, b.location.line, b.location.column, b.code);
  });
}

bool HasErrors(const std::vector<Diagnostic>& diags) {
  return std::any_of(diags.begin(), diags.end(), [](const Diagnostic& d) { return d.is_error(); });
}

void SourceFiles::Add(std::string name, std::string content) {
  lines_[std::move(name)] = SplitLines(content);
}

std::optional<std::string> SourceFiles::Line(const std::string& name, int line) {
  auto it = lines_.find(name);
  if (it == lines_.end()) {
    std::ifstream in(name, std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    it = lines_.emplace(name, SplitLines(ss.str())).first;
  }
  if (line < 1 || static_cast<size_t>(line) > it->second.size()) return std::nullopt;
  return it->second[line - 1];
}

std::string RenderDiagnostic(const Diagnostic& d, SourceFiles& sources, const RenderOptions& opts) {
  const char* bold = opts.color ? "\033[1m" : "";
  const char* reset = opts.color ? "\033[0m" : "";
  const char* sev_color = opts.color ? SeverityColor(d.severity) : "";
  const char* caret_color = opts.color ? "\033[1;32m" : "";

  std::string out;
  if (!d.location.file.empty()) {
    out += bold;
    out += d.location.file;
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
  out += d.summary;
  out += reset;
  if (!d.code.empty()) out += " [" + d.code + "]";
  out += "\n";

  if (d.location.has_position()) {
    if (auto line = sources.Line(d.location.file, d.location.line)) {
      // Tabs are kept in the caret line so the caret lines up under the text.
      std::string caret;
      int col = std::max(1, d.location.column);
      for (int i = 1; i < col && static_cast<size_t>(i - 1) < line->size(); ++i) {
        caret += ((*line)[i - 1] == '\t') ? '\t' : ' ';
      }
      caret += '^';
      for (int i = 1; i < d.location.length; ++i) caret += '~';
      out += "    " + *line + "\n";
      out += "    ";
      out += caret_color;
      out += caret;
      out += reset;
      out += "\n";
    }
  }
  if (!d.detail.empty()) {
    std::istringstream detail(d.detail);
    for (std::string l; std::getline(detail, l);) out += "  " + l + "\n";
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
                        {"summary", Redact(d.summary)},
                        {"detail", Redact(d.detail)}};
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
