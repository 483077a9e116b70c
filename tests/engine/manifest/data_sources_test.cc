// The data sources stage alone: data documents (read by the documents
// stage) and an evaluator in, data sources and diagnostics out.
#include "engine/manifest/data_sources.h"

#include <catch2/catch.hpp>

#include "tests/engine/manifest/support/stage_docs.h"

namespace data_sources_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

namespace {

// The data sources of the data documents of `yaml` (file m.yaml).
struct Run : StageDocs {
  DataSources out;
  explicit Run(const std::string& yaml) : StageDocs(yaml) {
    out = LoadDataSources(docs, *registry, AsWritten(), diags);
  }
};

}  // namespace

TEST_CASE("data_sources: a data document reads by id or by filter") {
  Run r(
      "kind: data\nname: shared\ntype: network\nid: net-123\n---\n"
      "kind: data\nname: disk\ntype: volume\nfilter: {name: data, region: eu-central}\n");
  CHECK(r.diags.empty());
  REQUIRE(r.out.data.size() == 2);
  const DataConfig& a = r.out.data[0];
  CHECK(a.kind == "network");
  CHECK(a.name == "shared");
  CHECK(a.id == "net-123");
  CHECK(a.filter.empty());
  CHECK(a.location.line == 1);
  CHECK(a.location.column == 7);
  CHECK(a.name_location.line == 2);
  CHECK(a.name_location.column == 7);
  CHECK(r.out.data[1].filter ==
        std::map<std::string, std::string>{{"name", "data"}, {"region", "eu-central"}});
  CHECK(r.out.addresses == std::set<std::string>{"data.network.shared", "data.volume.disk"});
}

TEST_CASE("data_sources: type is a known kind, and a source is declared once") {
  Run r(
      "kind: data\nname: a\nid: x\n---\n"
      "kind: data\nname: b\ntype: netwrk\nid: x\n---\n"
      "kind: data\nname: c\ntype: network\nid: x\n---\n"
      "kind: data\nname: c\ntype: network\nid: y\n");
  REQUIRE(r.diags.size() == 3);
  CheckAt(r.diags[0], "missing_field", 1, 7);
  CHECK(r.diags[0].summary == "a data document needs type: the kind of resource it reads");
  CheckAt(r.diags[1], "unknown_kind", 7, 7);
  CHECK(r.diags[1].detail == "did you mean \"network\"?");
  CheckAt(r.diags[2], "duplicate_data", 16, 7);
  CHECK(r.diags[2].detail == "first declared at m.yaml:11:7");
  REQUIRE(r.out.data.size() == 1);
  CHECK(r.out.data[0].id == "x");
  CHECK(r.out.addresses == std::set<std::string>{"data.network.c"});
}

TEST_CASE("data_sources: id and filter, one of them, well formed") {
  Run r(
      "kind: data\nname: both\ntype: network\nid: x\nfilter: {name: n}\n---\n"
      "kind: data\nname: neither\ntype: network\n---\n"
      "kind: data\nname: empty\ntype: network\nid: \"\"\n---\n"
      "kind: data\nname: keys\ntype: network\nfilter: {colour: red}\n---\n"
      "kind: data\nname: list\ntype: network\nfilter: [a]\n---\n"
      "kind: data\nname: expr\ntype: network\nid: ${var.id}\n");
  CHECK(r.out.data.empty());
  // Declared, though not valid: references to them are not "undeclared".
  CHECK(r.out.addresses.size() == 6);
  REQUIRE(r.diags.size() == 7);
  CheckAt(r.diags[0], "invalid_value", 1, 7);
  CHECK(r.diags[0].summary == "a data document reads by id or by filter, not both");
  CheckAt(r.diags[1], "missing_field", 7, 7);
  CHECK(r.diags[1].summary == "a data document reads by id or by filter, and has neither");
  CheckAt(r.diags[2], "wrong_type", 14, 5);
  CheckAt(r.diags[3], "invalid_value", 19, 9);
  CHECK(r.diags[3].summary ==
        "filter \"colour\": a data filter matches name and region, as strings");
  CheckAt(r.diags[4], "wrong_type", 24, 9);
  CHECK(r.diags[4].summary == "filter must be a mapping of name and/or region");
  // What the evaluator reported, then the value it gave.
  CHECK(r.diags[5].code == "eval_error");
  CheckAt(r.diags[6], "wrong_type", 29, 5);
}

}  // namespace data_sources_test
