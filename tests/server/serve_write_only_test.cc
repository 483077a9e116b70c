// An instance's user data (schemas/instance.schema.json, x-cairn.write_only)
// through the real `cairn serve`: taken on create by both APIs, checked
// against the schema, never returned, kept in none of the server's files,
// and refused on PATCH.
#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace serve_write_only_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

const char* kUserData = "#cloud-config\npassword: hunter2-xyzzy-user-data\n";

// Everything the server stored: the files of its data directory, or on
// PostgreSQL a dump of its database's rows.
std::string Stored(const ServeFixture& srv) {
  if (ServeFixture::OnPostgres()) {
    auto dump = RunCommand({"/usr/bin/pg_dump", "--data-only",
                            "--dbname=" + ServeFixture::DatabaseFor(srv.data_dir())});
    INFO(dump.err);
    REQUIRE(dump.exit_code == 0);
    return dump.out;
  }
  std::string out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(srv.data_dir())) {
    if (e.is_regular_file()) out += ReadFile(e.path().string());
  }
  return out;
}

}  // namespace

TEST_CASE("user data is taken on create and never returned nor kept") {
  ServeFixture srv({"--log-level", "trace"});
  auto c = srv.Client();
  json body = InstanceBody("web-1");
  body["userData"] = kUserData;
  auto r = c->Post("/api/v1/compute", body, "create-ud-1");
  REQUIRE(r.status == 201);
  CHECK(r.body.find("hunter2") == std::string::npos);
  const std::string id = r.json()["instance"]["publicId"];

  json preview = InstanceBody("web-2");
  preview["user_data"] = kUserData;
  auto p = c->Post("/v1/instances", preview);
  REQUIRE(p.status == 201);
  CHECK(p.body.find("hunter2") == std::string::npos);

  // The same key and body replay the answer; the same key with other user
  // data is another request.
  CHECK(c->Post("/api/v1/compute", body, "create-ud-1").status == 201);
  json other = body;
  other["userData"] = "#cloud-config\n";
  auto conflict = c->Post("/api/v1/compute", other, "create-ud-1");
  CHECK(conflict.status == 409);
  CHECK(conflict.json()["error"]["code"] == "idempotency_conflict");

  auto d = c->Get("/api/v1/compute/" + id);
  REQUIRE(d.status == 200);
  CHECK_FALSE(d.json()["instance"].contains("userData"));
  auto l = c->Get("/v1/instances");
  REQUIRE(l.status == 200);
  CHECK(l.body.find("hunter2") == std::string::npos);

  auto patch = c->Patch("/api/v1/compute/" + id, {{"userData", "x"}}, "patch-ud-1");
  CHECK(patch.status == 400);
  CHECK(patch.json()["error"]["message"].get<std::string>().find("userData") != std::string::npos);

  // Over the schema's limit: the schema's own message, naming the wire field.
  json big = InstanceBody("web-3");
  big["userData"] = std::string(16385, 'a');
  auto too_big = c->Post("/api/v1/compute", big, "create-ud-3");
  CHECK(too_big.status == 400);
  CHECK(too_big.json()["error"]["message"].get<std::string>().rfind("userData", 0) == 0);

  const std::string stored = Stored(srv);
  CHECK(stored.find("web-1") != std::string::npos);  // the search reads the records
  CHECK(stored.find("hunter2-xyzzy") == std::string::npos);
  CHECK(srv.process().Stderr().find("hunter2") == std::string::npos);
}

}  // namespace serve_write_only_test
