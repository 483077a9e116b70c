// Saved plans (`cairn plan --out FILE`, `cairn apply FILE [DIR]`): what a
// plan records of the stack it was made for, and where it is applied.
//
// A saved plan belongs to a stack, not to a path: CI checks a stack out in
// one directory to plan and in another to apply. So the plan records, besides
// the state it was made against (lineage and serial, which CheckPlanIsCurrent
// compares), the stack's backend settings (which state that is) and a digest
// of each of its manifest files (what was planned). It applies in a directory
// holding the same stack: the same backend settings and the same manifests;
// anything else is refused, saying which files differ, before any state is
// opened.
//
// A plan made while the journal holds operations of an interrupted run is
// not saved: `cairn apply` completes those first, after which the plan would
// describe a state that no longer is.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/manifest/loader.h"
#include "engine/plan/plan.h"
#include "engine/state/state_store.h"

namespace cairn {

class Env;

// The stack's manifest files, each by its path relative to the stack
// directory, with "sha256:" and the SHA-256 of its content in hex: the files
// read as the stack (config.files) and the module files its resources,
// outputs, data sources and moves come from. The same wherever the stack is
// checked out; any file renamed, added, removed or edited shows.
Result<std::map<std::string, std::string>> ManifestDigests(const StackConfig& config,
                                                           const Env& env);

// FailedPrecondition, the message telling the user to run `cairn apply`
// first, when `pending` (the journal) holds operations of an interrupted
// run: `cairn plan --out` checks it before planning.
Status CheckPlanCanBeSaved(const std::vector<JournalEntry>& pending);

// Makes `plan` (made from `config`) the plan `cairn plan --out` writes: saved,
// with the variable values, the backend settings, the manifest digests and
// whether subdirectories were read (`recursive`). Refused as
// CheckPlanCanBeSaved refuses.
Status PrepareSavedPlan(Plan& plan, const StackConfig& config, bool recursive,
                        const std::vector<JournalEntry>& pending, const Env& env);

// Why `config` (a stack loaded from some directory) is not the stack `plan`
// was saved for, or "" when it is: the backend settings differ (another
// state), or the manifests do ("main.yaml changed, web.yaml added").
std::string SavedPlanMismatch(const Plan& plan, const StackConfig& config, const Env& env);

// Puts back into `plan` (saved) the write-only values it keeps by name
// only (PlannedChange::write_only), from `config` (its stack, loaded again
// with the plan's variables and the ephemeral ones given now). The error
// names what the manifests no longer set.
Status FillWriteOnly(Plan& plan, const StackConfig& config);

// The stack a saved plan applies to, loaded.
struct SavedPlanStack {
  std::string dir;  // the directory it was loaded from
  LoadResult load;  // loaded with the plan's variables
  // Why no directory holds the plan's stack; empty when found. When DIR was
  // given and does not load, the load's diagnostics say why.
  std::string error;
  bool ok() const { return error.empty(); }
};

// Finds and loads the stack `plan` (a saved plan) applies to, with `options`
// (paths, plan_vars and recursive are set here):
//   - `dir` given: that directory, refused when it holds another stack;
//   - else the current directory, when it holds the plan's stack;
//   - else the directory the plan was made in, when it still does;
//   - else an error saying what each holds, and asking for DIR.
SavedPlanStack LoadSavedPlanStack(const Plan& plan, const std::optional<std::string>& dir,
                                  LoadOptions options);

}  // namespace cairn
