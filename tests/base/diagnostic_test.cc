#include "base/diagnostic.h"

#include <catch2/catch.hpp>
#include <limits>

#include "base/redact.h"

namespace diagnostic_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("a diagnostic renders file:line:col, the offending line and a caret") {
  SourceFiles sources;
  sources.Add("stack/web.yaml", "kind: instance\nname: web\nspec:\n  nmae: web\n");
  Diagnostic d;
  d.code = "unknown_field";
  d.summary = "unknown field \"nmae\"";
  d.detail = "did you mean \"name\"?";
  d.location = {"stack/web.yaml", 4, 3, 4};
  std::string out = RenderDiagnostic(d, sources);
  CHECK(out ==
        "stack/web.yaml:4:3: error: unknown field \"nmae\" [unknown_field]\n"
        "      nmae: web\n"
        "      ^~~~\n"
        "  did you mean \"name\"?\n");
}

TEST_CASE("the caret keeps tabs so it lines up under the text") {
  SourceFiles sources;
  sources.Add("a.yaml", "\tkey: x\n");
  Diagnostic d{Severity::kWarning, "w", "tabbed", "", {"a.yaml", 1, 2, 1}};
  CHECK(RenderDiagnostic(d, sources) == "a.yaml:1:2: warning: tabbed [w]\n    \tkey: x\n    \t^\n");
}

TEST_CASE("a diagnostic whose line is missing renders without a source excerpt") {
  SourceFiles sources;
  sources.Add("a.yaml", "one line\n");
  Diagnostic d{Severity::kError, "c", "beyond the end", "", {"a.yaml", 7, 1, 1}};
  CHECK(RenderDiagnostic(d, sources) == "a.yaml:7:1: error: beyond the end [c]\n");
}

TEST_CASE("a column past the end of its line puts the caret just after the last byte") {
  // A position from a parser that counts differently (found by
  // manifest_loader_fuzz: tests/fuzz/regressions/manifest_loader/).
  SourceFiles sources;
  sources.Add("a.yaml", "kin\nname: x\n");
  Diagnostic d{Severity::kError, "c", "past the end", "", {"a.yaml", 1, 40, 3}};
  CHECK(RenderDiagnostic(d, sources) ==
        "a.yaml:1:40: error: past the end [c]\n    kin\n       ^\n");
}

TEST_CASE("color wraps severity and caret only when asked") {
  SourceFiles sources;
  sources.Add("a.yaml", "x\n");
  Diagnostic d{Severity::kError, "c", "s", "", {"a.yaml", 1, 1, 1}};
  CHECK(RenderDiagnostic(d, sources, {.color = false}).find('\033') == std::string::npos);
  CHECK(RenderDiagnostic(d, sources, {.color = true}).find("\033[1;31merror") != std::string::npos);
}

TEST_CASE("diagnostics sort by file, line and column and count in the summary") {
  std::vector<Diagnostic> diags = {
      {Severity::kError, "b", "second", "", {"b.yaml", 1, 1, 1}},
      {Severity::kWarning, "a", "first", "", {"a.yaml", 9, 2, 1}},
      {Severity::kError, "a", "zeroth", "", {"a.yaml", 2, 5, 1}},
  };
  SortDiagnostics(diags);
  REQUIRE(diags[0].summary == "zeroth");
  REQUIRE(diags[1].summary == "first");
  REQUIRE(diags[2].summary == "second");
  CHECK(HasErrors(diags));
  SourceFiles sources;
  std::string out = RenderDiagnostics(diags, sources);
  CHECK(out.substr(out.rfind("\n", out.size() - 2) + 1) == "2 errors, 1 warning\n");
}

TEST_CASE("rendered diagnostics never show a registered secret") {
  ClearSecretsForTesting();
  RegisterSecret("s3cr3t-value-123");
  SourceFiles sources;
  Diagnostic d{Severity::kError, "c", "token s3cr3t-value-123 rejected", "", {}};
  std::string out = RenderDiagnostic(d, sources);
  CHECK(out.find("s3cr3t") == std::string::npos);
  CHECK(out.find("[REDACTED]") != std::string::npos);
  CHECK(DiagnosticsToJson({d}).find("s3cr3t") == std::string::npos);
  ClearSecretsForTesting();
}

TEST_CASE("control characters in an excerpt and in messages are escaped, never sent raw") {
  SourceFiles sources;
  sources.Add("a.yaml", "name: \"a\x1b[2Jb\x7f\xc2\x85\xff\"\n");
  Diagnostic d{
      Severity::kError, "c", "bad \x1b]0;title\x07 name", "hint\x1b[31m", {"a.yaml", 1, 7, 3}};
  std::string out = RenderDiagnostic(d, sources);
  CHECK(out.find('\x1b') == std::string::npos);
  CHECK(out.find('\x07') == std::string::npos);
  CHECK(out ==
        "a.yaml:1:7: error: bad \\x1b]0;title\\x07 name [c]\n"
        "    name: \"a\\x1b[2Jb\\x7f\\u0085\\xff\"\n"
        "          ^~~~~~\n"  // the caret spans "a and the escape, as shown
        "  hint\\x1b[31m\n");
  CHECK(EscapeForTerminal("tab\tand\nline", true) == "tab\tand\nline");
  CHECK(EscapeForTerminal("tab\tand\nline") == "tab\tand\\x0aline");
  CHECK(EscapeForTerminal("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");
  CHECK(EscapeForTerminal("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate is not UTF-8
}

TEST_CASE("a huge line is shown as a window around the caret, and messages are cut") {
  SourceFiles sources;
  std::string line = "key: \"" + std::string(50'000'000, 'x') + "\" # end";
  sources.Add("big.yaml", line + "\n");
  Diagnostic d{Severity::kError,
               "c",
               "value " + std::string(1'000'000, 'y'),
               "",
               {"big.yaml", 1, static_cast<int>(line.size() - 4), 5}};
  std::string out = RenderDiagnostic(d, sources);
  CHECK(out.size() < 2 * (kMaxExcerptWidth + kMaxMessageLine) + 100);
  // The caret still points at "# end", at the end of the window.
  std::string excerpt = out.substr(out.find('\n') + 1);
  std::string shown = excerpt.substr(4, excerpt.find('\n') - 4);
  std::string caret = excerpt.substr(excerpt.find('\n') + 5);
  caret = caret.substr(0, caret.find('\n'));
  CHECK(shown.rfind("...", 0) == 0);
  CHECK(shown.size() <= kMaxExcerptWidth + 6);
  CHECK(shown.substr(caret.find('^'), 5) == "# end");
  CHECK(caret.substr(caret.find('^')) == "^~~~~");
  CHECK(out.find(std::string(kMaxMessageLine, 'y')) == std::string::npos);
  // In JSON too.
  CHECK(DiagnosticsToJson({d}).size() < kMaxMessageLine + 400);

  // A caret at the start of a long line keeps the start and cuts the end.
  Diagnostic at_start{Severity::kError, "c", "s", "", {"big.yaml", 1, 1, 3}};
  std::string first = RenderDiagnostic(at_start, sources);
  CHECK(first.find("\n    key: \"xxx") != std::string::npos);
  CHECK(first.find("xxx...\n    ^~~\n") != std::string::npos);
}

TEST_CASE("redacted lines keep their indentation and nothing else") {
  SourceFiles sources;
  sources.Add("k.yaml", "a: 1\n  secret: \"x\n  more\"\nb: 2\n");
  sources.RedactLines("k.yaml", 2, 3);
  CHECK(sources.Line("k.yaml", 1) == "a: 1");
  CHECK(sources.Line("k.yaml", 2) == std::string("  ") + kRedactedLine);
  CHECK(sources.Line("k.yaml", 3) == std::string("  ") + kRedactedLine);
  CHECK(sources.Line("k.yaml", 4) == "b: 2");
  sources.RedactLines("k.yaml", 4, std::numeric_limits<int>::max());
  CHECK(sources.Line("k.yaml", 4) == kRedactedLine);
}

TEST_CASE("source lines end at newlines and drop a carriage return before one") {
  SourceFiles sources;
  sources.Add("l.yaml", "a: 1\r\n\nb: 2\nlast\r");
  CHECK(sources.Line("l.yaml", 1) == "a: 1");
  CHECK(sources.Line("l.yaml", 2) == "");
  CHECK(sources.Line("l.yaml", 3) == "b: 2");
  CHECK(sources.Line("l.yaml", 4) == "last\r");  // no newline after it
  CHECK_FALSE(sources.Line("l.yaml", 5));
  CHECK_FALSE(sources.Line("l.yaml", 0));
  CHECK_FALSE(sources.Line("other.yaml", 1));
  // A final newline starts no line; an empty file has none.
  sources.Add("n.yaml", "x\n");
  CHECK(sources.Line("n.yaml", 1) == "x");
  CHECK_FALSE(sources.Line("n.yaml", 2));
  sources.Add("e.yaml", "");
  CHECK_FALSE(sources.Line("e.yaml", 1));
  // Adding a file again replaces its text and forgets its redactions.
  sources.RedactLines("n.yaml", 1, 1);
  CHECK(sources.Line("n.yaml", 1) == kRedactedLine);
  sources.Add("n.yaml", "y\nz\n");
  CHECK(sources.Line("n.yaml", 1) == "y");
  CHECK(sources.Line("n.yaml", 2) == "z");
}

}  // namespace diagnostic_test
