// The evaluation stage's cache of parsed strings: bounded, and what it
// keeps gives the same results as parsing again.
#include <catch2/catch.hpp>

#include "engine/expr/ast.h"
#include "engine/manifest/evaluate.h"

namespace parse_cache_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

SourceLocation CacheLocate(size_t offset, size_t length) {
  return {"s.yaml", 1, 1 + static_cast<int>(offset), static_cast<int>(length)};
}

}  // namespace

TEST_CASE("the parse cache keeps at most two generations and the strings in use") {
  ParseCache cache(3);
  auto tree = [](int i) { return expr::MakeLiteral(expr::Value::Int(i)); };
  for (int i = 0; i < 100; ++i) {
    cache.Add("s" + std::to_string(i), tree(i));
    // "hot" is looked up between every two additions, as a count's
    // instances look up their shared strings: it is never dropped.
    if (i == 0) cache.Add("hot", tree(-1));
    REQUIRE(cache.Find("hot") != nullptr);
    CHECK(cache.size() <= 6);
  }
  CHECK(cache.Find("hot")->value.as_number().i == -1);
  CHECK(cache.Find("s99") != nullptr);
  CHECK(cache.Find("s0") == nullptr);  // long gone
  CHECK(cache.Find("never") == nullptr);
}

TEST_CASE("strings evaluated through a full parse cache give what they give without one") {
  ParseCache cache(2);
  EvalInputs with, without;
  with.parsed = &cache;
  const std::vector<std::string> texts = {"${1 + 2}", "${upper(\"a\")}", "x-${3 * 3}",
                                          "${[for i in range(3) : i * 2]}"};
  for (int round = 0; round < 3; ++round) {
    for (const std::string& text : texts) {
      std::vector<Diagnostic> d1, d2;
      Evaluated a = EvaluateString(text, with, CacheLocate, d1);
      Evaluated b = EvaluateString(text, without, CacheLocate, d2);
      INFO(text);
      CHECK(a.value == b.value);
      CHECK(d1.empty());
      CHECK(d2.empty());
    }
  }
  CHECK(cache.size() <= 4);
  CHECK(cache.Find("x-${3 * 3}") != nullptr);
}

}  // namespace parse_cache_test
