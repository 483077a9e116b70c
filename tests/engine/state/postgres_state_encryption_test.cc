// Encryption at rest of the PostgreSQL state, as of the SQLite one
// (sqlite_state_encryption_test.cc): no plaintext of a record in any row of
// the stack, a wrong key refused before anything is read, `Rekey()` from
// plaintext and across a rotation, in one transaction. Hidden from the
// default run; pg_harness.sh runs them ([postgres]).
#include <catch2/catch.hpp>
#include <pqxx/pqxx>

#include "engine/state/postgres_state_store.h"
#include "tests/engine/state/state_test_support.h"

namespace postgres_state_encryption_test {

using namespace cairn;
using namespace cairn::testing;

constexpr const char* kSecret = "hunter2-secret-value";
constexpr const char* kOtherKey =
    "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";

Result<std::unique_ptr<PostgresStateStore>> OpenWith(const std::string& stack,
                                                     StateEncryptionSpec spec,
                                                     bool for_rekey = false) {
  PostgresStateOptions options;
  options.encryption = std::move(spec);
  options.for_rekey = for_rekey;
  return PostgresStateStore::Open(TestPostgresUrl(), stack, options);
}

std::unique_ptr<PostgresStateStore> MustOpenWith(const std::string& stack, StateEncryptionSpec spec,
                                                 bool for_rekey = false) {
  auto s = OpenWith(stack, std::move(spec), for_rekey);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(*s);
}

// Every column of every row the stack has, as text (the journal body
// decoded from bytea).
std::string StackRows(const std::string& stack) {
  pqxx::connection c(TestPostgresUrl());
  pqxx::work w(c);
  std::string out;
  for (const char* q :
       {"SELECT r::text FROM cairn_state_resources r WHERE stack = $1",
        "SELECT o::text FROM cairn_state_outputs o WHERE stack = $1",
        "SELECT j::text || convert_from(body, 'UTF8') FROM cairn_state_journal j WHERE stack = $1",
        "SELECT m::text FROM cairn_state_meta m WHERE stack = $1"}) {
    for (const pqxx::row& row : w.exec_params(q, stack)) out += row[0].as<std::string>() + "\n";
  }
  w.commit();
  return out;
}

void WriteSecrets(StateStore& store) {
  StateCommit c;
  ResourceState r;
  r.address = "instance.web";
  r.kind = "instance";
  r.id = "inst-1";
  r.attributes = {{"user_data", std::string(kSecret)}};
  c.put.push_back(r);
  c.outputs = std::map<std::string, Value>{{"password", std::string(kSecret)}};
  REQUIRE(store.Commit(c).ok());
  JournalEntry e = TestJournalEntry(*store.ReserveSequences(1), "instance.db",
                                    std::string("{\"pw\":\"") + kSecret + "\"}");
  e.context = Value{{"secret", std::string(kSecret)}};
  REQUIRE(store.JournalBegin(e).ok());
}

void CheckSecrets(StateStore& store) {
  auto snap = store.Load();
  INFO(snap.status().ToString());
  REQUIRE(snap.ok());
  CHECK(snap->resources.at("instance.web").attributes["user_data"] == kSecret);
  CHECK(snap->outputs.at("password") == kSecret);
  auto pending = store.PendingJournal();
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  CHECK(Contains((*pending)[0].body, kSecret));
  CHECK((*pending)[0].context["secret"] == kSecret);
}

TEST_CASE("postgres state encryption: no row holds a secret in plaintext", "[.][postgres]") {
  for (bool encrypted : {false, true}) {
    INFO("encrypted " << encrypted);
    const std::string stack = UniqueStackName();
    auto store = MustOpenWith(stack, encrypted ? TestEncryption() : StateEncryptionSpec{});
    WriteSecrets(*store);
    CheckSecrets(*store);
    const std::string rows = StackRows(stack);
    CHECK(Contains(rows, kSecret) == !encrypted);
    CHECK(Contains(rows, "instance.web"));
    if (encrypted) CheckSecrets(*MustOpenWith(stack, TestEncryption()));
  }
}

TEST_CASE("postgres state encryption: a wrong or missing key is refused and writes nothing",
          "[.][postgres]") {
  const std::string stack = UniqueStackName();
  WriteSecrets(*MustOpenWith(stack, TestEncryption()));
  const std::string before = StackRows(stack);
  auto wrong = OpenWith(stack, TestEncryption("CAIRN_TEST_WRONG_KEY", kOtherKey));
  REQUIRE_FALSE(wrong.ok());
  CHECK(Contains(wrong.status().message(), "wrong key"));
  CHECK_FALSE(Contains(wrong.status().message(), kOtherKey));
  auto none = OpenWith(stack, {});
  REQUIRE_FALSE(none.ok());
  CHECK(Contains(none.status().message(), "the state is encrypted"));
  CHECK(StackRows(stack) == before);
}

TEST_CASE("postgres state encryption: rekey encrypts and rotates in one transaction",
          "[.][postgres]") {
  const std::string stack = UniqueStackName();
  WriteSecrets(*MustOpenWith(stack, {}));
  auto refused = OpenWith(stack, TestEncryption());
  REQUIRE_FALSE(refused.ok());
  CHECK(Contains(refused.status().message(), "cairn state rekey"));
  {
    auto r = MustOpenWith(stack, TestEncryption(), /*for_rekey=*/true)->Rekey();
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK(r->records == 4);
  }
  CHECK_FALSE(Contains(StackRows(stack), kSecret));
  CheckSecrets(*MustOpenWith(stack, TestEncryption()));

  StateEncryptionSpec rotation = TestEncryption("CAIRN_TEST_NEW_KEY", kOtherKey);
  rotation.fallback = StateKeySource{kTestStateKeyEnv, ""};
  CheckSecrets(*MustOpenWith(stack, rotation));
  REQUIRE(MustOpenWith(stack, rotation, /*for_rekey=*/true)->Rekey().ok());
  CheckSecrets(*MustOpenWith(stack, TestEncryption("CAIRN_TEST_NEW_KEY", kOtherKey)));
  CHECK_FALSE(OpenWith(stack, TestEncryption()).ok());  // the old key alone: wrong now
}

}  // namespace postgres_state_encryption_test
