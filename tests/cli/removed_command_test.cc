// `kind: removed` end to end, through the real cairn against `cairn serve`:
// destroy false forgets (the object stays in the API, leaves the state),
// destroy true deletes; a removed that is still declared is refused.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/support/stack_env.h"

namespace removed_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

bool RemovedHas(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// BasicStack's key and network, and `rest` after them.
std::string RemovedStack(const std::string& rest) {
  std::string text = BasicStack();
  return text.substr(0, text.find("kind: instance")) + rest;
}

}  // namespace

TEST_CASE("kind: removed forgets with destroy false and deletes with destroy true") {
  StackEnv e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  const std::string web1_id = e.StateId("instance.web[1]");
  REQUIRE(e.Names("/api/v1/compute") == std::vector<std::string>{"web-0", "web-1"});

  // web[1] handed over: count 1, and a removed document that forgets [1].
  WriteFile(
      e.stack + "/main.yaml",
      BasicStack(1) + "---\nkind: removed\nfrom: instance.web[1]\nlifecycle:\n  destroy: false\n");
  auto plan = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(RemovedHas(plan.out, ". instance.web[1]   will no longer be managed (id " + web1_id + ")"));
  CHECK(RemovedHas(plan.out,
                   "Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy, 1 to "
                   "forget."));
  auto j = json::parse(e.Cairn({"plan", e.stack, "--json"}).out);
  CHECK(j["summary"]["forget"] == 1);
  CHECK(j["summary"]["destroy"] == 0);
  CHECK(j["forgets"] == json::parse(R"([{"address": "instance.web[1]", "kind": "instance",
                                         "remote_id": ")" +
                                    web1_id + R"("}])"));

  // Saved, shown to the reviewer, applied.
  const std::string saved = e.dir.path() + "/forget.plan";
  REQUIRE(e.Cairn({"plan", e.stack, "--out", saved}).exit_code == 0);
  auto shown = e.Cairn({"show", saved});
  INFO(shown.out << shown.err);
  CHECK(RemovedHas(shown.out, "will no longer be managed"));
  auto applied = e.Cairn({"apply", saved});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  CHECK(RemovedHas(applied.out, "0 destroyed, 1 forgotten"));
  // Gone from the state, still in the API.
  CHECK(e.Cairn({"state", "show", "instance.web[1]", e.stack}).exit_code == 1);
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-0", "web-1"});
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);

  // Declared again, it is refused where it is written.
  WriteFile(e.stack + "/main.yaml", BasicStack(2) + "---\nkind: removed\nfrom: instance.web[1]\n");
  auto bad = e.Cairn({"validate", e.stack});
  INFO(bad.err);
  CHECK(bad.exit_code == 1);
  CHECK(RemovedHas(bad.err, "main.yaml:25:7"));
  CHECK(RemovedHas(bad.err, "removed_still_declared"));

  // destroy true (the default): the rest deleted as if its document alone
  // were gone; web-1, no longer managed, stays.
  WriteFile(e.stack + "/main.yaml", RemovedStack("kind: removed\nfrom: instance.web\n"));
  auto deleting = e.Cairn({"plan", e.stack});
  INFO(deleting.out << deleting.err);
  CHECK(RemovedHas(deleting.out, "0 to destroy") == false);
  CHECK(RemovedHas(deleting.out, "1 to destroy"));
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-1"});
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);
}

}  // namespace removed_command_test
