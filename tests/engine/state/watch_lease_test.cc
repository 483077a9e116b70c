// `cairn watch`'s claim on a state (StateStore::TryWatchLease): one holder
// at a time, who it is told to the others, and released with the store
// that held it. SQLite: a lock on a file beside the state; PostgreSQL
// (hidden, run under pg_harness.sh): a session advisory lock.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "engine/state/postgres_state_store.h"
#include "engine/state/sqlite_state_store.h"
#include "tests/engine/state/state_test_support.h"
#include "tests/support/process.h"

namespace watch_lease_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;

namespace {

template <class Open>
void CheckOneHolderAtATime(Open open) {
  auto a = open();
  auto b = open();
  std::string holder = "unset";
  REQUIRE(*a->TryWatchLease("alice@host pid 1", &holder));
  CHECK(holder == "unset");  // not touched when taken
  // Held already: still true.
  CHECK(*a->TryWatchLease("alice@host pid 1", &holder));
  // Another store (another process's, as far as the lock knows) is told who.
  Result<bool> other = b->TryWatchLease("bob@host pid 2", &holder);
  REQUIRE(other.ok());
  CHECK_FALSE(*other);
  CHECK(holder == "alice@host pid 1");
  // Released with its store: the other takes it.
  a.reset();
  REQUIRE(*b->TryWatchLease("bob@host pid 2", &holder));
  auto c = open();
  CHECK_FALSE(*c->TryWatchLease("carol@host pid 3", &holder));
  CHECK(holder == "bob@host pid 2");
}

}  // namespace

TEST_CASE("sqlite watch lease: one holder at a time and who it is") {
  TempDir dir;
  const std::string path = dir.path() + "/state.db";
  CheckOneHolderAtATime([&] {
    auto s = SqliteStateStore::Open(path);
    REQUIRE(s.ok());
    return std::move(*s);
  });
  struct stat st {};
  REQUIRE(stat((path + ".watch").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("sqlite watch lease: a link in the lease file's place is refused") {
  TempDir dir;
  const std::string path = dir.path() + "/state.db";
  WriteFile(dir.path() + "/elsewhere", "keep me\n");
  REQUIRE(symlink((dir.path() + "/elsewhere").c_str(), (path + ".watch").c_str()) == 0);
  auto s = SqliteStateStore::Open(path);
  REQUIRE(s.ok());
  std::string holder;
  Result<bool> lease = (*s)->TryWatchLease("alice@host pid 1", &holder);
  CHECK_FALSE(lease.ok());
  CHECK(ReadFile(dir.path() + "/elsewhere") == "keep me\n");
}

TEST_CASE("postgres watch lease: one holder at a time and who it is", "[.][postgres]") {
  const std::string stack = UniqueStackName();
  CheckOneHolderAtATime([&] {
    auto s = PostgresStateStore::Open(TestPostgresUrl(), stack);
    INFO(s.status().ToString());
    REQUIRE(s.ok());
    return std::move(*s);
  });
  // Another stack's lease is its own.
  auto other = PostgresStateStore::Open(TestPostgresUrl(), UniqueStackName());
  REQUIRE(other.ok());
  std::string holder;
  CHECK(*(*other)->TryWatchLease("dave@host pid 4", &holder));
}

}  // namespace watch_lease_test
