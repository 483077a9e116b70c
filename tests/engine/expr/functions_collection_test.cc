// Collection functions. The examples are Terraform's documentation of each
// function (developer.hashicorp.com/terraform/language/functions/NAME; the
// same examples are in OpenTofu's website/docs/language/functions/NAME.mdx),
// then Cairn's own cases: errors, conversions, and what stays known when
// arguments hold unknown values.
#include <catch2/catch.hpp>

#include "tests/engine/expr/expr_harness.h"

namespace cairn::expr {
namespace functions_collection_test {  // one namespace per test file: see tests/CMakeLists.txt
namespace {

using testing::Run;
using testing::Show;
using testing::TableScope;

struct Case {
  const char* in;
  const char* out;
};

void CheckAll(std::initializer_list<Case> cases, TableScope* scope = nullptr) {
  for (const Case& c : cases) {
    INFO(c.in);
    TableScope fresh;
    CHECK(Show(c.in, scope ? *scope : fresh) == c.out);
  }
}

TEST_CASE("functions: collection, Terraform's documented examples", "[expr][functions]") {
  CheckAll({
      {R"~(alltrue(["true", true]))~", "true"},
      {R"~(alltrue([true, false]))~", "false"},
      {R"~(anytrue(["true"]))~", "true"},
      {R"~(anytrue([true]))~", "true"},
      {R"~(anytrue([true, false]))~", "true"},
      {R"~(anytrue([]))~", "false"},
      {R"~(chunklist(["a", "b", "c", "d", "e"], 2))~", R"~([["a", "b"], ["c", "d"], ["e"]])~"},
      {R"~(chunklist(["a", "b", "c", "d", "e"], 1))~", R"~([["a"], ["b"], ["c"], ["d"], ["e"]])~"},
      {R"~(coalesce("a", "b"))~", R"~("a")~"},
      {R"~(coalesce("", "b"))~", R"~("b")~"},
      {R"~(coalesce(1,2))~", "1"},
      {R"~(coalesce(["", "b"]...))~", R"~("b")~"},
      {R"~(coalesce(1, "hello"))~", R"~("1")~"},
      {R"~(coalesce(true, "hello"))~", R"~("true")~"},
      {R"~(coalesce({}, "hello"))~",
       "error: invalid_function_argument: coalesce(): all arguments must have the same type"},
      {R"~(coalescelist(["a", "b"], ["c", "d"]))~", R"~(["a", "b"])~"},
      {R"~(coalescelist([], ["c", "d"]))~", R"~(["c", "d"])~"},
      {R"~(coalescelist([[], ["c", "d"]]...))~", R"~(["c", "d"])~"},
      {R"~(compact(["a", "", "b", null, "c"]))~", R"~(["a", "b", "c"])~"},
      {R"~(concat(["a", ""], ["b", "c"]))~", R"~(["a", "", "b", "c"])~"},
      {R"~(contains(["a", "b", "c"], "a"))~", "true"},
      {R"~(contains(["a", "b", "c"], "d"))~", "false"},
      {R"~(distinct(["a", "b", "a", "c", "d", "b"]))~", R"~(["a", "b", "c", "d"])~"},
      {R"~(element(["a", "b", "c"], 1))~", R"~("b")~"},
      {R"~(["a", "b", "c"][1])~", R"~("b")~"},
      {R"~(element(["a", "b", "c"], 3))~", R"~("a")~"},
      {R"~(element(["a", "b", "c"], -1))~", R"~("c")~"},
      {R"~(flatten([["a", "b"], [], ["c"]]))~", R"~(["a", "b", "c"])~"},
      {R"~(flatten([[["a", "b"], []], ["c"]]))~", R"~(["a", "b", "c"])~"},
      {R"~(index(["a", "b", "c"], "b"))~", "1"},
      {R"~(keys({a=1, c=2, d=3}))~", R"~(["a", "c", "d"])~"},
      {R"~(length([]))~", "0"},
      {R"~(length(["a", "b"]))~", "2"},
      {R"~(length({"a" = "b"}))~", "1"},
      {R"~(length("hello"))~", "5"},
      {R"~(lookup({a="ay", b="bee"}, "a", "what?"))~", R"~("ay")~"},
      {R"~(lookup({a="ay", b="bee"}, "c", "what?"))~", R"~("what?")~"},
      {R"~(merge({a="b", c="d"}, {e="f", c="z"}))~", R"~({a = "b", c = "z", e = "f"})~"},
      {R"~(merge({a="b"}, {a=[1,2], c="z"}, {d=3}))~", R"~({a = [1, 2], c = "z", d = 3})~"},
      {R"~(merge([{a="b", c="d"}, {}, {e="f", c="z"}]...))~", R"~({a = "b", c = "z", e = "f"})~"},
      {R"~(one([]))~", "null"},
      {R"~(one(["hello"]))~", R"~("hello")~"},
      {R"~(one(["hello", "goodbye"]))~",
       "error: invalid_function_argument: one(): must be a list, set, or tuple value with either "
       "zero or one elements, not 2"},
      {R"~(one(toset([])))~", "null"},
      {R"~(one(toset(["hello"])))~", R"~("hello")~"},
      {R"~(one(toset(["hello","goodbye"])))~",
       "error: invalid_function_argument: one(): must be a list, set, or tuple value with either "
       "zero or one elements, not 2"},
      {R"~(range(3))~", "[0, 1, 2]"},
      {R"~(range(1, 4))~", "[1, 2, 3]"},
      {R"~(range(1, 8, 2))~", "[1, 3, 5, 7]"},
      {R"~(range(1, 4, 0.5))~", "[1, 1.5, 2, 2.5, 3, 3.5]"},
      {R"~(range(4, 1))~", "[4, 3, 2]"},
      {R"~(range(10, 5, -2))~", "[10, 8, 6]"},
      {R"~({for name, count in {foo = 2, bar = 4} : name => [for i in range(count) : )~"
       R"~(format("%s%02d", name, i)]})~",
       R"~({bar = ["bar00", "bar01", "bar02", "bar03"], foo = ["foo00", "foo01"]})~"},
      {R"~(reverse([1, 2, 3]))~", "[3, 2, 1]"},
      {R"~(setintersection(["a", "b"], ["b", "c"], ["b", "d"]))~", R"~(toset(["b"]))~"},
      {R"~(setproduct(["development", "staging", "production"], ["app1", "app2"]))~",
       R"~([["development", "app1"], ["development", "app2"], ["staging", "app1"], )~"
       R"~(["staging", "app2"], ["production", "app1"], ["production", "app2"]])~"},
      {R"~(setproduct(["development", "staging", "production"], []))~", "[]"},
      {R"~(setproduct(["a"], ["b"]))~", R"~([["a", "b"]])~"},
      {R"~(setproduct(["staging", "production"], ["a", 2]))~",
       R"~([["staging", "a"], ["staging", "2"], ["production", "a"], ["production", "2"]])~"},
      {R"~(setsubtract(["a", "b", "c"], ["a", "c"]))~", R"~(toset(["b"]))~"},
      {R"~(setunion(setsubtract(["a", "b", "c"], ["a", "c", "d"]), )~"
       R"~(setsubtract(["a", "c", "d"], ["a", "b", "c"])))~",
       R"~(toset(["b", "d"]))~"},
      {R"~(setunion(["a", "b"], ["b", "c"], ["d"]))~", R"~(toset(["a", "b", "c", "d"]))~"},
      {R"~(slice(["a", "b", "c", "d"], 1, 3))~", R"~(["b", "c"])~"},
      {R"~(sort(["e", "d", "a", "x"]))~", R"~(["a", "d", "e", "x"])~"},
      {R"~(transpose({"a" = ["1", "2"], "b" = ["2", "3"]}))~",
       R"~({"1" = ["a"], "2" = ["a", "b"], "3" = ["b"]})~"},
      {R"~(values({a=3, c=2, d=1}))~", "[3, 2, 1]"},
      {R"~(zipmap(["a", "b"], [1, 2]))~", "{a = 1, b = 2}"},
  });
}

TEST_CASE("functions: collection, errors and conversions", "[expr][functions]") {
  CheckAll({
      {R"~(length(toset(["a", "a"])))~", "1"},
      {R"~(length("👾é"))~", "2"},
      {R"~(length(1))~",
       "error: invalid_function_argument: length(): the argument must be a string, list, set or "
       "map, not a number"},
      {R"~(length(null))~",
       "error: invalid_function_argument: argument 1 of length() must not be null"},
      {R"~(alltrue([]))~", "true"},
      {R"~(alltrue([null, true]))~", "false"},
      {R"~(alltrue([1]))~",
       "error: invalid_function_argument: alltrue(): element 0 must be a bool, not a number"},
      {R"~(chunklist(["a"], 0))~", R"~([["a"]])~"},
      {R"~(chunklist([], 3))~", "[]"},
      {R"~(chunklist(["a"], -1))~",
       "error: invalid_function_argument: chunklist(): the size argument must be positive"},
      {R"~(coalesce(null, "", "x"))~", R"~("x")~"},
      {R"~(coalesce(null, ""))~",
       "error: invalid_function_argument: coalesce(): no non-null, non-empty-string arguments"},
      {R"~(coalesce(1, true))~",
       "error: invalid_function_argument: coalesce(): all arguments must have the same type"},
      {R"~(coalescelist([], []))~",
       "error: invalid_function_argument: coalescelist(): no non-null arguments"},
      {R"~(coalescelist("a"))~",
       "error: invalid_function_argument: coalescelist(): coalescelist() arguments must be "
       "lists, not a string"},
      {R"~(compact([1, "", "2"]))~", R"~(["1", "2"])~"},
      {R"~(concat(["a"], toset(["b"])))~", R"~(["a", "b"])~"},
      {R"~(concat(["a"], "b"))~",
       "error: invalid_function_argument: concat(): the second argument must be a list or set, "
       "not the string \"b\""},
      {R"~(contains(toset([1, 2]), 2))~", "true"},
      {R"~(contains([1, 2], "2"))~", "false"},
      {R"~(distinct([[1], [1], [2]]))~", "[[1], [2]]"},
      {R"~(element([], 0))~",
       "error: invalid_function_argument: element(): cannot use element function with an empty "
       "list"},
      {R"~(element(["a", "b"], -3))~", R"~("b")~"},
      {R"~(element(toset(["a"]), 0))~",
       "error: invalid_function_argument: element(): cannot read elements from a set, whose "
       "elements have no order (convert it with tolist())"},
      {R"~(flatten([toset(["b", "a"]), [{a = [1]}]]))~", R"~(["a", "b", {a = [1]}])~"},
      {R"~(index(["a"], "z"))~", "error: invalid_function_argument: index(): item not found"},
      {R"~(index([], "z"))~",
       "error: invalid_function_argument: index(): cannot search an empty list"},
      {R"~(keys([1]))~",
       "error: invalid_function_argument: keys(): the first argument must be a map or object, not "
       "a list"},
      {R"~(lookup({a = 1}, "b"))~",
       "error: invalid_function_argument: lookup(): the map has no key \"b\" (give lookup() a "
       "default)"},
      {R"~(lookup({a = 1}, "a"))~", "1"},
      {R"~(lookup({a = 1}, "b", null))~", "null"},
      {R"~(merge())~", "{}"},
      {R"~(merge({a = 1}, null, {b = 2}))~", "{a = 1, b = 2}"},
      {R"~(merge({a = 1}, [1]))~",
       "error: invalid_function_argument: merge(): the second argument must be a map or object, "
       "not a list"},
      {R"~(range(0))~", "[]"},
      {R"~(range(2, 2))~", "[]"},
      {R"~(range(0, 1, 0.25))~", "[0, 0.25, 0.5, 0.75]"},
      {R"~(range(1, 2, 0))~", "error: invalid_function_argument: range(): step must not be zero"},
      {R"~(range(1, 4, -1))~",
       "error: invalid_function_argument: range(): end must be less than start when step is "
       "negative"},
      {R"~(range(4, 1, 1))~",
       "error: invalid_function_argument: range(): end must be greater than start when step is "
       "positive"},
      {R"~(range(1025))~",
       "error: invalid_function_argument: range(): more than 1024 values were generated; either "
       "decrease the difference between start and end or use a smaller step"},
      {R"~(length(range(1024)))~", "1024"},
      {R"~(reverse(toset([1])))~",
       "error: invalid_function_argument: reverse(): can only reverse lists, not a set, whose "
       "elements have no order"},
      {R"~(setunion(["a"], [1]))~", R"~(toset(["1", "a"]))~"},
      {R"~(setunion(["a"], [[1]]))~",
       "error: invalid_function_argument: setunion(): all elements must be of one type: found "
       "collections beside strings, numbers or bools"},
      {R"~(setintersection(["a", "b"]))~", R"~(toset(["a", "b"]))~"},
      {R"~(setproduct(toset(["b", "a"]), ["x"]))~", R"~(toset([["a", "x"], ["b", "x"]]))~"},
      {R"~(setproduct(["a"]))~",
       "error: wrong_argument_count: setproduct() takes at least 2 arguments, not 1"},
      {R"~(setproduct(range(1000), range(1000)))~",
       "error: invalid_function_argument: setproduct(): the product would have more than 100000 "
       "elements"},
      {R"~(slice(["a", "b"], 0, 0))~", "[]"},
      {R"~(slice(["a", "b"], -1, 1))~",
       "error: invalid_function_argument: slice(): start index must not be less than zero"},
      {R"~(slice(["a", "b"], 0, 3))~",
       "error: invalid_function_argument: slice(): end index must not be greater than the length "
       "of the list"},
      {R"~(slice(["a", "b"], 2, 1))~",
       "error: invalid_function_argument: slice(): start index must not be greater than end index"},
      {R"~(sort(["b", 10, 9, "é", "e"]))~", R"~(["10", "9", "b", "e", "é"])~"},
      {R"~(sort([null]))~",
       "error: invalid_function_argument: sort(): element 0 must be a string, not null"},
      {R"~(transpose({a = "x"}))~",
       "error: invalid_function_argument: transpose(): input must be a map of lists of strings: "
       "\"a\" is a string"},
      {R"~(transpose({}))~", "{}"},
      {R"~(zipmap(["a", "b", "a"], [1, 2, 3]))~", "{a = 3, b = 2}"},
      {R"~(zipmap(["a"], [1, 2]))~",
       "error: invalid_function_argument: zipmap(): number of keys (1) does not match number of "
       "values (2)"},
  });
}

TEST_CASE("functions: collection results known despite unknown elements", "[expr][functions]") {
  TableScope s;
  Value u = Value::Unknown();
  s.vars["u"] = u;
  s.vars["list"] = Value::MakeList({u, u, Value::String("c")});
  s.vars["map"] = Value::MakeMap({{"a", u}, {"b", Value::Int(2)}});
  s.vars["set"] = Value::MakeSet({u, Value::String("x")});
  CheckAll(
      {
          {"length(var.list)", "3"},
          {"length(var.map)", "2"},
          {"keys(var.map)", R"~(["a", "b"])~"},
          {"length(values(var.map))", "2"},
          {"lookup(var.map, \"b\", 0)", "2"},
          {"length(concat(var.list, [\"d\"]))", "4"},
          {"element(var.list, 2)", R"~("c")~"},
          {"length(reverse(var.list))", "3"},
          {"slice(var.list, 2, 3)", R"~(["c"])~"},
          {"length(chunklist(var.list, 2))", "2"},
          {"alltrue([var.u, false])", "false"},
          {"anytrue([var.u, true])", "true"},
          {"coalesce(\"a\", var.u)", R"~("a")~"},
          {"length(coalescelist([], var.list))", "3"},
          {"length(merge(var.map, {c = 1}))", "3"},
          {"keys(zipmap([\"k\"], [var.u]))", R"~(["k"])~"},
      },
      &s);
  for (const char* e : {"length(var.u)",
                        "length(var.set)",
                        "keys(var.u)",
                        "element(var.list, var.u)",
                        "element(var.list, 0)",
                        "lookup(var.map, \"a\")",
                        "lookup(var.map, var.u, 1)",
                        "alltrue([var.u, true])",
                        "anytrue([var.u, false])",
                        "coalesce(\"\", var.u, \"b\")",
                        "coalescelist([], var.u)",
                        "concat(var.u, [1])",
                        "sort(var.list)",
                        "distinct(var.list)",
                        "setunion(var.list, [])",
                        "contains(var.list, \"c\")",
                        "index(var.list, \"c\")",
                        "one(var.set)",
                        "merge(var.u)",
                        "zipmap([var.u], [1])",
                        "flatten([var.u])",
                        "range(var.u)",
                        "transpose({a = var.list})"}) {
    INFO(e);
    auto o = Run(e, s);
    REQUIRE(o.ok());
    CHECK(o.value.is_unknown());
  }
}

TEST_CASE("functions: collection, sensitive arguments and the caret", "[expr][functions]") {
  TableScope s;
  s.vars["pw"] = Value::String("hunter2").MarkedSensitive("var.pw");
  s.vars["secret_list"] =
      Value::MakeList({Value::String("a"), Value::String("b")}).MarkedSensitive("var.secret_list");
  CHECK(Show("length(var.secret_list)", s) == "sensitive(2)");
  CHECK(Show("concat([\"x\"], [var.pw])", s) == "sensitive([\"x\", \"hunter2\"])");
  CHECK(Show("lookup({a = var.pw}, \"a\")", s) == "sensitive(\"hunter2\")");
  CHECK(Show("keys({a = var.pw})", s) == "sensitive([\"a\"])");
  CHECK(Show("sort(var.secret_list)", s) == "sensitive([\"a\", \"b\"])");
  CHECK(Show("coalesce(\"\", var.pw)", s) == "sensitive(\"hunter2\")");
  auto o = Run("slice([1, 2], 0, \"x\")");
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0].code == "invalid_function_argument");
  CHECK(o.errors[0].begin == 17);
  CHECK(o.errors[0].end == 20);
  auto merge = Run("merge({}, 3)");
  REQUIRE(merge.errors.size() == 1);
  CHECK(merge.errors[0].begin == 10);
  CHECK(merge.errors[0].end == 11);
}

}  // namespace
}  // namespace functions_collection_test
}  // namespace cairn::expr
