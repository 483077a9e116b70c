#include "engine/policy/policy.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <variant>

#include "engine/expr/eval.h"
#include "engine/expr/parser.h"
#include "engine/expr/value.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/loader.h"
#include "engine/manifest/read_files.h"
#include "engine/manifest/yaml_tree.h"
#include "engine/manifest/yaml_value.h"
#include "engine/plan/conditions.h"

namespace cairn {
namespace {

const std::vector<std::string>& PolicyKeys() {
  static const std::vector<std::string> keys = {"kind",          "name",      "enforcement",
                                                "resource_kind", "condition", "error_message",
                                                "description",   "actions"};
  return keys;
}

void ParsePolicyDocument(const std::string& file, const YamlNode& doc, PolicySet& set,
                         std::map<std::string, SourceLocation>& seen) {
  auto error = [&](std::string code, std::string summary, SourceLocation at,
                   std::string detail = "") {
    AddError(set.diagnostics, std::move(code), std::move(summary), std::move(at),
             std::move(detail));
  };
  const SourceLocation doc_loc = NodeLoc(file, doc);
  if (!doc.IsMap()) {
    error("invalid_policy", "a policy document is a mapping of keys to values", doc_loc);
    return;
  }
  YamlNode kind = doc.Get("kind");
  if (!kind.IsScalar() || kind.Scalar() != "policy") {
    error("invalid_policy",
          "only `kind: policy` documents belong in a policy directory" +
              (kind.IsScalar() ? " (this one is `kind: " + kind.Scalar() + "`)" : std::string()),
          kind.IsDefined() ? NodeLoc(file, kind) : doc_loc);
    return;
  }
  bool ok = CheckYamlKeys(file, doc, PolicyKeys(), "a policy", set.diagnostics);
  auto text = [&](const char* key, bool required) -> std::optional<std::string> {
    YamlNode n = doc.Get(key);
    if (!n.IsDefined()) {
      if (required) error("missing_field", std::string("a policy needs `") + key + "`", doc_loc);
      return std::nullopt;
    }
    if (!n.IsScalar() || n.Scalar().empty()) {
      error("invalid_value", std::string("`") + key + "` must be a non-empty string",
            NodeLoc(file, n));
      return std::nullopt;
    }
    return n.Scalar();
  };
  PolicyConfig p;
  auto name = text("name", true);
  auto condition = text("condition", true);
  auto message = text("error_message", true);
  auto enforcement = text("enforcement", false);
  auto resource_kind = text("resource_kind", false);
  if (!name || !condition || !message) return;
  p.name = *name;
  p.condition = *condition;
  p.error_message = *message;
  p.location = NodeLoc(file, doc.Get("name"));
  if (enforcement) {
    if (*enforcement == "advisory") {
      p.enforcement = PolicyConfig::Enforcement::kAdvisory;
    } else if (*enforcement != "mandatory") {
      error("invalid_value", "enforcement must be \"mandatory\" or \"advisory\"",
            NodeLoc(file, doc.Get("enforcement")));
      ok = false;
    }
  }
  if (resource_kind) p.resource_kind = *resource_kind;
  if (YamlNode actions = doc.Get("actions"); actions.IsDefined()) {
    const SourceLocation at = NodeLoc(file, actions);
    if (!resource_kind) {
      error("invalid_value", "`actions` needs `resource_kind`: a plan-wide policy reads them all",
            at);
      ok = false;
    } else if (!actions.IsSequence() || actions.size() == 0) {
      error("invalid_value", "`actions` is a list of create, update, replace, delete, no-op", at);
      ok = false;
    } else {
      p.actions.clear();
      for (const YamlNode& a : actions.items()) {
        auto parsed = a.IsScalar() ? ParseAction(a.Scalar()) : std::nullopt;
        if (!parsed) {
          error("invalid_value",
                "\"" + a.Scalar() + "\" is not an action: create, update, replace, delete, no-op",
                NodeLoc(file, a));
          ok = false;
          continue;
        }
        p.actions.insert(*parsed);
      }
    }
  }
  if (auto [it, fresh] = seen.emplace(p.name, p.location); !fresh) {
    error("duplicate_policy", "policy \"" + p.name + "\" is declared twice", p.location,
          "first declared at " + it->second.file + ":" + std::to_string(it->second.line));
    ok = false;
  }
  // Parsed once, here: a condition that does not parse is an error at load,
  // not a surprise at the first plan.
  const YamlNode cond = doc.Get("condition");
  auto parsed = expr::ParseTemplate(p.condition);
  if (auto* e = std::get_if<expr::ParseError>(&parsed)) {
    SourceLocation at = NodeLoc(file, cond);
    // In a plain one-line scalar the text is the source: the caret goes
    // under the fault itself.
    if (!cond.quoted() && p.condition.find('\n') == std::string::npos && at.has_position()) {
      at.column += static_cast<int>(e->begin);
      at.length = std::max<int>(1, static_cast<int>(e->end - e->begin));
    }
    error("invalid_expression", "condition: " + e->message, at);
    return;
  }
  p.parsed = std::get<expr::NodePtr>(parsed);
  if (ok) set.policies.push_back(std::move(p));
}

void ParsePolicyFile(const std::string& file, const std::string& content, PolicySet& set,
                     std::map<std::string, SourceLocation>& seen) {
  set.sources.Add(file, content);
  std::unique_ptr<YamlTree> tree = YamlTree::Parse(content);
  AddTextDiagnostics(file, *tree, set.diagnostics, content);
  for (const YamlNode& doc : tree->documents) {
    if (doc.IsNull()) continue;  // an empty document (a trailing ---)
    if (!DocumentWithinBounds(file, doc, set.diagnostics)) continue;
    ParsePolicyDocument(file, doc, set, seen);
  }
}

// What a policy's condition reads: `change` or `plan`, nothing else.
class PolicyScope : public expr::Scope {
 public:
  PolicyScope(const expr::Value* change, const expr::Value* plan) : change_(change), plan_(plan) {}

  std::optional<expr::Value> Root(const std::string& name) override {
    if (name == "change" && change_) return *change_;
    if (name == "plan" && plan_) return *plan_;
    return std::nullopt;
  }

 private:
  const expr::Value* change_;
  const expr::Value* plan_;
};

expr::Value ChangeValue(const PlannedChange& c) {
  expr::Map m;
  m.emplace("address", expr::Value::String(c.address));
  m.emplace("action", expr::Value::String(ActionName(c.action)));
  m.emplace("kind", expr::Value::String(c.kind));
  m.emplace("before", expr::Value::FromJson(c.before));
  // Residuals (values known only after apply) read as unknown.
  m.emplace("after", c.action == Action::kDelete ? expr::Value() : FromExpressionForm(c.after));
  return expr::Value::MakeMap(std::move(m));
}

// `changes`: ChangeValue of each of plan.changes, made once.
expr::Value PlanValue(const Plan& plan, expr::List changes) {
  const Plan::Counts n = plan.counts();
  expr::Map summary;
  summary.emplace("add", expr::Value::Int(n.add));
  summary.emplace("change", expr::Value::Int(n.change));
  summary.emplace("replace", expr::Value::Int(n.replace));
  summary.emplace("destroy", expr::Value::Int(n.destroy));
  summary.emplace("noop", expr::Value::Int(n.noop));
  // State-only changes: objects renamed (kind: moved) and forgotten
  // (kind: removed with destroy: false).
  summary.emplace("move", expr::Value::Int(static_cast<int64_t>(plan.moves.size())));
  summary.emplace("forget", expr::Value::Int(static_cast<int64_t>(plan.forgets.size())));
  // And objects adopted (kind: import).
  summary.emplace("import", expr::Value::Int(static_cast<int64_t>(plan.imports.size())));
  expr::Map m;
  m.emplace("changes", expr::Value::MakeList(std::move(changes)));
  m.emplace("summary", expr::Value::MakeMap(std::move(summary)));
  return expr::Value::MakeMap(std::move(m));
}

PolicyResult Evaluate(const PolicyConfig& p, const expr::Value* change, const expr::Value* plan,
                      const std::vector<std::string>& secrets) {
  PolicyResult r;
  r.policy = p.name;
  r.enforcement = p.enforcement;
  r.policy_location = p.location;
  PolicyScope scope(change, plan);
  std::vector<expr::EvalError> errors;
  expr::Evaluator ev(scope, errors);
  expr::Value v = ev.Eval(*p.parsed);
  if (!errors.empty()) {
    r.status = PolicyResult::Status::kError;
    r.message =
        MaskSecrets("the condition cannot be evaluated: " + errors.front().message, secrets);
  } else if (!v.WhollyKnown()) {
    r.status = PolicyResult::Status::kUnknown;
    r.message = "depends on values known only after apply";
  } else if (!v.is_bool()) {
    r.status = PolicyResult::Status::kError;
    r.message = "the condition must be true or false";
  } else if (!v.as_bool()) {
    r.status = PolicyResult::Status::kFailed;
    r.message = MaskSecrets(p.error_message, secrets);
  }
  return r;
}

std::string Where(const SourceLocation& l) {
  if (l.file.empty()) return "";
  return l.file + (l.has_position() ? ":" + std::to_string(l.line) : "");
}

}  // namespace

PolicySet LoadPoliciesFromText(const std::map<std::string, std::string>& files) {
  PolicySet set;
  std::map<std::string, SourceLocation> seen;
  for (const auto& [name, content] : files) {
    if (!IsTestFileName(name)) ParsePolicyFile(name, content, set, seen);
  }
  SortDiagnostics(set.diagnostics);
  return set;
}

PolicySet LoadPolicies(const std::vector<std::string>& dirs, const Env& env) {
  PolicySet set;
  std::map<std::string, SourceLocation> seen;
  for (const std::string& dir : dirs) {
    if (!env.IsDirectory(dir)) {
      AddError(set.diagnostics, "path_not_found", "--policy " + dir + ": no such directory", {});
      continue;
    }
    for (const auto& [file, content] :
         ReadAll(env, ManifestFilesIn(env, dir, false), set.diagnostics)) {
      ParsePolicyFile(file, content, set, seen);
    }
  }
  SortDiagnostics(set.diagnostics);
  return set;
}

std::vector<std::string> PolicyDirs(const char* env_value, const std::vector<std::string>& flags) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& d) {
    if (!d.empty() && seen.insert(d).second) out.push_back(d);
  };
  if (env_value) {
    std::string_view rest(env_value);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      add(std::string(rest.substr(0, colon)));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  for (const auto& d : flags) add(d);
  return out;
}

std::vector<PolicyResult> EvaluatePolicies(const std::vector<PolicyConfig>& policies,
                                           const Plan& plan, const StackConfig* config) {
  std::vector<PolicyResult> results;
  if (policies.empty()) return results;
  std::vector<expr::Value> changes;
  changes.reserve(plan.changes.size());
  for (const PlannedChange& c : plan.changes) changes.push_back(ChangeValue(c));
  std::optional<expr::Value> whole;
  auto located = [&](const PlannedChange& c) {
    if (!config || c.parsed_address.kind.empty()) return SourceLocation{};
    const ResourceConfig* rc = config->Find(c.parsed_address);
    return rc ? rc->location : SourceLocation{};
  };
  for (const PolicyConfig& p : policies) {
    if (p.resource_kind.empty()) {
      if (!whole) whole = PlanValue(plan, changes);
      results.push_back(Evaluate(p, nullptr, &*whole, plan.sensitive_values));
      continue;
    }
    for (size_t i = 0; i < plan.changes.size(); ++i) {
      const PlannedChange& c = plan.changes[i];
      if (c.kind != p.resource_kind || !p.actions.count(c.action)) continue;
      PolicyResult r = Evaluate(p, &changes[i], nullptr, plan.sensitive_values);
      r.address = c.address;
      r.resource_location = located(c);
      results.push_back(std::move(r));
    }
  }
  return results;
}

std::vector<PolicyResult> EvaluateChangePolicies(const std::vector<PolicyConfig>& policies,
                                                 const PlannedChange& change, const Value& after,
                                                 const std::vector<std::string>& secrets) {
  std::vector<PolicyResult> results;
  std::optional<expr::Value> value;
  for (const PolicyConfig& p : policies) {
    if (p.resource_kind != change.kind || !p.actions.count(change.action)) continue;
    if (!value) {
      PlannedChange known = change;
      known.after = after;
      value = ChangeValue(known);
    }
    PolicyResult r = Evaluate(p, &*value, nullptr, secrets);
    r.address = change.address;
    results.push_back(std::move(r));
  }
  return results;
}

bool MandatoryViolated(const std::vector<PolicyResult>& results) {
  return std::any_of(results.begin(), results.end(), [](const PolicyResult& r) {
    return r.enforcement == PolicyConfig::Enforcement::kMandatory &&
           (r.status == PolicyResult::Status::kFailed || r.status == PolicyResult::Status::kError);
  });
}

const char* PolicyStatusName(PolicyResult::Status status) {
  switch (status) {
    case PolicyResult::Status::kPassed:
      return "passed";
    case PolicyResult::Status::kFailed:
      return "failed";
    case PolicyResult::Status::kUnknown:
      return "unknown";
    case PolicyResult::Status::kError:
      return "error";
  }
  return "error";
}

const char* EnforcementName(PolicyConfig::Enforcement enforcement) {
  return enforcement == PolicyConfig::Enforcement::kAdvisory ? "advisory" : "mandatory";
}

Value PolicyResultsToJson(const std::vector<PolicyResult>& results) {
  Value out = Value::array();
  for (const PolicyResult& r : results) {
    Value j = {{"policy", r.policy},
               {"enforcement", EnforcementName(r.enforcement)},
               {"status", PolicyStatusName(r.status)}};
    if (!r.address.empty()) j["address"] = r.address;
    if (!r.message.empty() && r.status != PolicyResult::Status::kPassed) j["message"] = r.message;
    if (!r.resource_location.file.empty()) j["location"] = Where(r.resource_location);
    out.push_back(std::move(j));
  }
  return out;
}

std::string RenderPolicyText(const std::vector<PolicyResult>& results) {
  if (results.empty()) return "";
  int passed = 0, failed = 0, advisory = 0, unknown = 0;
  std::string lines;
  for (const PolicyResult& r : results) {
    const bool mandatory = r.enforcement == PolicyConfig::Enforcement::kMandatory;
    switch (r.status) {
      case PolicyResult::Status::kPassed:
        ++passed;
        continue;
      case PolicyResult::Status::kUnknown:
        ++unknown;
        lines += "  ? " + r.policy + (r.address.empty() ? "" : " (" + r.address + ")") +
                 ": not decided, " + r.message + "\n";
        continue;
      case PolicyResult::Status::kFailed:
      case PolicyResult::Status::kError:
        ++(mandatory ? failed : advisory);
        lines += std::string(mandatory ? "  ✗ " : "  ! ") + r.policy + " [" +
                 EnforcementName(r.enforcement) + "]" +
                 (r.address.empty() ? "" : " (" + r.address + ")") + ": " + r.message + "\n";
        continue;
    }
  }
  std::string head = "Policies: " + std::to_string(passed) + " passed, " + std::to_string(failed) +
                     " mandatory failed, " + std::to_string(advisory) + " advisory failed, " +
                     std::to_string(unknown) + " not decided.\n";
  return head + lines;
}

Value PolicyResultsToSarif(const std::vector<PolicyResult>& results,
                           const std::vector<PolicyConfig>& policies, const std::string& version) {
  Value rules = Value::array();
  std::map<std::string, size_t> rule_index;
  for (const PolicyConfig& p : policies) {
    rule_index.emplace(p.name, rules.size());
    rules.push_back(
        {{"id", p.name},
         {"shortDescription", {{"text", p.error_message}}},
         {"defaultConfiguration",
          {{"level",
            p.enforcement == PolicyConfig::Enforcement::kMandatory ? "error" : "warning"}}}});
  }
  Value out = Value::array();
  for (const PolicyResult& r : results) {
    if (r.status != PolicyResult::Status::kFailed && r.status != PolicyResult::Status::kError)
      continue;
    const bool mandatory = r.enforcement == PolicyConfig::Enforcement::kMandatory;
    Value result = {
        {"ruleId", r.policy},
        {"level", mandatory ? "error" : "warning"},
        {"message", {{"text", (r.address.empty() ? "" : r.address + ": ") + r.message}}}};
    if (auto it = rule_index.find(r.policy); it != rule_index.end()) {
      result["ruleIndex"] = it->second;
    }
    const SourceLocation& at =
        r.resource_location.file.empty() ? r.policy_location : r.resource_location;
    if (!at.file.empty()) {
      Value region = Value::object();
      if (at.has_position()) {
        region["startLine"] = at.line;
        region["startColumn"] = at.column;
      }
      Value physical = {{"artifactLocation", {{"uri", at.file}}}};
      if (!region.empty()) physical["region"] = region;
      result["locations"] = Value::array({{{"physicalLocation", physical}}});
    }
    out.push_back(std::move(result));
  }
  return {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs",
       Value::array(
           {{{"tool", {{"driver", {{"name", "cairn"}, {"version", version}, {"rules", rules}}}}},
             {"results", out}}})}};
}

}  // namespace cairn

namespace cairn {
namespace {

void ParsePolicyTestDocument(const std::string& file, const YamlNode& doc, PolicyTestSet& set) {
  auto error = [&](std::string code, std::string summary, SourceLocation at,
                   std::string detail = "") {
    AddError(set.diagnostics, std::move(code), std::move(summary), std::move(at),
             std::move(detail));
  };
  const SourceLocation doc_loc = NodeLoc(file, doc);
  YamlNode kind = doc.IsMap() ? doc.Get("kind") : YamlNode();
  if (!kind.IsScalar() || kind.Scalar() != "policy_test") {
    error("invalid_policy_test", "a policy test file holds `kind: policy_test` documents",
          kind.IsDefined() ? NodeLoc(file, kind) : doc_loc);
    return;
  }
  static const std::vector<std::string> keys = {"kind", "name", "changes", "expect_failures",
                                                "description"};
  bool ok = CheckYamlKeys(file, doc, keys, "a policy test", set.diagnostics);
  PolicyTestCase c;
  YamlNode name = doc.Get("name");
  if (!name.IsScalar() || name.Scalar().empty()) {
    error("missing_field", "a policy test needs a `name`", doc_loc);
    return;
  }
  c.name = name.Scalar();
  c.location = NodeLoc(file, name);
  YamlNode changes = doc.Get("changes");
  if (changes.IsDefined() && !changes.IsSequence()) {
    error("invalid_value", "`changes` is a list of planned changes", NodeLoc(file, changes));
    return;
  }
  static const std::vector<std::string> change_keys = {"address", "action", "before", "after"};
  for (const YamlNode& ch : changes.IsDefined() ? changes.items() : std::vector<YamlNode>{}) {
    if (!ch.IsMap()) {
      error("invalid_value", "a change is a mapping with `address`", NodeLoc(file, ch));
      ok = false;
      continue;
    }
    ok = CheckYamlKeys(file, ch, change_keys, "a change", set.diagnostics) && ok;
    PlannedChange pc;
    YamlNode address = ch.Get("address");
    auto parsed = address.IsScalar() ? ResourceAddress::Parse(address.Scalar()) : std::nullopt;
    if (!parsed) {
      error("invalid_value", "a change needs an `address` such as firewall.open",
            address.IsDefined() ? NodeLoc(file, address) : NodeLoc(file, ch));
      ok = false;
      continue;
    }
    pc.address = parsed->ToString();
    pc.parsed_address = *parsed;
    pc.kind = parsed->kind;
    pc.action = Action::kCreate;
    if (YamlNode action = ch.Get("action"); action.IsDefined()) {
      auto a = action.IsScalar() ? ParseAction(action.Scalar()) : std::nullopt;
      if (!a) {
        error("invalid_value", "action must be create, update, replace, delete or no-op",
              NodeLoc(file, action));
        ok = false;
        continue;
      }
      pc.action = *a;
    }
    size_t budget = 0;
    if (YamlNode before = ch.Get("before"); before.IsDefined()) {
      pc.before = YamlToValue(file, before, 0, budget, set.diagnostics);
    }
    if (YamlNode after = ch.Get("after"); after.IsDefined()) {
      pc.after = YamlToValue(file, after, 0, budget, set.diagnostics);
    }
    c.plan.changes.push_back(std::move(pc));
  }
  if (YamlNode expect = doc.Get("expect_failures"); expect.IsDefined()) {
    if (!expect.IsSequence()) {
      error("invalid_value", "`expect_failures` is a list of policy names", NodeLoc(file, expect));
      ok = false;
    } else {
      for (const YamlNode& e : expect.items()) c.expect_failures.insert(e.Scalar());
    }
  }
  if (ok) set.cases.push_back(std::move(c));
}

void ParsePolicyTestFile(const std::string& file, const std::string& content, PolicyTestSet& set) {
  set.sources.Add(file, content);
  std::unique_ptr<YamlTree> tree = YamlTree::Parse(content);
  AddTextDiagnostics(file, *tree, set.diagnostics, content);
  for (const YamlNode& doc : tree->documents) {
    if (doc.IsNull()) continue;
    if (!DocumentWithinBounds(file, doc, set.diagnostics)) continue;
    ParsePolicyTestDocument(file, doc, set);
  }
}

}  // namespace

PolicyTestSet LoadPolicyTestsFromText(const std::map<std::string, std::string>& files) {
  PolicyTestSet set;
  for (const auto& [name, content] : files) {
    if (IsTestFileName(name)) ParsePolicyTestFile(name, content, set);
  }
  SortDiagnostics(set.diagnostics);
  return set;
}

PolicyTestSet LoadPolicyTests(const std::vector<std::string>& dirs, const Env& env) {
  PolicyTestSet set;
  for (const std::string& dir : dirs) {
    if (!env.IsDirectory(dir)) {
      AddError(set.diagnostics, "path_not_found", dir + ": no such directory", {});
      continue;
    }
    for (const auto& [file, content] : ReadAll(env, TestFilesIn(env, dir), set.diagnostics)) {
      ParsePolicyTestFile(file, content, set);
    }
  }
  SortDiagnostics(set.diagnostics);
  return set;
}

std::string PolicyTestOutcome::Message() const {
  if (passed) return "";
  std::string out;
  auto list = [&](const char* what, const std::vector<std::string>& names) {
    if (names.empty()) return;
    if (!out.empty()) out += "; ";
    out += what;
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : " ") + names[i];
  };
  list("failed but not expected to:", unexpected);
  list("expected to fail but did not:", missing);
  list("expected to fail but no policy has that name:", unknown_expected);
  return out;
}

std::vector<PolicyTestOutcome> RunPolicyTests(const std::vector<PolicyConfig>& policies,
                                              const std::vector<PolicyTestCase>& cases) {
  std::set<std::string> names;
  for (const PolicyConfig& p : policies) names.insert(p.name);
  std::vector<PolicyTestOutcome> out;
  for (const PolicyTestCase& c : cases) {
    PolicyTestOutcome o;
    o.name = c.name;
    o.location = c.location;
    std::set<std::string> failed;
    for (const PolicyResult& r : EvaluatePolicies(policies, c.plan, nullptr)) {
      if (r.status == PolicyResult::Status::kFailed || r.status == PolicyResult::Status::kError)
        failed.insert(r.policy);
    }
    for (const std::string& f : failed) {
      if (!c.expect_failures.count(f)) o.unexpected.push_back(f);
    }
    for (const std::string& e : c.expect_failures) {
      if (!names.count(e)) {
        o.unknown_expected.push_back(e);
      } else if (!failed.count(e)) {
        o.missing.push_back(e);
      }
    }
    o.passed = o.unexpected.empty() && o.missing.empty() && o.unknown_expected.empty();
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace cairn
