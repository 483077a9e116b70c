#include "server/postgres_api_store.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iterator>
#include <pqxx/pqxx>
#include <stdexcept>
#include <unordered_set>
#include <utility>

#include "base/pg_support.h"
#include "base/value.h"
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
    // 2: claims are leases, which a crash of the database may forget (their
    // requests' transactions end with it): no WAL for them. Claiming a key
    // and reading its stored response take one round trip.
    // Two statements, each with its own snapshot (a VOLATILE function, READ
    // COMMITTED): the response is read after the claim is decided, so a
    // server that released its claim (which it does after committing the
    // response) is seen to have finished, never to have not begun.
    R"sql(
ALTER TABLE cairn_serve_claims SET UNLOGGED;
CREATE FUNCTION cairn_serve_claim(p_scope TEXT, p_owner TEXT, p_expires BIGINT, p_now BIGINT,
    OUT claimed BOOLEAN, OUT request_sha256 TEXT, OUT status INT, OUT headers TEXT,
    OUT body BYTEA, OUT created_ms BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  INSERT INTO cairn_serve_claims AS c(scope, owner, expires_ms)
    VALUES(p_scope, p_owner, p_expires)
    ON CONFLICT (scope) DO UPDATE SET owner = EXCLUDED.owner, expires_ms = EXCLUDED.expires_ms
    WHERE c.expires_ms < p_now OR c.owner = p_owner;
  claimed := FOUND;
  SELECT i.request_sha256, i.status, i.headers, i.body, i.created_ms
    INTO request_sha256, status, headers, body, created_ms
    FROM cairn_serve_idempotency i WHERE i.scope = p_scope;
END
$$;
)sql",
    // 3: lists (and reference searches) read only live records: an index of
    // them alone, so a page costs the same however many deleted records
    // (kept for ever: their ids stay unused) lie before or among it. It
    // replaces the index by (project, kind, seq), which only these used.
    R"sql(
CREATE INDEX cairn_serve_resources_live ON cairn_serve_resources(project, kind, seq)
  WHERE status <> 'deleted';
DROP INDEX cairn_serve_resources_by_project_kind;
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

template <typename F>
auto Guarded(const char* what, F&& body) -> decltype(body()) {
  return GuardPostgres(kWhere, what, std::forward<F>(body));
}

// The columns kResponseColumns, from `row[first]` on.
StoredResponse ReadStored(const pqxx::row& row, int first = 0) {
  StoredResponse s;
  s.request_sha256 = row[first].as<std::string>();
  s.status = row[first + 1].as<int>();
  s.headers_json = row[first + 2].as<std::string>();
  s.body = pqxx::binarystring(row[first + 3]).str();
  s.created_ms = row[first + 4].as<int64_t>();
  return s;
}

constexpr const char* kResponseColumns = "request_sha256, status, headers, body, created_ms";

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

// The statements of a batch's mutations, on the writer's connection. Writes
// are not sent one by one: they wait, as SQL text with quoted values, until
// the next read or the commit, and then go in the same round trip as it
// (the simple query protocol runs several statements per message); the
// batch's consecutive inserts of resources (and of idempotency records)
// become one multi-row INSERT each. A batch of creates is then one round
// trip: BEGIN, two INSERTs, COMMIT. Reads see every write before them. A
// write's error surfaces at the next round trip and fails the whole batch,
// as any database error does (see RunBatch).
class PgBatchTxn final : public WriteTxn {
 public:
  PgBatchTxn(pqxx::connection& c, pqxx::transaction_base& t) : c_(c), t_(t) {}

  // The row stays locked until the batch ends: another server's mutation
  // of the same resource (or of one referring to it) waits, then reads
  // what this one wrote, so no update is lost and no reference dangles.
  Result<std::optional<Record>> Get(const std::string& project, const std::string& id) override {
    return Guarded("reading a resource", [&]() -> Result<std::optional<Record>> {
      pqxx::result r = Query(std::string("SELECT ") + kRecordColumns +
                             " FROM cairn_serve_resources WHERE id = " + Q(id) +
                             " AND project = " + Q(project) + " FOR UPDATE");
      if (r.empty()) return std::optional<Record>();
      return std::optional<Record>(ReadRecord(r[0]));
    });
  }

  // The record's seq is the database's, assigned when the batch is sent.
  Status Insert(Record* rec) override {
    std::string row = "(" + Q(rec->id) + ", " + Q(rec->project) + ", " + Q(rec->kind) + ", " +
                      Q(rec->status) + ", " + Q(rec->last_op) + ", " + Q(rec->fate) + ", " +
                      Step(rec->next_step_ms) + ", " + Q(rec->created_at) + ", " +
                      Q(rec->attrs.dump()) + ")";
    if (!inserts_.empty()) inserts_ += ", ";
    inserts_ += row;
    ++writes_;
    return Status::Ok();
  }

  Status Update(const Record& rec) override {
    Statement("UPDATE cairn_serve_resources SET status = " + Q(rec.status) +
              ", last_op = " + Q(rec.last_op) + ", fate = " + Q(rec.fate) +
              ", next_step_ms = " + Step(rec.next_step_ms) + ", attrs = " + Q(rec.attrs.dump()) +
              " WHERE id = " + Q(rec.id));
    return Status::Ok();
  }

  Result<std::vector<Record>> FindReferencing(const std::string& project, const char* kind,
                                              const char* field,
                                              const std::string& value) override {
    return Guarded("finding references", [&]() -> Result<std::vector<Record>> {
      pqxx::result rows = Query(
          std::string("SELECT ") + kRecordColumns +
          " FROM cairn_serve_resources WHERE project = " + Q(project) + " AND kind = " + Q(kind) +
          " AND status <> 'deleted' AND strpos(attrs, " + Q(value) + ") > 0 ORDER BY seq");
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
    return Guarded("reading an idempotency record", [&]() -> Result<std::optional<StoredResponse>> {
      pqxx::result r = Query(std::string("SELECT ") + kResponseColumns +
                             " FROM cairn_serve_idempotency WHERE scope = " + Q(scope));
      if (r.empty()) return std::optional<StoredResponse>();
      return std::optional<StoredResponse>(ReadStored(r[0]));
    });
  }

  Status PutResponse(const std::string& scope, const StoredResponse& s) override {
    // One multi-row statement may not touch a row twice: a scope already in
    // the open one starts another.
    if (response_scopes_.count(scope)) Close();
    response_scopes_.insert(scope);
    if (!responses_.empty()) responses_ += ", ";
    responses_ +=
        "(" + Q(scope) + ", " + Q(s.request_sha256) + ", " + std::to_string(s.status) + ", " +
        Q(s.headers_json) + ", " +
        c_.quote_raw(reinterpret_cast<const unsigned char*>(s.body.data()), s.body.size()) + ", " +
        std::to_string(s.created_ms) + ")";
    ++writes_;
    return Status::Ok();
  }

  Result<std::vector<Record>> Due(int64_t now_ms, int limit) override {
    return Guarded("reading due records", [&]() -> Result<std::vector<Record>> {
      // Another server stepping a record holds its row: skipped, so each
      // step runs once; rows stay locked until this batch commits.
      pqxx::result rows = Query(std::string("SELECT ") + kRecordColumns +
                                " FROM cairn_serve_resources WHERE next_step_ms IS NOT NULL AND "
                                "next_step_ms <= " +
                                std::to_string(now_ms) + " ORDER BY next_step_ms LIMIT " +
                                std::to_string(limit) + " FOR UPDATE SKIP LOCKED");
      std::vector<Record> out;
      for (const pqxx::row& row : rows) out.push_back(ReadRecord(row));
      return out;
    });
  }

  Result<std::string> AllocateIpv4(const std::string& region) override {
    if (Ipv4Address(region, 1).empty()) {
      return Status::NotFound("no address pool for region " + region);
    }
    ++writes_;
    return Guarded("allocating an address", [&]() -> Result<std::string> {
      // Takes the pool's next host (the row's lock orders servers); network
      // (.0) and broadcast-looking (.255) last octets are skipped.
      for (;;) {
        pqxx::result r =
            Query("INSERT INTO cairn_serve_ipv4_pool AS p(region, next_host) VALUES(" + Q(region) +
                  ", 2) ON CONFLICT (region) DO UPDATE SET next_host = p.next_host + 1 RETURNING "
                  "next_host - 1");
        int64_t host = r[0][0].as<int64_t>();
        if (Ipv4HostSkipped(host)) continue;
        std::string address = Ipv4Address(region, host);
        if (address.empty()) return Status::NotFound("address pool of " + region + " exhausted");
        return address;
      }
    });
  }

  Status PurgeResponses(int64_t older_than_ms) override {
    Statement("DELETE FROM cairn_serve_idempotency WHERE created_ms < " +
              std::to_string(older_than_ms));
    return Status::Ok();
  }

  Status CapSchedule(int64_t latest_ms) override {
    const std::string latest = std::to_string(latest_ms);
    Statement("UPDATE cairn_serve_resources SET next_step_ms = " + latest +
              " WHERE next_step_ms IS NOT NULL AND next_step_ms > " + latest);
    return Status::Ok();
  }

  Status ReplaceTokens(const std::vector<std::pair<std::string, std::string>>& tokens) override {
    Statement("DELETE FROM cairn_serve_tokens");
    for (const auto& [sha256, project] : tokens) {
      Statement("INSERT INTO cairn_serve_tokens(sha256, project) VALUES(" + Q(sha256) + ", " +
                Q(project) + ") ON CONFLICT (sha256) DO UPDATE SET project = EXCLUDED.project");
    }
    return Status::Ok();
  }

  // Sends what is left, and COMMIT; a batch that did nothing sends nothing.
  void Commit() {
    Close();
    if (!begun_ && pending_.empty()) return;
    t_.exec((begun_ ? "" : "BEGIN;\n") + pending_ + "COMMIT");
    pending_.clear();
  }

  // Writes so far: a mutation that writes and then asks for its rollback
  // cannot have it without a savepoint (see RunBatch).
  size_t writes() const { return writes_; }
  // The transaction was begun on the server (a failure must roll it back).
  bool begun() const { return begun_; }

 private:
  std::string Q(const std::string& s) { return c_.quote(s); }
  static std::string Step(int64_t ms) { return ms > 0 ? std::to_string(ms) : "NULL"; }

  // Ends the open multi-row statements, if any (their order does not
  // matter: different tables).
  void Close() {
    if (!inserts_.empty()) {
      pending_ +=
          "INSERT INTO cairn_serve_resources(id, project, kind, status, last_op, fate, "
          "next_step_ms, created_at, attrs) VALUES " +
          inserts_ + ";\n";
      inserts_.clear();
    }
    if (!responses_.empty()) {
      pending_ +=
          "INSERT INTO cairn_serve_idempotency(scope, request_sha256, status, headers, body, "
          "created_ms) VALUES " +
          responses_ +
          " ON CONFLICT (scope) DO UPDATE SET request_sha256 = EXCLUDED.request_sha256, status "
          "= EXCLUDED.status, headers = EXCLUDED.headers, body = EXCLUDED.body, created_ms = "
          "EXCLUDED.created_ms;\n";
      responses_.clear();
      response_scopes_.clear();
    }
  }

  void Statement(const std::string& sql) {
    Close();
    pending_ += sql + ";\n";
    ++writes_;
  }

  // Runs the writes waiting and then `select`, in one round trip; the
  // result is the select's.
  pqxx::result Query(const std::string& select) {
    Close();
    std::string sql = (begun_ ? "" : "BEGIN;\n") + pending_ + select;
    begun_ = true;
    pending_.clear();
    return t_.exec(sql);
  }

  pqxx::connection& c_;
  pqxx::transaction_base& t_;
  std::string pending_;    // complete statements, each ending ";\n"
  std::string inserts_;    // rows of the open INSERT of resources
  std::string responses_;  // rows of the open INSERT of idempotency records
  std::unordered_set<std::string> response_scopes_;  // their scopes
  bool begun_ = false;
  size_t writes_ = 0;
};

// Statements of the pooled connections, prepared once per connection.
void PrepareReads(pqxx::connection& c) {
  const std::string records =
      std::string("SELECT ") + kRecordColumns + " FROM cairn_serve_resources ";
  c.prepare("get", records + "WHERE id = $1 AND project = $2");
  c.prepare("list", records +
                        "WHERE project = $1 AND kind = $2 AND seq > $3 AND status <> 'deleted' "
                        "ORDER BY seq LIMIT $4");
  c.prepare("response", std::string("SELECT ") + kResponseColumns +
                            " FROM cairn_serve_idempotency WHERE scope = $1");
  c.prepare("next_due",
            "SELECT MIN(next_step_ms) FROM cairn_serve_resources WHERE next_step_ms IS NOT NULL");
  c.prepare("tokens", "SELECT sha256, project FROM cairn_serve_tokens");
  c.prepare("claim", std::string("SELECT claimed, ") + kResponseColumns +
                         " FROM cairn_serve_claim($1, $2, $3, $4)");
  // One statement: a new bucket starts full; an existing one is refilled
  // for the time since its last request, then one token taken if there is
  // one. The row's lock orders servers taking at once.
  c.prepare("take_token",
            "INSERT INTO cairn_serve_buckets AS b(project, tokens, updated_ms, allowed) "
            "VALUES($1, $2::float8 - 1, $3::bigint, true) ON CONFLICT (project) DO UPDATE SET "
            "tokens = CASE WHEN LEAST($2::float8, b.tokens + GREATEST(0, $3::bigint - "
            "b.updated_ms) * $4::float8 / 1000.0) >= 1 THEN LEAST($2::float8, b.tokens + "
            "GREATEST(0, $3::bigint - b.updated_ms) * $4::float8 / 1000.0) - 1 ELSE "
            "LEAST($2::float8, b.tokens + GREATEST(0, $3::bigint - b.updated_ms) * $4::float8 / "
            "1000.0) END, allowed = LEAST($2::float8, b.tokens + GREATEST(0, $3::bigint - "
            "b.updated_ms) * $4::float8 / 1000.0) >= 1, updated_ms = GREATEST(b.updated_ms, "
            "$3::bigint) RETURNING allowed, tokens");
}

}  // namespace

struct PostgresApiStore::Connection {
  // The writer's connection (durable) and the pool's, whose writes
  // (claims, rate-limit buckets) need not survive a crash of the database:
  // the mutation a claim guards commits, or not, in the writer's own
  // synchronous transaction.
  explicit Connection(const std::string& url, bool durable = false) : c(url) {
    if (durable) return;
    pqxx::nontransaction(c).exec("SET synchronous_commit TO OFF");
    PrepareReads(c);
  }
  pqxx::connection c;
};

// A pooled connection, back to the pool when done (unless it broke).
class PostgresApiStore::Lease {
 public:
  Lease(PostgresApiStore* store, std::unique_ptr<Connection> c) : store_(store), c_(std::move(c)) {}
  Lease(Lease&&) = default;
  ~Lease() {
    if (c_ && c_->c.is_open()) {
      MutexLock lock(store_->pool_mu_);
      store_->idle_.push_back(std::move(c_));
    }
  }
  pqxx::connection& c() { return c_->c; }

 private:
  PostgresApiStore* store_;
  std::unique_ptr<Connection> c_;
};

PostgresApiStore::PostgresApiStore(std::string url, StoreOptions options)
    : ApiStore(options), url_(std::move(url)), owner_(NewOwner()) {}

PostgresApiStore::~PostgresApiStore() {
  Close();
  {
    MutexLock lock(release_mu_);
    release_stop_ = true;
  }
  release_cv_.NotifyAll();
  if (releaser_.joinable()) releaser_.join();
}

PostgresApiStore::Lease PostgresApiStore::Borrow() {
  {
    MutexLock lock(pool_mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(c));
    }
  }
  return Lease(this, std::make_unique<Connection>(url_));  // throws if it cannot connect
}

Result<std::unique_ptr<ApiStore>> PostgresApiStore::Open(const std::string& url,
                                                         StoreOptions options) {
  RegisterUrlSecrets(url);
  return Guarded("open", [&]() -> Result<std::unique_ptr<ApiStore>> {
    auto store = std::unique_ptr<PostgresApiStore>(new PostgresApiStore(url, options));
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
    return std::unique_ptr<ApiStore>(std::move(store));
  });
}

Status PostgresApiStore::RunBatch(std::vector<Pending>& batch, size_t* kept) {
  return Guarded("committing a batch", [&]() -> Status {
    if (!writer_ || !writer_->c.is_open()) {
      writer_ = std::make_unique<Connection>(url_, /*durable=*/true);
    }
    pqxx::nontransaction t(writer_->c);
    PgBatchTxn txn(writer_->c, t);
    // No savepoint per mutation (two round trips each): a mutation that
    // rolls back decides so before writing (a refused request reads, then
    // returns), and one that fails after writing can only have met a
    // database error, which dooms the transaction anyway: the whole batch
    // is then refused, and its requests are answered 503 (retry).
    try {
      for (Pending& p : batch) {
        const size_t writes_before = txn.writes();
        if (RunMutation(p.m, txn)) {
          ++*kept;
        } else if (txn.writes() != writes_before) {
          throw std::runtime_error("a mutation failed after writing; the batch is not committed");
        }
      }
      txn.Commit();
    } catch (...) {
      if (txn.begun() && writer_->c.is_open()) {
        try {
          t.exec("ROLLBACK");
        } catch (const std::exception&) {  // the connection is replaced next batch
          writer_->c.disconnect();
        }
      }
      throw;
    }
    return Status::Ok();
  });
}

Result<std::optional<Record>> PostgresApiStore::Get(const std::string& project,
                                                    const std::string& id) {
  return Guarded("reading a resource", [&]() -> Result<std::optional<Record>> {
    Lease lease = Borrow();
    pqxx::nontransaction t(lease.c());
    pqxx::result r = t.exec_prepared("get", id, project);
    if (r.empty()) return std::optional<Record>();
    return std::optional<Record>(ReadRecord(r[0]));
  });
}

Result<std::vector<Record>> PostgresApiStore::List(const std::string& project,
                                                   const std::string& kind, int64_t after_seq,
                                                   int limit) {
  return Guarded("listing resources", [&]() -> Result<std::vector<Record>> {
    Lease lease = Borrow();
    pqxx::nontransaction t(lease.c());
    std::vector<Record> out;
    for (const pqxx::row& row : t.exec_prepared("list", project, kind, after_seq, limit)) {
      out.push_back(ReadRecord(row));
    }
    return out;
  });
}

Result<std::optional<StoredResponse>> PostgresApiStore::GetResponse(const std::string& scope) {
  return Guarded("reading an idempotency record", [&]() -> Result<std::optional<StoredResponse>> {
    Lease lease = Borrow();
    pqxx::nontransaction t(lease.c());
    pqxx::result r = t.exec_prepared("response", scope);
    if (r.empty()) return std::optional<StoredResponse>();
    return std::optional<StoredResponse>(ReadStored(r[0]));
  });
}

Result<int64_t> PostgresApiStore::NextDueMs() {
  return Guarded("reading the schedule", [&]() -> Result<int64_t> {
    Lease lease = Borrow();
    pqxx::nontransaction t(lease.c());
    pqxx::result r = t.exec_prepared("next_due");
    return r[0][0].is_null() ? int64_t{0} : r[0][0].as<int64_t>();
  });
}

Result<std::vector<std::pair<std::string, std::string>>> PostgresApiStore::LoadTokens() {
  return Guarded("reading token hashes",
                 [&]() -> Result<std::vector<std::pair<std::string, std::string>>> {
                   Lease lease = Borrow();
                   pqxx::nontransaction t(lease.c());
                   std::vector<std::pair<std::string, std::string>> out;
                   for (const pqxx::row& row : t.exec_prepared("tokens")) {
                     out.emplace_back(row[0].as<std::string>(), row[1].as<std::string>());
                   }
                   return out;
                 });
}

Result<ApiStore::KeyClaim> PostgresApiStore::ClaimKey(const std::string& scope) {
  // Requests of this server first, in memory: a key held here is not asked
  // for again. Then the row, which a claim of this server's released but not
  // yet deleted (see ReleaseKey) still holds, and which it may take again.
  if (!ClaimLocally(scope)) return ApiStore::ClaimKey(scope);
  auto claim = Guarded("claiming an idempotency key", [&]() -> Result<KeyClaim> {
    Lease lease = Borrow();
    pqxx::nontransaction w(lease.c());
    const int64_t now = NowMs();
    pqxx::result r = w.exec_prepared("claim", scope, owner_, now + kClaimLeaseMs, now);
    KeyClaim out;
    out.claimed = r[0][0].as<bool>();
    if (!r[0][1].is_null()) out.stored = ReadStored(r[0], 1);
    return out;
  });
  if (!claim.ok() || !claim->claimed) ReleaseLocally(scope);
  return claim;
}

void PostgresApiStore::ReleaseKey(const std::string& scope) {
  // Free here at once; the row goes in the releaser's next batch (another
  // server meanwhile answers 409 idempotency_key_in_use a moment longer).
  ApiStore::ReleaseKey(scope);
  MutexLock lock(release_mu_);
  to_release_.push_back(scope);
  release_cv_.NotifyOne();
}

void PostgresApiStore::ReleaseLoop() {
  for (;;) {
    std::vector<std::string> scopes;
    {
      MutexLock lock(release_mu_);
      release_cv_.Wait(release_mu_, [&]() REQUIRES(release_mu_) {
        return release_stop_ || !to_release_.empty();
      });
      if (to_release_.empty()) return;  // stopping, and nothing left
      while (!to_release_.empty() && scopes.size() < 500) {
        scopes.push_back(std::move(to_release_.front()));
        to_release_.pop_front();
      }
    }
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
  }
}

Result<std::optional<ApiStore::Bucket>> PostgresApiStore::TakeToken(const std::string& project,
                                                                    double rate, int64_t burst) {
  return Guarded("taking a rate-limit token", [&]() -> Result<std::optional<Bucket>> {
    Lease lease = Borrow();
    pqxx::nontransaction w(lease.c());
    pqxx::result r =
        w.exec_prepared("take_token", project, static_cast<double>(burst), NowMs(), rate);
    return std::optional<Bucket>(Bucket{r[0][0].as<bool>(), r[0][1].as<double>()});
  });
}

}  // namespace cairn::server
