// Expressions as the engine keeps them between load and apply (expression
// form): references found in residuals, known values escaped and read back,
// and residuals evaluated at plan and apply.
#include "engine/manifest/expr.h"

#include <catch2/catch.hpp>

namespace expr_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

std::vector<Expression> Refs(const std::string& text) {
  expr::NodePtr n = ParseExpressionForm(text);
  REQUIRE(n);
  return ReferencesIn(*n);
}

}  // namespace

TEST_CASE("references in a residual: resources, instances, data sources and module outputs") {
  auto r = Refs("${network.main.id}");
  REQUIRE(r.size() == 1);
  CHECK(r[0].type == Expression::Type::kResource);
  CHECK(r[0].target.ToString() == "network.main");
  CHECK(r[0].attr == "id");
  CHECK_FALSE(r[0].splat);

  auto inst = Refs("${instance.web[2].ipv4}-${instance.db[\"eu\"].id}");
  REQUIRE(inst.size() == 2);
  CHECK(inst[0].target.ToString() == "instance.web[2]");
  CHECK(inst[1].target.ToString() == "instance.db[\"eu\"]");
  CHECK(inst[1].ToString() == "instance.db[\"eu\"].id");

  auto dynamic = Refs("${[for k in var.keys : instance.node[k].id]}");
  REQUIRE(dynamic.size() == 1);
  CHECK(dynamic[0].splat);  // which instance is known only later: all of them
  CHECK(dynamic[0].ToString() == "instance.node[*].id");

  auto whole = Refs("${length(instance.web)}");
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].splat);
  CHECK(whole[0].attr.empty());

  auto data = Refs("${data.network.shared.id}");
  REQUIRE(data.size() == 1);
  CHECK(data[0].target.kind == "data.network");
  CHECK(data[0].target.name == "shared");

  auto qualified = Refs("${resource[\"module.app[1].network.main\"].id}");
  REQUIRE(qualified.size() == 1);
  CHECK(qualified[0].target.ToString() == "module.app[1].network.main");

  auto out = Refs("${module.app[\"eu\"].network_id} ${module[\"module.a.module.b\"].ips}");
  REQUIRE(out.size() == 2);
  CHECK(out[0].type == Expression::Type::kModuleOutput);
  CHECK(out[0].ToString() == "module.app[\"eu\"].network_id");
  CHECK(out[1].target.module.size() == 2);
  CHECK(out[1].attr == "ips");

  // Names bound by a for, and the variables, are not references.
  CHECK(Refs("${[for network in var.x : network.id]}").empty());
  CHECK(Refs("${var.a}${local.b}${each.key}${count.index}${path.module}").empty());
}

TEST_CASE("known values are escaped in expression form and read back as they were") {
  expr::Value v = expr::Value::MakeMap(
      {{"text", expr::Value::String("a ${b}")},
       {"list", expr::Value::MakeList({expr::Value::Int(1), expr::Value::Bool(true)})}});
  Value form = ToExpressionForm(v);
  CHECK(form["text"] == "a $${b}");
  CHECK(expr::Equal(FromExpressionForm(form), v));
  CHECK(EscapeTemplateLiteral("a ${b}") == "a $${b}");
  CHECK(FromExpressionForm(Value("${network.a.id}")).is_unknown());
  expr::NodePtr n = NodeFromExpressionForm(Value::array({"x", "${network.a.id}", 3}));
  REQUIRE(n);
  CHECK(expr::Print(*n) == "[\"x\", network.a.id, 3]");
}

TEST_CASE("ResolveReferences evaluates residuals with what is known at plan and apply") {
  AttributeLookup lookup = [](const ResourceAddress& a,
                              const std::string& attr) -> std::optional<Value> {
    if (a.ToString() == "network.n" && attr == "id") return Value("net_1");
    if (a.ToString() == "network.n" && attr == "cidr") return Value("10.0.0.0/16");
    if (a.ToString() == "instance.web[0]" && attr == "ssh_keys") return Value::array({"k1", "k2"});
    if (a.ToString() == "volume.v" && attr == "size_gb") return Value(20);
    if (a.ToString() == "instance.web[1]" && attr == "ipv4") return UnknownValue();
    if (a.ToString() == "module.app.network.m" && attr == "id") return Value("net_2");
    if (a.ToString() == "instance.web[0]" && attr.empty())
      return Value{{"id", "i0"}, {"name", "web-0"}};
    return std::nullopt;
  };
  Value spec = {{"network", "${network.n.id}"},
                {"keys", "${instance.web[0].ssh_keys}"},
                {"size", "${volume.v.size_gb}"},
                {"label", "size ${volume.v.size_gb} on ${network.n.id}"},
                {"list", {"${network.n.id}", "plain", 3}},
                {"escaped", "$${not.a.ref}"},
                {"unknown", "${instance.web[1].ipv4}"},
                {"unknown_interp", "ip=${instance.web[1].ipv4}"},
                {"missing", "${instance.web[7].ipv4}"},
                {"computed", "${volume.v.size_gb * 2 + 1}"},
                {"call", "${tostring(volume.v.size_gb)}"},
                {"in_module", "${resource[\"module.app.network.m\"].id}"},
                {"object", "${instance.web[0]}"}};
  Value out = ResolveReferences(spec, lookup);
  CHECK(out["network"] == "net_1");
  CHECK(out["keys"] == Value::array({"k1", "k2"}));
  CHECK(out["size"] == 20);
  CHECK(out["label"] == "size 20 on net_1");
  CHECK(out["list"] == Value::array({"net_1", "plain", 3}));
  CHECK(out["escaped"] == "${not.a.ref}");
  CHECK(IsUnknown(out["unknown"]));
  CHECK(IsUnknown(out["unknown_interp"]));
  CHECK(IsUnknown(out["missing"]));
  CHECK(out["computed"] == 41);
  CHECK(out["call"] == "20");
  CHECK(out["in_module"] == "net_2");
  CHECK(out["object"] == Value{{"id", "i0"}, {"name", "web-0"}});
  // Plain values are left alone.
  CHECK(ResolveReferences(Value{{"a", 1}, {"b", "x"}}, lookup) == Value{{"a", 1}, {"b", "x"}});
}

}  // namespace expr_test
