// The declared-instances stage alone: resource and module documents read by
// the documents stage, an evaluator that stands in for the loader's (it
// reads "var.n" as a number and "ref" as a value known after apply); the
// instances declared and what is reported where.
#include "engine/manifest/declared_instances.h"

#include <catch2/catch.hpp>

#include "tests/engine/manifest/support/stage_docs.h"

namespace declared_instances_test {

using namespace cairn;
using cairn::testing::CheckAt;
using cairn::testing::StageDocs;

struct Case : StageDocs {
  std::vector<std::string> asked;  // "key of name", in order
  Instances out;
  using StageDocs::StageDocs;

  bool Declared(const std::string& what = "resource") {
    auto evaluate = [this](const ManifestDocument& doc, const char* key) {
      asked.push_back(std::string(key) + " of " + doc.name);
      InstanceField f;
      if (!doc.value[key].is_string()) {  // enabled is evaluated whatever it is
        f.value = doc.value[key];
        return f;
      }
      const std::string text = doc.value[key].get<std::string>();
      if (text == "${var.n}") {
        f.value = 2;
      } else if (text == "${var.on}") {
        f.value = true;
      } else if (text == "${var.keys}") {
        f.value = Value::array({"b", "a"});
      } else if (text == "${ref}") {
        f.value = "${network.main.size}";
        f.references = {"network.main.size", "network.main.size", "network.b.id"};
      } else {
        AddError(diags, "eval_error", "cannot evaluate", {doc.file, 99, 1, 1});
        f.failed = true;
      }
      return f;
    };
    return DeclaredInstances(*docs[0], what, evaluate, out, diags);
  }
};

std::vector<AddressIndex> Indexes(std::initializer_list<AddressIndex> list) { return list; }

TEST_CASE("declared instances: count, for_each and enabled, evaluated or as written") {
  SECTION("none: one instance without an index, nothing evaluated") {
    Case c("kind: network\nname: n\n");
    CHECK(c.Declared());
    CHECK(c.out.mode == Instances::Mode::kSingle);
    CHECK(c.out.indexes == Indexes({std::monostate{}}));
    CHECK(c.asked.empty());
  }
  SECTION("count as written") {
    Case c("kind: network\nname: n\ncount: 3\n");
    CHECK(c.Declared());
    CHECK(c.out.mode == Instances::Mode::kCount);
    CHECK(c.out.indexes == Indexes({0, 1, 2}));
    CHECK(c.asked.empty());
  }
  SECTION("count evaluated") {
    Case c("kind: network\nname: n\ncount: ${var.n}\n");
    CHECK(c.Declared());
    CHECK(c.out.indexes == Indexes({0, 1}));
    CHECK(c.asked == std::vector<std::string>{"count of n"});
  }
  SECTION("for_each evaluated: its keys sorted") {
    Case c("kind: module\nname: app\nsource: ./m\nfor_each: ${var.keys}\n");
    CHECK(c.Declared("module"));
    CHECK(c.out.mode == Instances::Mode::kForEach);
    CHECK(c.out.indexes == Indexes({std::string("a"), std::string("b")}));
    CHECK(c.asked == std::vector<std::string>{"for_each of app"});
  }
  SECTION("enabled") {
    Case c("kind: network\nname: n\nenabled: ${var.on}\n");
    CHECK(c.Declared());
    CHECK(c.out.mode == Instances::Mode::kSingle);
    CHECK(c.out.indexes == Indexes({std::monostate{}}));
    Case off("kind: network\nname: n\nenabled: false\n");
    CHECK(off.Declared());
    CHECK(off.out.indexes.empty());
    CHECK(off.asked == std::vector<std::string>{"enabled of n"});
  }
}

TEST_CASE("declared instances: known only after apply names what it reads") {
  Case c("kind: network\nname: n\ncount: ${ref}\n");
  CHECK_FALSE(c.Declared());
  CHECK(c.out.mode == Instances::Mode::kCount);
  CHECK(c.out.indexes.empty());
  REQUIRE(c.diags.size() == 1);
  CheckAt(c.diags[0], "unknown_count", 3, 8);
  CHECK(c.diags[0].summary ==
        "count must be known when the stack is loaded, but it depends on network.main.size, "
        "network.b.id");
  Case e("kind: network\nname: n\nenabled: ${ref}\n");
  CHECK_FALSE(e.Declared());
  REQUIRE(e.diags.size() == 1);
  CheckAt(e.diags[0], "unknown_enabled", 3, 10);
}

TEST_CASE("declared instances: each mistake where it is, and the mode kept") {
  SECTION("enabled beside count") {
    Case c("kind: network\nname: n\ncount: 2\nenabled: true\n");
    CHECK_FALSE(c.Declared());
    REQUIRE(c.diags.size() == 1);
    CheckAt(c.diags[0], "count_and_for_each", 4, 1);
    CHECK(c.asked.empty());
  }
  SECTION("enabled not a boolean") {
    Case c("kind: network\nname: n\nenabled: ${var.n}\n");
    CHECK_FALSE(c.Declared());
    REQUIRE(c.diags.size() == 1);
    CheckAt(c.diags[0], "invalid_enabled", 3, 10);
    CHECK(c.diags[0].summary == "enabled must be true or false, not an integer");
  }
  SECTION("an evaluation that failed is reported by the evaluator alone") {
    Case c("kind: network\nname: n\nfor_each: ${nope}\n");
    CHECK_FALSE(c.Declared());
    CHECK(c.out.mode == Instances::Mode::kForEach);
    REQUIRE(c.diags.size() == 1);
    CHECK(c.diags[0].code == "eval_error");
  }
  SECTION("count and for_each: neither evaluated") {
    Case c("kind: network\nname: n\ncount: ${var.n}\nfor_each: ${var.keys}\n");
    CHECK_FALSE(c.Declared());
    CHECK(c.asked.empty());
    REQUIRE(c.diags.size() == 1);
    CHECK(c.diags[0].code == "count_and_for_each");
  }
  SECTION("for_each items located one by one") {
    Case c("kind: network\nname: n\nfor_each:\n  - a\n  - a\n");
    CHECK_FALSE(c.Declared());
    REQUIRE(c.diags.size() == 1);
    CheckAt(c.diags[0], "invalid_for_each", 5, 5);
    CHECK(c.diags[0].summary == "for_each lists \"a\" twice");
  }
}

}  // namespace declared_instances_test
