#include <catch2/catch.hpp>

#include "engine/plan/plan.h"
#include "engine/report/plan_report.h"

namespace plan_reading_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("a plan prepared for reading drops its variables and hides sensitive outputs") {
  Plan plan;
  plan.variables = {{"password", Value("hunter2")}, {"region", Value("eu-central")}};
  plan.sensitive_variables = {"password"};
  plan.outputs.push_back({"dsn", Value("postgres://db"), true, {}});
  plan.outputs.push_back({"region", Value("eu-central"), false, {}});
  PrepareForReading(plan);
  CHECK(plan.variables.empty());
  REQUIRE(plan.outputs.size() == 2);
  CHECK(plan.outputs[0].value == Value("(sensitive)"));
  CHECK(plan.outputs[1].value == Value("eu-central"));
  // What apply needs to mask again stays.
  CHECK(plan.sensitive_variables == std::vector<std::string>{"password"});
}

}  // namespace plan_reading_test
