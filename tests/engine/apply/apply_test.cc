#include "engine/apply/apply.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <stop_token>
#include <thread>

#include "engine/manifest/expr.h"
#include "engine/report/plan_report.h"
#include "engine/state/memory_state_store.h"
#include "tests/engine/support/fake_provider.h"

namespace apply_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

KindCatalog Kinds() {
  KindCatalog k;
  k["network"] = {{"region", "cidr"}, {"id", "status"}, {}};
  k["instance"] = {{"region", "network"}, {"id", "status"}, {{"network", "network"}}};
  k["ssh_key"] = {{"public_key"}, {"id"}, {}};
  k["firewall"] = {{}, {"id"}, {{"instances", "instance"}}};
  return k;
}

ResourceConfig Res(const std::string& addr, Value spec, std::vector<std::string> deps = {}) {
  ResourceConfig rc;
  rc.address = *ResourceAddress::Parse(addr);
  rc.kind = rc.address.kind;
  rc.spec = std::move(spec);
  for (const auto& d : deps) rc.depends_on.push_back(*ResourceAddress::Parse(d));
  return rc;
}

struct Fixture {
  FakeProvider provider;
  MemoryStateStore store;
  ApplyOptions options;
  std::vector<ProgressEvent> events;

  Fixture() {
    options.parallelism = 4;
    options.progress = [this](const ProgressEvent& e) { events.push_back(e); };
  }

  Plan PlanFor(const StackConfig& cfg, bool destroy = false) {
    auto st = store.Load();
    REQUIRE(st.ok());
    PlanOptions po;
    po.destroy = destroy;
    LiveView live;
    for (const auto& [addr, rs] : st->resources) {
      auto r = provider.Read({rs.kind, rs.id}, {});
      live[addr] = r.resource ? std::optional<Value>(r.resource->attributes) : std::nullopt;
    }
    auto r = MakePlan(cfg, *st, live, Kinds(), po);
    REQUIRE(r.ok());
    return r.plan;
  }

  ApplyResult Run(const StackConfig& cfg, bool destroy = false) {
    return Apply(PlanFor(cfg, destroy), provider, store, options);
  }

  StateSnapshot State() { return *store.Load(); }
};

StackConfig WebStack() {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  cfg.resources.push_back(
      Res("instance.web", {{"name", "web"}, {"region", "eu"}, {"network", "${network.core.id}"}},
          {"network.core"}));
  cfg.resources.push_back(
      Res("ssh_key.deploy", {{"name", "deploy"}, {"public_key", "ssh-ed25519 AAAA"}}));
  cfg.outputs.push_back({"web_id", "${instance.web.id}", false, {}});
  return cfg;
}

StackConfig IndependentInstances(int n) {
  StackConfig cfg;
  for (int i = 0; i < n; ++i) {
    std::string name = "i" + std::to_string(i);
    cfg.resources.push_back(Res("instance." + name, {{"name", name}, {"region", "eu"}}));
  }
  return cfg;
}

// A StateStore that forwards to another and records its journal writes; it
// can fail them, and hold back or fail the commits of results.
class JournalRecordingStore final : public StateStore {
 public:
  explicit JournalRecordingStore(StateStore& inner) : inner_(inner) {}
  Result<StateSnapshot> Load() override { return inner_.Load(); }
  Result<LockInfo> Lock(const std::string& op, std::chrono::milliseconds wait) override {
    return inner_.Lock(op, wait);
  }
  Status Unlock(const std::string& id) override { return inner_.Unlock(id); }
  Status ForceUnlock(const std::string& id) override { return inner_.ForceUnlock(id); }
  Result<std::optional<LockInfo>> CurrentLock() override { return inner_.CurrentLock(); }
  Result<int64_t> ReserveSequences(int64_t n) override { return inner_.ReserveSequences(n); }
  Status JournalBeginAll(std::span<const JournalEntry> entries) override {
    {
      std::lock_guard lock(mu_);
      batches_.push_back(entries.size());
      if (fail_journal_) return Status::IOError("disk full (injected)");
    }
    return inner_.JournalBeginAll(entries);
  }
  Result<std::vector<JournalEntry>> PendingJournal() override { return inner_.PendingJournal(); }
  Result<int64_t> Commit(const StateCommit& c) override {
    if (!c.put.empty()) {
      std::unique_lock lock(mu_);
      if (hold_results_) {
        // Held until released, or for at most 5 s: a test that expects the
        // release fails instead of hanging when it does not come.
        ++held_now_;
        held_cv_.notify_all();
        released_cv_.wait_for(lock, std::chrono::seconds(5), [&] { return !hold_results_; });
        --held_now_;
      }
      if (fail_results_) return Status::IOError("disk full (injected)");
    }
    return inner_.Commit(c);
  }
  Status Sync() override { return inner_.Sync(); }

  // Commits of results (with resources to put) wait until ReleaseResults.
  void HoldResults() {
    std::lock_guard lock(mu_);
    hold_results_ = true;
  }
  void ReleaseResults() {
    {
      std::lock_guard lock(mu_);
      hold_results_ = false;
    }
    released_cv_.notify_all();
  }
  // Whether a result's commit is being held now (waits up to 1 s for one).
  bool ResultHeld() {
    std::unique_lock lock(mu_);
    return held_cv_.wait_for(lock, std::chrono::seconds(1), [&] { return held_now_ > 0; });
  }
  void FailResults() {
    std::lock_guard lock(mu_);
    fail_results_ = true;
  }

  void FailJournal() {
    std::lock_guard lock(mu_);
    fail_journal_ = true;
  }
  // The size of each JournalBeginAll call, in call order.
  std::vector<size_t> batches() {
    std::lock_guard lock(mu_);
    return batches_;
  }

 private:
  StateStore& inner_;
  std::mutex mu_;
  std::vector<size_t> batches_;
  bool fail_journal_ = false;
  bool hold_results_ = false, fail_results_ = false;
  int held_now_ = 0;  // commits waiting in HoldResults now
  std::condition_variable held_cv_, released_cv_;
};

// Whether the store's journal holds an entry with this key.
bool Journaled(StateStore& store, const std::string& key) {
  auto pending = store.PendingJournal();
  if (!pending.ok()) return false;
  return std::any_of(pending->begin(), pending->end(),
                     [&](const JournalEntry& e) { return e.idempotency_key == key; });
}

}  // namespace

TEST_CASE("apply creates in dependency order, resolves references and records everything") {
  Fixture f;
  auto r = f.Run(WebStack());
  REQUIRE(r.ok());
  CHECK(r.summary.created == 3);
  auto calls = f.provider.calls();
  auto pos = [&](const std::string& c) {
    return std::find(calls.begin(), calls.end(), c) - calls.begin();
  };
  CHECK(pos("create network core") < pos("create instance web"));
  auto st = f.State();
  REQUIRE(st.resources.size() == 3);
  const auto& web = st.resources.at("instance.web");
  CHECK(web.attributes["network"] == st.resources.at("network.core").id);
  CHECK(web.depends_on == std::vector<std::string>{"network.core"});
  CHECK(f.store.PendingJournal()->empty());
  CHECK(r.outputs.at("web_id") == web.id);
  CHECK(st.outputs.at("web_id") == web.id);

  // A second plan has nothing to do.
  CHECK_FALSE(f.PlanFor(WebStack()).has_changes());
}

TEST_CASE("a refused create fails its dependents while independent branches go on") {
  Fixture f;
  f.provider.RefuseName("core");
  auto r = f.Run(WebStack());
  CHECK_FALSE(r.ok());
  CHECK(r.summary.failed == 1);
  CHECK(r.summary.skipped == 1);
  CHECK(r.summary.created == 1);
  auto st = f.State();
  CHECK(st.resources.count("ssh_key.deploy") == 1);
  CHECK(st.resources.count("instance.web") == 0);
  // The refusal was definite: nothing is left in the journal.
  CHECK(f.store.PendingJournal()->empty());
  bool skipped_event = false;
  for (const auto& e : f.events) {
    if (e.phase == ProgressEvent::Phase::kSkipped && e.address == "instance.web") {
      skipped_event = e.message.find("network.core failed") != std::string::npos;
    }
  }
  CHECK(skipped_event);
}

TEST_CASE(
    "a resource whose provisioning failed is tainted, nothing is built on it, and it is replaced") {
  Fixture f;
  f.provider.FailProvisioning("core");
  auto r = f.Run(WebStack());
  CHECK_FALSE(r.ok());
  CHECK(r.summary.failed == 1);
  CHECK(r.summary.skipped == 1);
  // Recorded, as it exists, but as tainted; the instance was not made on it.
  auto st = f.State();
  REQUIRE(st.resources.count("network.core") == 1);
  std::string failed_id = st.resources.at("network.core").id;
  CHECK(st.resources.at("network.core").tainted == "provisioning failed: provisioning_failed");
  CHECK(st.resources.count("instance.web") == 0);
  CHECK(f.provider.resources("instance").empty());

  // The next plan replaces it (and creates the instance after it).
  Plan next = f.PlanFor(WebStack());
  const PlannedChange* core = nullptr;
  for (const auto& c : next.changes) {
    if (c.address == "network.core") core = &c;
  }
  REQUIRE(core);
  CHECK(core->action == Action::kReplace);
  CHECK(core->replace_reason == "provisioning failed: provisioning_failed");
  std::string text = RenderPlanText(next);
  CHECK(text.find("-/+ network.core") != std::string::npos);
  CHECK(text.find("replace (provisioning failed: provisioning_failed)\n") != std::string::npos);

  // Once the API provisions again, the apply deletes the failed one and
  // builds on its replacement.
  f.provider.FailProvisioning("core", false);
  auto again = Apply(next, f.provider, f.store, f.options);
  REQUIRE(again.ok());
  auto healed = f.State();
  CHECK(healed.resources.at("network.core").tainted.empty());
  CHECK(healed.resources.at("network.core").id != failed_id);
  CHECK(healed.resources.at("instance.web").attributes["network"] ==
        healed.resources.at("network.core").id);
  CHECK(f.provider.resources("network").count(failed_id) == 0);
  CHECK_FALSE(f.PlanFor(WebStack()).has_changes());
}

TEST_CASE("a resource the API reports failed at refresh is replaced too") {
  Fixture f;
  REQUIRE(f.Run(WebStack()).ok());
  std::string id = f.State().resources.at("network.core").id;
  f.provider.Edit("network", id, "status", "failed");
  Plan next = f.PlanFor(WebStack());
  for (const auto& c : next.changes) {
    if (c.address == "network.core") {
      CHECK(c.action == Action::kReplace);
      CHECK(c.replace_reason == "failed: the API reports its status as failed");
    }
  }
}

TEST_CASE("a response lost after the API committed is recovered with the same key, no duplicate") {
  Fixture f;
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  f.provider.LoseResponses(1);
  auto r = f.Run(cfg);
  CHECK_FALSE(r.ok());
  auto pending = *f.store.PendingJournal();
  REQUIRE(pending.size() == 1);
  CHECK(pending[0].address == "network.core");
  CHECK(pending[0].body.find("10.0.0.0/16") != std::string::npos);
  CHECK(pending[0].idempotency_key.rfind("cairn-", 0) == 0);
  CHECK(f.State().resources.empty());

  auto rec = RecoverJournal(f.provider, f.store, f.options);
  REQUIRE(rec.ok());
  CHECK(rec.recovered == 1);
  CHECK(f.provider.resources("network").size() == 1);
  auto st = f.State();
  REQUIRE(st.resources.count("network.core") == 1);
  CHECK(st.resources.at("network.core").id == f.provider.resources("network").begin()->first);
  CHECK(f.store.PendingJournal()->empty());
  CHECK_FALSE(f.PlanFor(cfg).has_changes());
}

TEST_CASE("a request lost before the API saw it is sent again at recovery") {
  Fixture f;
  StackConfig cfg;
  cfg.resources.push_back(Res("ssh_key.k", {{"name", "k"}, {"public_key", "ssh-ed25519 AAAA"}}));
  f.provider.DropRequests(1);
  CHECK_FALSE(f.Run(cfg).ok());
  CHECK(f.provider.resources("ssh_key").empty());
  REQUIRE(RecoverJournal(f.provider, f.store, f.options).recovered == 1);
  CHECK(f.provider.resources("ssh_key").size() == 1);
}

TEST_CASE("find-by-name recovery adopts a resource the API cannot deduplicate") {
  Fixture f;
  f.options.find_by_name_kinds = {"ssh_key"};
  StackConfig cfg;
  cfg.resources.push_back(Res("ssh_key.k", {{"name", "k"}, {"public_key", "ssh-ed25519 AAAA"}}));
  f.provider.LoseResponses(1);
  CHECK_FALSE(f.Run(cfg).ok());
  int sent = f.provider.mutations_sent();
  REQUIRE(RecoverJournal(f.provider, f.store, f.options).recovered == 1);
  CHECK(f.provider.mutations_sent() == sent);  // adopted, not re-sent
  CHECK(f.State().resources.at("ssh_key.k").id == f.provider.resources("ssh_key").begin()->first);
}

TEST_CASE("find-by-name recovery leaves a same-named object that differs alone") {
  Fixture f;
  f.options.find_by_name_kinds = {"ssh_key"};
  std::string theirs =
      f.provider.Inject("ssh_key", {{"name", "k"}, {"public_key", "ssh-ed25519 BBBB"}});
  StackConfig cfg;
  cfg.resources.push_back(Res("ssh_key.k", {{"name", "k"}, {"public_key", "ssh-ed25519 AAAA"}}));
  f.provider.DropRequests(1);  // ours never reached the API
  CHECK_FALSE(f.Run(cfg).ok());
  REQUIRE(RecoverJournal(f.provider, f.store, f.options).recovered == 1);
  auto keys = f.provider.resources("ssh_key");
  CHECK(keys.size() == 2);  // re-sent, not adopted
  std::string ours = f.State().resources.at("ssh_key.k").id;
  CHECK(ours != theirs);
  CHECK(keys.at(ours)["public_key"] == "ssh-ed25519 AAAA");
}

TEST_CASE("recovery re-sends journal entries whose context or body a damaged state mangled") {
  // A corrupted state file may hold any JSON in a journal entry's context
  // and body (tests/fuzz/regressions/state_reader/): each is still re-sent,
  // taking only a list's strings as dependencies, and nothing throws.
  Fixture f;
  f.options.find_by_name_kinds = {"network"};
  int64_t seq = *f.store.ReserveSequences(4);
  auto entry = [&](int64_t n, const std::string& name, const std::string& body, Value context) {
    return JournalEntry{
        seq + n, "network." + name, Action::kCreate, "network",         "", "POST", "/v1/networks",
        body,    "key-" + name,     1700000000,      std::move(context)};
  };
  std::vector<JournalEntry> entries = {
      entry(0, "a", R"({"name":"a","region":"eu","cidr":"10.0.0.0/16"})", Value::array({1, 2})),
      entry(1, "b", R"({"name":"b","region":"eu","cidr":"10.1.0.0/16"})",
            Value{{"depends_on", "network.a"}}),
      entry(2, "c", R"({"name":"c","region":"eu","cidr":"10.2.0.0/16"})",
            Value{{"depends_on", Value::array({7, "network.a", nullptr})}}),
      // find-by-name with a name that is not a string: nothing to find by.
      entry(3, "d", R"({"name":5,"region":"eu","cidr":"10.3.0.0/16"})", "not an object"),
  };
  REQUIRE(f.store.JournalBeginAll(entries).ok());
  auto rec = RecoverJournal(f.provider, f.store, f.options);
  SourceFiles sources;
  INFO(RenderDiagnostics(rec.diagnostics, sources));
  CHECK(rec.ok());
  CHECK(rec.recovered == 4);
  CHECK(f.provider.resources("network").size() == 4);
  auto st = f.State();
  REQUIRE(st.resources.size() == 4);
  CHECK(st.resources.at("network.a").depends_on.empty());
  CHECK(st.resources.at("network.b").depends_on.empty());
  CHECK(st.resources.at("network.c").depends_on == std::vector<std::string>{"network.a"});
  CHECK(st.resources.at("network.d").depends_on.empty());
  CHECK(f.store.PendingJournal()->empty());
}

TEST_CASE("replace deletes the old object before creating the new one") {
  Fixture f;
  REQUIRE(f.Run(WebStack()).ok());
  std::string old_net = f.State().resources.at("network.core").id;
  auto cfg = WebStack();
  cfg.resources[0].spec["cidr"] = "10.9.0.0/16";
  auto r = f.Run(cfg);
  REQUIRE(r.ok());
  CHECK(r.summary.replaced == 2);  // the instance's network reference forces it too
  auto calls = f.provider.calls();
  std::vector<std::string> tail(calls.end() - 4, calls.end());
  CHECK(tail[0].rfind("delete instance", 0) == 0);
  CHECK(tail[1] == "delete network " + old_net);
  CHECK(tail[2] == "create network core");
  CHECK(tail[3] == "create instance web");
  CHECK(f.provider.resources("network").size() == 1);
  CHECK(f.provider.resources("instance").size() == 1);
}

TEST_CASE("an update referring to a replaced object runs after its delete and create") {
  // The firewall is updated (its instance reference changes) while the
  // instance it refers to is replaced delete-then-create: the update needs
  // the new instance, so it cannot also run before the old one's delete.
  Fixture f;
  auto cfg = WebStack();
  cfg.resources.push_back(Res("firewall.edge",
                              {{"name", "edge"}, {"instances", {"${instance.web.id}"}}},
                              {"instance.web"}));
  REQUIRE(f.Run(cfg).ok());
  std::string old_web = f.State().resources.at("instance.web").id;
  size_t first_run = f.provider.calls().size();
  cfg.resources[0].spec["cidr"] = "10.9.0.0/16";
  auto r = f.Run(cfg);
  INFO((r.diagnostics.empty() ? "" : r.diagnostics[0].summary));
  REQUIRE(r.ok());
  CHECK(r.summary.replaced == 2);
  CHECK(r.summary.updated == 1);
  auto calls = f.provider.calls();
  auto pos = [&](const std::string& prefix) {
    for (size_t i = first_run; i < calls.size(); ++i) {
      if (calls[i].rfind(prefix, 0) == 0) return i;
    }
    return calls.size();
  };
  CHECK(pos("delete instance " + old_web) < pos("create instance web"));
  CHECK(pos("create instance web") < pos("update firewall"));
  CHECK(pos("update firewall") < calls.size());
  std::string new_web = f.State().resources.at("instance.web").id;
  CHECK(f.State().resources.at("firewall.edge").attributes["instances"] == Value::array({new_web}));
}

namespace {

std::vector<std::string> CodesOf(const std::vector<Diagnostic>& diags) {
  std::vector<std::string> codes;
  for (const Diagnostic& d : diags) codes.push_back(d.code);
  return codes;
}

}  // namespace

TEST_CASE("a create the API returns other than planned fails loudly, recorded as returned") {
  Fixture f;
  // The API makes network.core, but not with the cidr it was sent.
  f.provider.AlterField("core", "cidr", "10.9.0.0/16");
  ApplyResult r = f.Run(WebStack());
  CHECK_FALSE(r.ok());
  REQUIRE(CodesOf(r.diagnostics) == std::vector<std::string>{"inconsistent_result"});
  CHECK(r.diagnostics[0].summary ==
        "network.core: the API returned cidr = \"10.9.0.0/16\", but the plan promised "
        "\"10.0.0.0/16\"");
  CHECK(r.summary.failed == 1);
  CHECK(r.summary.skipped == 1);  // instance.web, built on it
  CHECK(r.summary.created == 1);  // ssh_key.deploy goes on
  // It exists: recorded as the API returned it, so the next plan corrects it.
  StateSnapshot st = f.State();
  REQUIRE(st.resources.count("network.core"));
  CHECK(st.resources.at("network.core").attributes["cidr"] == "10.9.0.0/16");
  CHECK_FALSE(st.resources.count("instance.web"));
  bool failed_event = false;
  for (const ProgressEvent& e : f.events) {
    if (e.address == "network.core" && e.phase == ProgressEvent::Phase::kFailed) {
      failed_event = true;
      CHECK(e.operation == Action::kCreate);
      CHECK(e.message == r.diagnostics[0].summary);
    }
  }
  CHECK(failed_event);
}

TEST_CASE("a field unknown at plan may come back as anything") {
  Fixture f;
  // instance.web's network is the id of a network this apply makes.
  f.provider.AlterField("web", "network", "network-elsewhere");
  ApplyResult r = f.Run(WebStack());
  SourceFiles sources;
  INFO(RenderDiagnostics(r.diagnostics, sources));
  CHECK(r.ok());
  CHECK(r.summary.created == 3);
}

TEST_CASE("an update the API returns other than planned fails loudly") {
  Fixture f;
  StackConfig cfg = IndependentInstances(1);
  cfg.resources[0].spec["size"] = 1;
  REQUIRE(f.Run(cfg).ok());
  f.provider.AlterField("i0", "size", 5);
  cfg.resources[0].spec["size"] = 2;
  ApplyResult r = f.Run(cfg);
  CHECK_FALSE(r.ok());
  REQUIRE(CodesOf(r.diagnostics) == std::vector<std::string>{"inconsistent_result"});
  CHECK(r.diagnostics[0].summary ==
        "instance.i0: the API returned size = 5, but the plan promised 2");
  CHECK(r.summary.updated == 0);
  CHECK(f.State().resources.at("instance.i0").attributes["size"] == 5);
}

TEST_CASE("create_before_destroy creates first and keeps the old one as deposed until deleted") {
  Fixture f;
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  REQUIRE(f.Run(cfg).ok());
  std::string old_id = f.State().resources.at("network.core").id;
  cfg.resources[0].spec["cidr"] = "10.1.0.0/16";
  cfg.resources[0].lifecycle.create_before_destroy = true;
  REQUIRE(f.Run(cfg).ok());
  auto calls = f.provider.calls();
  CHECK(calls[calls.size() - 2] == "create network core");
  CHECK(calls.back() == "delete network " + old_id);
  auto st = f.State();
  CHECK(st.resources.size() == 1);
  CHECK(st.resources.at("network.core").id != old_id);
}

TEST_CASE("deletes run dependents first and empty the state") {
  Fixture f;
  REQUIRE(f.Run(WebStack()).ok());
  auto r = f.Run(WebStack(), /*destroy=*/true);
  REQUIRE(r.ok());
  CHECK(r.summary.deleted == 3);
  auto calls = f.provider.calls();
  auto pos = [&](const std::string& prefix) {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].rfind(prefix, 0) == 0) return i;
    }
    return calls.size();
  };
  CHECK(pos("delete instance") < pos("delete network"));
  CHECK(f.State().resources.empty());
  CHECK(f.State().outputs.empty());
}

TEST_CASE("a targeted destroy keeps the outputs that do not refer to what it deletes") {
  Fixture f;
  StackConfig cfg = WebStack();
  cfg.outputs.push_back({"key_id", "${ssh_key.deploy.id}", false, {}});
  REQUIRE(f.Run(cfg).ok());
  const std::string key_id = f.State().resources.at("ssh_key.deploy").id;
  auto st = f.store.Load();
  REQUIRE(st.ok());
  PlanOptions po;
  po.destroy = true;
  po.targets = {"instance.web"};
  auto plan = MakePlan(cfg, *st, {}, Kinds(), po);
  REQUIRE(plan.ok());
  auto r = Apply(plan.plan, f.provider, f.store, f.options);
  REQUIRE(r.ok());
  CHECK(r.summary.deleted == 1);
  // web_id referred to the instance destroyed; key_id still resolves.
  CHECK(f.State().outputs == std::map<std::string, Value>{{"key_id", key_id}});
  CHECK(r.outputs == f.State().outputs);
}

TEST_CASE("a failing state commit is reported and the journal keeps the operation") {
  Fixture f;
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  f.store.FailNextCommit(Status::IOError("disk full (injected)"));
  auto r = f.Run(cfg);
  CHECK_FALSE(r.ok());
  CHECK(f.store.PendingJournal()->size() == 1);
  // The API has it; recovery adopts it through the idempotent replay.
  REQUIRE(RecoverJournal(f.provider, f.store, f.options).ok());
  CHECK(f.provider.resources("network").size() == 1);
  CHECK(f.State().resources.size() == 1);
}

TEST_CASE("a stop before start runs nothing and reports the apply as interrupted") {
  Fixture f;
  std::stop_source stop;
  stop.request_stop();
  f.options.stop = stop.get_token();
  auto r = f.Run(WebStack());
  CHECK(r.summary.interrupted);
  CHECK(f.provider.mutations_sent() == 0);
}

TEST_CASE("a saved plan is refused once the state serial has moved") {
  Fixture f;
  Plan plan = f.PlanFor(WebStack());
  CHECK(CheckPlanIsCurrent(plan, f.State()).ok());
  REQUIRE(f.Run(WebStack()).ok());
  Status st = CheckPlanIsCurrent(plan, f.State());
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("stale") != std::string::npos);
}

TEST_CASE("an apply reserves one sequence number per operation, all in one block") {
  Fixture f;
  auto first = f.store.ReserveSequences(1);
  REQUIRE(first.ok());
  REQUIRE(f.Run(WebStack()).ok());  // three creates
  // The block was first + 1 .. first + 3: the next number is past it.
  auto next = f.store.ReserveSequences(1);
  REQUIRE(next.ok());
  CHECK(*next == *first + 4);
  // A replace is two operations (delete, create), so two numbers.
  StackConfig moved = WebStack();
  moved.resources[0].spec["cidr"] = "10.1.0.0/16";  // cidr forces replacement
  Plan plan = f.PlanFor(moved);
  int operations = 0;
  for (const auto& c : plan.changes) {
    operations += c.action == Action::kReplace ? 2 : c.action == Action::kNoOp ? 0 : 1;
  }
  CHECK(operations >= 2);
  REQUIRE(Apply(plan, f.provider, f.store, f.options).ok());
  auto after = f.store.ReserveSequences(1);
  REQUIRE(after.ok());
  CHECK(*after == *next + 1 + operations);
}

TEST_CASE("idempotency keys are derived from persisted data and bounded") {
  std::string a = IdempotencyKey("lin", 3, Action::kCreate, "instance.web[0]");
  // The text of keys sent before: an interrupted run's key is re-sent as it was.
  CHECK(a.rfind("cairn-lin-3-create-", 0) == 0);
  CHECK(a.size() == std::string("cairn-lin-3-create-").size() + 16);
  CHECK(a == IdempotencyKey("lin", 3, Action::kCreate, "instance.web[0]"));
  CHECK(a != IdempotencyKey("lin", 4, Action::kCreate, "instance.web[0]"));
  CHECK(a != IdempotencyKey("lin", 3, Action::kCreate, "instance.web[1]"));
  CHECK(a != IdempotencyKey("lin", 3, Action::kUpdate, "instance.web[0]"));
  CHECK(IdempotencyKey(std::string(36, 'x'), 1LL << 60, Action::kCreate, std::string(5000, 'a'))
            .size() <= 255);
}

TEST_CASE("a parallel apply journals operations ahead, in batches, each before it is sent") {
  Fixture f;
  f.options.parallelism = 8;
  JournalRecordingStore store(f.store);
  std::atomic<int> sent{0}, sent_unjournaled{0};
  f.provider.on_send = [&](const std::string& key) {
    ++sent;
    if (!Journaled(f.store, key)) ++sent_unjournaled;
  };
  auto r = Apply(f.PlanFor(IndependentInstances(40)), f.provider, store, f.options);
  REQUIRE(r.ok());
  CHECK(r.summary.created == 40);
  CHECK(sent == 40);
  CHECK(sent_unjournaled == 0);
  CHECK(f.store.PendingJournal()->empty());
  CHECK(f.State().resources.size() == 40);
  // Every operation journaled exactly once, in fewer writes than operations:
  // batches of up to one and a half times the parallelism.
  auto batches = store.batches();
  CHECK(std::accumulate(batches.begin(), batches.end(), size_t{0}) == 40);
  CHECK(batches.size() <= 10);
  CHECK(*std::max_element(batches.begin(), batches.end()) <= 12);
  CHECK(batches.front() == 12);
}

TEST_CASE("with parallelism 1, each operation is journaled alone, just before it is sent") {
  Fixture f;
  f.options.parallelism = 1;
  JournalRecordingStore store(f.store);
  std::atomic<int> pending_at_send_max{0};
  f.provider.on_send = [&](const std::string&) {
    int n = static_cast<int>(f.store.PendingJournal()->size());
    if (n > pending_at_send_max) pending_at_send_max = n;
  };
  REQUIRE(Apply(f.PlanFor(WebStack()), f.provider, store, f.options).ok());
  CHECK(store.batches() == std::vector<size_t>{1, 1, 1});
  // The operation being sent, and at most the one before it, whose result
  // may still be on its way to the state (the recorder).
  CHECK(pending_at_send_max >= 1);
  CHECK(pending_at_send_max <= 2);
}

TEST_CASE("a stop with operations journaled ahead clears their entries and sends nothing more") {
  Fixture f;
  f.options.parallelism = 4;
  std::stop_source stop;
  f.options.stop = stop.get_token();
  f.provider.on_send = [&](const std::string&) { stop.request_stop(); };
  auto r = Apply(f.PlanFor(IndependentInstances(20)), f.provider, f.store, f.options);
  CHECK(r.summary.interrupted);
  int sent = f.provider.mutations_sent();
  CHECK(sent >= 1);
  CHECK(sent <= 4);  // only those already running when the stop came
  CHECK(r.summary.created == sent);
  CHECK(r.summary.skipped == 20 - sent);  // never started: skipped, not lost from the count
  CHECK(f.State().resources.size() == static_cast<size_t>(sent));
  // Journaled ahead but never sent: cleared, so the next run has nothing to
  // recover and the plan shows them as creates again.
  CHECK(f.store.PendingJournal()->empty());
  CHECK(RecoverJournal(f.provider, f.store, f.options).recovered == 0);
  CHECK(f.provider.mutations_sent() == sent);
}

TEST_CASE("a journal write that fails fails its operations, sends nothing and skips dependents") {
  Fixture f;
  JournalRecordingStore store(f.store);
  store.FailJournal();
  auto r = Apply(f.PlanFor(WebStack()), f.provider, store, f.options);
  CHECK_FALSE(r.ok());
  CHECK(f.provider.mutations_sent() == 0);
  CHECK(r.summary.failed == 2);   // network.core and ssh_key.deploy, journaled together
  CHECK(r.summary.skipped == 1);  // instance.web needs the network
  CHECK(store.batches() == std::vector<size_t>{2});
  bool named = std::any_of(r.diagnostics.begin(), r.diagnostics.end(), [](const Diagnostic& d) {
    return d.summary.find("could not write the state journal") != std::string::npos &&
           d.summary.find("disk full") != std::string::npos;
  });
  CHECK(named);
  CHECK(f.store.PendingJournal()->empty());
}

TEST_CASE("a worker goes on to the next operation while the result of the last is recorded") {
  Fixture f;
  f.options.parallelism = 1;
  JournalRecordingStore store(f.store);
  store.HoldResults();
  // The second create is sent while the first one's result waits for the
  // state: the one worker did not wait for it.
  std::atomic<int> sends{0};
  std::atomic<bool> sent_while_held{false};
  f.provider.on_send = [&](const std::string&) {
    if (++sends == 2) {
      sent_while_held = store.ResultHeld();
      store.ReleaseResults();
    }
  };
  auto r = Apply(f.PlanFor(IndependentInstances(2)), f.provider, store, f.options);
  REQUIRE(r.ok());
  CHECK(sent_while_held);
  CHECK(r.summary.created == 2);
  CHECK(f.State().resources.size() == 2);
  CHECK(f.store.PendingJournal()->empty());
}

TEST_CASE("a dependent starts only once what it depends on is recorded") {
  Fixture f;
  f.options.parallelism = 4;
  JournalRecordingStore store(f.store);
  // Sends 1 and 2 are network.core and ssh_key.deploy; send 3 is
  // instance.web, which refers to the network: by then the network is in
  // the state, though its result was held back for a while.
  std::mutex mu;
  std::vector<bool> network_recorded_at_send;
  f.provider.on_send = [&](const std::string&) {
    auto state = f.store.Load();
    std::lock_guard lock(mu);
    network_recorded_at_send.push_back(state.ok() && state->resources.count("network.core") > 0);
  };
  store.HoldResults();
  std::jthread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    store.ReleaseResults();
  });
  auto r = Apply(f.PlanFor(WebStack()), f.provider, store, f.options);
  REQUIRE(r.ok());
  CHECK(r.summary.created == 3);
  REQUIRE(network_recorded_at_send.size() == 3);
  CHECK(network_recorded_at_send[2]);
}

TEST_CASE("a result that cannot be recorded fails its operation and skips its dependents") {
  Fixture f;
  JournalRecordingStore store(f.store);
  store.FailResults();
  auto r = Apply(f.PlanFor(WebStack()), f.provider, store, f.options);
  CHECK_FALSE(r.ok());
  CHECK(f.provider.mutations_sent() == 2);  // network.core and ssh_key.deploy
  CHECK(r.summary.failed == 2);
  CHECK(r.summary.skipped == 1);  // instance.web
  CHECK(r.summary.created == 0);
  bool named = std::any_of(r.diagnostics.begin(), r.diagnostics.end(), [](const Diagnostic& d) {
    return d.summary.find("could not record the result") != std::string::npos;
  });
  CHECK(named);
  // Their journal entries stay: the next run re-sends them with their keys.
  CHECK(f.store.PendingJournal()->size() == 2);
}

namespace {

// `n` independent instances.
StackConfig ManyInstances(int n) {
  StackConfig cfg;
  for (int i = 0; i < n; ++i) {
    cfg.resources.push_back(Res("instance.web[" + std::to_string(i) + "]",
                                {{"name", "web-" + std::to_string(i)}, {"region", "eu"}}));
  }
  return cfg;
}

// Polls `done` in real time for up to 20 s: the apply runs on its own
// threads (no timing is asserted; the bound only ends a hung test).
template <typename Done>
bool Eventually(Done done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace

TEST_CASE("a resource provisioning holds no slot: 50 creates are all sent before one is ready") {
  Fixture f;
  f.options.parallelism = 10;
  f.provider.HoldReadiness(true);
  Plan plan = f.PlanFor(ManyInstances(50));
  ApplyResult r;
  std::thread apply([&] { r = Apply(plan, f.provider, f.store, f.options); });
  // With a slot held per wait, only 10 would ever be sent.
  CHECK(Eventually([&] { return f.provider.waiting() == 50; }));
  CHECK(f.provider.mutations_sent() == 50);
  CHECK(f.provider.max_in_flight() <= 10);
  f.provider.Release();
  apply.join();
  REQUIRE(r.ok());
  CHECK(r.summary.created == 50);
  CHECK(f.State().resources.size() == 50);
  CHECK(f.store.PendingJournal()->empty());
}

TEST_CASE("with parallelism 1 one mutation is sent at a time, and waits pile up") {
  Fixture f;
  f.options.parallelism = 1;
  f.provider.HoldReadiness(true);
  // A send that takes a moment: two in flight at once would show.
  f.provider.on_send = [](const std::string&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  Plan plan = f.PlanFor(ManyInstances(20));
  ApplyResult r;
  std::thread apply([&] { r = Apply(plan, f.provider, f.store, f.options); });
  CHECK(Eventually([&] { return f.provider.waiting() == 20; }));
  f.provider.Release();
  apply.join();
  REQUIRE(r.ok());
  CHECK(f.provider.max_in_flight() == 1);
}

TEST_CASE("max_pending caps the operations waiting at once") {
  Fixture f;
  f.options.parallelism = 10;
  f.options.max_pending = 5;
  f.provider.HoldReadiness(true);
  Plan plan = f.PlanFor(ManyInstances(20));
  ApplyResult r;
  std::thread apply([&] { r = Apply(plan, f.provider, f.store, f.options); });
  REQUIRE(Eventually([&] { return f.provider.waiting() == 5; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(f.provider.mutations_sent() == 5);  // no sixth while five wait
  // Released five at a time, the rest follow, never more than five waiting.
  for (int round = 1; round < 4; ++round) {
    f.provider.Release();
    REQUIRE(Eventually([&] { return f.provider.mutations_sent() == 5 * (round + 1); }));
    REQUIRE(Eventually([&] { return f.provider.waiting() == 5; }));
  }
  f.provider.Release();
  apply.join();
  REQUIRE(r.ok());
  CHECK(r.summary.created == 20);
  CHECK(f.provider.max_waiting() == 5);
}

// The default bound (100,000) lets a large stack provision in one round:
// with the old default of 1,000, what came after the 1,000th waited for
// others to be ready before it was sent (issue 33). 1,100 show it, and keep
// the test light under the sanitizers.
TEST_CASE("by default 1100 creates all wait at once") {
  Fixture f;
  f.options.max_pending = ApplyOptions{}.max_pending;
  f.options.parallelism = 10;
  f.options.progress = nullptr;
  f.provider.HoldReadiness(true);
  Plan plan = f.PlanFor(ManyInstances(1'100));
  ApplyResult r;
  std::thread apply([&] { r = Apply(plan, f.provider, f.store, f.options); });
  const bool all_waiting = Eventually([&] { return f.provider.waiting() == 1'100; });
  f.provider.Release();
  apply.join();
  REQUIRE(all_waiting);
  REQUIRE(r.ok());
  CHECK(r.summary.created == 1'100);
  CHECK(f.provider.max_waiting() == 1'100);
}

TEST_CASE("a dependent is sent as soon as its dependency is ready, not before") {
  Fixture f;
  f.provider.HoldReadiness(true);
  Plan plan = f.PlanFor(WebStack());
  ApplyResult r;
  std::thread apply([&] { r = Apply(plan, f.provider, f.store, f.options); });
  // The network and the key are sent; the instance needs the network.
  REQUIRE(Eventually([&] { return f.provider.waiting() == 2; }));
  auto calls = f.provider.calls();
  CHECK(std::find(calls.begin(), calls.end(), "create instance web") == calls.end());
  std::string network_id = f.provider.resources("network").begin()->first;
  f.provider.Release({network_id});
  // Ready: its dependent goes at once, while the key still provisions.
  REQUIRE(Eventually([&] { return f.provider.waiting() == 2; }));
  calls = f.provider.calls();
  CHECK(std::find(calls.begin(), calls.end(), "create instance web") != calls.end());
  f.provider.HoldReadiness(false);
  f.provider.Release();
  apply.join();
  REQUIRE(r.ok());
  CHECK(r.summary.created == 3);
}

TEST_CASE("apply takes its time from the injected clock: durations and journal times") {
  Fixture f;
  ManualClock clock;
  f.options.clock = &clock;
  const int64_t start = clock.UnixSeconds();
  int64_t journaled_at = 0;
  f.provider.on_send = [&](const std::string&) {
    auto pending = f.store.PendingJournal();
    if (pending.ok() && !pending->empty()) journaled_at = pending->front().started_at;
    clock.Advance(std::chrono::seconds(42));  // the API takes 42 s to answer
  };
  auto r = f.Run(IndependentInstances(1));
  REQUIRE(r.ok());
  CHECK(journaled_at == start);
  bool done = false;
  for (const auto& e : f.events) {
    if (e.phase != ProgressEvent::Phase::kDone) continue;
    done = true;
    CHECK(e.elapsed == std::chrono::seconds(42));  // at once, on the injected clock
  }
  CHECK(done);
}

TEST_CASE("recovery holds no slot while its operations provision, as apply does") {
  Fixture f;
  f.provider.DropRequests(6);  // six creates journaled, none reached the API
  CHECK_FALSE(f.Run(IndependentInstances(6)).ok());
  REQUIRE(f.store.PendingJournal()->size() == 6);
  f.options.parallelism = 1;
  f.events.clear();
  f.provider.HoldReadiness(true);
  // The failed apply above sent in parallel: only recovery's sends count.
  f.provider.ResetMaxInFlight();
  RecoveryResult rec;
  std::thread recover([&] { rec = RecoverJournal(f.provider, f.store, f.options); });
  // One wait at a time would never have more than one pending.
  CHECK(Eventually([&] { return f.provider.waiting() == 6; }));
  CHECK(f.provider.max_in_flight() == 1);
  f.provider.Release();
  recover.join();
  REQUIRE(rec.ok());
  CHECK(rec.recovered == 6);
  CHECK(f.State().resources.size() == 6);
  CHECK(f.store.PendingJournal()->empty());
  // One kRecovered event each, naming how; no start lines.
  REQUIRE(f.events.size() == 6);
  for (const auto& e : f.events) {
    CHECK(e.phase == ProgressEvent::Phase::kRecovered);
    CHECK(e.message == "re-sent with its original idempotency key");
    CHECK_FALSE(e.id.empty());
  }
}

TEST_CASE("an interrupted create_before_destroy create is recovered with the old object deposed") {
  Fixture f;
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  REQUIRE(f.Run(cfg).ok());
  std::string old_id = f.State().resources.at("network.core").id;
  cfg.resources[0].spec["cidr"] = "10.1.0.0/16";
  cfg.resources[0].lifecycle.create_before_destroy = true;
  f.provider.LoseResponses(1);  // the new network is made, its answer lost
  CHECK_FALSE(f.Run(cfg).ok());
  REQUIRE(f.provider.resources("network").size() == 2);

  auto rec = RecoverJournal(f.provider, f.store, f.options);
  REQUIRE(rec.ok());
  CHECK(rec.recovered == 1);
  auto st = f.State();
  REQUIRE(st.resources.count("network.core") == 1);
  CHECK(st.resources.at("network.core").id != old_id);
  CHECK(st.resources.at("network.core").attributes["cidr"] == "10.1.0.0/16");
  // Still tracked, so the next apply deletes it rather than leaking it.
  const std::string deposed = StateKey{*ResourceAddress::Parse("network.core"), true}.ToString();
  CHECK(deposed == "network.core (deposed)");
  REQUIRE(st.resources.count(deposed) == 1);
  CHECK(st.resources.at(deposed).id == old_id);

  REQUIRE(f.Run(cfg).ok());
  auto networks = f.provider.resources("network");
  CHECK(networks.size() == 1);
  CHECK(networks.count(old_id) == 0);
  CHECK(f.State().resources.size() == 1);
}

TEST_CASE("a definite refusal at recovery clears its journal entry") {
  Fixture f;
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  f.provider.DropRequests(1);
  CHECK_FALSE(f.Run(cfg).ok());
  REQUIRE(f.store.PendingJournal()->size() == 1);
  f.provider.RefuseName("core");
  auto rec = RecoverJournal(f.provider, f.store, f.options);
  CHECK_FALSE(rec.ok());
  CHECK(rec.recovered == 0);
  REQUIRE_FALSE(rec.diagnostics.empty());
  CHECK(rec.diagnostics[0].summary.find("network.core: recovering the interrupted create failed") ==
        0);
  // Nothing happened, and nothing will: the next plan starts afresh.
  CHECK(f.store.PendingJournal()->empty());
  CHECK(f.provider.resources("network").empty());
}

TEST_CASE("a stop during recovery finishes what was sent and leaves the rest for the next run") {
  Fixture f;
  f.provider.DropRequests(5);
  CHECK_FALSE(f.Run(IndependentInstances(5)).ok());
  REQUIRE(f.store.PendingJournal()->size() == 5);
  f.options.parallelism = 1;
  std::stop_source stop;
  f.options.stop = stop.get_token();
  f.provider.on_send = [&](const std::string&) { stop.request_stop(); };
  auto rec = RecoverJournal(f.provider, f.store, f.options);
  CHECK(rec.interrupted);
  CHECK_FALSE(rec.ok());
  CHECK(rec.recovered == 1);
  CHECK(f.store.PendingJournal()->size() == 4);
  CHECK(f.State().resources.size() == 1);

  f.provider.on_send = nullptr;
  f.options.stop = std::stop_token();
  auto rest = RecoverJournal(f.provider, f.store, f.options);
  REQUIRE(rest.ok());
  CHECK(rest.recovered == 4);
  CHECK(rest.summary.created == 4);
  CHECK(f.State().resources.size() == 5);
}

TEST_CASE("a summary counts the recovered operations, the moves and what never started") {
  ApplySummary apply;
  apply.deleted = 2;
  apply.moved = 1;
  ApplySummary recovery;
  recovery.deleted = 47;
  recovery.created = 2;
  recovery.skipped = 1;
  apply.AddRecovered(recovery);
  CHECK(apply.deleted == 49);
  CHECK(apply.created == 2);
  CHECK(apply.skipped == 1);
  CHECK(apply.recovered == 49);
  CHECK(apply.moved == 1);
}

TEST_CASE("a failed create is one error, the provider's reason folded into it") {
  Fixture f;
  f.provider.FailProvisioning("core");
  auto r = f.Run(WebStack());
  CHECK_FALSE(r.ok());
  std::vector<Diagnostic> errors;
  for (const auto& d : r.diagnostics) {
    if (d.is_error()) errors.push_back(d);
  }
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == "create_failed");
  CHECK(errors[0].summary.find("network.core: create failed:") == 0);
  CHECK(errors[0].detail.find("provisioning_failed") != std::string::npos);
  CHECK(errors[0].detail.find("delete it and create it again") != std::string::npos);
}

TEST_CASE("an unreachable API is one error, and nothing more is started") {
  Fixture f;
  f.options.parallelism = 3;
  f.provider.SetUnreachable(true);
  auto r = f.Run(IndependentInstances(20));
  CHECK_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "unreachable");
  CHECK(r.summary.failed >= 1);
  CHECK(r.summary.failed <= 3);  // those sent before the first failure came back
  CHECK(r.summary.failed + r.summary.skipped == 20);
  CHECK_FALSE(r.summary.interrupted);
  // Nothing was sent: nothing is left to recover.
  CHECK(f.store.PendingJournal()->empty());
  CHECK(f.provider.mutations_sent() == 0);
}

TEST_CASE("an apply counts the addresses it moved") {
  Fixture f;
  REQUIRE(f.Run(WebStack()).ok());
  Plan plan = f.PlanFor(WebStack());
  plan.moves = {{"ssh_key.deploy", "ssh_key.admin"}};
  auto r = Apply(plan, f.provider, f.store, f.options);
  REQUIRE(r.ok());
  CHECK(r.summary.moved == 1);
  CHECK(f.State().resources.count("ssh_key.admin") == 1);
}

namespace {

// One network and `n` instances on it, as in the report of the hang: once
// the network is ready, all the instances are ready to be sent at once.
StackConfig NetworkAndInstances(int n, const std::string& size = "small") {
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  for (int i = 0; i < n; ++i) {
    cfg.resources.push_back(Res("instance.web[" + std::to_string(i) + "]",
                                {{"name", "web-" + std::to_string(i)},
                                 {"region", "eu"},
                                 {"network", "${network.core.id}"},
                                 {"size", size}},
                                {"network.core"}));
  }
  return cfg;
}

// Runs `run` on a thread of its own with readiness held, and ends the waits
// a round at a time: each round, once as many wait as may (`bound`, or what
// is left of the current layer: `layers` are the operations that can wait
// together, each layer after the one before it), all of them at once. A run
// that stalls (a round that never fills, or no end after the last) is
// stopped and its waits released, so that the test fails instead of hanging;
// the answer then says where it stalled ("" when it did not). No timing is
// asserted: Eventually's 20 s only end a hung run.
template <typename Run>
std::string DriveHeld(FakeProvider& provider, std::stop_source& stop,
                      const std::vector<int>& layers, int bound, Run run) {
  provider.HoldReadiness(true);
  std::atomic<bool> over{false};
  std::thread thread([&] {
    run();
    over = true;
  });
  std::string stall;
  for (size_t layer = 0; layer < layers.size() && stall.empty(); ++layer) {
    int left = layers[layer];
    while (left > 0) {
      const int expect = std::min(bound, left);
      if (!Eventually([&] { return provider.waiting() >= expect; })) {
        stall = "layer " + std::to_string(layer) + " stalled with " +
                std::to_string(provider.waiting()) + " waiting of " + std::to_string(expect) +
                " expected, " + std::to_string(left) + " left to wait";
        break;
      }
      std::vector<std::string> ids = provider.waiting_ids();
      provider.Release(ids);
      left -= static_cast<int>(ids.size());
    }
  }
  if (stall.empty() && !Eventually([&] { return over.load(); })) {
    stall = "the run did not end after its last wait";
  }
  if (!stall.empty()) stop.request_stop();
  provider.HoldReadiness(false);
  provider.Release();
  thread.join();
  return stall;
}

}  // namespace

// max_pending at, below and past the number of operations that can wait at
// once. Past it by more than the journal-ahead target (20x), the run used to
// hang: a worker that could neither send nor journal marked a journal write
// in progress that it never made.
TEST_CASE("apply sends every create below, at and past max_pending: 1 network and n instances") {
  // n instances waiting at once against the bound: bound - 1, bound,
  // bound + 1, 20 * bound.
  const auto [bound, n] = GENERATE(
      table<int, int>({{1, 0}, {1, 1}, {1, 2}, {1, 20}, {5, 4}, {5, 5}, {5, 6}, {5, 100}}));
  const int parallelism = GENERATE(1, 4);
  CAPTURE(bound, parallelism, n);
  Fixture f;
  ManualClock clock;
  std::stop_source stop;
  f.options.clock = &clock;
  f.options.stop = stop.get_token();
  f.options.parallelism = parallelism;
  f.options.max_pending = bound;
  Plan plan = f.PlanFor(NetworkAndInstances(n));
  ApplyResult r;
  std::string stall = DriveHeld(f.provider, stop, {1, n}, bound,
                                [&] { r = Apply(plan, f.provider, f.store, f.options); });
  INFO((r.diagnostics.empty() ? "" : r.diagnostics[0].summary));
  REQUIRE(stall == "");
  REQUIRE(r.ok());
  CHECK(r.summary.created == n + 1);
  CHECK(f.provider.max_waiting() == std::min(bound, std::max(n, 1)));
  CHECK(f.State().resources.size() == static_cast<size_t>(n + 1));
  CHECK(f.store.PendingJournal()->empty());
}

TEST_CASE("updates past max_pending are all sent") {
  const auto [bound, n] = GENERATE(table<int, int>({{1, 1}, {1, 20}, {5, 5}, {5, 100}}));
  CAPTURE(bound, n);
  Fixture f;
  ManualClock clock;
  f.options.clock = &clock;
  REQUIRE(f.Run(NetworkAndInstances(n)).ok());
  std::stop_source stop;
  f.options.stop = stop.get_token();
  f.options.max_pending = bound;
  // Every instance updated in place, all ready at once.
  Plan update = f.PlanFor(NetworkAndInstances(n, "large"));
  ApplyResult r;
  std::string stall = DriveHeld(f.provider, stop, {n}, bound,
                                [&] { r = Apply(update, f.provider, f.store, f.options); });
  REQUIRE(stall == "");
  REQUIRE(r.ok());
  CHECK(r.summary.updated == n);
  CHECK(f.provider.max_waiting() == bound);
  for (const auto& [id, attrs] : f.provider.resources("instance"))
    CHECK(attrs.at("size") == "large");
  CHECK(f.store.PendingJournal()->empty());
}

TEST_CASE("a destroy past max_pending deletes everything") {
  const auto [bound, n] = GENERATE(table<int, int>({{1, 1}, {1, 20}, {5, 5}, {5, 100}}));
  CAPTURE(bound, n);
  Fixture f;
  ManualClock clock;
  f.options.clock = &clock;
  REQUIRE(f.Run(NetworkAndInstances(n)).ok());
  std::stop_source stop;
  f.options.stop = stop.get_token();
  f.options.max_pending = bound;
  // The instances first, all ready at once, then the network.
  Plan destroy = f.PlanFor(NetworkAndInstances(n), /*destroy=*/true);
  ApplyResult r;
  std::string stall = DriveHeld(f.provider, stop, {n, 1}, bound,
                                [&] { r = Apply(destroy, f.provider, f.store, f.options); });
  REQUIRE(stall == "");
  REQUIRE(r.ok());
  CHECK(r.summary.deleted == n + 1);
  CHECK(f.provider.max_waiting() == bound);
  CHECK(f.provider.resources("instance").empty());
  CHECK(f.provider.resources("network").empty());
  CHECK(f.State().resources.empty());
  CHECK(f.store.PendingJournal()->empty());
}

TEST_CASE("recovery completes more journal entries than max_pending") {
  const int bound = 5;
  Fixture f;
  ManualClock clock;
  f.options.clock = &clock;
  f.provider.DropRequests(20 * bound);  // every create journaled, none reached the API
  CHECK_FALSE(f.Run(IndependentInstances(20 * bound)).ok());
  REQUIRE(f.store.PendingJournal()->size() == 20 * bound);
  std::stop_source stop;
  f.options.stop = stop.get_token();
  f.options.max_pending = bound;
  RecoveryResult rec;
  std::string stall = DriveHeld(f.provider, stop, {20 * bound}, bound,
                                [&] { rec = RecoverJournal(f.provider, f.store, f.options); });
  REQUIRE(stall == "");
  REQUIRE(rec.ok());
  CHECK(rec.recovered == 20 * bound);
  CHECK(f.provider.max_waiting() == bound);
  CHECK(f.State().resources.size() == 20 * bound);
  CHECK(f.store.PendingJournal()->empty());
}

TEST_CASE("a value that fails once its dependency exists fails its resource, saying why") {
  Fixture f;
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  // Known only once the network exists: its id is not a number.
  cfg.resources.push_back(
      Res("instance.web",
          {{"name", "web"}, {"region", "eu"}, {"network", "${tonumber(network.core.id)}"}},
          {"network.core"}));
  auto r = f.Run(cfg);
  CHECK_FALSE(r.ok());
  CHECK(r.summary.created == 1);
  CHECK(r.summary.failed == 1);
  CHECK(f.State().resources.count("instance.web") == 0);
  std::string why;
  for (const auto& d : r.diagnostics) why += d.summary + "\n";
  INFO(why);
  CHECK(why.find("network: ") != std::string::npos);
  CHECK(why.find("tonumber") != std::string::npos);
  CHECK(why.find("still unknown") == std::string::npos);
}

TEST_CASE("a mandatory policy undecided at plan is checked at apply, before the request") {
  Fixture f;
  PolicySet set = LoadPoliciesFromText(
      {{"p.yaml",
        "kind: policy\nname: no-default-network\nresource_kind: instance\n"
        "condition: ${!startswith(change.after.network, \"network-\")}\n"
        "error_message: instances must not join a network-N\n---\n"
        "kind: policy\nname: named\nresource_kind: instance\nenforcement: advisory\n"
        "condition: ${change.after.name == \"api\"}\nerror_message: call it api\n"}});
  REQUIRE(set.ok());
  f.options.policies = set.policies;
  StackConfig cfg;
  cfg.resources.push_back(
      Res("network.core", {{"name", "core"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}}));
  cfg.resources.push_back(
      Res("instance.web", {{"name", "web"}, {"region", "eu"}, {"network", "${network.core.id}"}},
          {"network.core"}));
  Plan plan = f.PlanFor(cfg);
  // At plan, the network's id is not known: the policy is not decided.
  auto at_plan = EvaluatePolicies(set.policies, plan, nullptr);
  REQUIRE(at_plan.size() == 2);
  CHECK(at_plan[0].status == PolicyResult::Status::kUnknown);

  auto r = Apply(plan, f.provider, f.store, f.options);
  CHECK_FALSE(r.ok());
  CHECK(r.summary.created == 1);    // the network
  CHECK(r.summary.held_back == 1);  // the instance: refused before its request
  CHECK(f.State().resources.count("instance.web") == 0);
  std::vector<std::string> calls = f.provider.calls();
  CHECK(std::none_of(calls.begin(), calls.end(),
                     [](const std::string& c) { return c.find("instance") != std::string::npos; }));
  std::string text;
  for (const auto& d : r.diagnostics) text += d.code + ": " + d.summary + "\n";
  INFO(text);
  CHECK(text.find("policy_failed: instance.web: mandatory policy no-default-network failed: "
                  "instances must not join a network-N") != std::string::npos);

  // Without the mandatory one, the advisory one only warns, and it is made.
  Fixture g;
  g.options.policies = {set.policies[1]};
  auto ok = g.Run(cfg);
  CHECK(ok.ok());
  CHECK(ok.summary.created == 2);
  bool warned = false;
  for (const auto& d : ok.diagnostics) {
    warned = warned || (d.severity == Severity::kWarning && d.code == "policy_failed");
  }
  CHECK(warned);
}

}  // namespace apply_test
