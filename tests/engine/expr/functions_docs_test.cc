// docs/functions.md is checked here: every function the evaluator knows has
// a row there, and every row's example gives the result the row shows.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/expr/functions.h"
#include "tests/engine/expr/expr_harness.h"

namespace cairn::expr {
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
}  // namespace cairn::expr
