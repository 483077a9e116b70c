// The expansion stage alone: count and for_each values in, instances and
// diagnostics out.
#include "engine/manifest/expand.h"

#include <catch2/catch.hpp>

namespace expand_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

ExpansionLocations Where() {
  ExpansionLocations at;
  at.count = {"m.yaml", 4, 8, 1};
  at.for_each = {"m.yaml", 5, 11, 1};
  at.for_each_key = {"m.yaml", 5, 1, 8};
  at.for_each_item = [](size_t i) {
    return SourceLocation{"m.yaml", 6 + static_cast<int>(i), 5, 1};
  };
  return at;
}

struct Expanded {
  bool ok;
  Instances instances;
  std::vector<Diagnostic> diags;
};

Expanded Expand(const Value* count, const Value* for_each) {
  Expanded e;
  e.ok = ExpandInstances("resource", count, for_each, Where(), e.instances, e.diags);
  return e;
}

}  // namespace

TEST_CASE("no count and no for_each is one instance without an index") {
  auto e = Expand(nullptr, nullptr);
  REQUIRE(e.ok);
  CHECK(e.instances.mode == Instances::Mode::kSingle);
  REQUIRE(e.instances.indexes.size() == 1);
  CHECK(std::holds_alternative<std::monostate>(e.instances.indexes[0]));
}

TEST_CASE("count takes whole numbers however they are written") {
  for (const Value& v : {Value(3), Value(3.0), Value("3")}) {
    auto e = Expand(&v, nullptr);
    INFO(v.dump());
    REQUIRE(e.ok);
    CHECK(e.instances.mode == Instances::Mode::kCount);
    CHECK(e.instances.indexes == std::vector<AddressIndex>{0, 1, 2});
  }
  Value zero = 0;
  auto none = Expand(&zero, nullptr);
  REQUIRE(none.ok);
  CHECK(none.instances.indexes.empty());
}

TEST_CASE("a count that is not a whole number in range is refused where it is written") {
  for (const Value& v : {Value(-1), Value(2.5), Value(kMaxCount + 1), Value("three"), Value(true),
                         Value::array({1})}) {
    auto e = Expand(&v, nullptr);
    INFO(v.dump());
    CHECK_FALSE(e.ok);
    REQUIRE(e.diags.size() == 1);
    CHECK(e.diags[0].code == "invalid_count");
    CHECK(e.diags[0].location.line == 4);
    // References to it are still checked as to a counted resource.
    CHECK(e.instances.mode == Instances::Mode::kCount);
  }
  Value text = "three";
  CHECK(Expand(&text, nullptr).diags[0].summary ==
        "count must be a whole number from 0 to 100000, not \"three\"");
}

TEST_CASE("for_each takes a list of distinct strings or a mapping, keys in order") {
  Value list = Value::array({"eu", "us", "ap"});
  auto l = Expand(nullptr, &list);
  REQUIRE(l.ok);
  CHECK(l.instances.mode == Instances::Mode::kForEach);
  CHECK(l.instances.indexes == std::vector<AddressIndex>{"ap", "eu", "us"});
  CHECK(l.instances.each_values == std::vector<Value>{"ap", "eu", "us"});

  Value map = {{"web", {{"size", 2}}}, {"db", {{"size", 4}}}};
  auto m = Expand(nullptr, &map);
  REQUIRE(m.ok);
  CHECK(m.instances.indexes == std::vector<AddressIndex>{"db", "web"});
  CHECK(m.instances.each_values[1] == Value{{"size", 2}});
}

TEST_CASE("a bad for_each names the item at fault") {
  Value repeated = Value::array({"eu", "us", "eu"});
  auto r = Expand(nullptr, &repeated);
  CHECK_FALSE(r.ok);
  REQUIRE(r.diags.size() == 1);
  CHECK(r.diags[0].summary == "for_each lists \"eu\" twice");
  CHECK(r.diags[0].location.line == 8);  // the third item

  Value mixed = Value::array({"eu", 2});
  auto x = Expand(nullptr, &mixed);
  CHECK(x.diags[0].summary == "for_each list items must be strings, not an integer");
  CHECK(x.diags[0].location.line == 7);

  Value scalar = "eu";
  auto s = Expand(nullptr, &scalar);
  CHECK(s.diags[0].code == "invalid_for_each");
  CHECK(s.diags[0].location.line == 5);
}

TEST_CASE("count and for_each together are refused at for_each") {
  Value count = 2, each = Value::array({"a"});
  auto e = Expand(&count, &each);
  CHECK_FALSE(e.ok);
  REQUIRE(e.diags.size() == 1);
  CHECK(e.diags[0].code == "count_and_for_each");
  CHECK(e.diags[0].summary == "a resource takes count or for_each, not both");
  CHECK(e.diags[0].location.column == 1);
  CHECK(e.instances.mode == Instances::Mode::kSingle);
}

TEST_CASE("the default API name puts the module path first and the index last") {
  CHECK(DefaultApiName({}, "web", std::monostate{}) == "web");
  CHECK(DefaultApiName({}, "web", 2) == "web-2");
  CHECK(DefaultApiName({{"app", 0}}, "web", std::string("eu")) == "app-0-web-eu");
  CHECK(DefaultApiName({{"prod", {}}, {"db", std::string("x")}}, "disk", std::monostate{}) ==
        "prod-db-x-disk");
}

}  // namespace expand_test
