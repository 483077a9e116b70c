#include "server/postgres_store.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iterator>
#include <pqxx/pqxx>
#include <utility>

#include "engine/pg_support.h"
#include "engine/value.h"
#include "server/catalog.h"

namespace cairn::server {
namespace {

constexpr const char* kWhere = "server store (PostgreSQL)";
// Taken by the server that migrates, for the migration's transaction.
constexpr int64_t kMigrationLock = 0x636169726e736d;  // "cairnsm"
// How long a claimed idempotency key stays claimed if its server dies
// before releasing it.
constexpr int64_t kClaimLeaseMs = 60'000;

// Schema migrations, applied in order under kMigrationLock; never edit a
// shipped one: append.
constexpr const char* kMigrations[] = {
    // 1: the initial schema, as the SQLite store's, plus what servers share.
    R"sql(
CREATE TABLE cairn_serve_tokens(sha256 TEXT PRIMARY KEY, project TEXT NOT NULL);
CREATE TABLE cairn_serve_resources(
  seq BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project TEXT NOT NULL,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  last_op TEXT NOT NULL,
  fate TEXT NOT NULL DEFAULT '',
  next_step_ms BIGINT,
  created_at TEXT NOT NULL,
  attrs TEXT NOT NULL);
CREATE INDEX cairn_serve_resources_by_project_kind ON cairn_serve_resources(project, kind, seq);
CREATE INDEX cairn_serve_resources_due ON cairn_serve_resources(next_step_ms)
  WHERE next_step_ms IS NOT NULL;
CREATE TABLE cairn_serve_idempotency(
  scope TEXT PRIMARY KEY,
  request_sha256 TEXT NOT NULL,
  status INT NOT NULL,
  headers TEXT NOT NULL,
  body BYTEA NOT NULL,
  created_ms BIGINT NOT NULL);
CREATE INDEX cairn_serve_idempotency_by_age ON cairn_serve_idempotency(created_ms);
CREATE TABLE cairn_serve_ipv4_pool(region TEXT PRIMARY KEY, next_host BIGINT NOT NULL);
CREATE TABLE cairn_serve_claims(scope TEXT PRIMARY KEY, owner TEXT NOT NULL,
                                expires_ms BIGINT NOT NULL);
CREATE TABLE cairn_serve_buckets(project TEXT PRIMARY KEY, tokens DOUBLE PRECISION NOT NULL,
                                 updated_ms BIGINT NOT NULL, allowed BOOLEAN NOT NULL);
)sql",
};

constexpr const char* kRecordColumns =
    "seq, id, project, kind, status, last_op, fate, next_step_ms, created_at, attrs";

Record ReadRecord(const pqxx::row& row) {
  Record r;
  r.seq = row[0].as<int64_t>();
  r.id = row[1].as<std::string>();
  r.project = row[2].as<std::string>();
  r.kind = row[3].as<std::string>();
  r.status = row[4].as<std::string>();
  r.last_op = row[5].as<std::string>();
  r.fate = row[6].as<std::string>();
  r.next_step_ms = row[7].is_null() ? 0 : row[7].as<int64_t>();
  r.created_at = row[8].as<std::string>();
  auto attrs = ParseJson(row[9].as<std::string>());
  r.attrs = attrs.ok() ? std::move(*attrs) : nlohmann::json::object();
  return r;
}

// NULL for "no step".
std::optional<int64_t> NextStep(int64_t ms) {
  return ms > 0 ? std::optional<int64_t>(ms) : std::nullopt;
}

template <typename F>
auto Guarded(const char* what, F&& body) -> decltype(body()) {
  return GuardPostgres(kWhere, what, std::forward<F>(body));
}

Result<std::optional<StoredResponse>> ReadStored(pqxx::transaction_base& t,
                                                 const std::string& scope) {
  pqxx::result r = t.exec_params(
      "SELECT request_sha256, status, headers, body, created_ms FROM cairn_serve_idempotency "
      "WHERE scope = $1",
      scope);
  if (r.empty()) return std::optional<StoredResponse>();
  StoredResponse s;
  s.request_sha256 = r[0][0].as<std::string>();
  s.status = r[0][1].as<int>();
  s.headers_json = r[0][2].as<std::string>();
  s.body = pqxx::binarystring(r[0][3]).str();
  s.created_ms = r[0][4].as<int64_t>();
  return std::optional<StoredResponse>(std::move(s));
}

// A random id for this server's claims.
std::string NewOwner() {
  unsigned char bytes[12];
  RAND_bytes(bytes, sizeof bytes);
  std::string out;
  char hex[3];
  for (unsigned char b : bytes) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    out += hex;
  }
  return out;
}

// The statements of a mutation, inside its batch's transaction.
class PgWriteTxn final : public WriteTxn {
 public:
  explicit PgWriteTxn(pqxx::transaction_base& t) : t_(t) {}

  Result<std::optional<Record>> Get(const std::string& project, const std::string& id) override {
    return Guarded("reading a resource", [&]() -> Result<std::optional<Record>> {
      pqxx::result r = t_.exec_params(std::string("SELECT ") + kRecordColumns +
                                          " FROM cairn_serve_resources WHERE id = $1 AND "
                                          "project = $2",
                                      id, project);
      if (r.empty()) return std::optional<Record>();
      return std::optional<Record>(ReadRecord(r[0]));
    });
  }

  Status Insert(Record* rec) override {
    wrote_ = true;
    return Guarded("inserting a resource", [&]() -> Status {
      pqxx::result r = t_.exec_params(
          "INSERT INTO cairn_serve_resources(id, project, kind, status, last_op, fate, "
          "next_step_ms, created_at, attrs) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9) "
          "RETURNING seq",
          rec->id, rec->project, rec->kind, rec->status, rec->last_op, rec->fate,
          NextStep(rec->next_step_ms), rec->created_at, rec->attrs.dump());
      rec->seq = r[0][0].as<int64_t>();
      return Status::Ok();
    });
  }

  Status Update(const Record& rec) override {
    wrote_ = true;
    return Guarded("updating a resource", [&]() -> Status {
      t_.exec_params(
          "UPDATE cairn_serve_resources SET status = $2, last_op = $3, fate = $4, "
          "next_step_ms = $5, attrs = $6 WHERE id = $1",
          rec.id, rec.status, rec.last_op, rec.fate, NextStep(rec.next_step_ms), rec.attrs.dump());
      return Status::Ok();
    });
  }

  Result<std::vector<Record>> FindReferencing(const std::string& project, const char* kind,
                                              const char* field,
                                              const std::string& value) override {
    return Guarded("finding references", [&]() -> Result<std::vector<Record>> {
      pqxx::result rows = t_.exec_params(
          std::string("SELECT ") + kRecordColumns +
              " FROM cairn_serve_resources WHERE project = $1 AND kind = $2 AND status <> "
              "'deleted' AND strpos(attrs, $3) > 0 ORDER BY seq",
          project, std::string(kind), value);
      std::vector<Record> out;
      for (const pqxx::row& row : rows) {
        Record r = ReadRecord(row);
        auto it = r.attrs.find(field);
        if (it == r.attrs.end()) continue;
        bool match = it->is_string() && it->get<std::string>() == value;
        if (it->is_array()) {
          for (const auto& e : *it)
            match = match || (e.is_string() && e.get<std::string>() == value);
        }
        if (match) out.push_back(std::move(r));
      }
      return out;
    });
  }

  Result<std::optional<StoredResponse>> GetResponse(const std::string& scope) override {
    return Guarded("reading an idempotency record", [&] { return ReadStored(t_, scope); });
  }

  Status PutResponse(const std::string& scope, const StoredResponse& s) override {
    wrote_ = true;
    return Guarded("storing an idempotency record", [&]() -> Status {
      t_.exec_params(
          "INSERT INTO cairn_serve_idempotency(scope, request_sha256, status, headers, body, "
          "created_ms) VALUES($1, $2, $3, $4, $5, $6) ON CONFLICT (scope) DO UPDATE SET "
          "request_sha256 = EXCLUDED.request_sha256, status = EXCLUDED.status, headers = "
          "EXCLUDED.headers, body = EXCLUDED.body, created_ms = EXCLUDED.created_ms",
          scope, s.request_sha256, s.status, s.headers_json, pqxx::binarystring(s.body),
          s.created_ms);
      return Status::Ok();
    });
  }

  Result<std::vector<Record>> Due(int64_t now_ms, int limit) override {
    return Guarded("reading due records", [&]() -> Result<std::vector<Record>> {
      // Another server stepping a record holds its row: skipped, so each
      // step runs once; rows stay locked until this batch commits.
      pqxx::result rows = t_.exec_params(
          std::string("SELECT ") + kRecordColumns +
              " FROM cairn_serve_resources WHERE next_step_ms IS NOT NULL AND next_step_ms <= "
              "$1 ORDER BY next_step_ms LIMIT $2 FOR UPDATE SKIP LOCKED",
          now_ms, limit);
      std::vector<Record> out;
      for (const pqxx::row& row : rows) out.push_back(ReadRecord(row));
      return out;
    });
  }

  Result<std::string> AllocateIpv4(const std::string& region) override {
    int second = -1;
    for (size_t i = 0; i < std::size(kRegions); ++i) {
      if (kRegions[i].key == region) second = 64 + static_cast<int>(i);
    }
    if (second < 0 || second > 127) return Status::NotFound("no address pool for region " + region);
    wrote_ = true;
    return Guarded("allocating an address", [&]() -> Result<std::string> {
      t_.exec_params(
          "INSERT INTO cairn_serve_ipv4_pool(region, next_host) VALUES($1, 1) ON CONFLICT DO "
          "NOTHING",
          region);
      pqxx::result r = t_.exec_params(
          "SELECT next_host FROM cairn_serve_ipv4_pool WHERE region = $1 FOR UPDATE", region);
      int64_t host = r[0][0].as<int64_t>();
      // Skip network (.0) and broadcast-looking (.255) last octets.
      while ((host & 0xff) == 0 || (host & 0xff) == 255) ++host;
      if (host >= 65535) return Status::NotFound("address pool of " + region + " exhausted");
      t_.exec_params("UPDATE cairn_serve_ipv4_pool SET next_host = $2 WHERE region = $1", region,
                     host + 1);
      return "100." + std::to_string(second) + "." + std::to_string(host >> 8) + "." +
             std::to_string(host & 0xff);
    });
  }

  Status PurgeResponses(int64_t older_than_ms) override {
    wrote_ = true;
    return Guarded("purging idempotency records", [&]() -> Status {
      t_.exec_params("DELETE FROM cairn_serve_idempotency WHERE created_ms < $1", older_than_ms);
      return Status::Ok();
    });
  }

  Status CapSchedule(int64_t latest_ms) override {
    wrote_ = true;
    return Guarded("rescheduling lifecycle steps", [&]() -> Status {
      t_.exec_params(
          "UPDATE cairn_serve_resources SET next_step_ms = $1 WHERE next_step_ms IS NOT NULL "
          "AND next_step_ms > $1",
          latest_ms);
      return Status::Ok();
    });
  }

  Status ReplaceTokens(const std::vector<std::pair<std::string, std::string>>& tokens) override {
    wrote_ = true;
    return Guarded("storing token hashes", [&]() -> Status {
      t_.exec("DELETE FROM cairn_serve_tokens");
      for (const auto& [sha256, project] : tokens) {
        t_.exec_params(
            "INSERT INTO cairn_serve_tokens(sha256, project) VALUES($1, $2) ON CONFLICT "
            "(sha256) DO UPDATE SET project = EXCLUDED.project",
            sha256, project);
      }
      return Status::Ok();
    });
  }

  // Something was written: a mutation that then asks for its rollback
  // cannot have it without a savepoint (see RunBatch).
  bool wrote() const { return wrote_; }

 private:
  pqxx::transaction_base& t_;
  bool wrote_ = false;
};

}  // namespace

struct PostgresStore::Connection {
  explicit Connection(const std::string& url, bool durable = false) : c(url) {
    // The pool's writes (claims, rate-limit buckets) need not survive a
    // crash of the database: the mutation a claim guards commits, or not,
    // in the writer's own synchronous transaction.
    if (!durable) pqxx::nontransaction(c).exec("SET synchronous_commit TO OFF");
  }
  pqxx::connection c;
};

// A pooled connection, back to the pool when done (unless it broke).
class PostgresStore::Lease {
 public:
  Lease(PostgresStore* store, std::unique_ptr<Connection> c) : store_(store), c_(std::move(c)) {}
  Lease(Lease&&) = default;
  ~Lease() {
    if (c_ && c_->c.is_open()) {
      std::lock_guard<std::mutex> lock(store_->pool_mu_);
      store_->idle_.push_back(std::move(c_));
    }
  }
  pqxx::connection& c() { return c_->c; }

 private:
  PostgresStore* store_;
  std::unique_ptr<Connection> c_;
};

PostgresStore::PostgresStore(std::string url, StoreOptions options)
    : Store(options), url_(std::move(url)), owner_(NewOwner()) {}

PostgresStore::~PostgresStore() {
  Close();
  {
    std::lock_guard<std::mutex> lock(release_mu_);
    release_stop_ = true;
  }
  release_cv_.notify_all();
  if (releaser_.joinable()) releaser_.join();
}

PostgresStore::Lease PostgresStore::Borrow() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(c));
    }
  }
  return Lease(this, std::make_unique<Connection>(url_));  // throws if it cannot connect
}

Result<std::unique_ptr<Store>> PostgresStore::Open(const std::string& url, StoreOptions options) {
  RegisterUrlSecrets(url);
  return Guarded("open", [&]() -> Result<std::unique_ptr<Store>> {
    auto store = std::unique_ptr<PostgresStore>(new PostgresStore(url, options));
    store->writer_ = std::make_unique<Connection>(url, /*durable=*/true);
    {
      pqxx::work w(store->writer_->c);
      w.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLock);
      w.exec(
          "CREATE TABLE IF NOT EXISTS cairn_serve_schema(slot INT PRIMARY KEY CHECK (slot = 1), "
          "version INT NOT NULL)");
      pqxx::result r = w.exec("SELECT version FROM cairn_serve_schema WHERE slot = 1");
      int version = r.empty() ? 0 : r[0][0].as<int>();
      constexpr int kLatest = static_cast<int>(std::size(kMigrations));
      if (version > kLatest) {
        return Status::FailedPrecondition("the database has server schema version " +
                                          std::to_string(version) + ", newer than this cairn (" +
                                          std::to_string(kLatest) + ")");
      }
      for (int i = version; i < kLatest; ++i) w.exec(kMigrations[i]);
      w.exec_params(
          "INSERT INTO cairn_serve_schema(slot, version) VALUES(1, $1) ON CONFLICT (slot) DO "
          "UPDATE SET version = EXCLUDED.version",
          kLatest);
      w.commit();
    }
    store->StartWriter();
    store->releaser_ = std::thread([s = store.get()] { s->ReleaseLoop(); });
    return std::unique_ptr<Store>(std::move(store));
  });
}

Status PostgresStore::RunBatch(std::vector<Pending>& batch, size_t* kept) {
  return Guarded("committing a batch", [&]() -> Status {
    if (!writer_ || !writer_->c.is_open()) {
      writer_ = std::make_unique<Connection>(url_, /*durable=*/true);
    }
    pqxx::work w(writer_->c);
    // No savepoint per mutation (two round trips each): a mutation that
    // rolls back decides so before writing (a refused request reads, then
    // returns), and one that fails after writing can only have met a
    // database error, which dooms the transaction anyway: the whole batch
    // is then refused, and its requests are answered 503 (retry).
    for (Pending& p : batch) {
      PgWriteTxn txn(w);
      if (RunMutation(p.m, txn)) {
        ++*kept;
      } else if (txn.wrote()) {
        return Status::Unavailable(std::string(kWhere) +
                                   ": a mutation failed after writing; the batch is not committed");
      }
    }
    w.commit();
    return Status::Ok();
  });
}

Result<std::optional<Record>> PostgresStore::Get(const std::string& project,
                                                 const std::string& id) {
  return Guarded("reading a resource", [&]() -> Result<std::optional<Record>> {
    Lease lease = Borrow();
    pqxx::nontransaction t(lease.c());
    PgWriteTxn reads(t);
    return reads.Get(project, id);
  });
}

Result<std::vector<Record>> PostgresStore::List(const std::string& project, const std::string& kind,
                                                int64_t after_seq, int limit) {
  return Guarded("listing resources", [&]() -> Result<std::vector<Record>> {
    Lease lease = Borrow();
    pqxx::nontransaction t(lease.c());
    pqxx::result rows = t.exec_params(
        std::string("SELECT ") + kRecordColumns +
            " FROM cairn_serve_resources WHERE project = $1 AND kind = $2 AND seq > $3 AND "
            "status <> 'deleted' ORDER BY seq LIMIT $4",
        project, kind, after_seq, limit);
    std::vector<Record> out;
    for (const pqxx::row& row : rows) out.push_back(ReadRecord(row));
    return out;
  });
}

Result<std::optional<StoredResponse>> PostgresStore::GetResponse(const std::string& scope) {
  return Guarded("reading an idempotency record", [&]() -> Result<std::optional<StoredResponse>> {
    Lease lease = Borrow();
    pqxx::nontransaction t(lease.c());
    return ReadStored(t, scope);
  });
}

Result<int64_t> PostgresStore::NextDueMs() {
  return Guarded("reading the schedule", [&]() -> Result<int64_t> {
    Lease lease = Borrow();
    pqxx::nontransaction t(lease.c());
    pqxx::result r = t.exec(
        "SELECT MIN(next_step_ms) FROM cairn_serve_resources WHERE next_step_ms IS NOT NULL");
    return r[0][0].is_null() ? int64_t{0} : r[0][0].as<int64_t>();
  });
}

Result<std::vector<std::pair<std::string, std::string>>> PostgresStore::LoadTokens() {
  return Guarded(
      "reading token hashes", [&]() -> Result<std::vector<std::pair<std::string, std::string>>> {
        Lease lease = Borrow();
        pqxx::nontransaction t(lease.c());
        std::vector<std::pair<std::string, std::string>> out;
        for (const pqxx::row& row : t.exec("SELECT sha256, project FROM cairn_serve_tokens")) {
          out.emplace_back(row[0].as<std::string>(), row[1].as<std::string>());
        }
        return out;
      });
}

Result<bool> PostgresStore::ClaimKey(const std::string& scope) {
  // Requests of this server first, in memory: then the row, which a claim
  // of this server's released but not yet deleted (see ReleaseKey) still
  // holds, and which it may take again.
  auto local = Store::ClaimKey(scope);
  if (!local.ok() || !*local) return local;
  auto claimed = Guarded("claiming an idempotency key", [&]() -> Result<bool> {
    Lease lease = Borrow();
    pqxx::nontransaction w(lease.c());
    const int64_t now = NowMs();
    pqxx::result r = w.exec_params(
        "INSERT INTO cairn_serve_claims(scope, owner, expires_ms) VALUES($1, $2, $3) "
        "ON CONFLICT (scope) DO UPDATE SET owner = EXCLUDED.owner, expires_ms = "
        "EXCLUDED.expires_ms WHERE cairn_serve_claims.expires_ms < $4 OR "
        "cairn_serve_claims.owner = $2 RETURNING 1",
        scope, owner_, now + kClaimLeaseMs, now);
    return !r.empty();
  });
  if (!claimed.ok() || !*claimed) Store::ReleaseKey(scope);
  return claimed;
}

void PostgresStore::ReleaseKey(const std::string& scope) {
  // Free here at once; the row goes in the releaser's next batch (another
  // server meanwhile answers 409 idempotency_key_in_use a moment longer).
  Store::ReleaseKey(scope);
  std::lock_guard<std::mutex> lock(release_mu_);
  to_release_.push_back(scope);
  release_cv_.notify_one();
}

void PostgresStore::ReleaseLoop() {
  std::unique_lock<std::mutex> lock(release_mu_);
  for (;;) {
    release_cv_.wait(lock, [&] { return release_stop_ || !to_release_.empty(); });
    if (to_release_.empty()) return;  // stopping, and nothing left
    std::vector<std::string> scopes;
    while (!to_release_.empty() && scopes.size() < 500) {
      scopes.push_back(std::move(to_release_.front()));
      to_release_.pop_front();
    }
    lock.unlock();
    Status st = Guarded("releasing idempotency keys", [&]() -> Status {
      std::string sql = "DELETE FROM cairn_serve_claims WHERE owner = $1 AND scope IN (";
      for (size_t i = 0; i < scopes.size(); ++i) sql += (i ? ", $" : "$") + std::to_string(i + 2);
      sql += ")";
      Lease lease = Borrow();
      pqxx::nontransaction w(lease.c());
      w.exec_params(sql, owner_, pqxx::prepare::make_dynamic_params(scopes));
      return Status::Ok();
    });
    // Not released: the claims lapse with their lease.
    if (!st.ok()) spdlog::warn("{}", st.message());
    lock.lock();
  }
}

Result<std::optional<Store::Bucket>> PostgresStore::TakeToken(const std::string& project,
                                                              double rate, int64_t burst) {
  return Guarded("taking a rate-limit token", [&]() -> Result<std::optional<Bucket>> {
    Lease lease = Borrow();
    pqxx::nontransaction w(lease.c());
    // One statement: a new bucket starts full; an existing one is refilled
    // for the time since its last request, then one token taken if there is
    // one. The row's lock orders servers taking at once.
    pqxx::result r = w.exec_params(
        "INSERT INTO cairn_serve_buckets AS b(project, tokens, updated_ms, allowed) "
        "VALUES($1, $2::float8 - 1, $3::bigint, true) ON CONFLICT (project) DO UPDATE SET "
        "tokens = CASE WHEN LEAST($2::float8, b.tokens + GREATEST(0, $3::bigint - b.updated_ms) "
        "* $4::float8 / 1000.0) >= 1 THEN LEAST($2::float8, b.tokens + GREATEST(0, $3::bigint - "
        "b.updated_ms) * $4::float8 / 1000.0) - 1 ELSE LEAST($2::float8, b.tokens + "
        "GREATEST(0, $3::bigint - b.updated_ms) * $4::float8 / 1000.0) END, "
        "allowed = LEAST($2::float8, b.tokens + GREATEST(0, $3::bigint - b.updated_ms) * "
        "$4::float8 / 1000.0) >= 1, updated_ms = GREATEST(b.updated_ms, $3::bigint) "
        "RETURNING allowed, tokens",
        project, static_cast<double>(burst), NowMs(), rate);
    return std::optional<Bucket>(Bucket{r[0][0].as<bool>(), r[0][1].as<double>()});
  });
}

}  // namespace cairn::server
