// Diagnostic: a user-facing problem (bad manifest, refused plan, failed
// operation) with a stable code and, when it has one, the source position of
// the offending text. Commands collect every Diagnostic of a run and report
// them all at once, sorted by file and line; they never stop at the first.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

enum class Severity { kError, kWarning, kNote };

const char* SeverityName(Severity s);

// 1-based line and column; line 0 means "no position".
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  int length = 1;  // width of the caret underline, at least 1

  bool has_position() const { return line > 0; }
};

struct Diagnostic {
  Severity severity = Severity::kError;
  std::string code;     // stable, machine-readable: "unknown_field", "dependency_cycle"...
  std::string summary;  // one line, no trailing period
  std::string detail;   // optional further explanation or hint
  SourceLocation location;

  bool is_error() const { return severity == Severity::kError; }
};

// Sorts by file, line, column, then code; stable for equal keys.
void SortDiagnostics(std::vector<Diagnostic>& diags);
bool HasErrors(const std::vector<Diagnostic>& diags);

// Appends an error, or a warning, to `out`.
void AddError(std::vector<Diagnostic>& out, std::string code, std::string summary,
              SourceLocation at = {}, std::string detail = "");
void AddWarning(std::vector<Diagnostic>& out, std::string code, std::string summary,
                SourceLocation at = {}, std::string detail = "");

// "a, b, c": names listed in a message.
std::string JoinNames(const std::vector<std::string>& names, std::string_view sep = ", ");

// Source text by file name, for rendering the offending line: only what was
// Add()ed (the loader adds every file it reads); it never reads the disk.
// Not thread-safe.
class SourceFiles {
 public:
  void Add(std::string name, std::string content);
  // The text of `line` (1-based) without its newline, or nullopt; valid
  // until the next call that changes this object.
  std::optional<std::string_view> Line(const std::string& name, int line);
  // Lines `first` to `last` (1-based, clamped to the file) of `name` shown
  // as their indentation and kRedactedLine from now on: an excerpt of text
  // found to hold a secret, whatever its spelling, never shows it.
  void RedactLines(const std::string& name, int first, int last);

 private:
  // A file's text once, with where each line starts: a stack of 100,000
  // resources holds 1.2 million lines, which as strings of their own cost
  // three times the text.
  struct File {
    std::string text;
    std::vector<size_t> starts;           // of each line, in `text`
    std::map<int, std::string> redacted;  // by line: what shows instead
  };
  std::map<std::string, File, std::less<>> files_;
};

inline constexpr const char* kRedactedLine = "[private key material not shown]";

struct RenderOptions {
  bool color = false;
};

// How much of one line a rendered diagnostic shows: an excerpt is cut to a
// window of this many bytes around the caret, a summary or detail line to
// this many bytes, each cut marked with "...".
inline constexpr size_t kMaxExcerptWidth = 160;
inline constexpr size_t kMaxMessageLine = 400;

// `text` made safe to print on a terminal: control characters (but tab,
// and newline when `keep_newlines`), DEL and C1 controls written as \xNN or
// \uNNNN escapes, bytes that are not UTF-8 as \xNN.
std::string EscapeForTerminal(std::string_view text, bool keep_newlines = false);

// Renders in the compiler style:
//   stack/web.yaml:3:9: error: unknown field "nmae" [unknown_field]
//       nmae: web
//       ^~~~
//     did you mean "name"?
// Every string passes through the secret redactor before it is returned, and
// through EscapeForTerminal; the excerpt and each message line are bounded
// (kMaxExcerptWidth, kMaxMessageLine), so no input makes the output large.
std::string RenderDiagnostic(const Diagnostic& d, SourceFiles& sources,
                             const RenderOptions& opts = {});

// All diagnostics rendered, followed by a "N errors, M warnings" line.
std::string RenderDiagnostics(const std::vector<Diagnostic>& diags, SourceFiles& sources,
                              const RenderOptions& opts = {});

// JSON array of {severity, code, summary, detail, file, line, column};
// summary and detail are bounded as when rendered.
std::string DiagnosticsToJson(const std::vector<Diagnostic>& diags);

}  // namespace cairn
