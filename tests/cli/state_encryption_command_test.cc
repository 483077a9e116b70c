// Encrypted state as users meet it: the real `cairn` binary against a real
// `cairn serve` on loopback, the state in a real SQLite file. A sensitive
// variable used in a resource's field is in no byte of the state database
// (nor its WAL) with `encryption` set, and is there without (the control);
// a wrong or missing key is a clear error; `cairn state rekey` encrypts an
// existing state, rotates keys and decrypts again.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace state_encryption_command_test {

using namespace cairn::testing;

constexpr const char* kSecret = "hunter2-secret-value";
constexpr const char* kKey = "7d3c1a0f9e8b2c4d6a5f7e1b3c9d0a2f4e6b8c1d3a5f7e9b2c4d6a8f0e1b3c5d";
constexpr const char* kNewKey = "1f2e3d4c5b6a79880f1e2d3c4b5a69781f2e3d4c5b6a79880f1e2d3c4b5a6978";

std::string Resources() {
  return std::string("kind: variable\nname: s\ntype: string\nsensitive: true\ndefault: ") +
         kSecret +
         "\n---\n"
         "kind: network\nname: app\nspec: {name: \"net-${var.s}\", region: eu-central, cidr: "
         "10.30.0.0/16}\n---\n"
         "kind: output\nname: o\nsensitive: true\nvalue: ${var.s}\n";
}

std::string Backend(const std::string& encryption) {
  return "kind: backend\nencryption: " + encryption + "\n";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Env {
  ServeFixture server;
  TempDir dir;
  std::string stack;
  std::string state;
  std::map<std::string, std::string> env;

  Env() {
    stack = dir.path() + "/stack";
    state = stack + "/.cairn/state.db";
    env = {{"CAIRN_ENDPOINT", server.base()},
           {"CAIRN_TOKEN", kDevToken},
           {"NO_COLOR", "1"},
           {"CAIRN_STATE_KEY", kKey}};
    WriteFile(stack + "/main.yaml", Resources());
  }
  // Empty: no backend document.
  void SetBackend(const std::string& encryption) {
    if (encryption.empty()) {
      std::filesystem::remove(stack + "/backend.yaml");
    } else {
      WriteFile(stack + "/backend.yaml", Backend(encryption));
    }
  }
  CommandResult Cairn(std::vector<std::string> args) { return RunCairn(args, env); }
  // The database, its WAL and shared memory, as a reader of the disk sees them.
  std::string StateBytes() const {
    return ReadAll(state) + ReadAll(state + "-wal") + ReadAll(state + "-shm");
  }
  void Apply() {
    auto r = Cairn({"apply", stack, "--auto-approve"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK((r.out + r.err).find(kSecret) == std::string::npos);
  }
  // A plan that finds the state complete: nothing to change.
  void PlanNoChanges() {
    auto r = Cairn({"plan", stack, "--detailed-exitcode"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
  }
};

TEST_CASE("state encryption: a sensitive value is in no byte of an encrypted state") {
  for (bool encrypted : {false, true}) {
    INFO("encrypted " << encrypted);
    Env e;
    e.SetBackend(encrypted ? "{key_env: CAIRN_STATE_KEY}" : "");
    // Through a saved plan, as CI does: the plan file is sealed too.
    const std::string planfile = e.dir.path() + "/web.plan";
    const std::string html = e.dir.path() + "/web.html";
    auto plan = e.Cairn({"plan", e.stack, "--out", planfile, "--html", html});
    INFO(plan.out << plan.err);
    REQUIRE(plan.exit_code == 0);
    CHECK((ReadAll(planfile).find(kSecret) != std::string::npos) == !encrypted);
    CHECK(ReadAll(html).find(kSecret) == std::string::npos);
    auto apply = e.Cairn({"apply", planfile});
    INFO(apply.out << apply.err);
    REQUIRE(apply.exit_code == 0);
    CHECK((apply.out + apply.err).find(kSecret) == std::string::npos);
    CHECK((e.StateBytes().find(kSecret) != std::string::npos) == !encrypted);
    e.PlanNoChanges();
    auto shown = e.Cairn({"state", "show", "network.app", e.stack});
    INFO(shown.err);
    REQUIRE(shown.exit_code == 0);
    auto out = e.Cairn({"output", "o", e.stack, "--show-sensitive"});
    INFO(out.err);
    CHECK(out.out == std::string(kSecret) + "\n");
  }
}

TEST_CASE("state encryption: a wrong or missing key is a clear error and changes nothing") {
  Env e;
  e.SetBackend("{key_env: CAIRN_STATE_KEY}");
  e.Apply();
  const std::string before = ReadAll(e.state);

  e.env["CAIRN_STATE_KEY"] = kNewKey;
  for (const char* command : {"plan", "apply", "state"}) {
    std::vector<std::string> args{command, e.stack};
    if (std::string(command) == "apply") args.push_back("--auto-approve");
    if (std::string(command) == "state") args = {"state", "list", e.stack};
    auto r = e.Cairn(args);
    INFO(command << "\n" << r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("wrong key") != std::string::npos);
    CHECK(r.err.find("environment variable CAIRN_STATE_KEY") != std::string::npos);
    CHECK((r.out + r.err).find(kNewKey) == std::string::npos);
    CHECK((r.out + r.err).find(kKey) == std::string::npos);
    CHECK(r.err.find("bad decrypt") == std::string::npos);
  }
  e.env.erase("CAIRN_STATE_KEY");
  auto missing = e.Cairn({"plan", e.stack});
  INFO(missing.err);
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("environment variable CAIRN_STATE_KEY is not set") != std::string::npos);
  CHECK(ReadAll(e.state) == before);

  e.env["CAIRN_STATE_KEY"] = kKey;
  e.PlanNoChanges();
}

TEST_CASE("state encryption: a saved plan opens only with its key") {
  Env e;
  e.SetBackend("{key_env: CAIRN_STATE_KEY}");
  const std::string planfile = e.dir.path() + "/web.plan";
  auto plan = e.Cairn({"plan", e.stack, "--out", planfile});
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  const std::string sealed = ReadAll(planfile);
  CHECK(sealed.find("\"encrypted\"") != std::string::npos);
  CHECK(sealed.find("CAIRN_STATE_KEY") != std::string::npos);  // the key's source, not the key
  CHECK(sealed.find(kKey) == std::string::npos);

  e.env["CAIRN_STATE_KEY"] = kNewKey;
  auto wrong = e.Cairn({"apply", planfile});
  INFO(wrong.out << wrong.err);
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("the saved plan " + planfile) != std::string::npos);
  CHECK(wrong.err.find("wrong key") != std::string::npos);
  CHECK((wrong.out + wrong.err).find(kNewKey) == std::string::npos);
  e.env.erase("CAIRN_STATE_KEY");
  auto missing = e.Cairn({"apply", planfile});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("environment variable CAIRN_STATE_KEY is not set") != std::string::npos);
  // A sealed plan is a plan: --out replaces it without --force.
  e.env["CAIRN_STATE_KEY"] = kKey;
  auto again = e.Cairn({"plan", e.stack, "--out", planfile});
  INFO(again.err);
  CHECK(again.exit_code == 0);
  auto apply = e.Cairn({"apply", planfile});
  INFO(apply.out << apply.err);
  CHECK(apply.exit_code == 0);
  auto shown = e.Cairn({"show", planfile});
  INFO(shown.err);
  CHECK(shown.exit_code != 1);
}

TEST_CASE("state encryption: rekey encrypts a state, rotates its key and decrypts it") {
  Env e;
  e.Apply();
  REQUIRE(e.StateBytes().find(kSecret) != std::string::npos);

  // Turning encryption on: refused until the state is migrated.
  e.SetBackend("{key_env: CAIRN_STATE_KEY}");
  auto refused = e.Cairn({"plan", e.stack});
  INFO(refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("cairn state rekey") != std::string::npos);
  auto migrate = e.Cairn({"state", "rekey", e.stack});
  INFO(migrate.out << migrate.err);
  REQUIRE(migrate.exit_code == 0);
  CHECK(migrate.out.find("the state was unencrypted, it is now encrypted under key id") !=
        std::string::npos);
  CHECK(e.StateBytes().find(kSecret) == std::string::npos);
  e.PlanNoChanges();

  // Rotation: the new key, the old one as fallback, then rekey.
  e.env["CAIRN_NEW_KEY"] = kNewKey;
  e.SetBackend("{key_env: CAIRN_NEW_KEY, fallback: {key_env: CAIRN_STATE_KEY}}");
  e.PlanNoChanges();
  auto rotate = e.Cairn({"state", "rekey", e.stack});
  INFO(rotate.out << rotate.err);
  REQUIRE(rotate.exit_code == 0);
  e.SetBackend("{key_env: CAIRN_NEW_KEY}");
  e.env.erase("CAIRN_STATE_KEY");
  e.PlanNoChanges();
  CHECK(e.StateBytes().find(kSecret) == std::string::npos);

  // Back to plaintext: unencrypted, the old key as fallback.
  e.SetBackend("{unencrypted: true, fallback: {key_env: CAIRN_NEW_KEY}}");
  auto off = e.Cairn({"plan", e.stack});
  CHECK(off.exit_code == 1);
  CHECK(off.err.find("cairn state rekey") != std::string::npos);
  auto decrypt = e.Cairn({"state", "rekey", e.stack});
  INFO(decrypt.out << decrypt.err);
  REQUIRE(decrypt.exit_code == 0);
  CHECK(decrypt.out.find("it is now unencrypted") != std::string::npos);
  e.SetBackend("");
  e.PlanNoChanges();
  CHECK(e.StateBytes().find(kSecret) != std::string::npos);
}

TEST_CASE("state encryption: a stack data source reads an encrypted state with its key") {
  Env e;
  e.SetBackend("{key_env: CAIRN_STATE_KEY}");
  WriteFile(e.stack + "/out.yaml", "kind: output\nname: region\nvalue: eu-central\n");
  e.Apply();
  const std::string app = e.dir.path() + "/app";
  auto reader = [&](const std::string& backend) {
    WriteFile(app + "/main.yaml",
              "kind: data\nname: net\ntype: stack\ndir: ../stack\n" + backend +
                  "---\nkind: output\nname: r\nvalue: ${data.stack.net.outputs.region}\n");
  };
  reader("");
  auto refused = e.Cairn({"plan", app});
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("the state is encrypted") != std::string::npos);
  reader("backend: {encryption: {key_env: CAIRN_STATE_KEY}}\n");
  auto read = e.Cairn({"plan", app});
  INFO(read.out << read.err);
  CHECK(read.exit_code == 0);
  CHECK(read.out.find("eu-central") != std::string::npos);
}

TEST_CASE("state encryption: the backend setting is checked as it is loaded") {
  Env e;
  e.SetBackend("{key_env: 1bad, key_file: x}");
  auto both = e.Cairn({"validate", e.stack});
  INFO(both.err);
  CHECK(both.exit_code == 1);
  CHECK(both.err.find("encryption needs exactly one of key_env and key_file") != std::string::npos);
  e.SetBackend("{unencrypted: true}");
  auto no_fallback = e.Cairn({"validate", e.stack});
  CHECK(no_fallback.exit_code == 1);
  CHECK(no_fallback.err.find("needs the old key as fallback") != std::string::npos);
  e.SetBackend("{key_env: CAIRN_STATE_KEY, fallback: {key_env: OLD}, colour: blue}");
  auto unknown = e.Cairn({"validate", e.stack});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("unknown field \"colour\" in encryption") != std::string::npos);
}

}  // namespace state_encryption_command_test
