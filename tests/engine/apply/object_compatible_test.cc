// AssertObjectCompatible alone: a returned object against the plan's
// promise, field by field. (apply_test.cc checks that apply reports it.)
#include "engine/apply/object_compatible.h"

#include <catch2/catch.hpp>

namespace object_compatible_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

PlannedChange Planned(std::vector<AttributeChange> changes) {
  PlannedChange c;
  c.address = "instance.web";
  c.kind = "instance";
  c.action = Action::kCreate;
  c.changes = std::move(changes);
  return c;
}

KindCatalog Kinds() {
  KindCatalog k;
  k["instance"].references = {{"network", "network"}};
  k["network"].id_alias = "net_";
  return k;
}

}  // namespace

TEST_CASE("compatible: every known planned field came back as planned") {
  PlannedChange c = Planned({{"name", nullptr, "web"}, {"size", nullptr, 2}});
  Value returned = {{"name", "web"}, {"size", 2}, {"id", "i-1"}, {"status", "running"}};
  CHECK(AssertObjectCompatible(c, returned, Kinds(), {}).empty());
}

TEST_CASE("compatible: a field unknown at plan may come back as anything") {
  PlannedChange c = Planned({{"name", nullptr, "web"}, {"network", nullptr, UnknownValue()}});
  CHECK(AssertObjectCompatible(c, {{"name", "web"}, {"network", "n-7"}}, Kinds(), {}).empty());
  CHECK(AssertObjectCompatible(c, {{"name", "web"}}, Kinds(), {}).empty());
}

TEST_CASE("incompatible: a known field that differs is an error naming the resource and field") {
  PlannedChange c = Planned({{"name", nullptr, "web"}, {"region", nullptr, "eu"}});
  auto diags = AssertObjectCompatible(c, {{"name", "web"}, {"region", "us"}}, Kinds(), {});
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].severity == Severity::kError);
  CHECK(diags[0].code == "inconsistent_result");
  CHECK(diags[0].summary ==
        "instance.web: the API returned region = \"us\", but the plan promised \"eu\"");
}

TEST_CASE("incompatible: a known field missing from the result, and one error per field") {
  PlannedChange c = Planned({{"name", nullptr, "web"}, {"region", nullptr, "eu"}});
  auto diags = AssertObjectCompatible(c, {{"id", "i-1"}}, Kinds(), {});
  REQUIRE(diags.size() == 2);
  CHECK(diags[0].summary ==
        "instance.web: the API returned name = null, but the plan promised "
        "\"web\"");
  CHECK(diags[1].summary ==
        "instance.web: the API returned region = null, but the plan promised "
        "\"eu\"");
}

TEST_CASE("compatible: nested values compare whole, numbers by value") {
  PlannedChange c = Planned({{"tags", nullptr, {{"env", "prod"}}}, {"size", nullptr, 10}});
  CHECK(AssertObjectCompatible(c, {{"tags", {{"env", "prod"}}}, {"size", 10.0}}, Kinds(), {})
            .empty());
  CHECK(AssertObjectCompatible(c, {{"tags", {{"env", "dev"}}}, {"size", 10}}, Kinds(), {}).size() ==
        1);
}

TEST_CASE("compatible: a reference field matches by canonical id, whichever spelling") {
  const std::string uuid = "0f8e2c4a-1b3d-4e5f-8a9b-0c1d2e3f4a5b";
  const std::string alias = "net_0f8e2c4a1b3d4e5f8a9b0c1d2e3f4a5b";
  PlannedChange c = Planned({{"network", nullptr, alias}});
  CHECK(AssertObjectCompatible(c, {{"network", uuid}}, Kinds(), {}).empty());
  // Without the kinds, ids compare as written.
  CHECK(AssertObjectCompatible(c, {{"network", uuid}}, {}, {}).size() == 1);
}

TEST_CASE("incompatible: sensitive values are masked in the error") {
  PlannedChange c = Planned({{"password", nullptr, "hunter22"}});
  auto diags =
      AssertObjectCompatible(c, {{"password", "hunter23"}}, Kinds(), {"hunter22", "hunter23"});
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].summary.find("hunter2") == std::string::npos);
  CHECK(diags[0].summary.find("password") != std::string::npos);
}

TEST_CASE("compatible: an update promises only the fields it changes") {
  PlannedChange c = Planned({{"size", 1, 2}});
  c.action = Action::kUpdate;
  // name was not changed by the plan (ignored, or already so): not looked at.
  CHECK(AssertObjectCompatible(c, {{"name", "renamed"}, {"size", 2}}, Kinds(), {}).empty());
  CHECK(AssertObjectCompatible(c, {{"size", 1}}, Kinds(), {}).size() == 1);
}

}  // namespace object_compatible_test
