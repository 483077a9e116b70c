// The state commands (state list|show|mv|rm|pull|push, import, force-unlock)
// as users run them: the real `cairn` binary against a real `cairn serve` on
// loopback, state in a real SQLite file.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/state/sqlite_state_store.h"
#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

extern char** environ;

namespace state_commands_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

constexpr const char* kKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g t@cairn";

// A key, a network, `count` instances on it and a for_each network pair.
std::string Stack(int instances = 2) {
  return std::string("kind: ssh_key\nname: deploy\nspec: {public_key: \"") + kKey +
         "\"}\n---\n"
         "kind: network\nname: app\nspec: {region: eu-central, cidr: 10.30.0.0/16}\n---\n"
         "kind: instance\nname: web\ncount: " +
         std::to_string(instances) +
         "\nspec:\n  name: web-${count.index}\n  region: eu-central\n  plan: s-1vcpu-1gb\n"
         "  image: debian-12\n  network: ${network.app.id}\n  ssh_keys: "
         "[\"${ssh_key.deploy.id}\"]\n"
         "---\nkind: output\nname: ips\nvalue: ${instance.web[*].ipv4}\n";
}

struct Env {
  ServeFixture server;
  TempDir dir;
  std::string stack;
  std::map<std::string, std::string> env;

  Env() {
    stack = dir.path() + "/stack";
    WriteFile(stack + "/main.yaml", Stack());
    env = {{"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  }
  CommandResult Cairn(std::vector<std::string> args, const std::string& stdin_text = "") {
    return RunCairn(args, env, stdin_text);
  }
  std::string StateId(const std::string& address) {
    auto r = Cairn({"state", "show", address, stack});
    INFO(address << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out)["id"];
  }
  // The addresses `cairn state list` prints, in its order.
  std::vector<std::string> List() {
    auto r = Cairn({"state", "list", stack});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> out;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
      out.push_back(line.substr(0, line.find("  ")));
    return out;
  }
  void Apply() {
    auto r = Cairn({"apply", stack, "--auto-approve"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  }
  // `cairn plan --detailed-exitcode`: 0 when the state matches manifests and API.
  int PlanExit() {
    auto r = Cairn({"plan", stack, "--detailed-exitcode"});
    if (r.exit_code != 0) WARN(r.out << r.err);
    return r.exit_code;
  }
};

// Runs cairn with a pseudo-terminal as its stdin, stdout and stderr, as a
// user at a shell would, and types `answer` and Enter once it asks ("Only
// 'yes' will be accepted"). Returns the exit code and everything it printed.
CommandResult RunInTerminal(const std::vector<std::string>& args, const std::string& answer) {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  REQUIRE(master >= 0);
  REQUIRE(grantpt(master) == 0);
  REQUIRE(unlockpt(master) == 0);
  const std::string terminal = ptsname(master);
  // Everything the child needs is built before fork: it only calls
  // async-signal-safe functions.
  std::vector<std::string> argv{CairnBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> envs{"NO_COLOR=1"};
  for (char** e = environ; *e != nullptr; ++e) envs.push_back(*e);
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  for (auto& v : envs) cenv.push_back(v.data());
  cargv.push_back(nullptr);
  cenv.push_back(nullptr);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setsid();  // the terminal opened next becomes the controlling one
    int fd = open(terminal.c_str(), O_RDWR);
    if (fd < 0) _exit(126);
    dup2(fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    if (fd > 2) close(fd);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  CommandResult result;
  bool answered = false;
  char buf[4096];
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 30000) <= 0) break;
    ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: the child closed the terminal
    result.out.append(buf, static_cast<size_t>(n));
    if (!answered && result.out.find("Only 'yes' will be accepted") != std::string::npos) {
      const std::string line = answer + "\n";
      REQUIRE(write(master, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
      answered = true;
    }
  }
  close(master);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace

TEST_CASE("import takes --var and --var-file for the manifests it loads") {
  Env e;
  WriteFile(e.stack + "/main.yaml",
            "kind: variable\nname: cidr\ntype: string\n---\n"
            "kind: network\nname: app\nspec: {region: eu-central, cidr: \"${var.cidr}\"}\n");
  auto client = e.server.Client();
  auto made = client->Post("/api/v1/networking",
                           {{"name", "app"}, {"region", "eu-central"}, {"cidr", "10.30.0.0/16"}},
                           "import-var-made");
  REQUIRE(made.status == 201);
  std::string id = made.json()["network"]["publicId"];

  // Without a value the manifests do not load, and nothing is imported.
  auto missing = e.Cairn({"import", "network.app", id, e.stack});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("variable \"cidr\" has no value") != std::string::npos);

  auto r = e.Cairn({"import", "network.app", id, e.stack, "--var", "cidr=10.30.0.0/16"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(e.StateId("network.app") == id);
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode", "--var", "cidr=10.30.0.0/16"}).exit_code ==
        0);

  // --var-file too: forget it, then import it again with the value from a file.
  REQUIRE(e.Cairn({"state", "rm", "network.app", e.stack}).exit_code == 0);
  WriteFile(e.dir.path() + "/vars.yaml", "cidr: 10.30.0.0/16\n");
  auto from_file =
      e.Cairn({"import", "--var-file", e.dir.path() + "/vars.yaml", "network.app", id, e.stack});
  INFO(from_file.err);
  REQUIRE(from_file.exit_code == 0);
  CHECK(e.StateId("network.app") == id);
}

TEST_CASE("state commands take --var for a backend setting that uses a variable") {
  Env e;
  WriteFile(e.stack + "/backend.yaml",
            "kind: variable\nname: state_file\ntype: string\n---\n"
            "kind: backend\ntype: sqlite\npath: ${var.state_file}\n");
  auto applied =
      e.Cairn({"apply", e.stack, "--auto-approve", "--var", "state_file=custom/state.db"});
  INFO(applied.err);
  REQUIRE(applied.exit_code == 0);
  auto list = e.Cairn({"state", "list", e.stack, "--var", "state_file=custom/state.db"});
  INFO(list.err);
  REQUIRE(list.exit_code == 0);
  CHECK(list.out.find("instance.web[1]") != std::string::npos);
  CHECK(e.Cairn({"state", "show", "network.app", "--var", "state_file=custom/state.db", e.stack})
            .exit_code == 0);
}

TEST_CASE("state mv moves a whole count or for_each resource in one commit, and back") {
  Env e;
  const std::string zones =
      "---\nkind: network\nname: zone\nfor_each: {a: 10.40.0.0/16, b: 10.41.0.0/16}\n"
      "spec: {name: \"zone-${each.key}\", region: eu-central, cidr: \"${each.value}\"}\n";
  WriteFile(e.stack + "/main.yaml", Stack() + zones);
  e.Apply();
  const std::string web0 = e.StateId("instance.web[0]"), zone_a = e.StateId("network.zone[\"a\"]");
  auto serial = [&] { return json::parse(e.Cairn({"state", "pull", e.stack}).out)["serial"]; };
  const int64_t before = serial();

  // The command's own --help example: every instance, keeping its index.
  auto mv = e.Cairn({"state", "mv", "instance.web", "instance.app", e.stack});
  INFO(mv.out << mv.err);
  REQUIRE(mv.exit_code == 0);
  CHECK(mv.out.find("Moved instance.web[0] to instance.app[0].") != std::string::npos);
  CHECK(mv.out.find("Moved instance.web[1] to instance.app[1].") != std::string::npos);
  CHECK(serial() == before + 1);  // one commit for both
  CHECK(e.StateId("instance.app[0]") == web0);
  CHECK(e.StateId("instance.app[00]") == web0);  // any spelling of the address
  auto zone = e.Cairn({"state", "mv", "network.zone", "network.area", e.stack});
  INFO(zone.out << zone.err);
  REQUIRE(zone.exit_code == 0);
  CHECK(e.StateId("network.area[\"a\"]") == zone_a);
  CHECK(e.List() == std::vector<std::string>{"instance.app[0]", "instance.app[1]", "network.app",
                                             "network.area[\"a\"]", "network.area[\"b\"]",
                                             "ssh_key.deploy"});

  // Renamed in the manifests too: nothing to do.
  std::string renamed = Stack() + zones;
  renamed.replace(renamed.find("name: web\n"), 10, "name: app\n");
  renamed.replace(renamed.find("instance.web[*]"), 15, "instance.app[*]");
  renamed.replace(renamed.find("name: zone\n"), 11, "name: area\n");
  WriteFile(e.stack + "/main.yaml", renamed);
  CHECK(e.PlanExit() == 0);

  // A single resource into an index (it gained a count) and back.
  auto in = e.Cairn({"state", "mv", "ssh_key.deploy", "ssh_key.deploy[0]", e.stack});
  INFO(in.err);
  REQUIRE(in.exit_code == 0);
  CHECK(in.out.find("Moved ssh_key.deploy to ssh_key.deploy[0].") != std::string::npos);
  auto out = e.Cairn({"state", "mv", "ssh_key.deploy[0]", "ssh_key.deploy", e.stack});
  INFO(out.err);
  REQUIRE(out.exit_code == 0);
  CHECK(e.PlanExit() == 0);

  // A whole resource cannot go into one index.
  auto into_index = e.Cairn({"state", "mv", "instance.app", "instance.other[0]", e.stack});
  CHECK(into_index.exit_code == 1);
  CHECK(into_index.err.find("without an index (instance.other)") != std::string::npos);
  // What depended on a moved address now names the new one (destroy orders by it).
  auto net = e.Cairn({"state", "mv", "network.app", "network.spare[\"b\"]", e.stack});
  INFO(net.err);
  REQUIRE(net.exit_code == 0);
  auto shown = json::parse(e.Cairn({"state", "show", "instance.app[1]", e.stack}).out);
  CHECK(shown["depends_on"] == json::array({"network.spare[\"b\"]", "ssh_key.deploy"}));

  // A destination that exists refuses the whole move: area["a"] could go, area["b"] cannot.
  const auto listed = e.List();
  auto conflict = e.Cairn({"state", "mv", "network.area", "network.spare", e.stack});
  CHECK(conflict.exit_code == 1);
  CHECK(conflict.err.find("nothing was moved: network.spare[\"b\"] is already in the state") !=
        std::string::npos);
  CHECK(e.List() == listed);
  // Addresses that are not addresses, another kind, or nothing to move.
  CHECK(e.Cairn({"state", "mv", "network.area", "ssh_key.area", e.stack}).exit_code == 1);
  auto absent = e.Cairn({"state", "mv", "instance.web", "instance.x", e.stack});
  CHECK(absent.exit_code == 1);
  CHECK(absent.err.find("instance.web is not in the state") != std::string::npos);
  CHECK(e.Cairn({"state", "mv", "instance.app[", "instance.x", e.stack}).exit_code == 1);
}

TEST_CASE("state commands on a stack without state say so and create nothing") {
  Env e;
  auto nothing_created = [&] {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(e.stack)) {
      files.push_back(entry.path().lexically_relative(e.stack).string());
    }
    return files == std::vector<std::string>{"main.yaml"};
  };
  auto list = e.Cairn({"state", "list", e.stack});
  CHECK(list.exit_code == 0);
  CHECK(list.out.empty());
  CHECK(list.err.find("has no state yet") != std::string::npos);
  CHECK(nothing_created());

  auto show = e.Cairn({"state", "show", "network.app", e.stack});
  CHECK(show.exit_code == 1);
  CHECK(show.err.find("network.app is not in the state") != std::string::npos);
  CHECK(nothing_created());

  auto pull = e.Cairn({"state", "pull", e.stack});
  CHECK(pull.exit_code == 1);
  CHECK(pull.out.empty());
  CHECK(pull.err.find("has no state yet") != std::string::npos);
  CHECK(nothing_created());

  CHECK(e.Cairn({"state", "rm", "network.app", e.stack}).exit_code == 1);
  CHECK(e.Cairn({"state", "mv", "network.app", "network.core", e.stack}).exit_code == 1);
  auto unlock = e.Cairn({"force-unlock", "7c9e6679-7425-40de-944b-e07fc1f90ae7", e.stack});
  CHECK(unlock.exit_code == 1);
  CHECK(unlock.err.find("no state lock with ID") != std::string::npos);
  CHECK(nothing_created());

  // A backend path in a directory of its own: not made either.
  WriteFile(e.stack + "/backend.yaml", "kind: backend\ntype: sqlite\npath: states/prod.db\n");
  CHECK(e.Cairn({"state", "list", e.stack}).exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(e.stack + "/states"));
}

TEST_CASE("state pull prints the state exactly, and state push restores it after it was lost") {
  Env e;
  // A sensitive variable's value reaches the state (the network's name): the
  // redactor would print [REDACTED] for it, and a backup would restore that.
  std::string text = Stack();
  const std::string plain = "spec: {region: eu-central, cidr: 10.30.0.0/16}";
  text.replace(text.find(plain), plain.size(),
               "spec: {name: \"${var.net_name}\", region: eu-central, cidr: 10.30.0.0/16}");
  WriteFile(e.stack + "/main.yaml",
            "kind: variable\nname: net_name\nsensitive: true\ndefault: private-net-name-42\n---\n" +
                text);
  e.Apply();
  auto pull = e.Cairn({"state", "pull", e.stack});
  INFO(pull.err);
  REQUIRE(pull.exit_code == 0);
  CHECK(pull.out.find("\"name\": \"private-net-name-42\"") != std::string::npos);
  CHECK(pull.out.find("REDACTED") == std::string::npos);
  CHECK(pull.out.find(kDevToken) == std::string::npos);
  const json backup = json::parse(pull.out);
  CHECK(backup["format_version"] == 1);
  CHECK(backup["resources"].size() == 4);
  CHECK(backup["sequence"].get<int64_t>() >= 4);  // one per create
  const std::string file = e.dir.path() + "/backup.json";
  WriteFile(file, pull.out);

  // The state file is lost: the next plan would create everything again.
  std::filesystem::remove_all(e.stack + "/.cairn");
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 2);
  auto push = e.Cairn({"state", "push", file, e.stack});
  INFO(push.out << push.err);
  REQUIRE(push.exit_code == 0);
  CHECK(push.out.find("Pushed " + file + " to the state: 4 resource(s), 1 output(s)") !=
        std::string::npos);
  CHECK(e.PlanExit() == 0);
  const json restored = json::parse(e.Cairn({"state", "pull", e.stack}).out);
  CHECK(restored["lineage"] == backup["lineage"]);
  CHECK(restored["resources"] == backup["resources"]);
  CHECK(restored["outputs"] == backup["outputs"]);
  CHECK(restored["serial"].get<int64_t>() > backup["serial"].get<int64_t>());
  CHECK(restored["sequence"] == backup["sequence"]);  // no idempotency key is handed out twice

  // From stdin too, into the same state (same lineage, same serial as pulled).
  auto again = e.Cairn({"state", "push", "-", e.stack}, json(restored).dump());
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK(e.PlanExit() == 0);
}

TEST_CASE("state push refuses what is not a pulled state, and a newer state unless forced") {
  Env e;
  e.Apply();
  const std::string file = e.dir.path() + "/backup.json";
  auto pulled = e.Cairn({"state", "pull", e.stack});
  REQUIRE(pulled.exit_code == 0);
  WriteFile(file, pulled.out);
  const json backup = json::parse(pulled.out);

  // Not a pulled state: a saved plan, other JSON, no JSON, a resource that is wrong.
  const std::string plan_file = e.dir.path() + "/web.plan";
  REQUIRE(e.Cairn({"plan", e.stack, "--out", plan_file}).exit_code == 0);
  json bad_kind = backup;
  bad_kind["resources"][0]["kind"] = "network";  // at instance.web[0]
  json bad_address = backup;
  bad_address["resources"][0]["address"] = "instance.web[00]";
  json unknown_kind = backup;
  unknown_kind["resources"][0]["kind"] = "bucket";
  unknown_kind["resources"][0]["address"] = "bucket.b";
  json twice = backup;
  twice["resources"].push_back(backup["resources"][0]);
  json newer = backup;
  newer["format_version"] = 2;
  int n = 0;
  for (const std::string& content :
       {ReadFile(plan_file), std::string("{}"), std::string("not json"), bad_kind.dump(),
        bad_address.dump(), unknown_kind.dump(), twice.dump(), newer.dump()}) {
    const std::string bad = e.dir.path() + "/bad" + std::to_string(n++) + ".json";
    WriteFile(bad, content);
    auto r = e.Cairn({"state", "push", bad, e.stack, "--force"});
    INFO(content.substr(0, 200) << "\n" << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("error: " + bad) != std::string::npos);
  }
  CHECK(e.Cairn({"state", "push", e.dir.path() + "/missing.json", e.stack}).exit_code == 1);
  CHECK(e.List().size() == 4);

  // The state changed after the pull (everything forgotten): refused unless --force.
  for (const char* a : {"instance.web[0]", "instance.web[1]", "network.app", "ssh_key.deploy"}) {
    REQUIRE(e.Cairn({"state", "rm", a, e.stack}).exit_code == 0);
  }
  auto stale = e.Cairn({"state", "push", file, e.stack});
  CHECK(stale.exit_code == 1);
  CHECK(stale.err.find("is newer than " + file) != std::string::npos);
  CHECK(e.List().empty());
  auto forced = e.Cairn({"state", "push", file, e.stack, "--force"});
  INFO(forced.err);
  REQUIRE(forced.exit_code == 0);
  CHECK(e.List().size() == 4);
  CHECK(e.PlanExit() == 0);

  // Another lineage, operations in flight and a state never written:
  // CheckPush's unit tests (tests/engine/operations/state_push_test.cc).

  // The state lock is taken: a holder keeps the push out.
  auto store = cairn::SqliteStateStore::Open(e.stack + "/.cairn/state.db");
  REQUIRE(store.ok());
  auto lock = (*store)->Lock("apply", std::chrono::milliseconds(0));
  REQUIRE(lock.ok());
  auto locked = e.Cairn({"state", "push", file, e.stack, "--force"});
  CHECK(locked.exit_code == 1);
  CHECK(locked.err.find("state is locked by") != std::string::npos);
  REQUIRE((*store)->Unlock(lock->id).ok());
}

TEST_CASE("force-unlock asks before releasing the lock of a holder that still runs") {
  Env e;
  e.Apply();
  const std::string db = e.stack + "/.cairn/state.db";
  auto store = cairn::SqliteStateStore::Open(db);
  REQUIRE(store.ok());
  auto locked = [&] {
    auto held = (*store)->CurrentLock();
    REQUIRE(held.ok());
    return held->has_value();
  };
  // This test process holds the lock: it runs, on this host.
  auto lock = (*store)->Lock("apply", std::chrono::milliseconds(0));
  REQUIRE(lock.ok());
  const std::string me = " pid " + std::to_string(getpid()) + " ";

  auto refused = e.Cairn({"force-unlock", lock->id, e.stack});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("still running on this host") != std::string::npos);
  CHECK(refused.err.find(me) != std::string::npos);
  CHECK(refused.err.find("(operation apply since ") != std::string::npos);
  CHECK(refused.err.find("--force") != std::string::npos);
  CHECK(locked());

  // On a terminal it asks, naming the holder; anything but "yes" keeps the lock.
  auto no = RunInTerminal({"force-unlock", lock->id, e.stack}, "no");
  INFO(no.out);
  CHECK(no.exit_code == 1);
  CHECK(no.out.find("still running on this host") != std::string::npos);
  CHECK(no.out.find(me) != std::string::npos);
  CHECK(no.out.find("Cancelled: nothing was changed.") != std::string::npos);
  CHECK(locked());
  auto yes = RunInTerminal({"force-unlock", lock->id, e.stack}, "yes");
  INFO(yes.out);
  CHECK(yes.exit_code == 0);
  CHECK(yes.out.find("Released the state lock " + lock->id) != std::string::npos);
  CHECK_FALSE(locked());

  // --force releases it without asking, with a warning naming the holder.
  lock = (*store)->Lock("state rm", std::chrono::milliseconds(0));
  REQUIRE(lock.ok());
  auto forced = e.Cairn({"force-unlock", lock->id, e.stack, "--force"});
  CHECK(forced.exit_code == 0);
  CHECK(forced.err.find("warning: the state lock " + lock->id) != std::string::npos);
  CHECK_FALSE(locked());

  // A wrong ID names what holds the lock instead.
  lock = (*store)->Lock("apply", std::chrono::milliseconds(0));
  REQUIRE(lock.ok());
  auto wrong = e.Cairn({"force-unlock", "00000000-0000-4000-8000-000000000000", e.stack});
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("with lock ID " + lock->id) != std::string::npos);
  REQUIRE((*store)->Unlock(lock->id).ok());
}

TEST_CASE("force-unlock releases a dead holder's lock without asking") {
  Env e;
  e.Apply();
  const std::string db = e.stack + "/.cairn/state.db";
  // A child takes the lock and exits without releasing it (as after a kill -9).
  int ids[2];
  REQUIRE(pipe(ids) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto s = cairn::SqliteStateStore::Open(db);
    if (!s.ok()) _exit(3);
    auto l = (*s)->Lock("apply", std::chrono::milliseconds(0));
    if (!l.ok()) _exit(4);
    (void)!write(ids[1], l->id.data(), l->id.size());
    _exit(0);
  }
  close(ids[1]);
  char buf[64] = {};
  ssize_t n = read(ids[0], buf, sizeof buf);
  close(ids[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(n == 36);
  const std::string id(buf, 36);

  auto r = e.Cairn({"force-unlock", id, e.stack});  // no terminal, no --force
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Released the state lock " + id + " held by ") != std::string::npos);
  CHECK(r.out.find(" pid " + std::to_string(pid) + " ") != std::string::npos);
  CHECK(e.PlanExit() == 0);
}

TEST_CASE("state push checks the whole state, a diagnostic per problem, and pushes nothing") {
  Env e;
  e.Apply();
  auto pulled = e.Cairn({"state", "pull", e.stack});
  REQUIRE(pulled.exit_code == 0);
  json broken = json::parse(pulled.out);
  std::string app_id;
  for (json& r : broken["resources"]) {
    // The network depends on an instance that depends on it: destroy could
    // not order them.
    if (r["address"] == "network.app") {
      r["depends_on"] = {"instance.web[0]"};
      app_id = r["id"];
    }
    if (r["address"] == "ssh_key.deploy") r["depends_on"] = {"volume.gone"};
    if (r["address"] == "instance.web[1]") r["id"] = "../networking";
  }
  json copy = broken["resources"][0];  // instance.web[0]'s object, at a second address
  copy["address"] = "instance.copy";
  broken["resources"].push_back(copy);
  const std::string file = e.dir.path() + "/broken.json";
  WriteFile(file, broken.dump(2));
  auto r = e.Cairn({"state", "push", file, e.stack, "--force"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  for (const char* code :
       {"[dependency_cycle]", "[unknown_depends_on]", "[invalid_id]", "[duplicate_id]"}) {
    CHECK(r.err.find(code) != std::string::npos);
  }
  CHECK(r.err.find("depends_on entries form a cycle: instance.web[0] -> network.app -> "
                   "instance.web[0]") != std::string::npos);
  CHECK(r.err.find("instance.web[1]: \"../networking\" is not an id") != std::string::npos);
  CHECK(r.err.find("ssh_key.deploy depends on volume.gone, which the state does not record") !=
        std::string::npos);
  CHECK(r.err.find("instance.copy: instance ") != std::string::npos);
  CHECK(r.err.find("is tracked at instance.web[0] already") != std::string::npos);
  // Each at the resource it is about, in the file.
  CHECK(r.err.find(file + ":") != std::string::npos);
  CHECK(r.err.find("(4 problems above); nothing was pushed") != std::string::npos);
  CHECK(e.List().size() == 4);
  CHECK(e.PlanExit() == 0);
  // A stack without a state gets none from a refused push.
  const std::string fresh = e.dir.path() + "/fresh";
  WriteFile(fresh + "/main.yaml", Stack());
  CHECK(e.Cairn({"state", "push", file, fresh}).exit_code == 1);
  CHECK_FALSE(std::filesystem::exists(fresh + "/.cairn"));
}

TEST_CASE("one remote object has one address: import and state mv refuse a second, naming it") {
  Env e;
  WriteFile(e.stack + "/more.yaml",
            "kind: network\nname: other\nspec: {region: eu-central, cidr: 10.31.0.0/16}\n");
  auto created = e.Cairn({"apply", e.stack, "--auto-approve", "--target", "network.app"});
  REQUIRE(created.exit_code == 0);
  const std::string app_id = e.StateId("network.app");
  auto imported = e.Cairn({"import", "network.other", app_id, e.stack});
  INFO(imported.out << imported.err);
  CHECK(imported.exit_code == 1);
  CHECK(imported.err.find("network.other: network " + app_id +
                          " is tracked at network.app already") != std::string::npos);
  CHECK(imported.err.find("nothing was imported") != std::string::npos);
  CHECK(e.List() == std::vector<std::string>{"network.app"});

  // A state that tracks it twice already (written before this was refused):
  // state mv gives it no further address.
  {
    auto store = cairn::SqliteStateStore::Open(e.stack + "/.cairn/state.db");
    REQUIRE(store.ok());
    auto st = (*store)->Load();
    REQUIRE(st.ok());
    cairn::ResourceState twin = st->resources.at("network.app");
    twin.address = "network.twin";
    REQUIRE((*store)->Commit({.put = {twin}}).ok());
  }
  auto moved = e.Cairn({"state", "mv", "network.twin", "network.other", e.stack});
  INFO(moved.err);
  CHECK(moved.exit_code == 1);
  CHECK(moved.err.find("network.other: network " + app_id + " is tracked at network.app already") !=
        std::string::npos);
  CHECK(moved.err.find("nothing was moved") != std::string::npos);
  CHECK(e.List() == std::vector<std::string>{"network.app", "network.twin"});
  // Removing the stale one is the way out; then a move is a move.
  REQUIRE(e.Cairn({"state", "rm", "network.twin", e.stack}).exit_code == 0);
  CHECK(e.Cairn({"state", "mv", "network.app", "network.other", e.stack}).exit_code == 0);
}

}  // namespace state_commands_test
