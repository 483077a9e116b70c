// cairn workspace list|show|new|select|delete: several instances of one
// stack, each with a state of its own (engine/state/workspaces.h). Which one
// other commands work on: --workspace, else $CAIRN_WORKSPACE, else the one
// selected here (the stack's .cairn/workspace), else default.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "base/env.h"
#include "base/redact.h"
#include "cli/command.h"
#include "cli/engine_session.h"
#include "cli/stack_options.h"
#include "engine/state/workspaces.h"

namespace cairn::cli {
namespace {

struct WorkspaceFlags {
  StackFlags stack;
  std::string name;
  bool force = false;
  bool or_create = false;
};

// The stack's backend settings alone: the workspaces' states are opened
// here, not by the session. The workspace named for loading is "default"
// (a broken .cairn/workspace must not keep `select` from mending it).
std::unique_ptr<EngineSession> OpenForWorkspace(WorkspaceFlags& f, const GlobalOptions& global) {
  f.stack.workspace = kDefaultWorkspace;
  return EngineSession::Open(f.stack, global,
                             {.needs_api = false,
                              .settings_only = true,
                              .backend_only = true,
                              .create_state = false,
                              .open_state = false});
}

// The workspace other commands would work on now (without --workspace).
std::optional<ChosenWorkspace> CurrentWorkspace(const EngineSession& s) {
  ChosenWorkspace chosen;
  std::string error;
  if (!ChooseWorkspace("", {s.stack_root()}, chosen, error)) {
    std::cerr << "error: " << error << "\n";
    return std::nullopt;
  }
  return chosen;
}

int WorkspaceFail(const Status& st) {
  std::cerr << "error: " << Redact(st.message()) << "\n";
  return 1;
}

// CAIRN_WORKSPACE outranks the selection: say so when it names another.
void WarnIfEnvironmentOverrides(const std::string& selected) {
  const char* env = std::getenv("CAIRN_WORKSPACE");
  if (env && *env && selected != env) {
    std::cerr << "warning: CAIRN_WORKSPACE=" << env
              << " is set: commands work on that workspace, not on \"" << selected
              << "\", while it is\n";
  }
}

int WorkspaceList(WorkspaceFlags& f, const GlobalOptions& global) {
  auto s = OpenForWorkspace(f, global);
  if (!s) return 1;
  auto current = CurrentWorkspace(*s);
  if (!current) return 1;
  Result<std::vector<std::string>> names = ListWorkspaces(s->stack_root(), s->backend_spec());
  if (!names.ok()) return WorkspaceFail(names.status());
  for (const std::string& n : *names) {
    std::cout << (n == current->name ? "* " : "  ") << n << "\n";
  }
  return 0;
}

int WorkspaceShow(WorkspaceFlags& f, const GlobalOptions& global) {
  auto s = OpenForWorkspace(f, global);
  if (!s) return 1;
  auto current = CurrentWorkspace(*s);
  if (!current) return 1;
  std::cout << current->name << "\n";
  return 0;
}

int WorkspaceSelect(WorkspaceFlags& f, const GlobalOptions& global, bool create) {
  if (std::string problem = WorkspaceNameProblem(f.name); !problem.empty()) {
    std::cerr << "error: " << problem << "\n";
    return 1;
  }
  auto s = OpenForWorkspace(f, global);
  if (!s) return 1;
  const std::string& root = s->stack_root();
  if (create) {
    if (Status st = CreateWorkspace(root, s->backend_spec(), f.name); !st.ok())
      return WorkspaceFail(st);
  } else {
    Result<bool> exists = WorkspaceExists(root, s->backend_spec(), f.name);
    if (!exists.ok()) return WorkspaceFail(exists.status());
    if (!*exists && f.or_create) {
      if (Status st = CreateWorkspace(root, s->backend_spec(), f.name); !st.ok())
        return WorkspaceFail(st);
      create = true;
    } else if (!*exists) {
      std::cerr << "error: unknown workspace \"" << f.name << "\"; the workspaces are "
                << Redact(KnownWorkspacesText(root, s->backend_spec()))
                << "\nCreate it with: cairn workspace new " << f.name
                << " (or select it with --or-create)\n";
      return 1;
    }
  }
  if (Status st = WriteSelectedWorkspace(PosixEnv(), root, f.name); !st.ok())
    return WorkspaceFail(st);
  std::cout << (create ? "Created and selected" : "Switched to") << " workspace \"" << f.name
            << "\".\n";
  WarnIfEnvironmentOverrides(f.name);
  return 0;
}

int WorkspaceDelete(WorkspaceFlags& f, const GlobalOptions& global) {
  if (std::string problem = WorkspaceNameProblem(f.name); !problem.empty()) {
    std::cerr << "error: " << problem << "\n";
    return 1;
  }
  if (f.name == kDefaultWorkspace) {
    std::cerr << "error: the workspace \"default\" always exists and cannot be deleted\n";
    return 1;
  }
  auto s = OpenForWorkspace(f, global);
  if (!s) return 1;
  auto current = CurrentWorkspace(*s);
  if (!current) return 1;
  if (current->name == f.name) {
    std::cerr << "error: workspace \"" << f.name << "\" is the current one"
              << (current->source.empty() ? "" : " (" + current->source + ")")
              << ": select another first (cairn workspace select default)\n";
    return 1;
  }
  size_t forgotten = 0;
  if (f.force) {
    BackendSpec spec = s->backend_spec();
    spec.workspace = f.name;
    if (auto store = OpenExistingStateStore(s->stack_root(), spec); store.ok()) {
      if (auto state = (*store)->Load(); state.ok()) forgotten = state->resources.size();
    }
  }
  if (Status st = DeleteWorkspace(s->stack_root(), s->backend_spec(), f.name, f.force); !st.ok()) {
    return WorkspaceFail(st);
  }
  std::cout << "Deleted workspace \"" << f.name << "\".\n";
  if (forgotten > 0) {
    std::cerr << "warning: its state tracked " << forgotten
              << (forgotten == 1 ? " resource, which is" : " resources, which are")
              << " no longer managed by Cairn but still exist\n";
  }
  return 0;
}

std::function<int()> SetupWorkspace(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<WorkspaceFlags>();
  auto which = std::make_shared<std::function<int()>>();
  sub.require_subcommand(1);
  sub.footer(
      "A workspace is one instance of the stack with a state of its own (dev, staging,\n"
      "prod). \"default\" always exists and is the state the stack had before any other\n"
      "workspace. Commands work on --workspace NAME, else $CAIRN_WORKSPACE, else the one\n"
      "selected here, else default; manifests read the name as ${workspace}.\n\n"
      "Examples:\n"
      "  cairn workspace new staging           # create it, and select it\n"
      "  cairn apply                           # applies to staging's state\n"
      "  cairn workspace list                  # the current one is marked with *\n"
      "  cairn plan --workspace prod           # once, without selecting it\n"
      "  cairn workspace select default\n"
      "  cairn workspace delete staging        # refused while it tracks resources");
  auto add = [&](const std::string& name, const std::string& desc, const std::string& footer,
                 std::function<int(WorkspaceFlags&, const GlobalOptions&)> run, bool takes_name) {
    CLI::App* c = sub.add_subcommand(name, desc);
    c->callback(
        [which, f, run, &global] { *which = [f, run, &global] { return run(*f, global); }; });
    c->footer(footer);
    if (takes_name) c->add_option("NAME", f->name, "The workspace's name")->required();
    c->add_option("DIR", f->stack.paths, "Stack directory (default: .)")->expected(0, 1);
    AddStackFlags(*c, f->stack, /*multiple_paths=*/false, /*positional_dir=*/false);
    // The workspace is the command's argument here, not a flag.
    c->remove_option(c->get_option("--workspace"));
    return c;
  };
  add("list", "List the workspaces, the current one marked with *",
      "Example:\n  cairn workspace list examples/web", WorkspaceList, false);
  add("show", "Print the current workspace's name",
      "The one commands work on without --workspace: $CAIRN_WORKSPACE, else the selected one,\n"
      "else default.\n\nExample:\n  cairn workspace show",
      WorkspaceShow, false);
  add(
      "new", "Create a workspace (an empty state) and select it",
      "A name is 1 to 64 lowercase letters, digits, '_' and '-', starting with a letter or\n"
      "digit.\n\nExample:\n  cairn workspace new staging examples/web",
      [](WorkspaceFlags& fl, const GlobalOptions& g) {
        return WorkspaceSelect(fl, g, /*create=*/true);
      },
      true);
  auto select = add(
      "select", "Select the workspace commands work on",
      "Records it in the stack's .cairn/workspace. An unknown name is an error, unless\n"
      "--or-create.\n\nExamples:\n  cairn workspace select prod\n"
      "  cairn workspace select --or-create pr-1234",
      [](WorkspaceFlags& fl, const GlobalOptions& g) {
        return WorkspaceSelect(fl, g, /*create=*/false);
      },
      true);
  select->add_flag("--or-create", f->or_create, "Create the workspace when it does not exist");
  auto del = add("delete", "Delete a workspace and its state",
                 "Refused for default, for the current workspace, while its state is locked, and\n"
                 "while its state still tracks resources (destroy them first), unless --force:\n"
                 "then they are forgotten, not deleted.\n\n"
                 "Examples:\n  cairn destroy --workspace staging && cairn workspace delete staging",
                 WorkspaceDelete, true);
  del->add_flag("--force", f->force,
                "Delete even though its state tracks resources (they are forgotten, not deleted)");
  return [which] { return (*which)(); };
}

}  // namespace

CAIRN_COMMAND("workspace", "Manage workspaces: several states of one stack", 75, SetupWorkspace);

}  // namespace cairn::cli
