// Workspaces on both backends: "default" is the stack's state where it
// always was; every other workspace has a state of its own (file or rows),
// with its own lock; deleting one refuses a state that still tracks
// resources unless forced.
#include "engine/state/workspaces.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/engine/state/state_test_support.h"

namespace workspaces_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<StateStore> MustOpenWorkspace(const std::string& root, BackendSpec spec,
                                              const std::string& workspace) {
  spec.workspace = workspace;
  auto store = OpenExistingStateStore(root, spec);
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  return std::move(*store);
}

void CommitOneResource(StateStore& store, const std::string& id) {
  ResourceState r;
  r.address = "network.core";
  r.kind = "network";
  r.id = id;
  StateCommit c;
  c.put = {r};
  REQUIRE(store.Commit(c).ok());
}

// What every backend promises, run on `spec` in `root`.
void CheckWorkspaceSeparation(const std::string& root, const BackendSpec& spec) {
  auto def = OpenStateStore(root, spec);
  REQUIRE(def.ok());
  CommitOneResource(**def, "net-default");

  CHECK(*ListWorkspaces(root, spec) == std::vector<std::string>{"default"});
  CHECK(*WorkspaceExists(root, spec, "default"));
  CHECK_FALSE(*WorkspaceExists(root, spec, "dev"));

  REQUIRE(CreateWorkspace(root, spec, "prod").ok());
  REQUIRE(CreateWorkspace(root, spec, "dev").ok());
  Status again = CreateWorkspace(root, spec, "dev");
  CHECK(again.code() == StatusCode::kAlreadyExists);
  CHECK(CreateWorkspace(root, spec, "default").code() == StatusCode::kAlreadyExists);
  CHECK(CreateWorkspace(root, spec, "Bad Name").code() == StatusCode::kInvalidArgument);
  CHECK(*ListWorkspaces(root, spec) == std::vector<std::string>{"default", "dev", "prod"});
  CHECK(KnownWorkspacesText(root, spec) == "default, dev, prod");

  // Separate states: dev starts empty, with a lineage of its own.
  auto dev = MustOpenWorkspace(root, spec, "dev");
  StateSnapshot dev_state = *dev->Load();
  CHECK(dev_state.resources.empty());
  CHECK(dev_state.lineage != (*def)->Load()->lineage);
  CommitOneResource(*dev, "net-dev");
  CHECK((*def)->Load()->resources.at("network.core").id == "net-default");
  CHECK(dev->Load()->resources.at("network.core").id == "net-dev");
  CHECK(MustOpenWorkspace(root, spec, "prod")->Load()->resources.empty());

  // One lock per workspace: dev's held does not block default's or prod's.
  auto dev_lock = dev->Lock("apply", 0ms);
  REQUIRE(dev_lock.ok());
  auto def_lock = (*def)->Lock("apply", 0ms);
  INFO(def_lock.status().ToString());
  CHECK(def_lock.ok());
  auto prod = MustOpenWorkspace(root, spec, "prod");
  CHECK(prod->Lock("apply", 0ms).ok());
  // ... but blocks a second holder of dev's.
  auto dev_again = MustOpenWorkspace(root, spec, "dev");
  CHECK(dev_again->Lock("apply", 0ms).status().code() == StatusCode::kConflict);

  // Delete: refused while locked, while tracking resources, for default.
  Status locked = DeleteWorkspace(root, spec, "dev", /*force=*/true);
  CHECK(locked.code() == StatusCode::kConflict);
  REQUIRE(dev->Unlock(dev_lock->id).ok());
  Status tracking = DeleteWorkspace(root, spec, "dev", /*force=*/false);
  CHECK(tracking.code() == StatusCode::kFailedPrecondition);
  CHECK(Contains(tracking.message(), "still tracks 1 resource"));
  CHECK(*WorkspaceExists(root, spec, "dev"));
  CHECK(DeleteWorkspace(root, spec, "default", true).code() == StatusCode::kInvalidArgument);
  Status unknown = DeleteWorkspace(root, spec, "qa", false);
  CHECK(unknown.code() == StatusCode::kNotFound);
  CHECK(Contains(unknown.message(), "default, dev, prod"));

  dev.reset();
  dev_again.reset();
  Status forced = DeleteWorkspace(root, spec, "dev", /*force=*/true);
  INFO(forced.ToString());
  REQUIRE(forced.ok());
  CHECK_FALSE(*WorkspaceExists(root, spec, "dev"));
  CHECK(*ListWorkspaces(root, spec) == std::vector<std::string>{"default", "prod"});
  // The default state is untouched.
  CHECK((*def)->Load()->resources.at("network.core").id == "net-default");
  // Made again, it starts empty.
  REQUIRE(CreateWorkspace(root, spec, "dev").ok());
  CHECK(MustOpenWorkspace(root, spec, "dev")->Load()->resources.empty());
}

}  // namespace

TEST_CASE("workspaces: names are lowercase letters digits _ and -", "[state]") {
  for (const std::string& good :
       {std::string("default"), std::string("dev"), std::string("prod-eu"), std::string("pr_12"),
        std::string("0"), std::string(64, 'a')}) {
    INFO(good);
    CHECK(WorkspaceNameProblem(good).empty());
  }
  for (const std::string& bad :
       {std::string(), std::string("Dev"), std::string("-dev"), std::string("_dev"),
        std::string("a b"), std::string("a/b"), std::string(".."), std::string(65, 'a')}) {
    INFO(bad);
    CHECK(Contains(WorkspaceNameProblem(bad), "invalid workspace name"));
  }
}

TEST_CASE("workspaces on sqlite: default stays at .cairn/state.db and others apart", "[state]") {
  TempDir dir;
  CheckWorkspaceSeparation(dir.path(), BackendSpec{});
  CHECK(std::filesystem::exists(dir.path() + "/.cairn/state.db"));
  CHECK(std::filesystem::exists(dir.path() + "/.cairn/workspaces/prod/state.db"));
  CHECK(std::filesystem::exists(dir.path() + "/.cairn/workspaces/dev/state.db"));
}

TEST_CASE("workspaces on sqlite: beside a configured path", "[state]") {
  TempDir dir;
  BackendSpec spec;
  spec.path = "states/web.db";
  CheckWorkspaceSeparation(dir.path(), spec);
  CHECK(std::filesystem::exists(dir.path() + "/states/web.db"));
  CHECK(std::filesystem::exists(dir.path() + "/states/workspaces/prod/web.db"));
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/.cairn"));
}

TEST_CASE("workspaces on sqlite: an existing state is the default workspace", "[state]") {
  TempDir dir;
  // A state made before workspaces existed.
  auto old = SqliteStateStore::Open(dir.path() + "/.cairn/state.db");
  REQUIRE(old.ok());
  CommitOneResource(**old, "net-old");
  old->reset();
  BackendSpec spec;
  spec.workspace = "default";
  auto store = OpenExistingStateStore(dir.path(), spec);
  REQUIRE(store.ok());
  CHECK((*store)->Load()->resources.at("network.core").id == "net-old");
}

TEST_CASE("workspaces: the selection file is written and read back", "[state]") {
  TempDir dir;
  auto none = ReadSelectedWorkspace(PosixEnv(), dir.path());
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  REQUIRE(WriteSelectedWorkspace(PosixEnv(), dir.path(), "staging").ok());
  auto read = ReadSelectedWorkspace(PosixEnv(), dir.path());
  REQUIRE(read.ok());
  CHECK(read->value_or("") == "staging");
  CHECK((std::filesystem::status(dir.path() + "/.cairn").permissions() &
         std::filesystem::perms::group_all) == std::filesystem::perms::none);

  MemEnv env;
  env.AddFile("stack/.cairn/workspace", "Not A Name\n");
  auto bad = ReadSelectedWorkspace(env, "stack");
  REQUIRE_FALSE(bad.ok());
  CHECK(Contains(bad.status().message(), "invalid workspace name"));
}

TEST_CASE("workspaces on postgres: one key per workspace and the lock per workspace",
          "[.][postgres]") {
  const std::string url = TestPostgresUrl();
  BackendSpec spec;
  spec.type = "postgres";
  spec.url_env = "CAIRN_TEST_PG_URL";
  spec.stack_name = UniqueStackName();
  CheckWorkspaceSeparation("/tmp", spec);

  // The default workspace is the stack's own rows, as before workspaces;
  // the others are keyed "<name>:workspace:<workspace>".
  auto plain = PostgresStateStore::OpenExisting(url, spec.stack_name);
  REQUIRE(plain.ok());
  CHECK((*plain)->Load()->resources.at("network.core").id == "net-default");
  auto keyed = PostgresStateStore::OpenExisting(url, spec.stack_name + ":workspace:prod");
  CHECK(keyed.ok());
  // Another stack's workspaces are not this one's.
  BackendSpec other = spec;
  other.stack_name = UniqueStackName();
  CHECK(*ListWorkspaces("/tmp", other) == std::vector<std::string>{"default"});

  BackendSpec clash = spec;
  clash.stack_name = "web:workspace:x";
  auto refused = OpenStateStore("/tmp", clash);
  REQUIRE_FALSE(refused.ok());
  CHECK(Contains(refused.status().message(), ":workspace:"));
}

}  // namespace workspaces_test
