// OpenStateStore: the one place that turns a stack's backend settings into a
// StateStore, so commands never name a backend class.
//
//   type "sqlite" (or empty): the file `path`, relative to the stack root
//     unless absolute; empty path = `.cairn/state.db`.
//   type "postgres": the URL is read from the environment variable `url_env`
//     (never from a manifest, never logged); the stack's rows are keyed by
//     `stack_name`, which is required (a directory's name is not unique).
//
// Workspaces (engine/state/workspaces.h): `workspace` empty or "default" is
// the stack's one state as above, exactly where it always was. Any other
// workspace NAME has a state of its own beside it:
//   sqlite:   <directory of the path>/workspaces/NAME/<file name of the path>,
//             so `.cairn/workspaces/NAME/state.db` by default;
//   postgres: the rows keyed by "<stack_name>:workspace:NAME" (a stack name
//             holding ":workspace:" is refused, so keys never collide).
// Each state has its own lock, lineage and serial.
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "engine/state/state_cipher.h"
#include "engine/state/state_store.h"

namespace cairn {

struct BackendSpec {
  std::string type = "sqlite";  // "sqlite" or "postgres"
  std::string path;             // sqlite: relative to the stack root; empty = .cairn/state.db
  std::string url_env;          // postgres: name of the variable holding the connection URL
  std::string stack_name;       // postgres: key of this stack's rows (required)
  std::string workspace;        // empty or "default": the stack's default state
  // The backend's `encryption` setting (engine/state/state_cipher.h).
  StateEncryptionSpec encryption = {};
  // Opened for StateStore::Rekey(): see SqliteStateOptions::for_rekey.
  bool for_rekey = false;
};

// Where the workspaces' PostgreSQL keys part from the stack's name.
inline constexpr const char* kPostgresWorkspaceSeparator = ":workspace:";

// Empty or "default".
bool IsDefaultWorkspace(const std::string& name);
// The SQLite file of `spec`'s workspace (sqlite backends only).
std::string SqliteStatePath(const std::string& stack_root, const BackendSpec& spec);
// The PostgreSQL key of `spec`'s workspace (postgres backends only).
std::string PostgresStackKey(const BackendSpec& spec);
// The connection URL of a postgres backend, read from its `url_env`
// variable; InvalidArgument naming the variable when it is not given, unset
// or empty.
Result<std::string> PostgresBackendUrl(const BackendSpec& spec);

// InvalidArgument for an unknown type or a postgres backend whose variable is
// unset or empty (the message names the variable); otherwise what the
// backend's Open returns.
Result<std::unique_ptr<StateStore>> OpenStateStore(const std::string& stack_root,
                                                   const BackendSpec& spec,
                                                   Clock* clock = &SystemClock());

// The same, but only when the stack has a state already: NotFound when it
// has none, and then nothing was created (no directory, file, table or row).
// What commands that only read (state list, show, pull) open, so that
// looking never leaves a state behind.
Result<std::unique_ptr<StateStore>> OpenExistingStateStore(const std::string& stack_root,
                                                           const BackendSpec& spec,
                                                           Clock* clock = &SystemClock());

}  // namespace cairn
