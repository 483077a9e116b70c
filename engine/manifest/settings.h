// Settings, a stage of loading a stack: the provider document (the API's
// endpoint, the name of the environment variable holding the token, the
// parallelism, the timeouts) and the backend document (where the state is
// kept). Documents in, settings and diagnostics out; a token or a
// connection URL written in a manifest is refused. The values that may hold
// expressions (endpoint, parallelism, path) are evaluated by the caller's
// `eval`, whose diagnostics go to the same list: a value it reported is not
// reported again.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/config.h"
#include "engine/manifest/documents.h"

namespace cairn {

// The value of key `key` of `doc`, evaluated; `where` names the document
// ("a provider document") for a reference that is not allowed there.
using EvalSetting =
    std::function<Value(const ManifestDocument& doc, const std::string& key, const char* where)>;

// The provider documents (at most one: duplicate_provider) into `out`,
// whose defaults stand for what they do not set.
void LoadProvider(const std::vector<const ManifestDocument*>& docs, const EvalSetting& eval,
                  ProviderConfig& out, std::vector<Diagnostic>& diags);

// The backend documents (at most one: duplicate_backend) into `out`.
void LoadBackend(const std::vector<const ManifestDocument*>& docs, const EvalSetting& eval,
                 BackendConfig& out, std::vector<Diagnostic>& diags);

// The watch documents (at most one: duplicate_watch) into `out`:
// `interval` a duration of at least one second, `remediate` "none" or
// "drift-only". Literal values only: they say how the stack is watched,
// not what it holds.
void LoadWatch(const std::vector<const ManifestDocument*>& docs, WatchConfig& out,
               std::vector<Diagnostic>& diags);

}  // namespace cairn
