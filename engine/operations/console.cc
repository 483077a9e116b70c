#include "engine/operations/console.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "base/env.h"
#include "base/private_key.h"
#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/address.h"
#include "engine/expr/eval.h"
#include "engine/expr/parser.h"
#include "engine/manifest/evaluate.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/loader.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;

// How a declared resource of the stack expands, from its instances in the
// StackConfig (one with count 0 or an empty for_each has none, and is in
// StackConfig::empty_resources).
struct ResourceGroup {
  enum class Mode { kSingle, kCount, kForEach } mode = Mode::kSingle;
  std::vector<AddressIndex> indexes;  // count: 0..n-1; for_each: the keys, sorted
};

std::string IndexSource(const AddressIndex& i) {
  if (const int* n = std::get_if<int>(&i)) return std::to_string(*n);
  if (const std::string* s = std::get_if<std::string>(&i)) {
    return expr::ToSource(expr::Value::String(*s));
  }
  return "";
}

// The roots a user may mean when a name is not a resource kind.
const std::vector<std::string>& RootNames() {
  static const std::vector<std::string> roots = {"var", "local", "data", "module",   "path",
                                                 "env", "count", "each", "workspace"};
  return roots;
}

}  // namespace

struct ConsoleIndex {
  const StackConfig& config;
  const StateSnapshot& state;
  const SchemaRegistry* registry;
  ConsoleOptions options;
  // The stack's own resources (not those of its modules) by base address.
  std::map<std::string, ResourceGroup> groups;
  // Names declared per kind, for "did you mean".
  std::map<std::string, std::vector<std::string>> names_by_kind;
  // Data sources, "KIND.NAME".
  std::set<std::string> data;
  // Each string of a sensitive variable's value, and the variable.
  std::vector<std::pair<std::string, std::string>> secrets;

  ConsoleIndex(const StackConfig& c, const StateSnapshot& s, const SchemaRegistry* r,
               ConsoleOptions o)
      : config(c), state(s), registry(r), options(std::move(o)) {
    for (const ResourceConfig& rc : config.resources) {
      if (!rc.address.module.empty()) continue;
      const std::string base = rc.address.BaseString();
      auto [it, fresh] = groups.try_emplace(base);
      ResourceGroup& g = it->second;
      if (fresh) names_by_kind[rc.kind].push_back(rc.address.name);
      if (std::holds_alternative<int>(rc.address.index)) g.mode = ResourceGroup::Mode::kCount;
      if (std::holds_alternative<std::string>(rc.address.index))
        g.mode = ResourceGroup::Mode::kForEach;
      g.indexes.push_back(rc.address.index);
    }
    for (auto& [base, g] : groups) std::sort(g.indexes.begin(), g.indexes.end());
    for (const auto& [base, mode] : config.empty_resources) {
      auto addr = ResourceAddress::Parse(base);
      if (!addr) continue;
      names_by_kind[addr->kind].push_back(addr->name);
      groups[base].mode =
          mode == "count" ? ResourceGroup::Mode::kCount : ResourceGroup::Mode::kForEach;
    }
    for (const DataConfig& d : config.data) data.insert(d.kind + "." + d.name);
    for (const std::string& name : config.sensitive_variables) {
      auto it = config.variables.find(name);
      if (it != config.variables.end()) CollectSecrets(it->second, "var." + name);
    }
  }

  void CollectSecrets(const Value& v, const std::string& from) {
    if (v.is_string()) {
      if (!v.get_ref<const std::string&>().empty())
        secrets.emplace_back(v.get<std::string>(), from);
    } else if (v.is_structured()) {
      for (const auto& item : v) CollectSecrets(item, from);
    }
  }

  const Env& env() const { return options.env ? *options.env : PosixEnv(); }

  std::string Root() const { return config.root.empty() ? "." : config.root; }

  // A value of the state with every string holding a sensitive variable's
  // value marked sensitive.
  expr::Value Marked(const expr::Value& v) const {
    if (secrets.empty()) return v;
    switch (v.type()) {
      case expr::Type::kString:
        for (const auto& [secret, from] : secrets) {
          if (v.as_string().find(secret) != std::string::npos) return v.MarkedSensitive(from);
        }
        return v;
      case expr::Type::kList:
      case expr::Type::kSet: {
        expr::List items;
        items.reserve(v.size());
        for (const expr::Value& item : v.items()) items.push_back(Marked(item));
        return v.is_set() ? expr::Value::MakeSet(std::move(items))
                          : expr::Value::MakeList(std::move(items));
      }
      case expr::Type::kMap: {
        expr::Map m;
        for (const auto& [k, item] : v.entries()) m.emplace(k, Marked(item));
        return expr::Value::MakeMap(std::move(m));
      }
      default:
        return v;
    }
  }

  // The recorded instance at `address`: its attributes (`attr` null: the
  // whole object), or unknown when the state does not record it.
  expr::Value Recorded(const std::string& address, const std::string* attr) const {
    auto it = state.resources.find(address);
    if (it == state.resources.end()) return expr::Value::Unknown();
    const ResourceState& rs = it->second;
    if (attr) {
      if (rs.attributes.is_object() && rs.attributes.contains(*attr)) {
        return Marked(expr::Value::FromJson(rs.attributes.at(*attr)));
      }
      if (*attr == "id" && !rs.id.empty()) return expr::Value::String(rs.id);
      return expr::Value();  // an attribute it does not set
    }
    Value whole = rs.attributes.is_object() ? rs.attributes : Value::object();
    if (!whole.contains("id") && !rs.id.empty()) whole["id"] = rs.id;
    return Marked(expr::Value::FromJson(whole));
  }
};

namespace {

// What names mean at the console (see console.h).
class ConsoleScope : public expr::Scope {
 public:
  explicit ConsoleScope(const ConsoleIndex& index) : ix_(index) {}

  std::optional<expr::Value> Root(const std::string& name) override {
    if (name == "workspace") return expr::Value::String(ix_.config.workspace);
    return std::nullopt;
  }
  std::vector<std::string> ValueRootNames() const override { return {"workspace"}; }

  expr::Value Named(const std::string& root, const std::string& attr, const expr::Node& at,
                    expr::Evaluator& ev) override {
    if (root == "var") return Variable(attr, at, ev);
    if (root == "local") return Local(attr, at, ev);
    if (root == "path") {
      if (attr == "module" || attr == "root") return expr::Value::String(ix_.Root());
      ev.Error(at, "invalid_reference",
               "path." + attr + " is not available: path.module and path.root are");
      return expr::Value::Unknown();
    }
    if (root == "env") return Environment(attr, at, ev);
    if (root == "count") {
      ev.Error(at, "count_outside_count",
               "count.index is only available in a resource with count, not at the console");
      return expr::Value::Unknown();
    }
    if (root == "each") {
      ev.Error(
          at, "each_outside_for_each",
          "each." + attr + " is only available in a resource with for_each, not at the console");
      return expr::Value::Unknown();
    }
    if (root == "self") {
      ev.Error(at, "invalid_reference", "self is only available in a resource's postconditions");
      return expr::Value::Unknown();
    }
    ev.Error(at, "invalid_reference", root + "." + attr + " is not available in Cairn");
    return expr::Value::Unknown();
  }

  expr::Value Resource(const std::string& module, const std::string& kind, const std::string& name,
                       const expr::Value* key, const std::string* attr, const expr::Node& at,
                       expr::Evaluator& ev) override {
    if (!module.empty()) return ModuleResource(module, kind, name, key, attr);
    if (kind.rfind("data.", 0) == 0) return DataSource(kind.substr(5), name, attr, at, ev);
    const std::string base = kind + "." + name;
    if (ix_.registry && !ix_.registry->HasKind(kind)) {
      std::vector<std::string> candidates = RootNames();
      candidates.insert(candidates.end(), ix_.registry->kinds().begin(),
                        ix_.registry->kinds().end());
      ev.Error(at, "unknown_reference",
               "\"" + kind + "\" is not a resource kind, nor var, local, data, module or path",
               DidYouMean(kind, candidates));
      return expr::Value::Unknown();
    }
    auto group = ix_.groups.find(base);
    if (group == ix_.groups.end()) {
      auto names = ix_.names_by_kind.find(kind);
      std::string hint = names == ix_.names_by_kind.end() ? "" : DidYouMean(name, names->second);
      if (hint.empty() && HasRecordedInstance(base)) {
        hint = "the state still records it: the next apply destroys it";
      }
      ev.Error(at, "unknown_reference", "no resource " + base + " is declared in the manifests",
               hint);
      return expr::Value::Unknown();
    }
    if (attr && ix_.registry && !ix_.registry->HasAttribute(kind, *attr)) {
      ev.Error(at, "unknown_attribute", "a " + kind + " has no attribute \"" + *attr + "\"",
               DidYouMean(*attr, ix_.registry->Attributes(kind)));
      return expr::Value::Unknown();
    }
    const ResourceGroup& g = group->second;
    using Mode = ResourceGroup::Mode;
    if (key) {
      auto index = InstanceIndex(base, g, *key, at, ev);
      if (!index) return expr::Value::Unknown();
      return Instance(kind, name, *index, attr);
    }
    if (g.mode == Mode::kSingle) return Instance(kind, name, AddressIndex(), attr);
    if (attr) {
      ev.Error(at, "invalid_index",
               base + " has " + (g.mode == Mode::kCount ? "count" : "for_each") +
                   ": name one instance, " + base + "[" + IndexSource(g.indexes.front()) + "]." +
                   *attr + ", or every one, " + base + "[*]." + *attr);
      return expr::Value::Unknown();
    }
    if (g.mode == Mode::kCount) {
      expr::List items;
      for (const AddressIndex& i : g.indexes) items.push_back(Instance(kind, name, i, nullptr));
      return expr::Value::MakeList(std::move(items));
    }
    expr::Map m;
    for (const AddressIndex& i : g.indexes) {
      m.emplace(std::get<std::string>(i), Instance(kind, name, i, nullptr));
    }
    return expr::Value::MakeMap(std::move(m));
  }

  expr::Value Module(const std::string& name, const expr::Value* key, const std::string* output,
                     const expr::Node& at, expr::Evaluator& ev) override {
    if (!output) {
      ev.Error(at, "invalid_reference",
               "refer to one of the module's outputs: module." + name + ".OUTPUT");
      return expr::Value::Unknown();
    }
    std::vector<ModuleStep> path{{name, {}}};
    if (key) {
      const expr::Number* n = key->type() == expr::Type::kNumber ? &key->as_number() : nullptr;
      if (n && n->is_int && n->i >= 0 && n->i <= std::numeric_limits<int>::max()) {
        path[0].index = static_cast<int>(n->i);
      } else if (key->type() == expr::Type::kString) {
        path[0].index = key->as_string();
      } else {
        ev.Error(at, "invalid_index", "a module instance is named by a number or a string");
        return expr::Value::Unknown();
      }
    }
    const std::string full = ModulePathPrefix(path) + *output;
    auto it = ix_.config.module_outputs.find(full);
    if (it == ix_.config.module_outputs.end()) {
      const std::string prefix = ModulePathPrefix(path);
      std::vector<std::string> names;
      for (const auto& [k, v] : ix_.config.module_outputs) {
        if (k.starts_with(prefix)) names.push_back(k.substr(prefix.size()));
      }
      ev.Error(at, "unknown_output", "no output " + full + " in the stack's modules",
               DidYouMean(*output, names));
      return expr::Value::Unknown();
    }
    expr::Value v = Residual(it->second, full, at, ev);
    if (ix_.config.sensitive_module_outputs.count(full)) v = v.MarkedSensitive(full);
    return v;
  }

  std::optional<std::string> ReadFile(const std::string& path, const expr::Node& at,
                                      expr::Evaluator& ev) override {
    const std::string full = FullPath(path);
    auto read = ix_.env().ReadFile(full, kMaxFileFunctionBytes);
    if (!read.ok()) {
      std::string code = "file_not_found";
      std::string detail = "file paths are relative to the stack directory: " + full;
      if (read.status().code() == StatusCode::kInvalidArgument) {
        code = "file_not_regular";
        detail = "only regular files are read; " + detail;
      }
      if (read.status().code() == StatusCode::kFailedPrecondition) code = "file_too_large";
      ev.Error(at, code, "cannot read file \"" + path + "\": " + read.status().message(), detail);
      return std::nullopt;
    }
    std::string text = std::move(*read);
    if (FindPrivateKey(text).found()) {
      ev.Error(at, "private_key_material", "private key material in the file \"" + path + "\"",
               "only public keys belong in a stack; the key is not shown");
      return std::nullopt;
    }
    // As the loader reads files: final newlines removed.
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text;
  }

  std::optional<bool> FileExists(const std::string& path, const expr::Node&,
                                 expr::Evaluator&) override {
    const std::string full = FullPath(path);
    return ix_.env().Exists(full) && !ix_.env().IsDirectory(full);
  }

 private:
  std::string FullPath(const std::string& path) const {
    if (fs::path(path).is_absolute()) return fs::path(path).lexically_normal().string();
    return (fs::path(ix_.Root()) / path).lexically_normal().string();
  }

  expr::Value Variable(const std::string& name, const expr::Node& at, expr::Evaluator& ev) {
    auto it = ix_.config.variables.find(name);
    if (it == ix_.config.variables.end()) {
      std::vector<std::string> names;
      for (const auto& [n, v] : ix_.config.variables) names.push_back(n);
      ev.Error(at, "unknown_variable", "reference to undeclared variable \"" + name + "\"",
               DidYouMean(name, names));
      return expr::Value::Unknown();
    }
    expr::Value v = expr::Value::FromJson(it->second);
    const auto& sensitive = ix_.config.sensitive_variables;
    if (std::find(sensitive.begin(), sensitive.end(), name) != sensitive.end()) {
      v = v.MarkedSensitive("var." + name);
    }
    return v;
  }

  // A value in expression form (a local's, a module output's): when it
  // waits for a resource, its residual (references written from the stack's
  // root) evaluated here, reading the state.
  expr::Value Residual(const Value& form, const std::string& what, const expr::Node& at,
                       expr::Evaluator& ev) {
    expr::Value v = FromExpressionForm(form);
    if (v.WhollyKnown()) return v;
    expr::NodePtr residual = NodeFromExpressionForm(form);
    if (!residual) return v;
    std::vector<expr::EvalError> errors;
    expr::EvalOptions options;
    options.qualified_refs = true;
    expr::Evaluator inner(*this, errors, options);
    v = inner.Eval(*residual);
    for (const expr::EvalError& e : errors) {
      ev.Error(at, e.code, what + ": " + e.message, e.detail);
    }
    return inner.failed() ? expr::Value::Unknown() : v;
  }

  expr::Value Local(const std::string& name, const expr::Node& at, expr::Evaluator& ev) {
    auto it = ix_.config.locals.find(name);
    if (it == ix_.config.locals.end()) {
      std::vector<std::string> names;
      for (const auto& [n, v] : ix_.config.locals) names.push_back(n);
      ev.Error(at, "unknown_local", "reference to undeclared local \"" + name + "\"",
               DidYouMean(name, names));
      return expr::Value::Unknown();
    }
    expr::Value v = Residual(it->second, "local." + name, at, ev);
    const auto& sensitive = ix_.config.sensitive_locals;
    if (std::find(sensitive.begin(), sensitive.end(), name) != sensitive.end()) {
      v = v.MarkedSensitive("local." + name);
    }
    return v;
  }

  expr::Value Environment(const std::string& name, const expr::Node& at, expr::Evaluator& ev) {
    if (!IsEnvName(name)) {
      ev.Error(at, "invalid_expression", "\"" + name + "\" is not an environment variable name");
      return expr::Value::Unknown();
    }
    const char* value =
        ix_.options.getenv ? ix_.options.getenv(name.c_str()) : ix_.env().GetEnv(name.c_str());
    if (!value) {
      ev.Error(at, "unset_env", "environment variable " + name + " is not set");
      return expr::Value::Unknown();
    }
    if (FindPrivateKey(value).found()) {
      ev.Error(at, "private_key_material", "private key material in environment variable " + name,
               "only public keys belong in a stack; the key is not shown");
      return expr::Value::Unknown();
    }
    return expr::Value::String(value);
  }

  expr::Value DataSource(const std::string& kind, const std::string& name, const std::string* attr,
                         const expr::Node& at, expr::Evaluator& ev) {
    if (!ix_.data.count(kind + "." + name)) {
      std::vector<std::string> declared;
      for (const std::string& d : ix_.data) declared.push_back("data." + d);
      ev.Error(at, "unknown_reference",
               "no data source data." + kind + "." + name + " is declared in the manifests",
               DidYouMean("data." + kind + "." + name, declared));
      return expr::Value::Unknown();
    }
    if (attr && ix_.registry && !ix_.registry->HasAttribute(kind, *attr)) {
      ev.Error(at, "unknown_attribute", "a " + kind + " has no attribute \"" + *attr + "\"",
               DidYouMean(*attr, ix_.registry->Attributes(kind)));
    }
    // Read at plan time only: the console never calls the API.
    return expr::Value::Unknown();
  }

  // A resource inside a module, as a local's residual names it
  // (resource["module.app.network.main"]): what the state records.
  expr::Value ModuleResource(const std::string& module, const std::string& kind,
                             const std::string& name, const expr::Value* key,
                             const std::string* attr) {
    ResourceAddress addr;
    addr.kind = kind;
    addr.name = name;
    auto path = ParseModulePath(module);
    if (!path) return expr::Value::Unknown();
    addr.module = std::move(*path);
    if (key) {
      if (key->is_number() && key->as_number().is_int && key->as_number().i >= 0 &&
          key->as_number().i <= INT32_MAX) {
        addr.index = static_cast<int>(key->as_number().i);
      } else if (key->is_string()) {
        addr.index = key->as_string();
      } else {
        return expr::Value::Unknown();
      }
    } else if (!attr) {
      return expr::Value::Unknown();  // a module's resource whole: not kept in this form
    }
    return ix_.Recorded(addr.ToString(), attr);
  }

  bool HasRecordedInstance(const std::string& base) const {
    for (auto it = ix_.state.resources.lower_bound(base); it != ix_.state.resources.end(); ++it) {
      if (it->first.compare(0, base.size(), base) != 0) break;
      if (it->first.size() == base.size() || it->first[base.size()] == '[') return true;
    }
    return false;
  }

  // The instance of `base` that `key` names, or nullopt after saying why.
  std::optional<AddressIndex> InstanceIndex(const std::string& base, const ResourceGroup& g,
                                            const expr::Value& key, const expr::Node& at,
                                            expr::Evaluator& ev) {
    using Mode = ResourceGroup::Mode;
    if (g.mode == Mode::kSingle) {
      ev.Error(at, "invalid_index",
               base + " has neither count nor for_each: write " + base + " without an index");
      return std::nullopt;
    }
    if (g.mode == Mode::kCount) {
      std::optional<int64_t> i;
      if (key.is_number() && key.as_number().is_int) i = key.as_number().i;
      if (!i) {
        ev.Error(at, "invalid_index",
                 base + " has count: its instances are named by a whole number, not " +
                     expr::ToSource(key.DeepUnmarked()));
        return std::nullopt;
      }
      if (*i < 0 || static_cast<uint64_t>(*i) >= g.indexes.size()) {
        ev.Error(at, "invalid_index",
                 base + "[" + std::to_string(*i) + "] does not exist: count is " +
                     std::to_string(g.indexes.size()));
        return std::nullopt;
      }
      return AddressIndex(static_cast<int>(*i));
    }
    auto k = expr::KeyString(key);
    if (!k) {
      ev.Error(at, "invalid_index",
               base + " has for_each: its instances are named by a string, not " +
                   expr::ToSource(key.DeepUnmarked()));
      return std::nullopt;
    }
    AddressIndex index(*k);
    if (!std::binary_search(g.indexes.begin(), g.indexes.end(), index)) {
      std::vector<std::string> keys;
      for (const AddressIndex& i : g.indexes) keys.push_back(std::get<std::string>(i));
      ev.Error(at, "invalid_index", base + " has no instance with the key \"" + *k + "\"",
               DidYouMean(*k, keys));
      return std::nullopt;
    }
    return index;
  }

  expr::Value Instance(const std::string& kind, const std::string& name, const AddressIndex& index,
                       const std::string* attr) const {
    ResourceAddress addr;
    addr.kind = kind;
    addr.name = name;
    addr.index = index;
    return ix_.Recorded(addr.ToString(), attr);
  }

  const ConsoleIndex& ix_;
};

SourceLocation ConsoleLocation(uint32_t begin, uint32_t end) {
  SourceLocation at;
  at.file = kConsoleFile;
  at.line = 1;
  at.column = static_cast<int>(begin) + 1;
  at.length = static_cast<int>(std::max<uint32_t>(1, end > begin ? end - begin : 1));
  return at;
}

// Whether a part of `v` that would be shown (known, not sensitive) holds
// private key material.
bool ShowsPrivateKey(const expr::Value& v) {
  if (v.sensitive() || v.is_unknown()) return false;
  if (v.is_string()) return FindPrivateKey(v.as_string()).found();
  if (v.is_sequence()) return std::any_of(v.items().begin(), v.items().end(), ShowsPrivateKey);
  if (v.is_map()) {
    return std::any_of(v.entries().begin(), v.entries().end(),
                       [](const auto& e) { return ShowsPrivateKey(e.second); });
  }
  return false;
}

Value Shown(const expr::Value& v) {
  if (v.sensitive() || v.is_unknown()) return nullptr;
  switch (v.type()) {
    case expr::Type::kList:
    case expr::Type::kSet: {
      Value out = Value::array();
      for (const expr::Value& item : v.items()) out.push_back(Shown(item));
      return out;
    }
    case expr::Type::kMap: {
      Value out = Value::object();
      for (const auto& [k, item] : v.entries()) out[k] = Shown(item);
      return out;
    }
    default:
      return v.ToJson();
  }
}

}  // namespace

StackConsole::StackConsole(const StackConfig& config, const StateSnapshot& state,
                           const SchemaRegistry* registry, ConsoleOptions options)
    : index_(std::make_unique<ConsoleIndex>(config, state, registry, std::move(options))) {}

StackConsole::~StackConsole() = default;

ConsoleResult StackConsole::Eval(std::string_view text) const {
  ConsoleResult result;
  auto parsed = expr::ParseExpression(text);
  if (auto* err = std::get_if<expr::ParseError>(&parsed)) {
    AddError(result.diagnostics, "invalid_expression", err->message,
             ConsoleLocation(err->begin, err->end));
    result.value = expr::Value::Unknown();
    return result;
  }
  const expr::NodePtr& tree = std::get<expr::NodePtr>(parsed);
  ConsoleScope scope(*index_);
  std::vector<expr::EvalError> errors;
  expr::Evaluator ev(scope, errors);
  result.value = ev.Eval(*tree);
  for (expr::EvalError& e : errors) {
    AddError(result.diagnostics, e.code.empty() ? "invalid_expression" : e.code, e.message,
             ConsoleLocation(e.begin, e.end), e.detail);
  }
  if (ev.failed() && result.diagnostics.empty()) {
    AddError(result.diagnostics, "internal_error",
             "internal error: the expression failed without saying why, please report",
             ConsoleLocation(0, static_cast<uint32_t>(text.size())));
  }
  if (result.ok() && ShowsPrivateKey(result.value)) {
    AddError(result.diagnostics, "private_key_material", "private key material in the value",
             ConsoleLocation(0, static_cast<uint32_t>(text.size())),
             "only public keys belong in a stack; the value is not shown");
  }
  if (!result.ok()) result.value = expr::Value::Unknown();
  return result;
}

ConsoleResult ConsoleEval(std::string_view text, const StackConfig& config,
                          const StateSnapshot& state, const SchemaRegistry* registry,
                          const ConsoleOptions& options) {
  return StackConsole(config, state, registry, options).Eval(text);
}

std::string ConsoleText(const expr::Value& v) { return expr::Display(v); }

Value ConsoleJson(const expr::Value& v) {
  Value out = Value::object();
  out["value"] = Shown(v);
  out["type"] = v.is_unknown() ? Value(nullptr) : Value(v.type_name());
  out["sensitive"] = v.DeepSensitive();
  out["known"] = v.WhollyKnown();
  return out;
}

}  // namespace cairn
