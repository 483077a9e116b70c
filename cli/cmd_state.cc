// cairn state, cairn import and cairn force-unlock: inspect and repair what
// Cairn recorded about a stack.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>
#include <variant>

#include "cli/engine_session.h"
#include "engine/address.h"
#include "engine/redact.h"

namespace cairn::cli {
namespace {

struct StateFlags {
  StackFlags stack;
  std::string address;
  std::string to;
  std::string id;
  std::string lock_timeout = "0s";
};

// The state commands need the stack's backend settings, not its resources;
// import also needs the resource it adopts, and the API. Only a command that
// records something new (push) creates a state: looking at, or editing, a
// state that does not exist leaves nothing behind (has_state() is false).
std::unique_ptr<EngineSession> OpenForState(const StateFlags& f, const GlobalOptions& global,
                                            bool create = false) {
  return EngineSession::Open(f.stack, global,
                             {.needs_api = false, .settings_only = true, .create_state = create});
}

std::string NoState(const EngineSession& s) {
  return "the stack in " + s.stack_root() + " has no state yet (nothing was applied or imported)";
}

// DIR, -r, --var and --var-file, as on every command that reads a stack: the
// backend settings may use variables, and import loads the resources too.
void AddStack(CLI::App& sub, StateFlags& f) {
  AddStackFlags(sub, f.stack, /*multiple_paths=*/false);
}

std::optional<LockInfo> LockFor(EngineSession& s, const StateFlags& f, const std::string& op) {
  auto wait = ParseDuration(f.lock_timeout);
  if (!wait) {
    std::cerr << "cairn: error: --lock-timeout " << f.lock_timeout << ": expected a duration like 30s\n";
    return std::nullopt;
  }
  return s.Lock(op, *wait);
}

int List(const StateFlags& f, const GlobalOptions& g) {
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {  // an empty list, and a note for the human
    std::cerr << "cairn: " << NoState(*s) << "\n";
    return 0;
  }
  auto st = s->LoadState();
  if (!st) return 1;
  std::vector<const ResourceState*> sorted;
  for (const auto& [addr, rs] : st->resources) sorted.push_back(&rs);
  std::sort(sorted.begin(), sorted.end(), [](const ResourceState* a, const ResourceState* b) {
    return AddressTextLess(a->address, b->address);
  });
  for (const ResourceState* r : sorted) {
    const ResourceState& rs = *r;
    const std::string& addr = rs.address;
    std::cout << addr << "  " << rs.id
              << (rs.tainted.empty() ? "" : "  (tainted: " + rs.tainted + ")") << "\n";
  }
  return 0;
}

int Show(const StateFlags& f, const GlobalOptions& g) {
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "cairn: error: " << f.address << " is not in the state: " << NoState(*s) << "\n";
    return 1;
  }
  auto st = s->LoadState();
  if (!st) return 1;
  auto it = st->resources.find(f.address);
  if (it == st->resources.end()) {
    std::cerr << "cairn: error: " << f.address << " is not in the state (see 'cairn state list')\n";
    return 1;
  }
  const ResourceState& rs = it->second;
  Value j = {{"address", rs.address}, {"kind", rs.kind}, {"id", rs.id},
             {"attributes", rs.attributes}, {"depends_on", rs.depends_on}};
  if (!rs.tainted.empty()) j["tainted"] = rs.tainted;
  std::cout << Redact(j.dump(2)) << "\n";
  return 0;
}

int Remove(const StateFlags& f, const GlobalOptions& g) {
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "cairn: error: " << f.address << " is not in the state: " << NoState(*s) << "\n";
    return 1;
  }
  auto lock = LockFor(*s, f, "state rm");
  if (!lock) return 1;
  HeldStateLock held(*s, *lock);
  auto st = s->LoadState();
  if (!st) return 1;
  if (!st->resources.count(f.address)) {
    std::cerr << "cairn: error: " << f.address << " is not in the state\n";
    return 1;
  }
  if (auto c = s->store().Commit({.remove = {f.address}}); !c.ok()) {
    std::cerr << "cairn: error: " << c.status().message() << "\n";
    return 1;
  }
  std::cout << "Removed " << f.address << " from the state. The resource itself still exists; "
            << "Cairn no longer manages it.\n";
  return 0;
}

// What `state mv FROM TO` moves: FROM itself and, when FROM has no index,
// every instance of it (FROM[0], FROM["k"]), each to the same index under TO.
// Empty `error` when the move is well formed.
struct MovePlan {
  std::vector<std::pair<std::string, std::string>> moves;  // {from, to}, in address order
  std::string error;
};

MovePlan PlanMove(const StateSnapshot& st, const ResourceAddress& from, const ResourceAddress& to) {
  MovePlan plan;
  std::vector<std::string> instances;  // FROM[i] moved as part of a whole resource
  for (const auto& [text, rs] : st.resources) {
    auto a = ResourceAddress::Parse(text);
    if (!a || a->kind != from.kind || a->name != from.name) continue;
    if (a->index == from.index) {
      plan.moves.emplace_back(text, to.ToString());
    } else if (std::holds_alternative<std::monostate>(from.index)) {
      instances.push_back(text);
      plan.moves.emplace_back(text, ResourceAddress{to.kind, to.name, a->index}.ToString());
    }
  }
  std::sort(plan.moves.begin(), plan.moves.end(),
            [](const auto& a, const auto& b) { return AddressTextLess(a.first, b.first); });
  if (plan.moves.empty()) {
    plan.error = from.ToString() + " is not in the state (see 'cairn state list')";
  } else if (!instances.empty() && !std::holds_alternative<std::monostate>(to.index)) {
    // FROM[i] would go to TO[j][i], which is no address.
    plan.error = from.ToString() + " has " + std::to_string(instances.size()) + " instance(s) (" +
                 instances.front() + (instances.size() > 1 ? ", ..." : "") +
                 "): move them all to an address without an index (" + to.BaseString() +
                 "), or one instance at a time";
  }
  return plan;
}

int Move(const StateFlags& f, const GlobalOptions& g) {
  const char* kForms = " is not a resource address (kind.name, kind.name[0], kind.name[\"key\"])\n";
  auto from = ResourceAddress::Parse(f.address);
  if (!from) {
    std::cerr << "cairn: error: \"" << f.address << "\"" << kForms;
    return 1;
  }
  auto to = ResourceAddress::Parse(f.to);
  if (!to) {
    std::cerr << "cairn: error: \"" << f.to << "\"" << kForms;
    return 1;
  }
  if (to->kind != from->kind) {
    std::cerr << "cairn: error: cannot move a " << from->kind << " to " << to->ToString()
              << ": an address keeps its kind\n";
    return 1;
  }
  if (*to == *from) {
    std::cerr << "cairn: error: " << to->ToString() << " is where it already is\n";
    return 1;
  }
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "cairn: error: " << from->ToString() << " is not in the state: " << NoState(*s)
              << "\n";
    return 1;
  }
  auto lock = LockFor(*s, f, "state mv");
  if (!lock) return 1;
  HeldStateLock held(*s, *lock);
  auto st = s->LoadState();
  if (!st) return 1;
  MovePlan plan = PlanMove(*st, *from, *to);
  if (!plan.error.empty()) {
    std::cerr << "cairn: error: " << plan.error << "\n";
    return 1;
  }
  std::vector<std::string> taken;
  for (const auto& [src, dst] : plan.moves) {
    if (st->resources.count(dst)) taken.push_back(dst);
  }
  if (!taken.empty()) {
    std::cerr << "cairn: error: nothing was moved: ";
    for (size_t i = 0; i < taken.size(); ++i) std::cerr << (i ? ", " : "") << taken[i];
    std::cerr << (taken.size() == 1 ? " is" : " are") << " already in the state\n";
    return 1;
  }
  // Whatever recorded a dependency on a moved address now names its new one:
  // destroy orders deletes by these, and a plan that changes nothing keeps
  // them as they are.
  std::map<std::string, std::string> renamed(plan.moves.begin(), plan.moves.end());
  StateCommit commit{.moves = plan.moves};
  for (const auto& [text, rs] : st->resources) {
    ResourceState updated = rs;
    bool changed = false;
    for (std::string& dep : updated.depends_on) {
      if (auto it = renamed.find(dep); it != renamed.end()) {
        dep = it->second;
        changed = true;
      }
    }
    if (!changed) continue;
    if (auto it = renamed.find(text); it != renamed.end()) updated.address = it->second;
    commit.put.push_back(std::move(updated));
  }
  if (auto c = s->store().Commit(commit); !c.ok()) {
    std::cerr << "cairn: error: " << c.status().message() << "\n";
    return 1;
  }
  for (const auto& [src, dst] : plan.moves) std::cout << "Moved " << src << " to " << dst << ".\n";
  return 0;
}

int Pull(const StateFlags& f, const GlobalOptions& g) {
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "cairn: error: nothing to pull: " << NoState(*s) << "\n";
    return 1;
  }
  auto st = s->LoadState();
  if (!st) return 1;
  Value resources = Value::array();
  for (const auto& [addr, rs] : st->resources) {
    resources.push_back({{"address", rs.address}, {"kind", rs.kind}, {"id", rs.id},
                         {"attributes", rs.attributes}, {"depends_on", rs.depends_on},
                         {"schema_version", rs.schema_version}});
    if (!rs.tainted.empty()) resources.back()["tainted"] = rs.tainted;
  }
  Value j = {{"format_version", 1}, {"lineage", st->lineage}, {"serial", st->serial},
             {"resources", resources}, {"outputs", st->outputs}};
  std::cout << Redact(j.dump(2)) << "\n";
  return 0;
}

int Import(const StateFlags& f, const GlobalOptions& g) {
  auto addr = ResourceAddress::Parse(f.address);
  if (!addr) {
    std::cerr << "cairn: error: \"" << f.address << "\" is not a resource address\n";
    return 1;
  }
  // The state is keyed by the canonical text ("web[00]" is "web[0]").
  const std::string address = addr->ToString();
  auto s = EngineSession::Open(f.stack, g, {.needs_api = true});
  if (!s) return 1;
  const ResourceConfig* rc = s->config().Find(*addr);
  if (!rc) {
    std::cerr << "cairn: error: " << address << " is not in the manifests; add it first so that "
              << "the next plan can compare it\n";
    return 1;
  }
  auto lock = LockFor(*s, f, "import");
  if (!lock) return 1;
  HeldStateLock held(*s, *lock);
  auto st = s->LoadState();
  if (!st) return 1;
  if (auto it = st->resources.find(address); it != st->resources.end()) {
    std::cerr << "cairn: error: " << address << " is already managed (id " << it->second.id
              << ")\n";
    return 1;
  }
  ReadResponse read = s->provider().Read({addr->kind, f.id}, {});
  if (!read.status.ok()) {
    s->PrintDiagnostics(read.diagnostics);
    std::cerr << "cairn: error: could not read " << addr->kind << " " << f.id << ": "
              << read.status.message() << "\n";
    return 1;
  }
  if (!read.resource) {
    std::cerr << "cairn: error: there is no " << addr->kind << " with id " << f.id << "\n";
    return 1;
  }
  ResourceState rs;
  rs.address = address;
  rs.kind = addr->kind;
  rs.id = read.resource->id;
  rs.attributes = read.resource->attributes;
  rs.attributes["id"] = rs.id;
  for (const auto& d : rc->depends_on) rs.depends_on.push_back(d.ToString());
  if (auto c = s->store().Commit({.put = {rs}}); !c.ok()) {
    std::cerr << "cairn: error: " << c.status().message() << "\n";
    return 1;
  }
  std::cout << "Imported " << address << " (id " << rs.id << "). Run 'cairn plan' to see how it "
            << "differs from the manifests.\n";
  return 0;
}

int ForceUnlock(const StateFlags& f, const GlobalOptions& g) {
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "cairn: error: no state lock with ID " << f.id << ": " << NoState(*s) << "\n";
    return 1;
  }
  if (Status st = s->store().ForceUnlock(f.id); !st.ok()) {
    std::cerr << "cairn: error: " << st.message() << "\n";
    return 1;
  }
  std::cout << "Released the state lock " << f.id << ".\n";
  return 0;
}

std::function<int()> SetupState(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<StateFlags>();
  auto which = std::make_shared<std::function<int()>>();
  sub.require_subcommand(1);
  sub.footer(
      "Examples:\n"
      "  cairn state list\n"
      "  cairn state show 'instance.web[0]'\n"
      "  cairn state mv instance.web instance.frontend     # web[0] -> frontend[0], ...\n"
      "  cairn state mv network.core 'network.core[0]'     # the resource gained a count\n"
      "  cairn state rm ssh_key.old\n"
      "  cairn state pull > backup.json");
  auto add = [&](const std::string& name, const std::string& desc, int (*run)(const StateFlags&, const GlobalOptions&)) {
    CLI::App* c = sub.add_subcommand(name, desc);
    c->callback([which, f, run, &global] { *which = [f, run, &global] { return run(*f, global); }; });
    return c;
  };
  AddStack(*add("list", "List the addresses and ids in the state", List), *f);
  auto show = add("show", "Show one resource as recorded, as JSON", Show);
  show->add_option("ADDRESS", f->address, "Resource address")->required();
  AddStack(*show, *f);
  auto rm = add("rm", "Forget a resource without deleting it", Remove);
  rm->add_option("ADDRESS", f->address, "Resource address")->required();
  AddStack(*rm, *f);
  rm->add_option("--lock-timeout", f->lock_timeout, "Wait this long for the state lock")->type_name("DURATION");
  auto mv = add("mv",
                "Rename a resource in the state (after renaming it in the manifests): a count or "
                "for_each resource moves whole, every instance keeping its index, in one commit",
                Move);
  mv->add_option("FROM", f->address, "Current address")->required();
  mv->add_option("TO", f->to, "New address")->required();
  AddStack(*mv, *f);
  mv->add_option("--lock-timeout", f->lock_timeout, "Wait this long for the state lock")->type_name("DURATION");
  AddStack(*add("pull", "Print the whole state as JSON", Pull), *f);
  return [which] { return (*which)(); };
}

std::function<int()> SetupImport(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<StateFlags>();
  sub.add_option("ADDRESS", f->address, "Address in the manifests, e.g. instance.web")->required();
  sub.add_option("ID", f->id, "Id of the existing resource")->required();
  AddStack(sub, *f);
  sub.add_option("--lock-timeout", f->lock_timeout, "Wait this long for the state lock")->type_name("DURATION");
  sub.footer(
      "Adopts an existing resource into the state; the next plan shows how it differs from\n"
      "the manifests. The manifests are loaded as by plan, so give the variables they need\n"
      "(--var, --var-file or CAIRN_VAR_NAME).\n\n"
      "Examples:\n"
      "  cairn import instance.web 3f2c1d4e-...  examples/quickstart\n"
      "  cairn import 'volume.data[\"db\"]' 9b1e...  examples/web --var region=eu-central");
  return [f, &global] { return Import(*f, global); };
}

std::function<int()> SetupForceUnlock(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<StateFlags>();
  sub.add_option("LOCK_ID", f->id, "The lock ID printed by the command that found the state locked")->required();
  AddStack(sub, *f);
  sub.footer(
      "Releases a state lock left by a process that died. Make sure it is gone first.\n\n"
      "Example:\n  cairn force-unlock 7c9e6679-7425-40de-944b-e07fc1f90ae7");
  return [f, &global] { return ForceUnlock(*f, global); };
}

}  // namespace

CAIRN_COMMAND("import", "Adopt an existing resource into the state", 60, SetupImport);
CAIRN_COMMAND("state", "Inspect and edit the recorded state", 70, SetupState);
CAIRN_COMMAND("force-unlock", "Release a stale state lock", 80, SetupForceUnlock);

}  // namespace cairn::cli
