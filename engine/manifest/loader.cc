#include "engine/manifest/loader.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>
#include <unordered_map>

#include "base/env.h"
#include "base/redact.h"
#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/expr/parser.h"
#include "engine/manifest/condition_lists.h"
#include "engine/manifest/data_sources.h"
#include "engine/manifest/declared_instances.h"
#include "engine/manifest/document_lists.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/evaluate.h"
#include "engine/manifest/expand.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/finish.h"
#include "engine/manifest/graph_edges.h"
#include "engine/manifest/imports.h"
#include "engine/manifest/key_material.h"
#include "engine/manifest/lifecycle.h"
#include "engine/manifest/locals.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/module_scopes.h"
#include "engine/manifest/moved.h"
#include "engine/manifest/outputs.h"
#include "engine/manifest/read_files.h"
#include "engine/manifest/references.h"
#include "engine/manifest/removed.h"
#include "engine/manifest/resource_declarations.h"
#include "engine/manifest/settings.h"
#include "engine/manifest/stack_data.h"
#include "engine/manifest/validate_specs.h"
#include "engine/manifest/variable_files.h"
#include "engine/manifest/variable_validations.h"
#include "engine/manifest/variables.h"
#include "engine/manifest/yaml_tree.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = kMaxYamlDepth;
constexpr const char* kImportIndexHint =
    "with for_each, to's index takes each.key or each.value: instance.web[each.key]";

const std::vector<std::pair<YamlNode, YamlNode>> kNoPairs;
// A document, as the documents stage reads it (documents.h).
using Doc = ManifestDocument;

struct EvalContext {
  const Doc* doc = nullptr;
  const char* where = nullptr;  // "count", "provider", ...: resource references not allowed
  bool resource_refs = false;
  bool module_inputs = false;  // a module's inputs: references are check_only
  const std::optional<int>* count_index = nullptr;
  const std::string* each_key = nullptr;
  const Value* each_value = nullptr;
  int resource = -1;
  std::string output;
  bool allow_self = false;  // a postcondition: `self` is the resource
  // What its strings may read (evaluate.h): made at the first string, then
  // shared by the context's other strings.
  mutable std::optional<EvalInputs> inputs;
  // The sensitive mark of what was evaluated: (pointer, variable) for each
  // sensitive variable a string read.
  mutable std::vector<std::pair<std::string, std::string>> sensitive;
  // Where an ephemeral value may go (variables.h, VariableDecl::ephemeral):
  // nowhere (kRefused, the default: what the state, a plan file or a
  // report keeps); where its value is known at load (kKnownAtLoad: a local,
  // the provider, a condition); for a resource's spec, only into the
  // write-only fields of its kind, residual or not (kWriteOnly); anywhere
  // (kAnywhere: a module's inputs, which make the module's variable
  // ephemeral, checked where the module uses it).
  enum class Ephemeral { kRefused, kKnownAtLoad, kWriteOnly, kAnywhere };
  Ephemeral ephemeral = Ephemeral::kRefused;
  const std::vector<std::string>* write_only = nullptr;  // kWriteOnly: the kind's
  // A string could not be evaluated (reported, perhaps before: an input
  // that failed earlier is not reported again where it is read).
  mutable bool failed = false;
};

class Loader {
 public:
  Loader(const LoadOptions& options, LoadResult& result)
      : options_(options), result_(result), env_(options.env ? *options.env : PosixEnv()) {}

  // Takes the files' text: parsed, it is dropped (SourceFiles keeps the
  // copy diagnostics show).
  void Run(std::vector<std::pair<std::string, std::string>> files) {
    result_.config.workspace = options_.workspace;
    if (!LoadRegistry()) {
      Finish();
      return;
    }
    scopes_.emplace_back();
    scopes_[0].dir = env_.Canonical(result_.config.root);
    ParseFiles(files);
    files = {};
    if (options_.recursive) DropModuleFiles();
    if (docs_.empty() && !HasErrors(diags_)) {
      Error("no_manifests", "no manifest files (*.yaml, *.yml) found", {});
    }
    ClassifyDocuments();
    ResolveVariables();
    if (!(options_.settings_only && options_.backend_only)) LoadProvider();
    LoadBackend();
    cairn::LoadWatch(DocsOf(lists_.watches), result_.config.watch, diags_);
    if (options_.on_settings && !HasErrors(diags_)) options_.on_settings(result_.config, registry_);
    if (options_.settings_only) {
      Finish();
      return;
    }
    InstantiateModules();
    CheckValidations();
    LoadData();
    ExpandResources();
    if (too_many_instances_) {
      // Nothing after this would be worth its cost: what the stack's
      // instances refer to is not known.
      Finish();
      return;
    }
    LoadOutputs();
    LoadChecks();
    CheckLocals();
    MarkOutputsOfSensitiveOutputs();
    ResolveModuleOutputs();
    RecordForConsole();
    parsed_ = ParseCache();  // every string is evaluated: its trees are not needed again
    CheckAssembledKeys();
    LoadMoved();
    LoadRemoved();
    LoadImportDocuments();
    ResolveDependsOn();
    ResolveTriggers();
    CheckReferences();
    ValidateSpecs();
    RedactKeySources();
    DropParsedDocuments();
    BuildGraph();
    Finish();
  }

  // Every check that reads the manifests' YAML nodes or values is done:
  // they go before the graph, the last large thing built, which needs
  // neither (a fifth of the memory loading 100,000 resources peaks at).
  // Documents keep their file and scope, which Finish reads.
  void DropParsedDocuments() {
    for (Doc& doc : docs_) {
      doc.node = {};
      doc.value = Value();
    }
    spec_nodes_.clear();
    key_nodes_.clear();
    trees_.clear();
  }

  // The first stage (read_files.h); its diagnostics come first.
  ManifestFiles ReadFiles() {
    ReadFilesResult read = ReadManifestFiles(options_.paths, options_.recursive, env_);
    for (auto& d : read.diagnostics) diags_.push_back(std::move(d));
    if (result_.config.root.empty()) result_.config.root = std::move(read.root);
    return std::move(read.files);
  }

  // With --recursive, the files of module directories below the stack are
  // read too; they are the modules', not the stack's: dropped here, before
  // anything looks at them, and read again as modules.
  void DropModuleFiles() {
    std::set<std::string> module_dirs;
    for (const Doc& doc : docs_) {
      if (!doc.value.is_object() || doc.value.value("kind", Value()) != "module") continue;
      const Value source = doc.value.value("source", Value());
      if (!source.is_string()) continue;
      fs::path dir = fs::path(doc.dir) / source.get<std::string>();
      if (env_.IsDirectory(dir)) module_dirs.insert(env_.Canonical(dir));
    }
    if (module_dirs.empty()) return;
    std::erase_if(docs_,
                  [&](const Doc& doc) { return module_dirs.count(env_.Canonical(doc.dir)) > 0; });
    std::erase_if(result_.config.files, [&](const std::string& file) {
      return module_dirs.count(env_.Canonical(fs::path(file).parent_path().string())) > 0;
    });
  }

  std::vector<Diagnostic>& diags() { return diags_; }

  const char* GetEnv(const char* name) const {
    return options_.getenv ? options_.getenv(name) : env_.GetEnv(name);
  }

 private:
  // ---- diagnostics ------------------------------------------------------
  // A file Env::ReadFile refused (read_files.h).
  void ReportUnreadable(const std::string& summary, const Status& why, SourceLocation at,
                        std::string detail) {
    AddUnreadable(diags_, summary, why, std::move(at), std::move(detail));
  }

  void Error(std::string code, std::string summary, SourceLocation loc, std::string detail = "") {
    AddError(diags_, std::move(code), std::move(summary), std::move(loc), std::move(detail));
  }
  void Warn(std::string code, std::string summary, SourceLocation loc, std::string detail = "") {
    AddWarning(diags_, std::move(code), std::move(summary), std::move(loc), std::move(detail));
  }

  SourceLocation Loc(const std::string& file, const YamlNode& n) const { return NodeLoc(file, n); }

  YamlNode Child(const YamlNode& map, const std::string& key) const { return ChildNode(map, key); }

  // A scalar's location, and whether its text is written on one line
  // exactly as parsed, so that bytes of it can be pointed at.
  struct ScalarSpan {
    SourceLocation location;
    bool verbatim = false;
  };

  ScalarSpan SpanOf(const std::string& file, const YamlNode& n) {
    ScalarSpan span{Loc(file, n)};
    SourceLocation& l = span.location;
    if (!n.IsScalar() || !l.has_position()) return span;
    const std::string& s = n.Scalar();
    auto line = result_.sources.Line(file, l.line);
    if (!line) return span;
    size_t col0 = static_cast<size_t>(l.column - 1) + (n.quoted() ? 1 : 0);
    if (col0 > line->size() || line->compare(col0, s.size(), s) != 0) return span;
    l.column = static_cast<int>(col0) + 1;
    span.verbatim = true;
    return span;
  }

  // Bytes [offset, offset+length) of a scalar's text when it is verbatim;
  // else the whole node.
  static SourceLocation Narrow(const ScalarSpan& span, size_t offset, size_t length) {
    SourceLocation l = span.location;
    if (!span.verbatim) return l;
    l.column += static_cast<int>(offset);
    l.length = static_cast<int>(std::max<size_t>(1, length));
    return l;
  }

  SourceLocation SubLoc(const std::string& file, const YamlNode& n, size_t offset, size_t length) {
    return Narrow(SpanOf(file, n), offset, length);
  }

  // ---- registry, files, YAML ---------------------------------------------
  bool LoadRegistry() {
    if (options_.registry) {
      registry_ = options_.registry;
    } else {
      auto reg = options_.schema_dir.empty() ? SchemaRegistry::Embedded()
                                             : SchemaRegistry::Load(options_.schema_dir);
      if (!reg.ok()) {
        Error("schema_error", "cannot load the resource schemas: " + reg.status().message(), {});
        return false;
      }
      registry_ = *reg;
    }
    result_.registry = registry_;
    return true;
  }

  // The documents stage (documents.h): its files, documents, trees and
  // diagnostics join the loader's.
  void ParseFiles(const ManifestFiles& files) {
    Documents parsed = ParseDocuments(files, result_.sources);
    for (auto& file : parsed.files) result_.config.files.push_back(std::move(file));
    for (auto& d : parsed.diagnostics) diags_.push_back(std::move(d));
    if (docs_.empty()) docs_.reserve(parsed.docs.size());  // the stack's (modules' grow it)
    for (auto& doc : parsed.docs) docs_.push_back(std::move(doc));
    for (auto& tree : parsed.trees) trees_.push_back(std::move(tree));
    keyed_files_.insert(parsed.keyed_files.begin(), parsed.keyed_files.end());
  }

  // ---- documents ---------------------------------------------------------
  // Classifies docs_[begin, end), all of one scope (documents.h), and
  // enlists each one that is valid so far.
  void ClassifyDocuments(size_t begin = 0) {
    const std::vector<std::string> kinds = DocumentKinds(*registry_);
    for (size_t i = begin; i < docs_.size(); ++i) {
      if (ClassifyDocument(docs_[i], *registry_, kinds, diags_)) Enlist(i);
    }
  }

  // Adds a classified document to the list of its kind (document_lists.h).
  void Enlist(size_t i) { EnlistDocument(i, docs_[i], *registry_, lists_, scopes_); }

  // ---- variables ---------------------------------------------------------
  // A declared variable and the document declaring it; the scopes of the
  // stack and of its module instances (module_scopes.h).
  using VariableInfo = DeclaredVariable;
  using Scope = ModuleScope;

  // A ${module.NAME.OUTPUT} written in a document, its path made whole.
  struct ModuleUse {
    Expression expr;
    SourceLocation location;
    bool exact = false;
  };

  // A variable document's declaration, or nullopt when it repeats a name
  // already in `first`.
  std::optional<VariableInfo> ReadVariableDoc(size_t i,
                                              std::map<std::string, SourceLocation>& first) {
    const Doc& doc = docs_[i];
    SourceLocation name_loc = Loc(doc.file, Child(doc.node, "name"));
    if (auto [it, inserted] = first.emplace(doc.name, name_loc); !inserted) {
      Error("duplicate_variable", "variable \"" + doc.name + "\" is declared twice", name_loc,
            "first declared at " + LocationText(it->second));
      return std::nullopt;
    }
    VariableInfo info;
    static_cast<VariableDecl&>(info) = ParseVariableDecl(
        doc.name, doc.value,
        [&](const std::string& key) { return Loc(doc.file, Child(doc.node, key)); }, diags_);
    info.doc = i;
    return info;
  }

  // The stack's variables: declarations, then the values of the sources
  // (the variable files read here), resolved by the variables stage.
  void ResolveVariables() {
    std::map<std::string, SourceLocation> first;
    std::map<std::string, VariableDecl> decls;
    for (size_t i : scopes_[0].variable_docs) {
      if (auto info = ReadVariableDoc(i, first)) {
        decls.emplace(docs_[i].name, *info);
        variables_.emplace(docs_[i].name, std::move(*info));
      }
    }
    VariableSources sources;
    sources.getenv = [this](const char* name) { return GetEnv(name); };
    sources.vars = options_.vars;
    sources.plan_vars = options_.plan_vars;
    sources.settings_only = options_.settings_only;
    for (const auto& path : options_.var_files) {  // variable_files.h
      for (auto& entry : ReadVariableFile(env_, path, decls, result_.sources, diags_)) {
        sources.file_entries.push_back(std::move(entry));
      }
    }
    VariableValues resolved = ResolveVariableValues(decls, sources);
    diags_.insert(diags_.end(), resolved.diagnostics.begin(), resolved.diagnostics.end());
    result_.config.variables = std::move(resolved.values);
    scopes_[0].origins = std::move(resolved.origins);
    for (const std::string& name : resolved.sensitive) {
      result_.config.sensitive_variables.push_back(name);
      const Value& v = result_.config.variables[name];
      if (v.is_string()) RegisterSecret(v.get<std::string>());
    }
    for (const std::string& secret : resolved.secrets) RegisterSecret(secret);
    for (const auto& [name, info] : variables_) {
      if (info.ephemeral && result_.config.variables.count(name))
        result_.config.ephemeral_variables.push_back(name);
    }
  }

  // ---- modules ------------------------------------------------------------
  // Creates a scope for every instance of every module document, breadth
  // first (scopes_ grows as nested modules are found), with its documents
  // and its variables' values. Nothing is expanded yet: resources and
  // outputs of every scope are loaded together afterwards.
  void InstantiateModules() {
    for (size_t s = 0; s < scopes_.size(); ++s) {
      std::map<std::string, SourceLocation> first;
      const std::vector<size_t> calls = scopes_[s].module_docs;
      for (size_t di : calls) InstantiateModule(s, di, first);
    }
  }

  void InstantiateModule(size_t s, size_t di, std::map<std::string, SourceLocation>& first) {
    const Doc doc = docs_[di];  // a copy: docs_ grows below
    SourceLocation name_loc = Loc(doc.file, Child(doc.node, "name"));
    if (auto [it, inserted] = first.emplace(doc.name, name_loc); !inserted) {
      Error("duplicate_module", "module \"" + doc.name + "\" is declared twice", name_loc,
            "first declared at " + LocationText(it->second));
      return;
    }
    ModuleCall& call = scopes_[s].calls[doc.name];
    call.doc = di;
    call.broken = true;  // until it is complete
    if (doc.value.contains("depends_on")) {
      call.depends_on = LoadDependsOn(doc, scopes_[s].path, diags_);
    }
    std::optional<ModuleSource> source = CheckModuleSource(scopes_, s, doc, env_, diags_);
    if (!source) return;
    const std::string& dir = source->dir;
    const std::string& canonical = source->canonical;
    const SourceLocation& source_loc = source->location;
    Instances declared;
    bool expanded = EvalInstances(docs_[di], "module", declared);
    call.mode = declared.mode;
    if (!expanded) return;
    const std::vector<AddressIndex>& indexes = declared.indexes;
    const std::vector<Value>& each_values = declared.each_values;
    if (indexes.empty() && !module_docs_.count(canonical)) {
      Scope unused = ChildScope(scopes_, s, doc.name, {}, canonical, di);
      unused.unused = true;
      scopes_.push_back(std::move(unused));
      AddModuleDocuments(scopes_.size() - 1, dir, source_loc);
    }
    if (scopes_.size() + indexes.size() > kMaxModuleInstances) {
      Error("too_many_modules",
            "more than " + std::to_string(kMaxModuleInstances) + " module instances", doc.location);
      return;
    }
    const Value& inputs = doc.value.contains("inputs") ? doc.value["inputs"] : Value();
    YamlNode inputs_node = Child(doc.node, "inputs");
    if (!inputs.is_null() && !inputs.is_object()) {
      Error("wrong_type",
            "inputs must be a mapping of the module's variables to values, not " +
                ValueTypeNoun(inputs),
            Loc(doc.file, inputs_node));
      return;
    }
    // Every instance's inputs first, while docs_ does not move; with each
    // input built from a sensitive variable, what makes it sensitive.
    std::vector<Value> values;
    std::vector<std::map<std::string, std::string>> sensitive(indexes.size());
    std::vector<std::set<std::string>> ephemeral(indexes.size());
    for (size_t k = 0; k < indexes.size(); ++k) {
      std::optional<int> count_index;
      std::string each_key;
      EvalContext ctx;
      ctx.doc = &docs_[di];
      ctx.resource_refs = true;
      ctx.module_inputs = true;
      ctx.ephemeral = EvalContext::Ephemeral::kAnywhere;
      ctx.count_index = &count_index;
      if (const int* i = std::get_if<int>(&indexes[k])) count_index = *i;
      if (const std::string* key = std::get_if<std::string>(&indexes[k])) {
        each_key = *key;
        ctx.each_key = &each_key;
        ctx.each_value = &each_values[k];
      }
      values.push_back(inputs.is_null() ? Value::object() : Eval(inputs, inputs_node, "", ctx));
      for (const auto& [pointer, from] : ctx.sensitive) {
        std::string input = pointer.substr(1, pointer.find('/', 1) - 1);
        if (expr::IsEphemeralOrigin(from)) ephemeral[k].insert(input);
        sensitive[k].emplace(input, SensitiveText(s, from));
      }
    }
    std::vector<std::pair<AddressIndex, size_t>> instances;
    for (size_t k = 0; k < indexes.size(); ++k) {
      scopes_.push_back(ChildScope(scopes_, s, doc.name, indexes[k], canonical, di));
      instances.emplace_back(indexes[k], scopes_.size() - 1);
      AddModuleDocuments(scopes_.size() - 1, dir, source_loc);
      ResolveModuleVariables(scopes_.size() - 1, values[k], sensitive[k]);
      scopes_.back().ephemeral_inputs = std::move(ephemeral[k]);
    }
    ModuleCall& done = scopes_[s].calls[doc.name];  // scopes_ moved
    done.instances = std::move(instances);
    done.broken = false;
  }

  // "app[0].db" for scope module.app[0].module.db: how messages name it.
  std::string ScopeName(size_t s) const { return ModuleScopeName(scopes_, s); }

  // The documents of module scope `s`: its directory is read and checked
  // once, then its valid documents are copied for every further instance.
  void AddModuleDocuments(size_t s, const std::string& dir, const SourceLocation& source_loc) {
    auto cached = module_docs_.find(scopes_[s].dir);
    if (cached == module_docs_.end()) {
      std::vector<std::pair<std::string, std::string>> files;
      for (auto& f : ManifestFilesIn(env_, dir, false)) files.emplace_back(std::move(f), "");
      if (files.empty()) {
        Error("module_not_found", "module source " + dir + " holds no manifest files", source_loc,
              "a module is a directory of *.yaml or *.yml files");
      }
      ReadContents(env_, files, diags_);
      size_t begin = docs_.size();
      ParseFiles(files);
      for (size_t i = begin; i < docs_.size(); ++i) docs_[i].scope = s;
      ClassifyDocuments(begin);
      module_docs_.emplace(scopes_[s].dir, std::make_pair(begin, docs_.size()));
      return;
    }
    auto [begin, end] = cached->second;
    for (size_t i = begin; i < end; ++i) {
      if (docs_[i].kind.empty()) continue;  // refused when first read
      Doc copy = docs_[i];
      copy.scope = s;
      docs_.push_back(std::move(copy));
      Enlist(docs_.size() - 1);
    }
  }

  // A module instance's variables, checked like a stack's: each takes its
  // input (evaluated where the module is declared) or its default. An input
  // built from a sensitive value (`sensitive`: input -> what it was built
  // from) makes its variable sensitive inside the module.
  void ResolveModuleVariables(size_t s, const Value& inputs,
                              const std::map<std::string, std::string>& sensitive) {
    std::map<std::string, SourceLocation> first;
    std::map<std::string, VariableInfo> vars;
    for (size_t i : scopes_[s].variable_docs) {
      if (auto info = ReadVariableDoc(i, first)) vars.emplace(docs_[i].name, std::move(*info));
    }
    ModuleInputs resolved =
        ResolveModuleInputs(vars, inputs, sensitive, docs_[scopes_[s].call_doc], ScopeName(s));
    for (auto& d : resolved.diagnostics) diags_.push_back(std::move(d));
    for (const std::string& secret : resolved.secrets) RegisterSecret(secret);
    scopes_[s].sensitive_inputs = std::move(resolved.sensitive_inputs);
    scopes_[s].origins = std::move(resolved.origins);
    scopes_[s].variables = std::move(vars);
    scopes_[s].values = std::move(resolved.values);
  }

  // The scope a module path names (module_scopes.h).
  std::variant<size_t, std::string> FindScope(const std::vector<ModuleStep>& path) const {
    return FindModuleScope(scopes_, path);
  }

  // The value of output `name` of module scope `s`, module outputs in it
  // substituted; null inside a cycle of outputs (reported).
  const Value* ModuleOutputValue(size_t s, const std::string& name) {
    const std::string key = scopes_[s].prefix + name;
    if (auto done = module_output_values_.find(key); done != module_output_values_.end())
      return &done->second;
    const OutputConfig& out = outputs_[scopes_[s].outputs.at(name)];
    auto on_path = std::find(resolving_.begin(), resolving_.end(), key);
    if (on_path != resolving_.end()) {
      std::string cycle;
      for (auto it = on_path; it != resolving_.end(); ++it) cycle += *it + " -> ";
      Error("dependency_cycle", "dependency cycle: " + cycle + key, out.location,
            "module outputs refer to each other; break the cycle by removing one of these "
            "references");
      return nullptr;
    }
    resolving_.push_back(key);
    const size_t doc = output_docs_of_[scopes_[s].outputs.at(name)];
    Value v = SubstituteModuleOutputs(out.value, doc, nullptr);
    resolving_.pop_back();
    return &(module_output_values_[key] = std::move(v));
  }

  // Output `name` of the module instance `path`, in expression form, its
  // own module outputs substituted; nullopt when there is none (reported
  // where it was written) or it is in a cycle.
  std::optional<Value> LookupModuleOutput(const std::vector<ModuleStep>& path,
                                          const std::string& name) {
    auto found = FindScope(path);
    const size_t* s = std::get_if<size_t>(&found);
    if (!s || !scopes_[*s].outputs.count(name)) return std::nullopt;
    const Value* v = ModuleOutputValue(*s, name);
    if (!v) return std::nullopt;
    return *v;
  }

  // `v` (in expression form, found in document `doc`) with every module
  // output its residuals name put in place (evaluate.h,
  // EvalInputs::module_output). The resource references that arrive this
  // way are added to `refs` with the JSON pointer of their string.
  Value SubstituteModuleOutputs(const Value& v, size_t doc,
                                std::vector<std::pair<std::string, FoundReference>>* refs,
                                const std::string& pointer = "") {
    if (v.is_array()) {
      Value out = Value::array();
      for (size_t i = 0; i < v.size(); ++i)
        out.push_back(SubstituteModuleOutputs(v[i], doc, refs, pointer + "/" + std::to_string(i)));
      return out;
    }
    if (v.is_object()) {
      Value out = Value::object();
      for (auto it = v.begin(); it != v.end(); ++it)
        out[it.key()] =
            SubstituteModuleOutputs(*it, doc, refs, pointer + "/" + PointerToken(it.key()));
      return out;
    }
    if (!v.is_string() || v.get_ref<const std::string&>().find("module[") == std::string::npos)
      return v;
    EvalInputs in;
    in.resource_refs = true;
    in.workspace = &result_.config.workspace;
    in.module_output = [this](const std::vector<ModuleStep>& path, const std::string& name) {
      return LookupModuleOutput(path, name);
    };
    in.shape = [this](const std::string& base) { return ShapeOf(base); };
    in.parsed = &parsed_;
    const Doc& d = docs_[doc];
    SourceLocation at = d.kind == "output" ? Loc(d.file, Child(d.node, "value")) : d.location;
    std::vector<Diagnostic> ignored;  // reported where the outputs are
    Evaluated e = EvaluateString(
        v.get_ref<const std::string&>(), in, [&](size_t, size_t) { return at; }, ignored);
    if (e.private_key) {
      // Pieces of a key met where the outputs are put in place.
      Error("private_key_material", "private key material in a value", at,
            "it was assembled from module outputs; only public keys belong in a stack, and the "
            "key is not shown");
      key_nodes_.emplace_back(doc, d.kind == "output" ? Child(d.node, "value") : d.node);
      return Value();  // the key goes no further
    }
    if (e.failed) return v;
    if (refs) {
      for (FoundReference& r : e.references) {
        if (r.expr.type == Expression::Type::kResource) refs->emplace_back(pointer, std::move(r));
      }
    }
    return std::move(e.value);
  }

  // Checks every ${module...OUTPUT} where it is written, then puts the
  // outputs' values in their place. The resource references that arrive in
  // a resource this way, or through a module's inputs, join the graph as
  // derived uses.
  void ResolveModuleOutputs() {
    if (scopes_.size() == 1 && module_uses_.empty()) return;
    for (const ModuleUse& use : module_uses_) {
      if (auto found = CheckModuleOutputUse(scopes_, *registry_, use.expr, use.location, diags_))
        ModuleOutputValue(*found, use.expr.attr);
    }
    // The resource references that arrive with an output join the graph
    // where they arrive, as derived uses (reported where they were written).
    auto derive = [&](std::vector<std::pair<std::string, FoundReference>>& found, int resource,
                      const std::string& output, size_t doc) {
      for (auto& [pointer, ref] : found) {
        WrittenReference use{std::move(ref.expr), doc, pointer, resource, output, false,
                             ref.location};
        use.derived = true;
        pending_refs_.push_back(std::move(use));
      }
    };
    for (size_t i = 0; i < resources_.size(); ++i) {
      std::vector<std::pair<std::string, FoundReference>> found;
      resources_[i].spec =
          SubstituteModuleOutputs(resources_[i].spec, resource_docs_of_[i], &found);
      derive(found, static_cast<int>(i), "", resource_docs_of_[i]);
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (output_scope_[i] != 0) continue;
      std::vector<std::pair<std::string, FoundReference>> found;
      outputs_[i].value = SubstituteModuleOutputs(outputs_[i].value, output_docs_of_[i], &found);
      derive(found, -1, outputs_[i].name, output_docs_of_[i]);
    }
  }

  // ---- expressions -------------------------------------------------------
  // Reads file() targets once, relative to the manifest's directory.
  std::optional<std::string> ReadFileExpr(const Doc& doc, const std::string& rel,
                                          const SourceLocation& at) {
    std::string display = (fs::path(doc.dir) / rel).lexically_normal().string();
    auto cached = file_cache_.find(display);
    if (cached != file_cache_.end()) return cached->second;
    std::optional<std::string> content;
    auto read = env_.ReadFile(display, kMaxFileFunctionBytes);
    if (!read.ok()) {
      ReportUnreadable("cannot read file \"" + rel + "\"", read.status(), at,
                       "file() paths are relative to the directory of the manifest: " + display);
    } else {
      std::string text = std::move(*read);
      if (AddSourceRefusingKeys(result_.sources, display, text, &at, diags_)) {
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
        content = std::move(text);
      }
    }
    file_cache_.emplace(display, content);
    return content;
  }

  // ${var.NAME} in document `doc`: a module's own variables inside a
  // module, the stack's outside; nullopt (reported unless it was already)
  // when it has no value.
  std::optional<Value> VariableValue(const Doc& doc, const std::string& name,
                                     const SourceLocation& at) {
    if (doc.scope != 0) {
      const Scope& sc = scopes_[doc.scope];
      if (auto it = sc.values.find(name); it != sc.values.end()) return it->second;
      if (!sc.variables.count(name)) {
        std::vector<std::string> names;
        for (const auto& [n, info] : sc.variables) names.push_back(n);
        Error("unknown_variable",
              "reference to undeclared variable \"" + name + "\" in module " + ScopeName(doc.scope),
              at, DidYouMean(name, names));
      }  // else: without a value, reported once already
      return std::nullopt;
    }
    auto it = result_.config.variables.find(name);
    if (it != result_.config.variables.end()) return EscapeTemplateValue(it->second);
    if (!variables_.count(name)) {
      std::vector<std::string> names;
      for (const auto& [n, info] : variables_) names.push_back(n);
      Error("unknown_variable", "reference to undeclared variable \"" + name + "\"", at,
            DidYouMean(name, names));
    } else if (options_.settings_only) {
      Error("missing_variable", "variable \"" + name + "\" has no value", at,
            "set it with --var " + name + "=VALUE, a --var-file or CAIRN_VAR_" + name);
    }  // else: declared without a value, reported once already
    return std::nullopt;
  }

  // Whether ${var.NAME} in scope `s` is sensitive: declared so, or (in a
  // module) given an input built from a sensitive value.
  bool VariableIsSensitive(size_t s, const std::string& name) const {
    const auto& vars = s == 0 ? variables_ : scopes_[s].variables;
    auto var = vars.find(name);
    if (var != vars.end() && var->second.sensitive) return true;
    return s != 0 && scopes_[s].sensitive_inputs.count(name) > 0;
  }

  // Whether ${var.NAME} in scope `s` is ephemeral: declared so, or (in a
  // module) given an input built from an ephemeral value.
  bool VariableIsEphemeral(size_t s, const std::string& name) const {
    const auto& vars = s == 0 ? variables_ : scopes_[s].variables;
    auto var = vars.find(name);
    if (var != vars.end() && var->second.ephemeral) return true;
    return s != 0 && scopes_[s].ephemeral_inputs.count(name) > 0;
  }

  // A string of `doc` read ephemeral value `source` ("var.pw") and made
  // `value` at `pointer`: refused where ctx.ephemeral says it may not go.
  // Wherever it may go but a write-only field, its value must be known at
  // load: a residual waiting for a resource would carry it into the plan.
  void CheckEphemeralUse(const Doc& doc, const std::string& source, const Value& value,
                         const std::string& pointer, const EvalContext& ctx,
                         const SourceLocation& at) {
    using E = EvalContext::Ephemeral;
    if (ctx.ephemeral == E::kAnywhere) return;
    const std::string what = "ephemeral variable \"" + source.substr(source.find('.') + 1) + "\"";
    const char* kWhere =
        "an ephemeral value may be used only in a write-only field (instance.user_data), the "
        "provider document, a local, a module's input or a condition: Cairn keeps it nowhere";
    if (ctx.ephemeral == E::kWriteOnly && ctx.write_only) {
      std::string field = pointer.size() > 1 ? pointer.substr(1, pointer.find('/', 1) - 1) : "";
      if (std::find(ctx.write_only->begin(), ctx.write_only->end(), field) !=
          ctx.write_only->end()) {
        return;
      }
      Error("ephemeral_not_allowed",
            what + " cannot be used in " +
                (field.empty() ? std::string("this resource") : "field \"" + field + "\"") +
                " of " + doc.kind + " \"" + doc.name + "\": the state and plans keep its value",
            at, kWhere);
      return;
    }
    if (ctx.ephemeral == E::kKnownAtLoad) {
      if (!(value.is_string() && HasTemplateSyntax(value.get_ref<const std::string&>()))) return;
      Error("ephemeral_not_allowed",
            what +
                " is used in a value that waits for a resource: the plan would keep it until "
                "apply",
            at,
            "outside a write-only field, an expression reading an ephemeral value must be "
            "known when the manifests load");
      return;
    }
    // "output \"o\"", "the count of network \"many\"", "the backend document".
    const std::string named =
        doc.name.empty() ? "the " + doc.kind + " document" : doc.kind + " \"" + doc.name + "\"";
    const std::string_view where = ctx.where ? ctx.where : "";
    Error("ephemeral_not_allowed",
          what + " cannot be used in " +
              (where.empty() || where.starts_with("a ")
                   ? named
                   : "the " + std::string(where) + " of " + named) +
              ": Cairn would keep its value",
          at, kWhere);
  }

  // How a message names sensitive variable `name` of scope `s`: `sensitive
  // variable "pw"`, or, for an input that made it sensitive, `variable "pw",
  // whose input is built from sensitive variable "s"`.
  std::string SensitiveVariableText(size_t s, const std::string& name) const {
    const auto& vars = s == 0 ? variables_ : scopes_[s].variables;
    auto var = vars.find(name);
    if (var != vars.end() && var->second.sensitive) return "sensitive variable \"" + name + "\"";
    if (s != 0) {
      auto why = scopes_[s].sensitive_inputs.find(name);
      if (why != scopes_[s].sensitive_inputs.end())
        return "variable \"" + name + "\", whose input is built from " + why->second;
    }
    return "variable \"" + name + "\"";
  }

  // How a message names what made a value sensitive (an origin of its
  // mark, evaluate.h): a variable of scope `s` as SensitiveVariableText
  // does, anything else as written ("sensitive()").
  std::string SensitiveText(size_t s, const std::string& from) const {
    if (from.rfind("var.", 0) == 0) return SensitiveVariableText(s, from.substr(4));
    // A stack data source's output: "data.stack.NAME.outputs.OUT".
    if (size_t at = from.find(".outputs."); from.rfind("data.stack.", 0) == 0 && at != from.npos)
      return "sensitive output \"" + from.substr(at + 9) + "\" of " + from.substr(0, at);
    return from == "sensitive()" ? "a value marked sensitive()" : from;
  }

  // ---- validation ------------------------------------------------------------
  // Every variable's `validation` conditions, in every scope, against the
  // value it has (one known only after apply is not checked). A failed one
  // is reported where the value came from, with the condition named; the
  // value itself is never shown.
  void CheckValidations() {
    for (size_t s = 0; s < scopes_.size(); ++s) {
      if (scopes_[s].unused) continue;
      const auto& vars = s == 0 ? variables_ : scopes_[s].variables;
      for (const auto& [name, info] : vars) CheckValidation(s, name, info);
    }
  }

  // The validations of variable `name` of scope `s` (variable_validations.h).
  void CheckValidation(size_t s, const std::string& name, const VariableInfo& info) {
    const Doc& doc = docs_[info.doc];
    if (!doc.value.contains("validation")) return;
    ValidatedVariable variable;
    variable.doc = &doc;
    variable.name = name;
    variable.location = info.location;
    if (s != 0) variable.module = ScopeName(s);
    variable.has_value =
        (s == 0 ? result_.config.variables.count(name) > 0 : scopes_[s].values.count(name) > 0) &&
        !options_.settings_only;
    if (auto origin = scopes_[s].origins.find(name); origin != scopes_[s].origins.end())
      variable.origin = &origin->second;
    variable.sensitive = VariableIsSensitive(s, name);
    auto evaluate = [&](const Value& v, const YamlNode& node, const char* where) {
      EvalContext ctx;
      ctx.doc = &doc;
      ctx.where = where;
      ctx.ephemeral = EvalContext::Ephemeral::kKnownAtLoad;
      size_t errors = ErrorCount();
      ValidationField out;
      out.value = Eval(v, node, "", ctx);
      out.failed = ErrorCount() != errors;
      out.sensitive = !ctx.sensitive.empty();
      return out;
    };
    CheckVariableValidations(variable, evaluate, diags_);
  }

  // ---- locals (locals.h) ---------------------------------------------------
  // ${local.NAME} in scope `s`, evaluated the first time it is read.
  std::optional<LocalValue> LocalValueOf(size_t s, const std::string& name,
                                         const SourceLocation& at) {
    return locals_.Get(s, name, at);
  }

  // A local document's value, evaluated in its own document's scope.
  LocalEvaluation EvaluateLocal(const Doc& doc) {
    EvalContext ctx;
    ctx.doc = &doc;
    ctx.resource_refs = true;
    ctx.ephemeral = EvalContext::Ephemeral::kKnownAtLoad;
    size_t errors = ErrorCount();
    LocalEvaluation out;
    out.value = Eval(doc.value["value"], Child(doc.node, "value"), "", ctx);
    out.ok = ErrorCount() == errors;
    out.sensitive = std::move(ctx.sensitive);
    return out;
  }

  // Every local of every scope, read or not: a mistake in one is reported
  // even when nothing uses it. The stack's end up in the config.
  void CheckLocals() {
    for (size_t s = 0; s < scopes_.size(); ++s) {
      if (!scopes_[s].unused) locals_.EvaluateAll(s);
    }
    for (const auto& [name, st] : locals_.Of(0)) {
      if (st.state != DeclaredLocal::kDone) continue;
      const LocalValue& v = st.value;
      result_.config.locals[name] =
          v.residual ? Value(expr::PrintTemplate(*v.residual)) : ToExpressionForm(v.value);
      if (v.value.DeepSensitive()) result_.config.sensitive_locals.push_back(name);
    }
  }

  size_t ErrorCount() const {
    return static_cast<size_t>(std::count_if(diags_.begin(), diags_.end(), [](const Diagnostic& d) {
      return d.severity == Severity::kError;
    }));
  }

  // ---- shapes ----------------------------------------------------------------
  // How the resource at base address `base` expands, computed the first
  // time it is asked for (its count or for_each read only variables and
  // locals), or null when it is not declared or does not expand.
  const ResourceShape* ShapeOf(const std::string& base) {
    if (auto it = shapes_.find(base); it != shapes_.end())
      return it->second ? &*it->second : nullptr;
    if (shape_docs_seen_ != lists_.resources.size()) {
      for (size_t i = shape_docs_seen_; i < lists_.resources.size(); ++i) {
        const Doc& doc = docs_[lists_.resources[i]];
        shape_docs_.emplace(scopes_[doc.scope].prefix + doc.kind + "." + doc.name,
                            lists_.resources[i]);
      }
      shape_docs_seen_ = lists_.resources.size();
    }
    auto doc = shape_docs_.find(base);
    if (doc == shape_docs_.end()) return nullptr;
    shapes_[base] = std::nullopt;  // while computing: a count that reads itself gets no shape
    const Instances* inst = InstancesOf(doc->second);
    if (!inst) return nullptr;
    ResourceShape shape;
    shape.mode = inst->mode;
    shape.indexes = inst->indexes;
    shape.attributes = &registry_->Attributes(docs_[doc->second].kind);
    return &*(shapes_[base] = std::move(shape));
  }

  // A resource document's instances (EvalInstances once per document); null
  // when they cannot be known (reported).
  const Instances* InstancesOf(size_t doc) {
    auto& [ok, instances] = InstancesEntry(doc);
    return ok ? &instances : nullptr;
  }

  // Whether document `doc`'s instances are known, and they (or, when not,
  // the mode it asked for).
  std::pair<bool, Instances>& InstancesEntry(size_t doc) {
    auto it = instances_.find(doc);
    if (it == instances_.end()) {
      Instances out;
      bool ok = EvalInstances(docs_[doc], "resource", out);
      it = instances_.emplace(doc, std::make_pair(ok, std::move(out))).first;
    }
    return it->second;
  }

  // One string through the evaluation stage (evaluate.h), with what
  // document `ctx.doc` may read; the references it keeps are recorded for
  // CheckReferences and ResolveModuleOutputs.
  Value EvalString(const std::string& s, const YamlNode& node, const std::string& pointer,
                   const EvalContext& ctx) {
    const Doc& doc = *ctx.doc;
    if (!ctx.inputs) {
      EvalInputs& in = ctx.inputs.emplace();
      in.variable = [this, &doc](const std::string& name, const SourceLocation& at) {
        return VariableValue(doc, name, at);
      };
      in.variable_sensitive = [this, &doc](const std::string& name) {
        return VariableIsSensitive(doc.scope, name);
      };
      in.variable_ephemeral = [this, &doc](const std::string& name) {
        return VariableIsEphemeral(doc.scope, name);
      };
      in.local = [this, &doc](const std::string& name, const SourceLocation& at) {
        return LocalValueOf(doc.scope, name, at);
      };
      in.getenv = [this](const char* name) { return GetEnv(name); };
      in.read_file = [this, &doc](const std::string& rel, const SourceLocation& at) {
        return ReadFileExpr(doc, rel, at);
      };
      in.file_exists = [this, &doc](const std::string& rel) {
        std::string path = (fs::path(doc.dir) / rel).lexically_normal().string();
        return env_.Exists(path) && !env_.IsDirectory(path);
      };
      if (!doc.dir.empty()) in.path_module = &doc.dir;
      if (!result_.config.root.empty()) in.path_root = &result_.config.root;
      in.workspace = &result_.config.workspace;
      in.shape = [this](const std::string& base) { return ShapeOf(base); };
      in.stack_outputs = [this](const std::string& name, const SourceLocation& at) {
        return StackOutputsOf(name, at);
      };
      in.parsed = &parsed_;
      if (ctx.count_index) in.count_index = *ctx.count_index;
      in.each_key = ctx.each_key;
      in.each_value = ctx.each_value;
      in.resource_refs = ctx.resource_refs;
      if (ctx.where) in.where = ctx.where;
      in.allow_self = ctx.allow_self;
      in.module = scopes_[doc.scope].path;
    }
    // Found once for the string, not per expression: that would be
    // quadratic in the number of expressions. One pointer captured, so that
    // the std::function holds it without allocating.
    struct Span {
      Loader* self;
      const std::string& file;
      const YamlNode& node;
      std::optional<ScalarSpan> span;
    } at{this, doc.file, node, std::nullopt};
    auto locate = [&at](size_t offset, size_t length) {
      if (!at.span) at.span = at.self->SpanOf(at.file, at.node);
      return Narrow(*at.span, offset, length);
    };
    Evaluated e = EvaluateString(s, *ctx.inputs, locate, diags_);
    for (FoundReference& ref : e.references) {
      if (ref.expr.type == Expression::Type::kModuleOutput) {
        if (!ref.derived) module_uses_.push_back({std::move(ref.expr), ref.location, ref.exact});
      } else {
        WrittenReference use{std::move(ref.expr),
                             static_cast<size_t>(&doc - docs_.data()),
                             pointer,
                             ctx.resource,
                             ctx.output,
                             ref.exact,
                             ref.location};
        use.check_only = ctx.module_inputs;
        use.derived = ref.derived;
        pending_refs_.push_back(std::move(use));
      }
    }
    for (const std::string& from : e.sensitive) ctx.sensitive.emplace_back(pointer, from);
    if (std::string source = EphemeralSource(e.sensitive); !source.empty() && !e.failed)
      CheckEphemeralUse(doc, source, e.value, pointer, ctx, locate(0, s.size()));
    ctx.failed = ctx.failed || e.failed;
    if (e.private_key) key_nodes_.emplace_back(static_cast<size_t>(&doc - docs_.data()), node);
    return std::move(e.value);
  }

  // Whether Eval would change `v`: a string with template syntax in it,
  // anywhere. A value without one is copied as it is, its YAML node and
  // JSON pointer never looked up: most of a spec's fields (callgrind of
  // `cairn validate` of 14,000 resources: 12% fewer instructions making
  // the instances).
  static bool HoldsTemplate(const Value& v) {
    if (v.is_string()) return HasTemplateSyntax(v.get_ref<const std::string&>());
    if (v.is_array() || v.is_object()) {
      for (const Value& item : v) {
        if (HoldsTemplate(item)) return true;
      }
    }
    return false;
  }

  Value Eval(const Value& v, const YamlNode& node, const std::string& pointer,
             const EvalContext& ctx) {
    if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      if (!HasTemplateSyntax(s)) return v;
      return EvalString(s, node, pointer, ctx);
    }
    if (v.is_array()) {
      Value out = Value::array();
      auto& items = out.get_ref<Value::array_t&>();
      items.reserve(v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        if (!HoldsTemplate(v[i])) {
          items.push_back(v[i]);
          continue;
        }
        YamlNode child = node.IsSequence() && i < node.size() ? node[i] : node;
        items.push_back(Eval(v[i], child, pointer + "/" + std::to_string(i), ctx));
      }
      return out;
    }
    if (v.is_object()) {
      Value out = Value::object();
      auto& fields = out.get_ref<Value::object_t&>();
      // In key order, as the object holds them: each goes at the end.
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!HoldsTemplate(*it)) {
          fields.emplace_hint(fields.end(), it.key(), *it);
          continue;
        }
        YamlNode child = Child(node, it.key());
        if (!child.IsDefined()) child = node;
        fields.emplace_hint(fields.end(), it.key(),
                            Eval(*it, child, pointer + "/" + PointerToken(it.key()), ctx));
      }
      return out;
    }
    return v;
  }

  // A language-document field evaluated without resources (provider, backend).
  Value EvalPlain(const Doc& doc, const std::string& key, const char* where) {
    EvalContext ctx;
    ctx.doc = &doc;
    ctx.where = where;
    // The provider's settings are used, never kept; the backend's are kept
    // in saved plans.
    if (doc.kind == "provider") ctx.ephemeral = EvalContext::Ephemeral::kKnownAtLoad;
    return Eval(doc.value[key], Child(doc.node, key), "", ctx);
  }

  // ---- provider and backend (settings.h) ----------------------------------
  EvalSetting SettingEvaluator() {
    return [this](const Doc& doc, const std::string& key, const char* where) {
      return EvalPlain(doc, key, where);
    };
  }

  std::vector<const Doc*> DocsOf(const std::vector<size_t>& indexes) const {
    std::vector<const Doc*> out;
    for (size_t i : indexes) out.push_back(&docs_[i]);
    return out;
  }

  void LoadProvider() {
    cairn::LoadProvider(DocsOf(lists_.providers), SettingEvaluator(), result_.config.provider,
                        diags_);
  }

  void LoadBackend() {
    cairn::LoadBackend(DocsOf(lists_.backends), SettingEvaluator(), result_.config.backend, diags_);
  }

  // ---- resources -----------------------------------------------------------
  // The instances a resource or module document declares
  // (declared_instances.h): enabled, count and for_each evaluated
  // (variables only, no resources), then expanded.
  bool EvalInstances(const Doc& doc, const std::string& what, Instances& out) {
    return DeclaredInstances(
        doc, what, [this](const Doc& d, const char* key) { return EvalInstanceField(d, key); }, out,
        diags_);
  }

  // Field `key` of `doc` for DeclaredInstances. The resource references it
  // makes are checked where they are written, not kept: only named.
  InstanceField EvalInstanceField(const Doc& doc, const char* key) {
    EvalContext ctx;
    ctx.doc = &doc;
    ctx.where = key;
    const bool enabled = std::string_view(key) == "enabled";
    const size_t errors = enabled ? ErrorCount() : 0;
    const size_t before = diags_.size();
    const size_t refs = pending_refs_.size();
    InstanceField field;
    field.value = Eval(doc.value[key], Child(doc.node, key), "", ctx);
    // enabled fails on an error; count and for_each on any diagnostic.
    field.failed = enabled ? ErrorCount() != errors : ctx.failed || diags_.size() != before;
    for (size_t r = refs; r < pending_refs_.size(); ++r) {
      field.references.push_back(pending_refs_[r].expr.ToString());
    }
    pending_refs_.resize(refs);
    return field;
  }

  // A list of {condition, error_message} (condition_lists.h) under `key` of `doc` (its value
  // `list`, its node `node`), each evaluated in `ctx`: known at load, or
  // kept as a residual for plan or apply. `self` may be read when
  // `allow_self` (postconditions).
  std::vector<ConditionConfig> LoadConditions(const Doc& doc, const Value& list,
                                              const YamlNode& node, const std::string& key,
                                              EvalContext& ctx, bool allow_self) {
    auto evaluate = [&](const Value& item, const YamlNode& inode) {
      EvaluatedCondition e;
      size_t errors = ErrorCount();
      ctx.inputs.reset();
      ctx.allow_self = allow_self;
      // A condition keeps only whether it held, once decided.
      const auto ephemeral = ctx.ephemeral;
      ctx.ephemeral = EvalContext::Ephemeral::kKnownAtLoad;
      // The context's sensitive marks are its document's: a condition reads
      // what it likes without making the resource or output sensitive.
      const auto marks = ctx.sensitive;
      e.condition = Eval(item["condition"], Child(inode, "condition"), "/lifecycle", ctx);
      ctx.sensitive = marks;
      e.error_message =
          Eval(item["error_message"], Child(inode, "error_message"), "/lifecycle", ctx);
      e.message_sensitive = ctx.sensitive.size() != marks.size();
      ctx.sensitive = marks;
      ctx.allow_self = false;
      ctx.ephemeral = ephemeral;
      ctx.inputs.reset();
      e.failed = ErrorCount() != errors;
      return e;
    };
    return LoadConditionList(doc, list, node, key, evaluate, diags_);
  }

  // Every resource document declared (resource_declarations.h), then
  // each one's instances made, their specs evaluated. Over
  // options_.max_instances, none is.
  void ExpandResources() {
    ResourceDeclarations declared = DeclareResources(
        docs_, lists_.resources, scopes_, *registry_, options_.max_instances,
        [this](size_t doc) -> const std::pair<bool, Instances>& { return InstancesEntry(doc); },
        diags_);
    groups_.merge(declared.broken);
    spec_nodes_ = std::move(declared.spec_nodes);
    depends_on_ = std::move(declared.depends_on);
    if (declared.too_many_instances) {
      too_many_instances_ = true;
      return;
    }
    size_t instances = resources_.size();
    for (const DeclaredResource& r : declared.resources) instances += r.instances.indexes.size();
    resources_.reserve(instances);
    resource_docs_of_.reserve(instances);
    for (DeclaredResource& r : declared.resources) {
      MakeInstances(r);
      r = DeclaredResource();  // made: what it held goes before the next is made
    }
  }

  void MakeInstances(DeclaredResource& p) {
    const size_t di = p.doc;
    const Doc& doc = docs_[di];
    const Scope& scope = scopes_[doc.scope];
    const std::string& base = p.base;
    ResourceGroup& group = p.group;
    const std::vector<AddressIndex>& indexes = p.instances.indexes;
    const std::vector<Value>& each_values = p.instances.each_values;
    const Lifecycle& lifecycle = p.lifecycle;
    const Value* spec = p.spec;
    const YamlNode& spec_node = p.spec_node;
    const auto& fields = registry_->Fields(doc.kind);
    bool has_name_field = std::find(fields.begin(), fields.end(), "name") != fields.end();
    // Where plan-time errors point: the resource's name, a field of its spec.
    const SourceLocation name_location = Loc(doc.file, Child(doc.node, "name"));
    auto field_locations = std::make_shared<FieldLocations>();
    field_locations->file = doc.file;
    if (spec_node.IsMap()) field_locations->fields.reserve(spec_node.size());
    for (const auto& [key, value] : spec_node.IsMap() ? spec_node.pairs() : kNoPairs) {
      if (!key.IsScalar()) continue;
      SourceLocation at = Loc("", value);
      field_locations->fields.push_back({key.Scalar(), at.line, at.column, at.length});
    }
    for (size_t k = 0; k < indexes.size(); ++k) {
      ResourceConfig rc;
      rc.name_location = name_location;
      rc.field_locations = field_locations;
      rc.address.kind = doc.kind;
      rc.address.name = doc.name;
      rc.address.index = indexes[k];
      rc.address.module = scope.path;
      rc.kind = doc.kind;
      rc.lifecycle = lifecycle;
      rc.location = doc.location;
      std::optional<int> count_index;
      std::string each_key;
      EvalContext ctx;
      ctx.doc = &doc;
      ctx.resource_refs = true;
      ctx.count_index = &count_index;
      ctx.resource = static_cast<int>(resources_.size());
      ctx.ephemeral = EvalContext::Ephemeral::kWriteOnly;
      ctx.write_only = &registry_->WriteOnly(doc.kind);
      if (const int* i = std::get_if<int>(&indexes[k])) count_index = *i;
      if (const std::string* key = std::get_if<std::string>(&indexes[k])) {
        each_key = *key;
        ctx.each_key = &each_key;
        ctx.each_value = &each_values[k];
      }
      rc.spec = Eval(*spec, spec_node, "", ctx);
      if (const Value* lcv = doc.value.contains("lifecycle") ? &doc.value["lifecycle"] : nullptr;
          lcv && lcv->is_object()) {
        YamlNode lnode = Child(doc.node, "lifecycle");
        for (const char* key : {"precondition", "postcondition"}) {
          if (!lcv->contains(key)) continue;
          const bool post = key[1] == 'o';
          (post ? rc.lifecycle.postconditions : rc.lifecycle.preconditions) =
              LoadConditions(doc, (*lcv)[key], Child(lnode, key), key, ctx, post);
        }
      }
      if (has_name_field && rc.spec.is_object() && !rc.spec.contains("name")) {
        rc.spec["name"] = EscapeTemplateLiteral(DefaultApiName(scope.path, doc.name, indexes[k]));
      }
      if (doc.value.contains("enabled")) {
        MovedConfig implied;
        implied.from = rc.address;
        implied.from.index = 0;
        implied.to = rc.address;
        implied.location = doc.location;
        implied.implicit = true;
        implicit_moves_.push_back(std::move(implied));
      }
      group.instances.push_back(resources_.size());
      resources_.push_back(std::move(rc));
      resource_docs_of_.push_back(di);
    }
    groups_.emplace(base, std::move(group));
  }

  // Outputs of the stack and of every module instance; a module's are known
  // by their key, its path and their name ("module.app.id").
  void LoadOutputs() {
    std::map<std::string, SourceLocation> first;
    for (size_t di : lists_.outputs) {
      const Doc& doc = docs_[di];
      const std::string key = scopes_[doc.scope].prefix + doc.name;
      std::optional<OutputDeclaration> decl = DeclareOutput(doc, key, first, diags_);
      if (!decl) continue;
      OutputConfig out = std::move(decl->output);
      EvalContext ctx;
      ctx.doc = &doc;
      ctx.resource_refs = true;
      ctx.output = key;
      out.value = Eval(doc.value["value"], Child(doc.node, "value"), "", ctx);
      if (!ctx.sensitive.empty() && !out.sensitive) {
        // The mark follows the value whatever the declaration says, but
        // saying so is required, as Terraform does: the output is then
        // sensitive wherever it is shown or read.
        if (decl->valid_sensitive)
          RefuseUndeclaredSensitive(doc, SensitiveText(doc.scope, ctx.sensitive[0].second), diags_);
        out.sensitive = true;
      }
      if (doc.value.contains("precondition")) {
        out.preconditions =
            LoadConditions(doc, doc.value["precondition"], Child(doc.node, "precondition"),
                           "precondition", ctx, false);
      }
      output_index_[key] = outputs_.size();
      scopes_[doc.scope].outputs[doc.name] = outputs_.size();
      output_scope_.push_back(doc.scope);
      output_docs_of_.push_back(di);
      outputs_.push_back(std::move(out));
    }
  }

  // `kind: check` documents: their assertions, evaluated as far as the
  // stack knows at load; the plan and apply evaluate the rest.
  void LoadChecks() {
    std::map<std::string, SourceLocation> first;
    for (size_t di : lists_.checks) {
      const Doc& doc = docs_[di];
      std::optional<CheckConfig> check =
          DeclareCheck(doc, scopes_[doc.scope].prefix + doc.name, first, diags_);
      if (!check) continue;
      EvalContext ctx;
      ctx.doc = &doc;
      ctx.resource_refs = true;
      check->asserts =
          LoadConditions(doc, doc.value["assert"], Child(doc.node, "assert"), "assert", ctx, false);
      result_.config.checks.push_back(std::move(*check));
    }
  }

  // Module outputs built from sensitive module outputs (outputs.h).
  void MarkOutputsOfSensitiveOutputs() {
    if (scopes_.size() == 1) return;
    std::vector<const Doc*> docs;
    docs.reserve(output_docs_of_.size());
    for (size_t i : output_docs_of_) docs.push_back(&docs_[i]);
    cairn::MarkOutputsOfSensitiveOutputs(outputs_, docs, scopes_, diags_);
  }

  // ---- data sources --------------------------------------------------------
  // The data sources (data_sources.h).
  void LoadData() {
    DataSources found =
        LoadDataSources(DocsOf(lists_.data), *registry_, SettingEvaluator(), diags_);
    for (auto& d : found.data) result_.config.data.push_back(std::move(d));
    data_addresses_ = std::move(found.addresses);
    // Read whether used or not, so that a wrong one is reported.
    for (const ManifestDocument* doc : found.stacks) StackOutputsOf(doc->name, doc->location);
  }

  // ---- stack data sources (stack_data.h) -----------------------------------
  // The outputs of stack data source `name`, read the first time they are
  // asked for (an expression may read them before LoadData runs); null
  // when there is no such document or it could not be read (reported).
  const expr::Value* StackOutputsOf(const std::string& name, const SourceLocation& at) {
    auto it = stack_reads_.find(name);
    if (it == stack_reads_.end()) {
      const Doc* doc = nullptr;
      std::vector<std::string> names;
      for (size_t i : lists_.data) {
        const Doc& d = docs_[i];
        if (d.scope != 0 || !d.value.contains("type") || d.value["type"] != "stack") continue;
        names.push_back(d.name);
        if (d.name == name && !doc) doc = &d;
      }
      if (!doc) {
        AddError(diags_, "unknown_reference",
                 "reference to undeclared data source data.stack." + name, at,
                 DidYouMean(name, names));
        return nullptr;
      }
      // Entered before its settings are read: one that reads its own
      // outputs finds the entry unfinished.
      it = stack_reads_.emplace(name, StackRead{}).first;
      std::optional<StackDataConfig> config = LoadStackData(*doc, SettingEvaluator(), diags_);
      if (config) it->second.outputs = ReadStackOutputs(*config, diags_);
      it->second.done = true;
    } else if (!it->second.done) {
      AddError(diags_, "invalid_reference",
               "data.stack." + name + " reads its own outputs to find where they are", at);
      return nullptr;
    }
    return it->second.outputs ? &*it->second.outputs : nullptr;
  }

  // ---- moved (moved.h) -----------------------------------------------------
  // The paths of every module instance, and of every call with none.
  std::vector<std::vector<ModuleStep>> ModulePaths() const { return ModuleInstancePaths(scopes_); }

  void LoadMoved() {
    Moves moves =
        LoadMoves(DocsOf(lists_.moved), Declared(), std::move(implicit_moves_), ModulePaths());
    for (auto& d : moves.diagnostics) diags_.push_back(std::move(d));
    for (auto& m : moves.moved) result_.config.moved.push_back(std::move(m));
  }

  // ---- removed (removed.h) -------------------------------------------------
  void LoadRemoved() {
    Removals removals = LoadRemovals(DocsOf(lists_.removed), Declared(), ModulePaths());
    for (auto& d : removals.diagnostics) diags_.push_back(std::move(d));
    for (auto& r : removals.removed) {
      // Moved away and removed: which one is meant cannot be told.
      auto moved = std::find_if(
          result_.config.moved.begin(), result_.config.moved.end(), [&](const MovedConfig& m) {
            if (m.implicit) return false;
            if (!m.IsModuleMove()) return r.Matches(m.from);
            return r.resource
                       ? InModule(r.resource->module, m.from_module)
                       : InModule(r.module, m.from_module) || InModule(m.from_module, r.module);
          });
      if (moved != result_.config.moved.end()) {
        Error("removed_and_moved",
              r.FromText() + " is removed, but a moved document moves " + moved->FromText(),
              r.location, "moved at " + LocationText(moved->location) + "; keep one of the two");
        continue;
      }
      result_.config.removed.push_back(std::move(r));
    }
  }

  // ---- imports (imports.h) -------------------------------------------------
  // Each import document evaluated for each of its for_each keys: its id
  // and the expressions among its `to`'s indexes, from variables, locals
  // and each (never a resource: the object is read when the plan is made).
  void LoadImportDocuments() {
    std::vector<ImportInstance> instances;
    for (size_t di : lists_.imports) {
      const Doc& doc = docs_[di];
      bool complete = true;
      for (const char* key : {"to", "id"}) {
        if (doc.value.contains(key)) continue;
        Error("missing_field",
              "missing required field \"" + std::string(key) + "\" in import document",
              doc.location, "for example, to: instance.web with id: inst_0123...");
        complete = false;
      }
      if (!complete) continue;
      YamlNode to_node = Child(doc.node, "to"), id_node = Child(doc.node, "id");
      const SourceLocation to_loc = Loc(doc.file, to_node);
      const Value& to = doc.value["to"];
      if (!to.is_string()) {
        Error("invalid_address", "to must be a resource instance address, not " + ValueTypeNoun(to),
              to_loc, "kind.name, kind.name[\"key\"], module.NAME.kind.name");
        continue;
      }
      auto found = FindImportIndexExpressions(to.get_ref<const std::string&>());
      if (!found) {
        Error("invalid_address",
              "to must be a resource instance address, not \"" + to.get<std::string>() + "\"",
              to_loc, "a bracket or a quoted string in it does not close");
        continue;
      }
      Instances each;
      if (doc.value.contains("for_each")) {
        if (!EvalInstances(doc, "import", each)) continue;
      } else {
        each.indexes.emplace_back(std::monostate{});
      }
      for (size_t k = 0; k < each.indexes.size(); ++k) {
        std::string each_key;
        EvalContext ctx;
        ctx.doc = &doc;
        ctx.where = "an import's id";
        if (const std::string* key = std::get_if<std::string>(&each.indexes[k])) {
          each_key = *key;
          ctx.each_key = &each_key;
          ctx.each_value = &each.each_values[k];
        }
        const size_t errors = ErrorCount();
        const size_t refs = pending_refs_.size();
        ImportInstance in;
        in.location = to_loc;
        in.id_location = Loc(doc.file, id_node);
        in.id = Eval(doc.value["id"], id_node, "", ctx);
        std::vector<Value> values;
        ctx.where = "an import's to";
        ctx.inputs.reset();
        for (const ImportIndexExpression& e : *found) {
          // Evaluated as "${TEXT}": what it reports is moved to where TEXT
          // is written in `to`, when the scalar is as written.
          const size_t before = diags_.size();
          values.push_back(EvalString("${" + e.text + "}", to_node, "", ctx));
          const ScalarSpan span = SpanOf(doc.file, to_node);
          const int shift =
              static_cast<int>(to.get_ref<const std::string&>().find(e.text, e.begin)) - 2;
          for (size_t d = before; span.verbatim && d < diags_.size(); ++d) {
            SourceLocation& l = diags_[d].location;
            if (l.file == doc.file && l.line == span.location.line) l.column += shift;
          }
        }
        pending_refs_.resize(refs);         // resources are refused where they are written
        if (ErrorCount() != errors) break;  // reported once, not per key
        if (HoldsExpressions(in.id) ||
            std::any_of(values.begin(), values.end(),
                        [](const Value& v) { return HoldsExpressions(v); })) {
          Error("reference_not_allowed",
                "an import's id and to must be known when the stack is loaded",
                HoldsExpressions(in.id) ? in.id_location : to_loc,
                "build them from variables, locals, each.key and each.value, not from resource "
                "attributes");
          break;
        }
        std::string why;
        auto text = SubstituteImportIndexes(to.get_ref<const std::string&>(), *found, values, why);
        if (!text) {
          Error("invalid_address", "to must be a resource instance address: " + why, to_loc,
                kImportIndexHint);
          break;
        }
        in.to = std::move(*text);
        instances.push_back(std::move(in));
      }
    }
    Imports imports = LoadImports(instances, Declared(), result_.config.removed,
                                  options_.allow_undeclared_imports);
    for (auto& d : imports.diagnostics) diags_.push_back(std::move(d));
    for (auto& i : imports.imports) result_.config.imports.push_back(std::move(i));
  }

  // ---- references (graph_edges.h) -------------------------------------------
  // What references resolve against (references.h).
  DeclaredResources Declared() const { return {resources_, groups_, *registry_}; }

  void AddEdges(EdgesResult found) {
    edges_.insert(edges_.end(), std::make_move_iterator(found.edges.begin()),
                  std::make_move_iterator(found.edges.end()));
    for (auto& d : found.diagnostics) diags_.push_back(std::move(d));
  }

  void ResolveTriggers() { AddEdges(cairn::ResolveTriggers(Declared())); }
  void ResolveDependsOn() {
    AddEdges(cairn::ResolveDependsOn(Declared(), depends_on_, ModulePaths()));
  }
  // Every resource reference, each resolved one an edge in the graph; a
  // data source's is checked but makes none.
  void CheckReferences() { AddEdges(ReferenceEdges(pending_refs_, Declared(), data_addresses_)); }

  // Schema validation and keys in specs (validate_specs.h).
  void ValidateSpecs() {
    std::vector<SpecSource> sources;
    sources.reserve(resources_.size());
    for (size_t i = 0; i < resources_.size(); ++i) {
      const Doc& doc = docs_[resource_docs_of_[i]];
      auto it = spec_nodes_.find(resources_[i].address.BaseString());
      YamlNode spec_node = it == spec_nodes_.end() ? doc.node : it->second;
      sources.push_back(
          {doc.file, doc.node, doc.location, spec_node, keyed_files_.count(doc.file) > 0});
    }
    for (auto& d : cairn::ValidateSpecs(resources_, sources, *registry_)) {
      diags_.push_back(std::move(d));
    }
  }

  // Key material assembled from module outputs where they are put in place
  // (in a stack output, or in a module output from the outputs of the
  // modules it uses); an evaluated string was checked when it was evaluated
  // (evaluate.h), and a resource's spec is checked with it (ValidateOne).
  void CheckAssembledKeys() {
    auto check = [&](size_t i, Value& v) {
      const Doc& doc = docs_[output_docs_of_[i]];
      if (!MayHoldKey(v) || keyed_files_.count(doc.file)) return;
      std::vector<std::string> pointers;
      KeyPointers(v, "", pointers);
      if (pointers.empty()) return;
      YamlNode node = Child(doc.node, "value");
      Error("private_key_material", "private key material in a value", Loc(doc.file, node),
            "it was assembled from module outputs; only public keys belong in a stack, and the "
            "key is not shown");
      key_nodes_.emplace_back(output_docs_of_[i], node);
      v = Value();  // the key goes no further
    };
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (output_scope_[i] == 0) check(i, outputs_[i].value);
    }
    for (auto& [key, v] : module_output_values_) {
      if (auto i = output_index_.find(key); i != output_index_.end()) check(i->second, v);
    }
  }

  // Hides from every excerpt the text that fed a value found to hold key
  // material (pieces of a key need not be keys): the spec node holding it
  // and, through its expressions, the definitions of the variables and the
  // for_each it interpolates, and what those interpolate in turn.
  void RedactKeySources() {
    for (size_t i = 0; i < resources_.size(); ++i) {
      const ResourceConfig& rc = resources_[i];
      if (!MayHoldKey(rc.spec)) continue;
      const Doc& doc = docs_[resource_docs_of_[i]];
      auto it = spec_nodes_.find(rc.address.BaseString());
      YamlNode spec_node = it == spec_nodes_.end() ? doc.node : it->second;
      std::vector<std::string> pointers;
      KeyPointers(rc.spec, "", pointers);
      std::set<std::pair<size_t, int>> done;  // (doc, line) of nodes already hidden
      for (const auto& pointer : pointers) {
        RedactFeeding(resource_docs_of_[i], Descend(spec_node, pointer).first, 0, done);
      }
    }
    std::set<std::pair<size_t, int>> done;
    for (const auto& [doc, node] : key_nodes_) RedactFeeding(doc, node, 0, done);
  }

  void RedactFeeding(size_t doc_index, const YamlNode& node, int depth,
                     std::set<std::pair<size_t, int>>& done) {
    const Doc& doc = docs_[doc_index];
    if (!node.IsDefined() || node.Mark().is_null() || depth > kMaxDepth) return;
    if (!done.insert({doc_index, node.Mark().line}).second) return;
    RedactNode(result_.sources, doc.file, node);
    std::vector<YamlNode> scalars;
    CollectScalars(node, 0, scalars);
    for (const YamlNode& s : scalars) {
      if (!HasTemplateSyntax(s.Scalar())) continue;
      auto parsed = expr::ParseTemplate(s.Scalar());
      auto* tree = std::get_if<expr::NodePtr>(&parsed);
      if (!tree) continue;
      std::vector<expr::Traversal> traversals;
      expr::Traversals(**tree, traversals);
      for (const expr::Traversal& t : traversals) {
        const std::string& root = t.root->name;
        const std::string first = !t.steps.empty() && t.steps[0].attr ? t.steps[0].name : "";
        if (root == "var" && !first.empty()) {
          const auto& vars = doc.scope == 0 ? variables_ : scopes_[doc.scope].variables;
          auto var = vars.find(first);
          if (var == vars.end()) continue;
          const Doc& var_doc = docs_[var->second.doc];
          RedactFeeding(var->second.doc, Child(var_doc.node, "default"), depth + 1, done);
          if (doc.scope != 0) {  // and the module's input, with what fed it
            const size_t call = scopes_[doc.scope].call_doc;
            RedactFeeding(call, Child(Child(docs_[call].node, "inputs"), first), depth + 1, done);
          }
        } else if (root == "local" && !first.empty()) {
          const DeclaredLocal* local = locals_.Find(doc.scope, first);
          if (!local) continue;
          RedactFeeding(local->doc, Child(docs_[local->doc].node, "value"), depth + 1, done);
        } else if (root == "each") {
          RedactFeeding(doc_index, Child(doc.node, "for_each"), depth + 1, done);
        }
      }
      for (const Expression& e : ReferencesIn(**tree)) {
        if (e.type != Expression::Type::kModuleOutput) continue;
        std::vector<ModuleStep> path = scopes_[doc.scope].path;
        path.insert(path.end(), e.target.module.begin(), e.target.module.end());
        auto found = FindScope(path);
        const size_t* t = std::get_if<size_t>(&found);
        if (!t) continue;
        auto o = scopes_[*t].outputs.find(e.attr);
        if (o == scopes_[*t].outputs.end()) continue;
        const size_t out_doc = output_docs_of_[o->second];
        RedactFeeding(out_doc, Child(docs_[out_doc].node, "value"), depth + 1, done);
      }
    }
  }

  // The scalars below `node` (aliases may make cycles: depth is bounded).
  static void CollectScalars(const YamlNode& node, int depth, std::vector<YamlNode>& out) {
    if (depth > kMaxDepth) return;
    if (node.IsScalar()) out.push_back(node);
    for (const auto& item : node.items()) CollectScalars(item, depth + 1, out);
    for (const auto& [k, v] : node.pairs()) CollectScalars(v, depth + 1, out);
  }

  // ---- graph (graph_edges.h) ------------------------------------------------
  void BuildGraph() {
    Graph graph = cairn::BuildGraph(std::move(resources_), edges_);
    for (auto& d : graph.diagnostics) diags_.push_back(std::move(d));
    result_.config.resources = std::move(graph.resources);
    result_.config.resource_index = std::move(graph.index);
  }

  // StackConfig::module_outputs and empty_resources.
  void RecordForConsole() {
    for (size_t s = 1; s < scopes_.size(); ++s) {
      if (scopes_[s].parent != 0 || scopes_[s].unused) continue;
      for (const auto& [name, i] : scopes_[s].outputs) {
        const Value* v = ModuleOutputValue(s, name);
        if (!v) continue;
        const std::string key = scopes_[s].prefix + name;
        result_.config.module_outputs[key] = *v;
        if (outputs_[i].sensitive) result_.config.sensitive_module_outputs.insert(key);
      }
    }
    for (const auto& [base, g] : groups_) {
      if (!g.module.empty() || !g.instances.empty() || g.mode == ResourceGroup::Mode::kSingle)
        continue;
      result_.config.empty_resources[base] =
          g.mode == ResourceGroup::Mode::kCount ? "count" : "for_each";
    }
  }

  void Finish() {
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (output_scope_[i] == 0) result_.config.outputs.push_back(std::move(outputs_[i]));
    }
    // A module's documents are checked once per instance (finish.h).
    std::set<std::string> module_files;
    for (const Doc& doc : docs_) {
      if (doc.scope != 0) module_files.insert(doc.file);
    }
    for (auto& d : FinishDiagnostics(std::move(diags_), module_files)) {
      result_.diagnostics.push_back(std::move(d));
    }
    diags_.clear();
  }

  const LoadOptions& options_;
  LoadResult& result_;
  const Env& env_;
  std::shared_ptr<const SchemaRegistry> registry_;
  std::vector<Diagnostic> diags_;
  std::vector<std::unique_ptr<YamlTree>> trees_;
  std::vector<Doc> docs_;
  DocumentLists lists_;                   // the documents of each kind
  std::set<std::string> data_addresses_;  // "data.KIND.NAME" of every data document
  struct StackRead {
    bool done = false;
    std::optional<expr::Value> outputs;  // none: not read (reported)
  };
  std::map<std::string, StackRead> stack_reads_;  // by name: StackOutputsOf
  std::map<std::string, VariableInfo> variables_;
  std::map<std::string, std::optional<std::string>> file_cache_;
  ParseCache parsed_;  // EvalInputs::parsed
  std::map<std::string, std::optional<ResourceShape>> shapes_;
  std::map<std::string, size_t> shape_docs_;  // base address -> resource document
  size_t shape_docs_seen_ = 0;                // lists_.resources indexed in shape_docs_
  std::map<size_t, std::pair<bool, Instances>> instances_;  // InstancesOf
  std::vector<WrittenReference> pending_refs_;
  std::map<std::string, ResourceGroup> groups_;
  std::map<std::string, YamlNode> spec_nodes_;
  std::map<std::string, std::vector<std::pair<ResourceAddress, SourceLocation>>> depends_on_;
  std::vector<ResourceConfig> resources_;
  std::vector<size_t> resource_docs_of_;
  std::vector<MovedConfig> implicit_moves_;  // see MovedConfig::implicit
  std::set<std::string> keyed_files_;        // files reported for holding key material
  bool too_many_instances_ = false;          // refused: the stack is not checked further
  // Where an evaluated value was found to hold key material: (doc, node).
  std::vector<std::pair<size_t, YamlNode>> key_nodes_;
  std::vector<OutputConfig> outputs_;                  // of the stack and of every module instance
  std::vector<size_t> output_scope_, output_docs_of_;  // per output
  std::map<std::string, size_t> output_index_;         // by key (see LoadOutputs)
  std::vector<Scope> scopes_;                          // [0]: the stack
  // A module directory's documents as first read: [begin, end) in docs_.
  std::map<std::string, std::pair<size_t, size_t>> module_docs_;
  std::vector<ModuleUse> module_uses_;
  std::map<std::string, Value> module_output_values_;  // by key, once substituted
  std::vector<std::string> resolving_;                 // output keys being substituted
  std::vector<Edge> edges_;
  Locals locals_{docs_, scopes_, diags_, [this](const Doc& doc) { return EvaluateLocal(doc); }};
};

}  // namespace

LoadResult LoadStack(const LoadOptions& options) {
  LoadResult result;
  try {
    Loader loader(options, result);
    loader.Run(loader.ReadFiles());
  } catch (const std::exception& e) {
    Diagnostic d;
    d.code = "internal_error";
    d.summary = std::string("internal error: ") + e.what() + ", please report";
    result.diagnostics.push_back(std::move(d));
  }
  return result;
}

LoadResult LoadStackFromText(const std::map<std::string, std::string>& files,
                             const LoadOptions& options, const std::string& root) {
  LoadResult result;
  result.config.root = root;
  try {
    Loader loader(options, result);
    std::vector<std::pair<std::string, std::string>> list(files.begin(), files.end());
    loader.Run(std::move(list));
  } catch (const std::exception& e) {
    Diagnostic d;
    d.code = "internal_error";
    d.summary = std::string("internal error: ") + e.what() + ", please report";
    result.diagnostics.push_back(std::move(d));
  }
  return result;
}

}  // namespace cairn
