#include "engine/diagnostic.h"

#include <catch2/catch.hpp>

#include "engine/redact.h"

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
