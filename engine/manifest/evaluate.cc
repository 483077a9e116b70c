#include "engine/manifest/evaluate.h"

#include <algorithm>

#include "base/private_key.h"
#include "engine/expr/eval.h"
#include "engine/expr/parser.h"

namespace cairn {
namespace {

bool HoldsPrivateKey(const Value& v) {
  if (v.is_string()) return FindPrivateKey(v.get_ref<const std::string&>()).found();
  if (v.is_structured()) return std::any_of(v.begin(), v.end(), HoldsPrivateKey);
  return false;
}

// An address index from an evaluated key, or nullopt when the key cannot be
// one (reported by the caller).
std::optional<AddressIndex> IndexOf(const expr::Value& key) {
  if (key.is_number() && key.as_number().is_int && key.as_number().i >= 0 &&
      key.as_number().i <= INT32_MAX) {
    return AddressIndex(static_cast<int>(key.as_number().i));
  }
  if (key.is_string()) return AddressIndex(key.as_string());
  return std::nullopt;
}

expr::Value IndexValue(const AddressIndex& i) {
  if (const int* n = std::get_if<int>(&i)) return expr::Value::Int(*n);
  if (const std::string* s = std::get_if<std::string>(&i)) return expr::Value::String(*s);
  return expr::Value();
}

// The scope of a manifest string: EvalInputs behind the expression
// language's Scope, references recorded as they are read.
class LoadScope : public expr::Scope {
 public:
  LoadScope(const EvalInputs& in, const std::function<SourceLocation(size_t, size_t)>& locate,
            Evaluated& result)
      : in_(in), locate_(locate), result_(result) {}

  SourceLocation At(const expr::Node& n) const { return locate_(n.begin, n.end - n.begin); }

  // ${workspace}: a known string from the start, so that count and
  // for_each may use it.
  std::optional<expr::Value> Root(const std::string& name) override {
    if (name == "workspace") return expr::Value::String(in_.workspace ? *in_.workspace : "default");
    return std::nullopt;
  }
  std::vector<std::string> ValueRootNames() const override { return {"workspace"}; }

  expr::Value Named(const std::string& root, const std::string& attr, const expr::Node& at,
                    expr::Evaluator& ev) override {
    if (root == "var") return Variable(attr, at, ev);
    if (root == "local") {
      std::optional<LocalValue> v;
      if (in_.local) v = in_.local(attr, At(at));
      if (!v) {
        ev.Error(at, "", "");  // reported by the callee; marks the evaluation failed
        return expr::Value::Unknown();
      }
      if (v->residual) Derive(*v->residual, at);
      return v->value;
    }
    if (root == "count") {
      if (attr != "index") {
        ev.Error(at, "invalid_reference", "count has only one attribute: count.index");
      } else if (!in_.count_index) {
        ev.Error(at, "count_outside_count",
                 "count.index is only available in a resource with count");
      } else {
        return expr::Value::Int(*in_.count_index);
      }
      return expr::Value::Unknown();
    }
    if (root == "each") {
      if (attr != "key" && attr != "value") {
        ev.Error(at, "invalid_reference", "each has two attributes: each.key and each.value");
      } else if (!in_.each_key) {
        ev.Error(at, "each_outside_for_each",
                 "each." + attr + " is only available in a resource with for_each");
      } else if (attr == "key") {
        return expr::Value::String(*in_.each_key);
      } else {
        return in_.each_value ? FromExpressionForm(*in_.each_value) : expr::Value();
      }
      return expr::Value::Unknown();
    }
    if (root == "path") {
      if (attr == "module") return expr::Value::String(in_.path_module ? *in_.path_module : ".");
      if (attr == "root") return expr::Value::String(in_.path_root ? *in_.path_root : ".");
      ev.Error(at, "invalid_reference",
               "path." + attr + " is not available: path.module and path.root are");
      return expr::Value::Unknown();
    }
    if (root == "env") {
      const char* env = in_.getenv ? in_.getenv(attr.c_str()) : nullptr;
      if (!IsEnvName(attr)) {
        ev.Error(at, "invalid_expression", "\"" + attr + "\" is not an environment variable name");
      } else if (!env) {
        ev.Error(at, "unset_env", "environment variable " + attr + " is not set");
      } else if (FindPrivateKey(env).found()) {
        ev.Error(at, "private_key_material", "private key material in environment variable " + attr,
                 "only public keys belong in a stack; the key is not shown");
      } else {
        return expr::Value::String(env);
      }
      return expr::Value::Unknown();
    }
    if (root == "self") {
      if (in_.allow_self) return expr::Value::Unknown();  // the resource, once it exists
      ev.Error(at, "invalid_reference", "self is only available in a resource's postconditions");
      return expr::Value::Unknown();
    }
    ev.Error(at, "invalid_reference", root + "." + attr + " is not available in Cairn");
    return expr::Value::Unknown();
  }

  expr::Value Variable(const std::string& name, const expr::Node& at, expr::Evaluator& ev) {
    std::optional<Value> v;
    if (in_.variable) v = in_.variable(name, At(at));
    if (!v) {
      ev.Error(at, "", "");  // reported by the callee
      return expr::Value::Unknown();
    }
    expr::Value value = FromExpressionForm(*v);
    if (!value.WhollyKnown()) {
      if (expr::NodePtr residual = NodeFromExpressionForm(*v)) Derive(*residual, at);
    }
    if (in_.variable_sensitive && in_.variable_sensitive(name))
      value = value.MarkedSensitive("var." + name);
    if (in_.variable_ephemeral && in_.variable_ephemeral(name))
      value = value.MarkedSensitive(std::string(expr::kEphemeralOrigin) + "var." + name);
    return value;
  }

  // The qualified base address of a resource written in this scope, or
  // given qualified by the loader's text.
  ResourceAddress Target(const std::string& module, const std::string& kind,
                         const std::string& name) const {
    ResourceAddress t;
    t.kind = kind;
    t.name = name;
    if (!module.empty()) {
      if (auto path = ParseModulePath(module)) t.module = std::move(*path);
    } else if (kind.rfind("data.", 0) != 0) {
      t.module = in_.module;
    }
    return t;
  }

  // ${data.stack.NAME}: known at load (stack_data.h), so no reference is
  // kept and none is needed in the graph.
  expr::Value StackData(const std::string& name, const expr::Value* key, const std::string* attr,
                        const expr::Node& at, expr::Evaluator& ev) {
    if (!in_.module.empty()) {
      ev.Error(at, "module_data_reference",
               "a module cannot read the stack's data source data.stack." + name,
               "data sources belong to the stack: pass the output to the module as an input");
      return expr::Value::Unknown();
    }
    if (key) {
      ev.Error(at, "invalid_index", "a data source has no instances: refer to it without an index");
      return expr::Value::Unknown();
    }
    if (attr && *attr != "outputs") {
      ev.Error(at, "unknown_attribute",
               "a stack data source has one attribute, outputs, not \"" + *attr + "\"",
               "data.stack." + name + ".outputs.OUTPUT");
      return expr::Value::Unknown();
    }
    if (!in_.stack_outputs) return expr::Value::Unknown();
    const expr::Value* outputs = in_.stack_outputs(name, At(at));
    if (!outputs) {
      ev.Error(at, "", "");  // reported by the callee
      return expr::Value::Unknown();
    }
    if (attr) return *outputs;
    return expr::Value::MakeMap(expr::Map{{"outputs", *outputs}});
  }

  expr::Value Resource(const std::string& module, const std::string& kind, const std::string& name,
                       const expr::Value* key, const std::string* attr, const expr::Node& at,
                       expr::Evaluator& ev) override {
    if (kind == "data.stack" && module.empty()) return StackData(name, key, attr, at, ev);
    Expression e;
    e.type = Expression::Type::kResource;
    e.target = Target(module, kind, name);
    e.begin = at.begin;
    e.end = at.end;
    if (attr) e.attr = *attr;
    if (key) {
      auto index = IndexOf(*key);
      if (!index) {
        ev.Error(at, "invalid_index",
                 "an instance of " + kind + "." + name +
                     " is named by a whole number (count) or a string (for_each), not " +
                     expr::ToSource(*key));
        return expr::Value::Unknown();
      }
      e.target.index = *index;
    } else if (!attr) {
      e.splat = true;  // used whole
    }
    if (!in_.resource_refs) {
      ev.Error(at, "reference_not_allowed",
               std::string(in_.where) + " cannot refer to " + e.ToString() +
                   ": resource attributes are known only during apply",
               "use a variable or a literal value here");
      return expr::Value::Unknown();
    }
    if (const ResourceShape* shape = in_.shape ? in_.shape(e.target.BaseString()) : nullptr;
        shape && shape->mode == Instances::Mode::kSingle && shape->indexes.empty()) {
      // Disabled (enabled: false): null, and nothing to read in it.
      if (!attr && !key) return expr::Value::Null();
      ev.Error(at, "disabled_resource",
               e.target.BaseString() + " is disabled (enabled: false): it has no " +
                   (attr ? "\"" + *attr + "\"" : "instances"),
               "test it first: " + e.target.BaseString() + " == null ? ... : " + e.ToString());
      return expr::Value::Unknown();
    }
    if (kind.rfind("data.", 0) == 0 && !in_.module.empty() && module.empty()) {
      ev.Error(at, "module_data_reference",
               "a module cannot read the stack's data source " + e.target.BaseString(),
               "data sources belong to the stack: pass ${" + e.ToString() +
                   "} to the module as an input");
      return expr::Value::Unknown();
    }
    if (recording) result_.references.push_back({e, At(at), false, Rewriting()});
    // What is known of it at load: its shape, not its attributes.
    if (attr) return expr::Value::Unknown();
    const ResourceShape* shape = in_.shape ? in_.shape(e.target.BaseString()) : nullptr;
    if (!shape) return expr::Value::Unknown();
    // An instance: its attributes, each known after apply (never a value
    // known at load, so that the reference is kept).
    auto object = [&] {
      if (!shape->attributes || shape->attributes->empty()) return expr::Value::Unknown();
      expr::Map m;
      for (const std::string& a : *shape->attributes) m.emplace(a, expr::Value::Unknown());
      return expr::Value::MakeMap(std::move(m));
    };
    if (key || shape->mode == Instances::Mode::kSingle) return object();
    if (shape->mode == Instances::Mode::kCount) {
      return expr::Value::MakeList(expr::List(shape->indexes.size(), object()));
    }
    expr::Map m;
    for (const AddressIndex& i : shape->indexes) {
      if (const std::string* k = std::get_if<std::string>(&i)) m.emplace(*k, object());
    }
    return expr::Value::MakeMap(std::move(m));
  }

  std::optional<expr::Value> ResourceSplat(const std::string& module, const std::string& kind,
                                           const std::string& name, const std::string& attr,
                                           const expr::Node& at, expr::Evaluator& ev) override {
    Expression e;
    e.type = Expression::Type::kResource;
    e.target = Target(module, kind, name);
    e.splat = true;
    e.attr = attr;
    e.begin = at.begin;
    e.end = at.end;
    if (!in_.resource_refs) {
      ev.Error(at, "reference_not_allowed",
               std::string(in_.where) + " cannot refer to " + e.ToString() +
                   ": resource attributes are known only during apply",
               "use a variable or a literal value here");
      return expr::Value::Unknown();
    }
    if (recording) result_.references.push_back({e, At(at), false, Rewriting()});
    const ResourceShape* shape = in_.shape ? in_.shape(e.target.BaseString()) : nullptr;
    if (!shape) return expr::Value::Unknown();
    return expr::Value::MakeList(expr::List(shape->indexes.size(), expr::Value::Unknown()));
  }

  expr::Value Module(const std::string& name, const expr::Value* key, const std::string* output,
                     const expr::Node& at, expr::Evaluator& ev) override {
    Expression e;
    e.type = Expression::Type::kModuleOutput;
    e.begin = at.begin;
    e.end = at.end;
    if (!ModulePath(name, key, e.target.module)) {
      ev.Error(at, "invalid_index", "a module instance is named by a whole number or a string");
      return expr::Value::Unknown();
    }
    if (!output) {
      ev.Error(at, "invalid_reference",
               "refer to one of the module's outputs: module." + name + ".OUTPUT");
      return expr::Value::Unknown();
    }
    e.attr = *output;
    if (in_.module_output) {
      auto v = in_.module_output(e.target.module, *output);
      if (!v) {
        ev.Error(at, "", "");  // reported where the output is
        return expr::Value::Unknown();
      }
      expr::Value value = FromExpressionForm(*v);
      if (!value.WhollyKnown()) {
        if (expr::NodePtr residual = NodeFromExpressionForm(*v)) Derive(*residual, at);
      }
      return value;
    }
    if (!in_.resource_refs) {
      ev.Error(at, "reference_not_allowed",
               std::string(in_.where) + " cannot refer to " + e.ToString() +
                   ": a module's outputs are known only when the stack is loaded",
               "use a variable or a literal value here");
      return expr::Value::Unknown();
    }
    if (recording) result_.references.push_back({e, At(at), false, false});
    return expr::Value::Unknown();
  }

  // The module instance `name` (with `key`) written in this scope, or the
  // path the loader wrote.
  bool ModulePath(const std::string& name, const expr::Value* key,
                  std::vector<ModuleStep>& path) const {
    if (name.rfind("module.", 0) == 0) {
      auto parsed = ParseModulePath(name);
      if (!parsed) return false;
      path = std::move(*parsed);
      return true;
    }
    path = in_.module;
    ModuleStep step{name, {}};
    if (key) {
      auto index = IndexOf(*key);
      if (!index) return false;
      step.index = *index;
    }
    path.push_back(std::move(step));
    return true;
  }

  expr::NodePtr ResidualNamed(const std::string& root, const std::string& attr,
                              const expr::Node& at) override {
    (void)at;
    if (root == "var" && in_.variable) {
      auto v = in_.variable(attr, {});
      if (v) return NodeFromExpressionForm(*v);
    }
    if (root == "local" && in_.local) {
      auto v = in_.local(attr, {});
      if (v && v->residual) return v->residual;
    }
    return nullptr;
  }

  expr::NodePtr ResidualResource(const std::string& module, const std::string& kind,
                                 const std::string& name, const expr::Value* key,
                                 const std::string* attr, const expr::Node& at) override {
    (void)at;
    ResourceAddress t = Target(module, kind, name);
    expr::NodePtr base;
    if (!t.module.empty()) {
      base = expr::MakeIndex(expr::MakeVariable("resource"),
                             expr::MakeLiteral(expr::Value::String(t.BaseString())));
    } else if (kind.rfind("data.", 0) == 0) {
      base = expr::MakeGetAttr(expr::MakeGetAttr(expr::MakeVariable("data"), kind.substr(5)), name);
    } else {
      base = expr::MakeGetAttr(expr::MakeVariable(kind), name);
    }
    if (!key && !attr) {
      // Used whole: the list or map of its instances, so that apply reads
      // each one.
      const ResourceShape* shape = in_.shape ? in_.shape(t.BaseString()) : nullptr;
      if (!shape || shape->mode == Instances::Mode::kSingle) return base;
      auto n = std::make_shared<expr::Node>();
      n->kind =
          shape->mode == Instances::Mode::kCount ? expr::NodeKind::kTuple : expr::NodeKind::kObject;
      for (const AddressIndex& i : shape->indexes) {
        expr::NodePtr inst = expr::MakeIndex(base, expr::MakeLiteral(IndexValue(i)));
        if (n->kind == expr::NodeKind::kObject) n->kids.push_back(expr::MakeLiteral(IndexValue(i)));
        n->kids.push_back(std::move(inst));
      }
      return n;
    }
    if (key) base = expr::MakeIndex(base, expr::MakeLiteral(*key));
    if (attr) base = expr::MakeGetAttr(base, *attr);
    return base;
  }

  expr::NodePtr ResidualModule(const std::string& name, const expr::Value* key,
                               const std::string* output, const expr::Node& at) override {
    (void)at;
    std::vector<ModuleStep> path;
    if (!output || !ModulePath(name, key, path)) return nullptr;
    if (in_.module_output) {
      auto v = in_.module_output(path, *output);
      return v ? NodeFromExpressionForm(*v) : nullptr;
    }
    std::string text = ModulePathPrefix(path);
    text.pop_back();  // the trailing "."
    return expr::MakeGetAttr(
        expr::MakeIndex(expr::MakeVariable("module"), expr::MakeLiteral(expr::Value::String(text))),
        *output);
  }

  std::optional<std::string> ReadFile(const std::string& path, const expr::Node& at,
                                      expr::Evaluator& ev) override {
    std::optional<std::string> content;
    if (in_.read_file) content = in_.read_file(path, At(at));
    if (!content) {
      ev.Error(at, "", "");  // reported by the callee
    }
    return content;
  }

  std::optional<bool> FileExists(const std::string& path, const expr::Node&,
                                 expr::Evaluator&) override {
    return in_.file_exists ? in_.file_exists(path) : false;
  }

  // The references in a residual that took the place of `at`: they join
  // the graph here, reported where they were written.
  void Derive(const expr::Node& residual, const expr::Node& at) {
    if (!recording) return;
    for (Expression& e : ReferencesIn(residual)) {
      result_.references.push_back({std::move(e), At(at), false, true});
    }
  }

  // Evaluating text the loader wrote again (EvalInputs::module_output).
  bool Rewriting() const { return static_cast<bool>(in_.module_output); }

  // Off while the residual is made: it evaluates parts again, and what
  // they read was recorded the first time.
  bool recording = true;

 private:
  const EvalInputs& in_;
  const std::function<SourceLocation(size_t, size_t)>& locate_;
  Evaluated& result_;
};

// Whether the residual of `n` is `n` itself: literal text and references to
// resources with literal indexes, nothing to fold in (the stack's own
// resources: inside a module they are qualified). Most strings that wait for
// apply are like this, and their text is then kept as it is.
bool NothingToFold(const expr::Node& n) {
  switch (n.kind) {
    case expr::NodeKind::kLiteral:
      return n.value.is_string() && !n.value.sensitive();
    case expr::NodeKind::kTemplate:
      return std::all_of(n.kids.begin(), n.kids.end(),
                         [](const expr::NodePtr& k) { return NothingToFold(*k); });
    case expr::NodeKind::kGetAttr:
    case expr::NodeKind::kIndex: {
      const expr::Node* cur = &n;
      while (cur->kind == expr::NodeKind::kGetAttr || cur->kind == expr::NodeKind::kIndex) {
        if (cur->kind == expr::NodeKind::kIndex &&
            (cur->kids[1]->kind != expr::NodeKind::kLiteral ||
             !(cur->kids[1]->value.is_string() || cur->kids[1]->value.is_number())))
          return false;
        cur = cur->kids[0].get();
      }
      if (cur->kind != expr::NodeKind::kVariable) return false;
      const std::string& root = cur->name;
      return root != "var" && root != "local" && root != "each" && root != "count" &&
             root != "path" && root != "env" && root != "self" && root != "terraform" &&
             root != "module" && root != "resource";
    }
    default:
      return false;
  }
}

// Whether the tree is a reference and nothing else: `network.main.id`,
// `instance.web[*].id`.
bool IsTraversal(const expr::Node& n) {
  switch (n.kind) {
    case expr::NodeKind::kGetAttr:
    case expr::NodeKind::kIndex:
      return IsTraversal(*n.kids[0]);
    case expr::NodeKind::kSplat:
      return IsTraversal(*n.kids[0]);
    case expr::NodeKind::kVariable:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool IsEnvName(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string EphemeralSource(const std::vector<std::string>& marks) {
  for (const std::string& from : marks) {
    if (expr::IsEphemeralOrigin(from)) return from.substr(expr::kEphemeralOrigin.size());
  }
  return "";
}

Value EscapeTemplateValue(const Value& v) {
  if (v.is_string()) return EscapeTemplateLiteral(v.get_ref<const std::string&>());
  if (v.is_array()) {
    Value out = Value::array();
    for (const auto& i : v) out.push_back(EscapeTemplateValue(i));
    return out;
  }
  if (v.is_object()) {
    Value out = Value::object();
    for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = EscapeTemplateValue(*it);
    return out;
  }
  return v;
}

expr::NodePtr ParseCache::Find(const std::string& text) {
  if (auto it = young_.find(text); it != young_.end()) return it->second;
  auto it = old_.find(text);
  if (it == old_.end()) return nullptr;
  expr::NodePtr tree = it->second;
  old_.erase(it);
  Add(text, tree);
  return tree;
}

void ParseCache::Add(const std::string& text, expr::NodePtr tree) {
  if (young_.size() >= generation_) {
    old_ = std::move(young_);
    young_.clear();
  }
  young_.emplace(text, std::move(tree));
}

Evaluated EvaluateString(const std::string& text, const EvalInputs& in,
                         const std::function<SourceLocation(size_t, size_t)>& locate,
                         std::vector<Diagnostic>& diags) {
  Evaluated result;
  expr::NodePtr tree;
  if (in.parsed) tree = in.parsed->Find(text);
  if (!tree) {
    auto parsed = expr::ParseTemplate(text);
    if (auto* err = std::get_if<expr::ParseError>(&parsed)) {
      AddError(diags, "invalid_expression", err->message,
               locate(err->begin, std::max<uint32_t>(1, err->end - err->begin)));
      result.value = text;
      result.failed = true;
      return result;
    }
    tree = std::get<expr::NodePtr>(parsed);
    if (in.parsed) in.parsed->Add(text, tree);
  }
  LoadScope scope(in, locate, result);
  std::vector<expr::EvalError> errors;
  expr::EvalOptions options;
  options.qualified_refs = static_cast<bool>(in.module_output);
  expr::Evaluator ev(scope, errors, options);
  expr::Value v = ev.Eval(*tree);
  for (expr::EvalError& e : errors) {
    if (e.code.empty()) continue;  // reported by an input's callee
    AddError(diags, e.code, e.message, locate(e.begin, std::max<uint32_t>(1, e.end - e.begin)),
             e.detail);
  }
  if (ev.failed()) {
    result.value = text;  // left as written (reported)
    result.failed = true;
    return result;
  }
  if (IsTraversal(*tree)) {
    for (FoundReference& r : result.references) r.exact = !r.derived;
  }
  v.DeepSensitive(&result.sensitive);
  if (v.WhollyKnown()) {
    result.value = ToExpressionForm(v);
  } else if (in.module.empty() && !in.module_output && NothingToFold(*tree)) {
    result.value = text;  // its own residual
  } else {
    scope.recording = false;
    expr::NodePtr residual = ev.Residual(*tree);
    result.value = expr::PrintTemplate(*residual);
  }
  // Each input was checked where it was read (the manifest, a file, the
  // environment), but pieces of a key are not keys: the value they make is
  // checked too. A key written in the string itself was reported with its
  // manifest.
  if (v.WhollyKnown() && HoldsPrivateKey(v.ToJson()) && !FindPrivateKey(text).found()) {
    AddError(diags, "private_key_material", "private key material in a value",
             locate(0, text.size()),
             "it was assembled from variables, for_each values or files; only public keys belong "
             "in a stack, and the key is not shown");
    result.value = text;
    result.failed = true;
    result.private_key = true;
  }
  return result;
}

}  // namespace cairn
