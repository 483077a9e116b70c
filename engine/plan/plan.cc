#include "engine/plan/plan.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "base/schema/suggest.h"
#include "engine/address_pattern.h"
#include "engine/graph/topological_order.h"
#include "engine/manifest/expr.h"
#include "engine/plan/conditions.h"
#include "engine/plan/plan_steps.h"

namespace cairn {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

const char* CheckStatusName(CheckResult::Status status) {
  switch (status) {
    case CheckResult::Status::kPassed:
      return "passed";
    case CheckResult::Status::kFailed:
      return "failed";
    case CheckResult::Status::kUnknown:
      return "unknown";
  }
  return "unknown";
}

Value CheckResultsToJson(const std::vector<CheckResult>& results) {
  Value out = Value::array();
  for (const CheckResult& r : results) {
    out.push_back(
        {{"name", r.name}, {"status", CheckStatusName(r.status)}, {"messages", r.messages}});
  }
  return out;
}

Plan::Counts Plan::counts() const {
  Counts c;
  for (const auto& ch : changes) {
    switch (ch.action) {
      case Action::kCreate:
        ++c.add;
        break;
      case Action::kUpdate:
        ++c.change;
        break;
      case Action::kReplace:
        ++c.replace;
        break;
      case Action::kDelete:
        ++c.destroy;
        break;
      case Action::kNoOp:
        ++c.noop;
        break;
    }
  }
  c.move = static_cast<int>(moves.size());
  c.pending = static_cast<int>(pending.size());
  c.forget = static_cast<int>(forgets.size());
  c.to_import = static_cast<int>(imports.size());
  return c;
}

bool Plan::has_changes() const {
  return !output_changes.empty() || !moves.empty() || !forgets.empty() || !imports.empty() ||
         !pending.empty() ||
         std::any_of(changes.begin(), changes.end(),
                     [](const PlannedChange& c) { return c.action != Action::kNoOp; });
}

namespace {

// The threads that plan `n` resources by default: one below 512 (a thread
// costs more than it saves), else one per core, up to 8.
size_t DefaultPlanThreads(size_t n) {
  if (n < 512) return 1;
  return std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 8);
}

// Calls plan(i) for every resource i, all those of wave w (wave[i] == w)
// before any of wave w + 1; a wave of 256 or more on `threads` threads,
// which take 64 resources at a time. An exception thrown by plan() stops
// the wave and is thrown again once its threads have ended.
template <class PlanOne>
void PlanInWaves(const std::vector<size_t>& wave, size_t threads, PlanOne& plan) {
  std::vector<std::vector<size_t>> waves;
  for (size_t i = 0; i < wave.size(); ++i) {
    if (wave[i] >= waves.size()) waves.resize(wave[i] + 1);
    waves[wave[i]].push_back(i);
  }
  constexpr size_t kBatch = 64;
  for (const std::vector<size_t>& members : waves) {
    if (members.size() < 256) {
      for (size_t i : members) plan(i);
      continue;
    }
    std::atomic<size_t> next{0};
    std::vector<std::exception_ptr> errors(threads);
    auto work = [&](size_t t) {
      try {
        for (size_t from; (from = next.fetch_add(kBatch)) < members.size();) {
          const size_t to = std::min(from + kBatch, members.size());
          for (size_t k = from; k < to; ++k) plan(members[k]);
        }
      } catch (...) {
        errors[t] = std::current_exception();
        next = members.size();
      }
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) {
      // A thread the system will not start leaves its share to the others.
      try {
        pool.emplace_back(work, t);
      } catch (const std::system_error&) {
        break;
      }
    }
    work(0);
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  }
}

// The plan of `config` against a state whose addresses are the manifests'
// (moves made): the steps of plan_steps.h, in order.
PlanResult PlanMoved(const StackConfig& config, const StateSnapshot& state, const LiveView& live,
                     const KindCatalog& kinds, const PlanOptions& options) {
  PlanResult result;
  Plan& plan = result.plan;
  plan.lineage = state.lineage;
  plan.serial = state.serial;
  plan.destroy = options.destroy;

  // Attributes of every resource as they will be once the plan is applied,
  // so that references from later resources see unknowns where they must;
  // and of the data sources, as read.
  plan::PlannedValues planned;
  planned.Reserve(config.resources.size() + options.data.size());
  for (const auto& [address, value] : options.data) planned.Own(address, value);
  plan.data = options.data;
  AttributeLookup lookup = [&](const ResourceAddress& addr,
                               const std::string& attr) -> std::optional<Value> {
    const Value* value = planned.Find(addr.ToString());
    if (!value) return std::nullopt;
    if (attr.empty()) return *value;  // the whole object
    if (value->contains(attr)) return value->at(attr);
    return Value(nullptr);
  };

  // prevent_destroy refusals and what conditions say (failed, or not
  // checked), by address: reported only for changes that remain once
  // targets have selected. The values of sensitive variables, masked in
  // condition messages.
  plan::Refusals refusals;
  std::vector<std::string> secrets = config.SensitiveStrings();

  const std::set<std::string> forced =
      plan::ForcedReplacements(config, options.replace, result.diagnostics);
  plan::TriggerIndex triggers(config);
  // A change per resource, then the deletes (at least what the state
  // holds beyond them): not moved while growing, which at 100,000 changes
  // was 3 to 5% of making the plan.
  const size_t n = config.resources.size(), recorded = state.resources.size();
  plan.changes.reserve(n + (recorded > n ? recorded - n : 0));

  // Each resource's address, what it depends on, and its wave: one more
  // than the latest wave of its dependencies. The resources come in
  // dependency order, and a resource reads the planned values of its
  // dependencies alone (every reference, in its spec or its conditions, is
  // one), so those of one wave can be planned at once.
  std::vector<std::string> addresses(n);
  std::vector<std::vector<std::string>> dependencies(n);
  std::vector<size_t> wave(n, 0);
  std::unordered_set<std::string> desired_addresses;
  desired_addresses.reserve(n);
  std::unordered_map<std::string_view, size_t> position;
  position.reserve(n);
  bool in_order = true;
  for (size_t i = 0; i < n; ++i) {
    const ResourceConfig& rc = config.resources[i];
    addresses[i] = rc.address.ToString();
    desired_addresses.insert(addresses[i]);
    position.emplace(addresses[i], i);
    planned.Prepare(addresses[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    for (const ResourceAddress& d : config.resources[i].depends_on) {
      dependencies[i].push_back(d.ToString());
      auto at = position.find(dependencies[i].back());
      if (at == position.end()) continue;
      if (at->second >= i) in_order = false;  // not from the loader: plan in order
      wave[i] = std::max(wave[i], wave[at->second] + 1);
    }
  }

  // One resource's change (none for a destroy, or a kind with no schema),
  // with what it adds to the diagnostics and refusals.
  struct ResourcePlan {
    std::optional<PlannedChange> change;
    std::vector<Diagnostic> diagnostics;
    plan::Refusals refusals;
  };
  std::vector<ResourcePlan> outcomes(n);
  auto plan_resource = [&](size_t i) {
    const ResourceConfig& rc = config.resources[i];
    const std::string& addr = addresses[i];
    ResourcePlan& out = outcomes[i];
    auto kind_it = kinds.find(rc.kind);
    if (kind_it == kinds.end()) {
      out.diagnostics.push_back(
          {Severity::kError, "unknown_kind",
           "internal error: no schema for kind \"" + rc.kind + "\", please report", "",
           rc.location});
      return;
    }
    const KindInfo& info = kind_it->second;
    std::vector<ResolveError> failed;
    PlannedChange ch;
    ch.after = rc.spec;
    // Write-only fields go apart: compared with nothing, shown nowhere.
    for (const std::string& field : info.write_only) {
      if (!ch.after.is_object() || !ch.after.contains(field)) continue;
      ch.write_only[field] = std::move(ch.after[field]);
      ch.after.erase(field);
    }
    Value resolved = ResolveReferences(ch.after, lookup, nullptr, &failed);
    for (const ResolveError& e : failed) {
      out.diagnostics.push_back(plan::ResolveFailure(addr, e, secrets, rc.location));
    }

    ch.address = addr;
    ch.parsed_address = rc.address;
    ch.kind = rc.kind;
    ch.replace_order = rc.lifecycle.create_before_destroy ? ReplaceOrder::kCreateThenDelete
                                                          : ReplaceOrder::kDeleteThenCreate;
    ch.depends_on = std::move(dependencies[i]);

    auto st = state.resources.find(addr);
    if (options.destroy) {
      // Destroy plans only delete. What the state holds keeps its values, so
      // that the outputs a targeted destroy keeps still resolve; what it does
      // not hold is not made, so nothing resolves from it.
      if (st != state.resources.end()) planned.Borrow(addr, st->second.attributes);
      return;
    }
    // A false precondition ends the plan (it is an error), before any
    // request; those it cannot decide yet go with the change, for apply.
    plan::DecidePreconditions(rc, ch, lookup, secrets, out.refusals);
    // Once the change's values are planned: postconditions with `self` as
    // planned (a resource with no change: as the API shows it now).
    auto finish = [&](PlannedChange& change) {
      if (rc.lifecycle.postconditions.empty() && change.preconditions.empty()) return;
      plan::DecidePostconditions(rc, change, lookup, *planned.Find(addr), secrets, out.refusals);
    };
    const Value* current = nullptr;
    if (st != state.resources.end()) {
      current = &st->second.attributes;
      if (options.refresh) {
        if (auto lv = live.find(addr); lv != live.end()) {
          current = lv->second ? &*lv->second : nullptr;
          if (!current) ch.note = "deleted outside Cairn; it will be created again";
        }
      }
    }
    if (!current) {
      ch.action = Action::kCreate;
      ch.changes = plan::CreatedFields(resolved, info);
      planned.Own(addr, plan::PlannedNew(resolved, info));
      finish(ch);
      out.change = std::move(ch);
      return;
    }
    ch.remote_id = st->second.id;
    ch.prior_depends_on = st->second.depends_on;
    ch.before = *current;
    ch.changes = plan::DiffFields(resolved, *current, rc, info, kinds, ch.replace_fields);
    ch.replace_reason =
        plan::ReplacementReason(st->second, *current, options.refresh,
                                /*forced=*/ch.replace_fields.empty() && forced.count(addr) > 0);
    if (ch.replace_fields.empty() && ch.replace_reason.empty() && triggers.enabled()) {
      ch.replace_reason = triggers.Reason(rc, plan.changes);
    }
    if (ch.replace_fields.empty() && ch.replace_reason.empty()) {
      // A grow-only field the API refuses to lower: an error now rather than
      // at apply, unless the resource is replaced anyway.
      for (Diagnostic& d : plan::ShrinkRefusals(ch, info, rc)) {
        out.diagnostics.push_back(std::move(d));
      }
      ch.action = ch.changes.empty() ? Action::kNoOp : Action::kUpdate;
      // The object as it is, with the spec's fields (those not ignored)
      // set: the object itself when it holds each of them already (1 and
      // 1.0 are the same: expressions read both as 1).
      auto applies = [&](const std::string& field) {
        return !Contains(rc.lifecycle.ignore_changes, field);
      };
      bool holds_all = true;
      if (resolved.is_object()) {
        for (const auto& [field, after] : resolved.items()) {
          if (!applies(field)) continue;
          auto held = current->find(field);
          if (held == current->end() || *held != after) {
            holds_all = false;
            break;
          }
        }
      }
      if (holds_all) {
        planned.Borrow(addr, *current);
      } else {
        Value merged = *current;
        for (const auto& [field, after] : resolved.items()) {
          if (applies(field)) merged[field] = after;
        }
        planned.Own(addr, std::move(merged));
      }
    } else {
      ch.action = Action::kReplace;
      planned.Own(addr, plan::PlannedNew(resolved, info));
      if (rc.lifecycle.prevent_destroy) {
        out.refusals.emplace_back(addr, plan::PreventDestroyOnReplace(ch, rc));
      }
    }
    finish(ch);
    out.change = std::move(ch);
  };
  // Appended in the manifests' order, whatever order they were planned in.
  auto add = [&](size_t i) {
    ResourcePlan& out = outcomes[i];
    for (Diagnostic& d : out.diagnostics) result.diagnostics.push_back(std::move(d));
    for (auto& r : out.refusals) refusals.push_back(std::move(r));
    if (!out.change) return;
    if (triggers.enabled()) {
      triggers.Record(config.resources[i].address.BaseString(), plan.changes.size());
    }
    plan.changes.push_back(std::move(*out.change));
  };
  // replace_triggered_by reads the changes planned before: one at a time.
  const size_t threads = options.threads > 0 ? options.threads : DefaultPlanThreads(n);
  if (threads <= 1 || !in_order || triggers.enabled()) {
    for (size_t i = 0; i < n; ++i) {
      plan_resource(i);
      add(i);
    }
  } else {
    PlanInWaves(wave, threads, plan_resource);
    for (size_t i = 0; i < n; ++i) add(i);
  }

  // Deletes: everything in state no longer desired (or everything, when
  // destroying), dependents before their dependencies.
  for (PlannedChange& ch :
       plan::PlanDeletes(config, state, live, desired_addresses, options, refusals)) {
    plan.changes.push_back(std::move(ch));
  }

  if (!options.targets.empty()) {
    std::set<std::string> selected = plan::SelectTargets(
        plan.changes, config, state, options.targets, result.diagnostics, options.forgotten);
    std::erase_if(plan.changes, [&](const PlannedChange& c) { return !selected.count(c.address); });
    std::erase_if(refusals, [&](const auto& r) { return !selected.count(r.first); });
  }
  if (!options.excludes.empty()) {
    std::set<std::string> excluded = plan::ExcludeTargets(
        plan.changes, config, state, options.excludes, result.diagnostics, options.forgotten);
    std::erase_if(plan.changes, [&](const PlannedChange& c) { return excluded.count(c.address); });
    std::erase_if(refusals, [&](const auto& r) { return excluded.count(r.first); });
  }
  for (auto& [addr, d] : refusals) result.diagnostics.push_back(std::move(d));

  plan::PlanOutputs(config, state, options, planned, lookup, secrets, plan, result.diagnostics);
  // Checks: what the stack will be once applied, a warning when not; what
  // the plan cannot tell, apply evaluates at its end.
  if (!options.destroy) plan::PlanChecks(config, lookup, secrets, plan, result.diagnostics);
  plan.sensitive_values = std::move(secrets);
  return result;
}

// The journal's pending operations, as the plan shows them: what apply
// completes first, and what the plan can tell of what follows.
void AddPending(const StackConfig& config, const PlanOptions& options, Plan& plan) {
  std::map<std::string, Action> acted_on;  // address -> the action pending there
  for (const JournalEntry& e : options.pending) {
    PendingOperation op;
    op.address = e.address;
    op.kind = e.kind;
    op.action = e.action;
    op.remote_id = e.remote_id;
    if (op.action == Action::kCreate) {
      // What it makes is in the state once it completes, and goes with
      // the rest when the manifests no longer declare it.
      auto parsed = StateKey::Parse(e.address);
      if (options.destroy && options.targets.empty() && options.excludes.empty()) {
        op.note = "then destroyed";
      } else if (!options.destroy && parsed && !config.Find(parsed->resource)) {
        op.note = "then destroyed: no longer in the manifests";
      }
    }
    acted_on[op.address] = e.action;
    plan.pending.push_back(std::move(op));
  }
  for (PlannedChange& c : plan.changes) {
    auto it = acted_on.find(c.address);
    if (it == acted_on.end() || c.action == Action::kNoOp) continue;
    c.note += (c.note.empty() ? "" : "; ") + std::string("an interrupted ") +
              ActionName(it->second) +
              " of it completes first, and apply plans it again after that";
  }
}

// MakePlan, but for the journal's pending operations.
PlanResult PlanWithMoves(const StackConfig& config, const StateSnapshot& state,
                         const LiveView& live, const KindCatalog& kinds,
                         const PlanOptions& options) {
  const bool forgetting = std::any_of(config.removed.begin(), config.removed.end(),
                                      [](const RemovedConfig& r) { return !r.destroy; });
  // No copy of the state (nor of the live view) unless there is a move,
  // something to forget, or an import the state does not hold at its
  // address already.
  const bool importing =
      !options.destroy &&
      std::any_of(config.imports.begin(), config.imports.end(), [&](const ImportConfig& ic) {
        auto it = state.resources.find(ic.to.ToString());
        return it == state.resources.end() ||
               CanonicalId(kinds, it->second.id) != CanonicalId(kinds, ic.id);
      });
  if (config.moved.empty() && !forgetting && !importing) {
    return PlanMoved(config, state, live, kinds, options);
  }
  AddressMoves moves;
  std::vector<Diagnostic> diagnostics;
  std::set<std::string> destinations;
  StateSnapshot moved = state;
  for (const MovedConfig& m : config.moved) {
    MovePlan mp = m.IsModuleMove() ? PlanModuleMove(moved, m.from_module, m.to_module)
                                   : PlanMove(moved, m.from, m.to);
    if (mp.moves.empty()) continue;  // moved already (or never applied)
    // An implied move (MovedConfig::implicit) is made only when it can be.
    if (m.implicit && (!mp.error.empty() || moved.resources.count(m.to.ToString()))) continue;
    if (!mp.error.empty()) {
      diagnostics.push_back({Severity::kError, "invalid_move", mp.error, "", m.location});
      continue;
    }
    std::vector<std::string> taken;
    for (const auto& [src, dst] : mp.moves) {
      if (moved.resources.count(dst) || !destinations.insert(dst).second) taken.push_back(dst);
    }
    if (!taken.empty()) {
      diagnostics.push_back({Severity::kError, "moved_target_exists",
                             "cannot move " + m.FromText() + " to " + m.ToText() + ": " +
                                 taken.front() + " is already in the state",
                             "remove the move, or the resource at " + taken.front() +
                                 " ('cairn state rm') if it is the stale one",
                             m.location});
      continue;
    }
    moved = ApplyMoves(moved, mp.moves);
    moves.insert(moves.end(), mp.moves.begin(), mp.moves.end());
  }
  // What `removed` documents forget leaves the state the plan compares:
  // neither kept nor deleted.
  // Only what --target names and --exclude does not, as for any other
  // change: an object left alone stays in the state, and its delete (it
  // is not declared) is held back by the same targets.
  std::vector<AddressPattern> targets, excludes;
  for (const std::string& t : options.targets) {
    if (auto p = AddressPattern::Parse(t)) targets.push_back(std::move(*p));
  }
  for (const std::string& x : options.excludes) {
    if (auto p = AddressPattern::Parse(x)) excludes.push_back(std::move(*p));
  }
  auto selected = [&](const ResourceAddress& a) {
    auto names = [&](const AddressPattern& p) { return p.Matches(a); };
    return (options.targets.empty() || std::any_of(targets.begin(), targets.end(), names)) &&
           std::none_of(excludes.begin(), excludes.end(), names);
  };
  std::vector<PlannedForget> forgets;
  PlanOptions moved_options = options;
  if (forgetting) {
    for (auto it = moved.resources.begin(); it != moved.resources.end();) {
      auto key = StateKey::Parse(it->first);
      const bool forget =
          key && selected(key->resource) &&
          std::any_of(config.removed.begin(), config.removed.end(), [&](const RemovedConfig& r) {
            return !r.destroy && r.Matches(key->resource);
          });
      if (!forget) {
        ++it;
        continue;
      }
      forgets.push_back({it->first, it->second.kind, it->second.id});
      moved_options.forgotten.push_back(key->resource);
      it = moved.resources.erase(it);
    }
  }
  if (moves.empty() && forgets.empty() && !importing && diagnostics.empty()) {
    return PlanMoved(config, state, live, kinds, options);
  }
  moves = NetMoves(moves);
  std::map<std::string, std::string> origin, now_at;  // new <-> recorded address
  for (const auto& [was, now] : moves) {
    origin[now] = was;
    now_at[was] = now;
  }
  LiveView moved_live;
  for (const auto& [addr, v] : live) {
    auto it = now_at.find(addr);
    moved_live.emplace(it == now_at.end() ? addr : it->second, v);
  }
  // What `kind: import` documents adopt joins the state the plan compares,
  // as read: its change is judged against it.
  std::vector<PlannedImport> imports;
  if (importing) {
    std::map<std::pair<std::string, std::string>, std::string> holder;  // kind, id -> address
    for (const auto& [address, rs] : moved.resources) {
      holder.emplace(std::pair{rs.kind, CanonicalId(kinds, rs.id)}, address);
    }
    for (const ImportConfig& ic : config.imports) {
      const std::string address = ic.to.ToString();
      auto held = holder.find({ic.to.kind, CanonicalId(kinds, ic.id)});
      if (held != holder.end() && held->second == address) continue;  // imported already
      if (held != holder.end()) {
        diagnostics.push_back({Severity::kError, "duplicate_id",
                               ic.to.kind + " " + ic.id + " is tracked already, at " + held->second,
                               "one object has one address: a moved document moves " +
                                   held->second + " to " + address + "; else drop the import",
                               ic.id_location});
        continue;
      }
      if (auto taken = moved.resources.find(address); taken != moved.resources.end()) {
        diagnostics.push_back({Severity::kError, "import_conflict",
                               "cannot import " + ic.to.kind + " " + ic.id + " to " + address +
                                   ": the state tracks " + taken->second.id + " there",
                               "to adopt this one instead, 'cairn state rm " + address +
                                   "' first; else drop the import document",
                               ic.location});
        continue;
      }
      auto read = std::find_if(options.imports.begin(), options.imports.end(),
                               [&](const PlannedImport& im) { return im.address == address; });
      if (read == options.imports.end()) {
        diagnostics.push_back(
            {Severity::kError, "internal_error",
             "internal error: the object imported to " + address + " was not read, please report",
             "", ic.location});
        continue;
      }
      ResourceState rs;
      rs.address = address;
      rs.kind = read->kind;
      rs.id = read->remote_id;
      rs.attributes = read->attributes;
      moved.resources[address] = std::move(rs);
      moved_live[address] = read->attributes;
      imports.push_back(*read);
    }
  }
  PlanResult result = PlanMoved(config, moved, moved_live, kinds, moved_options);
  result.plan.lineage = state.lineage;
  result.plan.serial = state.serial;
  result.plan.moves = moves;
  result.plan.forgets = std::move(forgets);
  // An import goes with its change: none once targets or excludes leave it
  // out (the object stays unmanaged until a plan takes it).
  std::set<std::string> kept;
  for (const PlannedChange& c : result.plan.changes) {
    if (!c.deposed) kept.insert(c.address);
  }
  std::erase_if(imports, [&](const PlannedImport& im) { return !kept.count(im.address); });
  result.plan.imports = std::move(imports);
  for (PlannedChange& c : result.plan.changes) {
    if (auto it = origin.find(c.address); it != origin.end()) c.moved_from = it->second;
  }
  result.diagnostics.insert(result.diagnostics.begin(), diagnostics.begin(), diagnostics.end());
  return result;
}

}  // namespace

PlanResult MakePlan(const StackConfig& config, const StateSnapshot& state, const LiveView& live,
                    const KindCatalog& kinds, const PlanOptions& options) {
  PlanResult result = PlanWithMoves(config, state, live, kinds, options);
  AddPending(config, options, result.plan);
  return result;
}

// Conditions as a saved plan holds them (docs/plan-format.md).
Value ConditionsToJson(const std::vector<ConditionConfig>& conditions) {
  Value out = Value::array();
  for (const ConditionConfig& c : conditions) {
    out.push_back({{"condition", c.condition},
                   {"error_message", c.error_message},
                   {"file", c.location.file},
                   {"line", c.location.line},
                   {"column", c.location.column},
                   {"length", c.location.length}});
  }
  return out;
}

std::vector<ConditionConfig> ConditionsFromJson(const Value& j) {
  std::vector<ConditionConfig> out;
  for (const Value& c : j) {
    ConditionConfig cc;
    cc.condition = c.at("condition");
    cc.error_message = c.value("error_message", Value(""));
    cc.location.file = c.value("file", "");
    cc.location.line = c.value("line", 0);
    cc.location.column = c.value("column", 0);
    cc.location.length = std::max(1, c.value("length", 1));
    out.push_back(std::move(cc));
  }
  return out;
}

namespace {

// One element of a plan's "changes". Built member by member: an initializer
// list copies every element once more, and the changes are most of a plan.
Value ChangeToJson(const PlannedChange& c) {
  Value diffs = Value::array();
  for (const auto& d : c.changes) {
    Value diff = Value::object();
    diff["field"] = d.field;
    diff["before"] = d.before;
    diff["after"] = d.after;
    diff["forces_replacement"] = d.forces_replacement;
    diffs.push_back(std::move(diff));
  }
  Value out = Value::object();
  out["address"] = c.address;
  out["kind"] = c.kind;
  out["action"] = ActionName(c.action);
  out["remote_id"] = c.remote_id;
  out["before"] = c.before;
  out["after"] = c.after;
  out["changes"] = std::move(diffs);
  // The names alone: the values are kept nowhere.
  if (!c.write_only.empty()) {
    Value names = Value::array();
    for (const auto& [field, v] : c.write_only.items()) names.push_back(field);
    out["write_only"] = std::move(names);
  }
  out["replace_fields"] = c.replace_fields;
  out["replace_reason"] = c.replace_reason;
  out["create_before_destroy"] = c.replace_order == ReplaceOrder::kCreateThenDelete;
  out["depends_on"] = c.depends_on;
  out["prior_depends_on"] = c.prior_depends_on;
  out["note"] = c.note;
  if (!c.moved_from.empty()) out["moved_from"] = c.moved_from;
  if (!c.preconditions.empty()) out["preconditions"] = ConditionsToJson(c.preconditions);
  if (!c.postconditions.empty()) out["postconditions"] = ConditionsToJson(c.postconditions);
  return out;
}

// PlanToJson without "changes".
Value PlanHeadToJson(const Plan& plan) {
  Value outputs = Value::array();
  for (const auto& o : plan.outputs) {
    outputs.push_back({{"name", o.name}, {"value", o.value}, {"sensitive", o.sensitive}});
    if (!o.preconditions.empty()) {
      outputs.back()["preconditions"] = ConditionsToJson(o.preconditions);
    }
  }
  Value output_changes = Value::array();
  for (const auto& o : plan.output_changes) {
    auto shown = [&](const Value& v) {
      return o.sensitive && !v.is_null() ? Value("(sensitive)") : v;
    };
    output_changes.push_back({{"name", o.name},
                              {"action", ActionName(o.action)},
                              {"before", shown(o.before)},
                              {"after", shown(o.after)},
                              {"sensitive", o.sensitive}});
  }
  Value pending = Value::array();
  for (const auto& p : plan.pending) {
    pending.push_back({{"address", p.address},
                       {"kind", p.kind},
                       {"action", ActionName(p.action)},
                       {"remote_id", p.remote_id},
                       {"note", p.note}});
  }
  auto counts = plan.counts();
  Value out = {{"format_version", Plan::kFormatVersion},
               {"stack", plan.stack},
               {"lineage", plan.lineage},
               {"serial", plan.serial},
               {"destroy", plan.destroy},
               {"summary",
                {{"add", counts.add},
                 {"change", counts.change},
                 {"replace", counts.replace},
                 {"destroy", counts.destroy},
                 {"no_op", counts.noop},
                 {"move", counts.move},
                 {"forget", counts.forget},
                 {"import", counts.to_import},
                 {"pending", counts.pending}}},
               {"pending_operations", pending},
               {"outputs", outputs},
               {"output_changes", output_changes}};
  if (!plan.data.empty()) out["data"] = plan.data;
  if (!plan.check_results.empty()) out["check_results"] = CheckResultsToJson(plan.check_results);
  if (!plan.checks.empty()) {
    Value checks = Value::array();
    for (const CheckConfig& check : plan.checks) {
      checks.push_back({{"name", check.name},
                        {"file", check.location.file},
                        {"line", check.location.line},
                        {"column", check.location.column},
                        {"assert", ConditionsToJson(check.asserts)}});
    }
    out["checks"] = checks;
  }
  if (!plan.moves.empty()) {
    Value moves = Value::array();
    for (const auto& [from, to] : plan.moves) moves.push_back({{"from", from}, {"to", to}});
    out["moves"] = moves;
  }
  if (!plan.forgets.empty()) {
    Value forgets = Value::array();
    for (const PlannedForget& f : plan.forgets) {
      forgets.push_back({{"address", f.address}, {"kind", f.kind}, {"remote_id", f.remote_id}});
    }
    out["forgets"] = forgets;
  }
  if (!plan.imports.empty()) {
    Value imports = Value::array();
    for (const PlannedImport& im : plan.imports) {
      imports.push_back({{"address", im.address},
                         {"kind", im.kind},
                         {"remote_id", im.remote_id},
                         {"attributes", im.attributes}});
    }
    out["imports"] = imports;
  }
  if (plan.saved) {
    out["saved"] = true;
    out["backend"] = {{"type", plan.backend.type},
                      {"path", plan.backend.path},
                      {"url_env", plan.backend.url_env},
                      {"name", plan.backend.stack_name},
                      {"workspace", plan.workspace}};
    out["manifests"] = plan.manifests;
    out["recursive"] = plan.recursive;
  }
  if (!plan.variables.empty()) out["variables"] = plan.variables;
  if (!plan.sensitive_variables.empty()) out["sensitive_variables"] = plan.sensitive_variables;
  if (!plan.ephemeral_variables.empty()) out["ephemeral_variables"] = plan.ephemeral_variables;
  return out;
}

// Appends `v` as it prints nested at depth `indent` / 2 in a dump(2): as
// v.dump(2) prints it, each of its lines but the first indented `indent`
// spaces more. nlohmann's serializer (what dump uses) writes it straight
// into `out`, at that depth, with no text of its own to copy and indent.
void AppendNested(std::string& out, const Value& v, unsigned indent) {
  nlohmann::detail::serializer<Value> serializer(
      nlohmann::detail::output_adapter<char, std::string>(out), ' ');
  serializer.dump(v, /*pretty_print=*/true, /*ensure_ascii=*/false, /*indent_step=*/2, indent);
}

}  // namespace

Value PlanToJson(const Plan& plan) {
  Value out = PlanHeadToJson(plan);
  Value changes = Value::array();
  changes.get_ref<Value::array_t&>().reserve(plan.changes.size());
  for (const PlannedChange& c : plan.changes) changes.push_back(ChangeToJson(c));
  out["changes"] = std::move(changes);
  return out;
}

std::string PlanToJsonText(const Plan& plan, const Value& members) {
  constexpr size_t kChangesSampled = 64;
  Value head = PlanHeadToJson(plan);
  for (const auto& [key, value] : members.items()) head[key] = value;
  head["changes"] = nullptr;  // where the changes go, in key order
  // As dump(2) prints an object: "{}" never (a plan has members), else each
  // member on its own line, indented 2.
  std::string out = "{";
  for (auto it = head.begin(); it != head.end(); ++it) {
    out += it == head.begin() ? "\n  " : ",\n  ";
    out += Value(it.key()).dump();
    out += ": ";
    if (it.key() != "changes") {
      AppendNested(out, it.value(), 2);
    } else if (plan.changes.empty()) {
      out += "[]";
    } else {
      out += "[";
      const size_t head_size = out.size();
      for (size_t i = 0; i < plan.changes.size(); ++i) {
        if (i == kChangesSampled && plan.changes.size() > 2 * kChangesSampled) {
          // The text's size, from the first changes' (a quarter more): one
          // buffer, not a doubling's copies of 100 MB and more. Pages
          // reserved and never written are never touched.
          const size_t per_change = (out.size() - head_size) / kChangesSampled;
          out.reserve(out.size() + per_change * (plan.changes.size() - i) * 5 / 4 + 4096);
        }
        out += i == 0 ? "\n    " : ",\n    ";
        AppendNested(out, ChangeToJson(plan.changes[i]), 4);
      }
      out += "\n  ]";
    }
  }
  out += "\n}";
  return out;
}

Result<Plan> PlanFromJson(const Value& j) {
  try {
    if (!j.is_object() || !j.contains("format_version")) {
      return Status::InvalidArgument("not a Cairn plan (no format_version)");
    }
    // Numbers are compared as JSON before any conversion: get<int>() of a
    // float out of int's range is undefined behaviour.
    const Value& version = j.at("format_version");
    if (!version.is_number_integer() || version < Plan::kOldestReadableFormatVersion ||
        version > Plan::kFormatVersion) {
      return Status::InvalidArgument(
          "plan format version " + version.dump(-1, ' ', false, Value::error_handler_t::replace) +
          " is not supported (this cairn reads versions " +
          std::to_string(Plan::kOldestReadableFormatVersion) + " to " +
          std::to_string(Plan::kFormatVersion) +
          "): make the plan again with this cairn ('cairn plan --out FILE')");
    }
    Plan plan;
    plan.stack = j.value("stack", "");
    plan.lineage = j.at("lineage").get<std::string>();
    const Value& serial = j.at("serial");
    // An unsigned value past int64_t's range converts to a negative one.
    if (!serial.is_number_integer() || serial.get<int64_t>() < 0) {
      return Status::InvalidArgument("malformed plan: serial " +
                                     serial.dump(-1, ' ', false, Value::error_handler_t::replace) +
                                     " is not a non-negative integer");
    }
    plan.serial = serial.get<int64_t>();
    plan.destroy = j.value("destroy", false);
    plan.saved = j.value("saved", false);
    for (const auto& c : j.at("changes")) {
      PlannedChange ch;
      ch.address = c.at("address").get<std::string>();
      // As MakePlan does: a state key that is no address (a damaged state)
      // matches no --target, and is still deleted.
      if (auto key = StateKey::Parse(ch.address)) {
        ch.parsed_address = key->resource;
        ch.deposed = key->deposed;
      }
      ch.kind = c.at("kind").get<std::string>();
      auto action = ParseAction(c.at("action").get<std::string>());
      if (!action) return Status::InvalidArgument("unknown action in plan for " + ch.address);
      ch.action = *action;
      ch.remote_id = c.value("remote_id", "");
      ch.before = c.value("before", Value());
      ch.after = c.value("after", Value());
      for (const auto& field : c.value("write_only", Value::array())) {
        if (!field.is_string()) return Status::InvalidArgument("malformed plan: write_only");
        ch.write_only[field.get<std::string>()] = nullptr;
      }
      for (const auto& d : c.value("changes", Value::array())) {
        ch.changes.push_back({d.at("field").get<std::string>(), d.value("before", Value()),
                              d.value("after", Value()), d.value("forces_replacement", false)});
      }
      ch.replace_fields = c.value("replace_fields", std::vector<std::string>{});
      ch.replace_reason = c.value("replace_reason", "");
      ch.replace_order = c.value("create_before_destroy", false) ? ReplaceOrder::kCreateThenDelete
                                                                 : ReplaceOrder::kDeleteThenCreate;
      ch.depends_on = c.value("depends_on", std::vector<std::string>{});
      ch.prior_depends_on = c.value("prior_depends_on", std::vector<std::string>{});
      ch.note = c.value("note", "");
      ch.moved_from = c.value("moved_from", "");
      ch.preconditions = ConditionsFromJson(c.value("preconditions", Value::array()));
      ch.postconditions = ConditionsFromJson(c.value("postconditions", Value::array()));
      plan.changes.push_back(std::move(ch));
    }
    for (const auto& o : j.value("outputs", Value::array())) {
      plan.outputs.push_back({o.at("name").get<std::string>(), o.value("value", Value()),
                              o.value("sensitive", false),
                              ConditionsFromJson(o.value("preconditions", Value::array()))});
    }
    for (const auto& c : j.value("checks", Value::array())) {
      CheckConfig check;
      check.name = c.at("name").get<std::string>();
      check.location.file = c.value("file", "");
      check.location.line = c.value("line", 0);
      check.location.column = c.value("column", 0);
      check.asserts = ConditionsFromJson(c.at("assert"));
      plan.checks.push_back(std::move(check));
    }
    for (const auto& o : j.value("output_changes", Value::array())) {
      auto action = ParseAction(o.at("action").get<std::string>());
      if (!action) return Status::InvalidArgument("unknown action in plan for output");
      plan.output_changes.push_back({o.at("name").get<std::string>(), *action,
                                     o.value("before", Value()), o.value("after", Value()),
                                     o.value("sensitive", false)});
    }
    if (auto data = j.find("data"); data != j.end()) {
      if (!data->is_object())
        return Status::InvalidArgument("malformed plan: data is not an object");
      for (const auto& [addr, attrs] : data->items()) plan.data[addr] = attrs;
    }
    for (const auto& p : j.value("pending_operations", Value::array())) {
      auto action = ParseAction(p.at("action").get<std::string>());
      if (!action) return Status::InvalidArgument("unknown action in plan for a pending operation");
      plan.pending.push_back({p.at("address").get<std::string>(), p.value("kind", ""), *action,
                              p.value("remote_id", ""), p.value("note", "")});
    }
    for (const auto& m : j.value("moves", Value::array())) {
      plan.moves.emplace_back(m.at("from").get<std::string>(), m.at("to").get<std::string>());
    }
    for (const auto& f : j.value("forgets", Value::array())) {
      plan.forgets.push_back(
          {f.at("address").get<std::string>(), f.value("kind", ""), f.value("remote_id", "")});
    }
    for (const auto& im : j.value("imports", Value::array())) {
      PlannedImport p;
      p.address = im.at("address").get<std::string>();
      p.kind = im.at("kind").get<std::string>();
      p.remote_id = im.at("remote_id").get<std::string>();
      p.attributes = im.value("attributes", Value::object());
      if (!p.attributes.is_object()) {
        return Status::InvalidArgument("malformed plan: an import's attributes are not an object");
      }
      plan.imports.push_back(std::move(p));
    }
    if (auto vars = j.find("variables"); vars != j.end()) {
      if (!vars->is_object()) {
        return Status::InvalidArgument("malformed plan: variables is not an object");
      }
      for (const auto& [name, v] : vars->items()) plan.variables[name] = v;
    }
    for (const auto& name : j.value("sensitive_variables", Value::array())) {
      plan.sensitive_variables.push_back(name.get<std::string>());
    }
    for (const auto& name : j.value("ephemeral_variables", Value::array())) {
      plan.ephemeral_variables.push_back(name.get<std::string>());
    }
    plan.sensitive_values = SensitiveStrings(plan.variables, plan.sensitive_variables);
    if (plan.saved && !plan.pending.empty()) {
      return Status::InvalidArgument(
          "malformed plan: a saved plan with pending operations (none is saved over them)");
    }
    if (plan.saved) {
      // What ties the plan to its stack: without it, apply could not tell
      // which directory holds the stack planned.
      const Value& backend = j.value("backend", Value());
      const Value& manifests = j.value("manifests", Value());
      if (!backend.is_object() || !manifests.is_object() || manifests.empty()) {
        return Status::InvalidArgument(
            "malformed plan: a saved plan needs its backend and manifests");
      }
      plan.backend.type = backend.at("type").get<std::string>();
      plan.backend.path = backend.value("path", "");
      plan.backend.url_env = backend.value("url_env", "");
      plan.backend.stack_name = backend.value("name", "");
      plan.workspace = backend.value("workspace", "default");
      for (const auto& [file, digest] : manifests.items()) {
        plan.manifests[file] = digest.get<std::string>();
      }
      plan.recursive = j.value("recursive", false);
    }
    return plan;
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("malformed plan: ") + e.what());
  }
}

}  // namespace cairn
