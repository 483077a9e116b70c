#include "engine/manifest/stack_data.h"

#include <filesystem>

#include "engine/manifest/evaluate.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"
#include "engine/state/workspaces.h"

namespace cairn {
namespace {

constexpr const char* kStackDataWhere = "a stack data document";

// The `backend:` mapping of a stack data document into `spec`; false when
// it is not valid (reported at `at`).
bool StackBackendSpec(const Value& v, const SourceLocation& at, BackendSpec& spec,
                      std::vector<Diagnostic>& diags) {
  if (!v.is_object()) {
    AddError(diags, "wrong_type", "backend must be a mapping, not " + ValueTypeNoun(v), at,
             "backend: {type: sqlite, path: FILE} or {type: postgres, name: KEY, url_env: VAR}");
    return false;
  }
  auto text = [&](const char* key) -> std::optional<std::string> {
    if (!v.contains(key)) return std::nullopt;
    if (!v[key].is_string() || v[key].get_ref<const std::string&>().empty()) {
      AddError(diags, "wrong_type", std::string("backend ") + key + " must be a non-empty string",
               at);
      return std::string();
    }
    return v[key].get<std::string>();
  };
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key() == "url") {
      AddError(diags, "secret_in_manifest", "backend settings must not hold a connection URL", at,
               "it carries credentials: put it in an environment variable and name that with "
               "url_env");
      return false;
    }
    if (it.key() != "type" && it.key() != "path" && it.key() != "name" && it.key() != "url_env" &&
        it.key() != "encryption") {
      AddError(diags, "unknown_field", "unknown field \"" + it.key() + "\" in backend", at,
               "a stack's backend has type, path (sqlite), name and url_env (postgres), "
               "encryption");
      return false;
    }
  }
  if (v.contains("encryption")) {
    // The other stack's key: {key_env: NAME} or {key_file: PATH} (relative
    // to that stack's directory), as in its backend document.
    const Value& e = v["encryption"];
    const bool env = e.is_object() && e.size() == 1 && e.contains("key_env") &&
                     e["key_env"].is_string() && IsEnvName(e["key_env"].get<std::string>());
    const bool file = e.is_object() && e.size() == 1 && e.contains("key_file") &&
                      e["key_file"].is_string() && !e["key_file"].get<std::string>().empty();
    if (!env && !file) {
      AddError(diags, "invalid_value",
               "backend encryption must be {key_env: NAME} or {key_file: PATH}: the key of the "
               "other stack's state",
               at);
      return false;
    }
    spec.encryption.key = StateKeySource{env ? e["key_env"].get<std::string>() : "",
                                         file ? e["key_file"].get<std::string>() : ""};
  }
  const size_t before = diags.size();
  std::optional<std::string> type = text("type"), path = text("path"), name = text("name"),
                             url_env = text("url_env");
  if (diags.size() != before) return false;
  spec.type = type.value_or("sqlite");
  if (spec.type == "sqlite") {
    if (name || url_env) {
      AddError(diags, "invalid_value", "name and url_env apply to the postgres backend only", at);
      return false;
    }
    spec.path = path.value_or("");
    return true;
  }
  if (spec.type != "postgres") {
    AddError(diags, "invalid_value", "backend type must be \"sqlite\" or \"postgres\"", at);
    return false;
  }
  if (path) {
    AddError(diags, "invalid_value", "path applies to the sqlite backend only", at);
    return false;
  }
  if (!name || !url_env) {
    AddError(diags, "missing_field",
             std::string("a postgres backend needs ") + (name ? "url_env" : "name") +
                 ": the other stack's backend name and the variable holding the URL",
             at);
    return false;
  }
  if (!IsEnvName(*url_env)) {
    AddError(diags, "invalid_value",
             "url_env must name an environment variable, such as CAIRN_DATABASE_URL", at);
    return false;
  }
  spec.stack_name = *name;
  spec.url_env = *url_env;
  return true;
}

}  // namespace

std::optional<StackDataConfig> LoadStackData(const ManifestDocument& doc, const EvalSetting& eval,
                                             std::vector<Diagnostic>& diags) {
  namespace fs = std::filesystem;
  StackDataConfig c;
  c.name = doc.name;
  c.location = doc.location;
  c.name_location = NodeLoc(doc.file, ChildNode(doc.node, "name"));
  bool ok = true;
  for (const char* key : {"id", "filter"}) {
    if (!doc.value.contains(key)) continue;
    AddError(diags, "invalid_value",
             std::string("a stack data source reads outputs: it has no ") + key,
             KeyLoc(doc.file, doc.node, key), "give dir: (the stack's directory) or backend:");
    ok = false;
  }
  const bool has_dir = doc.value.contains("dir"), has_backend = doc.value.contains("backend");
  if (!has_dir && !has_backend) {
    AddError(diags, "missing_field", "a stack data document needs dir: or backend:", doc.location,
             "dir: ../network (a stack directory, its state in .cairn/state.db), or backend: "
             "{type: postgres, name: KEY, url_env: VAR}");
    return std::nullopt;
  }
  std::string dir = doc.dir;
  if (has_dir) {
    const size_t before = diags.size();
    Value v = eval(doc, "dir", kStackDataWhere);
    if (diags.size() != before) {
      ok = false;
    } else if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
      AddError(diags, "wrong_type", "dir must be a non-empty string: the other stack's directory",
               NodeLoc(doc.file, ChildNode(doc.node, "dir")));
      ok = false;
    } else {
      dir = (fs::path(doc.dir) / v.get<std::string>()).lexically_normal().string();
    }
  }
  c.root = dir;
  if (has_backend) {
    const size_t before = diags.size();
    Value v = eval(doc, "backend", kStackDataWhere);
    ok = diags.size() == before &&
         StackBackendSpec(v, NodeLoc(doc.file, ChildNode(doc.node, "backend")), c.backend, diags) &&
         ok;
  }
  if (doc.value.contains("workspace")) {
    const size_t before = diags.size();
    Value v = eval(doc, "workspace", kStackDataWhere);
    const std::string problem =
        v.is_string() ? WorkspaceNameProblem(v.get<std::string>()) : "it must be a string";
    if (diags.size() != before) {
      ok = false;
    } else if (!problem.empty()) {
      AddError(diags, "invalid_value", "workspace: " + problem,
               NodeLoc(doc.file, ChildNode(doc.node, "workspace")));
      ok = false;
    } else {
      c.backend.workspace = v.get<std::string>();
    }
  }
  if (doc.value.contains("defaults")) {
    const size_t before = diags.size();
    Value v = eval(doc, "defaults", kStackDataWhere);
    if (diags.size() != before) {
      ok = false;
    } else if (!v.is_object()) {
      AddError(diags, "wrong_type",
               "defaults must be a mapping of output names to values, not " + ValueTypeNoun(v),
               NodeLoc(doc.file, ChildNode(doc.node, "defaults")));
      ok = false;
    } else {
      c.defaults = std::move(v);
    }
  }
  if (!ok) return std::nullopt;
  return c;
}

std::optional<expr::Value> ReadStackOutputs(const StackDataConfig& config,
                                            std::vector<Diagnostic>& diags) {
  const std::string address = "data.stack." + config.name;
  expr::Map outputs;
  // Defaults first: the state's outputs replace them.
  if (config.defaults) {
    for (auto it = config.defaults->begin(); it != config.defaults->end(); ++it) {
      outputs.insert_or_assign(it.key(), FromExpressionForm(*it));
    }
  }
  Result<std::unique_ptr<StateStore>> store = OpenExistingStateStore(config.root, config.backend);
  if (!store.ok() && store.status().code() == StatusCode::kNotFound) {
    if (!config.defaults) {
      AddError(diags, "stack_not_found", address + ": the stack has no state to read outputs from",
               config.name_location,
               store.status().message() +
                   "; apply that stack first, or give defaults: for the outputs this one reads");
      return std::nullopt;
    }
    return expr::Value::MakeMap(std::move(outputs));
  }
  Result<StateSnapshot> snapshot =
      store.ok() ? (*store)->Load() : Result<StateSnapshot>(store.status());
  if (!snapshot.ok()) {
    AddError(diags, "stack_read_failed", address + ": cannot read the stack's state",
             config.name_location, snapshot.status().ToString());
    return std::nullopt;
  }
  for (const auto& [name, value] : snapshot->outputs) {
    expr::Value v = expr::Value::FromJson(value);
    if (snapshot->sensitive_outputs.count(name))
      v = v.MarkedSensitive(address + ".outputs." + name);
    outputs.insert_or_assign(name, std::move(v));
  }
  return expr::Value::MakeMap(std::move(outputs));
}

}  // namespace cairn
