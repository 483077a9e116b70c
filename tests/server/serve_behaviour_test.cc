// Integration tests: rate limiting, pagination under concurrent writes,
// durability across kill -9, graceful shutdown, fault injection, access log.
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "tests/server/serve_fixture.h"

namespace serve_behaviour_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

// cairn_lifecycle_transitions_total{to=`raw_status`} (or -1).
double Transitions(HttpClient& c, const std::string& raw_status) {
  return MetricValue(c, "cairn_lifecycle_transitions_total", {{"to", raw_status}});
}

}  // namespace

TEST_CASE("rate limiting: 429 rate_limited with Retry-After and RateLimit-* headers, per project") {
  // 3 requests of burst, then one every 100 s: the fourth is always refused.
  ServeFixture srv({"--rate-limit", "0.01:3"});
  auto c = srv.Client();
  for (int i = 0; i < 3; ++i) {
    auto ok = c->Get("/v1/instances");
    REQUIRE(ok.status == 200);
    CHECK(ok.header("ratelimit-limit") == "3");
    CHECK(ok.header("ratelimit-remaining") == std::to_string(2 - i));
  }
  auto limited = c->Post("/api/v1/compute", InstanceBody(), "rl-key");
  REQUIRE(limited.status == 429);
  CHECK(limited.json()["error"]["code"] == "rate_limited");
  int retry_after = std::stoi(limited.header("retry-after"));
  CHECK(retry_after >= 1);
  CHECK(retry_after <= 100);
  CHECK(limited.header("ratelimit-limit") == "3");
  CHECK(limited.header("ratelimit-remaining") == "0");
  CHECK(std::stoi(limited.header("ratelimit-reset")) >= retry_after);
  CHECK(limited.header("cache-control") == "no-store");
  // Another project has its own bucket; /healthz is never limited.
  CHECK(srv.Client(kOtherToken)->Get("/v1/instances").status == 200);
  CHECK(HttpClient(srv.base(), "").Get("/healthz").status == 200);
}

TEST_CASE("keyset pagination never skips or repeats records that exist throughout") {
  ServeFixture srv;
  auto c = srv.Client();
  std::set<std::string> stable;
  std::vector<std::string> victims;
  for (int i = 0; i < 60; ++i) {
    std::string id = c->Post("/v1/instances", InstanceBody("s" + std::to_string(i))).json()["id"];
    if (i % 3 == 0) {
      victims.push_back(id);
    } else {
      stable.insert(id);
    }
  }
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto w = srv.Client();
    size_t v = 0;
    int n = 0;
    while (!stop) {
      w->Post("/v1/instances", InstanceBody("new" + std::to_string(n++)));
      if (v < victims.size()) w->Delete("/v1/instances/" + victims[v++]);
    }
  });
  for (std::string base : {"/v1/instances", "/api/v1/compute"}) {
    std::vector<std::string> seen;
    std::string cursor;
    for (int page = 0; page < 1000; ++page) {
      std::string path = base + "?limit=7" + (cursor.empty() ? "" : "&cursor=" + cursor);
      auto r = c->Get(path);
      REQUIRE(r.status == 200);
      json j = r.json();
      REQUIRE(j["data"].size() <= 7);
      for (const auto& item : j["data"]) {
        std::string id = item.contains("id")
                             ? item["id"].get<std::string>()
                             : "inst_" + std::regex_replace(item["publicId"].get<std::string>(),
                                                            std::regex("-"), "");
        seen.push_back(id);
      }
      json next = base[1] == 'v' ? j["pagination"]["next_cursor"] : j["pagination"]["next"];
      if (base[1] == 'v') CHECK(j["pagination"]["has_more"] == !next.is_null());
      if (next.is_null()) break;
      cursor = next;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::set<std::string> unique(seen.begin(), seen.end());
    INFO(base);
    CHECK(unique.size() == seen.size());                         // no repeats
    for (const auto& id : stable) CHECK(unique.count(id) == 1);  // no skips
  }
  stop = true;
  writer.join();
}

TEST_CASE("pages skip deleted records: each live one once in creation order with writes between") {
  ServeFixture srv;
  auto c = srv.Client();
  auto create = [&](const std::string& name) {
    auto r = c->Post("/v1/firewalls", {{"name", name},
                                       {"rules",
                                        {{{"direction", "inbound"},
                                          {"protocol", "tcp"},
                                          {"port", "443"},
                                          {"source", "0.0.0.0/0"},
                                          {"action", "allow"}}}}});
    REQUIRE(r.status == 201);
    return r.json()["id"].get<std::string>();
  };
  // 60 firewalls, all but every tenth deleted (a firewall's delete is
  // immediate): the live ones lie among 54 deleted records.
  std::vector<std::string> fw;
  for (int i = 0; i < 60; ++i) fw.push_back(create("fw" + std::to_string(i)));
  for (int i = 0; i < 60; ++i) {
    if (i % 10 != 0) REQUIRE(c->Delete("/v1/firewalls/" + fw[i]).status == 204);
  }
  std::vector<std::string> seen;
  std::string cursor;
  std::string new1, new2;
  for (int page = 0; page < 10; ++page) {
    auto r = c->Get("/v1/firewalls?limit=2" + (cursor.empty() ? "" : "&cursor=" + cursor));
    REQUIRE(r.status == 200);
    json j = r.json();
    REQUIRE(j["data"].size() <= 2);
    for (const auto& item : j["data"]) seen.push_back(item["id"]);
    if (page == 0) {
      // One not yet reached and one already seen go; one is created.
      REQUIRE(c->Delete("/v1/firewalls/" + fw[20]).status == 204);
      REQUIRE(c->Delete("/v1/firewalls/" + fw[0]).status == 204);
      new1 = create("new1");
    }
    if (page == 1) new2 = create("new2");
    json next = j["pagination"]["next_cursor"];
    CHECK(j["pagination"]["has_more"] == !next.is_null());
    if (next.is_null()) break;
    cursor = next;
  }
  CHECK(seen == std::vector<std::string>{fw[0], fw[10], fw[30], fw[40], fw[50], new1, new2});
}

TEST_CASE("an acknowledged write survives kill -9, the worker resumes after restart") {
  TempDir dir;
  std::string data = dir.path() + "/data";
  std::string body, id;
  {
    ServeFixture srv({"--provision-delay", "1h"}, data);
    auto r = srv.Client()->Post("/api/v1/compute", InstanceBody("durable"), "durable-key");
    REQUIRE(r.status == 201);
    body = r.body;
    id = r.json()["instance"]["publicId"];
    srv.process().Signal(SIGKILL);
    srv.process().Wait();
  }
  ServeFixture again({}, data);  // provision delay 0 now
  auto c = again.Client();
  auto got = c->Get("/api/v1/compute/" + id);
  REQUIRE(got.status == 200);
  CHECK(got.json()["instance"]["name"] == "durable");
  auto replay = c->Post("/api/v1/compute", InstanceBody("durable"), "durable-key");
  CHECK(replay.status == 201);
  CHECK(replay.body == body);
  CHECK(replay.header("idempotent-replayed") == "true");
  auto running =
      PollUntil([&] { return c->Get("/api/v1/compute/" + id); },
                [](const HttpResult& h) { return h.json()["instance"]["status"] == "running"; });
  CHECK(running.json()["instance"]["status"] == "running");
}

TEST_CASE("SIGTERM: in-flight requests finish, then the server exits 0") {
  ServeFixture srv({"--faults", "mutation_delay=700ms"});
  auto watcher = srv.Client();
  auto idle = srv.Client();
  REQUIRE(idle->Get("/v1/regions").status == 200);  // an idle keep-alive connection
  HttpResult slow;
  std::thread t([&] { slow = srv.Client()->Post("/api/v1/compute", InstanceBody(), "in-flight"); });
  auto gauge = PollUntil([&] { return MetricValue(*watcher, "cairn_mutations_in_flight"); },
                         [](double v) { return v >= 1; });
  REQUIRE(gauge >= 1);
  srv.process().Signal(SIGTERM);
  t.join();
  CHECK(slow.status == 201);
  CHECK(srv.process().Wait() == 0);
}

TEST_CASE("fault injection: 500, 503 and 429 answers") {
  for (auto [spec, status, code] : std::vector<std::tuple<std::string, int, std::string>>{
           {"error500=1", 500, "internal_error"},
           {"error503=1", 503, "service_unavailable"},
           {"error429=1", 429, "rate_limited"}}) {
    ServeFixture srv({"--faults", spec});
    auto c = srv.Client();
    auto r = c->Post("/api/v1/compute", InstanceBody(), "k");
    INFO(spec);
    CHECK(r.status == status);
    CHECK(r.json()["error"]["code"] == code);
    if (status == 429) CHECK(r.header("retry-after") == "1");
    CHECK(c->Get("/v1/instances").status == status);
    CHECK(c->Get("/healthz").status == 200);
  }
}

TEST_CASE("fault injection: a dropped connection before or after the commit") {
  TempDir dir;
  std::string data = dir.path() + "/data";
  SECTION("drop_after: the write is committed, the retry replays it") {
    {
      ServeFixture srv({"--faults", "drop_after=1"}, data);
      auto r = srv.Client()->Post("/api/v1/compute", InstanceBody("once"), "drop-key");
      CHECK(r.status == 0);  // no response
    }
    ServeFixture srv({}, data);
    auto c = srv.Client();
    auto retry = c->Post("/api/v1/compute", InstanceBody("once"), "drop-key");
    CHECK(retry.status == 201);
    CHECK(retry.header("idempotent-replayed") == "true");
    CHECK(c->Get("/api/v1/compute").json()["data"].size() == 1);
  }
  SECTION("drop_before: nothing happened, the retry creates") {
    {
      ServeFixture srv({"--faults", "drop_before=1"}, data);
      CHECK(srv.Client()->Post("/api/v1/compute", InstanceBody("once"), "drop-key").status == 0);
    }
    ServeFixture srv({}, data);
    auto c = srv.Client();
    auto retry = c->Post("/api/v1/compute", InstanceBody("once"), "drop-key");
    CHECK(retry.status == 201);
    CHECK_FALSE(retry.has_header("idempotent-replayed"));
    CHECK(c->Get("/api/v1/compute").json()["data"].size() == 1);
  }
}

TEST_CASE("fault injection: provisioning that fails") {
  ServeFixture srv({"--faults", "provision_failed=1"});
  auto c = srv.Client();
  std::string id = c->Post("/api/v1/compute", InstanceBody(), "k").json()["instance"]["publicId"];
  auto failed =
      PollUntil([&] { return c->Get("/api/v1/compute/" + id); },
                [](const HttpResult& h) { return h.json()["instance"]["status"] == "failed"; });
  json cs = failed.json()["instance"]["customerStatus"];
  CHECK(cs["status"] == "failed");
  CHECK(cs["reasonCode"] == "provisioning_failed");
  CHECK(cs["severity"] == "error");
  CHECK(cs["actionability"] == "required");
  CHECK(cs["actions"]["delete"] == true);
  CHECK(cs["actions"]["edit"] == false);
  CHECK(c->Get("/v1/instances/" + id).json()["status"] == "failed");
  CHECK(c->Delete("/api/v1/compute/" + id, "d").status == 202);
}

TEST_CASE("fault injection: provisioning through retrying, delayed and reconciling") {
  ServeFixture srv({"--faults", "provision_retrying=1,provision_delayed=1,reconcile=1"});
  auto c = srv.Client();
  std::string id = c->Post("/api/v1/compute", InstanceBody(), "k").json()["instance"]["publicId"];
  for (const char* state : {"retrying", "delayed", "reconciling"}) {
    auto n = PollUntil([&] { return Transitions(*c, state); }, [](double v) { return v >= 1; });
    INFO(state);
    CHECK(n >= 1);
  }
  auto running = PollUntil([&] { return c->Get("/api/v1/compute/" + id); },
                           [](const HttpResult& h) {
                             return h.json()["instance"]["status"] == "running" &&
                                    h.json()["instance"]["customerStatus"]["reasonCode"] == "ready";
                           });
  CHECK(running.json()["instance"]["status"] == "running");
  CHECK(Transitions(*c, "running") >= 2);  // before and after reconciling
}

TEST_CASE("provision delay 0: a create answers queued and the next read shows it running") {
  ServeFixture srv({"--provision-delay", "0"});
  auto c = srv.Client();
  for (int i = 0; i < 3; ++i) {
    auto created = c->Post("/api/v1/compute", InstanceBody("now" + std::to_string(i)),
                           "settle-" + std::to_string(i));
    REQUIRE(created.status == 201);
    json inst = created.json()["instance"];
    CHECK(inst["status"] == "queued");  // spec 2.3: create returns queued
    CHECK(inst["customerStatus"]["reasonCode"] == "provisioning_pending");
    // No poll: the very next read.
    json now = c->Get("/api/v1/compute/" + inst["publicId"].get<std::string>()).json()["instance"];
    CHECK(now["status"] == "running");
    CHECK(now["customerStatus"]["status"] == "running");
    // A replay of the create is the original answer.
    auto again = c->Post("/api/v1/compute", InstanceBody("now" + std::to_string(i)),
                         "settle-" + std::to_string(i));
    CHECK(again.json()["instance"]["status"] == "queued");
    CHECK(again.json()["instance"]["publicId"] == inst["publicId"]);
  }
  auto preview = c->Post("/v1/instances", InstanceBody("now-preview"));
  REQUIRE(preview.status == 201);
  CHECK(preview.json()["status"] == "provisioning");
  json got = c->Get("/v1/instances/" + preview.json()["id"].get<std::string>()).json();
  CHECK(got["status"] == "running");
  CHECK(std::regex_match(got["ipv4"].get<std::string>(), std::regex(R"(100\.64\.\d+\.\d+)")));
  // Every step is still counted.
  CHECK(Transitions(*c, "provisioning") == 4);
  CHECK(Transitions(*c, "running") == 4);
}

TEST_CASE("provision delay 0 with failing provisioning: the next read shows it failed") {
  ServeFixture srv({"--provision-delay", "0", "--faults", "provision_failed=1"});
  auto c = srv.Client();
  auto created = c->Post("/api/v1/compute", InstanceBody(), "k");
  REQUIRE(created.status == 201);
  CHECK(created.json()["instance"]["status"] == "queued");
  std::string id = created.json()["instance"]["publicId"];
  json now = c->Get("/api/v1/compute/" + id).json()["instance"];
  CHECK(now["status"] == "failed");
  CHECK(now["customerStatus"]["reasonCode"] == "provisioning_failed");
  CHECK(Transitions(*c, "failed") == 1);
}

TEST_CASE("access log lines name request id, method, route, status, never the token or body") {
  ServeFixture srv({"--log-level", "info"});
  auto c = srv.Client();
  auto r = c->Request("POST", "/v1/ssh_keys", R"({"name":"secret-body-marker","public_key":"x"})",
                      {"X-Request-ID: log-test-1"});
  REQUIRE(r.status == 400);
  srv.process().Signal(SIGTERM);
  CHECK(srv.process().Wait() == 0);
  std::string log = srv.process().Stderr();
  CHECK(log.find("request_id=log-test-1 method=POST route=/v1/ssh_keys status=400") !=
        std::string::npos);
  CHECK(log.find(kDevToken) == std::string::npos);
  CHECK(log.find("secret-body-marker") == std::string::npos);
}

TEST_CASE("cairn serve: --dev prints the token once, bad flags exit 1") {
  TempDir dir;
  ChildProcess p({CairnBinary(), "serve", "--dev", "--listen", "127.0.0.1:0", "--data-dir",
                  dir.path() + "/d"});
  auto token_line = p.ReadLine(std::chrono::seconds(30));
  REQUIRE(token_line.has_value());
  REQUIRE(std::regex_match(*token_line, std::regex("token: cairn_[A-Za-z0-9_-]{43}")));
  auto listen = p.ReadLine(std::chrono::seconds(30));
  REQUIRE(listen.has_value());
  REQUIRE(listen->rfind("listening on http://127.0.0.1:", 0) == 0);
  HttpClient c("http://" + listen->substr(std::string("listening on http://").size()),
               token_line->substr(7));
  CHECK(c.Get("/v1/instances").status == 200);

  // One server per data directory.
  auto second = RunCairn({"serve", "--listen", "127.0.0.1:0", "--data-dir", dir.path() + "/d"});
  CHECK(second.exit_code == 1);
  CHECK(second.err.find("in use by another cairn serve") != std::string::npos);
  p.Signal(SIGTERM);
  CHECK(p.Wait() == 0);
  CHECK(p.Stderr().find(token_line->substr(7)) == std::string::npos);

  CHECK(RunCairn({"serve", "--rate-limit", "fast"}).exit_code == 1);
  CHECK(RunCairn({"serve", "--faults", "explode=1"}).exit_code == 1);
  CHECK(RunCairn({"serve", "--provision-delay", "soon"}).exit_code == 1);
  CHECK(RunCairn({"serve", "--listen", "nohost"}).exit_code == 1);
  auto help = RunCairn({"serve", "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("Example") != std::string::npos);
}

TEST_CASE("serve: --io-threads sets how many threads serve requests") {
  // Counted in /proc: the other threads (writer, lifecycle worker, ...) are
  // the same in both servers, so the difference is the serving threads'.
  auto threads = [](pid_t pid) {
    size_t n = 0;
    for (const auto& e :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
      n += e.is_directory();
    }
    return n;
  };
  ServeFixture one({"--io-threads", "1"});
  ServeFixture seven({"--io-threads", "7"});
  CHECK(threads(seven.process().pid()) - threads(one.process().pid()) == 6);
  // Both serve.
  CHECK(one.Client()->Get("/v1/instances").status == 200);
  CHECK(seven.Client()->Get("/v1/instances").status == 200);
  CHECK(RunCairn({"serve", "--io-threads", "5000"}).exit_code == 1);
}

}  // namespace serve_behaviour_test
