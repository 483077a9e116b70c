// `kind: import` documents end to end, through the real cairn against
// `cairn serve`: objects the state forgot ('cairn state rm') are imported
// back by plan and apply (alone, with an update, with for_each), a saved
// plan carries them, and `plan --generate-config` writes the manifests of
// what no document declares yet.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli/support/stack_env.h"

namespace import_documents_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

bool ImportHas(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// BasicStack, applied, then network.app forgotten by the state (it stays
// in the API): its id.
std::string ApplyThenForgetNetwork(StackEnv& e) {
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  const std::string id = e.StateId("network.app");
  REQUIRE(e.Cairn({"state", "rm", "network.app", e.stack}).exit_code == 0);
  return id;
}

}  // namespace

TEST_CASE("kind: import: the plan shows it and apply adopts it and the next plan is a no-op") {
  StackEnv e;
  const std::string id = ApplyThenForgetNetwork(e);
  WriteFile(e.stack + "/main.yaml",
            BasicStack() + "---\nkind: import\nto: network.app\nid: " + id + "\n");
  auto plan = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(ImportHas(plan.out, "<- network.app   will be imported (id " + id + ")"));
  CHECK(
      ImportHas(plan.out, "Plan: 1 to import, 0 to add, 0 to change, 0 to replace, 0 to destroy."));
  auto j = json::parse(e.Cairn({"plan", e.stack, "--json"}).out);
  CHECK(j["summary"]["import"] == 1);
  REQUIRE(j["imports"].size() == 1);
  CHECK(j["imports"][0]["address"] == "network.app");
  CHECK(j["imports"][0]["remote_id"] == id);

  // Saved, shown to the reviewer, applied.
  const std::string saved = e.dir.path() + "/import.plan";
  REQUIRE(e.Cairn({"plan", e.stack, "--out", saved}).exit_code == 0);
  auto shown = e.Cairn({"show", saved});
  INFO(shown.out << shown.err);
  CHECK(ImportHas(shown.out, "will be imported (id " + id + ")"));
  auto applied = e.Cairn({"apply", saved});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  CHECK(ImportHas(applied.out, "Resources: 1 imported, 0 added, 0 changed"));
  CHECK(e.StateId("network.app") == id);
  // The document stays, and does nothing more.
  auto again = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"app"});
}

TEST_CASE("kind: import with an update the manifest asks and with for_each") {
  StackEnv e;
  const std::string net = ApplyThenForgetNetwork(e);
  const std::string web0 = e.StateId("instance.web[0]");
  const std::string web1 = e.StateId("instance.web[1]");
  REQUIRE(e.Cairn({"state", "rm", "instance.web", e.stack}).exit_code == 0);
  // The network renamed in the manifest: imported and updated in one plan;
  // both instances imported by one document, their count indexes from
  // each.value.
  std::string stack = BasicStack();
  const std::string declared = "spec: {region: eu-central, cidr: 10.30.0.0/16}";
  stack.replace(stack.find(declared), declared.size(),
                "spec: {name: app-renamed, region: eu-central, cidr: 10.30.0.0/16}");
  WriteFile(e.stack + "/main.yaml",
            stack + "---\nkind: import\nto: network.app\nid: " + net +
                "\n---\nkind: import\nfor_each: {first: 0, second: 1}\n"
                "to: instance.web[each.value]\nid: '${each.key == \"first\" ? \"" +
                web0 + "\" : \"" + web1 + "\"}'\n");
  auto plan = e.Cairn({"plan", e.stack});
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(ImportHas(plan.out, "<- instance.web[0]"));
  CHECK(ImportHas(plan.out, "<- instance.web[1]"));
  CHECK(ImportHas(plan.out, "~ network.app"));
  CHECK(ImportHas(plan.out, "Plan: 3 to import, 0 to add, 1 to change, 0 to replace"));
  auto applied = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  CHECK(ImportHas(applied.out, "3 imported, 0 added, 1 changed"));
  CHECK(e.StateId("instance.web[1]") == web1);
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"app-renamed"});
}

TEST_CASE("kind: import of an id that names nothing or of an undeclared address is refused") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml",
            BasicStack() + "---\nkind: import\nto: network.app\nid: no-such-network\n");
  auto plan = e.Cairn({"plan", e.stack});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 1);
  CHECK(ImportHas(plan.err,
                  "main.yaml:26:5: error: there is no network with id "
                  "no-such-network to import to network.app [import_not_found]"));
  WriteFile(e.stack + "/main.yaml", BasicStack() + "---\nkind: import\nto: network.other\nid: x\n");
  auto bad = e.Cairn({"validate", e.stack});
  INFO(bad.err);
  CHECK(bad.exit_code == 1);
  CHECK(ImportHas(bad.err,
                  "main.yaml:25:5: error: network.other is not a resource instance "
                  "the manifests declare [import_to_undeclared]"));
  CHECK(ImportHas(bad.err, "--generate-config"));
}

TEST_CASE("plan --generate-config writes the manifests and the next plan is a pure import") {
  StackEnv e;
  const std::string id = ApplyThenForgetNetwork(e);
  const std::string adopt = e.dir.path() + "/adopt";
  WriteFile(adopt + "/imports.yaml", "kind: import\nto: network.legacy\nid: " + id + "\n");
  auto plan = e.Cairn({"plan", adopt, "--generate-config", "generated.yaml"});
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(ImportHas(plan.out, "Wrote 1 manifest to " + adopt + "/generated.yaml"));
  CHECK(ImportHas(plan.out, "<- network.legacy   will be imported (id " + id + ")"));
  CHECK(ImportHas(plan.out, "Plan: 1 to import, 0 to add, 0 to change, 0 to replace"));
  const std::string written = ReadFile(adopt + "/generated.yaml");
  INFO(written);
  CHECK(ImportHas(written, "kind: network\nname: legacy\n"));
  CHECK(ImportHas(written, "cidr: \"10.30.0.0/16\""));
  CHECK(ImportHas(written, "name: \"app\""));  // the live name: no update follows
  CHECK_FALSE(ImportHas(written, "status"));   // computed: not written

  // Refused once the file exists; refused without it when not declared.
  auto twice = e.Cairn({"plan", adopt, "--generate-config", "generated.yaml"});
  CHECK(twice.exit_code == 1);
  CHECK(ImportHas(twice.err, "generated.yaml exists"));
  auto applied = e.Cairn({"apply", adopt, "--auto-approve"});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  CHECK(ImportHas(applied.out, "1 imported, 0 added, 0 changed"));
  CHECK(e.Cairn({"plan", adopt, "--detailed-exitcode"}).exit_code == 0);

  std::filesystem::remove(adopt + "/generated.yaml");
  auto undeclared = e.Cairn({"validate", adopt});
  CHECK(undeclared.exit_code == 1);
  CHECK(ImportHas(undeclared.err, "[import_to_undeclared]"));
}

TEST_CASE("plan --generate-config is in plan's help and shell completion and man page") {
  auto help = RunCairn({"plan", "--help"});
  CHECK(ImportHas(help.out, "--generate-config FILE"));
  auto bash = RunCairn({"completion", "bash"});
  REQUIRE(bash.exit_code == 0);
  CHECK(ImportHas(bash.out, "--generate-config"));
  TempDir dir;
  REQUIRE(RunCairn({"man", "--dir", dir.path() + "/man"}).exit_code == 0);
  CHECK(ImportHas(ReadFile(dir.path() + "/man/cairn-plan.1"), "\\-\\-generate\\-config"));
}

}  // namespace import_documents_command_test
