// Integration tests of Idempotency-Key handling (spec 4.3) against the real
// `cairn serve`.
#include <catch2/catch.hpp>
#include <thread>

#include "tests/server/serve_fixture.h"

namespace serve_idempotency_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {
// Headers of a response minus the ones that differ per request.
std::map<std::string, std::string> StableHeaders(const HttpResult& r) {
  auto h = r.headers;
  h.erase("x-request-id");
  h.erase("idempotent-replayed");
  return h;
}
}  // namespace

TEST_CASE("same key and canonically equal body: byte-for-byte replay with Idempotent-Replayed") {
  ServeFixture srv;
  auto c = srv.Client();
  std::string body1 =
      R"({"name":"web","region":"eu-central","image":"debian-12","plan":"s-1vcpu-1gb"})";
  std::string body2 =
      "{ \"plan\": \"s-1vcpu-1gb\",\n  \"image\":\"debian-12\", \"region\":\"eu-central\", "
      "\"name\":\"web\" }";
  auto first = c->Request("POST", "/api/v1/compute", body1, {"Idempotency-Key: create-web"});
  REQUIRE(first.status == 201);
  CHECK_FALSE(first.has_header("idempotent-replayed"));
  auto again = c->Request("POST", "/api/v1/compute", body2, {"Idempotency-Key: create-web"});
  REQUIRE(again.status == 201);
  CHECK(again.header("idempotent-replayed") == "true");
  CHECK(again.body == first.body);
  CHECK(StableHeaders(again) == StableHeaders(first));
  CHECK(again.header("x-request-id") != first.header("x-request-id"));
  CHECK(c->Get("/api/v1/compute").json()["data"].size() == 1);

  SECTION("a different body with the same key is 409 idempotency_conflict") {
    auto other = c->Post("/api/v1/compute", InstanceBody("web-2"), "create-web");
    CHECK(other.status == 409);
    CHECK(other.json()["error"]["code"] == "idempotency_conflict");
    CHECK(other.header("cache-control") == "no-store");
    CHECK(c->Get("/api/v1/compute").json()["data"].size() == 1);
  }
}

TEST_CASE("stored error outcomes replay too") {
  ServeFixture srv;
  auto c = srv.Client();
  std::string missing = "/api/v1/compute/00000000-0000-4000-8000-000000000000";
  auto first = c->Patch(missing, {{"name", "x"}}, "patch-missing");
  REQUIRE(first.status == 404);
  auto again = c->Patch(missing, {{"name", "x"}}, "patch-missing");
  CHECK(again.status == 404);
  CHECK(again.body == first.body);
  CHECK(again.header("idempotent-replayed") == "true");
}

TEST_CASE("Idempotency-Key is required on every control-plane mutation") {
  ServeFixture srv;
  auto c = srv.Client();
  std::string id = c->Post("/api/v1/compute", InstanceBody(), "k").json()["instance"]["publicId"];
  std::vector<HttpResult> results = {
      c->Post("/api/v1/compute", InstanceBody()),
      c->Patch("/api/v1/compute/" + id, {{"name", "n"}}),
      c->Delete("/api/v1/compute/" + id),
      c->Request("POST", "/api/v1/compute/" + id + "/actions/stop"),
      c->Post("/api/v1/networking",
              {{"name", "n"}, {"region", "eu-central"}, {"cidr", "10.0.0.0/16"}}),
      c->Post("/api/v1/storage", {{"name", "v"}, {"region", "eu-central"}, {"sizeGb", 1}}),
  };
  for (const auto& r : results) {
    CHECK(r.status == 400);
    CHECK(r.json()["error"]["code"] == "idempotency_key_required");
    CHECK(r.header("cache-control") == "no-store");
  }
  auto too_long = c->Post("/api/v1/compute", InstanceBody(), std::string(256, 'k'));
  CHECK(too_long.status == 400);
  CHECK(too_long.json()["error"]["message"].get<std::string>().rfind("Idempotency-Key", 0) == 0);
  CHECK(c->Post("/api/v1/compute", InstanceBody("max"), std::string(255, 'k')).status == 201);
  CHECK(c->Get("/api/v1/compute").json()["data"].size() == 2);
}

TEST_CASE("keys are scoped per project, method and route") {
  ServeFixture srv;
  auto dev = srv.Client();
  auto other = srv.Client(kOtherToken);
  auto a = dev->Post("/api/v1/compute", InstanceBody("a"), "shared-key");
  auto b = other->Post("/api/v1/compute", InstanceBody("b"), "shared-key");
  REQUIRE(a.status == 201);
  REQUIRE(b.status == 201);
  CHECK_FALSE(b.has_header("idempotent-replayed"));
  CHECK(a.json()["instance"]["publicId"] != b.json()["instance"]["publicId"]);
  // Same key on another route (networking) and another method (PATCH).
  auto n =
      dev->Post("/api/v1/networking",
                {{"name", "n"}, {"region", "eu-central"}, {"cidr", "10.0.0.0/16"}}, "shared-key");
  CHECK(n.status == 201);
  std::string id = a.json()["instance"]["publicId"];
  auto p = dev->Patch("/api/v1/compute/" + id, {{"name", "a2"}}, "shared-key");
  CHECK(p.status == 200);
  CHECK_FALSE(p.has_header("idempotent-replayed"));
  // Same key and method on another resource's route.
  std::string id2 =
      dev->Post("/api/v1/compute", InstanceBody("c"), "k2").json()["instance"]["publicId"];
  auto p2 = dev->Patch("/api/v1/compute/" + id2, {{"name", "a2"}}, "shared-key");
  CHECK(p2.status == 200);
  CHECK(p2.json()["instance"]["publicId"] == id2);
}

TEST_CASE("rejected requests are not stored: the key stays usable") {
  ServeFixture srv;
  auto c = srv.Client();
  auto bad = c->Post("/api/v1/compute", {{"name", "x"}}, "retry-me");
  REQUIRE(bad.status == 400);
  auto unsupported = c->Request("POST", "/api/v1/compute", InstanceBody().dump(),
                                {"Idempotency-Key: retry-me", "Content-Type: text/plain"});
  REQUIRE(unsupported.status == 415);
  HttpClient anonymous(srv.base(), "");
  REQUIRE(anonymous.Post("/api/v1/compute", InstanceBody(), "retry-me").status == 401);
  auto good = c->Post("/api/v1/compute", InstanceBody(), "retry-me");
  CHECK(good.status == 201);
  CHECK_FALSE(good.has_header("idempotent-replayed"));
}

TEST_CASE("preview POST with Idempotency-Key is deduplicated, without it, it is not") {
  ServeFixture srv;
  auto c = srv.Client();
  auto a = c->Post("/v1/instances", InstanceBody(), "preview-key");
  auto b = c->Post("/v1/instances", InstanceBody(), "preview-key");
  REQUIRE(a.status == 201);
  CHECK(b.status == 201);
  CHECK(b.body == a.body);
  CHECK(b.header("idempotent-replayed") == "true");
  CHECK(c->Get("/v1/instances").json()["data"].size() == 1);
  CHECK(c->Post("/v1/instances", InstanceBody()).status == 201);
  CHECK(c->Post("/v1/instances", InstanceBody()).status == 201);
  CHECK(c->Get("/v1/instances").json()["data"].size() == 3);
}

TEST_CASE("the same key while the first request still executes is 409 idempotency_key_in_use") {
  // Every write batch is held 1.5 s, so the first request is still executing
  // when the second arrives.
  ServeFixture srv({"--faults", "mutation_delay=1500ms"});
  HttpResult r1, r2;
  std::thread t1([&] { r1 = srv.Client()->Post("/api/v1/compute", InstanceBody(), "slow-key"); });
  std::thread t2([&] { r2 = srv.Client()->Post("/api/v1/compute", InstanceBody(), "slow-key"); });
  t1.join();
  t2.join();
  std::vector<HttpResult*> rs = {&r1, &r2};
  int created = 0, in_use = 0;
  const HttpResult* winner = nullptr;
  for (auto* r : rs) {
    if (r->status == 201 && !r->has_header("idempotent-replayed")) {
      ++created;
      winner = r;
    }
    if (r->status == 409 && r->json()["error"]["code"] == "idempotency_key_in_use") ++in_use;
  }
  CHECK(created == 1);
  CHECK(in_use == 1);
  REQUIRE(winner != nullptr);
  auto replay = srv.Client()->Post("/api/v1/compute", InstanceBody(), "slow-key");
  CHECK(replay.status == 201);
  CHECK(replay.body == winner->body);
  CHECK(replay.header("idempotent-replayed") == "true");
}

}  // namespace serve_idempotency_test
