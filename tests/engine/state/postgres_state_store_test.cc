// What only the PostgreSQL store promises: stacks sharing a database stay
// apart, separate sessions racing for the lock leave exactly one winner, and
// tables from a newer Cairn are refused. Hidden from the default run; the
// CTest entry "engine: state on PostgreSQL" runs them under pg_harness.sh.
#include "engine/state/postgres_state_store.h"

#include <catch2/catch.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "tests/engine/state/state_test_support.h"

namespace postgres_state_store_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<PostgresStateStore> MustOpen(const std::string& stack) {
  auto s = PostgresStateStore::Open(TestPostgresUrl(), stack);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(*s);
}

}  // namespace

TEST_CASE("postgres state: stacks in one database are kept apart", "[.][postgres]") {
  auto a = MustOpen(UniqueStackName());
  auto b = MustOpen(UniqueStackName());
  ResourceState r;
  r.address = "network.core";
  r.kind = "network";
  r.id = "net-a";
  StateCommit c;
  c.put = {r};
  REQUIRE(a->Commit(c).ok());
  REQUIRE(a->Lock("apply", 0ms).ok());
  auto seq = a->ReserveSequences(1);
  REQUIRE(seq.ok());

  StateSnapshot sb = *b->Load();
  CHECK(sb.serial == 0);
  CHECK(sb.resources.empty());
  CHECK(sb.lineage != a->Load()->lineage);
  CHECK(b->Lock("apply", 0ms).ok());  // a's lock is not b's
  CHECK(*b->ReserveSequences(1) == 1);
  CHECK(b->PendingJournal()->empty());
}

TEST_CASE("postgres state: of two sessions racing for the lock, exactly one wins",
          "[.][postgres]") {
  const std::string stack = UniqueStackName();
  for (int round = 0; round < 5; ++round) {
    auto one = MustOpen(stack);
    auto two = MustOpen(stack);
    std::optional<Result<LockInfo>> r1, r2;
    {
      std::jthread t1([&] { r1 = one->Lock("apply", 0ms); });
      std::jthread t2([&] { r2 = two->Lock("destroy", 0ms); });
    }
    REQUIRE(r1.has_value());
    REQUIRE(r2.has_value());
    CHECK(r1->ok() != r2->ok());
    const Result<LockInfo>& winner = r1->ok() ? *r1 : *r2;
    const Result<LockInfo>& loser = r1->ok() ? *r2 : *r1;
    CHECK(loser.status().code() == StatusCode::kConflict);
    if (winner.ok()) {
      CHECK(Contains(loser.status().message(), winner->id));
      REQUIRE(one->ForceUnlock(winner->id).ok());
    }
  }
}

TEST_CASE("postgres state: tables from a newer Cairn are refused", "[.][postgres]") {
  MustOpen(UniqueStackName());  // the tables exist
  pqxx::connection conn(TestPostgresUrl());
  {
    pqxx::work w(conn);
    w.exec("UPDATE cairn_state_format SET version = 99");
    w.commit();
  }
  auto refused = PostgresStateStore::Open(TestPostgresUrl(), UniqueStackName());
  {
    pqxx::work w(conn);
    w.exec_params("UPDATE cairn_state_format SET version = $1", kPostgresStateFormatVersion);
    w.commit();
  }
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kFailedPrecondition);
  CHECK(Contains(refused.status().message(), "format version 99"));
  CHECK(Contains(refused.status().message(), "newer Cairn"));
}

TEST_CASE("postgres state: a negative format version is refused as not Cairn's", "[.][postgres]") {
  MustOpen(UniqueStackName());  // the tables exist
  pqxx::connection conn(TestPostgresUrl());
  {
    pqxx::work w(conn);
    w.exec("UPDATE cairn_state_format SET version = -3");
    w.commit();
  }
  auto refused = PostgresStateStore::Open(TestPostgresUrl(), UniqueStackName());
  {
    pqxx::work w(conn);
    w.exec_params("UPDATE cairn_state_format SET version = $1", kPostgresStateFormatVersion);
    w.commit();
  }
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kFailedPrecondition);
  CHECK(Contains(refused.status().message(), "format version -3: not Cairn's"));
}

}  // namespace postgres_state_store_test
