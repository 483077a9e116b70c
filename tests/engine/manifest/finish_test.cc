// The finishing stage alone: the diagnostics of every stage in, sorted,
// valid UTF-8 and without repetitions out.
#include "engine/manifest/finish.h"

#include <catch2/catch.hpp>

namespace finish_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

Diagnostic D(const std::string& file, int line, int column, const std::string& code,
             const std::string& summary = "s", const std::string& detail = "") {
  Diagnostic d;
  d.code = code;
  d.summary = summary;
  d.detail = detail;
  d.location = {file, line, column, 1};
  return d;
}

std::vector<std::string> Summaries(const std::vector<Diagnostic>& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags) out.push_back(d.summary);
  return out;
}

}  // namespace

TEST_CASE("finish: diagnostics are sorted by file, line, column and code, stably") {
  auto out = FinishDiagnostics({D("b.yaml", 1, 1, "x", "b1"), D("a.yaml", 9, 1, "x", "a9"),
                                D("a.yaml", 2, 5, "y", "a2y"), D("a.yaml", 2, 5, "x", "a2x-first"),
                                D("a.yaml", 2, 5, "x", "a2x-second"), D("", 0, 0, "z", "none")},
                               {});
  CHECK(Summaries(out) ==
        std::vector<std::string>{"none", "a2x-first", "a2x-second", "a2y", "a9", "b1"});
}

TEST_CASE("finish: a repeated diagnostic is reported once") {
  auto out =
      FinishDiagnostics({D("a.yaml", 3, 1, "x", "same", "d"), D("a.yaml", 3, 1, "x", "same", "d"),
                         D("a.yaml", 3, 1, "x", "same", "other detail"),
                         D("a.yaml", 3, 1, "y", "same", "d"), D("a.yaml", 3, 2, "x", "same", "d")},
                        {});
  REQUIRE(out.size() == 4);
  CHECK(out[0].detail == "d");
  CHECK(out[1].detail == "other detail");
  CHECK(out[2].location.column == 1);
  CHECK(out[2].code == "y");
  CHECK(out[3].location.column == 2);
}

TEST_CASE("finish: in a module's files, messages differing only in the instance are one") {
  std::vector<Diagnostic> in = {D("mod/main.yaml", 4, 7, "x", "in module.app[0]"),
                                D("mod/main.yaml", 4, 7, "x", "in module.app[1]"),
                                D("main.yaml", 4, 7, "x", "in module.app[0]"),
                                D("main.yaml", 4, 7, "x", "in module.app[1]")};
  auto out = FinishDiagnostics(in, {"mod/main.yaml"});
  CHECK(Summaries(out) ==
        std::vector<std::string>{"in module.app[0]", "in module.app[1]", "in module.app[0]"});
  CHECK(out[0].location.file == "main.yaml");
  CHECK(out[2].location.file == "mod/main.yaml");
}

TEST_CASE("finish: summaries and details become valid UTF-8") {
  auto out = FinishDiagnostics({D("a.yaml", 1, 1, "x", "bad \xff byte", "and \xc3 here")}, {});
  REQUIRE(out.size() == 1);
  CHECK(out[0].summary == "bad \xEF\xBF\xBD byte");
  CHECK(out[0].detail == "and \xEF\xBF\xBD here");
}

}  // namespace finish_test
