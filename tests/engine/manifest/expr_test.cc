#include "engine/manifest/expr.h"

#include <catch2/catch.hpp>

using namespace cairn;

namespace {

Expression ParseOne(const std::string& s) {
  auto parsed = ParseTemplate(s);
  REQUIRE(std::holds_alternative<Template>(parsed));
  const auto& t = std::get<Template>(parsed);
  REQUIRE(t.exact());
  return std::get<Expression>(t.parts[0]);
}

std::string ParseError(const std::string& s) {
  auto parsed = ParseTemplate(s);
  REQUIRE(std::holds_alternative<TemplateError>(parsed));
  return std::get<TemplateError>(parsed).message;
}

}  // namespace

TEST_CASE("every expression form parses") {
  auto v = ParseOne("${var.region}");
  CHECK(v.type == Expression::Type::kVar);
  CHECK(v.name == "region");
  CHECK(ParseOne("${env.HOME}").type == Expression::Type::kEnv);
  CHECK(ParseOne("${count.index}").type == Expression::Type::kCountIndex);
  CHECK(ParseOne("${each.key}").type == Expression::Type::kEachKey);
  auto ev = ParseOne("${each.value.cidr}");
  CHECK(ev.type == Expression::Type::kEachValue);
  CHECK(ev.name == "cidr");
  auto f = ParseOne("${file(\"keys/a \\\"b\\\".pub\")}");
  CHECK(f.type == Expression::Type::kFile);
  CHECK(f.name == "keys/a \"b\".pub");

  auto r = ParseOne("${instance.web.id}");
  CHECK(r.type == Expression::Type::kResource);
  CHECK(r.target.ToString() == "instance.web");
  CHECK(r.attr == "id");
  CHECK(ParseOne("${instance.web[2].ipv4}").target.index ==
        std::variant<std::monostate, int, std::string>(2));
  CHECK(ParseOne("${instance.web[\"eu\"].ipv4}").target.ToString() == "instance.web[\"eu\"]");
  auto splat = ParseOne("${instance.web[*].ipv4}");
  CHECK(splat.splat);
  CHECK(splat.ToString() == "instance.web[*].ipv4");
  CHECK(ParseOne("${ instance.web.id }").attr == "id");
}

TEST_CASE("interpolated strings keep literal parts and offsets") {
  auto parsed = ParseTemplate("web-${count.index}-x");
  auto& t = std::get<Template>(parsed);
  REQUIRE(t.parts.size() == 3);
  CHECK(std::get<std::string>(t.parts[0]) == "web-");
  CHECK(std::get<Expression>(t.parts[1]).begin == 4);
  CHECK(std::get<Expression>(t.parts[1]).end == 18);
  CHECK(std::get<std::string>(t.parts[2]) == "-x");
  CHECK_FALSE(t.exact());
}

TEST_CASE("$${ is a literal ${, and EscapeTemplateLiteral writes one") {
  auto parsed = ParseTemplate("cost: $${var.x} and ${var.y}");
  auto& t = std::get<Template>(parsed);
  CHECK(std::get<std::string>(t.parts[0]) == "cost: ${var.x} and ");
  CHECK(std::get<Expression>(t.parts[1]).ToString() == "var.y");
  CHECK(EscapeTemplateLiteral("a ${b}") == "a $${b}");
}

TEST_CASE("malformed expressions are errors with a reason") {
  CHECK(ParseError("${var.x") == "unterminated expression: missing \"}\"");
  CHECK(ParseError("${}") == "invalid expression \"${}\": empty expression");
  CHECK(ParseError("${instance.web}").find("expected an attribute after instance.web") !=
        std::string::npos);
  CHECK(ParseError("${count.number}").find("count.index") != std::string::npos);
  CHECK(ParseError("${instance.web[x].id}").find("expected an index") != std::string::npos);
  CHECK(ParseError("${var.x + 1}").find("unexpected") != std::string::npos);
  CHECK(ParseError("${file(keys)}").find("quoted path") != std::string::npos);
}

TEST_CASE("module outputs and resources inside modules parse, and render back") {
  auto out = ParseOne("${module.app[\"eu\"].network_id}");
  CHECK(out.type == Expression::Type::kModuleOutput);
  REQUIRE(out.target.module.size() == 1);
  CHECK(out.target.module[0].name == "app");
  CHECK(out.attr == "network_id");
  CHECK(out.ToString() == "module.app[\"eu\"].network_id");
  auto nested = ParseOne("${module.a.module.b.ips}");
  CHECK(nested.type == Expression::Type::kModuleOutput);
  CHECK(nested.target.module.size() == 2);
  auto res = ParseOne("${module.a[1].instance.web[*].id}");
  CHECK(res.type == Expression::Type::kResource);
  CHECK(res.splat);
  CHECK(res.target.BaseString() == "module.a[1].instance.web");
  CHECK(res.ToString() == "module.a[1].instance.web[*].id");
  CHECK(ParseError("${module.app}").find("expected an output after module.app") !=
        std::string::npos);
  CHECK(ParseError("${module.app[*].id}").find("one instance at a time") != std::string::npos);
  CHECK(ParseError("${module.}").find("module name") != std::string::npos);
}

TEST_CASE("ResolveReferences keeps the type of an exact reference") {
  AttributeLookup lookup = [](const ResourceAddress& a,
                              const std::string& attr) -> std::optional<Value> {
    if (a.ToString() == "network.n" && attr == "id") return Value("net_1");
    if (a.ToString() == "instance.web[0]" && attr == "ssh_keys") return Value::array({"k1", "k2"});
    if (a.ToString() == "volume.v" && attr == "size_gb") return Value(20);
    if (a.ToString() == "instance.web[1]" && attr == "ipv4") return UnknownValue();
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
                {"splat", "${instance.web[*].ipv4}"}};
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
  CHECK(IsUnknown(out["splat"]));
  // Plain values are left alone.
  CHECK(ResolveReferences(Value{{"a", 1}, {"b", "x"}}, lookup) == Value{{"a", 1}, {"b", "x"}});
}
