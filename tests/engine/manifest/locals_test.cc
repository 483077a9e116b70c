// The locals stage alone: local documents read by the documents stage, an
// evaluator that reads `${local.NAME}` through the stage itself (as the
// loader's does) and takes anything else as written; what is evaluated,
// how often, and what is reported where.
#include "engine/manifest/locals.h"

#include <catch2/catch.hpp>

#include "tests/engine/manifest/support/stage_docs.h"

namespace locals_test {

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

// The documents of `yaml`, all in scope 0 (or all in module app[0] when
// `in_module`), and a Locals over them.
struct Case : StageDocs {
  ModuleScopes scopes = ModuleScopes(1);
  std::vector<std::string> calls;                          // the names evaluated, in order
  std::vector<std::pair<std::string, std::string>> marks;  // given to every evaluation
  Locals locals;

  explicit Case(const std::string& yaml, bool in_module = false)
      : StageDocs(yaml), locals(parsed.docs, scopes, diags, [this](const ManifestDocument& doc) {
          return Evaluate(doc);
        }) {
    if (in_module) scopes.push_back(ChildScope(scopes, 0, "app", 0, "/app", 0));
    for (size_t i = 0; i < parsed.docs.size(); ++i) {
      parsed.docs[i].scope = scopes.size() - 1;
      scopes.back().local_docs.push_back(i);
    }
  }

  LocalEvaluation Evaluate(const ManifestDocument& doc) {
    calls.push_back(doc.name);
    LocalEvaluation e;
    const Value& v = doc.value["value"];
    e.ok = true;
    e.value = v;
    e.sensitive = marks;
    if (v.is_string() && v.get<std::string>().rfind("${local.", 0) == 0) {
      std::string name = v.get<std::string>().substr(8);
      name.pop_back();
      auto read = locals.Get(doc.scope, name, {doc.file, 42, 1, 1});
      e.ok = read.has_value();
      if (read) e.value = read->residual ? Value("${x}") : read->value.ToJson();
    }
    return e;
  }
};

TEST_CASE("locals: each evaluated once, when first read") {
  Case c(
      "kind: local\nname: a\nvalue: ${local.c}\n---\n"
      "kind: local\nname: b\nvalue: ${local.c}\n---\n"
      "kind: local\nname: c\nvalue: 3\n");
  CHECK(c.calls.empty());
  auto a = c.locals.Get(0, "a", {});
  REQUIRE(a);
  CHECK(a->value.ToJson() == 3);
  CHECK_FALSE(a->residual);
  auto b = c.locals.Get(0, "b", {});
  REQUIRE(b);
  CHECK(b->value.ToJson() == 3);
  CHECK(c.calls == std::vector<std::string>{"a", "c", "b"});
  c.locals.Get(0, "a", {});
  CHECK(c.calls.size() == 3);
  CHECK(c.diags.empty());
  CHECK(c.locals.Find(0, "c")->state == DeclaredLocal::kDone);
  CHECK(c.locals.Find(0, "c")->doc == 2);
}

TEST_CASE("locals: every local evaluated in the end whether read or not") {
  Case c(
      "kind: local\nname: a\nvalue: 1\n---\n"
      "kind: local\nname: b\nvalue: ${local.a}\n---\n"
      "kind: local\nname: c\nvalue: ${local.nope}\n");
  CHECK(c.locals.Find(0, "a") == nullptr);  // nothing declared before it is asked for
  c.locals.EvaluateAll(0);
  CHECK(c.calls == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(c.diags.size() == 1);
  CHECK(c.diags[0].code == "unknown_local");
  CHECK(c.diags[0].location.line == 42);
  CHECK(c.locals.Of(0).at("b").state == DeclaredLocal::kDone);
  CHECK(c.locals.Of(0).at("c").state == DeclaredLocal::kFailed);
  c.locals.EvaluateAll(0);
  CHECK(c.calls.size() == 3);
}

TEST_CASE("locals: a cycle is named in full once where it closes") {
  Case c(
      "kind: local\nname: a\nvalue: ${local.b}\n---\n"
      "kind: local\nname: b\nvalue: ${local.c}\n---\n"
      "kind: local\nname: c\nvalue: ${local.a}\n");
  CHECK_FALSE(c.locals.Get(0, "a", {}));
  REQUIRE(c.diags.size() == 1);
  CheckAt(c.diags[0], "dependency_cycle", 3, 8);
  CHECK(c.diags[0].summary == "dependency cycle: local.a -> local.b -> local.c -> local.a");
  // What failed stays failed, without another report.
  CHECK_FALSE(c.locals.Get(0, "b", {}));
  CHECK(c.diags.size() == 1);
  CHECK(c.calls.size() == 3);
}

TEST_CASE("locals: in a module the names carry its path") {
  Case c("kind: local\nname: a\nvalue: ${local.a}\n---\nkind: local\nname: b\nvalue: 1\n", true);
  CHECK_FALSE(c.locals.Get(1, "a", {}));
  CHECK_FALSE(c.locals.Get(1, "bb", {"m.yaml", 9, 3, 2}));
  REQUIRE(c.diags.size() == 2);
  CHECK(c.diags[0].summary == "dependency cycle: module.app[0].local.a -> module.app[0].local.a");
  CHECK(c.diags[1].code == "unknown_local");
  CHECK(c.diags[1].summary == "reference to undeclared local \"bb\" in module app[0]");
  CHECK(c.diags[1].detail.find("\"b\"") != std::string::npos);
  CHECK(c.diags[1].location.line == 9);
}

TEST_CASE("locals: declared twice and without a value") {
  Case c(
      "kind: local\nname: a\nvalue: 1\n---\n"
      "kind: local\nname: a\nvalue: 2\n---\n"
      "kind: local\nname: b\n");
  auto a = c.locals.Get(0, "a", {});
  REQUIRE(a);
  CHECK(a->value.ToJson() == 1);  // the first one
  CHECK_FALSE(c.locals.Get(0, "b", {}));
  REQUIRE(c.diags.size() == 2);
  CheckAt(c.diags[0], "duplicate_local", 6, 7);
  CHECK(c.diags[0].detail == "first declared at m.yaml:2:7");
  CheckAt(c.diags[1], "missing_field", 9, 7);
  CHECK(c.calls == std::vector<std::string>{"a"});
}

TEST_CASE("locals: the marks of what was evaluated make the value sensitive") {
  Case c("kind: local\nname: pw\nvalue: hunter2\n");
  c.marks = {{"", "var.secret"}};
  auto pw = c.locals.Get(0, "pw", {});
  REQUIRE(pw);
  std::vector<std::string> from;
  CHECK(pw->value.DeepSensitive(&from));
  CHECK(from == std::vector<std::string>{"var.secret"});
  CHECK(c.locals.Find(0, "pw")->sensitive == c.marks);
}

TEST_CASE("locals: a value known after apply keeps its residual") {
  Case c("kind: local\nname: id\nvalue: ${network.main.id}\n");
  auto id = c.locals.Get(0, "id", {});
  REQUIRE(id);
  CHECK_FALSE(id->value.WhollyKnown());
  REQUIRE(id->residual);
}

}  // namespace locals_test
