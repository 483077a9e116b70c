// The evaluation stage alone: a string and what it may read in, a value,
// its references and diagnostics out. No manifest, file or environment.
#include "engine/manifest/evaluate.h"

#include <catch2/catch.hpp>

namespace evaluate_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

// Bytes of the string at line 1 of s.yaml, column 1 + offset.
SourceLocation Locate(size_t offset, size_t length) {
  return {"s.yaml", 1, 1 + static_cast<int>(offset), static_cast<int>(length)};
}

struct Run {
  Evaluated e;
  std::vector<Diagnostic> diags;
};

Run Eval(const std::string& text, const EvalInputs& in) {
  Run r;
  r.e = EvaluateString(text, in, Locate, r.diags);
  return r;
}

EvalInputs Inputs() {
  EvalInputs in;
  in.variable = [](const std::string& name, const SourceLocation&) -> std::optional<Value> {
    if (name == "region") return Value("eu");
    if (name == "sizes") return Value::array({1, 2});
    if (name == "braces") return Value(EscapeTemplateLiteral("${not.an.expression}"));
    return std::nullopt;
  };
  in.getenv = [](const char* name) -> const char* {
    return std::string(name) == "HOME" ? "/home/ops" : nullptr;
  };
  in.read_file = [](const std::string& path, const SourceLocation&) -> std::optional<std::string> {
    if (path == "key.pub") return "ssh-ed25519 AAAA";
    return std::nullopt;
  };
  in.resource_refs = true;
  return in;
}

}  // namespace

TEST_CASE("a string that is one expression takes its value, type and all") {
  auto r = Eval("${var.sizes}", Inputs());
  CHECK(r.diags.empty());
  CHECK_FALSE(r.e.failed);
  CHECK(r.e.value == Value::array({1, 2}));
}

TEST_CASE("expressions inside text are interpolated") {
  EvalInputs in = Inputs();
  in.count_index = 3;
  auto r = Eval("web-${var.region}-${count.index} in ${env.HOME}: ${file(\"key.pub\")}", in);
  CHECK(r.diags.empty());
  CHECK(r.e.value == "web-eu-3 in /home/ops: ssh-ed25519 AAAA");
}

TEST_CASE("a value that reads as an expression stays text") {
  auto r = Eval("x ${var.braces}", Inputs());
  CHECK(r.diags.empty());
  // Escaped: the plan and apply will not evaluate it again.
  CHECK(r.e.value == "x " + EscapeTemplateLiteral("${not.an.expression}"));
}

TEST_CASE("each.key and each.value, fields included, come from the instance") {
  EvalInputs in = Inputs();
  std::string key = "db";
  Value each = {{"size", 4}, {"disk", {{"gb", 100}}}};
  in.each_key = &key;
  in.each_value = &each;
  CHECK(Eval("${each.value.disk.gb}", in).e.value == Value(100));
  CHECK(Eval("${each.key}-${each.value.size}", in).e.value == "db-4");
  auto missing = Eval("${each.value.cpu}", in);
  CHECK(missing.e.failed);
  REQUIRE(missing.diags.size() == 1);
  CHECK(missing.diags[0].code == "missing_key");
  CHECK(missing.diags[0].summary == "this object has no attribute \"cpu\"");
  CHECK(missing.diags[0].location.column == 3);  // under each.value.cpu
}

TEST_CASE("references are kept for apply, qualified with the module, and returned") {
  EvalInputs in = Inputs();
  in.module = {{"app", 1}};
  auto r = Eval("${network.main.id}/${module.db.endpoint}", in);
  CHECK(r.diags.empty());
  CHECK(r.e.value ==
        "${resource[\"module.app[1].network.main\"].id}/"
        "${module[\"module.app[1].module.db\"].endpoint}");
  REQUIRE(r.e.references.size() == 2);
  CHECK(r.e.references[0].expr.type == Expression::Type::kResource);
  CHECK(r.e.references[0].expr.target.ToString() == "module.app[1].network.main");
  CHECK(r.e.references[0].expr.attr == "id");
  CHECK_FALSE(r.e.references[0].exact);
  CHECK(r.e.references[0].location.column == 3);  // the caret under the reference itself
  CHECK(r.e.references[1].expr.type == Expression::Type::kModuleOutput);
  CHECK(r.e.references[1].location.column == 22);

  auto whole = Eval("${instance.web[*].id}", Inputs());
  REQUIRE(whole.e.references.size() == 1);
  CHECK(whole.e.references[0].exact);
  CHECK(whole.e.references[0].expr.splat);
  CHECK(whole.e.references[0].expr.attr == "id");
  CHECK(whole.e.value == "${instance.web[*].id}");

  // With the resource's shape known, each instance is read on its own.
  EvalInputs shaped = Inputs();
  ResourceShape shape;
  shape.mode = Instances::Mode::kCount;
  shape.indexes = {0, 1};
  const std::vector<std::string> attributes = {"id", "name"};
  shape.attributes = &attributes;
  shaped.shape = [&](const std::string& base) { return base == "instance.web" ? &shape : nullptr; };
  CHECK(Eval("${instance.web[*].id}", shaped).e.value ==
        "${[instance.web[0].id, instance.web[1].id]}");
  CHECK(Eval("${length(instance.web)}", shaped).e.value == Value(2));
  auto str = Eval("ids: ${instance.web[*].id}", shaped);
  REQUIRE(str.diags.size() == 1);
  CHECK(str.diags[0].code == "invalid_interpolation");
}

TEST_CASE("every expression that cannot be evaluated is reported, and the text kept") {
  EvalInputs in = Inputs();
  in.resource_refs = false;
  in.where = "count";
  const std::string text = "${env.NOPE} ${count.index} ${each.key} ${var.sizes} ${network.a.id}";
  auto r = Eval(text, in);
  CHECK(r.e.failed);
  CHECK(r.e.value == text);
  std::vector<std::string> codes;
  for (const auto& d : r.diags) codes.push_back(d.code);
  CHECK(codes == std::vector<std::string>{"unset_env", "count_outside_count",
                                          "each_outside_for_each", "invalid_interpolation",
                                          "reference_not_allowed"});
  CHECK(r.diags.back().summary ==
        "count cannot refer to network.a.id: resource attributes are known only during apply");
  CHECK(r.diags[0].location.column == 3);   // env.NOPE
  CHECK(r.diags[1].location.column == 15);  // count.index
  CHECK(r.diags[1].location.length == 11);
  CHECK(r.e.references.empty());
}

TEST_CASE("references a module or a string may not hold are refused") {
  EvalInputs in = Inputs();
  in.module = {{"app", {}}};
  auto data = Eval("${data.network.shared.id}", in);
  REQUIRE(data.diags.size() == 1);
  CHECK(data.diags[0].code == "module_data_reference");
  // A user cannot write the loader's form of a module's resource.
  auto internal = Eval("${resource[\"module.x.network.n\"].id}", Inputs());
  REQUIRE(internal.diags.size() == 1);
  CHECK(internal.diags[0].code == "invalid_reference");
}

TEST_CASE("private key material in the environment is refused, not shown") {
  EvalInputs in = Inputs();
  in.getenv = [](const char*) -> const char* {
    return "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH "
           "PRIVATE KEY-----\n";
  };
  auto r = Eval("${env.DEPLOY_KEY}", in);
  REQUIRE(r.diags.size() == 1);
  CHECK(r.diags[0].code == "private_key_material");
  CHECK(r.diags[0].summary.find("BEGIN") == std::string::npos);
  CHECK(r.e.failed);
}

TEST_CASE("a string that does not parse is reported where it breaks") {
  auto r = Eval("abc ${var.region", Inputs());
  CHECK(r.e.failed);
  REQUIRE(r.diags.size() == 1);
  CHECK(r.diags[0].code == "invalid_expression");
  CHECK(r.diags[0].location.column == 5);
  CHECK(r.e.value == "abc ${var.region");
}

TEST_CASE("a value built from a sensitive variable carries the sensitive mark") {
  EvalInputs in = Inputs();
  in.variable = [](const std::string& name, const SourceLocation&) -> std::optional<Value> {
    return Value(name + "-value");
  };
  in.variable_sensitive = [](const std::string& name) { return name == "pw" || name == "pin"; };
  CHECK(Eval("${var.pw}", in).e.sensitive == std::vector<std::string>{"var.pw"});
  auto mixed = Eval("net-${var.region}-${var.pin}-${var.pw}-${var.pin}", in);
  CHECK(mixed.e.value == "net-region-value-pin-value-pw-value-pin-value");
  CHECK(mixed.e.sensitive == std::vector<std::string>{"var.pin", "var.pw"});
  // Through any operation, until nonsensitive().
  CHECK(Eval("${var.pw == \"x\" ? 1 : 2}", in).e.sensitive == std::vector<std::string>{"var.pw"});
  CHECK(Eval("${nonsensitive(var.pw)}", in).e.sensitive.empty());
  CHECK(Eval("net-${var.region}", in).e.sensitive.empty());
  CHECK(Eval("${var.region}", Inputs()).e.sensitive.empty());  // no callback: none is
}

TEST_CASE("private key material assembled from pieces is refused, and the text kept") {
  EvalInputs in = Inputs();
  in.variable = [](const std::string& name, const SourceLocation&) -> std::optional<Value> {
    if (name == "head") return Value("-----BEGIN OPENSSH PRIV");
    if (name == "tail")
      return Value("ATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----");
    if (name == "pieces") return Value::array({"-----BEGIN RSA PRIVATE KEY-----", "x"});
    return std::nullopt;
  };
  const std::string text = "${var.head}${var.tail}";
  auto r = Eval(text, in);
  REQUIRE(r.diags.size() == 1);
  CHECK(r.diags[0].code == "private_key_material");
  CHECK(r.diags[0].summary == "private key material in a value");
  CHECK(r.diags[0].location.column == 1);
  CHECK(r.diags[0].location.length == static_cast<int>(text.size()));
  CHECK(r.e.failed);
  CHECK(r.e.private_key);
  CHECK(r.e.value == text);  // the key goes no further
  // A whole value that is a list holding a key: the same.
  auto list = Eval("${var.pieces}", in);
  CHECK(list.e.private_key);
  CHECK(list.e.value == "${var.pieces}");
  // Each piece alone is no key.
  CHECK_FALSE(Eval("${var.head}", in).e.private_key);
  CHECK(Eval("${var.head}", in).diags.empty());
}

}  // namespace evaluate_test
