// The SARIF logs of `--sarif` validated against the SARIF 2.1.0 JSON Schema
// (the OASIS schema as @microsoft/jest-sarif ships it, pinned by
// tools/spectral/package-lock.json and installed by scripts/install-deps.sh
// with CAIRN_NODE_TOOLS=1, as scripts/test.sh does), with valijson.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "engine/policy/policy.h"

namespace sarif_schema_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

constexpr const char* kSchemaPath = CAIRN_SOURCE_DIR
    "/tools/spectral/node_modules/@microsoft/jest-sarif/lib/schemas/"
    "sarif-2.1.0-rtm.5.json";

// Every validation error, one per line ("" when the log is valid).
std::string Violations(const valijson::Schema& schema, const Value& log) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(log);
  validator.validate(schema, adapter, &results);
  std::string out;
  valijson::ValidationResults::Error e;
  while (results.popError(e)) {
    std::string path;
    for (const auto& p : e.context) path += p;
    out += path + ": " + e.description + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("policy SARIF logs are valid SARIF 2.1.0") {
  std::ifstream in(kSchemaPath);
  INFO(
      "the SARIF schema comes with the Node.js tools: CAIRN_NODE_TOOLS=1 "
      "scripts/install-deps.sh");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  Value schema_doc = Value::parse(text.str());
  valijson::Schema schema;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft4);
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_doc);
  parser.populateSchema(schema_adapter, schema);

  PolicySet set = LoadPoliciesFromText(
      {{"policies/p.yaml",
        "kind: policy\nname: small\nresource_kind: volume\nenforcement: advisory\n"
        "condition: ${change.after.size_gb < 100}\nerror_message: too big\n---\n"
        "kind: policy\nname: no-destroy\ncondition: ${plan.summary.destroy == 0}\n"
        "error_message: nothing may be destroyed\n"}});
  REQUIRE(set.ok());
  Plan plan;
  PlannedChange big;
  big.address = "volume.big";
  big.parsed_address = *ResourceAddress::Parse(big.address);
  big.kind = "volume";
  big.action = Action::kCreate;
  big.after = {{"size_gb", 500}};
  plan.changes.push_back(big);
  PlannedChange gone = big;
  gone.address = "volume.gone";
  gone.parsed_address = *ResourceAddress::Parse(gone.address);
  gone.action = Action::kDelete;
  gone.after = nullptr;
  plan.changes.push_back(gone);
  StackConfig config;
  ResourceConfig rc;
  rc.address = big.parsed_address;
  rc.kind = "volume";
  rc.location = {"stack/main.yaml", 3, 1, 1};
  config.resources.push_back(rc);

  const auto results = EvaluatePolicies(set.policies, plan, &config);
  Value log = PolicyResultsToSarif(results, set.policies, "0.1.0");
  // The volume's (a delete is not judged by a per-change policy), and the
  // plan-wide one.
  REQUIRE(log["runs"][0]["results"].size() == 2);
  CHECK(Violations(schema, log) == "");
  // No violation at all is a valid log too.
  CHECK(Violations(schema, PolicyResultsToSarif({}, set.policies, "0.1.0")) == "");

  // The validator does reject what SARIF does not allow.
  Value bad = log;
  bad["version"] = "2.0";
  CHECK(Violations(schema, bad) != "");
  bad = log;
  bad["runs"][0]["results"][0]["level"] = "fatal";
  CHECK(Violations(schema, bad) != "");
}

}  // namespace sarif_schema_test
