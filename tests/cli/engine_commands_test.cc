// The engine commands as users run them: the real `cairn` binary against a
// real `cairn serve` on loopback, state in a real SQLite file.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/state/sqlite_state_store.h"
#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace engine_commands_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

constexpr const char* kKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g t@cairn";

std::string Stack(int instances = 2, const std::string& plan = "s-1vcpu-1gb") {
  return std::string("kind: ssh_key\nname: deploy\nspec: {public_key: \"") + kKey +
         "\"}\n---\n"
         "kind: network\nname: app\nspec: {region: eu-central, cidr: 10.30.0.0/16}\n---\n"
         "kind: instance\nname: web\ncount: " +
         std::to_string(instances) +
         "\nspec:\n  name: web-${count.index}\n  region: eu-central\n  plan: " + plan +
         "\n  image: debian-12\n  network: ${network.app.id}\n  ssh_keys: "
         "[\"${ssh_key.deploy.id}\"]\n"
         "---\nkind: output\nname: ips\nvalue: ${instance.web[*].ipv4}\n";
}

struct Env {
  ServeFixture server;
  TempDir dir;
  std::string stack;
  std::map<std::string, std::string> env;

  explicit Env(std::vector<std::string> serve_args = {}) : server(std::move(serve_args)) {
    stack = dir.path() + "/stack";
    WriteFile(stack + "/main.yaml", Stack());
    env = {{"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  }
  CommandResult Cairn(std::vector<std::string> args, const std::string& stdin_text = "") {
    return RunCairn(args, env, stdin_text);
  }
  // Names of live resources behind a list route, all pages.
  std::vector<std::string> Names(const std::string& route) {
    auto client = server.Client();
    std::vector<std::string> names;
    std::string cursor;
    for (;;) {
      auto r = client->Get(route + "?limit=200" + (cursor.empty() ? "" : "&cursor=" + cursor));
      REQUIRE(r.status == 200);
      json j = r.json();
      for (const auto& item : j["data"]) names.push_back(item["name"]);
      const json& p = j["pagination"];
      std::string next;
      for (const char* field : {"next_cursor", "next"}) {
        if (p.contains(field) && p[field].is_string()) next = p[field];
      }
      if (next.empty() || (p.contains("has_more") && !p["has_more"].get<bool>())) break;
      cursor = next;
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string StateId(const std::string& address) {
    auto r = Cairn({"state", "show", address, stack});
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out)["id"];
  }
};

}  // namespace

TEST_CASE("plan on an empty state shows the creates, --detailed-exitcode, --json and --markdown") {
  Env e;
  auto r = e.Cairn({"plan", e.stack});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("  + instance.web[0]") != std::string::npos);
  CHECK(r.out.find("Plan: 4 to add, 0 to change, 0 to replace, 0 to destroy.") !=
        std::string::npos);
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 2);
  auto j = json::parse(e.Cairn({"plan", e.stack, "--json"}).out);
  CHECK(j["format_version"] == 6);
  CHECK(j["summary"]["add"] == 4);
  CHECK(e.Cairn({"plan", e.stack, "--markdown"}).out.find("| create | `network.app` |") !=
        std::string::npos);
  // Planning changed nothing.
  CHECK(e.Names("/api/v1/compute").empty());
}

TEST_CASE("apply refuses without a terminal or --auto-approve and changes nothing") {
  Env e;
  auto r = e.Cairn({"apply", e.stack});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("--auto-approve") != std::string::npos);
  CHECK(e.Names("/api/v1/compute").empty());
  CHECK(e.Names("/v1/ssh_keys").empty());
}

TEST_CASE("apply creates everything once, prints outputs, and a second plan has nothing to do") {
  Env e;
  auto r = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Apply complete! Resources: 4 added, 0 changed, 0 replaced, 0 destroyed.") !=
        std::string::npos);
  CHECK(r.out.find("ips = [\"") != std::string::npos);
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-0", "web-1"});
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"app"});
  CHECK(e.Names("/v1/ssh_keys") == std::vector<std::string>{"deploy"});
  auto again = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("No changes.") != std::string::npos);
  // The token never reaches the state file.
  std::ifstream db(e.stack + "/.cairn/state.db", std::ios::binary);
  std::stringstream bytes;
  bytes << db.rdbuf();
  CHECK(bytes.str().find(kDevToken) == std::string::npos);
}

TEST_CASE("an update in place, then a saved plan applied exactly, then refused once stale") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  WriteFile(e.stack + "/main.yaml", Stack(2, "s-2vcpu-4gb"));
  std::string planfile = e.dir.path() + "/web.plan";
  auto p = e.Cairn({"plan", e.stack, "--out", planfile});
  REQUIRE(p.exit_code == 0);
  CHECK(p.out.find("~ plan: \"s-1vcpu-1gb\" -> \"s-2vcpu-4gb\"") != std::string::npos);
  // A second saved plan, made at the same serial, will be stale after the first is applied.
  std::string stale = e.dir.path() + "/stale.plan";
  REQUIRE(e.Cairn({"plan", e.stack, "--out", stale}).exit_code == 0);

  auto a = e.Cairn({"apply", planfile});
  INFO(a.out << a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out.find("2 changed") != std::string::npos);
  auto client = e.server.Client();
  auto inst = client->Get("/api/v1/compute/" + e.StateId("instance.web[0]")).json();
  CHECK(inst["instance"]["planKey"] == "s-2vcpu-4gb");

  auto s = e.Cairn({"apply", stale});
  CHECK(s.exit_code == 1);
  CHECK(s.err.find("stale") != std::string::npos);
}

TEST_CASE("a saved plan applies wherever its stack is checked out, and nowhere else") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  // Planned in one checkout (as a CI job does), from inside it.
  WriteFile(e.stack + "/main.yaml", Stack(2, "s-2vcpu-4gb"));
  auto p = RunCairn({"plan", "--out", "../ci.plan"}, e.env, "", e.stack);
  INFO(p.out << p.err);
  REQUIRE(p.exit_code == 0);
  // The checkout moves (its state with it): applied from inside the new one.
  const std::string ci2 = e.dir.path() + "/ci2";
  std::filesystem::rename(e.stack, ci2);
  auto moved = RunCairn({"apply", "../ci.plan"}, e.env, "", ci2);
  INFO(moved.out << moved.err);
  REQUIRE(moved.exit_code == 0);
  CHECK(moved.out.find("2 changed") != std::string::npos);

  // PLAN DIR, from elsewhere; refused while DIR's manifests differ, naming the file.
  WriteFile(ci2 + "/main.yaml", Stack(2, "s-1vcpu-1gb"));
  REQUIRE(RunCairn({"plan", "--out", "../two.plan"}, e.env, "", ci2).exit_code == 0);
  WriteFile(ci2 + "/extra.yaml",
            "kind: ssh_key\nname: more\nspec: {public_key: \"" + std::string(kKey) + "\"}\n");
  auto differs = RunCairn({"apply", "two.plan", "ci2"}, e.env, "", e.dir.path());
  CHECK(differs.exit_code == 1);
  CHECK(differs.err.find("two.plan: ci2 is not the stack the plan was made for: its manifests "
                         "differ from those planned: extra.yaml added") != std::string::npos);
  std::filesystem::remove(ci2 + "/extra.yaml");
  // Without DIR, from a directory holding no stack, where it was made is used.
  auto here = RunCairn({"apply", "two.plan"}, e.env, "", e.dir.path());
  INFO(here.out << here.err);
  REQUIRE(here.exit_code == 0);
  CHECK(here.out.find("2 changed") != std::string::npos);

  // Neither here nor where it was made: asks for DIR.
  WriteFile(ci2 + "/main.yaml", Stack(2, "s-2vcpu-4gb"));
  REQUIRE(RunCairn({"plan", "--out", "../three.plan"}, e.env, "", ci2).exit_code == 0);
  std::filesystem::rename(ci2, e.dir.path() + "/ci3");
  auto lost = RunCairn({"apply", "three.plan"}, e.env, "", e.dir.path());
  CHECK(lost.exit_code == 1);
  CHECK(lost.err.find("no directory holds the stack the plan was made for (the current directory "
                      "holds no manifests; " +
                      ci2 +
                      ", where it was made, is gone): give its directory, 'cairn apply "
                      "PLAN DIR'") != std::string::npos);
  auto given = RunCairn({"apply", "three.plan", "ci3"}, e.env, "", e.dir.path());
  INFO(given.out << given.err);
  CHECK(given.exit_code == 0);
  // A directory is not a plan: two of them are refused.
  auto two_dirs = e.Cairn({"apply", e.dir.path() + "/ci3", e.dir.path()});
  CHECK(two_dirs.exit_code == 1);
  CHECK(two_dirs.err.find("'cairn apply PLAN DIR'") != std::string::npos);
  // A plan of the format before is refused, saying what to do.
  json old = json::parse(ReadFile(e.dir.path() + "/three.plan"));
  old["format_version"] = 2;
  WriteFile(e.dir.path() + "/old.plan", old.dump());
  auto refused = e.Cairn({"apply", e.dir.path() + "/old.plan", e.dir.path() + "/ci3"});
  CHECK(refused.exit_code == 1);
  CHECK(
      refused.err.find("plan format version 2 is not supported (this cairn reads versions 3 to 6): "
                       "make the plan again") != std::string::npos);
}

TEST_CASE("apply refuses the output of plan --json, whose sensitive values are redacted") {
  Env e;
  std::string text = Stack(1);
  text.replace(text.find("name: web-${count.index}"), 24, "name: web-${var.suffix}");
  text =
      "kind: variable\nname: suffix\ntype: string\nsensitive: true\ndefault: s3cr3t-suffix\n---\n" +
      text;
  WriteFile(e.stack + "/main.yaml", text);
  auto printed = e.Cairn({"plan", e.stack, "--json"});
  REQUIRE(printed.exit_code == 0);
  CHECK(printed.out.find("s3cr3t-suffix") == std::string::npos);
  std::string jsonfile = e.dir.path() + "/plan.json";
  WriteFile(jsonfile, printed.out);
  auto refused = e.Cairn({"apply", jsonfile, "--auto-approve"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("plan --json") != std::string::npos);
  CHECK(refused.err.find("cairn plan --out FILE") != std::string::npos);
  CHECK(e.Names("/api/v1/compute").empty());
  CHECK(e.Names("/v1/ssh_keys").empty());

  // The saved plan carries the real value.
  std::string planfile = e.dir.path() + "/web.plan";
  REQUIRE(e.Cairn({"plan", e.stack, "--out", planfile}).exit_code == 0);
  auto a = e.Cairn({"apply", planfile});
  INFO(a.out << a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-s3cr3t-suffix"});
}

TEST_CASE("a saved plan keeps the --var values it was made with") {
  Env e;
  std::string text = Stack(1, "${var.size}");
  text = "kind: variable\nname: size\ntype: string\n---\n" + text;  // no default
  WriteFile(e.stack + "/main.yaml", text);
  std::string planfile = e.dir.path() + "/sized.plan";
  auto p = e.Cairn({"plan", e.stack, "--var", "size=s-2vcpu-4gb", "--out", planfile});
  INFO(p.out << p.err);
  REQUIRE(p.exit_code == 0);
  // Without the plan, the variable must be given.
  auto missing = e.Cairn({"plan", e.stack});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("variable \"size\" has no value") != std::string::npos);

  // Values given again would compete with the plan's: refused.
  auto twice = e.Cairn({"apply", planfile, "--var", "size=s-1vcpu-1gb"});
  CHECK(twice.exit_code == 1);
  CHECK(twice.err.find("cannot be given with a saved plan") != std::string::npos);

  // The environment is not refused, but a value it would change is named.
  e.env["CAIRN_VAR_size"] = "s-1vcpu-1gb";
  auto a = e.Cairn({"apply", planfile});  // no --var
  INFO(a.out << a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(a.err.find("CAIRN_VAR_size is not used") != std::string::npos);
  auto client = e.server.Client();
  auto list = client->Get("/api/v1/compute?limit=200").json();
  REQUIRE(list["data"].size() == 1);
  CHECK(list["data"][0]["name"] == "web-0");
  CHECK(list["data"][0]["planKey"] == "s-2vcpu-4gb");
}

TEST_CASE("state commands need only the variables the backend settings use") {
  Env e;
  std::string text = "kind: variable\nname: size\ntype: string\n---\n" + Stack(1, "${var.size}");
  WriteFile(e.stack + "/main.yaml", text);
  auto applied = e.Cairn({"apply", e.stack, "--auto-approve", "--var", "size=s-1vcpu-1gb"});
  REQUIRE(applied.exit_code == 0);
  // The resources need "size"; listing the state does not.
  auto list = e.Cairn({"state", "list", e.stack});
  INFO(list.err);
  REQUIRE(list.exit_code == 0);
  CHECK(list.out.find("instance.web[0]") != std::string::npos);
  CHECK(e.Cairn({"state", "show", "network.app", e.stack}).exit_code == 0);
  // A plan does need it, and so does drift (the manifests say which fields
  // are ignored, which objects the stack reads).
  CHECK(e.Cairn({"plan", e.stack}).exit_code == 1);
  CHECK(e.Cairn({"drift", e.stack}).exit_code == 1);
  CHECK(e.Cairn({"drift", e.stack, "--var", "size=s-1vcpu-1gb"}).exit_code == 0);

  // A variable the backend settings use is still required, where it is used.
  WriteFile(e.stack + "/backend.yaml",
            "kind: variable\nname: state_file\ntype: string\n---\n"
            "kind: backend\ntype: sqlite\npath: ${var.state_file}\n");
  auto missing = e.Cairn({"state", "list", e.stack});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("variable \"state_file\" has no value") != std::string::npos);
  CHECK(missing.err.find("backend.yaml:7:9: error: variable \"state_file\" has no value") !=
        std::string::npos);
}

TEST_CASE("changing an immutable field replaces, naming the field") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  std::string old_id = e.StateId("network.app");
  std::string text = Stack();
  text.replace(text.find("10.30.0.0/16"), 12, "10.31.0.0/16");
  WriteFile(e.stack + "/main.yaml", text);
  auto p = e.Cairn({"plan", e.stack});
  CHECK(p.out.find("-/+ network.app") != std::string::npos);
  CHECK(p.out.find("replace (cidr forces replacement)") != std::string::npos);
  auto a = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(a.out << a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(e.StateId("network.app") != old_id);
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"app"});
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-0", "web-1"});
}

TEST_CASE("refresh sees a resource deleted outside Cairn, --refresh=false trusts the state") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  auto client = e.server.Client();
  std::string key_id = e.StateId("ssh_key.deploy");
  REQUIRE(client->Delete("/v1/ssh_keys/" + key_id, "out-of-band-delete").status / 100 == 2);
  auto with = e.Cairn({"plan", e.stack});
  CHECK(with.out.find("deleted outside Cairn") != std::string::npos);
  auto without = e.Cairn({"plan", e.stack, "--refresh=false", "--detailed-exitcode"});
  CHECK(without.exit_code == 0);
}

TEST_CASE("a --target plan holds only the target and its dependencies") {
  Env e;
  auto r = e.Cairn({"plan", e.stack, "--target", "network.app", "--json"});
  REQUIRE(r.exit_code == 0);
  auto j = json::parse(r.out);
  REQUIRE(j["changes"].size() == 1);
  CHECK(j["changes"][0]["address"] == "network.app");
}

TEST_CASE("exclusions, target patterns and target files: everything but what is left alone") {
  Env e;
  auto addresses = [](const std::string& out) {
    std::set<std::string> a;
    const json plan = json::parse(out);
    for (const auto& c : plan["changes"]) a.insert(c["address"].get<std::string>());
    return a;
  };
  auto r = e.Cairn({"plan", e.stack, "--exclude", "instance.web[*]", "--json"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(addresses(r.out) == std::set<std::string>{"network.app", "ssh_key.deploy"});
  auto t = e.Cairn({"plan", e.stack, "--target", "instance.web[*]", "--json"});
  REQUIRE(t.exit_code == 0);
  CHECK(addresses(t.out).count("instance.web[1]") == 1);

  // One address or pattern a line; blank lines and comments skipped.
  WriteFile(e.dir.path() + "/keep.txt", "# not yet\n\n  instance.web[*]  \n");
  auto a =
      e.Cairn({"apply", e.stack, "--exclude-file", e.dir.path() + "/keep.txt", "--auto-approve"});
  INFO(a.out << a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(e.Names("/api/v1/compute").empty());
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"app"});

  WriteFile(e.dir.path() + "/targets.txt", "instance.web[1]\n");
  auto one =
      e.Cairn({"apply", e.stack, "--target-file", e.dir.path() + "/targets.txt", "--auto-approve"});
  REQUIRE(one.exit_code == 0);
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-1"});

  // Misuse: both at once, a file that cannot be read, a pattern naming
  // nothing, and a saved plan given targets it could not honour.
  auto both = e.Cairn({"plan", e.stack, "--target", "network.app", "--exclude", "ssh_key.deploy"});
  CHECK(both.exit_code == 1);
  CHECK(both.err.find("--target and --exclude cannot be used together") != std::string::npos);
  auto missing = e.Cairn({"plan", e.stack, "--target-file", e.dir.path() + "/nope.txt"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("--target-file " + e.dir.path() + "/nope.txt: ") != std::string::npos);
  auto nothing = e.Cairn({"plan", e.stack, "--exclude", "module.app[*].network.main"});
  CHECK(nothing.exit_code == 1);
  CHECK(nothing.err.find("--exclude \"module.app[*].network.main\" matches no resource") !=
        std::string::npos);
  const std::string saved = e.dir.path() + "/p.plan";
  REQUIRE(e.Cairn({"plan", e.stack, "--out", saved}).exit_code == 0);
  auto refused = e.Cairn({"apply", saved, "--target", "instance.web[0]"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("a saved plan is applied exactly as planned") != std::string::npos);
}

TEST_CASE("drift: none, then changed, deleted and unmanaged, with exit codes and JSON") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  CHECK(e.Cairn({"drift", e.stack}).exit_code == 0);
  auto client = e.server.Client();
  std::string web1 = e.StateId("instance.web[1]");
  REQUIRE(client->Patch("/api/v1/compute/" + web1, {{"name", "renamed"}}, "drift-rename").status ==
          200);
  REQUIRE(client
              ->Post("/api/v1/networking",
                     {{"name", "stray"}, {"region", "eu-central"}, {"cidr", "10.99.0.0/16"}},
                     "drift-stray")
              .status == 201);
  auto d = e.Cairn({"drift", e.stack});
  CHECK(d.exit_code == 2);
  CHECK(d.out.find("~ name: \"web-1\" -> \"renamed\"") != std::string::npos);
  CHECK(d.out.find("stray") == std::string::npos);
  auto u = e.Cairn({"drift", e.stack, "--unmanaged", "--json"});
  CHECK(u.exit_code == 2);
  auto j = json::parse(u.out);
  bool found_stray = false;
  for (const auto& item : j["items"])
    found_stray = found_stray || item.value("name", "") == "stray";
  CHECK(found_stray);
}

TEST_CASE("import adopts an existing resource and the next plan shows the difference") {
  Env e;
  auto client = e.server.Client();
  auto made = client->Post("/api/v1/networking",
                           {{"name", "legacy"}, {"region", "eu-central"}, {"cidr", "10.30.0.0/16"}},
                           "import-made");
  REQUIRE(made.status == 201);
  std::string id = made.json()["network"]["publicId"];
  auto r = e.Cairn({"import", "network.app", id, e.stack});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(e.StateId("network.app") == id);
  auto p = e.Cairn({"plan", e.stack});
  CHECK(p.out.find("~ network.app") != std::string::npos);
  CHECK(p.out.find("~ name: \"legacy\" -> \"app\"") != std::string::npos);
  // Importing again, or a missing id, is refused.
  CHECK(e.Cairn({"import", "network.app", id, e.stack}).exit_code == 1);
  auto missing =
      e.Cairn({"import", "ssh_key.deploy", "key_00000000000000000000000000000000", e.stack});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("no ssh_key with id") != std::string::npos);
}

TEST_CASE("import --generate adopts several resources into an empty directory, all or none") {
  Env e;
  auto client = e.server.Client();
  auto net = client->Post("/api/v1/networking",
                          {{"name", "shared"}, {"region", "eu-central"}, {"cidr", "10.40.0.0/16"}},
                          "gen-net");
  REQUIRE(net.status == 201);
  std::string net_id = net.json()["network"]["publicId"];
  json body = InstanceBody("api");
  body["networkId"] = net_id;
  auto inst = client->Post("/api/v1/compute", body, "gen-inst");
  REQUIRE(inst.status == 201);
  std::string inst_id = inst.json()["instance"]["publicId"];
  const std::string empty = e.dir.path() + "/adopted";
  std::filesystem::create_directories(empty);

  // What is refused before any read (undeclared without --generate, a
  // file that exists, an address in a module...): CheckImport's unit tests,
  // tests/engine/operations/import_test.cc.
  // One missing object: nothing imported, no file written.
  auto partial = e.Cairn({"import", "network.core=" + net_id,
                          "instance.api=00000000-0000-4000-8000-000000000000", empty, "--generate",
                          "imported.yaml"});
  CHECK(partial.exit_code == 1);
  CHECK(partial.err.find("nothing was imported") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(empty + "/imported.yaml"));

  auto r = e.Cairn({"import", "network.core=" + net_id, "instance.api=" + inst_id, empty,
                    "--generate", "imported.yaml"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Wrote 2 manifests to") != std::string::npos);
  std::ifstream in(empty + "/imported.yaml");
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(yaml.find("kind: network\nname: core\n") != std::string::npos);
  CHECK(yaml.find("network: \"${network.core.id}\"") != std::string::npos);  // a reference
  CHECK(yaml.find("status") == std::string::npos);                           // nothing computed
  // The manifests and the state now describe the live objects exactly.
  auto plan = e.Cairn({"plan", empty, "--detailed-exitcode"});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 0);
  auto list = e.Cairn({"state", "list", empty});
  CHECK(list.out.find("instance.api  " + inst_id) != std::string::npos);
  CHECK(list.out.find("network.core  " + net_id) != std::string::npos);
  auto shown = json::parse(e.Cairn({"state", "show", "instance.api", empty}).out);
  CHECK(shown["depends_on"] == json::array({"network.core"}));
}

TEST_CASE("kind: data reads a resource the stack does not manage, by filter or id") {
  Env e;
  auto client = e.server.Client();
  auto net = client->Post(
      "/api/v1/networking",
      {{"name", "shared-net"}, {"region", "eu-central"}, {"cidr", "10.50.0.0/16"}}, "data-net");
  REQUIRE(net.status == 201);
  const std::string net_id = net.json()["network"]["publicId"];
  auto stack = [&](const std::string& selector) {
    return "kind: data\nname: shared\ntype: network\n" + selector +
           "\n---\nkind: instance\nname: app\nspec:\n  name: on-${data.network.shared.name}\n"
           "  region: ${data.network.shared.region}\n  plan: s-1vcpu-1gb\n  image: debian-12\n"
           "  network: ${data.network.shared.id}\n---\n"
           "kind: output\nname: cidr\nvalue: ${data.network.shared.cidr}\n";
  };
  WriteFile(e.stack + "/main.yaml", stack("filter: {name: shared-net}"));
  // Through a saved plan: apply uses what the plan read.
  const std::string planfile = e.dir.path() + "/data.plan";
  REQUIRE(e.Cairn({"plan", e.stack, "--out", planfile}).exit_code == 0);
  CHECK(json::parse(ReadFile(planfile))["data"]["data.network.shared"]["id"] == net_id);
  auto applied = e.Cairn({"apply", planfile});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  // The instance is on the network read, which the stack does not manage.
  auto state = json::parse(e.Cairn({"state", "show", "instance.app", e.stack}).out);
  CHECK(state["attributes"]["network"] == net_id);
  CHECK(state["attributes"]["name"] == "on-shared-net");
  CHECK(e.Cairn({"state", "list", e.stack}).out.find("network") == std::string::npos);
  CHECK(e.Cairn({"output", "cidr", e.stack}).out == "10.50.0.0/16\n");
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);
  // By id, the same; --refresh=false still reads it.
  WriteFile(e.stack + "/main.yaml", stack("id: " + net_id));
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode", "--refresh=false"}).exit_code == 0);
  // Destroy leaves the data source's resource alone.
  REQUIRE(e.Cairn({"destroy", e.stack, "--auto-approve"}).exit_code == 0);
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"shared-net"});
  CHECK(e.Names("/api/v1/compute").empty());

  // No match, or several: a clear error at the data document, nothing sent.
  WriteFile(e.stack + "/main.yaml", stack("filter: {name: nowhere}"));
  auto none = e.Cairn({"plan", e.stack});
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("main.yaml:2:7") != std::string::npos);
  CHECK(none.err.find("data_not_found") != std::string::npos);
  REQUIRE(client
              ->Post("/api/v1/networking",
                     {{"name", "shared-net"}, {"region", "eu-central"}, {"cidr", "10.60.0.0/16"}},
                     "data-net-2")
              .status == 201);
  WriteFile(e.stack + "/main.yaml", stack("filter: {name: shared-net, region: eu-central}"));
  auto two = e.Cairn({"apply", e.stack, "--auto-approve"});
  CHECK(two.exit_code == 1);
  CHECK(two.err.find("data_ambiguous") != std::string::npos);
  CHECK(two.err.find(net_id) != std::string::npos);
  CHECK(e.Names("/api/v1/compute").empty());
}

TEST_CASE("state list, show, mv, rm and pull") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  auto list = e.Cairn({"state", "list", e.stack});
  CHECK(list.out.find("instance.web[0]") != std::string::npos);
  auto pull = json::parse(e.Cairn({"state", "pull", e.stack}).out);
  CHECK(pull["resources"].size() == 4);
  int64_t serial = pull["serial"];
  auto mv = e.Cairn({"state", "mv", "ssh_key.deploy", "ssh_key.ops", e.stack});
  REQUIRE(mv.exit_code == 0);
  CHECK(e.Cairn({"state", "show", "ssh_key.deploy", e.stack}).exit_code == 1);
  CHECK(e.Cairn({"state", "mv", "ssh_key.ops", "network.bad", e.stack}).exit_code == 1);
  auto rm = e.Cairn({"state", "rm", "ssh_key.ops", e.stack});
  REQUIRE(rm.exit_code == 0);
  auto after = json::parse(e.Cairn({"state", "pull", e.stack}).out);
  CHECK(after["resources"].size() == 3);
  CHECK(after["serial"].get<int64_t>() > serial);
  // The key still exists in the API: rm forgets, it does not delete.
  CHECK(e.Names("/v1/ssh_keys") == std::vector<std::string>{"deploy"});
}

TEST_CASE("a second apply fails at once naming the lock holder, and force-unlock releases it") {
  Env e({"--provision-delay", "1s"});
  std::vector<std::string> argv = {CairnBinary(), "apply", e.stack, "--auto-approve"};
  ChildProcess first(argv, e.env);
  // Wait until it holds the lock and is in the middle of creating.
  auto line = first.ReadLine(std::chrono::seconds(30));
  while (line && line->find("creating...") == std::string::npos)
    line = first.ReadLine(std::chrono::seconds(30));
  REQUIRE(line);
  auto second = e.Cairn({"apply", e.stack, "--auto-approve"});
  CHECK(second.exit_code == 1);
  CHECK(second.err.find("locked by") != std::string::npos);
  CHECK(second.err.find("operation apply") != std::string::npos);
  CHECK(second.err.find("since") != std::string::npos);
  size_t at = second.err.find("force-unlock ");
  REQUIRE(at != std::string::npos);
  std::string lock_id = second.err.substr(at + 13, 36);

  auto wrong = e.Cairn({"force-unlock", "00000000-0000-0000-0000-000000000000", e.stack});
  CHECK(wrong.exit_code == 1);
  // The holder still runs: without a terminal, only --force releases its lock.
  auto unlock = e.Cairn({"force-unlock", lock_id, e.stack, "--force"});
  INFO(unlock.err);
  CHECK(unlock.exit_code == 0);
  CHECK(unlock.out.find("Released the state lock " + lock_id) != std::string::npos);
  // The first apply still finishes its work and records it.
  while (first.ReadLine(std::chrono::seconds(60))) {
  }
  CHECK(first.Wait() == 0);
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);
}

TEST_CASE("after a kill -9 the next apply takes over the dead holder's lock and finishes the job") {
  Env e({"--provision-delay", "1s"});
  std::vector<std::string> argv = {CairnBinary(), "apply", e.stack, "--auto-approve"};
  ChildProcess first(argv, e.env);
  auto line = first.ReadLine(std::chrono::seconds(30));
  while (line && line->find("creating...") == std::string::npos)
    line = first.ReadLine(std::chrono::seconds(30));
  REQUIRE(line);
  first.Signal(SIGKILL);
  first.Wait();
  auto done = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(done.out << done.err);
  REQUIRE(done.exit_code == 0);
  CHECK(done.err.find("took over the state lock") != std::string::npos);
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-0", "web-1"});
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"app"});
  CHECK(e.Names("/v1/ssh_keys") == std::vector<std::string>{"deploy"});
}

TEST_CASE("destroy removes everything, dependents first, and honours prevent_destroy") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  std::string text = Stack();
  text.replace(text.find("kind: network\nname: app\n"), 24,
               "kind: network\nname: app\nlifecycle: {prevent_destroy: true}\n");
  WriteFile(e.stack + "/main.yaml", text);
  auto refused = e.Cairn({"destroy", e.stack, "--auto-approve"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("prevent_destroy") != std::string::npos);
  CHECK(e.Names("/api/v1/compute").size() == 2);

  WriteFile(e.stack + "/main.yaml", Stack());
  auto d = e.Cairn({"destroy", e.stack, "--auto-approve"});
  INFO(d.out << d.err);
  REQUIRE(d.exit_code == 0);
  CHECK(d.out.find("4 destroyed") != std::string::npos);
  CHECK(e.Names("/api/v1/compute").empty());
  CHECK(e.Names("/api/v1/networking").empty());
  CHECK(e.Names("/v1/ssh_keys").empty());
  CHECK(e.Cairn({"state", "list", e.stack}).out.empty());
}

TEST_CASE("destroy --target deletes the target and what depends on it, never what it depends on") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  // The network the instances are on is protected: it is not a dependent of
  // the key, so it is neither deleted nor in the way.
  std::string text = Stack();
  text.replace(text.find("kind: network\nname: app\n"), 24,
               "kind: network\nname: app\nlifecycle: {prevent_destroy: true}\n");
  WriteFile(e.stack + "/main.yaml", text);
  auto plan = e.Cairn({"plan", "--destroy", "--target", "ssh_key.deploy", e.stack});
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(plan.out.find("0 to add, 0 to change, 0 to replace, 3 to destroy") != std::string::npos);
  auto d = e.Cairn({"destroy", "--target", "ssh_key.deploy", e.stack, "--auto-approve"});
  INFO(d.out << d.err);
  REQUIRE(d.exit_code == 0);
  CHECK(e.Names("/api/v1/compute").empty());
  CHECK(e.Names("/v1/ssh_keys").empty());
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"app"});
  CHECK(e.Cairn({"state", "list", e.stack}).out.rfind("network.app  ", 0) == 0);
  CHECK(e.Cairn({"state", "list", e.stack}).out.find("instance") == std::string::npos);

  // Addresses that name nothing are errors, not "No changes".
  for (const char* bad : {"foo", "instance.web[", "instance.nope"}) {
    auto r = e.Cairn({"plan", "--target", bad, e.stack});
    INFO(bad << ": " << r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(std::string("--target \"") + bad + "\"") != std::string::npos);
    CHECK(r.out.find("No changes") == std::string::npos);
  }
  auto typo = e.Cairn({"destroy", "--target", "network.ap", e.stack, "--auto-approve"});
  CHECK(typo.exit_code == 1);
  CHECK(typo.err.find("did you mean \"network.app\"?") != std::string::npos);
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"app"});
}

TEST_CASE("destroy --target keeps the outputs that still resolve, removes those it breaks") {
  Env e;
  WriteFile(e.stack + "/main.yaml",
            "kind: network\nname: a\nspec: {region: eu-central, cidr: 10.31.0.0/16}\n---\n"
            "kind: network\nname: b\nspec: {region: eu-central, cidr: 10.32.0.0/16}\n---\n"
            "kind: output\nname: a_id\nvalue: ${network.a.id}\n---\n"
            "kind: output\nname: b_id\nvalue: ${network.b.id}\n");
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  const std::string a_id = e.StateId("network.a");
  auto plan = e.Cairn({"plan", "--destroy", "--target", "network.b", e.stack});
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(plan.out.find("  - b_id\n") != std::string::npos);
  CHECK(plan.out.find("a_id") == std::string::npos);
  auto d = e.Cairn({"destroy", "--target", "network.b", e.stack, "--auto-approve"});
  INFO(d.out << d.err);
  REQUIRE(d.exit_code == 0);
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"a"});
  auto out = e.Cairn({"output", "a_id", e.stack});
  CHECK(out.exit_code == 0);
  CHECK(out.out == a_id + "\n");
  CHECK(e.Cairn({"output", "b_id", e.stack}).exit_code == 1);
  // The next plan makes b and its output again; a_id is as recorded.
  auto next = e.Cairn({"plan", e.stack});
  INFO(next.out << next.err);
  CHECK(next.out.find("  + network.b") != std::string::npos);
  CHECK(next.out.find("+ b_id") != std::string::npos);
  CHECK(next.out.find("a_id") == std::string::npos);
}

TEST_CASE("without a token the commands say which variable to set, and never print the token") {
  Env e;
  auto env = e.env;
  env["CAIRN_TOKEN"] = "";
  auto r = RunCairn({"plan", e.stack}, env);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("CAIRN_TOKEN") != std::string::npos);
  auto debug = e.Cairn({"--log-level", "debug", "apply", e.stack, "--auto-approve"});
  REQUIRE(debug.exit_code == 0);
  CHECK(debug.err.find(kDevToken) == std::string::npos);
  CHECK(debug.out.find(kDevToken) == std::string::npos);
}

TEST_CASE("SIGINT stops apply gracefully: in-flight operations finish and are recorded") {
  Env e({"--provision-delay", "300ms"});
  WriteFile(e.stack + "/main.yaml", Stack(6));
  std::vector<std::string> argv = {CairnBinary(),    "apply",         e.stack,
                                   "--auto-approve", "--parallelism", "2"};
  ChildProcess apply(argv, e.env);
  auto line = apply.ReadLine(std::chrono::seconds(30));
  while (line && line->find("instance.web[") == std::string::npos)
    line = apply.ReadLine(std::chrono::seconds(30));
  REQUIRE(line);
  apply.Signal(SIGINT);
  std::string rest;
  while (auto l = apply.ReadLine(std::chrono::seconds(60))) rest += *l + "\n";
  int code = apply.Wait();
  INFO(rest << apply.Stderr());
  CHECK(code == 1);
  CHECK(rest.find("Interrupted.") != std::string::npos);
  CHECK(apply.Stderr().find("Interrupt received") != std::string::npos);
  // Everything that was created is recorded: nothing pending, nothing orphaned.
  auto pull = json::parse(e.Cairn({"state", "pull", e.stack}).out);
  size_t recorded_instances = 0;
  for (const auto& r : pull["resources"]) recorded_instances += r["kind"] == "instance";
  CHECK(recorded_instances == e.Names("/api/v1/compute").size());
  CHECK(recorded_instances < 6);
  auto done = e.Cairn({"apply", e.stack, "--auto-approve"});
  REQUIRE(done.exit_code == 0);
  CHECK(e.Names("/api/v1/compute").size() == 6);
}

TEST_CASE("on a terminal, apply asks and goes ahead only on 'yes'") {
  // `script` (util-linux) runs the command on a pseudo-terminal fed from our stdin.
  Env e;
  std::string cmd = CairnBinary() + " apply " + e.stack;
  auto no = RunCommand({"/usr/bin/script", "-qec", cmd, "/dev/null"}, e.env, "no\n");
  CHECK(no.exit_code == 1);
  CHECK(no.out.find("Only 'yes' will be accepted") != std::string::npos);
  CHECK(no.out.find("Cancelled: nothing was changed.") != std::string::npos);
  CHECK(e.Names("/api/v1/compute").empty());

  auto yes = RunCommand({"/usr/bin/script", "-qec", cmd, "/dev/null"}, e.env, "yes\n");
  INFO(yes.out);
  CHECK(yes.exit_code == 0);
  CHECK(yes.out.find("Apply complete!") != std::string::npos);
  CHECK(e.Names("/api/v1/compute").size() == 2);
}

TEST_CASE(
    "a network whose provisioning failed is tainted, nothing is built on it, and the next apply "
    "replaces it") {
  TempDir data;
  std::string data_dir = data.path() + "/serve";
  TempDir dir;
  std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml", Stack());
  std::string failed_id;
  {
    // Every provisioning run fails.
    ServeFixture failing({"--faults", "provision_failed=1,seed=7"}, data_dir);
    std::map<std::string, std::string> env = {
        {"CAIRN_ENDPOINT", failing.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
    auto apply = RunCairn({"apply", stack, "--auto-approve"}, env);
    INFO(apply.out << apply.err);
    CHECK(apply.exit_code == 1);
    CHECK(apply.err.find("provisioning_failed") != std::string::npos);
    auto list = RunCairn({"state", "list", stack}, env);
    CHECK(list.out.find("network.app") != std::string::npos);
    CHECK(list.out.find("(tainted: provisioning failed: provisioning_failed)") !=
          std::string::npos);
    CHECK(list.out.find("instance.web") == std::string::npos);  // not built on it
    // plan proposes the replacement, drift reports the failure.
    auto plan = RunCairn({"plan", stack}, env);
    INFO(plan.out << plan.err);
    CHECK(plan.out.find("-/+ network.app") != std::string::npos);
    CHECK(plan.out.find("replace (provisioning failed: provisioning_failed)") != std::string::npos);
    CHECK(plan.out.find("No changes") == std::string::npos);
    auto drift = RunCairn({"drift", stack}, env);
    INFO(drift.out << drift.err);
    CHECK(drift.exit_code == 2);
    CHECK(drift.out.find("! network.app   failed") != std::string::npos);
    auto show = RunCairn({"state", "show", "network.app", stack}, env);
    failed_id = json::parse(show.out)["id"];
  }
  // The same server, provisioning again: the failed network is replaced and
  // the instances are built on the new one.
  ServeFixture healthy({}, data_dir);
  std::map<std::string, std::string> env = {
      {"CAIRN_ENDPOINT", healthy.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  auto apply = RunCairn({"apply", stack, "--auto-approve"}, env);
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  auto show = RunCairn({"state", "show", "network.app", stack}, env);
  json net = json::parse(show.out);
  CHECK(net["id"] != failed_id);
  CHECK_FALSE(net.contains("tainted"));
  auto client = healthy.Client();
  CHECK(client->Get("/api/v1/networking/" + failed_id).status == 404);
  auto again = RunCairn({"plan", stack, "--detailed-exitcode"}, env);
  CHECK(again.exit_code == 0);
}

TEST_CASE(
    "after a crash, plan shows the interrupted operations first, plan --out waits for apply") {
  Env e;
  // Killed with the first instance's create journaled: the network and the
  // key are recorded, web[0] is in the journal.
  auto env = e.env;
  env["CAIRN_CRASH_AT"] = "apply.journaled:3";
  auto crashed = RunCairn({"apply", e.stack, "--auto-approve", "--parallelism", "1"}, env);
  REQUIRE(crashed.signal == SIGKILL);
  WriteFile(e.stack + "/main.yaml", Stack(0));
  auto plan = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(plan.out.rfind("Interrupted operations, which 'cairn apply' completes first (then it "
                       "plans again):\n"
                       "  + instance.web[0]   create  # then destroyed: no longer in the "
                       "manifests\n",
                       0) == 0);
  CHECK(plan.out.find("after 1 interrupted operation to complete.") != std::string::npos);
  auto j = json::parse(e.Cairn({"plan", e.stack, "--json"}).out);
  REQUIRE(j["pending_operations"].size() == 1);
  CHECK(j["pending_operations"][0]["address"] == "instance.web[0]");
  CHECK(j["pending_operations"][0]["action"] == "create");
  CHECK(j["summary"]["pending"] == 1);
  // A plan to save would be of a state about to change: refused before planning.
  const std::string planfile = e.dir.path() + "/after.plan";
  auto out = e.Cairn({"plan", e.stack, "--out", planfile});
  CHECK(out.exit_code == 1);
  CHECK(out.err.find("not saving the plan: 1 operation(s) of an interrupted apply are "
                     "unfinished") != std::string::npos);
  CHECK(out.err.find("Run 'cairn apply' first") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(planfile));
  // apply does what the plan said: completes the create, then destroys it.
  auto a = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(a.out << a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(e.Names("/api/v1/compute").empty());
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);
  CHECK(e.Cairn({"plan", e.stack, "--out", planfile}).exit_code == 0);
}

TEST_CASE(
    "plan waits for a running apply's lock, names its holder, or reads anyway with --lock=false") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  // This process holds the lock, as a running apply would (alive: never
  // taken over), with a journal entry of its own in flight.
  auto store = cairn::SqliteStateStore::Open(cairn::SqliteStateStore::DefaultPath(e.stack));
  REQUIRE(store.ok());
  auto lock = (*store)->Lock("apply", std::chrono::milliseconds(0));
  REQUIRE(lock.ok());
  cairn::JournalEntry entry;
  entry.seq = *(*store)->ReserveSequences(1);
  entry.address = "instance.web[9]";
  entry.action = cairn::Action::kCreate;
  entry.kind = "instance";
  entry.method = "POST";
  entry.path = "/api/v1/compute";
  entry.body = "{}";
  entry.idempotency_key = "in-flight";
  REQUIRE((*store)->JournalBegin(entry).ok());

  auto refused = e.Cairn({"plan", e.stack});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("an apply is changing the state") != std::string::npos);
  CHECK(refused.err.find("pid " + std::to_string(getpid())) != std::string::npos);
  CHECK(refused.err.find("unfinished") == std::string::npos);

  auto anyway = e.Cairn({"plan", e.stack, "--lock=false"});
  CHECK(anyway.exit_code == 0);
  CHECK(anyway.err.find("is running apply on this state") != std::string::npos);
  CHECK(anyway.err.find("unfinished") == std::string::npos);  // not an interrupted apply's

  // With a timeout, the plan runs once the apply lets go.
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    cairn::StateCommit done;
    done.journal_done = entry.seq;
    (void)(*store)->Commit(done);
    (void)(*store)->Unlock(lock->id);
  });
  auto waited = e.Cairn({"plan", e.stack, "--lock-timeout", "60s", "--detailed-exitcode"});
  release.join();
  INFO(waited.out << waited.err);
  CHECK(waited.exit_code == 0);
  CHECK(waited.out.find("No changes") != std::string::npos);
}

// How many requests a run's debug log (--log-level debug) shows to `route`
// with `method`, whatever their query.
int Requests(const std::string& log, const std::string& method, const std::string& route) {
  int n = 0;
  const std::string line = "infra: " + method + " " + route;
  for (size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) {
    const char next = at + line.size() < log.size() ? log[at + line.size()] : ' ';
    if (next == ' ' || next == '?') ++n;
  }
  return n;
}

TEST_CASE("plan and drift list each kind the state records once, with the listings read ahead") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  for (const char* command : {"plan", "drift"}) {
    INFO(command);
    std::vector<std::string> args = {command, e.stack, "--log-level", "debug"};
    if (std::string(command) == "plan") args.push_back("--detailed-exitcode");
    auto run = e.Cairn(args);
    INFO(run.out << run.err);
    CHECK(run.exit_code == 0);
    // Read ahead, then used by the refresh: one listing of each kind, not two.
    for (const char* route : {"/api/v1/compute", "/api/v1/networking", "/v1/ssh_keys"}) {
      INFO(route);
      CHECK(Requests(run.err, "GET", route) == 1);
    }
    CHECK(Requests(run.err, "GET", "/api/v1/storage") == 0);  // the state has no volume
  }
  // --unmanaged lists every kind, each once.
  auto unmanaged = e.Cairn({"drift", e.stack, "--unmanaged", "--log-level", "debug"});
  INFO(unmanaged.out << unmanaged.err);
  CHECK(unmanaged.exit_code == 0);
  CHECK(Requests(unmanaged.err, "GET", "/api/v1/compute") == 1);
  CHECK(Requests(unmanaged.err, "GET", "/api/v1/storage") == 1);
  CHECK(Requests(unmanaged.err, "GET", "/v1/firewalls") == 1);
}

TEST_CASE("a manifest's error is all plan and drift say, even when the API could not be opened") {
  Env e;
  WriteFile(e.stack + "/bad.yaml",
            "kind: network\nname: bad\nspec: {region: eu-central}\n");  // no cidr
  std::map<std::string, std::string> no_token = {{"CAIRN_ENDPOINT", e.server.base()},
                                                 {"NO_COLOR", "1"}};
  for (const char* command : {"plan", "drift"}) {
    auto run = RunCairn({command, e.stack}, no_token);
    INFO(command << ": " << run.err);
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("bad.yaml:") != std::string::npos);
    CHECK(run.err.find("no API token") == std::string::npos);
  }
  // Fixed, the API's problem is said.
  std::filesystem::remove(e.stack + "/bad.yaml");
  auto run = RunCairn({"plan", e.stack}, no_token);
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("error: no API token: set the environment variable CAIRN_TOKEN") == 0);
}

TEST_CASE(
    "drift --unmanaged in a project shared by stacks: --managed-by and --name-prefix scope it") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  // A second stack in the same project, and a network made by hand.
  std::string billing = e.dir.path() + "/billing";
  WriteFile(billing + "/main.yaml",
            "kind: network\nname: db\nspec: {name: billing-db, region: eu-central, cidr: "
            "10.40.0.0/16}\n");
  REQUIRE(e.Cairn({"apply", billing, "--auto-approve"}).exit_code == 0);
  auto client = e.server.Client();
  REQUIRE(client
              ->Post("/api/v1/networking",
                     {{"name", "app-stray"}, {"region", "eu-central"}, {"cidr", "10.50.0.0/16"}},
                     "by-hand")
              .status == 201);

  auto all = e.Cairn({"drift", e.stack, "--unmanaged", "--json"});
  CHECK(all.exit_code == 2);
  CHECK(all.out.find("billing-db") != std::string::npos);  // the other stack's: noise
  CHECK(all.out.find("app-stray") != std::string::npos);

  auto scoped = e.Cairn({"drift", e.stack, "--unmanaged", "--managed-by", billing, "--json"});
  INFO(scoped.out << scoped.err);
  CHECK(scoped.exit_code == 2);
  CHECK(scoped.out.find("billing-db") == std::string::npos);
  CHECK(scoped.out.find("app-stray") != std::string::npos);

  auto prefixed = e.Cairn({"drift", e.stack, "--unmanaged", "--name-prefix", "billing-"});
  CHECK(prefixed.out.find("billing-db") != std::string::npos);
  CHECK(prefixed.out.find("app-stray") == std::string::npos);

  auto clean =
      e.Cairn({"drift", e.stack, "--unmanaged", "--managed-by", billing, "--name-prefix", "web-"});
  INFO(clean.out << clean.err);
  CHECK(clean.exit_code == 0);
  CHECK(e.Cairn({"drift", e.stack, "--name-prefix", "x"}).exit_code == 1);
}

TEST_CASE("shrinking a volume fails at plan, not at apply, and --replace makes a new one") {
  Env e;
  auto volume = [](int size) {
    return "kind: volume\nname: data\nspec: {name: data, region: eu-central, size_gb: " +
           std::to_string(size) + "}\n";
  };
  WriteFile(e.stack + "/main.yaml", volume(50));
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  std::string id = e.StateId("volume.data");
  WriteFile(e.stack + "/main.yaml", volume(20));
  auto plan = e.Cairn({"plan", e.stack});
  CHECK(plan.exit_code == 1);
  CHECK(plan.err.find("size_gb cannot shrink from 50 to 20") != std::string::npos);
  CHECK(plan.err.find("--replace 'volume.data'") != std::string::npos);
  auto apply = e.Cairn({"apply", e.stack, "--auto-approve"});
  CHECK(apply.exit_code == 1);
  CHECK(e.StateId("volume.data") == id);  // nothing was sent

  auto replace = e.Cairn({"apply", e.stack, "--auto-approve", "--replace", "volume.data"});
  INFO(replace.out << replace.err);
  REQUIRE(replace.exit_code == 0);
  CHECK(replace.out.find("replace (replacement requested with --replace)") != std::string::npos);
  CHECK(e.StateId("volume.data") != id);
  auto live = e.server.Client()->Get("/api/v1/storage/" + e.StateId("volume.data")).json();
  CHECK(live["volume"]["sizeGb"] == 20);
}

TEST_CASE("an endpoint nobody listens on fails plan and apply at once, naming it") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  // A port that is bound but never listening refuses every connection.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::string dead = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  e.env["CAIRN_ENDPOINT"] = dead;
  auto plan = e.Cairn({"plan", e.stack});
  CHECK(plan.exit_code == 1);
  CHECK(plan.err.find("cannot reach the API at " + dead + " (3 attempts)") != std::string::npos);
  CHECK(plan.err.find("CAIRN_ENDPOINT") != std::string::npos);
  WriteFile(e.stack + "/main.yaml", Stack(3));
  auto apply = e.Cairn({"apply", e.stack, "--auto-approve", "--refresh=false"});
  CHECK(apply.exit_code == 1);
  CHECK(apply.err.find("cannot reach the API") != std::string::npos);
  ::close(fd);
  // Nothing was sent, so nothing is left to recover: the journal is empty.
  e.env["CAIRN_ENDPOINT"] = e.server.base();
  auto again = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("recovered") == std::string::npos);
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"web-0", "web-1", "web-2"});
}

TEST_CASE(
    "an output change alone is a change, and --json and --markdown cannot both be asked for") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  WriteFile(e.stack + "/main.yaml",
            Stack() +
                "---\nkind: output\nname: greeting\nvalue: hello\n---\n"
                "kind: output\nname: hidden\nsensitive: true\nvalue: s3cr3t-output\n");
  auto plan = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(
      plan.out.find("Changes to outputs:\n  + greeting = \"hello\"\n  + hidden = (sensitive)\n") !=
      std::string::npos);
  CHECK(plan.out.find("No changes") == std::string::npos);
  auto json = e.Cairn({"plan", e.stack, "--json"});
  CHECK(json.out.find("s3cr3t-output") == std::string::npos);
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);

  auto both = e.Cairn({"plan", e.stack, "--json", "--markdown"});
  CHECK(both.exit_code != 0);
  CHECK(both.err.find("cannot be used together") != std::string::npos);

  // A destroy of a state that tracks nothing says so.
  REQUIRE(e.Cairn({"destroy", e.stack, "--auto-approve"}).exit_code == 0);
  auto empty = e.Cairn({"destroy", e.stack, "--auto-approve"});
  CHECK(empty.out.find("Nothing to destroy: the state tracks no resources.") != std::string::npos);
  CHECK(empty.out.find("matches the manifests") == std::string::npos);
}

TEST_CASE("cairn output prints the recorded outputs, sensitive ones only when asked") {
  Env e;
  auto none = e.Cairn({"output", e.stack});
  CHECK(none.exit_code == 0);
  CHECK(none.out.empty());
  CHECK(none.err.find("no outputs recorded") != std::string::npos);

  WriteFile(e.stack + "/main.yaml",
            Stack() +
                "---\nkind: output\nname: greeting\nvalue: hello\n---\n"
                "kind: output\nname: hidden\nsensitive: true\nvalue: s3cr3t-output\n");
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);

  auto all = e.Cairn({"output", e.stack});
  INFO(all.out << all.err);
  REQUIRE(all.exit_code == 0);
  CHECK(all.out.find("greeting = \"hello\"\n") != std::string::npos);
  CHECK(all.out.find("hidden = (sensitive)\n") != std::string::npos);
  CHECK(all.out.find("ips = [\"") != std::string::npos);
  CHECK(all.out.find("s3cr3t") == std::string::npos);
  CHECK(e.Cairn({"output", e.stack, "--show-sensitive"}).out.find("hidden = \"s3cr3t-output\"") !=
        std::string::npos);

  // One output: a string raw, for $(cairn output NAME).
  auto one = e.Cairn({"output", "greeting", e.stack});
  CHECK(one.exit_code == 0);
  CHECK(one.out == "hello\n");
  auto masked = e.Cairn({"output", "hidden", e.stack});
  CHECK(masked.exit_code == 1);
  CHECK(masked.err.find("--show-sensitive") != std::string::npos);
  CHECK((masked.out + masked.err).find("s3cr3t") == std::string::npos);
  CHECK(e.Cairn({"output", "hidden", e.stack, "--show-sensitive"}).out == "s3cr3t-output\n");
  auto typo = e.Cairn({"output", "greting", e.stack});
  CHECK(typo.exit_code == 1);
  CHECK(typo.err.find("did you mean \"greeting\"") != std::string::npos);

  // --json: for tools, sensitive values marked, and shown only when asked
  // for (by name, or with --show-sensitive).
  auto j = e.Cairn({"output", e.stack, "--json"});
  REQUIRE(j.exit_code == 0);
  json parsed = json::parse(j.out);
  CHECK(parsed["hidden"] == json({{"value", "(sensitive)"}, {"sensitive", true}}));
  CHECK(j.out.find("s3cr3t") == std::string::npos);
  CHECK(json::parse(e.Cairn({"output", e.stack, "--json", "--show-sensitive"}).out)["hidden"] ==
        json({{"value", "s3cr3t-output"}, {"sensitive", true}}));
  CHECK(e.Cairn({"output", "hidden", e.stack, "--json"}).out == "\"s3cr3t-output\"\n");
  CHECK(parsed["greeting"] == json({{"value", "hello"}, {"sensitive", false}}));
  REQUIRE(parsed["ips"]["value"].size() == 2);
  CHECK(parsed["ips"]["value"][0].is_string());
  CHECK(json::parse(e.Cairn({"output", "ips", e.stack, "--json"}).out) == parsed["ips"]["value"]);

  // A backup keeps which outputs are sensitive.
  auto pulled = e.Cairn({"state", "pull", e.stack});
  REQUIRE(pulled.exit_code == 0);
  CHECK(json::parse(pulled.out)["sensitive_outputs"] == json::array({"hidden"}));
  WriteFile(e.dir.path() + "/backup.json", pulled.out);
  REQUIRE(e.Cairn({"state", "push", e.dir.path() + "/backup.json", e.stack}).exit_code == 0);
  CHECK(e.Cairn({"output", "hidden", e.stack}).exit_code == 1);
}

TEST_CASE("kind: moved renames resources in the state without touching the API") {
  Env e;
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  const std::string net_id = e.StateId("network.app");
  const std::string web1_id = e.StateId("instance.web[1]");
  const auto instances = e.Names("/api/v1/compute");

  std::string text = Stack();
  auto rename = [&](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1)) {
      text.replace(at, from.size(), to);
    }
  };
  rename("name: app\nspec: {", "name: core\nspec: {name: app, ");  // the API name stays
  rename("${network.app.id}", "${network.core.id}");
  rename("kind: instance\nname: web\n", "kind: instance\nname: frontend\n");
  rename("${instance.web[*].ipv4}", "${instance.frontend[*].ipv4}");
  text +=
      "---\nkind: moved\nfrom: network.app\nto: network.core\n"
      "---\nkind: moved\nfrom: instance.web\nto: instance.frontend\n";
  WriteFile(e.stack + "/main.yaml", text);

  auto plan = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(plan.out.find("> network.core") != std::string::npos);
  CHECK(plan.out.find("moved from network.app") != std::string::npos);
  CHECK(plan.out.find("moved from instance.web[1]") != std::string::npos);
  CHECK(plan.out.find("0 to add, 0 to change, 0 to replace, 0 to destroy, 3 to move.") !=
        std::string::npos);
  CHECK(plan.out.find("update") == std::string::npos);
  auto json_plan = json::parse(e.Cairn({"plan", e.stack, "--json"}).out);
  CHECK(json_plan["summary"]["move"] == 3);
  CHECK(json_plan["moves"].size() == 3);

  auto applied = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  // The same objects, now at the new addresses; nothing created or deleted.
  CHECK(e.StateId("network.core") == net_id);
  CHECK(e.StateId("instance.frontend[1]") == web1_id);
  CHECK(e.Cairn({"state", "show", "network.app", e.stack}).exit_code == 1);
  CHECK(e.Names("/api/v1/compute") == instances);
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"app"});
  // Done: the moves stay in the manifests and have nothing left to do.
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);
  // Destroy orders by the moved dependencies: instances before their network.
  auto destroyed = e.Cairn({"destroy", e.stack, "--auto-approve"});
  INFO(destroyed.out << destroyed.err);
  CHECK(destroyed.exit_code == 0);
  CHECK(e.Names("/api/v1/networking").empty());

  // A move from an address still declared is refused before any API call.
  WriteFile(e.stack + "/main.yaml",
            Stack() + "---\nkind: moved\nfrom: network.app\nto: network.app2\n");
  auto bad = e.Cairn({"validate", e.stack});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("main.yaml:") != std::string::npos);
  CHECK(bad.err.find("moved_from_declared") != std::string::npos);
}

TEST_CASE("examples/modules end to end: a module twice, a data source, a move into a module") {
  Env e;
  namespace fs = std::filesystem;
  // The network operations run, which the example reads and does not manage.
  auto client = e.server.Client();
  auto ops =
      client->Post("/api/v1/networking",
                   {{"name", "ops"}, {"region", "us-east"}, {"cidr", "10.9.0.0/16"}}, "ops-net");
  REQUIRE(ops.status == 201);
  const std::string ops_id = ops.json()["network"]["publicId"];
  // Before the module existed, production's network was the stack's own.
  fs::remove_all(e.stack);
  // And a jump host on the operations network, which the example hands
  // over to them (a removed document with destroy false).
  WriteFile(e.stack + "/main.yaml",
            "kind: network\nname: prod\n"
            "spec: {name: prod-main, region: eu-central, cidr: 10.40.0.0/16}\n---\n"
            "kind: instance\nname: jump\nspec: {region: us-east, plan: s-1vcpu-1gb, "
            "image: debian-12, network: " +
                ops_id + "}\n");
  REQUIRE(e.Cairn({"apply", e.stack, "--auto-approve"}).exit_code == 0);
  const std::string prod_net = e.StateId("network.prod");
  const std::string jump_id = e.StateId("instance.jump");
  fs::remove(e.stack + "/main.yaml");
  fs::copy(std::string(CAIRN_SOURCE_DIR) + "/examples/modules", e.stack,
           fs::copy_options::recursive);

  auto plan = e.Cairn({"plan", e.stack, "--detailed-exitcode"});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(plan.out.find("> module.prod.network.main") != std::string::npos);
  CHECK(plan.out.find("moved from network.prod") != std::string::npos);
  CHECK(plan.out.find("+ module.staging.instance.app[0]") != std::string::npos);
  CHECK(plan.out.find("  . instance.jump ") != std::string::npos);
  CHECK(plan.out.find("will no longer be managed (id " + jump_id + ")") != std::string::npos);
  CHECK(
      plan.out.find("6 to add, 0 to change, 0 to replace, 0 to destroy, 1 to move, 1 to forget.") !=
      std::string::npos);
  auto graph = e.Cairn({"graph", e.stack});
  CHECK(graph.out.find("subgraph \"cluster_module.prod\"") != std::string::npos);

  auto applied = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(applied.out << applied.err);
  REQUIRE(applied.exit_code == 0);
  // The moved network is the same object, now inside the module.
  CHECK(e.StateId("module.prod.network.main") == prod_net);
  CHECK(e.Names("/api/v1/networking") ==
        std::vector<std::string>{"ops", "prod-main", "staging-main"});
  CHECK(e.Names("/api/v1/compute") ==
        std::vector<std::string>{"bastion", "jump", "prod-app-0", "prod-app-1", "staging-app-0"});
  CHECK(e.Cairn({"state", "show", "instance.jump", e.stack}).exit_code == 1);  // forgotten
  // Each instance is on its own tier's network, with the stack's key; the
  // bastion is on the network read by the data source, in its region.
  auto attrs = [&](const std::string& address) {
    auto r = e.Cairn({"state", "show", address, e.stack});
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out)["attributes"];
  };
  const std::string key = e.StateId("ssh_key.deploy");
  CHECK(attrs("module.prod.instance.app[1]")["network"] == prod_net);
  CHECK(attrs("module.prod.instance.app[1]")["ssh_keys"] == json::array({key}));
  CHECK(attrs("module.staging.instance.app[0]")["network"] ==
        e.StateId("module.staging.network.main"));
  CHECK(attrs("instance.bastion")["network"] == ops_id);
  CHECK(attrs("instance.bastion")["region"] == "us-east");
  // Outputs through modules: production's two addresses, staging's network.
  auto outputs = json::parse(e.Cairn({"output", e.stack, "--json"}).out);
  CHECK(outputs["prod_ips"]["value"].size() == 2);
  CHECK(outputs["staging_network"]["value"] == e.StateId("module.staging.network.main"));
  CHECK(e.Cairn({"plan", e.stack, "--detailed-exitcode"}).exit_code == 0);

  // Destroy: everything the stack manages, never the network it only reads.
  auto destroyed = e.Cairn({"destroy", e.stack, "--auto-approve"});
  INFO(destroyed.out << destroyed.err);
  CHECK(destroyed.exit_code == 0);
  CHECK(e.Names("/api/v1/networking") == std::vector<std::string>{"ops"});
  CHECK(e.Names("/api/v1/compute") == std::vector<std::string>{"jump"});  // not the stack's

  // Import adopts an object at an address inside a module (--generate
  // refuses one: tests/engine/operations/import_test.cc).
  auto made = client->Post(
      "/api/v1/networking",
      {{"name", "staging-main"}, {"region", "eu-central"}, {"cidr", "10.30.0.0/16"}}, "adopt");
  REQUIRE(made.status == 201);
  const std::string made_id = made.json()["network"]["publicId"];
  auto adopted = e.Cairn({"import", "module.staging.network.main=" + made_id, e.stack});
  INFO(adopted.out << adopted.err);
  CHECK(adopted.exit_code == 0);
  CHECK(e.StateId("module.staging.network.main") == made_id);
}

TEST_CASE("apply on a terminal shows one live line, and --json prints one event per line") {
  Env e({"--provision-delay", "200ms"});
  WriteFile(e.stack + "/main.yaml", Stack(6));
  // A pseudo-terminal (script(1)) makes stdout a terminal.
  std::string command = "NO_COLOR=1 CAIRN_ENDPOINT=" + e.server.base() +
                        " CAIRN_TOKEN=" + kDevToken + " " + CairnBinary() + " apply " + e.stack +
                        " --auto-approve";
  auto tty = RunCommand({"/usr/bin/script", "-qec", command, "/dev/null"});
  INFO(tty.out << tty.err);
  REQUIRE(tty.exit_code == 0);
  CHECK(tty.out.find("\r\x1b[K") != std::string::npos);  // the line is rewritten
  CHECK(tty.out.find("creating 8/8, 0 waiting for provisioning, 0 failed") != std::string::npos);
  CHECK(tty.out.find("waiting for provisioning") != std::string::npos);
  CHECK(tty.out.find("creation complete after") == std::string::npos);  // no line per step
  CHECK(tty.out.find("Apply complete! Resources: 8 added") != std::string::npos);

  // Without a terminal: a line per step, as before.
  auto plain = e.Cairn({"destroy", e.stack, "--auto-approve"});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out.find("destruction complete after") != std::string::npos);
  CHECK(plain.out.find('\r') == std::string::npos);

  // --json: every line is one JSON object; the last is the summary.
  auto j = e.Cairn({"apply", e.stack, "--auto-approve", "--json"});
  INFO(j.out << j.err);
  REQUIRE(j.exit_code == 0);
  std::istringstream lines(j.out);
  int waiting = 0, done = 0;
  json last;
  for (std::string line; std::getline(lines, line);) {
    last = json::parse(line);
    if (last["event"] == "waiting") ++waiting;
    if (last["event"] == "done") ++done;
  }
  CHECK(done == 8);
  CHECK(waiting >= 7);  // the network and the instances provision; the key does not
  CHECK(last["event"] == "summary");
  CHECK(last["added"] == 8);
  CHECK(last["ok"] == true);
  // Without --auto-approve there is no plan to confirm: refused.
  WriteFile(e.stack + "/main.yaml", Stack(7));
  auto refused = e.Cairn({"apply", e.stack, "--json"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("--auto-approve") != std::string::npos);
}

}  // namespace engine_commands_test
