// The store of `cairn serve`: what it records (Record, StoredResponse), the
// statements a mutation runs (WriteTxn) and the store itself (ApiStore, with
// its group-commit writer), whatever the database. Two databases implement
// it: SQLite (sqlite_api_store.h, the default, one server per data
// directory) and PostgreSQL (postgres_api_store.h, one database for several
// servers).
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
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

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

// The statements a mutation may run, inside the transaction of its batch.
// Only valid on the store's writer thread while its mutation runs.
class WriteTxn {
 public:
  virtual ~WriteTxn() = default;
  virtual Result<std::optional<Record>> Get(const std::string& project, const std::string& id) = 0;
  // The store assigns r->seq (at once, or when the batch is sent).
  virtual Status Insert(Record* r) = 0;
  virtual Status Update(const Record& r) = 0;
  // Live (not deleted) records of `kind` in `project` whose attrs.<field>
  // equals `value` (a string) or, for array fields, contains it.
  virtual Result<std::vector<Record>> FindReferencing(const std::string& project, const char* kind,
                                                      const char* field,
                                                      const std::string& value) = 0;
  virtual Result<std::optional<StoredResponse>> GetResponse(const std::string& scope) = 0;
  virtual Status PutResponse(const std::string& scope, const StoredResponse& r) = 0;
  // Records whose next lifecycle step is due at `now_ms`, oldest first; on
  // a store shared by several servers, only records no other server is
  // stepping (claimed for the rest of this transaction).
  virtual Result<std::vector<Record>> Due(int64_t now_ms, int limit) = 0;
  // The next free address of the region's pool, or NotFound when exhausted.
  virtual Result<std::string> AllocateIpv4(const std::string& region) = 0;
  virtual Status PurgeResponses(int64_t older_than_ms) = 0;
  // Brings every pending step due later than `latest_ms` forward to it (a
  // restart with a shorter --provision-delay).
  virtual Status CapSchedule(int64_t latest_ms) = 0;
  // Makes `tokens` (sha256, project) the whole token table.
  virtual Status ReplaceTokens(const std::vector<std::pair<std::string, std::string>>& tokens) = 0;
};

struct StoreOptions {
  size_t max_batch = 1024;
  // Fault injection: hold every batch this long before running it.
  std::chrono::milliseconds batch_delay{0};
};

// The durable store of `cairn serve` (SQLite: sqlite_api_store.h; PostgreSQL,
// shared by several servers: postgres_api_store.h). Writes go through a single
// writer thread with group commit: Submit() queues a Mutation; the writer takes
// every queued mutation (up to a batch limit), runs each in its own savepoint
// inside one transaction, commits once and only then calls each mutation's
// completion, so a completion only ever reports durable state. When fewer
// mutations are queued than went into the previous batch, the writer waits up
// to 400 us for the rest (clients answered by the previous commit are sending
// their next request), so batches stay full. Reads may come from any thread.
// Thread-safe.
class ApiStore {
 public:
  // A mutation returns true to keep its changes, false to roll back its own
  // savepoint (the rest of the batch is unaffected).
  using Mutation = std::function<bool(WriteTxn&)>;
  // Called on the writer thread once the batch's commit is decided: OK means
  // durable; otherwise nothing of the mutation was kept.
  using Completion = std::function<void(const Status&)>;

  virtual ~ApiStore();

  void Submit(Mutation m, Completion done);
  // Runs after each committed batch (on the writer thread).
  void SetCommitListener(std::function<void()> f);
  // Stops accepting work, finishes what is queued, joins the writer.
  void Close();

  // Reads (any thread).
  virtual Result<std::optional<Record>> Get(const std::string& project, const std::string& id) = 0;
  // Live records of `kind` with seq > after_seq, ascending, at most `limit`.
  virtual Result<std::vector<Record>> List(const std::string& project, const std::string& kind,
                                           int64_t after_seq, int limit) = 0;
  virtual Result<std::optional<StoredResponse>> GetResponse(const std::string& scope) = 0;
  // Wall-clock ms of the earliest pending lifecycle step, or 0.
  virtual Result<int64_t> NextDueMs() = 0;
  virtual Result<std::vector<std::pair<std::string, std::string>>>
  LoadTokens() = 0;  // (sha256, project)
  // Makes `tokens` (sha256, project) the whole table, in one transaction:
  // a token missing from it stops working.
  Status ReplaceTokens(const std::vector<std::pair<std::string, std::string>>& tokens);

  // An idempotency key in flight: `claimed` when this server now holds
  // `scope` (until ReleaseKey), not when a request with it is executing,
  // here or (a shared store) on another server. `stored` is the response
  // recorded for the key, read after the claim was decided: when there is
  // one, its request has executed, whoever still holds the key.
  struct KeyClaim {
    bool claimed = false;
    std::optional<StoredResponse> stored;
  };
  virtual Result<KeyClaim> ClaimKey(const std::string& scope);
  virtual void ReleaseKey(const std::string& scope);
  // A store shared by several servers keeps the rate-limit buckets too:
  // takes a token from `project`'s bucket (refilled at `rate` per second up
  // to `burst`) and returns whether one was there and the tokens left.
  // nullopt: not shared; the server's own limiter decides.
  struct Bucket {
    bool allowed = false;
    double tokens = 0;
  };
  virtual Result<std::optional<Bucket>> TakeToken(const std::string& project, double rate,
                                                  int64_t burst);

  // True when other servers may share this store (their commits, and
  // their lifecycle steps, are not announced to this one).
  virtual bool shared() const { return false; }

  uint64_t commits() const { return commits_; }
  uint64_t committed_mutations() const { return committed_mutations_; }

 protected:
  struct Pending {
    Mutation m;
    Completion done;
  };
  explicit ApiStore(StoreOptions options) : options_(options) {}
  // Starts the writer; the store's derived part must be complete.
  void StartWriter();
  // Runs `batch` in one transaction, keeping the mutations that succeed
  // (a mutation that fails leaves nothing); `*kept` counts them. Not OK:
  // nothing of the batch was committed.
  virtual Status RunBatch(std::vector<Pending>& batch, size_t* kept) = 0;
  // Calls the mutation, turning an exception into a rollback.
  static bool RunMutation(const Mutation& m, WriteTxn& txn);
  // Claims `scope` among this server's requests (in memory): false when
  // one of them holds it.
  bool ClaimLocally(const std::string& scope);
  void ReleaseLocally(const std::string& scope);

  StoreOptions options_;

 private:
  void WriterLoop();

  Mutex mu_;
  CondVar cv_;  // the writer waits here
  std::deque<Pending> queue_ GUARDED_BY(mu_);
  bool closing_ GUARDED_BY(mu_) = false;
  std::function<void()> on_commit_ GUARDED_BY(mu_);
  std::thread writer_;
  std::atomic<uint64_t> commits_{0}, committed_mutations_{0};
  Mutex keys_mu_;
  std::unordered_set<std::string> keys_ GUARDED_BY(keys_mu_);  // claimed here
};

// Current wall-clock time in ms since the epoch, and as ISO 8601 UTC.
int64_t NowMs();
std::string IsoUtcNow();

}  // namespace cairn::server
