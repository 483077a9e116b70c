// cairn state, cairn import and cairn force-unlock: inspect and repair what
// Cairn recorded about a stack. `cairn state pull` prints the state in the
// format engine/state/pulled_state.h documents, which `state push` reads back
// and checks whole (engine/operations/state_check.h) before one commit.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <variant>

#include "base/duration.h"
#include "base/redact.h"
#include "base/schema/suggest.h"
#include "cli/confirm.h"
#include "cli/engine_session.h"
#include "engine/address.h"
#include "engine/operations/import.h"
#include "engine/operations/state_check.h"
#include "engine/operations/state_push.h"
#include "engine/report/plan_report.h"
#include "engine/state/moves.h"
#include "engine/state/pulled_state.h"
#include "engine/state/state_lock.h"
#include "engine/state/state_query.h"
#include "providers/infra/canonical_id.h"

namespace cairn::cli {
namespace {

struct StateFlags {
  StackFlags stack;
  std::string address;                 // state mv: FROM
  std::vector<std::string> addresses;  // state show, state rm: ADDRESS... [DIR]
  std::string to;
  std::string id;
  std::string file;               // state push
  std::vector<std::string> args;  // import: ADDRESS ID [DIR], or ADDRESS=ID... [DIR]
  std::string generate;           // import --generate FILE
  bool force = false;
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
  if (!wait.ok()) {
    std::cerr << "error: --lock-timeout: " << wait.status().message() << "\n";
    return std::nullopt;
  }
  return s.Lock(op, *wait);
}

// How the state commands check a state: against the kinds this Cairn knows,
// with the provider's notion of an id and of two spellings of one.
StateCheckOptions CheckOptions(const EngineSession& s) {
  StateCheckOptions o;
  o.kinds = s.kinds();
  o.is_id = [](const std::string& id) { return IsSafePathId(id); };
  return o;
}

int List(const StateFlags& f, const GlobalOptions& g) {
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {  // an empty list, and a note for the human
    std::cerr << "note: " << NoState(*s) << "\n";
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

// `state show` and `state rm` take ADDRESS... [DIR]: of two or more
// arguments, the last is the stack directory when it names a directory, or
// cannot be an address (a path such as examples/web).
void SplitAddressesAndDir(StateFlags& f) {
  if (f.addresses.size() < 2) return;
  const std::string& last = f.addresses.back();
  std::error_code ec;
  if (std::filesystem::is_directory(last, ec) || !ResourceAddress::Parse(last)) {
    f.stack.paths = {last};
    f.addresses.pop_back();
  }
}

// The recorded addresses each of `f.addresses` names (StateAddressesNamed),
// in the order given, each once; nullopt after saying which name nothing.
std::optional<std::vector<std::string>> Named(const StateFlags& f, const StateSnapshot& st) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  bool missing = false;
  for (const std::string& given : f.addresses) {
    std::vector<std::string> named = StateAddressesNamed(st, given);
    if (named.empty()) {
      std::cerr << "error: " << given << " is not in the state (see 'cairn state list')\n";
      missing = true;
    }
    for (std::string& a : named) {
      if (seen.insert(a).second) out.push_back(std::move(a));
    }
  }
  if (missing) return std::nullopt;
  return out;
}

int Show(const StateFlags& flags, const GlobalOptions& g) {
  StateFlags f = flags;
  SplitAddressesAndDir(f);
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "error: " << f.addresses.front() << " is not in the state: " << NoState(*s)
              << "\n";
    return 1;
  }
  auto st = s->LoadState();
  if (!st) return 1;
  auto named = Named(f, *st);
  if (!named) return 1;
  Value shown = Value::array();
  for (const std::string& address : *named) {
    const ResourceState& rs = st->resources.at(address);
    Value j = {{"address", rs.address},
               {"kind", rs.kind},
               {"id", rs.id},
               {"attributes", rs.attributes},
               {"depends_on", rs.depends_on}};
    if (!rs.tainted.empty()) j["tainted"] = rs.tainted;
    shown.push_back(std::move(j));
  }
  // One resource as an object; several (addresses, or a resource's
  // instances) as a list of them.
  std::cout << Redact((shown.size() == 1 ? shown[0] : shown).dump(2)) << "\n";
  return 0;
}

int Remove(const StateFlags& flags, const GlobalOptions& g) {
  StateFlags f = flags;
  SplitAddressesAndDir(f);
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "error: " << f.addresses.front() << " is not in the state: " << NoState(*s)
              << "\n";
    return 1;
  }
  auto lock = LockFor(*s, f, "state rm");
  if (!lock) return 1;
  HeldStateLock held(*s, *lock);
  auto st = s->LoadState();
  if (!st) return 1;
  // All or nothing: one address that names nothing removes none.
  auto named = Named(f, *st);
  if (!named) {
    std::cerr << "error: nothing was removed\n";
    return 1;
  }
  if (auto c = s->store().Commit({.remove = *named}); !c.ok()) {
    std::cerr << "error: " << c.status().message() << "\n";
    return 1;
  }
  for (const std::string& address : *named) {
    std::cout << "Removed " << address << " from the state.\n";
  }
  std::cout << (named->size() == 1 ? "The resource itself still exists"
                                   : "The resources still exist")
            << "; Cairn no longer manages " << (named->size() == 1 ? "it" : "them") << ".\n";
  return 0;
}

int Rekey(const StateFlags& f, const GlobalOptions& g) {
  auto s = EngineSession::Open(
      f.stack, g,
      {.needs_api = false, .settings_only = true, .create_state = false, .for_rekey = true});
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "error: nothing to re-encrypt: " << NoState(*s) << "\n";
    return 1;
  }
  auto lock = LockFor(*s, f, "state rekey");
  if (!lock) return 1;
  HeldStateLock held(*s, *lock);
  auto r = s->store().Rekey();
  if (!r.ok()) {
    std::cerr << "error: " << r.status().message() << "\nThe state is unchanged.\n";
    return 1;
  }
  auto name = [](const std::string& id) {
    return id.empty() ? std::string("unencrypted") : "encrypted under key id " + id;
  };
  std::cout << "Rewrote " << r->records << " record" << (r->records == 1 ? "" : "s")
            << " in one transaction: the state was " << name(r->from_key_id) << ", it is now "
            << name(r->to_key_id) << ".\n";
  if (!r->to_key_id.empty()) {
    std::cout << "The fallback key, if any, is no longer needed to read it.\n";
  }
  return 0;
}

int Move(const StateFlags& f, const GlobalOptions& g) {
  const char* kForms = " is not a resource address (kind.name, kind.name[0], kind.name[\"key\"])\n";
  auto from = ResourceAddress::Parse(f.address);
  if (!from) {
    std::cerr << "error: \"" << f.address << "\"" << kForms;
    return 1;
  }
  auto to = ResourceAddress::Parse(f.to);
  if (!to) {
    std::cerr << "error: \"" << f.to << "\"" << kForms;
    return 1;
  }
  if (to->kind != from->kind) {
    std::cerr << "error: cannot move a " << from->kind << " to " << to->ToString()
              << ": an address keeps its kind\n";
    return 1;
  }
  if (*to == *from) {
    std::cerr << "error: " << to->ToString() << " is where it already is\n";
    return 1;
  }
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "error: " << from->ToString() << " is not in the state: " << NoState(*s) << "\n";
    return 1;
  }
  auto lock = LockFor(*s, f, "state mv");
  if (!lock) return 1;
  HeldStateLock held(*s, *lock);
  auto st = s->LoadState();
  if (!st) return 1;
  MovePlan plan = PlanMove(*st, *from, *to);
  if (!plan.error.empty()) {
    std::cerr << "error: " << plan.error << "\n";
    return 1;
  }
  std::vector<std::string> taken;
  for (const auto& [src, dst] : plan.moves) {
    if (st->resources.count(dst)) taken.push_back(dst);
  }
  if (!taken.empty()) {
    std::cerr << "error: nothing was moved: ";
    for (size_t i = 0; i < taken.size(); ++i) std::cerr << (i ? ", " : "") << taken[i];
    std::cerr << (taken.size() == 1 ? " is" : " are") << " already in the state\n";
    return 1;
  }
  // A state that tracks one object at two addresses (made before import
  // refused it) does not get a third.
  std::vector<std::string> destinations;
  for (const auto& [src, dst] : plan.moves) destinations.push_back(dst);
  std::vector<Diagnostic> twice =
      CheckTrackedOnce(ApplyMoves(*st, plan.moves), destinations, CheckOptions(*s));
  if (!twice.empty()) {
    s->PrintDiagnostics(twice);
    std::cerr << "error: nothing was moved\n";
    return 1;
  }
  // Whatever recorded a dependency on a moved address now names its new one:
  // destroy orders deletes by these.
  if (auto c = s->store().Commit(MoveCommit(*st, plan.moves)); !c.ok()) {
    std::cerr << "error: " << c.status().message() << "\n";
    return 1;
  }
  for (const auto& [src, dst] : plan.moves) std::cout << "Moved " << src << " to " << dst << ".\n";
  return 0;
}

int Pull(const StateFlags& f, const GlobalOptions& g) {
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "error: nothing to pull: " << NoState(*s) << "\n";
    return 1;
  }
  auto st = s->LoadState();
  if (!st) return 1;
  // Not through the redactor: see engine/state/pulled_state.h.
  std::cout << PulledStateText(*st);
  return 0;
}

int Push(const StateFlags& f, const GlobalOptions& g) {
  std::string text;
  if (f.file == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(f.file, std::ios::binary);
    if (!in) {
      std::cerr << "error: cannot read " << f.file << ": " << std::strerror(errno) << "\n";
      return 1;
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) {
      std::cerr << "error: cannot read " << f.file << "\n";
      return 1;
    }
  }
  // Checked whole before anything is opened for writing: a diagnostic per
  // problem, and nothing pushed if there is one.
  const std::string name = f.file == "-" ? "(stdin)" : f.file;
  PulledState pulled = ParsePulledState(text, name);
  auto s = OpenForState(f, g);
  if (!s) return 1;
  std::vector<Diagnostic> problems = pulled.diagnostics;
  if (pulled.ok()) {
    StateCheckOptions check = CheckOptions(*s);
    check.locations = pulled.locations;
    problems = CheckState(pulled.state, check);
  }
  if (HasErrors(problems)) {
    SourceFiles sources;
    sources.Add(name, text);
    std::cerr << RenderDiagnostics(problems, sources, {.color = UseColor(g, STDERR_FILENO)});
    std::cerr << "error: " << f.file << " is not a state 'cairn state push' can restore ("
              << problems.size() << " problem" << (problems.size() == 1 ? "" : "s")
              << " above); nothing was pushed\n";
    return 1;
  }
  if (!s->has_state()) {
    s = OpenForState(f, g, /*create=*/true);
    if (!s) return 1;
  }
  auto lock = LockFor(*s, f, "state push");
  if (!lock) return 1;
  HeldStateLock held(*s, *lock);
  auto st = s->LoadState();
  if (!st) return 1;
  auto pending = s->store().PendingJournal();
  if (!pending.ok()) {
    std::cerr << "error: cannot read the state: " << Redact(pending.status().message()) << "\n";
    return 1;
  }
  const StateSnapshot& restored = pulled.state;
  if (Status allowed = CheckPush(*st, pending->size(), restored, f.file, f.force); !allowed.ok()) {
    std::cerr << "error: " << allowed.message() << "\n";
    return 1;
  }
  auto serial = s->store().Commit(PushCommit(*st, restored));
  if (!serial.ok()) {
    std::cerr << "error: " << serial.status().message() << "\n";
    return 1;
  }
  std::cout << "Pushed " << f.file << " to the state: " << restored.resources.size()
            << " resource(s), " << restored.outputs.size() << " output(s); serial " << *serial
            << ", lineage " << restored.lineage << ". Run 'cairn plan' to compare it with the "
            << "manifests and the API.\n";
  return 0;
}

// One resource to import: where the manifests (will) declare it, and its id.
// ADDRESS ID [DIR], or ADDRESS=ID... [DIR]; false (with `error`) otherwise.
bool ParseImportArgs(const std::vector<std::string>& args, std::vector<ImportItem>& items,
                     std::vector<std::string>& dir, std::string& error) {
  auto address = [&](const std::string& text) -> std::optional<ResourceAddress> {
    auto a = ResourceAddress::Parse(text);
    if (!a) error = "\"" + text + "\" is not a resource address (kind.name, kind.name[0])";
    return a;
  };
  bool pairs = std::any_of(args.begin(), args.end(),
                           [](const std::string& a) { return a.find('=') != std::string::npos; });
  if (!pairs) {
    if (args.size() < 2 || args.size() > 3) {
      error = "expected ADDRESS ID [DIR], or ADDRESS=ID... [DIR]";
      return false;
    }
    auto a = address(args[0]);
    if (!a) return false;
    items.push_back({*a, args[1]});
    if (args.size() == 3) dir.push_back(args[2]);
    return true;
  }
  for (const std::string& arg : args) {
    size_t eq = arg.rfind('=');  // ids hold no '='; a for_each key may
    if (eq == std::string::npos) {
      if (!dir.empty()) {
        error = "\"" + arg + "\" is neither ADDRESS=ID nor the only stack directory";
        return false;
      }
      dir.push_back(arg);
      continue;
    }
    auto a = address(arg.substr(0, eq));
    if (!a) return false;
    if (eq + 1 == arg.size()) {
      error = arg + ": no id after '='";
      return false;
    }
    items.push_back({*a, arg.substr(eq + 1)});
  }
  return true;
}

int Import(const StateFlags& f, const GlobalOptions& g) {
  std::vector<ImportItem> items;
  StateFlags flags = f;
  std::string error;
  if (!ParseImportArgs(f.args, items, flags.stack.paths, error)) {
    std::cerr << "error: " << error << "\n";
    return 1;
  }
  const bool generate = !f.generate.empty();
  auto s = EngineSession::Open(flags.stack, g, {.needs_api = true, .allow_no_manifests = generate});
  if (!s) return 1;
  const std::string path = generate ? GeneratedManifestPath(s->stack_root(), f.generate) : "";
  if (Status st = CheckImport(items, s->config(), path, PosixEnv()); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  auto lock = LockFor(*s, flags, "import");
  if (!lock) return 1;
  HeldStateLock held(*s, *lock);
  auto st = s->LoadState();
  if (!st) return 1;
  // Every object read before anything is written: one missing, nothing done.
  ImportRead read = ReadForImport(items, *st, s->provider(), s->kinds());
  if (!read.ok()) {
    if (!read.diagnostics.empty()) s->PrintDiagnostics(read.diagnostics);
    std::cerr << "error: " << read.error << "; nothing was imported\n";
    return 1;
  }
  std::vector<ResourceState>& records = read.records;
  const std::vector<ImportItem> undeclared = UndeclaredImports(items, s->config());
  if (!undeclared.empty()) {
    LoadOptions reload;
    if (!ToLoadOptions(flags.stack, reload, error)) {
      std::cerr << "error: " << error << "\n";
      return 1;
    }
    ReloadedStack now = WriteAndReload(
        PosixEnv(), path,
        GenerateImportManifests(undeclared, records, *st, *s->load().registry, s->kinds()),
        std::move(reload));
    if (!now.load.diagnostics.empty()) {
      std::cerr << RenderDiagnostics(now.load.diagnostics, now.load.sources,
                                     {.color = UseColor(g, STDERR_FILENO)});
    }
    if (!now.ok()) {
      std::cerr << "error: " << now.error << "\n";
      return 1;
    }
    AddDependsOn(records, now.load.config);
  } else {
    AddDependsOn(records, s->config());
  }
  if (auto c = s->store().Commit({.put = records}); !c.ok()) {
    std::cerr << "error: " << c.status().message() << "\n";
    return 1;
  }
  for (const ResourceState& rs : records) {
    std::cout << "Imported " << rs.address << " (id " << rs.id << ").\n";
  }
  if (!undeclared.empty()) {
    std::cout << "Wrote " << undeclared.size() << " manifest" << (undeclared.size() == 1 ? "" : "s")
              << " to " << path << ".\n";
  }
  std::cout << "Run 'cairn plan' to see how the live objects differ from the manifests.\n";
  return 0;
}

int ForceUnlock(const StateFlags& f, const GlobalOptions& g) {
  auto s = OpenForState(f, g);
  if (!s) return 1;
  if (!s->has_state()) {
    std::cerr << "error: no state lock with ID " << f.id << ": " << NoState(*s) << "\n";
    return 1;
  }
  auto held = s->store().CurrentLock();
  if (!held.ok()) {
    std::cerr << "error: cannot read the state lock: " << Redact(held.status().message()) << "\n";
    return 1;
  }
  if (!held->has_value()) {
    std::cerr << "error: no state lock with ID " << f.id << ": the state is not locked\n";
    return 1;
  }
  const LockInfo& lock = **held;
  const std::string holder = Redact(lock.holder) + " (operation " + lock.operation + " since " +
                             FormatIsoTime(lock.created_at) + ")";
  if (lock.id != f.id) {
    std::cerr << "error: no state lock with ID " << f.id << ": the state is locked by " << holder
              << " with lock ID " << lock.id << "\n";
    return 1;
  }
  // A holder that still runs here is in the middle of writing the state:
  // releasing its lock lets a second writer in beside it. A dead holder's
  // lock (or one whose holder this host cannot see) is what this command is
  // for, and goes without asking.
  if (LockHolderIsRunning(lock.holder)) {
    const std::string why = "the state lock " + f.id + " is held by " + holder +
                            ", which is still running on this host; releasing it lets another "
                            "command write the state at the same time";
    if (f.force) {
      std::cerr << "warning: " << why << "\n";
    } else if (isatty(STDIN_FILENO) != 1) {
      std::cerr << "error: refusing to release " << why
                << ". Wait for it to finish or stop it; or pass --force to release it anyway.\n";
      return 1;
    } else {
      std::cout << "Careful: " << why << ".";
      if (!Confirm("Release it anyway?", std::stop_token())) return 1;
    }
  }
  // By id: if the lock changed hands meanwhile, this removes nothing.
  if (Status st = s->store().ForceUnlock(f.id); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  std::cout << "Released the state lock " << f.id << " held by " << holder << ".\n";
  return 0;
}

// cairn output: the outputs recorded by the last apply.
struct OutputFlags {
  StateFlags state;
  std::string name;
  bool json = false;
  bool show_sensitive = false;
};

int Output(OutputFlags f, const GlobalOptions& g) {
  // A lone argument naming a directory is the stack (decided by what exists:
  // `cairn output web` in the parent of a stack directory `web`); so is one
  // with '/' or '.', which no output name has.
  std::error_code ec;
  if (f.state.stack.paths.empty() && !f.name.empty() &&
      (std::filesystem::is_directory(f.name, ec) ||
       f.name.find_first_of("/.") != std::string::npos)) {
    f.state.stack.paths.push_back(f.name);
    f.name.clear();
  }
  auto s = OpenForState(f.state, g);
  if (!s) return 1;
  StateSnapshot st;
  if (s->has_state()) {
    auto loaded = s->LoadState();
    if (!loaded) return 1;
    st = std::move(*loaded);
  }
  auto shown = [&](const std::string& name, const Value& v) -> std::string {
    if (st.sensitive_outputs.count(name) && !f.show_sensitive) return "(sensitive)";
    return RenderValue(v, {});  // as plan and apply show values
  };
  if (!f.name.empty()) {
    auto it = st.outputs.find(f.name);
    if (it == st.outputs.end()) {
      std::vector<std::string> names;
      for (const auto& [name, v] : st.outputs) names.push_back(name);
      std::string hint = DidYouMean(f.name, names);
      std::cerr << "error: no output named " << f.name << " in the state"
                << (hint.empty() ? "" : "; " + hint)
                << (st.outputs.empty() ? " (it records none: run 'cairn apply')" : "") << "\n";
      return 1;
    }
    if (f.json) {
      std::cout << it->second.dump() << "\n";
    } else if (st.sensitive_outputs.count(f.name) && !f.show_sensitive) {
      std::cerr << "error: output " << f.name
                << " is sensitive: pass --show-sensitive (or --json) to print it\n";
      return 1;
    } else if (it->second.is_string()) {
      std::cout << it->second.get<std::string>() << "\n";  // raw, for $(cairn output NAME)
    } else {
      std::cout << RenderValue(it->second, {}) << "\n";  // --json for JSON
    }
    return 0;
  }
  if (f.json) {
    // Like the text: a sensitive value only when asked for, by name or with
    // --show-sensitive, so that a log of `cairn output --json` holds none.
    Value all = Value::object();
    for (const auto& [name, v] : st.outputs) {
      const bool sensitive = st.sensitive_outputs.count(name) > 0;
      all[name] = {{"value", sensitive && !f.show_sensitive ? Value("(sensitive)") : v},
                   {"sensitive", sensitive}};
    }
    std::cout << all.dump(2) << "\n";
    return 0;
  }
  if (st.outputs.empty()) {
    std::cerr << "note: no outputs recorded" << (s->has_state() ? "" : ": " + NoState(*s)) << "\n";
    return 0;
  }
  for (const auto& [name, v] : st.outputs) std::cout << name << " = " << shown(name, v) << "\n";
  return 0;
}

std::function<int()> SetupOutput(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<OutputFlags>();
  sub.add_option("NAME", f->name,
                 "Print only this output (a string without quotes); alone, a NAME that is a "
                 "directory is the stack instead");
  AddStack(sub, f->state);
  sub.add_flag("--json", f->json,
               "Print as JSON: {NAME: {value, sensitive}} (sensitive values as \"(sensitive)\" "
               "unless --show-sensitive), or NAME's value");
  sub.add_flag("--show-sensitive", f->show_sensitive,
               "Print sensitive values instead of masking them");
  sub.footer(
      "The outputs the last apply recorded in the state (no API call). Sensitive outputs\n"
      "are shown as (sensitive) unless --show-sensitive, --json ones too; one asked for by\n"
      "name is printed with --show-sensitive or --json. Given one argument, Cairn decides\n"
      "by what exists: a directory (or a path with '/' or '.') is the stack, anything else an\n"
      "output of the stack in the current directory; give both to be explicit.\n\n"
      "Examples:\n"
      "  cairn output                          # every output: name = value\n"
      "  cairn output examples/web             # of another stack directory\n"
      "  ssh admin@$(cairn output web_ip)      # one, raw\n"
      "  cairn output db_password --show-sensitive\n"
      "  cairn output --json | jq -r .web_ip.value\n"
      "  cairn output db_password --json       # one sensitive value, as JSON");
  return [f, &global] { return Output(*f, global); };
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
      "  cairn state pull > backup.json                    # unredacted: keep it private\n"
      "  cairn state push backup.json\n"
      "  cairn state rekey                                 # after setting encryption");
  auto add = [&](const std::string& name, const std::string& desc, const std::string& example,
                 int (*run)(const StateFlags&, const GlobalOptions&)) {
    CLI::App* c = sub.add_subcommand(name, desc);
    c->callback(
        [which, f, run, &global] { *which = [f, run, &global] { return run(*f, global); }; });
    c->footer(example);
    return c;
  };
  auto lock_timeout = [&](CLI::App* c) {
    c->add_option("--lock-timeout", f->lock_timeout,
                  "Wait this long for the state lock (default 0: fail at once): " +
                      std::string(kDurationSyntax))
        ->type_name("DURATION");
  };
  AddStack(*add("list", "List the addresses and ids in the state",
                "Example:\n  cairn state list examples/web", List),
           *f);
  auto show = add("show", "Show resources as recorded, as JSON",
                  "One resource prints as a JSON object; several (more addresses, or the\n"
                  "instances of a count or for_each resource named without an index) as a list.\n"
                  "Of two or more arguments, the last is the stack directory when it is a\n"
                  "directory (or cannot be an address).\n\n"
                  "Examples:\n  cairn state show 'volume.data[\"db\"]' examples/web\n"
                  "  cairn state show instance.node               # every instance of it\n"
                  "  cairn state show network.core ssh_key.deploy",
                  Show);
  show->add_option("ADDRESS", f->addresses,
                   "Resource addresses (one without an index: all its instances), then "
                   "optionally the stack directory")
      ->required();
  AddStackFlags(*show, f->stack, /*multiple_paths=*/false, /*positional_dir=*/false);
  auto rm = add("rm", "Forget resources without deleting them",
                "All in one commit, or nothing if an address names nothing in the state. An\n"
                "address without an index forgets every instance of its resource. Of two or more\n"
                "arguments, the last is the stack directory when it is a directory (or cannot be\n"
                "an address).\n\n"
                "Examples:\n  cairn state rm ssh_key.old\n"
                "  cairn state rm instance.node network.core examples/web",
                Remove);
  rm->add_option("ADDRESS", f->addresses,
                 "Resource addresses (one without an index: all its instances), then optionally "
                 "the stack directory")
      ->required();
  AddStackFlags(*rm, f->stack, /*multiple_paths=*/false, /*positional_dir=*/false);
  lock_timeout(rm);
  auto mv = add("mv", "Rename a resource, or every instance of one, in the state",
                "After renaming a resource in the manifests. A count or for_each resource moves\n"
                "whole, every instance keeping its index; all in one commit, and if any\n"
                "destination is already in the state, nothing moves (nor if a moved object is\n"
                "tracked at another address too). Recorded dependencies on\n"
                "the moved addresses follow them.\n\n"
                "Examples:\n"
                "  cairn state mv instance.web instance.frontend     # web[0] -> frontend[0], ...\n"
                "  cairn state mv 'instance.web[\"eu\"]' instance.eu  # one instance\n"
                "  cairn state mv network.core 'network.core[0]'     # the resource gained a count",
                Move);
  mv->add_option("FROM", f->address, "Current address")->required();
  mv->add_option("TO", f->to, "New address")->required();
  AddStack(*mv, *f);
  lock_timeout(mv);
  AddStack(*add("pull", "Print the whole state as JSON, unredacted (a backup)",
                "The state exactly as recorded, for 'cairn state push' to restore: sensitive\n"
                "values are not redacted, so keep the output as private as the state file\n"
                "itself. It holds no API token (tokens are never in the state).\n\n"
                "Example:\n  (umask 077; cairn state pull > backup.json)",
                Pull),
           *f);
  auto rekey =
      add("rekey", "Re-encrypt the state under the backend's current encryption key",
          "Rewrites every encrypted-at-rest record (attributes, outputs, journal bodies) under\n"
          "the key of the backend's `encryption` setting, reading each with that key, its\n"
          "fallback, or as plaintext; in one transaction, holding the state lock: a crash\n"
          "leaves the state as it was before or after, never half. With `unencrypted: true`\n"
          "(and the old key as fallback) it writes them plaintext again.\n"
          "See docs/security.md (Encryption at rest).\n\n"
          "Examples:\n"
          "  # encrypt an existing state: add encryption: {key_env: CAIRN_STATE_KEY}, then\n"
          "  CAIRN_STATE_KEY=$(cat key.hex) cairn state rekey\n"
          "  # rotate: key_env: NEW_KEY, fallback: {key_env: OLD_KEY}, then\n"
          "  NEW_KEY=... OLD_KEY=... cairn state rekey examples/web",
          Rekey);
  AddStack(*rekey, *f);
  lock_timeout(rekey);
  auto push =
      add("push", "Replace the state with a file printed by 'cairn state pull'",
          "Restores resources, outputs and lineage in one commit, holding the state lock. Refused\n"
          "when the file is not a pulled state, or is not one apply can work with: a diagnostic\n"
          "per problem (an address, kind or id that is not one, a depends_on entry naming no\n"
          "resource of the file or making a cycle, one object at two addresses; even with\n"
          "--force). And, unless --force, when it was pulled from another state (lineage), when\n"
          "the state changed after it was pulled (a newer serial), or when operations of an\n"
          "interrupted apply are still in flight. A stack with no state yet (a lost state file)\n"
          "takes any pulled state.\n\n"
          "Example (restore a backup):\n"
          "  cairn state push backup.json\n"
          "  cairn plan --detailed-exitcode   # 0: the backup matches the manifests and the API",
          Push);
  push->add_option("FILE", f->file, "A file printed by 'cairn state pull' (- for stdin)")
      ->required();
  AddStack(*push, *f);
  push->add_flag("--force", f->force,
                 "Push even over another lineage, a newer serial or operations in flight");
  lock_timeout(push);
  return [which] { return (*which)(); };
}

std::function<int()> SetupImport(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<StateFlags>();
  sub.add_option("ARGS", f->args,
                 "ADDRESS ID [DIR] (one resource), or ADDRESS=ID... [DIR] (several at once)")
      ->required();
  AddStackFlags(sub, f->stack, /*multiple_paths=*/false, /*positional_dir=*/false);
  sub.add_option("--generate", f->generate,
                 "Write the manifests of the resources the stack does not declare yet to FILE "
                 "(a new file; a bare name goes in the stack directory)")
      ->type_name("FILE");
  sub.add_option("--lock-timeout", f->lock_timeout,
                 "Wait this long for the state lock (default 0: fail at once): " +
                     std::string(kDurationSyntax))
      ->type_name("DURATION");
  sub.footer(
      "Adopts existing resources into the state, in one commit: every object is read first,\n"
      "and if one is missing nothing is imported. An object the state already tracks (at\n"
      "another address) is refused, naming that address: one object, one address ('cairn\n"
      "state mv' gives it another). The next plan shows how they differ from\n"
      "the manifests. The manifests are loaded as by plan, so give the variables they need\n"
      "(--var, --var-file or CAIRN_VAR_NAME). With --generate, resources the manifests do\n"
      "not declare get a document each, written from the live object (references to the\n"
      "other resources the stack knows become ${kind.name.id}); it works in an empty\n"
      "directory too.\n\n"
      "Examples:\n"
      "  cairn import instance.web 3f2c1d4e-...  examples/quickstart\n"
      "  cairn import 'volume.data[\"db\"]' 9b1e...  examples/web --var region=eu-central\n"
      "  cairn import network.core=6c1f... instance.api=inst_8d2e... --generate imported.yaml");
  return [f, &global] { return Import(*f, global); };
}

std::function<int()> SetupForceUnlock(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<StateFlags>();
  sub.add_option("LOCK_ID", f->id, "The lock ID printed by the command that found the state locked")
      ->required();
  AddStack(sub, *f);
  sub.add_flag("--force", f->force,
               "Release the lock even though its holder still runs on this host, without asking");
  sub.footer(
      "Releases a state lock left by a process that died or was lost (another machine, a\n"
      "container). A lock whose holder provably still runs on this host is released only\n"
      "after you type 'yes' (or with --force): that process is writing the state.\n\n"
      "Example:\n  cairn force-unlock 7c9e6679-7425-40de-944b-e07fc1f90ae7 examples/web");
  return [f, &global] { return ForceUnlock(*f, global); };
}

}  // namespace

CAIRN_COMMAND("import", "Adopt an existing resource into the state", 60, SetupImport);
CAIRN_COMMAND("state", "Inspect and edit the recorded state", 70, SetupState);
CAIRN_COMMAND("force-unlock", "Release a stale state lock", 78, SetupForceUnlock);
CAIRN_COMMAND("output", "Print the outputs recorded by the last apply", 55, SetupOutput);

}  // namespace cairn::cli
