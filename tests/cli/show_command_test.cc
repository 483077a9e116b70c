// `cairn show`: the state as a readable document and a saved plan as the
// plan text, both through a real `cairn serve`, with sensitive values
// masked; and what it refuses.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/support/stack_env.h"

namespace show_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The basic stack, with a sensitive variable in a network's name and a
// sensitive output.
std::string SecretStack() {
  std::string text = BasicStack(1);
  text.replace(text.find("spec: {region: eu-central, cidr: 10.30.0.0/16}"),
               std::string("spec: {region: eu-central, cidr: 10.30.0.0/16}").size(),
               "spec: {name: \"app-${var.suffix}\", region: eu-central, cidr: 10.30.0.0/16}");
  return text +
         "---\nkind: variable\nname: suffix\ntype: string\nsensitive: true\ndefault: "
         "hunter2secret\n---\nkind: output\nname: secret\nsensitive: true\nvalue: ${var.suffix}\n";
}

}  // namespace

TEST_CASE("cairn show: the state, every resource and output, sensitive values masked") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml", SecretStack());
  auto none = e.Cairn({"show", e.stack});
  CHECK(none.exit_code == 0);
  CHECK(Has(none.err, "has no state yet"));
  auto applied = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);

  auto r = e.Cairn({"show", e.stack});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(Has(r.out, ": serial "));
  CHECK(Has(r.out, "3 resources.\n"));
  CHECK(Has(r.out, "\n# instance.web[0] (instance, id " + e.StateId("instance.web[0]") + ")\n"));
  CHECK(Has(r.out, "  depends on: network.app ssh_key.deploy\n"));
  CHECK(Has(r.out, "  name       = \"web-0\"\n"));
  CHECK(Has(r.out, "\n# network.app (network, id "));
  CHECK(Has(r.out, "\nOutputs:\n"));
  CHECK(Has(r.out, "  secret = (sensitive)\n"));
  // The network's name holds the sensitive variable's value: masked too.
  CHECK(Has(r.out, "  name       = (sensitive)\n"));
  CHECK_FALSE(Has(r.out, "hunter2secret"));

  auto j = e.Cairn({"show", e.stack, "--json"});
  REQUIRE(j.exit_code == 0);
  const json state = json::parse(j.out);
  CHECK(state["resources"].size() == 3);
  CHECK(state["resources"][0]["address"] == "instance.web[0]");
  CHECK(state["resources"][1]["attributes"]["name"] == "(sensitive)");
  CHECK(state["outputs"]["secret"] == json({{"value", "(sensitive)"}, {"sensitive", true}}));
  CHECK(state["outputs"]["ips"]["sensitive"] == false);
  CHECK_FALSE(Has(j.out, "hunter2secret"));
}

TEST_CASE("cairn show: a saved plan as cairn plan printed it, for the reviewer") {
  StackEnv e;
  WriteFile(e.stack + "/main.yaml", SecretStack());
  const std::string saved = e.dir.path() + "/ci.plan";
  auto planned = e.Cairn({"plan", e.stack, "--out", saved});
  REQUIRE(planned.exit_code == 0);
  auto r = e.Cairn({"show", saved});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(Has(r.out, "Saved plan " + saved + ", made in "));
  CHECK(Has(r.out, "against state serial 0:\n"));
  CHECK(Has(r.out, "Plan: 3 to add, 0 to change, 0 to replace, 0 to destroy."));
  CHECK(Has(r.out, "+ instance.web[0]"));
  CHECK_FALSE(Has(r.out, "hunter2secret"));
  // The same text as the plan printed, after its header.
  CHECK(Has(planned.out, r.out.substr(r.out.find(":\n\n") + 3, 200)));

  auto j = e.Cairn({"show", saved, "--json"});
  REQUIRE(j.exit_code == 0);
  const json plan = json::parse(j.out);
  CHECK(plan["changes"].size() == 3);
  CHECK_FALSE(plan.contains("variables"));  // the saved plan keeps them; the reader does not
  CHECK_FALSE(Has(j.out, "hunter2secret"));
  // Showing changed nothing: the plan still applies.
  CHECK(e.Cairn({"apply", saved}).exit_code == 0);

  // A file that is no saved plan is refused, saying what it is.
  WriteFile(e.dir.path() + "/notes.txt", "hello\n");
  auto bad = e.Cairn({"show", e.dir.path() + "/notes.txt"});
  CHECK(bad.exit_code == 1);
  CHECK(Has(bad.err, "is neither a stack directory nor a saved plan"));
  // Nor is a FIFO read (it would block), nor applied.
  const std::string fifo = e.dir.path() + "/plan.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (const char* command : {"show", "apply"}) {
    auto r = e.Cairn({command, fifo});
    CHECK(r.exit_code == 1);
    CHECK(Has(r.err, "is neither a stack directory nor a saved plan: a FIFO"));
  }
}

}  // namespace show_command_test
