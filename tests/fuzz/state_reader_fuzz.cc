// libFuzzer target: the SQLite state reader (engine/state/sqlite_state_store.h)
// on a state file whose rows, journal entries or bytes are corrupted.
//
// A valid state is made once: resources with attributes and dependencies,
// outputs, the sequence, and two pending journal entries, as an interrupted
// apply leaves them. Each input copies that file and corrupts the copy with
// up to eight edits, then opens it as `cairn apply` and `cairn plan` do:
// OpenExisting, Load, PendingJournal and CurrentLock; with a state that
// loads, a destroy plan and its report; with a journal that reads, the
// lock and RecoverJournal, which re-sends every entry through a provider
// that answers everything. Every call must return an error or a value:
// never crash, hang or leak.
//
// Input: a sequence of edits, each
//   byte 0   op: 0-3 set a column of a row, 4 delete a row, 5 copy a row
//            with a column set, 6 set PRAGMA user_version, 7 overwrite bytes
//            of the file itself (after the SQL edits, at offset bytes 1-2 *
//            16 of the file)
//   byte 1   table (meta, resources, outputs, journal, sequence, lock)
//   byte 2   row (the Nth row), byte 3 column (the Nth column)
//   byte 4   length L of the value, then L bytes of value: set as TEXT
//            (op 0), BLOB (1), the integer those bytes spell (2), or REAL (3)
#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/apply/apply.h"
#include "engine/manifest/expr.h"
#include "engine/plan/plan.h"
#include "engine/report/plan_report.h"
#include "engine/state/sqlite_state_store.h"
#include "tests/fuzz/answering_provider.h"

namespace {

struct Table {
  const char* name;
  std::vector<const char*> columns;
};

const std::vector<Table>& Tables() {
  static const std::vector<Table> tables = {
      {"meta", {"slot", "lineage", "serial", "format_version"}},
      {"resources",
       {"address", "kind", "id", "attributes", "depends_on", "schema_version", "tainted"}},
      {"outputs", {"name", "value"}},
      {"journal",
       {"seq", "address", "action", "kind", "remote_id", "method", "path", "body",
        "idempotency_key", "started_at", "context"}},
      {"sequence", {"slot", "last"}},
      {"lock", {"slot", "id", "holder", "operation", "created_at"}},
  };
  return tables;
}

// Never destroyed: the exit handler that removes it runs after static
// destructors would have.
const std::string& Dir() {
  static const std::string* dir = [] {
    std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string templ = base + "/cairn-state-fuzz-XXXXXX";
    if (!mkdtemp(templ.data())) std::abort();
    auto* made = new std::string(templ);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(Dir(), ec);
    });
    return made;
  }();
  return *dir;
}

void Must(const cairn::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "state_reader_fuzz: setup: %s: %s\n", what, s.ToString().c_str());
    std::abort();
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The bytes of a valid state file with resources, outputs and a journal.
const std::string& ValidState() {
  static const std::string bytes = [] {
    std::string path = Dir() + "/valid.db";
    {
      auto opened = cairn::SqliteStateStore::Open(path);
      Must(opened.status(), "open");
      auto& store = **opened;
      Must(store.Load().status(), "load");
      cairn::StateCommit commit;
      commit.put.push_back({"network.core",
                            "network",
                            "net-1",
                            cairn::Value{{"name", "core"},
                                         {"region", "eu-central"},
                                         {"cidr", "10.0.0.0/16"},
                                         {"id", "net-1"}},
                            {}});
      commit.put.push_back({"instance.web[0]",
                            "instance",
                            "inst-1",
                            cairn::Value{{"name", "web-0"},
                                         {"network", "net-1"},
                                         {"ssh_keys", cairn::Value::array({"k1"})},
                                         {"id", "inst-1"}},
                            {"network.core", "ssh_key.admin"}});
      commit.put.push_back({"ssh_key.admin",
                            "ssh_key",
                            "key-1",
                            cairn::Value{{"name", "admin"}, {"id", "key-1"}},
                            {}});
      commit.put.push_back({"instance.db[\"eu\"]",
                            "instance",
                            "inst-2",
                            cairn::Value{{"name", "db"}, {"id", "inst-2"}},
                            {"instance.web[0]"},
                            cairn::kStateSchemaVersion,
                            "provisioning failed: provisioning_failed"});
      commit.outputs = std::map<std::string, cairn::Value>{
          {"ip", "10.0.0.5"}, {"ids", cairn::Value::array({"inst-1", "inst-2"})}};
      Must(store.Commit(commit).status(), "commit");
      auto seq = store.ReserveSequences(2);
      Must(seq.status(), "reserve");
      std::vector<cairn::JournalEntry> entries(2);
      entries[0] = {*seq,
                    "instance.api",
                    cairn::Action::kCreate,
                    "instance",
                    "",
                    "POST",
                    "/api/v1/compute",
                    R"({"name":"api","region":"eu-central","plan":"s-1vcpu-1gb"})",
                    "lineage-1-create-instance.api",
                    1700000000,
                    cairn::Value{{"depends_on", cairn::Value::array({"network.core"})}}};
      entries[1] = {*seq + 1,
                    "network.core",
                    cairn::Action::kDelete,
                    "network",
                    "net-1",
                    "DELETE",
                    "/v1/networks/net-1",
                    "",
                    "lineage-2-delete-network.core",
                    1700000001,
                    cairn::Value::object()};
      Must(store.JournalBeginAll(entries), "journal");
    }
    return ReadFile(path);
  }();
  return bytes;
}

struct Edit {
  uint8_t op = 0, table = 0, row = 0, column = 0;
  std::string value;
};

std::vector<Edit> ParseEdits(const uint8_t* data, size_t size) {
  std::vector<Edit> edits;
  size_t i = 0;
  while (i + 5 <= size && edits.size() < 8) {
    Edit e;
    e.op = data[i] % 8;
    e.table = data[i + 1];
    e.row = data[i + 2];
    e.column = data[i + 3];
    size_t len = data[i + 4];
    i += 5;
    len = std::min(len, size - i);
    e.value.assign(reinterpret_cast<const char*>(data + i), len);
    i += len;
    edits.push_back(std::move(e));
  }
  return edits;
}

void ApplySqlEdit(sqlite3* db, const Edit& e) {
  const Table& t = Tables()[e.table % Tables().size()];
  std::string col = t.columns[e.column % t.columns.size()];
  std::string row = "(SELECT rowid FROM " + std::string(t.name) +
                    " ORDER BY rowid LIMIT 1 OFFSET " + std::to_string(e.row % 8) + ")";
  std::string sql;
  if (e.op <= 3) {
    sql = "UPDATE " + std::string(t.name) + " SET " + col + " = ?1 WHERE rowid = " + row;
  } else if (e.op == 4) {
    sql = "DELETE FROM " + std::string(t.name) + " WHERE rowid = " + row;
  } else if (e.op == 5) {
    // A copy of the row with the column set (it fails, harmlessly, when
    // the copy collides with a key).
    sqlite3_exec(
        db,
        ("CREATE TEMP TABLE copy AS SELECT * FROM " + std::string(t.name) + " WHERE rowid = " + row)
            .c_str(),
        nullptr, nullptr, nullptr);
    sqlite3_stmt* st = nullptr;
    std::string upd = "UPDATE temp.copy SET " + col + " = ?1";
    if (sqlite3_prepare_v2(db, upd.c_str(), -1, &st, nullptr) == SQLITE_OK) {
      sqlite3_bind_text(st, 1, e.value.data(), static_cast<int>(e.value.size()), SQLITE_TRANSIENT);
      sqlite3_step(st);
    }
    sqlite3_finalize(st);
    sqlite3_exec(db, ("INSERT INTO " + std::string(t.name) + " SELECT * FROM temp.copy").c_str(),
                 nullptr, nullptr, nullptr);
    sqlite3_exec(db, "DROP TABLE temp.copy", nullptr, nullptr, nullptr);
    return;
  } else if (e.op == 6) {
    int64_t v = 0;
    std::memcpy(&v, e.value.data(), std::min(e.value.size(), sizeof v));
    sql = "PRAGMA user_version = " + std::to_string(static_cast<int32_t>(v));
    sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
    return;
  } else {
    return;  // a byte edit, applied to the file afterwards
  }
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    sqlite3_finalize(st);
    return;
  }
  if (e.op <= 3) {
    if (e.op == 0) {
      sqlite3_bind_text(st, 1, e.value.data(), static_cast<int>(e.value.size()), SQLITE_TRANSIENT);
    } else if (e.op == 1) {
      sqlite3_bind_blob(st, 1, e.value.data(), static_cast<int>(e.value.size()), SQLITE_TRANSIENT);
    } else if (e.op == 2) {
      int64_t v = 0;
      std::memcpy(&v, e.value.data(), std::min(e.value.size(), sizeof v));
      sqlite3_bind_int64(st, 1, v);
    } else {
      double v = 0;
      std::memcpy(&v, e.value.data(), std::min(e.value.size(), sizeof v));
      sqlite3_bind_double(st, 1, v);
    }
  }
  sqlite3_step(st);
  sqlite3_finalize(st);
}

void ExerciseStore(cairn::SqliteStateStore& store) {
  auto lock_now = store.CurrentLock();
  (void)lock_now;
  auto state = store.Load();
  if (state.ok()) {
    for (const auto& [address, r] : state->resources) {
      (void)cairn::ResourceAddress::Parse(address);
      (void)r.attributes.dump(-1, ' ', false, cairn::Value::error_handler_t::replace);
    }
    cairn::PlanOptions po;
    po.destroy = true;
    po.refresh = false;
    cairn::StackConfig config;
    auto plan = cairn::MakePlan(config, *state, {}, {}, po);
    (void)cairn::RenderPlanText(plan.plan);
  }
  auto journal = store.PendingJournal();
  if (!journal.ok()) return;
  auto lock = store.Lock("apply", std::chrono::milliseconds(0));
  if (!lock.ok()) return;
  cairn::fuzz::AnsweringProvider provider;
  cairn::ApplyOptions options;
  options.find_by_name_kinds = {"ssh_key", "network"};
  auto recovered = cairn::RecoverJournal(provider, store, options);
  (void)recovered;
  (void)store.Load();
  (void)store.Unlock(lock->id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& valid = ValidState();
  std::string path = Dir() + "/state.db";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
  { std::ofstream(path, std::ios::binary) << valid; }
  std::vector<Edit> edits = ParseEdits(data, size);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    for (const Edit& e : edits) ApplySqlEdit(db, e);
  }
  sqlite3_close(db);
  bool byte_edits = false;
  for (const Edit& e : edits) byte_edits = byte_edits || e.op == 7;
  if (byte_edits) {
    std::string bytes = ReadFile(path);
    for (const Edit& e : edits) {
      if (e.op != 7 || bytes.empty()) continue;
      size_t offset = ((static_cast<size_t>(e.table) << 8 | e.row) * 16) % bytes.size();
      for (size_t k = 0; k < e.value.size() && offset + k < bytes.size(); ++k)
        bytes[offset + k] = e.value[k];
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }
  // As the read-only commands open it, then as apply does (migrating).
  if (auto store = cairn::SqliteStateStore::OpenExisting(path); store.ok()) {
    ExerciseStore(**store);
  }
  if (auto store = cairn::SqliteStateStore::Open(path); store.ok()) {
    ExerciseStore(**store);
  }
  return 0;
}
