#include "engine/operations/stack_tests.h"

#include <algorithm>

#include "base/duration.h"
#include "engine/address.h"
#include "engine/expr/parser.h"
#include "engine/manifest/loader.h"
#include "engine/manifest/read_files.h"
#include "engine/manifest/yaml_tree.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

// `kind: override`: a data source's values for the file's runs.
void ParseOverride(const std::string& file, const YamlNode& doc, TestFile& out, StackTests& set) {
  static const std::vector<std::string> keys = {"kind", "target", "values", "description"};
  const bool ok = CheckYamlKeys(file, doc, keys, "an override", set.diagnostics);
  YamlNode target = doc.Get("target");
  const std::string t = target.IsScalar() ? target.Scalar() : "";
  const size_t dots = std::count(t.begin(), t.end(), '.');
  if (!t.starts_with("data.") || dots != 2 || t.ends_with(".")) {
    AddError(set.diagnostics, "invalid_value",
             "an override's `target` is a data source: data.KIND.NAME",
             target.IsDefined() ? NodeLoc(file, target) : NodeLoc(file, doc));
    return;
  }
  YamlNode values = doc.Get("values");
  if (!values.IsMap()) {
    AddError(set.diagnostics, "invalid_value",
             "an override's `values` maps the data source's attributes to values",
             values.IsDefined() ? NodeLoc(file, values) : NodeLoc(file, doc));
    return;
  }
  if (out.overrides.count(t)) {
    AddError(set.diagnostics, "invalid_value", t + " is overridden twice in this file",
             NodeLoc(file, target));
    return;
  }
  size_t budget = 0;
  Value v = YamlToValue(file, values, 0, budget, set.diagnostics);
  if (ok) {
    out.overrides[t] = std::move(v);
    out.override_locations[t] = NodeLoc(file, target);
  }
}

// `kind: test`: the file's settings, at most one.
void ParseSettings(const std::string& file, const YamlNode& doc, TestFile& out, StackTests& set) {
  static const std::vector<std::string> keys = {"kind", "provision_delay", "description"};
  CheckYamlKeys(file, doc, keys, "a test file's settings", set.diagnostics);
  if (out.settings_location.has_position()) {
    AddError(set.diagnostics, "invalid_test",
             "a test file has one `kind: test` document (the first is at line " +
                 std::to_string(out.settings_location.line) + ")",
             NodeLoc(file, doc));
    return;
  }
  out.settings_location = NodeLoc(file, doc);
  if (YamlNode delay = doc.Get("provision_delay"); delay.IsDefined()) {
    auto d = ParseDuration(delay.IsScalar() ? delay.Scalar() : "");
    if (!d.ok()) {
      AddError(
          set.diagnostics, "invalid_value",
          "provision_delay: " + d.status().message() + " (" + std::string(kDurationSyntax) + ")",
          NodeLoc(file, delay));
    } else {
      out.provision_delay = *d;
    }
  }
}

void ParseRun(const std::string& file, const YamlNode& doc, TestFile& out, StackTests& set) {
  auto error = [&](std::string code, std::string summary, SourceLocation at,
                   std::string detail = "") {
    AddError(set.diagnostics, std::move(code), std::move(summary), std::move(at),
             std::move(detail));
  };
  const SourceLocation doc_loc = NodeLoc(file, doc);
  YamlNode kind = doc.IsMap() ? doc.Get("kind") : YamlNode();
  if (kind.IsScalar() && kind.Scalar() == "override") {
    ParseOverride(file, doc, out, set);
    return;
  }
  if (kind.IsScalar() && kind.Scalar() == "test") {
    ParseSettings(file, doc, out, set);
    return;
  }
  if (!kind.IsScalar() || kind.Scalar() != "run") {
    error("invalid_test",
          "a test file holds `kind: run`, `kind: override` and `kind: test` documents",
          kind.IsDefined() ? NodeLoc(file, kind) : doc_loc);
    return;
  }
  static const std::vector<std::string> keys = {
      "kind", "name", "command", "variables", "assert", "expect_failures", "description"};
  bool ok = CheckYamlKeys(file, doc, keys, "a run", set.diagnostics);
  TestRun run;
  YamlNode name = doc.Get("name");
  if (!name.IsScalar() || name.Scalar().empty()) {
    error("missing_field", "a run needs a `name`", doc_loc);
    return;
  }
  run.name = name.Scalar();
  run.location = NodeLoc(file, name);
  if (YamlNode command = doc.Get("command"); command.IsDefined()) {
    if (command.IsScalar() && command.Scalar() == "plan") {
      run.apply = false;
    } else if (!command.IsScalar() || command.Scalar() != "apply") {
      error("invalid_value", "command must be apply or plan", NodeLoc(file, command));
      ok = false;
    }
  }
  if (YamlNode vars = doc.Get("variables"); vars.IsDefined()) {
    if (!vars.IsMap()) {
      error("invalid_value", "`variables` maps variable names to values", NodeLoc(file, vars));
      ok = false;
    } else {
      for (const auto& [k, v] : vars.pairs()) {
        size_t budget = 0;
        run.variables[k.Scalar()] = YamlToValue(file, v, 0, budget, set.diagnostics);
      }
    }
  }
  if (YamlNode asserts = doc.Get("assert"); asserts.IsDefined()) {
    if (!asserts.IsSequence()) {
      error("invalid_value", "`assert` is a list of {condition, error_message}",
            NodeLoc(file, asserts));
      ok = false;
    }
    for (const YamlNode& a : asserts.IsSequence() ? asserts.items() : std::vector<YamlNode>{}) {
      YamlNode c = a.IsMap() ? a.Get("condition") : YamlNode();
      YamlNode m = a.IsMap() ? a.Get("error_message") : YamlNode();
      if (!c.IsScalar() || !m.IsScalar()) {
        error("invalid_value", "an assertion needs `condition` and `error_message`",
              NodeLoc(file, a));
        ok = false;
        continue;
      }
      TestAssert t{c.Scalar(), m.Scalar(), NodeLoc(file, c)};
      if (!ConditionExpression(t.condition)) {
        error("invalid_expression", "a condition is one expression, written ${...}", t.location);
        ok = false;
        continue;
      }
      run.asserts.push_back(std::move(t));
    }
  }
  if (YamlNode expect = doc.Get("expect_failures"); expect.IsDefined()) {
    if (!expect.IsSequence()) {
      error("invalid_value",
            "`expect_failures` is a list: var.NAME, check.NAME, output.NAME or an address",
            NodeLoc(file, expect));
      ok = false;
    } else {
      for (const YamlNode& e : expect.items()) run.expect_failures.push_back(e.Scalar());
    }
  }
  if (ok) out.runs.push_back(std::move(run));
}

void ParseTestFile(const std::string& file, const std::string& content, StackTests& set) {
  set.sources.Add(file, content);
  std::unique_ptr<YamlTree> tree = YamlTree::Parse(content);
  AddTextDiagnostics(file, *tree, set.diagnostics, content);
  TestFile out{file, {}};
  for (const YamlNode& doc : tree->documents) {
    if (doc.IsNull()) continue;
    if (!DocumentWithinBounds(file, doc, set.diagnostics)) continue;
    ParseRun(file, doc, out, set);
  }
  if (out.runs.empty() && !HasErrors(set.diagnostics)) {
    AddError(set.diagnostics, "invalid_test", file + " holds no `kind: run` document", {file});
  }
  set.files.push_back(std::move(out));
}

// Whether `summary` starts with `prefix` followed by the end, a colon, a
// space or an index.
bool NamedAtStart(const std::string& summary, const std::string& prefix) {
  if (!summary.starts_with(prefix)) return false;
  if (summary.size() == prefix.size()) return true;
  const char next = summary[prefix.size()];
  return next == ':' || next == ' ' || next == '[';
}

bool Matches(const std::string& expected, const Diagnostic& d) {
  if (expected.starts_with("var.")) {
    return d.code == "invalid_variable_value" &&
           d.summary.find("\"" + expected.substr(4) + "\"") != std::string::npos;
  }
  if (expected.starts_with("check.")) {
    return d.code == "check_failed" && NamedAtStart(d.summary, "check " + expected.substr(6));
  }
  if (expected.starts_with("output.")) {
    return d.code == "precondition_failed" &&
           NamedAtStart(d.summary, "output " + expected.substr(7));
  }
  return (d.code == "precondition_failed" || d.code == "postcondition_failed") &&
         NamedAtStart(d.summary, expected);
}

}  // namespace

std::optional<std::string> ConditionExpression(const std::string& condition) {
  if (condition.size() < 3 || !condition.starts_with("${") || condition.back() != '}') {
    return std::nullopt;
  }
  auto parsed = expr::ParseTemplate(condition);
  if (!std::holds_alternative<expr::NodePtr>(parsed)) return std::nullopt;
  const expr::NodePtr& n = std::get<expr::NodePtr>(parsed);
  if (n->kind == expr::NodeKind::kTemplate || n->kind == expr::NodeKind::kLiteral) {
    return std::nullopt;
  }
  return condition.substr(2, condition.size() - 3);
}

StackTests LoadStackTestsFromText(const std::map<std::string, std::string>& files) {
  StackTests set;
  for (const auto& [name, content] : files) {
    if (IsTestFileName(name)) ParseTestFile(name, content, set);
  }
  SortDiagnostics(set.diagnostics);
  return set;
}

StackTests LoadStackTests(const std::string& dir, const Env& env) {
  StackTests set;
  std::vector<std::string> names;
  for (const std::string& d : {dir, dir + "/tests"}) {
    if (!env.IsDirectory(d)) continue;
    for (std::string& f : TestFilesIn(env, d)) names.push_back(std::move(f));
  }
  for (const auto& [file, content] : ReadAll(env, names, set.diagnostics)) {
    ParseTestFile(file, content, set);
  }
  SortDiagnostics(set.diagnostics);
  return set;
}

ExpectedFailures MatchExpectedFailures(const std::vector<std::string>& expected,
                                       const std::vector<Diagnostic>& diagnostics) {
  ExpectedFailures out;
  for (const std::string& e : expected) {
    if (std::none_of(diagnostics.begin(), diagnostics.end(),
                     [&](const Diagnostic& d) { return Matches(e, d); })) {
      out.missing.push_back(e);
    }
  }
  for (const Diagnostic& d : diagnostics) {
    if (!d.is_error()) continue;
    if (std::none_of(expected.begin(), expected.end(),
                     [&](const std::string& e) { return Matches(e, d); })) {
      out.unexpected.push_back(d.summary);
    }
  }
  return out;
}

}  // namespace cairn
