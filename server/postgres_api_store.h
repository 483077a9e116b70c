// PostgresApiStore: the store of `cairn serve` on PostgreSQL, shared by any
// number of servers (replicas) on one database, which then behave as one:
//
//   - Everything durable is in the database: resources (and their
//     tombstones; `seq` is a BIGSERIAL, never reused), idempotency records,
//     token hashes, the IPv4 pools, the lifecycle schedule
//     (resources.next_step_ms), idempotency keys in flight and rate-limit
//     buckets.
//   - Writes: the group-commit writer of ApiStore, one transaction per batch
//     (no savepoint per mutation: one that rolls back decides so before it
//     writes, and a database error fails the whole batch, answered 503);
//     the batch's writes travel as SQL text with the next read or the
//     COMMIT, consecutive inserts merged into multi-row INSERTs, so a batch
//     of creates is one round trip. A mutation reads its resource FOR
//     UPDATE: another server's edit of it (or of one referring to it) waits
//     for the commit and reads the result, so no update is lost (two
//     batches that lock rows in opposite orders: PostgreSQL ends one as a
//     deadlock, and its requests are answered 503, to retry).
//     synchronous_commit on, so an acknowledged write survives the server's
//     kill -9 (and the database's crash). Claims and buckets are single
//     autocommit statements without a synchronous commit.
//   - An idempotency key is claimed (cairn_serve_claims, a row with this
//     server's random owner id and a 60 s lease) before its request
//     executes, by cairn_serve_claim(), which then reads the key's stored
//     response in a fresh snapshot (one round trip): a stored response is
//     replayed; a key claimed elsewhere without one answers 409
//     idempotency_key_in_use. The response is stored in the mutation's
//     transaction and the claim released after the commit (freed in this
//     server's memory at once, the row deleted in batches off the request
//     path); a claim whose server died lapses with its lease.
//   - Rate limits: one bucket row per project, refilled and taken in one
//     UPDATE, whichever server answers.
//   - Lifecycle steps: WriteTxn::Due takes the due records FOR UPDATE SKIP
//     LOCKED, so each step runs once however many servers are up; a server
//     killed mid-step rolls back and releases them to the others.
//   - Schema: versioned migrations (cairn_serve_schema), run under an
//     advisory lock, so servers starting together migrate once.
// The URL's password is registered with the redactor; libpqxx stays inside
// postgres_store.cc. Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "server/api_store.h"

namespace cairn::server {

class PostgresApiStore final : public ApiStore {
 public:
  static Result<std::unique_ptr<ApiStore>> Open(const std::string& url, StoreOptions options);
  ~PostgresApiStore() override;

  Result<std::optional<Record>> Get(const std::string& project, const std::string& id) override;
  Result<std::vector<Record>> List(const std::string& project, const std::string& kind,
                                   int64_t after_seq, int limit) override;
  Result<std::optional<StoredResponse>> GetResponse(const std::string& scope) override;
  Result<int64_t> NextDueMs() override;
  Result<std::vector<std::pair<std::string, std::string>>> LoadTokens() override;
  Result<KeyClaim> ClaimKey(const std::string& scope) override;
  void ReleaseKey(const std::string& scope) override;
  Result<std::optional<Bucket>> TakeToken(const std::string& project, double rate,
                                          int64_t burst) override;
  bool shared() const override { return true; }

 protected:
  Status RunBatch(std::vector<Pending>& batch, size_t* kept) override;

 private:
  struct Connection;  // postgres_store.cc
  class Lease;
  explicit PostgresApiStore(std::string url, StoreOptions options);
  Lease Borrow();
  // Deletes released claims, many per statement, off the request path.
  void ReleaseLoop();

  const std::string url_;
  const std::string owner_;  // this server's id in claims: random, per process
  std::unique_ptr<Connection> writer_;
  Mutex pool_mu_;
  std::vector<std::unique_ptr<Connection>> idle_ GUARDED_BY(pool_mu_);
  Mutex release_mu_;
  CondVar release_cv_;
  std::deque<std::string> to_release_ GUARDED_BY(release_mu_);
  bool release_stop_ GUARDED_BY(release_mu_) = false;
  std::thread releaser_;
};

}  // namespace cairn::server
