// `cairn watch` as operators run it, against a real `cairn serve`: drift
// changed outside Cairn through the API appears and clears, as events on
// stdout, in /status.json, in /metrics (parsed by a text-format parser),
// on the status page (rendered by headless Chromium) and at a webhook
// receiver that is down, then up; remediation applied only to drift-only
// plans; two watchers of one state, one active, the other taking over when
// the first is SIGKILLed (SQLite here; PostgreSQL in the hidden
// [postgres] case, run under pg_harness.sh); SIGHUP and SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/cli/support/stack_env.h"
#include "tests/cli/support/webhook_receiver.h"
#include "tests/support/pg_database.h"
#include "tests/support/prometheus_text.h"

namespace watch_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Waits (up to 60 s: a loaded machine is slow, never wrong) for `done`.
template <class F>
bool Eventually(F done, std::chrono::seconds limit = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

// A `cairn watch` running in the background, with its HTTP side on a port
// of its choosing.
class Watching {
 public:
  Watching(StackEnv& e, std::vector<std::string> args,
           std::map<std::string, std::string> extra_env = {}) {
    std::vector<std::string> argv = {CairnBinary(), "watch", "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto env = e.env;
    for (auto& [k, v] : extra_env) env[k] = v;
    child_ = std::make_unique<ChildProcess>(argv, env);
    REQUIRE(Eventually([&] { return Address().size() > 0; }));
    client_ = std::make_unique<HttpClient>("http://" + Address(), "");
  }
  // "127.0.0.1:PORT" from its log line, once it listens.
  std::string Address() const {
    const std::string err = child_->Stderr();
    const std::string mark = "listening on http://";
    const size_t at = err.find(mark);
    if (at == std::string::npos) return "";
    const size_t end = err.find(' ', at + mark.size());
    return err.substr(at + mark.size(), end - at - mark.size());
  }
  json Status() { return json::parse(client_->Get("/status.json").body, nullptr, false); }
  json Stack(const std::string& name = "stack") {
    json s = Status();
    if (!s.is_object()) return json();
    for (const json& st : s["stacks"]) {
      if (st["name"] == name) return st;
    }
    return json();
  }
  HttpResult Get(const std::string& path) { return client_->Get(path); }
  // The next event of type `type` on stdout (earlier ones are kept).
  json NextEvent(const std::string& type, std::chrono::seconds limit = 60s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      auto line = child_->ReadLine(1s);
      if (!line) continue;
      json e = json::parse(*line, nullptr, false);
      INFO(*line);
      REQUIRE(e.is_object());  // stdout holds events alone
      events_.push_back(e);
      if (e["event"] == type) return e;
    }
    return json();
  }
  const std::vector<json>& events() const { return events_; }
  ChildProcess& child() { return *child_; }

 private:
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<HttpClient> client_;
  std::vector<json> events_;
};

std::vector<MetricFamily> Metrics(Watching& w) {
  HttpResult r = w.Get("/metrics");
  REQUIRE(r.status == 200);
  CHECK(r.header("content-type").find("text/plain; version=0.0.4") == 0);
  auto parsed = ParsePrometheusText(r.body);
  INFO(r.body);
  REQUIRE(parsed.ok());
  return *parsed;
}

// The value of the sample `name` with exactly `labels`; fails the test when
// there is none.
double MetricValue(const std::vector<MetricFamily>& metrics, const std::string& name,
                   const PrometheusLabels& labels) {
  const Sample* s = FindSample(metrics, name, labels);
  INFO(name);
  REQUIRE(s != nullptr);
  return s->value;
}

void Rename(StackEnv& e, const std::string& id, const std::string& name, const std::string& key) {
  REQUIRE(e.server.Client()->Patch("/api/v1/compute/" + id, {{"name", name}}, key).status == 200);
}

std::string LiveName(StackEnv& e, const std::string& id) {
  return e.server.Client()->Get("/api/v1/compute/" + id).json()["instance"]["name"];
}

}  // namespace

TEST_CASE("watch --once exits 0 in sync and 2 with drift or a failing check") {
  StackEnv e;
  WriteFile(e.stack + "/checks.yaml",
            "kind: check\nname: web_named\nassert:\n"
            "  - condition: ${instance.web[0].name == \"web-0\"}\n"
            "    error_message: web-0 was renamed\n");
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  auto clean = e.Cairn({"watch", e.stack, "--once"});
  INFO(clean.out << clean.err);
  CHECK(clean.exit_code == 0);
  CHECK(clean.out.empty());
  CHECK(clean.err.find("stack: ok") != std::string::npos);

  const std::string web0 = e.StateId("instance.web[0]");
  Rename(e, web0, "by-hand", "rename-once");
  auto drifted = e.Cairn({"watch", e.stack, "--once"});
  INFO(drifted.out << drifted.err);
  CHECK(drifted.exit_code == 2);
  std::vector<json> events;
  std::istringstream lines(drifted.out);
  for (std::string line; std::getline(lines, line);) events.push_back(json::parse(line));
  REQUIRE(events.size() == 2);
  CHECK(events[0]["event"] == "drift_detected");
  CHECK(events[0]["stack"] == "stack");
  CHECK(events[0]["resources"][0]["address"] == "instance.web[0]");
  CHECK(events[0]["resources"][0]["fields"] == json::array({"name"}));
  CHECK(events[1]["event"] == "check_failed");
  CHECK(events[1]["check"] == "web_named");
  CHECK(events[1]["messages"][0] == "check web_named failed: web-0 was renamed");
  // Reads only: the API and the state are as they were.
  CHECK(LiveName(e, web0) == "by-hand");
  CHECK(json::parse(
            e.Cairn({"state", "show", "instance.web[0]", e.stack}).out)["attributes"]["name"] ==
        "web-0");
}

TEST_CASE("watch shows drift appearing and clearing in events, status, metrics and its page") {
  StackEnv e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  Watching w(e, {e.stack, "--interval", "1s"});
  REQUIRE(Eventually([&] { return w.Stack()["status"] == "ok"; }));
  json st = w.Stack();
  CHECK(st["role"] == "active");
  CHECK(st["resources"].size() == 4);
  // One list request per kind (three kinds here), nothing per resource.
  CHECK(st["last_run"]["requests"].get<int>() <= 3);

  const std::string web0 = e.StateId("instance.web[0]");
  Rename(e, web0, "by-hand", "rename-watch");
  json detected = w.NextEvent("drift_detected");
  REQUIRE(detected.is_object());
  CHECK(detected["resources"][0]["address"] == "instance.web[0]");
  REQUIRE(Eventually([&] { return w.Stack()["status"] == "drifted"; }));
  st = w.Stack();
  CHECK(st["drift"]["changed"] == 1);
  bool shown = false;
  for (const json& r : st["resources"]) {
    if (r["address"] != "instance.web[0]") continue;
    shown = true;
    CHECK(r["status"] == "changed");
    CHECK(r["changes"][0] == json{{"path", "name"}, {"recorded", "web-0"}, {"live", "by-hand"}});
  }
  CHECK(shown);

  auto metrics = Metrics(w);
  const PrometheusLabels web_changed = {
      {"stack", "stack"}, {"kind", "instance"}, {"type", "changed"}};
  CHECK(MetricValue(metrics, "cairn_watch_drifted_resources", web_changed) == 1);
  CHECK(MetricValue(metrics, "cairn_watch_up", {}) == 1);
  REQUIRE(FindFamily(metrics, "cairn_watch_runs_total") != nullptr);
  CHECK(FindFamily(metrics, "cairn_watch_runs_total")->type == "counter");
  const double runs = MetricValue(metrics, "cairn_watch_runs_total", {{"stack", "stack"}});
  CHECK(runs >= 2);
  CHECK(MetricValue(metrics, "cairn_watch_stack_active", {{"stack", "stack"}}) == 1);
  const double requests =
      MetricValue(metrics, "cairn_watch_api_requests_total", {{"stack", "stack"}});
  CHECK(requests <= runs * 3 + 3);  // about one list per kind and run

  // The page: self-contained HTML naming the stack and its drift.
  HttpResult page = w.Get("/");
  REQUIRE(page.status == 200);
  CHECK(page.header("content-type").find("text/html") == 0);
  CHECK(page.body.find("instance.web[0]") != std::string::npos);
  CHECK(page.body.find("http-equiv=\"refresh\"") != std::string::npos);
  CHECK(w.Get("/nowhere").status == 404);

  // Put back through the API: resolved.
  Rename(e, web0, "web-0", "rename-back");
  CHECK(w.NextEvent("drift_resolved").is_object());
  REQUIRE(Eventually([&] { return w.Stack()["status"] == "ok"; }));
  metrics = Metrics(w);
  CHECK(MetricValue(metrics, "cairn_watch_drifted_resources", web_changed) == 0);

  // SIGTERM: the runs in flight finish, and it exits 0.
  w.child().Signal(SIGTERM);
  CHECK(w.child().Wait(60s) == 0);
  CHECK(w.child().Stderr().find("stopping") != std::string::npos);
}

TEST_CASE("watch's status page renders in headless Chromium") {
  const char* chromium = access("/usr/bin/chromium", X_OK) == 0 ? "/usr/bin/chromium" : nullptr;
  INFO("chromium is installed by scripts/test.sh (Debian's package)");
  REQUIRE(chromium != nullptr);
  StackEnv e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  Rename(e, e.StateId("instance.web[1]"), "by-hand", "rename-page");
  Watching w(e, {e.stack, "--interval", "1s"});
  REQUIRE(Eventually([&] { return w.Stack()["status"] == "drifted"; }));
  TempDir profile;
  auto r = RunCommand({chromium, "--headless", "--no-sandbox", "--disable-gpu",
                       "--user-data-dir=" + profile.path(), "--dump-dom",
                       "http://" + w.Address() + "/"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("id=\"stack-stack\"") != std::string::npos);
  CHECK(r.out.find("status-drifted") != std::string::npos);
  CHECK(r.out.find("instance.web[1]") != std::string::npos);
  CHECK(r.out.find("by-hand") != std::string::npos);
}

TEST_CASE("watch posts events to a webhook receiver that is down, then up") {
  StackEnv e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  const int port = FreeLoopbackPort();
  Watching w(e, {e.stack, "--interval", "1s", "--webhook",
                 "http://hook:s3cr3t-hook-pass@127.0.0.1:" + std::to_string(port) + "/cairn"});
  REQUIRE(Eventually([&] { return w.Stack()["status"] == "ok"; }));
  Rename(e, e.StateId("instance.web[0]"), "by-hand", "rename-hook");
  REQUIRE(w.NextEvent("drift_detected").is_object());
  // Nothing listens: the event waits, retried.
  REQUIRE(Eventually([&] {
    const auto metrics = Metrics(w);  // FindSample points into it
    const Sample* s =
        FindSample(metrics, "cairn_watch_webhook_events_total", {{"result", "failed_attempt"}});
    return s != nullptr && s->value >= 1;
  }));
  WebhookReceiver receiver(port);
  REQUIRE(Eventually([&] { return !receiver.bodies().empty(); }));
  json got = json::parse(receiver.bodies()[0]);
  CHECK(got["event"] == "drift_detected");
  CHECK(got["resources"][0]["address"] == "instance.web[0]");
  REQUIRE(Eventually([&] {
    const auto metrics = Metrics(w);  // FindSample points into it
    const Sample* s =
        FindSample(metrics, "cairn_watch_webhook_events_total", {{"result", "delivered"}});
    return s != nullptr && s->value >= 1;
  }));
  // The URL's password is in no log line.
  w.child().Signal(SIGTERM);
  CHECK(w.child().Wait(60s) == 0);
  CHECK(w.child().Stderr().find("s3cr3t-hook-pass") == std::string::npos);
  CHECK(w.child().Stderr().find("posting events to http://***@127.0.0.1:") != std::string::npos);
}

TEST_CASE("watch remediates drift-only plans and refuses any other") {
  StackEnv e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  const std::string web0 = e.StateId("instance.web[0]");
  Rename(e, web0, "by-hand", "rename-fix");
  auto fixed = e.Cairn({"watch", e.stack, "--once", "--remediate"});
  INFO(fixed.out << fixed.err);
  CHECK(fixed.out.find("\"remediation_applied\"") != std::string::npos);
  CHECK(LiveName(e, web0) == "web-0");
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);

  // A third instance in the manifests: the plan creates it, so nothing is
  // applied, the drift included.
  WriteFile(e.stack + "/main.yaml", BasicStack(3));
  Rename(e, web0, "by-hand-again", "rename-fix-2");
  auto refused = e.Cairn({"watch", e.stack, "--once", "--remediate"});
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 2);
  CHECK(refused.out.find("\"remediation_refused\"") != std::string::npos);
  CHECK(refused.out.find("create instance.web[2]") != std::string::npos);
  CHECK(LiveName(e, web0) == "by-hand-again");
  CHECK(e.Names("/api/v1/compute").size() == 2);

  // A stack's watch document says none: not even drift-only is applied.
  WriteFile(e.stack + "/main.yaml", BasicStack(2));
  WriteFile(e.stack + "/watch.yaml", "kind: watch\nremediate: none\ninterval: 10m\n");
  auto none = e.Cairn({"watch", e.stack, "--once", "--remediate"});
  CHECK(none.exit_code == 2);
  CHECK(none.out.find("remediation") == std::string::npos);
  CHECK(LiveName(e, web0) == "by-hand-again");
}

TEST_CASE("two watchers of one SQLite state: one watches, the other takes over when it dies") {
  StackEnv e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  Watching first(e, {e.stack, "--interval", "1s"});
  REQUIRE(Eventually([&] { return first.Stack()["role"] == "active"; }));
  Watching second(e, {e.stack, "--interval", "1s"});
  REQUIRE(Eventually([&] { return second.Stack()["role"] == "standby"; }));
  CHECK(second.Stack()["lease_holder"].get<std::string>().find(
            "pid " + std::to_string(first.child().pid())) != std::string::npos);
  CHECK(MetricValue(Metrics(second), "cairn_watch_stack_active", {{"stack", "stack"}}) == 0);
  first.child().Signal(SIGKILL);
  first.child().Wait();
  REQUIRE(Eventually([&] { return second.Stack()["role"] == "active"; }));
  REQUIRE(Eventually([&] { return second.Stack()["status"] == "ok"; }));
}

TEST_CASE("watch loads the manifests again on SIGHUP") {
  StackEnv e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  Watching w(e, {e.stack, "--interval", "1s"});
  REQUIRE(Eventually([&] { return w.Stack()["status"] == "ok"; }));
  WriteFile(e.stack + "/checks.yaml",
            "kind: check\nname: three\nassert:\n"
            "  - condition: ${length(instance.web) == 3}\n"
            "    error_message: want three web servers\n");
  w.child().Signal(SIGHUP);
  json failed = w.NextEvent("check_failed");
  REQUIRE(failed.is_object());
  CHECK(failed["check"] == "three");
  // A manifest that does not load: the stacks are watched as they were.
  WriteFile(e.stack + "/broken.yaml", "kind: network\nname: [\n");
  w.child().Signal(SIGHUP);
  REQUIRE(Eventually([&] {
    return w.child().Stderr().find("still watching the stacks as they were") != std::string::npos;
  }));
  CHECK(w.Stack()["status"] == "checks_failing");
}

TEST_CASE("watch refuses bad flags and stacks before it starts") {
  StackEnv e;
  auto interval = e.Cairn({"watch", e.stack, "--interval", "0s"});
  CHECK(interval.exit_code == 1);
  CHECK(interval.err.find("--interval must be at least 1s") != std::string::npos);
  auto listen = e.Cairn({"watch", e.stack, "--listen", "localhost"});
  CHECK(listen.exit_code == 1);
  CHECK(listen.err.find("HOST:PORT") != std::string::npos);
  auto hook = e.Cairn({"watch", e.stack, "--webhook", "ftp://x"});
  CHECK(hook.exit_code == 1);
  auto missing = e.Cairn({"watch", e.dir.path() + "/nowhere", "--once"});
  CHECK(missing.exit_code == 1);
  auto twice = e.Cairn({"watch", e.stack, e.stack + "/", "--once"});
  CHECK(twice.exit_code == 1);
  CHECK(twice.err.find("is given twice") != std::string::npos);
  WriteFile(e.stack + "/watch.yaml", "kind: watch\nremediate: always\ninterval: 1ms\n");
  auto bad = e.Cairn({"validate", e.stack});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("watch.yaml:2:12") != std::string::npos);
  CHECK(bad.err.find("remediate must be \"none\" or \"drift-only\"") != std::string::npos);
  CHECK(bad.err.find("interval must be at least 1s") != std::string::npos);
}

TEST_CASE("two watchers of one PostgreSQL state: failover when the active one is killed",
          "[.][postgres]") {
  StackEnv e;
  const std::string url = TestDatabaseUrl("watch_failover");
  e.env["CAIRN_TEST_WATCH_PG"] = url;
  WriteFile(e.stack + "/backend.yaml", "kind: backend\nname: watch-failover-" +
                                           std::to_string(getpid()) +
                                           "\ntype: postgres\nurl_env: CAIRN_TEST_WATCH_PG\n");
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  Watching first(e, {e.stack, "--interval", "1s"});
  REQUIRE(Eventually([&] { return first.Stack()["role"] == "active"; }));
  Watching second(e, {e.stack, "--interval", "1s"});
  REQUIRE(Eventually([&] { return second.Stack()["role"] == "standby"; }));
  CHECK(second.Stack()["lease_holder"].get<std::string>().find(
            "pid " + std::to_string(first.child().pid())) != std::string::npos);
  Rename(e, e.StateId("instance.web[0]"), "by-hand", "rename-pg");
  CHECK(first.NextEvent("drift_detected").is_object());
  first.child().Signal(SIGKILL);
  first.child().Wait();
  // Taken over within an interval or so, and the drift reported by the new one.
  REQUIRE(Eventually([&] { return second.Stack()["role"] == "active"; }));
  CHECK(second.NextEvent("drift_detected").is_object());
}

}  // namespace watch_command_test
