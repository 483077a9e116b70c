// The condition-lists stage alone: documents read by the documents stage,
// an evaluator standing in for the loader's (a condition "${later}" is
// known only at plan, "${bad}" fails, a message "${secret}" reads a
// sensitive value); the conditions kept and what is reported where.
#include "engine/manifest/condition_lists.h"

#include <catch2/catch.hpp>

#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"
#include "tests/engine/manifest/support/stage_docs.h"

namespace condition_lists_test {

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

struct Case : StageDocs {
  int evaluated = 0;
  using StageDocs::StageDocs;

  std::vector<ConditionConfig> Load(const std::string& key) {
    const ManifestDocument& doc = *docs[0];
    auto evaluate = [this](const Value& item, const YamlNode& node) {
      ++evaluated;
      EvaluatedCondition e;
      e.condition = item["condition"];
      e.error_message = item["error_message"];
      if (e.condition == "${bad}") {
        AddError(diags, "eval_error", "cannot evaluate", NodeLoc("m.yaml", node));
        e.failed = true;
      }
      if (e.condition == "${later}") e.condition = "${network.main.ok}";
      e.message_sensitive = e.error_message == "${secret}";
      return e;
    };
    return LoadConditionList(doc, doc.value[key], ChildNode(doc.node, key), key, evaluate, diags);
  }
};

TEST_CASE("condition lists: known at load or kept for plan and apply") {
  Case c(
      "kind: check\nname: c\nassert:\n"
      "  - condition: true\n    error_message: fine\n"
      "  - condition: ${later}\n    error_message: later\n"
      "  - condition: false\n    error_message: ${secret}\n");
  auto list = c.Load("assert");
  CHECK(c.diags.empty());
  REQUIRE(list.size() == 3);
  CHECK(list[0].condition == true);
  CHECK(list[0].error_message == "fine");
  CHECK(list[0].location.line == 4);
  CHECK(list[0].location.column == 16);
  CHECK(list[1].condition == "${network.main.ok}");
  CHECK(list[1].location.line == 6);
  CHECK(list[2].condition == false);
  CHECK(list[2].error_message == "(the error message holds a sensitive value)");
}

TEST_CASE("condition lists: each mistake where it is and the rest kept") {
  Case c(
      "kind: check\nname: c\nassert:\n"
      "  - condition: true\n"
      "  - 3\n"
      "  - condition: yes please\n    error_message: m\n"
      "  - condition: ${bad}\n    error_message: m\n"
      "  - condition: true\n    error_message: m\n    eror_message: n\n");
  auto list = c.Load("assert");
  REQUIRE(c.diags.size() == 5);
  CheckAt(c.diags[0], "missing_field", 4, 5);
  CHECK(c.diags[0].summary == "each assert needs condition and error_message");
  CheckAt(c.diags[1], "missing_field", 5, 5);
  CheckAt(c.diags[2], "invalid_condition", 6, 16);
  CHECK(c.diags[2].summary == "a condition must be true or false, not a string");
  CHECK(c.diags[3].code == "eval_error");
  CheckAt(c.diags[4], "unknown_field", 12, 5);
  CHECK(c.diags[4].detail.find("error_message") != std::string::npos);
  // Only what is whole is evaluated; an unknown field leaves it valid.
  CHECK(c.evaluated == 3);
  REQUIRE(list.size() == 1);
  CHECK(list[0].location.line == 10);
}

TEST_CASE("condition lists: not a list") {
  Case c("kind: output\nname: o\nvalue: 1\nprecondition: {condition: true}\n");
  CHECK(c.Load("precondition").empty());
  REQUIRE(c.diags.size() == 1);
  CheckAt(c.diags[0], "wrong_type", 4, 15);
  CHECK(c.diags[0].summary ==
        "precondition must be a list of {condition, error_message}, not a mapping");
  CHECK(c.evaluated == 0);
}

}  // namespace condition_lists_test
