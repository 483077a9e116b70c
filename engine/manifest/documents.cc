#include "engine/manifest/documents.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <thread>

#include "base/private_key.h"
#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/manifest/key_material.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;

// The manifest language's own document kinds and their top-level keys. The
// resource kinds come from the schema registry; their specs are described by
// the schemas, not here.
const std::vector<std::string> kResourceKeys = {"kind",     "name",       "spec",      "count",
                                                "for_each", "depends_on", "lifecycle", "enabled"};
const std::map<std::string, std::vector<std::string>> kLanguageKinds = {
    {"variable",
     {"kind", "name", "type", "default", "description", "sensitive", "ephemeral", "validation"}},
    {"local", {"kind", "name", "value", "description"}},
    {"output", {"kind", "name", "value", "description", "sensitive", "precondition"}},
    {"check", {"kind", "name", "assert", "description"}},
    {"provider", {"kind", "name", "endpoint", "token_env", "ca_bundle", "parallelism", "timeouts"}},
    {"backend", {"kind", "name", "type", "path", "url_env", "encryption"}},
    {"watch", {"kind", "name", "interval", "remediate"}},
    {"moved", {"kind", "from", "to"}},
    {"removed", {"kind", "from", "lifecycle"}},
    {"import", {"kind", "to", "id", "for_each"}},
    {"data", {"kind", "name", "type", "id", "filter", "dir", "backend", "workspace", "defaults"}},
    {"module",
     {"kind", "name", "source", "inputs", "count", "for_each", "enabled", "description",
      "depends_on"}},
};
// What a module may not declare: the stack's provider and backend serve it,
// and data sources and moves belong to the stack (they may name addresses
// inside modules).
const std::vector<std::string> kStackOnlyKinds = {"provider", "backend", "data", "moved",
                                                  "removed",  "import",  "watch"};

bool IsName(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

// One manifest file read and parsed, independently of the others (files are
// parsed in parallel; everything else runs on the calling thread).
struct ParsedFile {
  std::string redacted;  // the text with key material removed, for carets
  PrivateKeyMatch key;
  std::unique_ptr<YamlTree> tree;
  std::vector<YamlNode> key_scalars;  // scalars whose value holds a key (any spelling)
  std::vector<std::pair<YamlNode, Value>> documents;
  std::vector<Diagnostic> diags;
};

void ParseManifest(const std::string& display, const std::string& content, ParsedFile& out) {
  out.key = FindPrivateKey(content);
  out.redacted = out.key.found() ? RedactPrivateKeys(content) : content;
  // A file holding a key is still read, so that all its problems are
  // reported at once; the caller hides the key from every output.
  out.tree = YamlTree::Parse(content);
  out.key_scalars = ScalarsHoldingKeys(*out.tree);
  AddTextDiagnostics(display, *out.tree, out.diags, content);
  for (const auto& node : out.tree->documents) {
    if (node.IsNull() || !node.IsDefined()) continue;
    if (!node.IsMap()) {
      AddError(out.diags, "invalid_document",
               "a manifest document must be a mapping with kind and name", NodeLoc(display, node));
      continue;
    }
    size_t budget = 0;
    Value v = YamlToValue(display, node, 0, budget, out.diags);
    if (budget > kMaxNodesPerDocument) continue;
    out.documents.emplace_back(node, std::move(v));
  }
}

void CheckKeys(const ManifestDocument& doc, const std::vector<std::string>& allowed,
               const std::string& what, std::vector<Diagnostic>& diags) {
  for (auto it = doc.value.begin(); it != doc.value.end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
    if (doc.kind == "provider" && it.key() == "token") continue;  // reported by LoadProvider
    if (doc.kind == "backend" && it.key() == "url") continue;     // reported by LoadBackend
    AddError(diags, "unknown_field", "unknown field \"" + it.key() + "\" in " + what,
             KeyLoc(doc.file, doc.node, it.key()), DidYouMean(it.key(), allowed));
  }
}

}  // namespace

Documents ParseDocuments(const ManifestFiles& files, SourceFiles& sources) {
  std::vector<ParsedFile> parsed(files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < files.size();) {
      ParseManifest(files[i].first, files[i].second, parsed[i]);
    }
  };
  size_t threads =
      std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), files.size(), 8});
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  Documents out;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& display = files[i].first;
    ParsedFile& p = parsed[i];
    out.files.push_back(display);
    sources.Add(display, std::move(p.redacted));
    if (p.key.found()) {
      AddError(out.diagnostics, "private_key_material", "private key material in a manifest",
               {display, p.key.line, p.key.column, p.key.length},
               "only public keys belong in a stack; the key is not shown. Remove it, and rotate it "
               "if it was "
               "ever committed");
      HideKeyScalars(sources, display, p.key_scalars);  // reported once, by the text check
      out.keyed_files.insert(display);
    } else if (RefuseKeyScalars(sources, display, p.key_scalars, out.diagnostics)) {
      out.keyed_files.insert(display);
    }
    for (auto& d : p.diags) out.diagnostics.push_back(std::move(d));
    std::string dir = fs::path(display).parent_path().string();
    if (dir.empty()) dir = ".";
    for (auto& [node, value] : p.documents) {
      ManifestDocument doc;
      doc.file = display;
      doc.dir = dir;
      doc.node = node;
      doc.value = std::move(value);
      out.docs.push_back(std::move(doc));
    }
    out.trees.push_back(std::move(p.tree));
  }
  return out;
}

std::vector<std::string> DocumentKinds(const SchemaRegistry& registry) {
  std::vector<std::string> all_kinds = registry.kinds();
  for (const auto& [k, keys] : kLanguageKinds) all_kinds.push_back(k);
  std::sort(all_kinds.begin(), all_kinds.end());
  return all_kinds;
}

bool ClassifyDocument(ManifestDocument& doc, const SchemaRegistry& registry,
                      const std::vector<std::string>& all_kinds, std::vector<Diagnostic>& diags) {
  YamlNode kind_node = ChildNode(doc.node, "kind");
  doc.location = kind_node.IsDefined() ? NodeLoc(doc.file, kind_node) : NodeLoc(doc.file, doc.node);
  if (!doc.value.contains("kind")) {
    AddError(diags, "missing_field", "missing required field \"kind\"", NodeLoc(doc.file, doc.node),
             "every document starts with kind: one of " + JoinNames(all_kinds));
    return false;
  }
  if (!doc.value["kind"].is_string()) {
    AddError(diags, "wrong_type", "kind must be a string, not " + ValueTypeNoun(doc.value["kind"]),
             doc.location);
    return false;
  }
  doc.kind = doc.value["kind"].get<std::string>();
  bool resource = registry.HasKind(doc.kind);
  auto lang = kLanguageKinds.find(doc.kind);
  if (!resource && lang == kLanguageKinds.end()) {
    std::string hint = DidYouMean(doc.kind, all_kinds);
    AddError(diags, "unknown_kind", "unknown kind \"" + doc.kind + "\"", doc.location,
             (hint.empty() ? "" : hint + "\n") + "known kinds: " + JoinNames(all_kinds));
    doc.kind.clear();
    return false;
  }
  if (doc.scope != 0 && std::find(kStackOnlyKinds.begin(), kStackOnlyKinds.end(), doc.kind) !=
                            kStackOnlyKinds.end()) {
    AddError(diags, "not_in_module", "a module cannot declare a " + doc.kind + " document",
             doc.location,
             doc.kind == "provider" || doc.kind == "backend"
                 ? "the stack's " + doc.kind + " serves its modules too"
                 : "declare it in the stack; it may name addresses inside modules, and a module "
                   "takes what it needs as inputs");
    doc.kind.clear();
    return false;
  }
  bool needs_name = resource || doc.kind == "variable" || doc.kind == "output" ||
                    doc.kind == "data" || doc.kind == "module" || doc.kind == "local" ||
                    doc.kind == "check";
  if (doc.value.contains("name")) {
    const Value& n = doc.value["name"];
    if (!n.is_string()) {
      AddError(diags, "wrong_type", "name must be a string, not " + ValueTypeNoun(n),
               NodeLoc(doc.file, ChildNode(doc.node, "name")));
      doc.kind.clear();
      return false;
    }
    doc.name = n.get<std::string>();
    if (needs_name && !IsName(doc.name)) {
      AddError(diags, "invalid_name", "\"" + doc.name + "\" is not a valid name",
               NodeLoc(doc.file, ChildNode(doc.node, "name")),
               "names start with a letter or _ and hold letters, digits, _ and -");
      doc.kind.clear();
      return false;
    }
  } else if (needs_name) {
    AddError(diags, "missing_field", "missing required field \"name\" in " + doc.kind + " document",
             doc.location);
    doc.kind.clear();
    return false;
  }
  CheckKeys(doc, resource ? kResourceKeys : lang->second, doc.kind + " document", diags);
  return true;
}

}  // namespace cairn
