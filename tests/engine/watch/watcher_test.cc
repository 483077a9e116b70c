// The watcher's schedule and bookkeeping with fake stacks: every stack runs
// again and again, never twice at once; a stack another watcher holds is in
// standby until it can be claimed; Stop waits for the runs in flight; the
// status document and the events follow the runs.
#include "engine/watch/watcher.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

namespace watcher_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace std::chrono_literals;

namespace {

struct FakeStackState {
  std::atomic<int> runs{0};
  std::atomic<int> in_flight{0};
  std::atomic<int> overlaps{0};  // runs started while one was in flight
  std::atomic<bool> claimable{true};
  std::atomic<bool> drifted{false};
  std::atomic<bool> fail{false};
  std::atomic<int> run_ms{5};
};

class FakeTarget final : public WatchTarget {
 public:
  explicit FakeTarget(FakeStackState& s) : s_(s) {}
  Result<bool> Claim(std::string* holder) override {
    if (s_.claimable) return true;
    *holder = "other@host pid 7";
    return false;
  }
  StackRunRecord Run(std::stop_token) override {
    if (s_.in_flight.fetch_add(1) > 0) ++s_.overlaps;
    StackRunRecord r;
    r.started_ms = WatchNowMs();
    std::this_thread::sleep_for(std::chrono::milliseconds(s_.run_ms.load()));
    r.requests = 1;
    r.resources = {{"network.core", "network", "net-1"}};
    if (s_.fail) r.error = "cannot reach the API";
    if (s_.drifted) {
      DriftItem item;
      item.address = "network.core";
      item.kind = "network";
      item.id = "net-1";
      item.changes = {{"name", "core", "renamed", false}};
      r.drift.items.push_back(item);
    }
    r.finished_ms = WatchNowMs();
    ++s_.runs;
    s_.in_flight.fetch_sub(1);
    return r;
  }

 private:
  FakeStackState& s_;
};

WatchedStack Stack(const std::string& name, FakeStackState& s,
                   std::chrono::milliseconds interval = 20ms) {
  WatchedStack w;
  w.info = {name, "/srv/" + name, "default"};
  w.interval = interval;
  w.target = std::make_unique<FakeTarget>(s);
  return w;
}

// Waits (up to 20 s: a loaded machine is slow, never wrong) for `done`.
template <class F>
bool Eventually(F done) {
  for (int i = 0; i < 2000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

const Value* StackStatus(const Value& doc, const std::string& name) {
  for (const Value& s : doc["stacks"]) {
    if (s["name"] == name) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("every stack runs on its schedule and never twice at once") {
  FakeStackState a, b, c;
  a.run_ms = 30;  // longer than its interval: the next run waits for it
  std::vector<WatchedStack> stacks;
  stacks.push_back(Stack("a", a));
  stacks.push_back(Stack("b", b));
  stacks.push_back(Stack("c", c, 1h));
  WatcherOptions o;
  o.threads = 3;
  o.first_run_spread = 10ms;
  Watcher w(std::move(stacks), o);
  w.Start();
  CHECK(Eventually([&] { return a.runs >= 4 && b.runs >= 4; }));
  w.Stop();
  CHECK(a.overlaps == 0);
  CHECK(b.overlaps == 0);
  // An hour's interval: its first run (within the spread) and no other.
  CHECK(c.runs == 1);
  CHECK(w.runs_completed() == a.runs + b.runs + c.runs);
  // Stopped: nothing runs any more.
  const int after = a.runs + b.runs;
  std::this_thread::sleep_for(100ms);
  CHECK(a.runs + b.runs == after);
}

TEST_CASE("Stop waits for the runs in flight") {
  FakeStackState slow;
  slow.run_ms = 300;
  std::vector<WatchedStack> stacks;
  stacks.push_back(Stack("slow", slow));
  WatcherOptions o;
  o.first_run_spread = 1ms;
  Watcher w(std::move(stacks), o);
  w.Start();
  REQUIRE(Eventually([&] { return slow.in_flight > 0; }));
  w.Stop();
  // The run in flight finished before Stop returned, and none started after.
  CHECK(slow.in_flight == 0);
  const int runs = slow.runs;
  CHECK(runs >= 1);
  std::this_thread::sleep_for(400ms);
  CHECK(slow.runs == runs);
}

TEST_CASE("a stack another watcher holds is in standby until it can be claimed") {
  FakeStackState s;
  s.claimable = false;
  std::vector<WatchedStack> stacks;
  stacks.push_back(Stack("web", s));
  std::atomic<int> became_active{0}, became_standby{0};
  WatcherOptions o;
  o.first_run_spread = 1ms;
  o.holder = "me@host pid 1";
  o.on_role = [&](const WatchedStackInfo&, bool active) {
    ++(active ? became_active : became_standby);
  };
  Watcher w(std::move(stacks), o);
  w.Start();
  REQUIRE(Eventually([&] { return became_standby == 1; }));
  Value doc = w.StatusJson();
  const Value* web = StackStatus(doc, "web");
  REQUIRE(web != nullptr);
  CHECK((*web)["role"] == "standby");
  CHECK((*web)["status"] == "standby");
  CHECK((*web)["lease_holder"] == "other@host pid 7");
  CHECK(s.runs == 0);
  CHECK(doc["watcher"]["holder"] == "me@host pid 1");
  // The other watcher is gone: taken over within an interval or so.
  s.claimable = true;
  REQUIRE(Eventually([&] { return s.runs > 0; }));
  CHECK(Eventually([&] { return became_active == 1; }));
  w.Stop();
  doc = w.StatusJson();
  CHECK((*StackStatus(doc, "web"))["role"] == "active");
  CHECK((*StackStatus(doc, "web"))["status"] == "ok");
  CHECK(became_standby == 1);
}

TEST_CASE("the watcher's events and status follow the runs") {
  FakeStackState s;
  std::vector<WatchedStack> stacks;
  stacks.push_back(Stack("web", s));
  Mutex mu;
  std::vector<std::string> events;
  std::atomic<int> runs_seen{0};
  WatcherOptions o;
  o.first_run_spread = 1ms;
  o.on_event = [&](const Value& e) {
    MutexLock lock(mu);
    events.push_back(e["event"].get<std::string>());
  };
  o.on_run = [&](const WatchedStackInfo& info, const StackRunRecord&) {
    CHECK(info.name == "web");
    ++runs_seen;
  };
  auto seen = [&](const std::string& type) {
    MutexLock lock(mu);
    return std::count(events.begin(), events.end(), type);
  };
  Watcher w(std::move(stacks), o);
  w.Start();
  REQUIRE(Eventually([&] { return s.runs >= 1; }));
  s.drifted = true;
  REQUIRE(Eventually([&] { return seen("drift_detected") == 1; }));
  REQUIRE(Eventually([&] { return (*StackStatus(w.StatusJson(), "web"))["status"] == "drifted"; }));
  s.fail = true;
  REQUIRE(Eventually([&] { return seen("run_failed") == 1; }));
  {
    Value doc = w.StatusJson();
    const Value& web = *StackStatus(doc, "web");
    CHECK(web["status"] == "error");
    CHECK(web["last_run"]["error"] == "cannot reach the API");
    CHECK(web["drift"]["changed"] == 1);  // as last known
  }
  s.fail = false;
  s.drifted = false;
  REQUIRE(Eventually([&] { return seen("drift_resolved") == 1; }));
  w.Stop();
  CHECK(seen("run_recovered") == 1);
  CHECK(seen("drift_detected") == 1);
  CHECK(runs_seen == s.runs);
}

TEST_CASE("Replace keeps the runs of a stack of the same name") {
  FakeStackState s, t;
  s.drifted = true;
  std::vector<WatchedStack> stacks;
  stacks.push_back(Stack("web", s));
  std::atomic<int> detected{0};
  WatcherOptions o;
  o.first_run_spread = 1ms;
  o.on_event = [&](const Value& e) { detected += e["event"] == "drift_detected"; };
  Watcher w(std::move(stacks), o);
  w.Start();
  REQUIRE(Eventually([&] { return detected == 1; }));
  std::vector<WatchedStack> again;
  again.push_back(Stack("web", s));
  again.push_back(Stack("db", t));
  w.Replace(std::move(again));
  CHECK(w.stack_count() == 2);
  const int before = s.runs;
  REQUIRE(Eventually([&] { return s.runs > before + 1 && t.runs > 0; }));
  w.Stop();
  // The same drift, known from before the reload: no new event.
  CHECK(detected == 1);
}

}  // namespace watcher_test
