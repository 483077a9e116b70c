// Integration tests: requests an attacker holding a valid token can send.
// Each case gets the error envelope (or a correct answer), never a crash,
// and the server is checked to be healthy afterwards.
#include <signal.h>

#include <catch2/catch.hpp>
#include <string>

#include "server/cursor.h"
#include "tests/server/serve_fixture.h"

namespace serve_hostile_input_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

// {"name": [[[...]]]} with `depth` nested lists.
std::string DeepName(int depth) {
  return "{\"name\": " + std::string(depth, '[') + std::string(depth, ']') + "}";
}

// The server still answers, and still creates.
void CheckHealthy(ServeFixture& srv) {
  static int checks = 0;
  auto c = srv.Client();
  CHECK(c->Get("/healthz").status == 200);
  auto made = c->Post("/api/v1/compute", InstanceBody("after-attack"),
                      "healthy-" + std::to_string(++checks));
  CHECK(made.status == 201);
  CHECK(srv.process().running());
}

// A `cairn serve` started with `args` (after --listen and --data-dir): its
// base URL, and the token it printed with --dev.
struct Started {
  std::unique_ptr<ChildProcess> proc;
  std::string base;
  std::string printed_token;
};

Started StartServe(const std::string& data_dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {CairnBinary(), "serve",  "--listen",          "127.0.0.1:0",
                                   "--data-dir",  data_dir, "--provision-delay", "0"};
  argv.insert(argv.end(), args.begin(), args.end());
  Started s;
  s.proc = std::make_unique<ChildProcess>(argv);
  for (int i = 0; i < 2; ++i) {
    auto line = s.proc->ReadLine(std::chrono::seconds(30));
    INFO("stderr: " << s.proc->Stderr());
    REQUIRE(line.has_value());
    if (line->rfind("token: ", 0) == 0) {
      s.printed_token = line->substr(7);
      continue;
    }
    REQUIRE(line->rfind("listening on http://", 0) == 0);
    s.base = "http://" + line->substr(std::string("listening on http://").size());
    break;
  }
  REQUIRE_FALSE(s.base.empty());
  return s;
}

int StatusWith(const std::string& base, const std::string& token) {
  return HttpClient(base, token).Get("/v1/instances").status;
}

}  // namespace

TEST_CASE("deeply nested JSON bodies are refused with 400, and the server lives on") {
  ServeFixture srv;
  auto c = srv.Client();
  // The depths that took the process down (stack overflow), with and
  // without an Idempotency-Key (the key path canonicalises the body).
  auto keyed = c->Request("POST", "/api/v1/compute", DeepName(55000), {"Idempotency-Key: deep-1"});
  REQUIRE(keyed.status == 400);
  CHECK(keyed.json()["error"]["code"] == "validation_error");
  CHECK(keyed.json()["error"]["message"].get<std::string>().find("deeper than 64") !=
        std::string::npos);
  auto unkeyed = c->Request("POST", "/v1/instances", DeepName(100000));
  REQUIRE(unkeyed.status == 400);
  CHECK(unkeyed.json()["error"]["code"] == "validation_error");

  // PATCH of an existing record, on both APIs.
  std::string id = c->Post("/v1/instances", InstanceBody("target")).json()["id"];
  auto patched = c->Request("PATCH", "/v1/instances/" + id, DeepName(60000));
  CHECK(patched.status == 400);
  auto made = c->Post("/api/v1/compute", InstanceBody("target-2"), "deep-2");
  std::string public_id = made.json()["instance"]["publicId"];
  auto patched2 = c->Request("PATCH", "/api/v1/compute/" + public_id, DeepName(60000),
                             {"Idempotency-Key: deep-3"});
  CHECK(patched2.status == 400);
  // A mapping nested as deep is refused the same way.
  std::string objects;
  for (int i = 0; i < 50000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(50000, '}');
  CHECK(c->Request("POST", "/v1/networks", objects).status == 400);

  // The limit is 64 levels: 64 still parses (and fails validation as a
  // value), 65 does not parse.
  auto at_limit = c->Request("POST", "/v1/instances", DeepName(63));
  CHECK(at_limit.status == 400);
  CHECK(at_limit.json()["error"]["message"] == "name: must be a string");
  auto over = c->Request("POST", "/v1/instances", DeepName(64));
  CHECK(over.json()["error"]["message"].get<std::string>().find("deeper than 64") !=
        std::string::npos);
  CheckHealthy(srv);
}

TEST_CASE("a JSON body followed by a NUL byte and garbage is invalid JSON") {
  ServeFixture srv;
  auto c = srv.Client();
  std::string body = InstanceBody("nul").dump() + std::string("\0garbage", 8);
  auto r = c->Request("POST", "/api/v1/compute", body, {"Idempotency-Key: nul-1"});
  REQUIRE(r.status == 400);
  CHECK(r.json()["error"]["code"] == "validation_error");
  // Nothing was created.
  CHECK(c->Get("/api/v1/compute").json()["data"].empty());
  // A NUL inside the value (raw, not escaped) is refused too.
  std::string inner = R"({"name":"a)" + std::string(1, '\0') +
                      R"(b","region":"eu-central","image":"debian-12","plan":"s-1vcpu-1gb"})";
  CHECK(c->Request("POST", "/v1/instances", inner).status == 400);
  CheckHealthy(srv);
}

TEST_CASE("names with C1 control characters are refused, other non-ASCII text is not") {
  ServeFixture srv;
  auto c = srv.Client();
  for (const char* bad : {"a\u0085b", "a\u009b31mb", "tab\there", "del\x7f"}) {
    INFO(bad);
    auto r = c->Post("/v1/instances", InstanceBody(bad));
    REQUIRE(r.status == 400);
    CHECK(r.json()["error"]["message"] == "name: must not contain control characters");
  }
  // U+00A0 (the next code point after C1) and other letters are fine.
  CHECK(c->Post("/v1/instances", InstanceBody("caf\u00e9\u00a0web")).status == 201);
}

TEST_CASE("HEAD works wherever GET does: GET's status and headers, no body") {
  ServeFixture srv;
  auto c = srv.Client();
  std::string id = c->Post("/v1/instances", InstanceBody("head")).json()["id"];
  for (const std::string& path :
       std::vector<std::string>{"/v1/instances", "/v1/instances/" + id, "/api/v1/compute",
                                "/healthz", "/v1/regions", "/v1/instances/inst_nope"}) {
    INFO(path);
    auto get = c->Get(path);
    auto head = c->Request("HEAD", path);
    CHECK(head.status == get.status);
    CHECK(head.body.empty());
    CHECK(head.header("content-type") == get.header("content-type"));
    // The length GET's body has (the ids in an error differ, not its size).
    CHECK(head.header("content-length") == std::to_string(get.body.size()));
  }
  // Not where only POST is served; Allow names HEAD where GET is.
  auto post_only = c->Request("HEAD", "/api/v1/compute/" + std::string(36, '0') + "/actions/start");
  CHECK(post_only.status == 405);
  auto not_allowed = c->Request("PUT", "/v1/instances");
  CHECK(not_allowed.header("allow") == "GET, HEAD, POST");
}

TEST_CASE("tokens: each start accepts only its own tokens, and SIGHUP revokes") {
  TempDir dir;
  std::string data = dir.path() + "/data";
  std::string tokens = dir.path() + "/tokens";
  const std::string ops = "cairn_ops_token_0123456789abcdefghij";
  WriteFile(tokens, "ops " + cairn::server::Sha256Hex(ops) + "\n");

  std::string first_dev;
  {
    auto s = StartServe(data, {"--dev", "--tokens-file", tokens});
    first_dev = s.printed_token;
    REQUIRE_FALSE(first_dev.empty());
    CHECK(StatusWith(s.base, first_dev) == 200);
    CHECK(StatusWith(s.base, ops) == 200);
    s.proc->Signal(SIGTERM);
    CHECK(s.proc->Wait() == 0);
  }
  {
    // A new --dev start mints a new token; the old one stops working.
    auto s = StartServe(data, {"--dev", "--tokens-file", tokens});
    REQUIRE(s.printed_token != first_dev);
    CHECK(StatusWith(s.base, s.printed_token) == 200);
    CHECK(StatusWith(s.base, first_dev) == 401);
    s.proc->Signal(SIGTERM);
    CHECK(s.proc->Wait() == 0);
  }
  {
    // Without the file, its tokens are gone too.
    auto s = StartServe(data, {"--dev-token", std::string(kDevToken)});
    CHECK(StatusWith(s.base, ops) == 401);
    CHECK(StatusWith(s.base, kDevToken) == 200);
    s.proc->Signal(SIGTERM);
    CHECK(s.proc->Wait() == 0);
  }
  {
    // A running server: remove the line, SIGHUP, and the token is refused
    // while the others go on working.
    const std::string other = "cairn_second_token_0123456789abcdefgh";
    WriteFile(tokens, "ops " + cairn::server::Sha256Hex(ops) + "\nci " +
                          cairn::server::Sha256Hex(other) + "\n");
    auto s = StartServe(data, {"--dev-token", std::string(kDevToken), "--tokens-file", tokens});
    CHECK(StatusWith(s.base, ops) == 200);
    CHECK(StatusWith(s.base, other) == 200);
    WriteFile(tokens, "ci " + cairn::server::Sha256Hex(other) + "\n");
    s.proc->Signal(SIGHUP);
    auto revoked = PollUntil([&] { return StatusWith(s.base, ops); },
                             [](int status) { return status == 401; });
    CHECK(revoked == 401);
    CHECK(StatusWith(s.base, other) == 200);
    CHECK(StatusWith(s.base, kDevToken) == 200);
    // A broken file keeps the tokens in force, and says why.
    WriteFile(tokens, "this is not a token line\n");
    s.proc->Signal(SIGHUP);
    auto logged = PollUntil([&] { return s.proc->Stderr(); },
                            [](const std::string& err) {
                              return err.find("tokens not reloaded") != std::string::npos;
                            });
    CHECK(logged.find("tokens not reloaded") != std::string::npos);
    CHECK(StatusWith(s.base, other) == 200);
    s.proc->Signal(SIGTERM);
    CHECK(s.proc->Wait() == 0);
  }
}

TEST_CASE("an integer beyond 64 bits is too large, not too small") {
  ServeFixture srv;
  auto c = srv.Client();
  // 2^63 read as int64 wrapped to a negative number: "must be at least 1".
  auto r = c->Request("POST", "/api/v1/storage",
                      R"({"name": "v", "region": "eu-central", "sizeGb": 9223372036854775808})",
                      {"Idempotency-Key: big-1"});
  CHECK(r.status == 400);
  CHECK(r.json()["error"]["code"] == "validation_error");
  CHECK(r.json()["error"]["message"].get<std::string>().find("sizeGb") == 0);
  CHECK(r.json()["error"]["message"].get<std::string>().find("too large") != std::string::npos);
  CHECK(r.json()["error"]["message"].get<std::string>().find("at least") == std::string::npos);
  // The largest int64 is over the schema's maximum, and says so.
  auto at_most =
      c->Request("POST", "/api/v1/storage",
                 R"({"name": "v", "region": "eu-central", "sizeGb": 9223372036854775807})",
                 {"Idempotency-Key: big-2"});
  CHECK(at_most.status == 400);
  CHECK(at_most.json()["error"]["message"].get<std::string>().find("at most") != std::string::npos);
  CheckHealthy(srv);
}

TEST_CASE("tokens: one hash given to two projects is refused at start and on SIGHUP") {
  TempDir dir;
  std::string data = dir.path() + "/data";
  std::string tokens = dir.path() + "/tokens";
  const std::string shared = "cairn_shared_token_0123456789abcdefgh";
  const std::string ci = "cairn_ci_token_0123456789abcdefghijkl";
  const std::string twice = "ops " + cairn::server::Sha256Hex(shared) + "\n# x\nci " +
                            cairn::server::Sha256Hex(shared) + "\n";
  WriteFile(tokens, twice);
  auto refused =
      RunCairn({"serve", "--listen", "127.0.0.1:0", "--data-dir", data, "--tokens-file", tokens});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find(tokens + ":3:") != std::string::npos);
  CHECK(refused.err.find("'ops'") != std::string::npos);
  // The dev token may not be a file's token of another project either.
  WriteFile(tokens, "ops " + cairn::server::Sha256Hex(shared) + "\n");
  auto dev = RunCairn({"serve", "--listen", "127.0.0.1:0", "--data-dir", data, "--dev-token",
                       shared, "--tokens-file", tokens});
  CHECK(dev.exit_code == 1);
  CHECK(dev.err.find("two projects") != std::string::npos);

  // On SIGHUP: the tokens in force stay.
  WriteFile(tokens, "ci " + cairn::server::Sha256Hex(ci) + "\n");
  auto s = StartServe(data, {"--dev-token", std::string(kDevToken), "--tokens-file", tokens});
  CHECK(StatusWith(s.base, ci) == 200);
  WriteFile(tokens, twice);
  s.proc->Signal(SIGHUP);
  auto logged = PollUntil(
      [&] { return s.proc->Stderr(); },
      [](const std::string& err) { return err.find("tokens not reloaded") != std::string::npos; });
  CHECK(logged.find("a token opens one project") != std::string::npos);
  CHECK(StatusWith(s.base, ci) == 200);
  CHECK(StatusWith(s.base, shared) == 401);
  s.proc->Signal(SIGTERM);
  CHECK(s.proc->Wait() == 0);
}

TEST_CASE("cursors are per project: another project's cursor is refused, and none counts others") {
  ServeFixture srv;
  auto dev = srv.Client();
  auto other = srv.Client(kOtherToken);
  REQUIRE(dev->Post("/v1/instances", InstanceBody("d1")).status == 201);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(other->Post("/v1/instances", InstanceBody("o" + std::to_string(i))).status == 201);
  }
  REQUIRE(dev->Post("/v1/instances", InstanceBody("d2")).status == 201);
  REQUIRE(dev->Post("/v1/instances", InstanceBody("d3")).status == 201);

  auto page1 = dev->Get("/v1/instances?limit=1");
  REQUIRE(page1.status == 200);
  const std::string cursor = page1.json()["pagination"]["next_cursor"];
  auto page2 = dev->Get("/v1/instances?limit=1&cursor=" + cursor);
  REQUIRE(page2.status == 200);
  CHECK(page2.json()["data"][0]["name"] == "d2");
  const std::string cursor2 = page2.json()["pagination"]["next_cursor"];
  // Nothing in a cursor is a sequence number that others' creations move:
  // it used to be base64url of "v1:1", then "v1:7" (5 of other's between).
  for (const std::string& c : {cursor, cursor2}) {
    auto raw = cairn::server::Base64UrlDecode(c);
    REQUIRE(raw.has_value());
    CHECK(raw->find("v1:") == std::string::npos);
  }
  // Another project's list, or another collection, with dev's cursor: 400.
  auto theirs = other->Get("/v1/instances?limit=1&cursor=" + cursor);
  CHECK(theirs.status == 400);
  CHECK(theirs.json()["error"]["code"] == "validation_error");
  CHECK(dev->Get("/v1/networks?cursor=" + cursor).status == 400);
  // Paging survives the deletion of the record a cursor names.
  const std::string d2 = page2.json()["data"][0]["id"];
  REQUIRE(dev->Delete("/v1/instances/" + d2).status < 300);
  auto after_delete = PollUntil([&] { return dev->Get("/v1/instances?cursor=" + cursor2); },
                                [](const HttpResult& r) { return r.status == 200; });
  CHECK(after_delete.status == 200);
  CHECK(after_delete.json()["data"].size() == 1);
  CHECK(after_delete.json()["data"][0]["name"] == "d3");
}

}  // namespace serve_hostile_input_test
