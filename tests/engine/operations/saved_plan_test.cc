// Saved plans and their stack: the manifests' digests, the refusal to save
// over unfinished operations, and where `cairn apply PLAN [DIR]` applies,
// all on files in memory.
#include "engine/operations/saved_plan.h"

#include <catch2/catch.hpp>

#include "base/env.h"

namespace saved_plan_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

const char* kMain =
    "kind: module\nname: m\nsource: lib/net\n---\n"
    "kind: network\nname: core\nspec: {region: eu-central, cidr: 10.1.0.0/16}\n---\n"
    "kind: output\nname: id\nvalue: ${network.core.id}\n";
const char* kModule = "kind: network\nname: n\nspec: {region: eu-central, cidr: 10.2.0.0/16}\n";

LoadOptions Options(const MemEnv& env) {
  LoadOptions o;
  o.env = &env;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  return o;
}

void AddStack(MemEnv& env, const std::string& dir, const std::string& main = kMain) {
  env.AddFile(dir + "/main.yaml", main);
  env.AddFile(dir + "/lib/net/net.yaml", kModule);
}

LoadResult Load(const MemEnv& env, const std::string& dir) {
  LoadOptions o = Options(env);
  o.paths = {dir};
  LoadResult r = LoadStack(o);
  REQUIRE(r.ok());
  return r;
}

// A plan saved from the stack in `dir`.
Plan SavedFrom(const MemEnv& env, const std::string& dir) {
  LoadResult r = Load(env, dir);
  Plan plan;
  plan.stack = dir;
  REQUIRE(PrepareSavedPlan(plan, r.config, false, {}, env).ok());
  return plan;
}

}  // namespace

TEST_CASE("manifest digests name files relative to the stack, module files included") {
  MemEnv env;
  AddStack(env, "ci1");
  AddStack(env, "jobs/ci2");
  auto one = ManifestDigests(Load(env, "ci1").config, env);
  auto two = ManifestDigests(Load(env, "jobs/ci2").config, env);
  REQUIRE(one.ok());
  REQUIRE(two.ok());
  CHECK(*one == *two);
  REQUIRE(one->size() == 2);
  CHECK(one->begin()->first == "lib/net/net.yaml");
  CHECK(one->begin()->second.rfind("sha256:", 0) == 0);
  CHECK(one->begin()->second.size() == 7 + 64);
  // An edit of the module shows.
  env.AddFile("jobs/ci2/lib/net/net.yaml", std::string(kModule) + "# edited\n");
  auto edited = ManifestDigests(Load(env, "jobs/ci2").config, env);
  REQUIRE(edited.ok());
  CHECK(edited->at("lib/net/net.yaml") != one->at("lib/net/net.yaml"));
  CHECK(edited->at("main.yaml") == one->at("main.yaml"));
}

TEST_CASE("a saved plan records its stack, and is not saved over unfinished operations") {
  MemEnv env;
  AddStack(env, "ci1");
  LoadResult r = Load(env, "ci1");
  Plan plan;
  JournalEntry pending;
  pending.seq = 4;
  pending.address = "network.core";
  pending.action = Action::kCreate;
  Status refused = PrepareSavedPlan(plan, r.config, false, {pending}, env);
  CHECK(refused.code() == StatusCode::kFailedPrecondition);
  CHECK(refused.message().find("1 operation(s) of an interrupted apply") != std::string::npos);
  CHECK(refused.message().find("Run 'cairn apply'") != std::string::npos);
  CHECK_FALSE(plan.saved);

  REQUIRE(PrepareSavedPlan(plan, r.config, true, {}, env).ok());
  CHECK(plan.saved);
  CHECK(plan.recursive);
  CHECK(plan.backend.type == "sqlite");
  CHECK(plan.manifests.size() == 2);
  // The JSON form keeps all of it; a saved plan without it is malformed.
  Value j = PlanToJson(plan);
  auto back = PlanFromJson(j);
  REQUIRE(back.ok());
  CHECK(back->manifests == plan.manifests);
  CHECK(back->recursive);
  CHECK(back->backend.type == "sqlite");
  j.erase("manifests");
  CHECK(PlanFromJson(j).status().message().find("needs its backend and manifests") !=
        std::string::npos);
  // A plan of the format before (version 1) is refused, saying what to do.
  j = PlanToJson(plan);
  j["format_version"] = 1;
  CHECK(PlanFromJson(j).status().message().find("make the plan again") != std::string::npos);
}

TEST_CASE("a saved plan applies in the directory given, if it holds the same stack") {
  MemEnv env;
  AddStack(env, "ci1");
  AddStack(env, "ci2");
  Plan plan = SavedFrom(env, "ci1");
  auto found = LoadSavedPlanStack(plan, "ci2", Options(env));
  INFO(found.error);
  REQUIRE(found.ok());
  CHECK(found.dir == "ci2");
  CHECK(found.load.config.resources.size() == 2);

  // Edited since: refused, naming the files.
  env.AddFile("ci2/main.yaml", std::string(kMain) + "# edited\n");
  env.AddFile("ci2/extra.yaml",
              "kind: network\nname: x\nspec: {region: eu-central, cidr: "
              "10.3.0.0/16}\n");
  auto edited = LoadSavedPlanStack(plan, "ci2", Options(env));
  CHECK(edited.error ==
        "ci2 is not the stack the plan was made for: its manifests differ from those planned: "
        "main.yaml changed, extra.yaml added; plan again there ('cairn plan --out')");

  // Another state: refused too.
  AddStack(env, "other",
           std::string(kMain) + "---\nkind: backend\ntype: sqlite\npath: elsewhere.db\n");
  Plan other_backend = SavedFrom(env, "other");
  other_backend.backend.path = "";
  auto wrong = LoadSavedPlanStack(other_backend, "other", Options(env));
  CHECK(wrong.error.find("its state is another one: its backend is sqlite (elsewhere.db), the "
                         "plan's sqlite (.cairn/state.db)") != std::string::npos);

  // A directory that does not load: the load says why.
  auto missing = LoadSavedPlanStack(plan, "nowhere", Options(env));
  CHECK(missing.error == "nowhere does not load");
  CHECK_FALSE(missing.load.ok());
}

TEST_CASE("without DIR a saved plan applies in the current directory, else where it was made") {
  MemEnv env;
  AddStack(env, "ci1");
  Plan plan = SavedFrom(env, "ci1");
  // Run from elsewhere, the directory it was made in still holds the stack.
  auto origin = LoadSavedPlanStack(plan, std::nullopt, Options(env));
  INFO(origin.error);
  REQUIRE(origin.ok());
  CHECK(origin.dir == "ci1");

  // The checkout moved: ci1 is gone and the current directory holds the stack.
  MemEnv moved;
  moved.AddFile("main.yaml", kMain);
  moved.AddFile("lib/net/net.yaml", kModule);
  auto here = LoadSavedPlanStack(plan, std::nullopt, Options(moved));
  INFO(here.error);
  REQUIRE(here.ok());
  CHECK(here.dir == ".");

  // Edited here, and nothing where it was made: refused, saying both.
  moved.AddFile("main.yaml", std::string(kMain) + "# edited\n");
  auto neither = LoadSavedPlanStack(plan, std::nullopt, Options(moved));
  CHECK(neither.error ==
        "no directory holds the stack the plan was made for (the current directory: its "
        "manifests differ from those planned: main.yaml changed; ci1, where it was made, is "
        "gone): give its directory, 'cairn apply PLAN DIR'");
}

}  // namespace saved_plan_test
