// SqliteApiStore: the default store of `cairn serve`, one SQLite database
// (WAL, synchronous=FULL) under --data-dir, with versioned schema migrations
// (PRAGMA user_version; the list is in sqlite_api_store.cc). Connections,
// cached statements, transactions, migrations and error mapping are
// base/sqlite.h's, as in the engine's state store. A batch (ApiStore's group
// commit) is one transaction, each mutation in a SAVEPOINT of its own so that
// one that fails leaves nothing and the others stay: one fsync per batch. WAL
// checkpoints run on their own thread and connection, never inside a commit:
// an acknowledged write survives kill -9.
//
// Reads use a pool of read connections (WAL lets them run beside the
// writer). One server per data directory: Open() takes an exclusive flock
// on DATA_DIR/LOCK (released by the kernel even on kill -9). Idempotency
// keys in flight and rate-limit buckets are the server's own (in memory).
//
// On-disk format (schema version 1):
//   tokens(sha256 PK, project)                 SHA-256 of API tokens, never tokens
//   resources(seq PK AUTOINCREMENT, id UNIQUE, project, kind, status, last_op,
//             fate, next_step_ms, created_at, attrs JSON)
//             seq orders lists and backs keyset cursors; deleted records
//             stay as tombstones (status 'deleted') so seq is never reused
//   idempotency(scope PK, request_sha256, status, headers JSON, body, created_ms)
//   ipv4_pool(region PK, next_host)
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "server/api_store.h"

namespace cairn {
class SqliteDb;
}  // namespace cairn

namespace cairn::server {

class SqliteApiStore final : public ApiStore {
 public:
  static Result<std::unique_ptr<ApiStore>> Open(const std::string& dir, StoreOptions options);
  ~SqliteApiStore() override;

  Result<std::optional<Record>> Get(const std::string& project, const std::string& id) override;
  Result<std::vector<Record>> List(const std::string& project, const std::string& kind,
                                   int64_t after_seq, int limit) override;
  Result<std::optional<StoredResponse>> GetResponse(const std::string& scope) override;
  Result<int64_t> NextDueMs() override;
  Result<std::vector<std::pair<std::string, std::string>>> LoadTokens() override;

 protected:
  Status RunBatch(std::vector<Pending>& batch, size_t* kept) override;

 private:
  explicit SqliteApiStore(StoreOptions options);
  class ReadLease;
  ReadLease Lease();
  void CheckpointLoop();

  std::string path_;
  int lock_fd_ = -1;  // flock on DATA_DIR/LOCK: one server per data directory
  std::unique_ptr<SqliteDb> writer_db_;

  Mutex read_mu_;
  std::vector<std::unique_ptr<SqliteDb>> idle_readers_ GUARDED_BY(read_mu_);

  Mutex checkpoint_mu_;
  CondVar checkpoint_cv_;
  bool checkpoint_stop_ GUARDED_BY(checkpoint_mu_) = false;
  std::thread checkpointer_;  // WAL checkpoints off the writer's commit path
  std::unique_ptr<SqliteDb> checkpoint_db_;
};

}  // namespace cairn::server
