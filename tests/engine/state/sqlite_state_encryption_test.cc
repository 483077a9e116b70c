// Encryption at rest of the SQLite state (engine/state/state_cipher.h): no
// plaintext of a record in any byte of the database or its WAL, wrong and
// missing keys refused before anything is read, rotation with a fallback,
// `Rekey()` both ways, and a migration that fails or is killed half-way
// leaving the state as it was before or after.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <thread>

#include "engine/state/sqlite_state_store.h"
#include "engine/state/state_cipher.h"
#include "tests/engine/state/state_test_support.h"
#include "tests/engine/support/crash_vfs.h"

namespace sqlite_state_encryption_test {

using namespace cairn;
using namespace cairn::testing;

constexpr const char* kSecret = "hunter2-secret-value";
constexpr const char* kOtherKey =
    "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Every byte Cairn left of the state: the database, its WAL and shared memory.
std::string AllStateBytes(const std::string& path) {
  return Slurp(path) + Slurp(path + "-wal") + Slurp(path + "-shm");
}

Result<std::unique_ptr<SqliteStateStore>> OpenWith(const std::string& path,
                                                   StateEncryptionSpec spec,
                                                   bool for_rekey = false) {
  SqliteStateOptions options;
  options.encryption = std::move(spec);
  options.for_rekey = for_rekey;
  return SqliteStateStore::Open(path, options);
}

std::unique_ptr<SqliteStateStore> MustOpenWith(const std::string& path, StateEncryptionSpec spec,
                                               bool for_rekey = false) {
  auto s = OpenWith(path, std::move(spec), for_rekey);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(*s);
}

StateEncryptionSpec Key(const char* env, const char* value) { return TestEncryption(env, value); }

StateEncryptionSpec Rotation(const char* new_env, const char* new_value, const char* old_env,
                             const char* old_value) {
  StateEncryptionSpec spec = TestEncryption(new_env, new_value);
  ::setenv(old_env, old_value, 1);
  spec.fallback = StateKeySource{old_env, ""};
  return spec;
}

// Writes kSecret into every kind of record: attributes, an output, a journal
// body and context.
void WriteSecrets(StateStore& store, int resources = 1) {
  StateCommit c;
  for (int i = 0; i < resources; ++i) {
    ResourceState r;
    r.address = "instance.web[" + std::to_string(i) + "]";
    r.kind = "instance";
    r.id = "inst-" + std::to_string(i);
    r.attributes = {{"name", "web"}, {"user_data", std::string(kSecret)}, {"n", i}};
    c.put.push_back(std::move(r));
  }
  c.outputs = std::map<std::string, Value>{{"password", std::string(kSecret)}};
  c.sensitive_outputs = {"password"};
  REQUIRE(store.Commit(c).ok());
  auto seq = store.ReserveSequences(1);
  REQUIRE(seq.ok());
  JournalEntry e =
      TestJournalEntry(*seq, "instance.db", std::string("{\"pw\":\"") + kSecret + "\"}");
  e.context = Value{{"secret", std::string(kSecret)}};
  REQUIRE(store.JournalBegin(e).ok());
}

void CheckSecrets(StateStore& store, int resources = 1) {
  auto snap = store.Load();
  INFO(snap.status().ToString());
  REQUIRE(snap.ok());
  REQUIRE(snap->resources.size() == static_cast<size_t>(resources));
  for (int i = 0; i < resources; ++i) {
    const auto& r = snap->resources.at("instance.web[" + std::to_string(i) + "]");
    CHECK(r.attributes["user_data"] == kSecret);
    CHECK(r.attributes["n"] == i);
  }
  CHECK(snap->outputs.at("password") == kSecret);
  auto pending = store.PendingJournal();
  REQUIRE(pending.ok());
  REQUIRE(pending->size() == 1);
  CHECK(Contains((*pending)[0].body, kSecret));
  CHECK((*pending)[0].context["secret"] == kSecret);
}

std::string OpenError(const std::string& path, StateEncryptionSpec spec) {
  auto s = OpenWith(path, std::move(spec));
  REQUIRE_FALSE(s.ok());
  return s.status().message();
}

TEST_CASE("state cipher: a sealed record opens only under its key and kind", "[state]") {
  const std::string salt = *StateCipher::NewSalt();
  auto a = StateCipher::Create(Key("CAIRN_TEST_KEY_A", kTestStateKey), salt);
  auto b = StateCipher::Create(Key("CAIRN_TEST_KEY_B", kOtherKey), salt);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK((*a)->key_id().size() == 16);
  CHECK((*a)->key_id() != (*b)->key_id());
  auto sealed = (*a)->Seal(kSecret, kSealedAttributes);
  REQUIRE(sealed.ok());
  CHECK(StateCipher::IsSealed(*sealed));
  CHECK_FALSE(Contains(*sealed, kSecret));
  CHECK(StateCipher::SealedKeyId(*sealed) == (*a)->key_id());
  // A fresh nonce per record: the same plaintext never seals the same.
  CHECK(*(*a)->Seal(kSecret, kSealedAttributes) != *sealed);
  CHECK(*(*a)->Open(*sealed, kSealedAttributes, "x") == kSecret);

  auto wrong = (*b)->Open(*sealed, kSealedAttributes, "attributes of instance.web");
  REQUIRE_FALSE(wrong.ok());
  CHECK(Contains(wrong.status().message(), "attributes of instance.web"));
  CHECK(Contains(wrong.status().message(), (*a)->key_id()));
  CHECK(Contains(wrong.status().message(), "wrong key"));
  CHECK_FALSE(Contains(wrong.status().message(), kOtherKey));

  auto other_kind = (*a)->Open(*sealed, kSealedOutput, "output password");
  REQUIRE_FALSE(other_kind.ok());
  CHECK(Contains(other_kind.status().message(), "altered or is corrupt"));

  std::string tampered = *sealed;
  tampered[tampered.size() - 6] = tampered[tampered.size() - 6] == 'A' ? 'B' : 'A';
  auto bad = (*a)->Open(tampered, kSealedAttributes, "output password");
  REQUIRE_FALSE(bad.ok());
  CHECK(Contains(bad.status().message(), "altered or is corrupt"));
  CHECK_FALSE(Contains(bad.status().message(), "bad decrypt"));

  // Another salt, another key id: the salt is part of the key.
  auto c = StateCipher::Create(Key("CAIRN_TEST_KEY_A", kTestStateKey), *StateCipher::NewSalt());
  REQUIRE(c.ok());
  CHECK((*c)->key_id() != (*a)->key_id());
}

TEST_CASE("state cipher: passphrases are stretched and short ones refused", "[state]") {
  const std::string salt = *StateCipher::NewSalt();
  auto p = StateCipher::Create(Key("CAIRN_TEST_KEY_P", "correct horse battery staple"), salt);
  REQUIRE(p.ok());
  auto again = StateCipher::Create(Key("CAIRN_TEST_KEY_P", "correct horse battery staple"), salt);
  REQUIRE(again.ok());
  CHECK((*p)->key_id() == (*again)->key_id());
  auto sealed = (*p)->Seal(kSecret, kSealedOutput);
  REQUIRE(sealed.ok());
  CHECK(*(*again)->Open(*sealed, kSealedOutput, "x") == kSecret);

  auto short_one = StateCipher::Create(Key("CAIRN_TEST_KEY_P", "hunter2"), salt);
  REQUIRE_FALSE(short_one.ok());
  CHECK(Contains(short_one.status().message(), "environment variable CAIRN_TEST_KEY_P"));
  CHECK(Contains(short_one.status().message(), "too short"));
  CHECK_FALSE(Contains(short_one.status().message(), "hunter2"));
}

TEST_CASE("state cipher: a key file is read and a missing one named", "[state]") {
  TempDir dir;
  { std::ofstream(dir.path() + "/state.key") << kTestStateKey << "\n"; }
  StateEncryptionSpec spec;
  spec.key = StateKeySource{"", "state.key"};
  const std::string salt = *StateCipher::NewSalt();
  auto from_file = StateCipher::Create(spec, salt, dir.path());
  REQUIRE(from_file.ok());
  auto from_env = StateCipher::Create(Key("CAIRN_TEST_KEY_A", kTestStateKey), salt);
  CHECK((*from_file)->key_id() == (*from_env)->key_id());

  spec.key = StateKeySource{"", "missing.key"};
  auto missing = StateCipher::Create(spec, salt, dir.path());
  REQUIRE_FALSE(missing.ok());
  CHECK(Contains(missing.status().message(), "missing.key"));
}

TEST_CASE("sqlite state encryption: no byte of the state holds a secret in plaintext", "[state]") {
  for (bool encrypted : {false, true}) {
    INFO("encrypted " << encrypted);
    TempDir dir;
    const std::string path = SqliteStateStore::DefaultPath(dir.path());
    {
      auto store = encrypted ? MustOpenWith(path, TestEncryption()) : MustOpenWith(path, {});
      WriteSecrets(*store);
      CheckSecrets(*store);
      // The WAL is still there (the store is open): it is read too.
      const std::string bytes = AllStateBytes(path);
      CHECK(Contains(bytes, kSecret) == !encrypted);  // the control finds it
      CHECK(Contains(bytes, "instance.web[0]"));      // addresses stay plaintext
    }
    CHECK(Contains(AllStateBytes(path), kSecret) == !encrypted);
    if (encrypted) CheckSecrets(*MustOpenWith(path, TestEncryption()));
  }
}

TEST_CASE("sqlite state encryption: a wrong or missing key is a clear error and writes nothing",
          "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  std::string key_id;
  {
    auto store = MustOpenWith(path, TestEncryption());
    WriteSecrets(*store);
  }
  const std::string before = Slurp(path) + Slurp(path + "-wal");

  std::string wrong = OpenError(path, Key("CAIRN_TEST_WRONG_KEY", kOtherKey));
  CHECK(Contains(wrong, "wrong key"));
  CHECK(Contains(wrong, "environment variable CAIRN_TEST_WRONG_KEY"));
  CHECK_FALSE(Contains(wrong, kOtherKey));
  CHECK_FALSE(Contains(wrong, kTestStateKey));
  CHECK_FALSE(Contains(wrong, "bad decrypt"));

  ::unsetenv("CAIRN_TEST_UNSET_KEY");
  StateEncryptionSpec unset;
  unset.key = StateKeySource{"CAIRN_TEST_UNSET_KEY", ""};
  std::string missing = OpenError(path, unset);
  CHECK(Contains(missing, "environment variable CAIRN_TEST_UNSET_KEY is not set"));

  std::string none = OpenError(path, {});
  CHECK(Contains(none, "the state is encrypted"));
  CHECK(Contains(none, "no encryption setting"));

  CHECK(Slurp(path) + Slurp(path + "-wal") == before);
  CheckSecrets(*MustOpenWith(path, TestEncryption()));
}

TEST_CASE("sqlite state encryption: a plaintext state is encrypted only by rekey", "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  {
    auto store = MustOpenWith(path, {});
    WriteSecrets(*store, 3);
  }
  std::string refused = OpenError(path, TestEncryption());
  CHECK(Contains(refused, "not encrypted"));
  CHECK(Contains(refused, "cairn state rekey"));
  {
    auto store = MustOpenWith(path, TestEncryption(), /*for_rekey=*/true);
    auto r = store->Rekey();
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK(r->from_key_id.empty());
    CHECK(r->to_key_id.size() == 16);
    CHECK(r->records == 3 + 1 + 2);  // attributes, the output, a journal body and context
    CheckSecrets(*store, 3);
  }
  CHECK_FALSE(Contains(AllStateBytes(path), kSecret));
  CheckSecrets(*MustOpenWith(path, TestEncryption()), 3);
  CHECK(Contains(OpenError(path, {}), "the state is encrypted"));
}

TEST_CASE("sqlite state encryption: rotation reads with the fallback and rekey drops it",
          "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  {
    auto store = MustOpenWith(path, Key("CAIRN_TEST_OLD_KEY", kTestStateKey));
    WriteSecrets(*store);
  }
  const auto rotation =
      Rotation("CAIRN_TEST_NEW_KEY", kOtherKey, "CAIRN_TEST_OLD_KEY", kTestStateKey);
  {
    // Reads the old records through the fallback; writes new ones under the
    // new key.
    auto store = MustOpenWith(path, rotation);
    CheckSecrets(*store);
    StateCommit c;
    c.put = {ResourceState{"instance.new", "instance", "inst-n", {{"pw", kSecret}}, {}, 1, ""}};
    REQUIRE(store->Commit(c).ok());
    REQUIRE(store->Load()->resources.at("instance.new").attributes["pw"] == kSecret);
  }
  // The new key alone does not open a state under the old one yet.
  CHECK(Contains(OpenError(path, Key("CAIRN_TEST_NEW_KEY", kOtherKey)), "wrong key"));
  {
    auto store = MustOpenWith(path, rotation, /*for_rekey=*/true);
    auto r = store->Rekey();
    REQUIRE(r.ok());
    CHECK(r->from_key_id != r->to_key_id);
    CHECK(r->records == 2 + 1 + 2);
  }
  auto store = MustOpenWith(path, Key("CAIRN_TEST_NEW_KEY", kOtherKey));
  auto snap = store->Load();
  REQUIRE(snap.ok());
  CHECK(snap->resources.at("instance.new").attributes["pw"] == kSecret);
  CHECK(snap->resources.at("instance.web[0]").attributes["user_data"] == kSecret);
  CHECK(Contains(OpenError(path, Key("CAIRN_TEST_OLD_KEY", kTestStateKey)), "wrong key"));
}

TEST_CASE("sqlite state encryption: unencrypted with the old key as fallback decrypts by rekey",
          "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  {
    auto store = MustOpenWith(path, TestEncryption());
    WriteSecrets(*store);
  }
  StateEncryptionSpec off;
  off.fallback = StateKeySource{kTestStateKeyEnv, ""};
  CHECK(Contains(OpenError(path, off), "cairn state rekey"));
  {
    auto store = MustOpenWith(path, off, /*for_rekey=*/true);
    auto r = store->Rekey();
    REQUIRE(r.ok());
    CHECK(r->to_key_id.empty());
  }
  CHECK(Contains(AllStateBytes(path), kSecret));
  CheckSecrets(*MustOpenWith(path, {}));
}

TEST_CASE("sqlite state encryption: a record tampered with is named, never half-read", "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  {
    auto store = MustOpenWith(path, TestEncryption());
    WriteSecrets(*store, 2);
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db,
                       "UPDATE resources SET attributes = '{\"user_data\":\"planted\"}' "
                       "WHERE address = 'instance.web[1]'",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  auto store = MustOpenWith(path, TestEncryption());
  auto snap = store->Load();
  REQUIRE_FALSE(snap.ok());
  CHECK(Contains(snap.status().message(), "attributes of instance.web[1]"));
  CHECK(Contains(snap.status().message(), "unencrypted in an encrypted state"));
}

TEST_CASE("sqlite state encryption: a rekey that fails half-way changes nothing", "[state]") {
  TempDir dir;
  const std::string path = SqliteStateStore::DefaultPath(dir.path());
  {
    auto store = MustOpenWith(path, {});
    WriteSecrets(*store, 50);
  }
  // Injected failure: the last resource's record was sealed under a key Cairn
  // is not given, so the migration meets it after rewriting the others.
  {
    auto stranger = StateCipher::Create(Key("CAIRN_TEST_STRANGER", kOtherKey), "salt");
    REQUIRE(stranger.ok());
    const std::string sealed = *(*stranger)->Seal("{}", kSealedAttributes);
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db,
                               "INSERT INTO resources (address, kind, id, attributes, depends_on, "
                               "schema_version) VALUES ('zz.last', 'instance', 'x', ?, '[]', 1)",
                               -1, &st, nullptr) == SQLITE_OK);
    sqlite3_bind_text(st, 1, sealed.c_str(), -1, SQLITE_TRANSIENT);
    REQUIRE(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  {
    auto store = MustOpenWith(path, TestEncryption(), /*for_rekey=*/true);
    auto r = store->Rekey();
    REQUIRE_FALSE(r.ok());
    CHECK(Contains(r.status().message(), "attributes of zz.last"));
    CHECK(Contains(r.status().message(), "wrong key"));
  }
  // Still the plaintext state, every record as it was: only the planted one
  // is sealed, and the state is marked plaintext.
  CHECK(Contains(AllStateBytes(path), kSecret));
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  auto count = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
  };
  CHECK(count("SELECT count(*) FROM resources WHERE attributes LIKE 'cairn-enc1:%'") == 1);
  CHECK(count("SELECT count(*) FROM outputs WHERE value LIKE 'cairn-enc1:%'") == 0);
  CHECK(count("SELECT count(*) FROM encryption WHERE key_id = ''") == 1);
  sqlite3_close(db);
  CHECK(Contains(OpenError(path, TestEncryption()), "not encrypted"));
}

// The child: migrates the plaintext state at `path` to encrypted, then
// writes 'm' on `done`.
[[noreturn]] void RekeyChild(const std::string& path, int done) {
  auto store = OpenWith(path, TestEncryption(), /*for_rekey=*/true);
  if (!store.ok()) _exit(2);
  if (!(*store)->Rekey().ok()) _exit(3);
  const char mark = 'm';
  if (write(done, &mark, 1) != 1) _exit(4);
  _exit(0);
}

TEST_CASE("sqlite state encryption: a migration killed mid-way leaves the old or the new state",
          "[state]") {
  constexpr int kResources = 400;
  std::mt19937 rng(std::random_device{}());
  int saw_old = 0, saw_new = 0;
  for (int trial = 0; trial < 8; ++trial) {
    TempDir dir;
    const std::string path = SqliteStateStore::DefaultPath(dir.path());
    {
      auto store = MustOpenWith(path, {});
      WriteSecrets(*store, kResources);
    }
    // How long a whole migration takes, so the kill lands inside one.
    std::uniform_int_distribution<int> delay_us(0, 40'000);
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      RekeyChild(path, fds[1]);
    }
    close(fds[1]);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    char mark = 0;
    const bool finished = read(fds[0], &mark, 1) == 1;
    close(fds[0]);
    INFO("trial " << trial << ", child finished: " << finished);
    // Either the plaintext state, complete, or the encrypted one, complete.
    auto plain = OpenWith(path, {});
    if (plain.ok()) {
      CHECK_FALSE(finished);
      CheckSecrets(**plain, kResources);
      ++saw_old;
    } else {
      CHECK(Contains(plain.status().message(), "the state is encrypted"));
      CheckSecrets(*MustOpenWith(path, TestEncryption()), kResources);
      // Closed, the WAL is in the file: no plaintext left in either.
      CHECK_FALSE(Contains(AllStateBytes(path), kSecret));
      ++saw_new;
    }
  }
  INFO("old " << saw_old << ", new " << saw_new);
  CHECK(saw_old + saw_new == 8);
}

// Runs `body` in a child process through the crash VFS; its exit status.
int InCrashVfsChild(const std::function<int()>& body) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    cairn::testing::InstallCrashVfs();
    _exit(body());
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_CASE(
    "sqlite state encryption: a migration cut by a machine crash leaves the old or the new "
    "state",
    "[state]") {
  constexpr int kResources = 300;
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> delay_us(0, 60'000);
  for (int trial = 0; trial < 6; ++trial) {
    TempDir dir;
    const std::string path = dir.path() + "/state.db";
    // The plaintext state, written (and synced) through the crash VFS, so
    // that the restore below has its synced images.
    REQUIRE(InCrashVfsChild([&] {
              auto store = OpenWith(path, {});
              if (!store.ok()) return 2;
              StateCommit c;
              for (int i = 0; i < kResources; ++i) {
                ResourceState r;
                r.address = "instance.web[" + std::to_string(i) + "]";
                r.kind = "instance";
                r.id = "inst-" + std::to_string(i);
                r.attributes = {{"name", "web"}, {"user_data", std::string(kSecret)}, {"n", i}};
                c.put.push_back(std::move(r));
              }
              c.outputs = std::map<std::string, Value>{{"password", std::string(kSecret)}};
              return (*store)->Commit(c).ok() ? 0 : 3;
            }) == 0);
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      cairn::testing::InstallCrashVfs();
      RekeyChild(path, fds[1]);
    }
    close(fds[1]);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    char mark = 0;
    const bool acknowledged = read(fds[0], &mark, 1) == 1;
    close(fds[0]);
    cairn::testing::RestoreSyncedFiles(dir.path());
    INFO("trial " << trial << ", rekey acknowledged: " << acknowledged);
    auto plain = OpenWith(path, {});
    std::unique_ptr<SqliteStateStore> store;
    if (plain.ok()) {
      CHECK_FALSE(acknowledged);  // an acknowledged rekey is durable
      store = std::move(*plain);
    } else {
      CHECK(Contains(plain.status().message(), "the state is encrypted"));
      MustOpenWith(path, TestEncryption()).reset();  // recovers the WAL into the file
      CHECK_FALSE(Contains(AllStateBytes(path), kSecret));
      store = MustOpenWith(path, TestEncryption());
    }
    auto snap = store->Load();
    INFO(snap.status().ToString());
    REQUIRE(snap.ok());
    CHECK(snap->resources.size() == static_cast<size_t>(kResources));
    CHECK(snap->resources.at("instance.web[7]").attributes["user_data"] == kSecret);
    CHECK(snap->outputs.at("password") == kSecret);
  }
}

}  // namespace sqlite_state_encryption_test
