#include "engine/state/open_state_store.h"

#include <cstdlib>
#include <filesystem>

#include "engine/state/postgres_state_store.h"
#include "engine/state/sqlite_state_store.h"

namespace cairn {
namespace {

Result<std::unique_ptr<StateStore>> Open(const std::string& stack_root, const BackendSpec& spec,
                                         Clock* clock, bool create) {
  namespace fs = std::filesystem;
  if (spec.type.empty() || spec.type == "sqlite") {
    std::string path = spec.path.empty() ? SqliteStateStore::DefaultPath(stack_root)
                                         : (fs::path(stack_root) / fs::path(spec.path)).string();
    Result<std::unique_ptr<SqliteStateStore>> store =
        create ? SqliteStateStore::Open(path, clock) : SqliteStateStore::OpenExisting(path, clock);
    if (!store.ok()) return store.status();
    return std::unique_ptr<StateStore>(std::move(*store));
  }
  if (spec.type == "postgres") {
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
    if (spec.stack_name.empty()) {
      return Status::InvalidArgument(
          "backend postgres needs a name: stacks sharing a database are told apart by it alone");
    }
    Result<std::unique_ptr<PostgresStateStore>> store =
        create ? PostgresStateStore::Open(url, spec.stack_name, clock)
               : PostgresStateStore::OpenExisting(url, spec.stack_name, clock);
    if (!store.ok()) return store.status();
    return std::unique_ptr<StateStore>(std::move(*store));
  }
  return Status::InvalidArgument("unknown state backend type '" + spec.type +
                                 "' (expected sqlite or postgres)");
}

}  // namespace

Result<std::unique_ptr<StateStore>> OpenStateStore(const std::string& stack_root,
                                                   const BackendSpec& spec, Clock* clock) {
  return Open(stack_root, spec, clock, /*create=*/true);
}

Result<std::unique_ptr<StateStore>> OpenExistingStateStore(const std::string& stack_root,
                                                           const BackendSpec& spec, Clock* clock) {
  return Open(stack_root, spec, clock, /*create=*/false);
}

}  // namespace cairn
