#include "engine/operations/import.h"

#include <map>
#include <set>
#include <variant>

#include "base/private_key.h"
#include "base/schema/schema_registry.h"
#include "engine/manifest/generate.h"
#include "engine/operations/state_check.h"

namespace cairn {
namespace {

// Why the objects `records` adopt cannot be tracked at their addresses in
// `state` (one already is, elsewhere, or two are one), or "".
std::string TrackedElsewhere(const StateSnapshot& state, const std::vector<ResourceState>& records,
                             const KindCatalog& kinds) {
  StateSnapshot after = state;
  std::vector<std::string> added;
  for (const ResourceState& rs : records) {
    after.resources[rs.address] = rs;
    added.push_back(rs.address);
  }
  StateCheckOptions options;
  options.kinds = kinds;
  std::vector<Diagnostic> twice = CheckTrackedOnce(after, added, options);
  return twice.empty() ? "" : twice.front().summary + "; " + twice.front().detail;
}

// The imports of `config` whose object `state` does not track yet.
std::vector<const ImportConfig*> ImportsNotTracked(const StackConfig& config,
                                                   const StateSnapshot& state,
                                                   const KindCatalog& kinds) {
  std::vector<const ImportConfig*> out;
  if (config.imports.empty()) return out;
  std::set<std::pair<std::string, std::string>> tracked;  // kind, canonical id
  for (const auto& [address, rs] : state.resources) {
    tracked.emplace(rs.kind, CanonicalId(kinds, rs.id));
  }
  for (const ImportConfig& ic : config.imports) {
    if (!tracked.count({ic.to.kind, CanonicalId(kinds, ic.id)})) out.push_back(&ic);
  }
  return out;
}

}  // namespace

bool ImportsToRead(const StackConfig& config, const StateSnapshot& state,
                   const KindCatalog& kinds) {
  return !ImportsNotTracked(config, state, kinds).empty();
}

ImportReads ReadImports(const StackConfig& config, const StateSnapshot& state, Provider& provider,
                        const KindCatalog& kinds) {
  ImportReads out;
  for (const ImportConfig* ic : ImportsNotTracked(config, state, kinds)) {
    ReadResponse read = provider.Read({ic->to.kind, ic->id}, {});
    if (!read.status.ok()) {
      for (Diagnostic& d : read.diagnostics) out.diagnostics.push_back(std::move(d));
      out.diagnostics.push_back({Severity::kError, "import_read_failed",
                                 "could not read " + ic->to.kind + " " + ic->id + " to import it",
                                 read.status.message(), ic->id_location});
      continue;
    }
    if (!read.resource) {
      out.diagnostics.push_back({Severity::kError, "import_not_found",
                                 "there is no " + ic->to.kind + " with id " + ic->id +
                                     " to import to " + ic->to.ToString(),
                                 "'cairn drift --unmanaged' lists the objects no state tracks",
                                 ic->id_location});
      continue;
    }
    PlannedImport im;
    im.address = ic->to.ToString();
    im.kind = ic->to.kind;
    im.remote_id = read.resource->id;
    im.attributes = std::move(read.resource->attributes);
    im.attributes["id"] = im.remote_id;
    out.imports.push_back(std::move(im));
  }
  return out;
}

std::string GenerateImportConfig(const StackConfig& config, const ImportReads& reads,
                                 const StateSnapshot& state, const SchemaRegistry& registry,
                                 const KindCatalog& kinds,
                                 const std::vector<std::string>& sensitive, std::string& error) {
  std::vector<ImportItem> undeclared;
  std::vector<ResourceState> records;
  for (const ImportConfig& ic : config.imports) {
    if (ic.declared) continue;
    for (const PlannedImport& im : reads.imports) {
      if (im.address != ic.to.ToString()) continue;
      undeclared.push_back({ic.to, im.remote_id});
      ResourceState rs;
      rs.address = im.address;
      rs.kind = im.kind;
      rs.id = im.remote_id;
      rs.attributes = im.attributes;
      records.push_back(std::move(rs));
    }
  }
  if (undeclared.empty()) return "";
  std::string text = GenerateImportManifests(undeclared, records, state, registry, kinds);
  const std::string header = "# Written by cairn import --generate";
  if (text.rfind(header, 0) == 0) {
    text = "# Written by cairn plan --generate-config" + text.substr(header.size());
  }
  if (ContainsPrivateKeyMaterial(text)) {
    error = "the live objects hold private key material, which Cairn never writes to a manifest";
    return "";
  }
  for (const std::string& secret : sensitive) {
    if (!secret.empty() && text.find(secret) != std::string::npos) {
      error =
          "the live objects hold the value of a sensitive variable, which Cairn never writes "
          "to a manifest";
      return "";
    }
  }
  return text;
}

std::vector<ImportItem> UndeclaredImports(const std::vector<ImportItem>& items,
                                          const StackConfig& config) {
  std::vector<ImportItem> out;
  for (const ImportItem& it : items) {
    if (!config.Find(it.address)) out.push_back(it);
  }
  return out;
}

std::string GeneratedManifestPath(const std::string& stack_root, const std::string& file) {
  if (file.empty() || file.find('/') != std::string::npos) return file;
  return stack_root.empty() || stack_root.back() == '/' ? stack_root + file
                                                        : stack_root + "/" + file;
}

Status CheckImport(const std::vector<ImportItem>& items, const StackConfig& config,
                   const std::string& generate_path, const Env& env) {
  std::set<std::string> seen;
  for (const ImportItem& it : items) {
    if (!seen.insert(it.address.ToString()).second) {
      return Status::InvalidArgument(it.address.ToString() + " is given twice");
    }
  }
  const std::vector<ImportItem> undeclared = UndeclaredImports(items, config);
  if (undeclared.empty()) return Status::Ok();
  if (generate_path.empty()) {
    return Status::InvalidArgument(
        undeclared.front().address.ToString() +
        (undeclared.size() > 1 ? " (and " + std::to_string(undeclared.size() - 1) + " more)" : "") +
        " not in the manifests: add it first so that the next plan can compare it, or pass "
        "--generate FILE to write its manifest from the live object");
  }
  for (const ImportItem& it : undeclared) {
    if (!it.address.module.empty()) {
      return Status::InvalidArgument(
          "--generate writes documents into the stack, not into a module: " +
          it.address.ToString() +
          " is in a module; declare it in the module first, or import it at an address of the "
          "stack");
    }
    if (!std::holds_alternative<std::monostate>(it.address.index)) {
      return Status::InvalidArgument(
          "--generate writes one document per resource: " + it.address.ToString() +
          " has an index; declare the count or for_each resource first, or import it at an "
          "address without one");
    }
  }
  if (env.Exists(generate_path)) {
    return Status::InvalidArgument(generate_path + " exists; --generate writes a new file");
  }
  return Status::Ok();
}

ImportRead ReadForImport(const std::vector<ImportItem>& items, const StateSnapshot& state,
                         Provider& provider, const KindCatalog& kinds) {
  ImportRead out;
  for (const ImportItem& it : items) {
    if (auto m = state.resources.find(it.address.ToString()); m != state.resources.end()) {
      out.error = m->first + " is already managed (id " + m->second.id + ")";
      return out;
    }
  }
  // An object tracked already is refused before anything is read: by the
  // ids given, then (below) by the ids the API returns.
  std::vector<ResourceState> given;
  for (const ImportItem& it : items) {
    ResourceState rs;
    rs.address = it.address.ToString();
    rs.kind = it.address.kind;
    rs.id = it.id;
    given.push_back(std::move(rs));
  }
  if (std::string why = TrackedElsewhere(state, given, kinds); !why.empty()) {
    out.error = why;
    return out;
  }
  for (const ImportItem& it : items) {
    ReadResponse read = provider.Read({it.address.kind, it.id}, {});
    if (!read.status.ok()) {
      out.diagnostics = std::move(read.diagnostics);
      out.error = "could not read " + it.address.kind + " " + it.id + ": " + read.status.message();
      out.records.clear();
      return out;
    }
    if (!read.resource) {
      out.error = "there is no " + it.address.kind + " with id " + it.id;
      out.records.clear();
      return out;
    }
    ResourceState rs;
    rs.address = it.address.ToString();
    rs.kind = it.address.kind;
    rs.id = read.resource->id;
    rs.attributes = read.resource->attributes;
    rs.attributes["id"] = rs.id;
    out.records.push_back(std::move(rs));
  }
  if (std::string why = TrackedElsewhere(state, out.records, kinds); !why.empty()) {
    out.error = why;
    out.records.clear();
  }
  return out;
}

std::string GenerateImportManifests(const std::vector<ImportItem>& undeclared,
                                    const std::vector<ResourceState>& records,
                                    const StateSnapshot& state, const SchemaRegistry& registry,
                                    const KindCatalog& kinds) {
  auto canonical = [&](const std::string& id) { return CanonicalId(kinds, id); };
  std::map<std::string, std::string> known_ids;  // canonical id -> address
  for (const auto& [address, rs] : state.resources) known_ids[canonical(rs.id)] = address;
  for (const ResourceState& rs : records) known_ids[canonical(rs.id)] = rs.address;
  std::vector<ExistingResource> docs;
  for (const ImportItem& it : undeclared) {
    for (const ResourceState& rs : records) {
      if (rs.address == it.address.ToString()) docs.push_back({it.address, rs.attributes});
    }
  }
  return "# Written by cairn import --generate from the live objects; edit freely.\n" +
         GenerateManifests(docs, registry, known_ids);
}

ReloadedStack WriteAndReload(const Env& env, const std::string& path, const std::string& text,
                             LoadOptions reload) {
  ReloadedStack out;
  if (Status st = env.WriteFileAtomically(path, text, {.mode = 0644}); !st.ok()) {
    out.error = st.message();
    return out;
  }
  reload.env = &env;
  out.load = LoadStack(reload);
  if (!out.load.ok()) {
    Status removed = env.RemoveFile(path);
    out.error =
        "the generated manifests do not load (above); " + path +
        (removed.ok() ? " was removed" : " could not be removed (" + removed.message() + ")") +
        " and nothing was imported";
  }
  return out;
}

void AddDependsOn(std::vector<ResourceState>& records, const StackConfig& config) {
  for (ResourceState& rs : records) {
    if (!rs.depends_on.empty()) continue;
    auto address = ResourceAddress::Parse(rs.address);
    if (!address) continue;
    if (const ResourceConfig* rc = config.Find(*address)) {
      for (const auto& d : rc->depends_on) rs.depends_on.push_back(d.ToString());
    }
  }
}

}  // namespace cairn
