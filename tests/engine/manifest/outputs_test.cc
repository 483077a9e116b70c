// The outputs stage alone: output and check documents read by the
// documents stage, a module tree built by hand; what is declared, what is
// refused, and how a sensitive module output marks the outputs built from
// it, up through nested modules.
#include "engine/manifest/outputs.h"

#include <catch2/catch.hpp>

#include "tests/engine/manifest/support/stage_docs.h"

namespace outputs_test {

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

TEST_CASE("outputs: declared with their sensitivity before their values") {
  StageDocs d(
      "kind: output\nname: a\nvalue: 1\nsensitive: true\n---\n"
      "kind: output\nname: b\nvalue: 2\nsensitive: maybe\n---\n"
      "kind: output\nname: a\nvalue: 3\n---\n"
      "kind: output\nname: c\n");
  std::map<std::string, SourceLocation> first;
  auto a = DeclareOutput(*d.docs[0], "a", first, d.diags);
  REQUIRE(a);
  CHECK(a->output.name == "a");
  CHECK(a->output.sensitive);
  CHECK(a->valid_sensitive);
  CHECK(a->output.location.line == 1);
  CHECK(a->output.value.is_null());  // the loader evaluates it
  auto b = DeclareOutput(*d.docs[1], "b", first, d.diags);
  REQUIRE(b);
  CHECK_FALSE(b->output.sensitive);
  CHECK_FALSE(b->valid_sensitive);
  CHECK_FALSE(DeclareOutput(*d.docs[2], "a", first, d.diags));
  // The same name in another scope is another key.
  CHECK(DeclareOutput(*d.docs[2], "module.app.a", first, d.diags));
  CHECK_FALSE(DeclareOutput(*d.docs[3], "c", first, d.diags));
  REQUIRE(d.diags.size() == 3);
  CheckAt(d.diags[0], "wrong_type", 9, 12);
  CheckAt(d.diags[1], "duplicate_output", 12, 7);
  CHECK(d.diags[1].detail == "first declared at m.yaml:2:7");
  CheckAt(d.diags[2], "missing_field", 15, 7);
}

TEST_CASE("outputs: checks declared once each with an assert") {
  StageDocs d(
      "kind: check\nname: up\nassert: []\n---\n"
      "kind: check\nname: up\nassert: []\n---\n"
      "kind: check\nname: down\n");
  std::map<std::string, SourceLocation> first;
  auto up = DeclareCheck(*d.docs[0], "module.app.up", first, d.diags);
  REQUIRE(up);
  CHECK(up->name == "module.app.up");
  CHECK(up->location.line == 2);
  CHECK(up->location.column == 7);
  CHECK(up->asserts.empty());
  CHECK_FALSE(DeclareCheck(*d.docs[1], "module.app.up", first, d.diags));
  CHECK_FALSE(DeclareCheck(*d.docs[2], "down", first, d.diags));
  REQUIRE(d.diags.size() == 2);
  CheckAt(d.diags[0], "duplicate_check", 6, 7);
  CheckAt(d.diags[1], "missing_field", 9, 7);
}

TEST_CASE("outputs: an output built from a sensitive one must say so") {
  StageDocs d("kind: output\nname: pw\nvalue: ${var.pw}\n");
  RefuseUndeclaredSensitive(*d.docs[0], "sensitive variable \"pw\"", d.diags);
  REQUIRE(d.diags.size() == 1);
  CheckAt(d.diags[0], "output_not_sensitive", 3, 8);
  CHECK(d.diags[0].summary ==
        "output \"pw\" is built from sensitive variable \"pw\", so it must be declared sensitive");
}

// The stack calls app, which calls db; db's output secret is sensitive,
// app's output pw is built from it, and the stack's output top from pw.
TEST_CASE("outputs: the sensitive mark goes up through nested modules") {
  StageDocs d(
      "kind: output\nname: secret\nvalue: x\nsensitive: true\n---\n"
      "kind: output\nname: pw\nvalue: x\n---\n"
      "kind: output\nname: top\nvalue: x\n---\n"
      "kind: output\nname: plain\nvalue: x\nsensitive: 7\n");
  ModuleScopes scopes(1);
  scopes.push_back(ChildScope(scopes, 0, "app", {}, "/app", 0));
  scopes.push_back(ChildScope(scopes, 1, "db", {}, "/db", 0));
  scopes[0].calls["app"].instances = {{std::monostate{}, 1}};
  scopes[1].calls["db"].instances = {{std::monostate{}, 2}};
  // top is listed before pw, which it reads: the mark needs two rounds.
  std::vector<OutputConfig> outputs(4);
  outputs[0].sensitive = true;
  outputs[0].value = "hunter2";
  outputs[1].value = Value::array({"${module[\"module.app\"].pw}"});
  outputs[2].value = "${module[\"module.app.module.db\"].secret}";
  outputs[3].value = "${module[\"module.app.module.db\"].secret}";
  scopes[2].outputs["secret"] = 0;
  scopes[1].outputs["pw"] = 2;
  std::vector<const ManifestDocument*> docs = {d.docs[0], d.docs[2], d.docs[1], d.docs[3]};
  MarkOutputsOfSensitiveOutputs(outputs, docs, scopes, d.diags);
  CHECK(outputs[1].sensitive);
  CHECK(outputs[2].sensitive);
  CHECK(outputs[3].sensitive);
  // `sensitive: 7` was reported as it was read: not again.
  REQUIRE(d.diags.size() == 2);
  CheckAt(d.diags[0], "output_not_sensitive", 8, 8);
  CHECK(d.diags[0].summary.find("sensitive output module.app.module.db.secret") !=
        std::string::npos);
  CheckAt(d.diags[1], "output_not_sensitive", 12, 8);
  CHECK(d.diags[1].summary.find("sensitive output module.app.pw") != std::string::npos);
}

TEST_CASE("outputs: a stack without modules has nothing to mark") {
  StageDocs d("kind: output\nname: o\nvalue: x\n");
  std::vector<OutputConfig> outputs(1);
  outputs[0].value = "${module[\"module.app\"].pw}";
  MarkOutputsOfSensitiveOutputs(outputs, {d.docs[0]}, ModuleScopes(1), d.diags);
  CHECK_FALSE(outputs[0].sensitive);
  CHECK(d.diags.empty());
}

}  // namespace outputs_test
