// Plan: what apply will do, and why. MakePlan is a function over values:
//   (desired config, prior state, live view) -> {plan, diagnostics}
// with no I/O, so every decision is unit-testable.
//
// Per address it compares the desired spec with the live resource (or, with
// refresh off, the state) and picks one Action:
//   create   desired, not in state (or in state but deleted out of band)
//   update   editable fields differ
//   replace  an immutable field differs (named in replace_fields), or the
//            resource failed (tainted in the state, or live status failed:
//            replace_reason); the old one is deleted first unless
//            lifecycle.create_before_destroy
//   delete   in state, no longer desired
//   no-op    nothing differs
// Addresses moved by `kind: moved` documents are moved in the state first:
// a moved resource is compared at its new address, and the move alone is a
// change (the plan's `moves`). A move whose FROM is not in the state is
// done already and skipped; one whose TO is taken is an error. Then what a
// `kind: removed` document with destroy false names is taken out of that
// state (the plan's `forgets`): it is neither compared nor deleted.
// Only fields the manifest sets are compared: computed attributes and fields
// the API defaults never show as changes; lifecycle.ignore_changes fields are
// skipped; a value that depends on something not yet created is unknown and
// shows as "(known after apply)". prevent_destroy turns a delete or replace
// into an error diagnostic.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/action.h"
#include "engine/manifest/config.h"
#include "engine/state/moves.h"
#include "engine/state/state_store.h"

namespace cairn {

// What the plan needs to know about a kind (from schemas/<kind>.schema.json).
struct KindInfo {
  std::set<std::string> immutable;
  std::set<std::string> computed;
  // spec field -> kind it refers to (ids compared in canonical form)
  std::map<std::string, std::string> references;
  std::set<std::string> grow_only;  // numeric fields that may rise, never fall
  // Fields the API takes on create and never returns (x-cairn.write_only):
  // never compared, never in a plan's `after` or `changes` (PlannedChange::
  // write_only holds them).
  std::set<std::string> write_only;
  // The prefix of this kind's ids' second spelling (x-cairn.id_alias):
  // `inst_<32 hex>` names the instance whose id is that UUID.
  std::string id_alias;
};
using KindCatalog = std::map<std::string, KindInfo>;

// `id` in its canonical form (base/identifiers.h), by the spellings the
// catalog's kinds declare: what ids are compared and keyed by.
std::string CanonicalId(const KindCatalog& kinds, std::string_view id);

// Whether a field's two values are the same: equal, or for a reference
// field (KindInfo::references) naming the same objects once their ids are
// canonical (a network named `net_<hex>` in one and by its UUID in the other).
bool SameFieldValue(const KindCatalog& kinds, const Value& before, const Value& after,
                    bool is_reference);

struct AttributeChange {
  std::string field;  // top-level spec field
  Value before;       // null when absent
  Value after;        // may be UnknownValue()
  bool forces_replacement = false;
};

struct PlannedChange {
  // As the state records it: the text of its StateKey, the resource's
  // address or a deposed object's ("instance.web (deposed)").
  std::string address;
  // `address` parsed: the resource's address (for a deposed object too),
  // what --target and module paths are matched on, so that nothing parses
  // the text again; and whether it is the deposed object of a
  // create_before_destroy replace (only ever deleted). Empty and false for
  // a state key that is no address (a damaged state).
  ResourceAddress parsed_address;
  bool deposed = false;
  std::string kind;
  Action action = Action::kNoOp;
  std::string remote_id;  // update, replace, delete: the existing resource
  Value before;           // attributes as known (live or state); null for create
  // The desired spec, with references to other resources kept as "${...}"
  // so that apply resolves them from what it has just created. Null for delete.
  Value after;
  // The write-only fields (KindInfo::write_only) the manifest sets, field
  // -> desired value (references kept, as in `after`), out of `after` and
  // `changes`: a create sends them, nothing shows or keeps them. A saved
  // plan keeps the names alone (each value null); `cairn apply PLAN` takes
  // the values from the manifests again (FillWriteOnly).
  Value write_only = Value::object();
  std::vector<AttributeChange> changes;     // update and replace
  std::vector<std::string> replace_fields;  // immutable fields forcing replacement
  // A replace of a resource that is not usable, and why ("provisioning
  // failed: provisioning_failed"): tainted in the state, or failed live.
  std::string replace_reason;
  // A replace's order (lifecycle.create_before_destroy: create, then
  // delete). Carried for every change (the saved plan writes it as
  // `create_before_destroy`); only a replace reads it.
  ReplaceOrder replace_order = ReplaceOrder::kDeleteThenCreate;
  std::vector<std::string> depends_on;        // desired dependencies (addresses)
  std::vector<std::string> prior_depends_on;  // from state: dependencies of the old resource
  std::string note;                           // e.g. "deleted outside Cairn"
  // The address the state recorded it at, when a `kind: moved` document
  // moves it here (the plan's `moves`).
  std::string moved_from;
  // Conditions the plan could not decide, their values known only after
  // apply: apply checks the preconditions before the resource's request is
  // sent, the postconditions once it is ready (`self` being the resource as
  // the API returned it). Those the plan decided are not carried.
  std::vector<ConditionConfig> preconditions, postconditions;

  // A replace that creates the new object before it deletes the old one.
  bool CreatesBeforeDeleting() const {
    return action == Action::kReplace && replace_order == ReplaceOrder::kCreateThenDelete;
  }
};

// A `check` document's result: every assertion true (kPassed), one false
// (kFailed, with each false one's message), or one not known yet and none
// false (kUnknown: apply decides it).
struct CheckResult {
  enum class Status { kPassed, kFailed, kUnknown };
  std::string name;
  Status status = Status::kPassed;
  std::vector<std::string> messages;  // of the false assertions
};

const char* CheckStatusName(CheckResult::Status status);
// [{"name", "status" ("passed", "failed", "unknown"), "messages"}]
Value CheckResultsToJson(const std::vector<CheckResult>& results);

struct OutputPlan {
  std::string name;
  Value value;  // with references kept
  bool sensitive = false;
  std::vector<ConditionConfig> preconditions;  // undecided at plan: checked by apply
};

// An output whose recorded value (in the state) the apply will change:
// create (new output), update, or delete (gone from the manifests, or a
// destroy). `after` may be UnknownValue(); a sensitive one is shown masked.
struct OutputChange {
  std::string name;
  Action action = Action::kCreate;
  Value before;  // null for a create
  Value after;   // null for a delete
  bool sensitive = false;
};

// An operation an interrupted apply or destroy left in the journal (sent or
// not, its outcome unknown): `cairn apply` and `cairn destroy` complete it,
// sending it again with its original key and body, before anything else, and
// only then plan. A plan shows these as what happens first.
struct PendingOperation {
  std::string address;
  std::string kind;
  Action action = Action::kCreate;  // create, update or delete
  std::string remote_id;            // update, delete: the object it acts on
  // What follows it, when the plan can tell: "then destroyed: no longer in
  // the manifests" for a create of what the manifests no longer declare.
  std::string note;
};

// An object a `kind: removed` document with `destroy: false` forgets: apply
// drops it from the state, with no request to the API, and it lives on
// unmanaged ("will no longer be managed").
struct PlannedForget {
  std::string address;  // its state key's text (a deposed object's too)
  std::string kind;
  std::string remote_id;
};

// An object a `kind: import` document adopts (Terraform's "will be
// imported"): read by its id when the plan was made (engine/operations:
// ReadImports), recorded in the state by apply in its first commit (with
// the moves and forgets), with no request. Its change in `changes` (at
// `address`) is judged against these attributes: a no-op, or the update
// the manifests ask for, which apply then makes.
struct PlannedImport {
  std::string address;  // a resource instance, as the state keys it
  std::string kind;
  std::string remote_id;
  Value attributes = Value::object();  // as read, with "id"
};

struct Plan {
  // 2: saved plans record their stack's backend and manifests; a destroy
  // with targets keeps outputs; the journal's pending operations are shown.
  // 3: changes, outputs and checks carry the conditions apply checks.
  // 4: objects forgotten (`forgets`, the summary's "forget"). Version 3 is
  // still read (it is version 4 with nothing forgotten); a cairn that reads
  // only 3 refuses 4, rather than apply it without its forgets.
  // 5: objects imported (`imports`, the summary's "import"). Versions 3
  // and 4 are still read (nothing imported); a cairn that reads only up to
  // 4 refuses 5, rather than apply it without its imports.
  // 6: write-only fields by name (`changes[].write_only`) and the ephemeral
  // variables planned with (`ephemeral_variables`), whose values no plan
  // keeps. Versions 3 to 5 are still read; a cairn that reads only up to 5
  // refuses 6, rather than create a resource without its write-only values.
  static constexpr int kFormatVersion = 6;
  static constexpr int kOldestReadableFormatVersion = 3;
  // Absolute path of the stack directory the plan was made in (a saved plan
  // applies wherever the same stack is: engine/operations/saved_plan.h).
  std::string stack;
  std::string lineage;  // of the state the plan was made against
  int64_t serial = 0;   // the state serial it was made against: apply refuses if moved
  bool destroy = false;
  std::vector<PlannedChange> changes;  // every address, no-ops included, in apply order
  // The outputs the apply records (replacing every recorded one): all the
  // manifests declare; none for a destroy; for a destroy with targets, those
  // whose value still resolves once its deletes are made.
  std::vector<OutputPlan> outputs;
  std::vector<OutputChange> output_changes;  // outputs whose recorded value changes
  // The `check` assertions the plan could not decide: apply evaluates them
  // once every change is made, a false one a warning.
  std::vector<CheckConfig> checks;
  // Every check document's result at plan (reported, never applied).
  std::vector<CheckResult> check_results;
  // Data sources as read at plan time, "data.KIND.NAME" -> attributes:
  // apply resolves references to them from these, not from a new read.
  std::map<std::string, Value> data;
  // State addresses the apply moves first ({from, to}, from `kind: moved`
  // documents); `changes` already name the new addresses.
  AddressMoves moves;
  // Objects the apply forgets, in the same commit as the moves, before any
  // operation (`kind: removed` with destroy false), at their addresses once
  // moved; `changes` hold none of them.
  std::vector<PlannedForget> forgets;
  // Objects the apply records in the state in that same first commit
  // (`kind: import`), before any operation; each has its change in
  // `changes`, at the same address.
  std::vector<PlannedImport> imports;
  // The journal's operations of an interrupted run, which apply completes
  // before this plan's changes (a saved plan never has any: it is not saved
  // over them). The changes are against the state as it was before them.
  std::vector<PendingOperation> pending;
  std::vector<std::string> sensitive_values;  // values to mask in reports
  // Written by `cairn plan --out`, for `cairn apply FILE`. The output of
  // `cairn plan --json` is for reading: its sensitive values are redacted,
  // so apply refuses it.
  bool saved = false;
  // A saved plan's variable values (set by `cairn plan --out` only):
  // `cairn apply FILE` loads the stack's provider and backend settings with
  // them, so the --var values given at plan time need not be given again.
  std::map<std::string, Value> variables;
  // Which of them are sensitive: read back, their strings are the saved
  // plan's sensitive_values again, so that what shows it masks them.
  std::vector<std::string> sensitive_variables;
  // The ephemeral variables set when it was planned: names only, their
  // values kept nowhere; `cairn apply FILE` needs them given again.
  std::vector<std::string> ephemeral_variables;
  // Saved plans only: the stack they apply to (engine/operations/saved_plan.h).
  // Its backend settings, which name the state the plan was made against; its
  // manifest files by path relative to the stack directory, each with
  // "sha256:" and the digest of its content; whether subdirectories were read.
  BackendConfig backend;
  // The workspace whose state it was planned against (saved plans;
  // "default" for plans of format 4 and older, which had none).
  std::string workspace = "default";
  std::map<std::string, std::string> manifests;
  bool recursive = false;

  struct Counts {
    int add = 0, change = 0, replace = 0, destroy = 0, noop = 0, move = 0, pending = 0, forget = 0,
        to_import = 0;
  };
  Counts counts() const;
  // A resource change, a move, a forget, an import, an output whose recorded value changes, or a
  // pending operation of an interrupted run.
  bool has_changes() const;
};

// Live view from refresh: address -> the resource as the API has it, or
// nullopt when the state's resource is gone. Addresses absent from the map
// were not refreshed (use the state).
using LiveView = std::map<std::string, std::optional<Value>>;

struct PlanOptions {
  bool refresh = true;
  bool destroy = false;  // plan the destruction of everything in state
  // Only these addresses (a base address: all its instances) and what they
  // need: a create, update or replace brings in its dependencies, a delete
  // its dependents. An address that is invalid or names nothing is an
  // error diagnostic (invalid_target, unknown_target).
  std::vector<std::string> targets;
  // Everything but these and what cannot be done without them
  // (plan::ExcludeTargets); the same patterns as targets take.
  std::vector<std::string> excludes;
  // Addresses (a base address: all its instances) to replace whatever their
  // fields say (--replace): a resource that is broken in ways the API does
  // not report, or a grow-only field to lower. An address that names
  // nothing in the manifests is an error (unknown_target).
  std::vector<std::string> replace;
  // Data sources read for this plan (engine/plan/data_sources.h), by
  // "data.KIND.NAME"; references to them resolve from these.
  std::map<std::string, Value> data;
  // The journal's pending entries (StateStore::PendingJournal): the plan
  // shows them as what apply completes first (Plan::pending).
  std::vector<JournalEntry> pending;
  // Set by the plan itself: objects it forgets (kind: removed), no longer
  // in the state it compares, which targets and excludes may still name.
  std::vector<ResourceAddress> forgotten;
  // The objects the stack's `kind: import` documents adopt that the state
  // does not track yet, as read (engine/operations: ReadImports); ignored
  // by a destroy plan. The plan checks each document against the state once
  // moved: its object tracked at its `to` is imported already; tracked
  // elsewhere, duplicate_id; its `to` tracking another object,
  // import_conflict.
  std::vector<PlannedImport> imports;
  // The threads that plan the resources, those of one wave of the graph at
  // once (0: one for fewer than 512 resources, else one per core up to 8).
  // The plan is the same whatever the number.
  size_t threads = 0;
};

struct PlanResult {
  Plan plan;
  std::vector<Diagnostic> diagnostics;
  bool ok() const { return !HasErrors(diagnostics); }
};

PlanResult MakePlan(const StackConfig& config, const StateSnapshot& state, const LiveView& live,
                    const KindCatalog& kinds, const PlanOptions& options);

// JSON form of a plan (docs/plan-format.md), versioned by "format_version".
Value PlanToJson(const Plan& plan);
// PlanToJson(plan), with `members` (an object) added to its top level,
// printed as dump(2) prints it, byte for byte. Made one change at a time,
// so that the plan is never whole as a Value: that takes several times the
// plan itself (at 100,000 creates, hundreds of MB), then the text as much again.
std::string PlanToJsonText(const Plan& plan, const Value& members = Value::object());
Result<Plan> PlanFromJson(const Value& json);

}  // namespace cairn
