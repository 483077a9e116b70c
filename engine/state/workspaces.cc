#include "engine/state/workspaces.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "engine/state/postgres_state_store.h"
#include "engine/state/state_lock.h"

namespace cairn {
namespace {

bool WorkspacesUseSqlite(const BackendSpec& spec) {
  return spec.type.empty() || spec.type == "sqlite";
}

BackendSpec WorkspaceSpec(const BackendSpec& spec, const std::string& name) {
  BackendSpec out = spec;
  out.workspace = name;
  return out;
}

}  // namespace

std::string WorkspaceNameProblem(const std::string& name) {
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool ok = !name.empty() && name.size() <= 64 && lower_or_digit(name[0]) &&
            std::all_of(name.begin(), name.end(),
                        [&](char c) { return lower_or_digit(c) || c == '_' || c == '-'; });
  if (ok) return "";
  return "invalid workspace name \"" + name +
         "\": a workspace name is 1 to 64 characters, lowercase letters, digits, '_' and '-', "
         "starting with a letter or digit (e.g. dev, staging, prod-eu)";
}

Result<std::vector<std::string>> ListWorkspaces(const std::string& stack_root,
                                                const BackendSpec& spec) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  if (WorkspacesUseSqlite(spec)) {
    // <dir>/workspaces/NAME/<file> for each NAME (open_state_store.h).
    fs::path base(SqliteStatePath(stack_root, WorkspaceSpec(spec, kDefaultWorkspace)));
    fs::path dir = base.parent_path() / "workspaces";
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (!WorkspaceNameProblem(name).empty() || name == kDefaultWorkspace) continue;
      if (fs::exists(it->path() / base.filename(), ec)) names.push_back(name);
    }
    if (ec && ec != std::errc::no_such_file_or_directory) {
      return Status::IOError("cannot list " + dir.string() + ": " + ec.message());
    }
  } else if (spec.type == "postgres") {
    Result<std::string> url = PostgresBackendUrl(spec);
    if (!url.ok()) return url.status();
    const std::string prefix = spec.stack_name + kPostgresWorkspaceSeparator;
    Result<std::vector<std::string>> keys = PostgresStateStore::ListStacks(*url, prefix);
    if (!keys.ok()) return keys.status();
    for (const std::string& key : *keys) {
      std::string name = key.substr(prefix.size());
      if (WorkspaceNameProblem(name).empty() && name != kDefaultWorkspace) names.push_back(name);
    }
  } else {
    return Status::InvalidArgument("unknown state backend type '" + spec.type +
                                   "' (expected sqlite or postgres)");
  }
  std::sort(names.begin(), names.end());
  names.insert(names.begin(), kDefaultWorkspace);
  return names;
}

Result<bool> WorkspaceExists(const std::string& stack_root, const BackendSpec& spec,
                             const std::string& name) {
  if (IsDefaultWorkspace(name)) return true;
  if (!WorkspaceNameProblem(name).empty()) return false;
  auto store = OpenExistingStateStore(stack_root, WorkspaceSpec(spec, name));
  if (store.ok()) return true;
  if (store.status().code() == StatusCode::kNotFound) return false;
  return store.status();
}

std::string KnownWorkspacesText(const std::string& stack_root, const BackendSpec& spec) {
  Result<std::vector<std::string>> names = ListWorkspaces(stack_root, spec);
  if (!names.ok()) return "(cannot list them: " + names.status().message() + ")";
  std::string out;
  for (const std::string& n : *names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Status CreateWorkspace(const std::string& stack_root, const BackendSpec& spec,
                       const std::string& name) {
  if (std::string problem = WorkspaceNameProblem(name); !problem.empty()) {
    return Status::InvalidArgument(problem);
  }
  Result<bool> exists = WorkspaceExists(stack_root, spec, name);
  if (!exists.ok()) return exists.status();
  if (*exists) return Status::AlreadyExists("workspace \"" + name + "\" already exists");
  auto store = OpenStateStore(stack_root, WorkspaceSpec(spec, name));
  return store.ok() ? Status::Ok() : store.status();
}

Status DeleteWorkspace(const std::string& stack_root, const BackendSpec& spec,
                       const std::string& name, bool force) {
  if (IsDefaultWorkspace(name)) {
    return Status::InvalidArgument("the workspace \"default\" always exists and cannot be deleted");
  }
  if (std::string problem = WorkspaceNameProblem(name); !problem.empty()) {
    return Status::InvalidArgument(problem);
  }
  const BackendSpec ws = WorkspaceSpec(spec, name);
  {
    auto store = OpenExistingStateStore(stack_root, ws);
    if (!store.ok()) {
      if (store.status().code() != StatusCode::kNotFound) return store.status();
      return Status::NotFound("workspace \"" + name + "\" does not exist; the workspaces are " +
                              KnownWorkspacesText(stack_root, spec));
    }
    Result<std::optional<LockInfo>> held = (*store)->CurrentLock();
    if (!held.ok()) return held.status();
    if (*held) return LockConflict(**held);
    Result<StateSnapshot> state = (*store)->Load();
    if (!state.ok()) return state.status();
    if (!force && !state->resources.empty()) {
      size_t n = state->resources.size();
      return Status::FailedPrecondition("workspace \"" + name + "\" still tracks " +
                                        std::to_string(n) + (n == 1 ? " resource" : " resources") +
                                        ": destroy them first (cairn destroy --workspace " + name +
                                        "), or pass --force to forget them (they are not deleted)");
    }
  }  // the store is closed before its file goes
  if (!WorkspacesUseSqlite(spec)) {
    Result<std::string> url = PostgresBackendUrl(ws);
    if (!url.ok()) return url.status();
    return PostgresStateStore::DeleteStack(*url, PostgresStackKey(ws));
  }
  namespace fs = std::filesystem;
  const std::string path = SqliteStatePath(stack_root, ws);
  for (const std::string& file : {path + "-wal", path + "-shm", path}) {
    std::error_code ec;
    fs::remove(file, ec);
    if (ec) return Status::IOError("cannot remove " + file + ": " + ec.message());
  }
  std::error_code ec;
  fs::remove(fs::path(path).parent_path(), ec);  // only when empty; what else is there stays
  return Status::Ok();
}

std::string SelectedWorkspacePath(const std::string& stack_root) {
  return (std::filesystem::path(stack_root) / ".cairn" / "workspace").string();
}

Result<std::optional<std::string>> ReadSelectedWorkspace(const Env& env,
                                                         const std::string& stack_root) {
  const std::string path = SelectedWorkspacePath(stack_root);
  if (!env.Exists(path)) return std::optional<std::string>();
  Result<std::string> text = env.ReadFile(path, 4096);
  if (!text.ok()) return text.status();
  std::string name = *text;
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r' || name.back() == ' ')) {
    name.pop_back();
  }
  if (std::string problem = WorkspaceNameProblem(name); !problem.empty()) {
    return Status::FailedPrecondition(path + ": " + problem +
                                      "; select one with `cairn workspace select NAME`");
  }
  return std::optional<std::string>(name);
}

Status WriteSelectedWorkspace(const Env& env, const std::string& stack_root,
                              const std::string& name) {
  const std::string dir = (std::filesystem::path(stack_root) / ".cairn").string();
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::IOError("cannot create " + dir + ": " + std::strerror(errno));
  }
  return env.WriteFileAtomically(SelectedWorkspacePath(stack_root), name + "\n");
}

}  // namespace cairn
