#include "engine/state/open_state_store.h"

#include <cstdlib>
#include <filesystem>

#include "engine/state/postgres_state_store.h"
#include "engine/state/sqlite_state_store.h"

namespace cairn {

bool IsDefaultWorkspace(const std::string& name) { return name.empty() || name == "default"; }

std::string SqliteStatePath(const std::string& stack_root, const BackendSpec& spec) {
  namespace fs = std::filesystem;
  fs::path base = spec.path.empty() ? fs::path(SqliteStateStore::DefaultPath(stack_root))
                                    : fs::path(stack_root) / fs::path(spec.path);
  if (IsDefaultWorkspace(spec.workspace)) return base.string();
  return (base.parent_path() / "workspaces" / spec.workspace / base.filename()).string();
}

std::string PostgresStackKey(const BackendSpec& spec) {
  if (IsDefaultWorkspace(spec.workspace)) return spec.stack_name;
  return spec.stack_name + kPostgresWorkspaceSeparator + spec.workspace;
}

namespace {

Result<std::unique_ptr<StateStore>> Open(const std::string& stack_root, const BackendSpec& spec,
                                         Clock* clock, bool create) {
  if (spec.type.empty() || spec.type == "sqlite") {
    std::string path = SqliteStatePath(stack_root, spec);
    SqliteStateOptions options;
    options.clock = clock;
    options.encryption = spec.encryption;
    options.stack_root = stack_root;
    options.for_rekey = spec.for_rekey;
    Result<std::unique_ptr<SqliteStateStore>> store =
        create ? SqliteStateStore::Open(path, options)
               : SqliteStateStore::OpenExisting(path, options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<StateStore>(std::move(*store));
  }
  if (spec.type == "postgres") {
    Result<std::string> url = PostgresBackendUrl(spec);
    if (!url.ok()) return url.status();
    if (spec.stack_name.empty()) {
      return Status::InvalidArgument(
          "backend postgres needs a name: stacks sharing a database are told apart by it alone");
    }
    if (spec.stack_name.find(kPostgresWorkspaceSeparator) != std::string::npos) {
      return Status::InvalidArgument("backend postgres: the name \"" + spec.stack_name +
                                     "\" must not hold \"" + kPostgresWorkspaceSeparator +
                                     "\", which keys the stack's workspaces");
    }
    const std::string key = PostgresStackKey(spec);
    PostgresStateOptions options;
    options.clock = clock;
    options.encryption = spec.encryption;
    options.stack_root = stack_root;
    options.for_rekey = spec.for_rekey;
    Result<std::unique_ptr<PostgresStateStore>> store =
        create ? PostgresStateStore::Open(*url, key, options)
               : PostgresStateStore::OpenExisting(*url, key, options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<StateStore>(std::move(*store));
  }
  return Status::InvalidArgument("unknown state backend type '" + spec.type +
                                 "' (expected sqlite or postgres)");
}

}  // namespace

Result<std::string> PostgresBackendUrl(const BackendSpec& spec) {
  if (spec.url_env.empty()) {
    return Status::InvalidArgument(
        "backend postgres needs url_env: the name of the environment variable that holds "
        "the connection URL");
  }
  const char* url = std::getenv(spec.url_env.c_str());
  if (url == nullptr || *url == '\0') {
    return Status::InvalidArgument("backend postgres: environment variable " + spec.url_env +
                                   " is not set; it must hold the PostgreSQL connection URL");
  }
  return std::string(url);
}

Result<std::unique_ptr<StateStore>> OpenStateStore(const std::string& stack_root,
                                                   const BackendSpec& spec, Clock* clock) {
  return Open(stack_root, spec, clock, /*create=*/true);
}

Result<std::unique_ptr<StateStore>> OpenExistingStateStore(const std::string& stack_root,
                                                           const BackendSpec& spec, Clock* clock) {
  return Open(stack_root, spec, clock, /*create=*/false);
}

}  // namespace cairn
