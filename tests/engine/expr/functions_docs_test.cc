// docs/functions.md is checked here: every function the evaluator knows has
// a row there, and every row's example gives the result the row shows.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/expr/functions.h"
#include "tests/engine/expr/expr_harness.h"

namespace cairn::expr {
namespace functions_docs_test {  // one namespace per test file: see tests/CMakeLists.txt
namespace {

struct Row {
  std::string name, example, result;
};

// The table rows of the page: "| `name` | arguments | what | `example` | `result` |".
std::vector<Row> Rows() {
  std::ifstream in(std::string(CAIRN_SOURCE_DIR) + "/docs/functions.md");
  REQUIRE(in);
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) {
      size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    REQUIRE(cells.size() >= 5);
    auto code = [](const std::string& c) {
      REQUIRE(c.size() >= 2);
      REQUIRE(c.front() == '`');
      REQUIRE(c.back() == '`');
      return c.substr(1, c.size() - 2);
    };
    rows.push_back({code(cells[0]), code(cells[3]), code(cells[4])});
  }
  return rows;
}

TEST_CASE("functions: docs/functions.md lists every function", "[expr][functions]") {
  std::set<std::string> documented;
  for (const Row& r : Rows()) documented.insert(r.name);
  for (const auto& [name, spec] : Functions()) {
    INFO(name);
    CHECK(documented.count(name) == 1);
  }
  for (const std::string& name : documented) {
    INFO(name);
    CHECK(FindFunction(name) != nullptr);
  }
}

TEST_CASE("functions: every example in docs/functions.md gives its result", "[expr][functions]") {
  testing::TableScope scope;
  scope.files["motd.txt"] = Value::String("Welcome\n");
  scope.files["hello.tpl"] = Value::String("Hello, ${name}!");
  size_t checked = 0;
  for (const Row& r : Rows()) {
    INFO(r.example);
    CHECK(testing::Show(r.example, scope) == r.result);
    ++checked;
  }
  CHECK(checked >= Functions().size());
}

}  // namespace

namespace {

// Every documented example, each argument in turn made sensitive, then
// unknown: the marks must come through every function (a generated test
// over the whole table, as issue 26 asks).
TEST_CASE("functions: no function drops a sensitive or unknown argument", "[expr][functions]") {
  testing::TableScope scope;
  scope.files["motd.txt"] = Value::String("Welcome\n");
  scope.files["hello.tpl"] = Value::String("Hello, ${name}!");
  scope.vars["u"] = Value::Unknown();
  size_t checked = 0;
  for (const Row& r : Rows()) {
    auto parsed = ParseExpression(r.example);
    REQUIRE(std::holds_alternative<NodePtr>(parsed));
    const NodePtr& call = std::get<NodePtr>(parsed);
    if (call->kind != NodeKind::kCall) continue;
    const FunctionSpec* spec = FindFunction(call->name);
    REQUIRE(spec);
    for (size_t i = 0; i < call->kids.size(); ++i) {
      INFO(r.example << " with argument " << i + 1 << " changed");
      // Sensitive: the result carries the mark, except where the function
      // says what the mark is (nonsensitive), reports only success (can),
      // or returns another argument because this one failed (try).
      auto marked = std::make_shared<Node>(*call);
      auto wrap = std::make_shared<Node>();
      wrap->kind = NodeKind::kCall;
      wrap->name = "sensitive";
      wrap->kids = {call->kids[i]};
      marked->kids[i] = wrap;
      std::vector<EvalError> errors;
      Evaluator ev(scope, errors);
      Value v = ev.Eval(*marked);
      if (errors.empty() && call->name != "nonsensitive" && call->name != "can" &&
          call->name != "try") {
        CHECK(v.DeepSensitive());
        ++checked;
      }
      // Unknown: the result is not known, unless the function knows it
      // anyway (it says it takes unknown arguments); never an error.
      auto unknown = std::make_shared<Node>(*call);
      unknown->kids[i] = MakeGetAttr(MakeVariable("var"), "u");
      std::vector<EvalError> errors2;
      Evaluator ev2(scope, errors2);
      Value u = ev2.Eval(*unknown);
      CHECK(errors2.empty());
      if (!spec->unknown_args) CHECK_FALSE(u.WhollyKnown());
    }
  }
  CHECK(checked > 80);
}

}  // namespace
}  // namespace functions_docs_test
}  // namespace cairn::expr
