// Workspaces: several instances of one stack, each with a state of its own
// (dev, staging, prod), as Terraform's `terraform workspace`. Where each
// workspace's state lives is OpenStateStore's (open_state_store.h):
// "default" is the stack's one state, where it always was; another
// workspace exists exactly when its state does, so creating one creates an
// empty state and deleting one removes it.
//
// Which workspace a command works on: --workspace, else $CAIRN_WORKSPACE,
// else the one `cairn workspace select` recorded in the stack's
// `.cairn/workspace` (one line: the name), else "default".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "engine/state/open_state_store.h"

namespace cairn {

inline constexpr const char* kDefaultWorkspace = "default";

// Why `name` is not a workspace name, or empty when it is one: a lowercase
// letter or digit, then up to 63 lowercase letters, digits, '_' or '-'.
std::string WorkspaceNameProblem(const std::string& name);

// Every workspace of the stack, "default" first (it always exists), the
// others sorted.
Result<std::vector<std::string>> ListWorkspaces(const std::string& stack_root,
                                                const BackendSpec& spec);

// Whether `name` is a workspace of the stack ("default" always is).
Result<bool> WorkspaceExists(const std::string& stack_root, const BackendSpec& spec,
                             const std::string& name);

// "default, dev, prod": for a message about an unknown workspace.
std::string KnownWorkspacesText(const std::string& stack_root, const BackendSpec& spec);

// Creates the workspace's (empty) state: InvalidArgument for a bad name,
// AlreadyExists when it exists ("default" always does).
Status CreateWorkspace(const std::string& stack_root, const BackendSpec& spec,
                       const std::string& name);

// Removes the workspace's state. Refused: "default" (InvalidArgument), an
// unknown name (NotFound), a workspace whose lock is held (Conflict, naming
// the holder), and one whose state still tracks resources
// (FailedPrecondition, saying how many) unless `force`: those are then
// forgotten, not destroyed.
Status DeleteWorkspace(const std::string& stack_root, const BackendSpec& spec,
                       const std::string& name, bool force);

// The stack's `.cairn/workspace`.
std::string SelectedWorkspacePath(const std::string& stack_root);
// The workspace recorded there; nullopt when none is (no file).
Result<std::optional<std::string>> ReadSelectedWorkspace(const Env& env,
                                                         const std::string& stack_root);
// Records `name` there (written atomically; `.cairn/` made 0700 if missing).
Status WriteSelectedWorkspace(const Env& env, const std::string& stack_root,
                              const std::string& name);

}  // namespace cairn
