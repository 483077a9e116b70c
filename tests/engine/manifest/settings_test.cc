// The settings stage alone: provider and backend documents (read by the
// documents stage) and an evaluator in, settings and diagnostics out.
#include "engine/manifest/settings.h"

#include <catch2/catch.hpp>

#include "tests/engine/manifest/support/stage_docs.h"

namespace settings_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

namespace {

// The provider and backend settings of the documents of `yaml`.
struct Docs : StageDocs {
  using StageDocs::StageDocs;
  ProviderConfig Provider() {
    ProviderConfig p;
    LoadProvider(docs, AsWritten(), p, diags);
    return p;
  }
  BackendConfig Backend() {
    BackendConfig b;
    LoadBackend(docs, AsWritten(), b, diags);
    return b;
  }
};

std::vector<std::string> Codes(const std::vector<Diagnostic>& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags) out.push_back(d.code);
  return out;
}

}  // namespace

TEST_CASE("settings: a provider document sets what it gives, the defaults stand for the rest") {
  Docs d(
      "kind: provider\nendpoint: https://api.example\ntoken_env: MY_TOKEN\nparallelism: \"4\"\n"
      "timeouts: {create: 120, read: 5}\n");
  ProviderConfig p = d.Provider();
  CHECK(d.diags.empty());
  CHECK(p.endpoint == "https://api.example");
  CHECK(p.token_env == "MY_TOKEN");
  CHECK(p.parallelism == 4);
  CHECK(p.timeouts == std::map<std::string, int>{{"create", 120}, {"read", 5}});
  CHECK(d.evaluated == std::vector<std::string>{"endpoint in a provider document",
                                                "parallelism in a provider document"});

  Docs none("kind: network\nname: n\n");
  none.docs.clear();
  ProviderConfig defaults = none.Provider();
  CHECK(defaults.endpoint.empty());
  CHECK(defaults.token_env == "CAIRN_TOKEN");
  CHECK(defaults.parallelism == 32);
}

TEST_CASE("settings: a provider document's problems, each where it is") {
  Docs d(
      "kind: provider\n"
      "token: abc\n"
      "endpoint: ftp://example\n"
      "token_env: 1BAD\n"
      "parallelism: 0\n"
      "timeouts: {create: 0, craete: 5, read: cairn_abcdefghijklmnopqrstuvwxyz}\n");
  ProviderConfig p = d.Provider();
  REQUIRE(Codes(d.diags) == std::vector<std::string>{"token_in_manifest", "token_literal",
                                                     "invalid_value", "invalid_value",
                                                     "invalid_value", "unknown_field",
                                                     "invalid_value", "invalid_value"});
  CheckAt(d.diags[0], "token_in_manifest", 2, 1);
  CheckAt(d.diags[1], "token_literal", 6, 40);
  CheckAt(d.diags[2], "invalid_value", 3, 11);
  CHECK(d.diags[2].summary == "endpoint must be an http:// or https:// URL");
  CheckAt(d.diags[3], "invalid_value", 4, 12);
  CheckAt(d.diags[4], "invalid_value", 5, 14);
  CHECK(d.diags[4].summary == "parallelism must be a whole number from 1 to 256");
  CheckAt(d.diags[5], "unknown_field", 6, 23);
  CHECK(d.diags[5].detail == "did you mean \"create\"?");
  CheckAt(d.diags[6], "invalid_value", 6, 20);
  CHECK(d.diags[6].summary == "timeouts.create must be a whole number of seconds from 1 to 86400");
  CHECK(d.diags[7].summary == "timeouts.read must be a whole number of seconds from 1 to 86400");
  CHECK(p.endpoint.empty());
  CHECK(p.token_env == "CAIRN_TOKEN");
  CHECK(p.parallelism == 32);
  CHECK(p.timeouts.empty());
}

TEST_CASE("settings: what the evaluator reported is not reported again") {
  Docs d("kind: provider\nendpoint: ${var.endpoint}\nparallelism: ${var.n}\n");
  ProviderConfig p = d.Provider();
  CHECK(Codes(d.diags) == std::vector<std::string>{"eval_error", "eval_error"});
  CHECK(p.endpoint.empty());
}

TEST_CASE("settings: a stack has one provider and one backend") {
  Docs d(
      "kind: provider\nparallelism: 3\n---\nkind: provider\nparallelism: 5\n---\n"
      "kind: backend\npath: a.db\n---\nkind: backend\npath: b.db\n");
  std::vector<const ManifestDocument*> all = d.docs;
  d.docs = {all[0], all[1]};
  CHECK(d.Provider().parallelism == 3);
  d.docs = {all[2], all[3]};
  CHECK(d.Backend().path == "a.db");
  REQUIRE(d.diags.size() == 2);
  CheckAt(d.diags[0], "duplicate_provider", 4, 7);
  CHECK(d.diags[0].detail == "first declared at m.yaml:1:7");
  CheckAt(d.diags[1], "duplicate_backend", 10, 7);
  CHECK(d.diags[1].detail == "first declared at m.yaml:7:7");
}

TEST_CASE("settings: a backend document") {
  Docs sqlite("kind: backend\ntype: sqlite\npath: state/x.db\n");
  BackendConfig b = sqlite.Backend();
  CHECK(sqlite.diags.empty());
  CHECK(b.type == "sqlite");
  CHECK(b.path == "state/x.db");

  Docs pg("kind: backend\nname: web-prod\ntype: postgres\nurl_env: DB_URL\n");
  b = pg.Backend();
  CHECK(pg.diags.empty());
  CHECK(b.type == "postgres");
  CHECK(b.url_env == "DB_URL");
  CHECK(b.stack_name == "web-prod");
}

TEST_CASE("settings: a backend document's problems") {
  Docs pg("kind: backend\ntype: postgres\nurl: postgres://u:p@h/db\npath: x.db\n");
  pg.Backend();
  REQUIRE(Codes(pg.diags) == std::vector<std::string>{"secret_in_manifest", "invalid_value",
                                                      "missing_field", "missing_field"});
  CheckAt(pg.diags[0], "secret_in_manifest", 3, 1);
  CheckAt(pg.diags[1], "invalid_value", 4, 1);
  CHECK(pg.diags[1].summary == "path applies to the sqlite backend only");
  CheckAt(pg.diags[2], "missing_field", 1, 7);
  CHECK(pg.diags[2].summary == "missing required field \"url_env\" in postgres backend document");
  CHECK(pg.diags[3].summary == "missing required field \"name\" in postgres backend document");

  Docs mysql("kind: backend\ntype: mysql\nurl_env: 1BAD\n");
  BackendConfig b = mysql.Backend();
  REQUIRE(mysql.diags.size() == 1);  // nothing else is read
  CheckAt(mysql.diags[0], "invalid_value", 2, 7);
  CHECK(b.type == "sqlite");

  Docs sqlite("kind: backend\nurl_env: DB_URL\n");
  sqlite.Backend();
  REQUIRE(sqlite.diags.size() == 1);
  CheckAt(sqlite.diags[0], "invalid_value", 2, 1);
  CHECK(sqlite.diags[0].summary == "url_env applies to the postgres backend only");
}

}  // namespace settings_test
