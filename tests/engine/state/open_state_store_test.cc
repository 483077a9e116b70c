#include "engine/state/open_state_store.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "base/redact.h"
#include "tests/engine/state/state_test_support.h"

namespace open_state_store_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;

TEST_CASE("OpenStateStore: sqlite at .cairn/state.db by default, or a path in the stack",
          "[state]") {
  TempDir dir;
  auto def = OpenStateStore(dir.path(), BackendSpec{});
  INFO(def.status().ToString());
  REQUIRE(def.ok());
  CHECK((*def)->Load().ok());
  CHECK(std::filesystem::exists(dir.path() + "/.cairn/state.db"));

  BackendSpec custom;
  custom.type = "sqlite";
  custom.path = "states/prod.db";
  auto other = OpenStateStore(dir.path(), custom);
  REQUIRE(other.ok());
  CHECK(std::filesystem::exists(dir.path() + "/states/prod.db"));
  CHECK((*other)->Load()->lineage != (*def)->Load()->lineage);
}

TEST_CASE("OpenExistingStateStore: NotFound without a state, creating nothing", "[state]") {
  TempDir dir;
  BackendSpec custom;
  custom.path = "states/prod.db";
  for (const BackendSpec& spec : {BackendSpec{}, custom}) {
    auto none = OpenExistingStateStore(dir.path(), spec);
    REQUIRE_FALSE(none.ok());
    CHECK(none.status().code() == StatusCode::kNotFound);
  }
  CHECK(std::filesystem::is_empty(dir.path()));

  auto made = OpenStateStore(dir.path(), custom);
  REQUIRE(made.ok());
  auto found = OpenExistingStateStore(dir.path(), custom);
  INFO(found.status().ToString());
  REQUIRE(found.ok());
  CHECK((*found)->Load()->lineage == (*made)->Load()->lineage);
  CHECK_FALSE(OpenExistingStateStore(dir.path(), BackendSpec{}).ok());
}

TEST_CASE("OpenStateStore: postgres with its variable unset names the variable", "[state]") {
  unsetenv("CAIRN_TEST_UNSET_PG_URL");
  BackendSpec spec;
  spec.type = "postgres";
  spec.url_env = "CAIRN_TEST_UNSET_PG_URL";
  auto r = OpenStateStore("/tmp", spec);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(r.status().message(), "CAIRN_TEST_UNSET_PG_URL is not set"));

  spec.url_env = "";
  r = OpenStateStore("/tmp", spec);
  REQUIRE_FALSE(r.ok());
  CHECK(Contains(r.status().message(), "url_env"));
}

TEST_CASE("OpenStateStore: an unknown backend type is refused", "[state]") {
  BackendSpec spec;
  spec.type = "s3";
  auto r = OpenStateStore("/tmp", spec);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(r.status().message(), "'s3'"));
}

TEST_CASE("OpenStateStore: postgres from the variable, URL and password redacted",
          "[.][postgres]") {
  const std::string url = TestPostgresUrl();
  BackendSpec spec;
  spec.type = "postgres";
  spec.url_env = "CAIRN_TEST_PG_URL";
  spec.stack_name = UniqueStackName();
  auto store = OpenStateStore("/tmp", spec);
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  CHECK((*store)->Load()->serial == 0);
  CHECK(Redact("url is " + url) == "url is [REDACTED]");

  // Without a name, two stacks in directories of the same name would share
  // their rows: refused.
  spec.stack_name.clear();
  auto unnamed = OpenStateStore("/tmp/t1/web", spec);
  REQUIRE_FALSE(unnamed.ok());
  CHECK(Contains(unnamed.status().message(), "needs a name"));
}

TEST_CASE("OpenExistingStateStore: postgres, only a stack that has a state", "[.][postgres]") {
  (void)TestPostgresUrl();
  BackendSpec spec;
  spec.type = "postgres";
  spec.url_env = "CAIRN_TEST_PG_URL";
  spec.stack_name = UniqueStackName();
  for (int i = 0; i < 2; ++i) {  // the first look made nothing the second could find
    auto none = OpenExistingStateStore("/tmp", spec);
    REQUIRE_FALSE(none.ok());
    CHECK(none.status().code() == StatusCode::kNotFound);
    CHECK(Contains(none.status().message(), spec.stack_name));
  }
  auto made = OpenStateStore("/tmp", spec);
  REQUIRE(made.ok());
  auto found = OpenExistingStateStore("/tmp", spec);
  INFO(found.status().ToString());
  REQUIRE(found.ok());
  CHECK((*found)->Load()->lineage == (*made)->Load()->lineage);
}

TEST_CASE("OpenStateStore: an unreachable postgres is Unavailable and hides the password",
          "[state]") {
  // Port 1 on loopback: nothing listens there.
  const std::string url = "postgresql://cairn:hunter2-secret@127.0.0.1:1/none?connect_timeout=5";
  setenv("CAIRN_TEST_BAD_PG_URL", url.c_str(), 1);
  BackendSpec spec;
  spec.type = "postgres";
  spec.url_env = "CAIRN_TEST_BAD_PG_URL";
  spec.stack_name = "unreachable";
  auto store = OpenStateStore("/tmp", spec);
  unsetenv("CAIRN_TEST_BAD_PG_URL");
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kUnavailable);
  CHECK_FALSE(Contains(store.status().message(), "hunter2-secret"));
  CHECK(Redact("pw hunter2-secret") == "pw [REDACTED]");
}

}  // namespace open_state_store_test
