// Conditions as the loader keeps them: preconditions and postconditions
// per instance (count.index and each in them), a check's assertions,
// replace_triggered_by; what is known at load is a bool, the rest a
// residual for plan or apply; mistakes at file:line:col.
#include <catch2/catch.hpp>

#include "engine/manifest/loader.h"

namespace conditions_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

LoadOptions Options() {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  o.getenv = [](const char*) -> const char* { return nullptr; };
  return o;
}

LoadResult Load(const std::string& yaml) {
  return LoadStackFromText({{"main.yaml", yaml}}, Options());
}

std::string Diags(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) {
    out += d.location.file + ":" + std::to_string(d.location.line) + ":" +
           std::to_string(d.location.column) + ": " + d.code + ": " + d.summary + "\n";
  }
  return out;
}

const ResourceConfig& Get(const LoadResult& r, const std::string& addr) {
  const ResourceConfig* rc = r.config.Find(*ResourceAddress::Parse(addr));
  REQUIRE(rc);
  return *rc;
}

}  // namespace

TEST_CASE("conditions: per instance, known at load or kept for plan and apply") {
  auto r = Load(R"(
kind: variable
name: sizes
default: [10, 200]
---
kind: network
name: net
spec: {region: eu-central, cidr: 10.0.0.0/16}
---
kind: volume
name: data
count: 2
spec: {region: eu-central, size_gb: '${var.sizes[count.index]}'}
lifecycle:
  precondition:
    - condition: ${var.sizes[count.index] <= 100}
      error_message: 'volume ${count.index} is over 100 GiB'
    - condition: ${network.net.id != ""}
      error_message: the network exists
  postcondition:
    - condition: ${self.status == "available"}
      error_message: the volume is ready
---
kind: output
name: net
value: ${network.net.id}
precondition:
  - condition: ${length(var.sizes) == 2}
    error_message: two sizes
---
kind: check
name: small
assert:
  - condition: ${sum(var.sizes) < 1000}
    error_message: too much storage
)");
  INFO(Diags(r));
  REQUIRE(r.ok());
  const Lifecycle& v0 = Get(r, "volume.data[0]").lifecycle;
  const Lifecycle& v1 = Get(r, "volume.data[1]").lifecycle;
  REQUIRE(v0.preconditions.size() == 2);
  CHECK(v0.preconditions[0].condition == true);
  CHECK(v1.preconditions[0].condition == false);
  CHECK(v1.preconditions[0].error_message == "volume 1 is over 100 GiB");
  CHECK(v0.preconditions[1].condition == "${network.net.id != \"\"}");
  CHECK(v0.preconditions[1].location.line == 18);
  REQUIRE(v0.postconditions.size() == 1);
  CHECK(v0.postconditions[0].condition == "${self.status == \"available\"}");
  // A condition reading another resource makes it a dependency.
  REQUIRE(Get(r, "volume.data[0]").depends_on.size() == 1);
  REQUIRE(r.config.outputs.size() == 1);
  REQUIRE(r.config.outputs[0].preconditions.size() == 1);
  CHECK(r.config.outputs[0].preconditions[0].condition == true);
  REQUIRE(r.config.checks.size() == 1);
  CHECK(r.config.checks[0].name == "small");
  CHECK(r.config.checks[0].asserts[0].condition == true);
}

TEST_CASE("conditions: replace_triggered_by names resources of the stack, and depends on them") {
  auto r = Load(R"(
kind: network
name: net
spec: {region: eu-central, cidr: 10.0.0.0/16}
---
kind: volume
name: data
spec: {region: eu-central, size_gb: 10}
lifecycle:
  replace_triggered_by: [network.net, network.net.cidr]
)");
  INFO(Diags(r));
  REQUIRE(r.ok());
  const Lifecycle& lc = Get(r, "volume.data").lifecycle;
  REQUIRE(lc.replace_triggered_by.size() == 2);
  CHECK(lc.replace_triggered_by[0].attr.empty());
  CHECK(lc.replace_triggered_by[1].attr == "cidr");
  REQUIRE(Get(r, "volume.data").depends_on.size() == 1);
  CHECK(Get(r, "volume.data").depends_on[0].ToString() == "network.net");
}

TEST_CASE("conditions: every mistake, at once, where it is") {
  auto r = Load(R"(kind: volume
name: data
spec: {region: eu-central, size_gb: 10}
lifecycle:
  precondition:
    - condition: ${1}
      error_message: not a bool
    - {condition: '${true}'}
  postcondition:
    - condition: ${self.id != ""}
      error_message: fine
  replace_triggered_by: [network.nope, volume.data.sizee, "x y"]
---
kind: output
name: o
value: x
precondition:
  - condition: ${self.id == ""}
    error_message: self is only for postconditions
---
kind: check
name: c
)");
  std::string d = Diags(r);
  INFO(d);
  CHECK(d.find("main.yaml:6:18: invalid_condition: a condition must be true or false, not an "
               "integer") != std::string::npos);
  CHECK(d.find("main.yaml:8:7: missing_field: each precondition needs condition and "
               "error_message") != std::string::npos);
  CHECK(d.find("unknown_replace_trigger: replace_triggered_by names undeclared resource "
               "network.nope") != std::string::npos);
  CHECK(d.find("unknown_attribute: volume has no attribute \"sizee\"") != std::string::npos);
  CHECK(d.find("invalid_replace_trigger") != std::string::npos);
  CHECK(d.find("main.yaml:18:18: invalid_reference: self is only available in a resource's "
               "postconditions") != std::string::npos);
  CHECK(d.find("main.yaml:21:7: missing_field: a check needs assert") != std::string::npos);
}

}  // namespace conditions_test
