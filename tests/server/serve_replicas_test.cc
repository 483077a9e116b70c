// Several `cairn serve` replicas on one PostgreSQL database behave as one
// server: one idempotency, one rate limit, every lifecycle step taken once
// and finished by a survivor, nothing acknowledged lost, pagination exact.
// Hidden ([.][replicas]): the ctest entry "server: replicas on PostgreSQL"
// runs them under tests/engine/state/pg_harness.sh.
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "tests/server/serve_fixture.h"

namespace serve_replicas_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

// Two servers on the database of `dir` (a data directory name only names
// the database here).
struct Pair {
  TempDir dir;
  std::string data;
  std::unique_ptr<ServeFixture> a, b;
  explicit Pair(std::vector<std::string> args = {}) {
    setenv("CAIRN_TEST_SERVE_STORE", "postgres", 1);
    data = dir.path() + "/shared";
    a = std::make_unique<ServeFixture>(args, data);
    b = std::make_unique<ServeFixture>(args, data);
  }
};

std::vector<std::string> Names(HttpClient& c, const std::string& route) {
  std::vector<std::string> out;
  std::string cursor;
  for (int page = 0; page < 100; ++page) {
    auto r = c.Get(route + "?limit=7" + (cursor.empty() ? "" : "&cursor=" + cursor)).json();
    for (const auto& item : r["data"]) out.push_back(item["name"]);
    const json& next = r["pagination"]["next"];
    if (!next.is_string()) break;
    cursor = next;
  }
  return out;
}

}  // namespace

TEST_CASE("replicas: two servers starting at once on a new database migrate once",
          "[.][replicas]") {
  setenv("CAIRN_TEST_SERVE_STORE", "postgres", 1);
  TempDir dir;
  std::string data = dir.path() + "/fresh";
  std::unique_ptr<ServeFixture> a, b;
  std::thread other([&] { b = std::make_unique<ServeFixture>(std::vector<std::string>{}, data); });
  a = std::make_unique<ServeFixture>(std::vector<std::string>{}, data);
  other.join();
  REQUIRE(a->Client()->Post("/v1/instances", InstanceBody("m")).status == 201);
  CHECK(b->Client()->Get("/v1/instances").json()["data"].size() == 1);
}

TEST_CASE("replicas: one Idempotency-Key sent to both at once creates one resource",
          "[.][replicas]") {
  Pair p;
  for (int round = 0; round < 10; ++round) {
    std::string key = "same-key-" + std::to_string(round);
    std::atomic<int> created{0}, in_use{0}, replayed{0}, other{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < 8; ++i) {
      clients.emplace_back([&, i] {
        auto c = (i % 2 ? p.a : p.b)->Client();
        auto r = c->Post("/api/v1/compute", InstanceBody("web-" + std::to_string(round)), key);
        if (r.status == 201 && r.header("idempotent-replayed").empty()) {
          ++created;
        } else if (r.status == 201) {
          ++replayed;
        } else if (r.status == 409 && r.json()["error"]["code"] == "idempotency_key_in_use") {
          ++in_use;
        } else {
          ++other;
        }
      });
    }
    for (auto& t : clients) t.join();
    INFO("round " << round);
    CHECK(created == 1);
    CHECK(other == 0);
    CHECK(created + replayed + in_use == 8);
    // Afterwards, from either replica: the replay of the one resource.
    auto again =
        p.a->Client()->Post("/api/v1/compute", InstanceBody("web-" + std::to_string(round)), key);
    CHECK(again.header("idempotent-replayed") == "true");
  }
  std::vector<std::string> names = Names(*p.b->Client(), "/api/v1/compute");
  CHECK(names.size() == 10);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == 10);
}

TEST_CASE("replicas: the rate limit is one bucket per project across servers", "[.][replicas]") {
  Pair p({"--rate-limit", "0.01:6"});
  auto a = p.a->Client(), b = p.b->Client();
  int allowed = 0;
  for (int i = 0; i < 6; ++i) allowed += (i % 2 ? a : b)->Get("/v1/instances").status == 200;
  CHECK(allowed == 6);
  // The seventh is refused whichever replica answers, with a computed wait.
  for (HttpClient* c : {a.get(), b.get()}) {
    auto r = c->Get("/v1/instances");
    REQUIRE(r.status == 429);
    CHECK(std::stoi(r.header("retry-after")) >= 1);
    CHECK(r.header("ratelimit-remaining") == "0");
  }
  // Another project has its own bucket.
  CHECK(p.a->Client(kOtherToken)->Get("/v1/instances").status == 200);
}

TEST_CASE("replicas: a replica killed while records provision leaves the other to finish them",
          "[.][replicas]") {
  Pair p({"--provision-delay", "300ms"});
  auto a = p.a->Client();
  for (int i = 0; i < 20; ++i) {
    REQUIRE(a->Post("/api/v1/compute", InstanceBody("p-" + std::to_string(i)),
                    "prov-" + std::to_string(i))
                .status == 201);
  }
  // Killed right away: its lifecycle worker may be mid-step.
  p.a->process().Signal(SIGKILL);
  auto b = p.b->Client();
  auto all_running = PollUntil([&] { return b->Get("/api/v1/compute?limit=200").json(); },
                               [](const json& j) {
                                 if (j["data"].size() != 20) return false;
                                 for (const auto& item : j["data"]) {
                                   if (item["status"] != "running") return false;
                                 }
                                 return true;
                               });
  REQUIRE(all_running["data"].size() == 20);
  std::set<std::string> ips;
  for (const auto& item : all_running["data"]) {
    CHECK(item["status"] == "running");
    ips.insert(item["ipv4"].get<std::string>());
  }
  CHECK(ips.size() == 20);  // one address each: no step ran twice
}

TEST_CASE("replicas: a write acknowledged just before a kill -9 is never lost", "[.][replicas]") {
  Pair p;
  auto a = p.a->Client();
  std::vector<std::string> ids;
  for (int i = 0; i < 30; ++i) {
    auto r = a->Post("/api/v1/compute", InstanceBody("k-" + std::to_string(i)),
                     "kill-" + std::to_string(i));
    REQUIRE(r.status == 201);
    ids.push_back(r.json()["instance"]["publicId"]);
  }
  p.a->process().Signal(SIGKILL);
  auto b = p.b->Client();
  for (const auto& id : ids) CHECK(b->Get("/api/v1/compute/" + id).status == 200);
}

TEST_CASE("replicas: edits of one resource through both at once lose no update", "[.][replicas]") {
  Pair p;
  auto rule = [](int port) {
    return json::array({{{"direction", "inbound"},
                         {"protocol", "tcp"},
                         {"port", std::to_string(port)},
                         {"source", "0.0.0.0/0"},
                         {"action", "allow"}}});
  };
  auto fw = p.a->Client()->Post("/v1/firewalls", {{"name", "fw-0"}, {"rules", rule(1000)}});
  REQUIRE(fw.status == 201);
  const std::string path = "/v1/firewalls/" + fw.json()["id"].get<std::string>();
  // Each round edits a different field through each replica at the same
  // moment: a server that read, merged and wrote back without holding the
  // row would drop the other's edit.
  for (int round = 1; round <= 40; ++round) {
    std::atomic<int> ok{0};
    std::thread name_edit([&] {
      ok += p.a->Client()->Patch(path, {{"name", "fw-" + std::to_string(round)}}).status == 200;
    });
    std::thread rules_edit([&] {
      ok += p.b->Client()->Patch(path, {{"rules", rule(1000 + round)}}).status == 200;
    });
    name_edit.join();
    rules_edit.join();
    REQUIRE(ok == 2);
    json now = p.a->Client()->Get(path).json();
    INFO("round " << round);
    REQUIRE(now["name"] == "fw-" + std::to_string(round));
    REQUIRE(now["rules"][0]["port"] == std::to_string(1000 + round));
  }
}

TEST_CASE("replicas: pagination on one stays exact while the other inserts and deletes",
          "[.][replicas]") {
  Pair p;
  auto a = p.a->Client();
  std::set<std::string> stable;
  std::vector<std::string> victims;
  for (int i = 0; i < 40; ++i) {
    std::string id = a->Post("/v1/instances", InstanceBody("s" + std::to_string(i))).json()["id"];
    if (i % 3 == 0) {
      victims.push_back(id);
    } else {
      stable.insert("s" + std::to_string(i));
    }
  }
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto w = p.a->Client();
    size_t v = 0;
    int n = 0;
    while (!stop) {
      w->Post("/v1/instances", InstanceBody("new" + std::to_string(n++)));
      if (v < victims.size()) w->Delete("/v1/instances/" + victims[v++]);
    }
  });
  auto b = p.b->Client();
  for (int pass = 0; pass < 5; ++pass) {
    std::vector<std::string> seen;
    std::string cursor;
    for (int page = 0; page < 1000; ++page) {
      auto r = b->Get("/v1/instances?limit=7" + (cursor.empty() ? "" : "&cursor=" + cursor)).json();
      for (const auto& item : r["data"]) seen.push_back(item["name"]);
      if (!r["pagination"]["has_more"].get<bool>()) break;
      cursor = r["pagination"]["next_cursor"];
    }
    std::multiset<std::string> counted(seen.begin(), seen.end());
    for (const auto& s : stable) CHECK(counted.count(s) == 1);  // never skipped nor repeated
  }
  stop = true;
  writer.join();
}

}  // namespace serve_replicas_test
