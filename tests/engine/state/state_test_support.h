// Shared by the state tests: a clock that runs lock waits instantly and can
// act while "sleeping", and one factory per StateStore implementation so the
// contract tests run unchanged against all of them.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "engine/state/memory_state_store.h"
#include "engine/state/postgres_state_store.h"
#include "engine/state/sqlite_state_store.h"
#include "engine/state/state_lock.h"
#include "tests/support/process.h"

namespace cairn::testing {

// ManualClock semantics (sleeping advances time at once), plus a hook run
// after every sleep, which is how a test releases a lock "while" another
// caller waits for it.
class HookedClock final : public Clock {
 public:
  time_point Now() override { return inner_.Now(); }
  bool SleepFor(duration d, std::stop_token stop) override {
    bool ok = inner_.SleepFor(d, stop);
    ++sleeps_;
    if (on_sleep) on_sleep(sleeps_);
    return ok;
  }
  int64_t UnixSeconds() override { return inner_.UnixSeconds(); }
  std::function<void(int sleeps)> on_sleep;
  int sleeps() const { return sleeps_; }

 private:
  ManualClock inner_;
  int sleeps_ = 0;
};

// The PostgreSQL URL the harness (pg_harness.sh) exports. The PostgreSQL
// tests fail, never skip, without it.
inline std::string TestPostgresUrl() {
  const char* url = std::getenv("CAIRN_TEST_PG_URL");
  INFO("CAIRN_TEST_PG_URL is not set: run these tests through tests/engine/state/pg_harness.sh");
  REQUIRE(url != nullptr);
  REQUIRE(*url != '\0');
  return url;
}

inline std::string UniqueStackName() { return "test-" + *RandomUuid(); }

class StoreFactory {
 public:
  virtual ~StoreFactory() = default;
  // The store under test, opened once.
  virtual StateStore& store() = 0;
  // A second, independent handle on the same state (as another process would
  // open it), or nullptr where there is none (memory).
  virtual std::unique_ptr<StateStore> Reopen() = 0;
  virtual bool durable() const = 0;
};

class MemoryFactory final : public StoreFactory {
 public:
  explicit MemoryFactory(Clock* clock) : store_(clock) {}
  StateStore& store() override { return store_; }
  std::unique_ptr<StateStore> Reopen() override { return nullptr; }
  bool durable() const override { return false; }

 private:
  MemoryStateStore store_;
};

class SqliteFactory final : public StoreFactory {
 public:
  explicit SqliteFactory(Clock* clock)
      : clock_(clock), path_(SqliteStateStore::DefaultPath(dir_.path())) {
    store_ = Reopen();
  }
  StateStore& store() override { return *store_; }
  std::unique_ptr<StateStore> Reopen() override {
    auto s = SqliteStateStore::Open(path_, clock_);
    INFO(s.status().ToString());
    REQUIRE(s.ok());
    return std::move(*s);
  }
  bool durable() const override { return true; }

 private:
  Clock* clock_;
  TempDir dir_;
  std::string path_;
  std::unique_ptr<StateStore> store_;
};

// A random 256-bit key (64 hex digits) the encrypted stores of the tests
// read from CAIRN_TEST_STATE_KEY.
inline constexpr const char* kTestStateKeyEnv = "CAIRN_TEST_STATE_KEY";
inline constexpr const char* kTestStateKey =
    "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0";

inline StateEncryptionSpec TestEncryption(const char* env = kTestStateKeyEnv,
                                          const char* value = kTestStateKey) {
  ::setenv(env, value, 1);
  StateEncryptionSpec spec;
  spec.key = StateKeySource{env, ""};
  return spec;
}

// The SQLite store with every record encrypted (engine/state/state_cipher.h).
class EncryptedSqliteFactory final : public StoreFactory {
 public:
  explicit EncryptedSqliteFactory(Clock* clock)
      : clock_(clock), path_(SqliteStateStore::DefaultPath(dir_.path())) {
    store_ = Reopen();
  }
  StateStore& store() override { return *store_; }
  std::unique_ptr<StateStore> Reopen() override {
    SqliteStateOptions options;
    options.clock = clock_;
    options.encryption = TestEncryption();
    auto s = SqliteStateStore::Open(path_, options);
    INFO(s.status().ToString());
    REQUIRE(s.ok());
    return std::move(*s);
  }
  bool durable() const override { return true; }
  const std::string& path() const { return path_; }

 private:
  Clock* clock_;
  TempDir dir_;
  std::string path_;
  std::unique_ptr<StateStore> store_;
};

class PostgresFactory final : public StoreFactory {
 public:
  // `encrypted`: every record sealed under the tests' key.
  explicit PostgresFactory(Clock* clock, bool encrypted = false)
      : clock_(clock), url_(TestPostgresUrl()), stack_(UniqueStackName()), encrypted_(encrypted) {
    store_ = Reopen();
  }
  StateStore& store() override { return *store_; }
  std::unique_ptr<StateStore> Reopen() override {
    PostgresStateOptions options;
    options.clock = clock_;
    if (encrypted_) options.encryption = TestEncryption();
    auto s = PostgresStateStore::Open(url_, stack_, options);
    INFO(s.status().ToString());
    REQUIRE(s.ok());
    return std::move(*s);
  }
  bool durable() const override { return true; }

 private:
  Clock* clock_;
  std::string url_;
  std::string stack_;
  bool encrypted_;
  std::unique_ptr<StateStore> store_;
};

// A create of `address` journaled with sequence number `seq`.
inline JournalEntry TestJournalEntry(int64_t seq, const std::string& address,
                                     const std::string& body) {
  JournalEntry e;
  e.seq = seq;
  e.address = address;
  e.action = Action::kCreate;
  e.kind = "instance";
  e.method = "POST";
  e.path = "/api/v1/instances";
  e.body = body;
  e.idempotency_key = "lineage-" + std::to_string(seq);
  e.started_at = 1'700'000'123;
  e.context = Value{{"depends_on", Value::array({"network.core"})}};
  return e;
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace cairn::testing
