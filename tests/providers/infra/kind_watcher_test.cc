// The readiness watcher (providers/infra/kind_watcher.h) through
// InfraProvider::Watch, over a scripted API and a manual clock: many waits
// answered by one listing, a missing resource confirmed before it is called
// gone, a failure that ends only its own wait, a 429 that slows the watcher.
#include <catch2/catch.hpp>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "base/clock.h"
#include "providers/infra/infra_provider.h"
#include "tests/providers/fake_transport.h"
#include "tests/providers/test_descriptors.h"

namespace kind_watcher_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;
using std::chrono::seconds;

namespace {

std::string Id(int i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "00000000-0000-4000-8000-%012d", i);
  return buf;
}

Value Instance(const std::string& id, const std::string& status) {
  return {{"publicId", id},
          {"name", "web"},
          {"regionKey", "eu-central"},
          {"planKey", "s-1"},
          {"imageKey", "debian-12"},
          {"sshKeys", Value::array()},
          {"networkId", nullptr},
          {"status", status},
          {"createdAt", "2026-01-01T00:00:00Z"},
          {"customerStatus",
           {{"status", status},
            {"reasonCode", status == "failed" ? "capacity_unavailable" : "ok"},
            {"guidance", status == "failed" ? "try another region" : "wait"},
            {"actions", {{"edit", true}, {"delete", true}}}}}};
}

// A scripted control-plane API: instances by id, each with the number of
// looks (listings or GETs that show it) before it is ready, or a fixed
// status. Lists and GETs are counted; one listing page holds everything.
class ScriptedApi {
 public:
  struct Entry {
    int looks_until_ready = 0;
    std::string fixed;  // "failed", "gone": no progress
    bool hidden_from_list = false;
  };
  explicit ScriptedApi(FakeTransport& t) {
    t.SetHandler([this](const HttpRequest& req) { return Answer(req); });
  }
  void Put(const std::string& id, Entry e) {
    std::lock_guard lock(mu_);
    entries_[id] = e;
  }
  int lists() {
    std::lock_guard lock(mu_);
    return lists_;
  }
  int gets() {
    std::lock_guard lock(mu_);
    return gets_;
  }
  int gets_of(const std::string& id) {
    std::lock_guard lock(mu_);
    return gets_by_id_[id];
  }
  std::vector<HttpResponse> before_list;  // answered to the first listings, in order
  // Objects per listing page (0: all on one); `cursor` is the index of the
  // first object of a page.
  size_t page_size = 0;
  // The clock by which listing_starts() records when each listing began
  // (its first page was asked for).
  Clock* clock = nullptr;
  std::vector<Clock::time_point> listing_starts() {
    std::lock_guard lock(mu_);
    return listing_starts_;
  }
  // While closed, requests wait: the waits a test adds meanwhile pile up
  // instead of racing the watcher's first look.
  void CloseGate() {
    std::lock_guard lock(mu_);
    gate_open_ = false;
  }
  void OpenGate() {
    std::lock_guard lock(mu_);
    gate_open_ = true;
    gate_cv_.notify_all();
  }

 private:
  std::string StatusOf(Entry& e) {
    if (!e.fixed.empty()) return e.fixed;
    if (e.looks_until_ready-- > 0) return "provisioning";
    return "running";
  }
  Result<HttpResponse> Answer(const HttpRequest& req) {
    std::unique_lock lock(mu_);
    gate_cv_.wait(lock, [&] { return gate_open_; });
    const std::string base = "http://api.test/api/v1/compute";
    if (req.url.rfind(base + "?", 0) == 0) {
      if (!before_list.empty()) {
        HttpResponse r = before_list.front();
        before_list.erase(before_list.begin());
        return r;
      }
      const size_t cursor_at = req.url.find("cursor=");
      const size_t first =
          cursor_at == std::string::npos ? 0 : std::stoul(req.url.substr(cursor_at + 7));
      if (first == 0) {
        ++lists_;
        if (clock) listing_starts_.push_back(clock->Now());
      }
      Value data = Value::array();
      size_t index = 0;
      for (auto& [id, e] : entries_) {
        if (e.hidden_from_list || e.fixed == "gone") continue;
        if (index++ < first) continue;
        if (page_size > 0 && data.size() == page_size) break;
        data.push_back(Instance(id, StatusOf(e)));
      }
      const size_t end = first + data.size();
      const Value next = page_size > 0 && end < index ? Value(std::to_string(end)) : Value(nullptr);
      return JsonAnswer(
          200, Value{{"data", data}, {"pagination", {{"limit", 200}, {"next", next}}}}.dump());
    }
    ++gets_;
    std::string id = req.url.substr(base.size() + 1);
    ++gets_by_id_[id];
    auto it = entries_.find(id);
    if (it == entries_.end() || it->second.fixed == "gone") {
      return ErrorAnswer(404, "resource_not_found", "no such resource");
    }
    return JsonAnswer(200, Value{{"instance", Instance(id, StatusOf(it->second))}}.dump());
  }
  std::mutex mu_;
  std::condition_variable gate_cv_;
  bool gate_open_ = true;
  std::map<std::string, Entry> entries_;
  int lists_ = 0, gets_ = 0;
  std::vector<Clock::time_point> listing_starts_;
  std::map<std::string, int> gets_by_id_;
};

// Collects the responses of Watch calls; Await blocks (real time, bounded)
// until `n` have come.
struct Responses {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, WaitResponse> by_id;
  std::function<void(WaitResponse)> For(const std::string& id) {
    return [this, id](WaitResponse r) {
      std::lock_guard lock(mu);
      by_id[id] = std::move(r);
      cv.notify_all();
    };
  }
  bool Await(size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), [&] { return by_id.size() >= n; });
  }
};

// Polls (real time, up to 30 s) until the API has answered `n` GETs.
void PollUntilGets(ScriptedApi& api, int n) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (api.gets() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  REQUIRE(api.gets() >= n);
}

InfraProvider::Options Options() {
  InfraProvider::Options o;
  o.endpoint = "http://api.test";
  o.token = "cairn_TESTtokenTESTtokenTESTtoken0123";
  // The watcher's own looks, not the first one a fresh estimate takes on
  // the caller's thread (tested apart).
  o.first_look_initial = std::chrono::milliseconds(5);
  return o;
}

}  // namespace

TEST_CASE("fifty waits are answered by a few listings, not a poll loop each") {
  FakeTransport transport;
  ManualClock clock;
  ScriptedApi api(transport);
  InfraProvider provider(Options(), TestKinds(), transport, clock);
  Responses got;
  for (int i = 0; i < 50; ++i) api.Put(Id(i), {.looks_until_ready = 3});
  for (int i = 0; i < 50; ++i) {
    provider.Watch({"instance", Id(i), WaitTarget::kReady, seconds(600)}, got.For(Id(i)));
  }
  REQUIRE(got.Await(50));
  for (auto& [id, r] : got.by_id) {
    INFO(id << ": " << r.status.ToString());
    CHECK(r.status.ok());
    REQUIRE(r.resource);
    CHECK(r.resource->attributes["status"] == "running");
  }
  // Each instance is ready at its fourth look: a handful of listings (the
  // first waits may be looked at alone, by GET, before the rest arrive).
  CHECK(api.lists() <= 8);
  CHECK(api.lists() + api.gets() < 50);
  CHECK(provider.watcher_requests() == api.lists() + api.gets());
}

TEST_CASE("a collection of many pages is listed no faster than its pages allow") {
  FakeTransport transport;
  ManualClock clock;
  ScriptedApi api(transport);
  api.page_size = 10;
  api.clock = &clock;
  InfraProvider::Options o = Options();
  o.max_list_pages_per_second = 4;  // 40 objects in 4 pages: a listing a second at most
  InfraProvider provider(o, TestKinds(), transport, clock);
  Responses got;
  for (int i = 0; i < 40; ++i) api.Put(Id(i), {.looks_until_ready = 6});
  api.CloseGate();  // all waits in before the first look
  for (int i = 0; i < 40; ++i) {
    provider.Watch({"instance", Id(i), WaitTarget::kReady, seconds(600)}, got.For(Id(i)));
  }
  api.OpenGate();
  REQUIRE(got.Await(40));
  for (auto& [id, r] : got.by_id) {
    INFO(id << ": " << r.status.ToString());
    CHECK(r.status.ok());
  }
  // The listings (of 4 pages each) were a second apart or more:
  // 1 / max_lists_per_second (0.1 s) alone would allow ten a second.
  const std::vector<Clock::time_point> starts = api.listing_starts();
  REQUIRE(starts.size() >= 2);
  for (size_t i = 1; i < starts.size(); ++i) {
    INFO("listing " << i);
    CHECK(starts[i] - starts[i - 1] >= seconds(1));
  }
}

TEST_CASE("a resource missing from the listing is confirmed with one GET before it is gone") {
  FakeTransport transport;
  ManualClock clock;
  ScriptedApi api(transport);
  InfraProvider provider(Options(), TestKinds(), transport, clock);
  Responses got;
  // Enough waits that one listing is cheaper than a GET each.
  for (int i = 0; i < 20; ++i) api.Put(Id(i), {.looks_until_ready = 0});
  // Made after the listing began: not listed, yet there.
  api.Put(Id(20), {.hidden_from_list = true});
  // Gone: neither listed nor found.
  api.Put(Id(21), {.fixed = "gone"});
  api.CloseGate();
  for (int i = 0; i < 22; ++i) {
    provider.Watch({"instance", Id(i), WaitTarget::kReady, seconds(600)}, got.For(Id(i)));
  }
  api.OpenGate();
  REQUIRE(got.Await(22));
  CHECK(got.by_id[Id(20)].status.ok());  // found by its GET, not called gone
  CHECK(got.by_id[Id(20)].resource->attributes["status"] == "running");
  // A wait for readiness whose resource is gone ends NotFound, after its GET.
  CHECK(got.by_id[Id(21)].status.code() == StatusCode::kNotFound);
  CHECK(api.lists() >= 1);
  // Each of the two missing is confirmed by one GET of its own; the others
  // were read from the listing (but for waiters the watcher looked at alone
  // before the rest arrived: how many depends on the scheduler).
  CHECK(api.gets_of(Id(20)) == 1);
  CHECK(api.gets_of(Id(21)) == 1);
  CHECK(api.gets() < 20);
}

TEST_CASE("a failed resource ends only its own wait") {
  FakeTransport transport;
  ManualClock clock;
  ScriptedApi api(transport);
  InfraProvider provider(Options(), TestKinds(), transport, clock);
  Responses got;
  for (int i = 0; i < 4; ++i) api.Put(Id(i), {.looks_until_ready = 2});
  api.Put(Id(4), {.fixed = "failed"});
  for (int i = 0; i < 5; ++i) {
    provider.Watch({"instance", Id(i), WaitTarget::kReady, seconds(600)}, got.For(Id(i)));
  }
  REQUIRE(got.Await(5));
  const WaitResponse& failed = got.by_id[Id(4)];
  CHECK(failed.status.code() == StatusCode::kFailedPrecondition);
  CHECK(failed.failed_reason == "capacity_unavailable");
  REQUIRE(failed.diagnostics.size() == 1);
  CHECK(failed.diagnostics[0].detail == "try another region");
  for (int i = 0; i < 4; ++i) CHECK(got.by_id[Id(i)].status.ok());
}

TEST_CASE("a 429 on a listing slows the watcher down and loses no wait") {
  FakeTransport transport;
  ManualClock clock;
  ScriptedApi api(transport);
  api.before_list = {RateLimited(7), RateLimited(7)};
  InfraProvider provider(Options(), TestKinds(), transport, clock);
  Responses got;
  for (int i = 0; i < 10; ++i) api.Put(Id(i), {.looks_until_ready = 1});
  for (int i = 0; i < 10; ++i) {
    provider.Watch({"instance", Id(i), WaitTarget::kReady, seconds(600)}, got.For(Id(i)));
  }
  REQUIRE(got.Await(10));
  for (auto& [id, r] : got.by_id) CHECK(r.status.ok());
  // Retry-After was honoured: the clock moved at least 2 x 7 s.
  CHECK(clock.total_slept() >= seconds(14));
}

TEST_CASE("a wait past its deadline ends with the last status seen") {
  FakeTransport transport;
  ManualClock clock;
  ScriptedApi api(transport);
  InfraProvider provider(Options(), TestKinds(), transport, clock);
  Responses got;
  api.Put(Id(0), {.fixed = "provisioning"});
  provider.Watch({"instance", Id(0), WaitTarget::kReady, seconds(30)}, got.For(Id(0)));
  REQUIRE(got.Await(1));
  const WaitResponse& r = got.by_id[Id(0)];
  CHECK(r.status.code() == StatusCode::kDeadlineExceeded);
  CHECK(r.status.message().find("not running after 30s (status provisioning)") !=
        std::string::npos);
  // Looked at every tenth of the time waited (from 50 ms up to 2 s apart):
  // about 55 looks in 30 s, not a storm, and never fewer than one per 2 s.
  CHECK(api.gets() >= 15);
  CHECK(api.gets() <= 60);
}

TEST_CASE(
    "deletions missing from a listing that began after their waits are done, without a GET each") {
  FakeTransport transport;
  ManualClock clock;
  ScriptedApi api(transport);
  InfraProvider provider(Options(), TestKinds(), transport, clock);
  Responses got;
  for (int i = 0; i < 20; ++i) api.Put(Id(i), {.fixed = "gone"});
  api.CloseGate();
  for (int i = 0; i < 20; ++i) {
    provider.Watch({"instance", Id(i), WaitTarget::kDeleted, seconds(600)}, got.For(Id(i)));
  }
  api.OpenGate();
  REQUIRE(got.Await(20));
  for (auto& [id, r] : got.by_id) {
    CHECK(r.status.ok());
    CHECK_FALSE(r.resource);
  }
  CHECK(api.lists() >= 1);
  // Not one per wait. How many are looked at alone before the rest are due
  // depends on when the watcher thread runs: on a loaded machine a few more
  // (a bound of 5 failed once in a parallel ctest run), never all of them.
  CHECK(api.gets() < 20);
}

TEST_CASE("on an API that provisions at once, the first look is taken by the caller, one GET") {
  FakeTransport transport;
  ManualClock clock;
  ScriptedApi api(transport);
  InfraProvider::Options o = Options();
  o.first_look_initial = std::chrono::microseconds(0);  // the default
  InfraProvider provider(o, TestKinds(), transport, clock);
  Responses got;
  WaitRequest req{"instance", Id(0), WaitTarget::kReady, seconds(600)};
  req.just_created = RemoteResource{"instance", Id(0), {{"status", "queued"}}};
  api.Put(Id(0), {.looks_until_ready = 0});
  api.CloseGate();  // the watcher thread would wait here; the caller does not
  std::thread open([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    api.OpenGate();
  });
  provider.Watch(req, got.For(Id(0)));
  open.join();
  {
    std::lock_guard lock(got.mu);
    // Answered before Watch returned: the look was on this thread.
    REQUIRE(got.by_id.count(Id(0)) == 1);
    CHECK(got.by_id[Id(0)].status.ok());
  }
  CHECK(api.gets() == 1);

  // A slow API: the first look misses and the wait goes to the watcher;
  // the next create of the kind waits before its first look.
  api.Put(Id(1), {.looks_until_ready = 3});
  req.id = Id(1);
  req.just_created->id = Id(1);
  provider.Watch(req, got.For(Id(1)));
  REQUIRE(got.Await(2));
  CHECK(got.by_id[Id(1)].status.ok());
  const int gets = api.gets();
  api.Put(Id(2), {.looks_until_ready = 0});
  req.id = Id(2);
  req.just_created->id = Id(2);
  auto before = clock.total_slept();
  provider.Watch(req, got.For(Id(2)));
  REQUIRE(got.Await(3));
  CHECK(clock.total_slept() > before);  // not looked at inline: it slept first
  CHECK(api.gets() == gets + 1);
}

TEST_CASE("a wait added while the watcher sleeps until a later look wakes it") {
  // The real clock: the watcher really sleeps. Looks a minute apart, so a
  // first wait's next look is a minute away when the second wait comes.
  FakeTransport transport;
  ScriptedApi api(transport);
  InfraProvider::Options o = Options();
  o.min_poll_interval = std::chrono::minutes(1);
  o.max_poll_interval = std::chrono::minutes(1);
  Responses got;
  {
    InfraProvider provider(o, TestKinds(), transport, SystemClock());
    api.Put(Id(0), {.fixed = "provisioning"});
    provider.Watch({"instance", Id(0), WaitTarget::kReady, seconds(600)}, got.For(Id(0)));
    // Its first look is taken at once; then the watcher sleeps for a minute
    // (most likely asleep by now: if not, the next wait is only seen sooner).
    PollUntilGets(api, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    api.Put(Id(1), {.looks_until_ready = 0});
    provider.Watch({"instance", Id(1), WaitTarget::kReady, seconds(600)}, got.For(Id(1)));
    // Due now, sooner than the sleep ends: woken, it looks. A lost wake-up
    // would answer it in a minute, after Await's 30 s.
    REQUIRE(got.Await(1));
    std::lock_guard lock(got.mu);
    REQUIRE(got.by_id.count(Id(1)) == 1);
    CHECK(got.by_id[Id(1)].status.ok());
    CHECK(got.by_id.count(Id(0)) == 0);
  }  // the provider's end wakes its watchers: the first wait ends, cancelled
  REQUIRE(got.Await(2));
  CHECK(got.by_id[Id(0)].status.code() == StatusCode::kCancelled);
}

TEST_CASE("a wait added while the watcher waits out the listing gap is answered by that listing") {
  // The real clock. A listing at most once a second: after the first, the
  // watcher sleeps until the next may be taken, and a wait added meanwhile
  // (due at once) does not wake it: it is settled by the listing at the
  // gap's end, with no GET of its own.
  FakeTransport transport;
  ScriptedApi api(transport);
  InfraProvider::Options o = Options();
  o.max_lists_per_second = 1;
  o.min_poll_interval = std::chrono::milliseconds(10);
  Responses got;
  InfraProvider provider(o, TestKinds(), transport, SystemClock());
  // Provisioning at the first listing, running at the second.
  for (int i = 0; i < 20; ++i) api.Put(Id(i), {.looks_until_ready = 1});
  api.CloseGate();  // all twenty due together: one listing, not a GET each
  for (int i = 0; i < 20; ++i) {
    provider.Watch({"instance", Id(i), WaitTarget::kReady, seconds(600)}, got.For(Id(i)));
  }
  api.OpenGate();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (api.lists() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  REQUIRE(api.lists() == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int lists_before = api.lists();
  api.Put(Id(20), {.looks_until_ready = 0});
  provider.Watch({"instance", Id(20), WaitTarget::kReady, seconds(600)}, got.For(Id(20)));
  REQUIRE(got.Await(21));
  for (auto& [id, r] : got.by_id) {
    INFO(id << ": " << r.status.ToString());
    CHECK(r.status.ok());
  }
  // The next listing answered it (and the twenty, running by then). (The
  // watcher may have taken a GET of the first wait before the others came.)
  CHECK(api.lists() == lists_before + 1);
  CHECK(api.gets_of(Id(20)) == 0);
}

}  // namespace kind_watcher_test
