// server/postgres_api_store.h on its own: lists read the index of live
// records, and a database of schema 2 gains it. Hidden ([.][replicas]):
// the ctest entry "server: replicas on PostgreSQL" runs it under
// tests/engine/state/pg_harness.sh.
#include "server/postgres_api_store.h"

#include <catch2/catch.hpp>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "tests/server/support/api_store_steps.h"
#include "tests/support/pg_database.h"

namespace postgres_api_store_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::server;
using cairn::server::testing::RunMutation;
using cairn::server::testing::WalkInstances;

namespace {

std::vector<std::string> Indexes(const std::string& url) {
  pqxx::connection c(url);
  pqxx::nontransaction t(c);
  std::vector<std::string> out;
  for (const auto& row : t.exec("SELECT indexname FROM pg_indexes WHERE tablename = "
                                "'cairn_serve_resources' ORDER BY indexname")) {
    out.push_back(row[0].as<std::string>());
  }
  return out;
}

}  // namespace

TEST_CASE("postgres store: lists skip deleted records by the index of live ones after an upgrade",
          "[.][replicas]") {
  const std::string url = cairn::testing::TestDatabaseUrl("postgres_api_store_live_index");
  const std::vector<std::string> want_indexes = {
      "cairn_serve_resources_due", "cairn_serve_resources_id_key", "cairn_serve_resources_live",
      "cairn_serve_resources_pkey"};
  std::vector<std::string> live;
  {
    auto store = PostgresApiStore::Open(url, StoreOptions{});
    REQUIRE(store.ok());
    REQUIRE(RunMutation(**store, [](WriteTxn& txn) {
              for (int i = 0; i < 100; ++i) {
                Record r;
                r.id = "r" + std::to_string(100 + i);
                r.project = "p";
                r.kind = "instance";
                r.status = i % 10 == 0 ? "running" : "deleted";
                r.last_op = "create";
                r.created_at = "2026-01-01T00:00:00Z";
                if (!txn.Insert(&r).ok()) return false;
              }
              return true;
            }).ok());
    for (int i = 0; i < 100; i += 10) live.push_back("r" + std::to_string(100 + i));
    CHECK(WalkInstances(**store, 3) == live);
    (*store)->Close();
  }
  CHECK(Indexes(url) == want_indexes);
  // Back to schema 2 (the old index, no index of live records), then open.
  {
    pqxx::connection c(url);
    pqxx::work w(c);
    w.exec(
        "DROP INDEX cairn_serve_resources_live; CREATE INDEX "
        "cairn_serve_resources_by_project_kind ON cairn_serve_resources(project, kind, seq); "
        "UPDATE cairn_serve_schema SET version = 2");
    w.commit();
  }
  auto again = PostgresApiStore::Open(url, StoreOptions{});
  REQUIRE(again.ok());
  CHECK(WalkInstances(**again, 4) == live);
  CHECK(Indexes(url) == want_indexes);
  (*again)->Close();
}

}  // namespace postgres_api_store_test
