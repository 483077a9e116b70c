// Outputs shared between stacks, as users meet them: the real `cairn`
// binary against a real `cairn serve`, two stacks with their own SQLite
// states. The network stack is applied; the app stack reads its outputs
// through a `type: stack` data source (its instances' network, their count
// from a list output), a sensitive output stays masked, and reading takes
// neither the other stack's lock nor anything but its state.
#include <catch2/catch.hpp>

#include "engine/state/sqlite_state_store.h"
#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace stack_data_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

constexpr const char* kSecret = "db-pass-9f3e1c";

struct TwoStacks {
  ServeFixture server;
  TempDir dir;
  std::string network, app;
  std::map<std::string, std::string> env;

  TwoStacks() {
    network = dir.path() + "/network";
    app = dir.path() + "/app";
    env = {{"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
    WriteFile(network + "/main.yaml",
              std::string("kind: network\nname: main\nspec: {name: shared, region: eu-central, "
                          "cidr: 10.40.0.0/16}\n---\n"
                          "kind: output\nname: network_id\nvalue: ${network.main.id}\n---\n"
                          "kind: output\nname: zones\nvalue: [a, b]\n---\n"
                          "kind: variable\nname: pw\nsensitive: true\ndefault: ") +
                  kSecret +
                  "\n---\n"
                  "kind: output\nname: db_password\nsensitive: true\nvalue: ${var.pw}\n");
    WriteFile(app + "/main.yaml",
              "kind: data\nname: net\ntype: stack\ndir: ../network\n---\n"
              "kind: instance\nname: web\nfor_each: ${toset(data.stack.net.outputs.zones)}\n"
              "spec:\n  name: web-${each.key}\n  region: eu-central\n  plan: s-1vcpu-1gb\n"
              "  image: debian-12\n  network: ${data.stack.net.outputs.network_id}\n---\n"
              "kind: output\nname: pw\nsensitive: true\n"
              "value: ${data.stack.net.outputs.db_password}\n");
  }
  CommandResult Cairn(std::vector<std::string> args) { return RunCairn(args, env); }
};

}  // namespace

TEST_CASE("a stack reads another stack's outputs and builds on them") {
  TwoStacks s;
  // Before the network stack exists, the app stack says so and sends nothing.
  auto early = s.Cairn({"plan", s.app});
  INFO(early.out << early.err);
  CHECK(early.exit_code == 1);
  CHECK(early.err.find("error: data.stack.net: the stack has no state to read outputs from "
                       "[stack_not_found]") != std::string::npos);

  auto net = s.Cairn({"apply", s.network, "--auto-approve"});
  INFO(net.out << net.err);
  REQUIRE(net.exit_code == 0);
  auto id = s.Cairn({"output", "network_id", s.network});
  REQUIRE(id.exit_code == 0);
  const std::string network_id = id.out.substr(0, id.out.find('\n'));
  REQUIRE(network_id.size() >= 32);

  auto plan = s.Cairn({"plan", s.app});
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  // One instance per zone the other stack recorded, on its network.
  CHECK(plan.out.find("+ instance.web[\"a\"]   create") != std::string::npos);
  CHECK(plan.out.find("+ instance.web[\"b\"]   create") != std::string::npos);
  CHECK(plan.out.find(network_id) != std::string::npos);
  CHECK((plan.out + plan.err).find(kSecret) == std::string::npos);

  // The network stack's lock is not taken: held here, as by an apply of
  // that stack running, the app stack still plans.
  {
    auto store = cairn::SqliteStateStore::Open(cairn::SqliteStateStore::DefaultPath(s.network));
    REQUIRE(store.ok());
    auto lock = (*store)->Lock("apply", std::chrono::milliseconds(0));
    REQUIRE(lock.ok());
    auto locked = s.Cairn({"apply", s.network, "--auto-approve"});
    CHECK(locked.exit_code != 0);  // the lock is held indeed
    auto again = s.Cairn({"plan", s.app, "--detailed-exitcode"});
    INFO(again.out << again.err);
    CHECK(again.exit_code == 2);  // changes, no error
    CHECK((*store)->Unlock(lock->id).ok());
  }

  auto apply = s.Cairn({"apply", s.app, "--auto-approve"});
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  CHECK((apply.out + apply.err).find(kSecret) == std::string::npos);
  auto pw = s.Cairn({"output", s.app});
  CHECK(pw.out.find("pw = (sensitive)") != std::string::npos);
  CHECK(pw.out.find(kSecret) == std::string::npos);
  auto shown = s.Cairn({"output", "pw", s.app, "--show-sensitive"});
  CHECK(shown.out == std::string(kSecret) + "\n");
  // Made on the network the other stack made.
  auto list = s.Cairn({"state", "show", "instance.web[\"a\"]", s.app});
  CHECK(list.out.find(network_id) != std::string::npos);
}

}  // namespace stack_data_command_test
