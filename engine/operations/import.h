// Import (`cairn import`): adopting objects that already exist into the
// state, all or none. The command parses its arguments, opens the stack,
// the state and the API, and runs these steps in order, printing what they
// say:
//   1. CheckImport: what can be refused before any read (an address given
//      twice, one the manifests do not declare without --generate, one
//      --generate cannot write, a --generate file that exists);
//   2. ReadForImport: every object read before anything is written;
//   3. with --generate, for the objects the manifests do not declare:
//      GenerateImportManifests writes their documents from the live objects
//      and WriteAndReload writes them beside the manifests and loads the
//      stack again, taking the file back if the stack no longer loads;
//   4. AddDependsOn: each record's depends_on from the manifests as they now
//      are, so that destroy orders it; then one commit.
#pragma once

#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/env.h"
#include "base/status.h"
#include "engine/address.h"
#include "engine/manifest/config.h"
#include "engine/manifest/loader.h"
#include "engine/plan/plan.h"
#include "engine/provider/provider.h"
#include "engine/state/state_store.h"

namespace cairn {

class SchemaRegistry;

// One object an import adopts: the address it takes and its id in the API.
struct ImportItem {
  ResourceAddress address;
  std::string id;
};

// The items whose address `config` does not declare, in order.
std::vector<ImportItem> UndeclaredImports(const std::vector<ImportItem>& items,
                                          const StackConfig& config);

// Where --generate FILE writes: FILE itself, or, for a bare file name, the
// file of that name in the stack directory, where the loader reads it.
std::string GeneratedManifestPath(const std::string& stack_root, const std::string& file);

// Refuses, before anything is read or written (InvalidArgument, saying why
// and what to do): an address given twice; an address `config` does not
// declare, unless `generate_path` is set; with it, an undeclared address in
// a module or with an index (one document per resource, in the stack), or a
// `generate_path` that exists in `env` (--generate writes a new file).
Status CheckImport(const std::vector<ImportItem>& items, const StackConfig& config,
                   const std::string& generate_path, const Env& env);

struct ImportRead {
  std::vector<ResourceState> records;   // one per item, in order, when ok()
  std::vector<Diagnostic> diagnostics;  // from the provider
  std::string error;                    // why nothing can be imported; empty when ok()
  bool ok() const { return error.empty(); }
};

// Reads every item's object before anything is written: all or none. Refused
// when an address is already in `state`, when an object is tracked already
// (at another address of `state`, or given twice: one remote object has one
// address; the message names the first), or does not exist or cannot be
// read. Ids are compared in their canonical form (CanonicalId with `kinds`).
// The records carry the live attributes (with "id").
ImportRead ReadForImport(const std::vector<ImportItem>& items, const StateSnapshot& state,
                         Provider& provider, const KindCatalog& kinds);

// The text --generate writes for `undeclared` (UndeclaredImports), from
// their `records` (ReadForImport's): a header line, then a document per
// resource (engine/manifest/generate.h), an id of any resource of `state` or
// `records` written as a reference to it (ids compared in their canonical
// form, CanonicalId with `kinds`).
std::string GenerateImportManifests(const std::vector<ImportItem>& undeclared,
                                    const std::vector<ResourceState>& records,
                                    const StateSnapshot& state, const SchemaRegistry& registry,
                                    const KindCatalog& kinds);

struct ReloadedStack {
  LoadResult load;    // the stack with the generated file; its diagnostics when it fails
  std::string error;  // why the import stops; empty when ok()
  bool ok() const { return error.empty(); }
};

// Writes `text` to `path` (atomically, mode 0644) and loads the stack again
// with `reload` (its env set to `env`, so that it reads what was written).
// A stack that no longer loads takes the file back: it is removed, and the
// result carries the loader's diagnostics and an error saying so.
ReloadedStack WriteAndReload(const Env& env, const std::string& path, const std::string& text,
                             LoadOptions reload);

// `kind: import` documents (config.imports), at plan time.
struct ImportReads {
  std::vector<PlannedImport> imports;   // PlanOptions::imports
  std::vector<Diagnostic> diagnostics;  // at the documents
  bool ok() const { return !HasErrors(diagnostics); }
};

// Reads, through `provider`, the object of each import document whose id
// `state` does not track yet (of that kind, ids in their canonical form):
// what MakePlan adopts. An id that names no object is import_not_found, a
// read that fails import_read_failed (with the provider's diagnostics),
// both at the document's `id`; every document is read, so that all of
// them are reported at once.
ImportReads ReadImports(const StackConfig& config, const StateSnapshot& state, Provider& provider,
                        const KindCatalog& kinds);

// Whether `config`'s imports need the API: one whose id `state` does not
// track yet.
bool ImportsToRead(const StackConfig& config, const StateSnapshot& state, const KindCatalog& kinds);

// `cairn plan --generate-config FILE`: the manifests of the import
// documents whose `to` no manifest declares (ImportConfig::declared false),
// from their objects as read (`reads`), as GenerateImportManifests writes
// them. Empty when there is none. `error` is set, and nothing returned,
// when the text would hold private key material or the value of one of
// `sensitive` (the stack's sensitive variables): it is never written.
std::string GenerateImportConfig(const StackConfig& config, const ImportReads& reads,
                                 const StateSnapshot& state, const SchemaRegistry& registry,
                                 const KindCatalog& kinds,
                                 const std::vector<std::string>& sensitive, std::string& error);

// Gives each record without depends_on the dependencies `config` declares
// for its address (none when it declares no such resource).
void AddDependsOn(std::vector<ResourceState>& records, const StackConfig& config);

}  // namespace cairn
