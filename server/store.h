// The durable store of `cairn serve`: one SQLite database (WAL,
// synchronous=FULL) under --data-dir, with versioned schema migrations
// (PRAGMA user_version; the list is in store.cc).
//
// Writes go through a single writer thread with group commit: Submit()
// queues a Mutation; the writer takes every queued mutation (up to a batch
// limit), runs each in its own SAVEPOINT inside one transaction, commits
// once (one fsync for the whole batch) and only then calls each mutation's
// completion. When fewer mutations are queued than went into the previous
// batch, the writer waits up to 400 us for the rest (clients answered by
// the previous commit are sending their next request), so batches stay
// full instead of splitting into alternating halves. WAL checkpoints run
// on their own thread and connection, never inside a commit. A completion therefore only ever
// reports state that is on disk: an acknowledged write survives kill -9.
//
// Reads use a pool of read connections (WAL lets them run beside the
// writer); any thread may read. Thread-safe.
//
// One server per data directory: Open() takes an exclusive flock on
// DATA_DIR/LOCK (released by the kernel even on kill -9).
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

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace cairn::server {

// One stored resource, any kind. `attrs` holds the kind's fields.
struct Record {
  int64_t seq = 0;
  std::string id;  // 32 lowercase hex
  std::string project;
  std::string kind;  // instance | network | firewall | ssh_key | volume
  std::string status;
  std::string last_op;
  std::string fate;          // lifecycle worker's plan for this record (lifecycle.h)
  int64_t next_step_ms = 0;  // wall-clock ms of the next lifecycle step; 0 = none
  std::string created_at;    // ISO 8601 UTC
  nlohmann::json attrs = nlohmann::json::object();
};

struct StoredResponse {
  std::string request_sha256;
  int status = 0;
  std::string headers_json;  // [[name, value], ...]
  std::string body;
  int64_t created_ms = 0;
};

// One SQLite connection and its prepared statements. Not thread-safe: used
// by one thread at a time (the writer, or a reader holding a lease).
class Db {
 public:
  static Result<std::unique_ptr<Db>> Open(const std::string& path, bool writer);
  ~Db();
  Status Exec(const char* sql);
  // Exec through a cached prepared statement (for statements run per mutation).
  Status ExecCached(const char* sql);
  // A cached prepared statement keyed by the (static) SQL text, reset and
  // with bindings cleared.
  Result<sqlite3_stmt*> Prepare(const char* sql);
  sqlite3* handle() { return db_; }
  Status Error(const char* what);

 private:
  sqlite3* db_ = nullptr;
  std::vector<std::pair<const char*, sqlite3_stmt*>> stmts_;
};

// The statements a mutation may run. Only valid inside the writer thread
// while its mutation runs.
class WriteTxn {
 public:
  explicit WriteTxn(Db* db) : db_(db) {}
  Result<std::optional<Record>> Get(const std::string& project, const std::string& id);
  // Assigns r->seq.
  Status Insert(Record* r);
  Status Update(const Record& r);
  // Live (not deleted) records of `kind` in `project` whose attrs.<field>
  // equals `value` (a string) or, for array fields, contains it.
  Result<std::vector<Record>> FindReferencing(const std::string& project, const char* kind,
                                              const char* field, const std::string& value);
  Result<std::optional<StoredResponse>> GetResponse(const std::string& scope);
  Status PutResponse(const std::string& scope, const StoredResponse& r);
  // Records whose next lifecycle step is due at `now_ms`, oldest first.
  Result<std::vector<Record>> Due(int64_t now_ms, int limit);
  // The next free address of the region's pool, or NotFound when exhausted.
  Result<std::string> AllocateIpv4(const std::string& region);
  Status PurgeResponses(int64_t older_than_ms);
  // Brings every pending step due later than `latest_ms` forward to it (a
  // restart with a shorter --provision-delay).
  Status CapSchedule(int64_t latest_ms);

 private:
  Db* db_;
};

struct StoreOptions {
  size_t max_batch = 1024;
  // Fault injection: hold every batch this long before running it.
  std::chrono::milliseconds batch_delay{0};
};

class Store {
 public:
  // A mutation returns true to keep its changes, false to roll back its own
  // savepoint (the rest of the batch is unaffected).
  using Mutation = std::function<bool(WriteTxn&)>;
  // Called on the writer thread once the batch's commit is decided: OK means
  // durable; otherwise nothing of the mutation was kept.
  using Completion = std::function<void(const Status&)>;

  static Result<std::unique_ptr<Store>> Open(const std::string& dir, StoreOptions options);
  ~Store();

  void Submit(Mutation m, Completion done);
  // Runs after each committed batch (on the writer thread).
  void SetCommitListener(std::function<void()> f);
  // Stops accepting work, finishes what is queued, joins the writer.
  void Close();

  // Reads (any thread).
  Result<std::optional<Record>> Get(const std::string& project, const std::string& id);
  // Live records of `kind` with seq > after_seq, ascending, at most `limit`.
  Result<std::vector<Record>> List(const std::string& project, const std::string& kind,
                                   int64_t after_seq, int limit);
  Result<std::optional<StoredResponse>> GetResponse(const std::string& scope);
  // Wall-clock ms of the earliest pending lifecycle step, or 0.
  Result<int64_t> NextDueMs();
  Result<std::vector<std::pair<std::string, std::string>>> LoadTokens();  // (sha256, project)
  // Makes `tokens` (sha256, project) the whole table, in one transaction:
  // a token missing from it stops working.
  Status ReplaceTokens(const std::vector<std::pair<std::string, std::string>>& tokens);

  uint64_t commits() const { return commits_; }
  uint64_t committed_mutations() const { return committed_mutations_; }

 private:
  Store() = default;
  class ReadLease;
  ReadLease Lease();
  void WriterLoop();
  void CheckpointLoop();

  std::string path_;
  int lock_fd_ = -1;  // flock on DATA_DIR/LOCK: one server per data directory
  StoreOptions options_;
  std::unique_ptr<Db> writer_db_;

  std::mutex read_mu_;
  std::vector<std::unique_ptr<Db>> idle_readers_;  // GUARDED_BY(read_mu_)

  struct Pending {
    Mutation m;
    Completion done;
  };
  std::mutex mu_;
  std::condition_variable cv_;             // the writer waits here
  std::condition_variable checkpoint_cv_;  // the checkpointer waits here
  std::deque<Pending> queue_;              // GUARDED_BY(mu_)
  bool closing_ = false;                   // GUARDED_BY(mu_)
  std::function<void()> on_commit_;
  std::thread writer_;
  std::thread checkpointer_;  // WAL checkpoints off the writer's commit path
  std::unique_ptr<Db> checkpoint_db_;
  std::atomic<uint64_t> commits_{0}, committed_mutations_{0};
};

// Current wall-clock time in ms since the epoch, and as ISO 8601 UTC.
int64_t NowMs();
std::string IsoUtcNow();

}  // namespace cairn::server
