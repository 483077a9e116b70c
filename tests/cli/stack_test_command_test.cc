// `cairn test` end to end: examples/testing against the throwaway server it
// starts itself; against a real `cairn serve` with --endpoint-from-env, a
// failing assertion, the runs after it skipped, and everything the file made
// destroyed anyway; --filter; JUnit XML; test files that do not load.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/support/stack_env.h"

namespace stack_test_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

namespace fs = std::filesystem;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

constexpr const char* kWrong =
    "kind: run\nname: dev_has_two_nodes\nvariables: {env: dev}\nassert:\n"
    "  - condition: ${length(volume.node) == 2}\n    error_message: dev runs two nodes\n---\n"
    "kind: run\nname: never_reached\nvariables: {env: prod}\n";

}  // namespace

TEST_CASE("cairn test: examples/testing passes against its own throwaway server") {
  TempDir dir;
  const std::string junit = dir.path() + "/tests.xml";
  auto r =
      RunCairn({"test", std::string(CAIRN_SOURCE_DIR) + "/examples/testing", "--junit-xml", junit},
               {{"CAIRN_ENDPOINT", ""}, {"CAIRN_TOKEN", ""}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(Has(r.out, "env.test.yaml: dev_has_one_node\n"));
  CHECK(Has(r.out, "  pass  "));
  CHECK(Has(r.out, "provisioning.test.yaml: prod_volumes_are_ready\n"));
  CHECK(Has(r.out, "4 passed, 0 failed, 0 skipped.\n"));
  CHECK(RunCommand({"/usr/bin/xmllint", "--noout", junit}).exit_code == 0);
  CHECK(Has(ReadFile(junit), "tests=\"4\" failures=\"0\""));

  auto one = RunCairn(
      {"test", std::string(CAIRN_SOURCE_DIR) + "/examples/testing", "--filter", "qa_is_refused"});
  CHECK(one.exit_code == 0);
  CHECK(Has(one.out, "1 passed, 0 failed, 0 skipped.\n"));
}

TEST_CASE("cairn test: a failed run skips the rest of its file, which is destroyed anyway") {
  StackEnv e;
  fs::remove_all(e.stack);
  fs::copy(std::string(CAIRN_SOURCE_DIR) + "/examples/testing", e.stack,
           fs::copy_options::recursive);
  WriteFile(e.stack + "/wrong.test.yaml", kWrong);
  const std::string junit = e.dir.path() + "/tests.xml";
  auto r = e.Cairn({"test", e.stack, "--endpoint-from-env", "--junit-xml", junit});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(Has(r.err, "warning: testing against " + e.server.base()));
  CHECK(Has(r.out, "  FAIL  " + e.stack + "/wrong.test.yaml: dev_has_two_nodes\n"));
  CHECK(Has(r.out, e.stack + "/wrong.test.yaml:5: dev runs two nodes\n"));
  CHECK(Has(r.out, "  skip  " + e.stack + "/wrong.test.yaml: never_reached\n"));
  CHECK(Has(r.out, "4 passed, 1 failed, 1 skipped.\n"));
  // The provisioning delay of a `kind: test` document is the throwaway
  // server's: said, not silently dropped.
  CHECK(Has(r.err, "provisioning.test.yaml: provision_delay applies to the throwaway server only"));
  // Both files applied resources on this server; none is left.
  CHECK(e.Names("/api/v1/storage").empty());
  CHECK(e.Names("/api/v1/networking").empty());
  // The stack's own state was never touched: the tests keep theirs apart.
  CHECK_FALSE(fs::exists(e.stack + "/.cairn/state.db"));
  CHECK(RunCommand({"/usr/bin/xmllint", "--noout", junit}).exit_code == 0);
  CHECK(Has(ReadFile(junit),
            "<failure message=\"" + e.stack + "/wrong.test.yaml:5: dev runs two nodes\">"));
  // The test files are not manifests.
  CHECK(e.Cairn({"validate", e.stack}).exit_code == 0);
}

TEST_CASE("cairn test: test files that do not load stop it before any run") {
  StackEnv e;
  WriteFile(e.stack + "/tests/bad.test.yaml",
            "kind: run\nname: x\ncomand: plan\nassert:\n  - condition: length(x)\n"
            "    error_message: m\n");
  auto r = e.Cairn({"test", e.stack});
  CHECK(r.exit_code == 1);
  CHECK(Has(r.err, "bad.test.yaml:3:1: error: unknown key \"comand\" in a run [unknown_field]"));
  CHECK(Has(r.err, "did you mean \"command\"?"));
  CHECK(Has(r.err, "bad.test.yaml:5:16: error: a condition is one expression, written ${...}"));
  CHECK(Has(r.err, "no test was run"));
  fs::remove_all(e.stack + "/tests");
  auto none = e.Cairn({"test", e.stack});
  CHECK(none.exit_code == 1);
  CHECK(Has(none.err, "no test files"));
}

TEST_CASE("cairn test: an override gives a data source fixed values for its file") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml",
            "kind: data\nname: shared\ntype: network\nfilter: {name: shared}\n---\n"
            "kind: firewall\nname: edge\nspec:\n  name: edge\n  rules:\n"
            "    - {direction: inbound, action: allow, protocol: tcp, port: \"443\", source: "
            "\"${data.network.shared.cidr}\"}\n");
  WriteFile(e.stack + "/tests/edge.test.yaml",
            "kind: override\ntarget: data.network.shared\nvalues: {id: net-x, cidr: "
            "10.9.0.0/16}\n---\n"
            "kind: run\nname: edge_admits_the_shared_network\nassert:\n"
            "  - condition: ${firewall.edge.rules[0].source == \"10.9.0.0/16\"}\n"
            "    error_message: the shared network is admitted\n");
  // No network named `shared` exists: without the override, the data
  // source could not be read at all.
  auto r = e.Cairn({"test", e.stack, "--endpoint-from-env"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(Has(r.out, "1 passed, 0 failed, 0 skipped.\n"));
  CHECK(e.Names("/v1/firewalls").empty());  // destroyed after the file

  WriteFile(e.stack + "/tests/edge.test.yaml",
            "kind: override\ntarget: data.network.other\nvalues: {cidr: 10.9.0.0/16}\n---\n"
            "kind: run\nname: wrong_target\n");
  auto wrong = e.Cairn({"test", e.stack, "--endpoint-from-env"});
  CHECK(wrong.exit_code == 1);
  CHECK(Has(wrong.out,
            "edge.test.yaml:2: the override's target data.network.other is no data source of the "
            "stack"));
}

// Two files of one stack whose volume must be ready within a second: one on
// a server with no provisioning delay, one whose `kind: test` document
// gives its server an hour. Only the second fails, so each file ran
// against a server of its own, with its own delay, in parallel or not.
TEST_CASE("cairn test: each file runs against a server of its own, with its delay, in parallel") {
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml",
            "kind: provider\ntimeouts: {create: 1, delete: 1, operation: 2}\n---\n"
            "kind: volume\nname: data\nspec: {name: data, region: eu-central, size_gb: 10}\n");
  WriteFile(stack + "/tests/fast.test.yaml",
            "kind: run\nname: makes_a_volume\nassert:\n"
            "  - condition: ${volume.data.size_gb == 10}\n    error_message: ten\n");
  WriteFile(stack + "/tests/slow.test.yaml",
            "kind: test\nprovision_delay: 1h\n---\nkind: run\nname: makes_a_volume_slowly\n");
  for (const char* parallelism : {"1", "2"}) {
    INFO("--parallelism " << parallelism);
    auto r = RunCairn({"test", stack, "--parallelism", parallelism},
                      {{"CAIRN_ENDPOINT", ""}, {"CAIRN_TOKEN", ""}});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(Has(r.out, "  pass  " + stack + "/tests/fast.test.yaml: makes_a_volume\n"));
    CHECK(Has(r.out, "  FAIL  " + stack + "/tests/slow.test.yaml: makes_a_volume_slowly\n"));
    CHECK(Has(r.out, "not running after 1s (status pending) [create_failed]"));
    CHECK(Has(r.out, "1 passed, 1 failed, 0 skipped.\n"));
    // A file's lines are printed together: none of the slow file's lines
    // sits between the fast file's.
    const size_t first_slow = r.out.find("slow.test.yaml");
    const size_t last_fast = r.out.rfind("fast.test.yaml");
    const size_t first_fast = r.out.find("fast.test.yaml");
    const size_t last_slow = r.out.rfind("slow.test.yaml");
    CHECK((last_fast < first_slow || last_slow < first_fast));
  }
  auto bad = RunCairn({"test", stack, "--parallelism", "0"});
  CHECK(bad.exit_code == 1);
  CHECK(Has(bad.err, "--parallelism must be at least 1"));
}

TEST_CASE("cairn test: --json prints one event a line, as the runs go") {
  StackEnv e;
  fs::remove_all(e.stack);
  fs::copy(std::string(CAIRN_SOURCE_DIR) + "/examples/testing", e.stack,
           fs::copy_options::recursive);
  WriteFile(e.stack + "/wrong.test.yaml", kWrong);
  auto r = e.Cairn({"test", e.stack, "--endpoint-from-env", "--json", "--parallelism", "2"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  std::vector<json> events;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) events.push_back(json::parse(line));
  REQUIRE(events.size() >= 3);
  CHECK(events.front()["type"] == "start");
  CHECK(events.front()["files"] == 3);
  CHECK(events.front()["endpoint"] == e.server.base());
  CHECK(events.back() ==
        json({{"type", "summary"}, {"passed", 4}, {"failed", 1}, {"skipped", 1}, {"ok", false}}));
  std::map<std::string, json> runs;
  std::map<std::string, int> started, files_done;
  for (const json& ev : events) {
    if (ev["type"] == "run") runs[ev["run"].get<std::string>()] = ev;
    if (ev["type"] == "run_start") ++started[ev["run"].get<std::string>()];
    if (ev["type"] == "file") ++files_done[ev["file"].get<std::string>()];
  }
  CHECK(runs.size() == 6);
  CHECK(runs["dev_has_two_nodes"]["status"] == "fail");
  CHECK(runs["dev_has_two_nodes"]["line"] == 2);
  CHECK(runs["dev_has_two_nodes"]["reasons"][0] ==
        e.stack + "/wrong.test.yaml:5: dev runs two nodes");
  CHECK(runs["never_reached"]["status"] == "skip");
  CHECK(started.count("never_reached") == 0);  // a skipped run never starts
  CHECK(runs["prod_has_three_nodes"]["status"] == "pass");
  CHECK(files_done.size() == 3);
  // Each run's event comes after its start, and its file's end after both.
  auto index = [&](const std::string& type, const std::string& key, const std::string& name) {
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i]["type"] == type && events[i][key] == name) return i;
    }
    return events.size();
  };
  const size_t run_start = index("run_start", "run", "dev_has_two_nodes");
  const size_t run_end = index("run", "run", "dev_has_two_nodes");
  const size_t skipped = index("run", "run", "never_reached");
  const size_t file_end = index("file", "file", e.stack + "/wrong.test.yaml");
  CHECK(run_start < run_end);
  CHECK(skipped < file_end);
  CHECK(file_end < events.size());
}

}  // namespace stack_test_command_test
