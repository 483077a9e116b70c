// The references stage alone: declared resources and one reference in, the
// instances it names or why it names none out.
#include "engine/manifest/references.h"

#include <catch2/catch.hpp>

#include "base/schema/schema_registry.h"

namespace references_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

// network.main; instance.web with count 2 (the first sets no image);
// instance.db with for_each {"a"}.
struct Stack {
  std::shared_ptr<const SchemaRegistry> registry = *SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  std::vector<ResourceConfig> resources;
  std::map<std::string, ResourceGroup> groups;

  Stack() {
    Add("network", "main", ResourceGroup::Mode::kSingle, {std::monostate{}},
        {{"name", "main"}, {"region", "eu"}, {"cidr", "10.0.0.0/16"}});
    Add("instance", "web", ResourceGroup::Mode::kCount, {0, 1},
        {{"name", "web"}, {"network", "${network.main.id}"}});
    resources.back().spec["image"] = "debian-12";
    Add("instance", "db", ResourceGroup::Mode::kForEach, {std::string("a")},
        {{"name", "db"}, {"image", "debian-12"}});
  }

  void Add(const std::string& kind, const std::string& name, ResourceGroup::Mode mode,
           std::vector<AddressIndex> indexes, Value spec) {
    ResourceGroup g{kind, name, {}, 0, mode, {}};
    for (const auto& index : indexes) {
      ResourceConfig rc;
      rc.address = {kind, name, index, {}};
      rc.kind = kind;
      rc.spec = spec;
      g.instances.push_back(resources.size());
      resources.push_back(std::move(rc));
    }
    groups.emplace(kind + "." + name, std::move(g));
  }

  DeclaredResources declared() const { return {resources, groups, *registry}; }

  // `text` is one reference ("${...}") written at `pointer` of resource
  // `from` (-1: an output).
  ResolvedReference Resolve(const std::string& text, int from = -1,
                            const std::string& pointer = "/tags", bool derived = false) {
    size_t star = text.find("[*].");
    if (star != std::string::npos) {
      // KIND.NAME[*].ATTR, as the evaluator reports it: every instance, one
      // attribute.
      expr = Expression();
      expr.target = *ResourceAddress::Parse(text.substr(2, star - 2));
      expr.splat = true;
      expr.attr = text.substr(star + 4, text.size() - star - 5);
    } else {
      expr::NodePtr n = ParseExpressionForm(text);
      REQUIRE(n);
      auto refs = ReferencesIn(*n);
      REQUIRE(refs.size() == 1);
      expr = refs[0];
    }
    ReferenceUse use;
    use.expr = &expr;
    use.location = &location;
    use.from = from;
    use.pointer = pointer;
    use.exact = true;
    use.derived = derived;
    return ResolveReference(use, declared());
  }
  Expression expr;
  SourceLocation location{"s.yaml", 9, 3, 1};
};

std::string Code(const ResolvedReference& r) {
  return r.diagnostics.empty() ? "" : r.diagnostics[0].code;
}

}  // namespace

TEST_CASE("a reference names the instances it points at") {
  Stack s;
  auto one = s.Resolve("${instance.web[1].id}");
  REQUIRE(one.ok);
  CHECK(one.targets == std::vector<size_t>{2});
  auto all = s.Resolve("${instance.web[*].id}");
  REQUIRE(all.ok);
  CHECK(all.targets == std::vector<size_t>{1, 2});
  auto key = s.Resolve("${instance.db[\"a\"].image}");
  REQUIRE(key.ok);
  CHECK(key.targets == std::vector<size_t>{3});
  auto field = s.Resolve("${network.main.cidr}");
  REQUIRE(field.ok);
  CHECK(field.diagnostics.empty());
}

TEST_CASE("a reference that fits nothing says why, at the reference") {
  Stack s;
  auto kind = s.Resolve("${netwrk.main.id}");
  CHECK_FALSE(kind.ok);
  CHECK(Code(kind) == "unknown_reference");
  CHECK(kind.diagnostics[0].detail.find("network") != std::string::npos);
  CHECK(kind.diagnostics[0].location.line == 9);

  auto name = s.Resolve("${network.mian.id}");
  CHECK(Code(name) == "unknown_reference");
  CHECK(name.diagnostics[0].summary == "reference to undeclared resource network.mian");
  CHECK(name.diagnostics[0].detail.find("main") != std::string::npos);

  CHECK(s.Resolve("${instance.web.id}").diagnostics[0].summary ==
        "instance.web has count; name one instance (instance.web[0]) or all of them "
        "(instance.web[*])");
  CHECK(s.Resolve("${instance.web[5].id}").diagnostics[0].summary ==
        "instance.web[5] does not exist: instance.web has 2 instances");
  CHECK(s.Resolve("${instance.web[\"x\"].id}").diagnostics[0].summary ==
        "instance.web has count; index it with a number");
  CHECK(s.Resolve("${instance.db[0].id}").diagnostics[0].summary ==
        "instance.db has for_each; index it with a quoted key");
  CHECK(s.Resolve("${network.main[0].id}").diagnostics[0].summary ==
        "network.main has neither count nor for_each; refer to it without an index");
  CHECK(Code(s.Resolve("${network.main.size}")) == "unknown_attribute");
  // A field the spec does not set cannot be read, by one instance or all.
  auto unset = s.Resolve("${instance.web[*].image}");
  CHECK(Code(unset) == "unset_attribute");
  CHECK(unset.diagnostics[0].summary == "instance.web[*] does not set \"image\"");
}

TEST_CASE("a resource cannot read its own computed attributes, but may its own fields") {
  Stack s;
  CHECK(Code(s.Resolve("${instance.web[1].ipv4}", 2)) == "self_reference");
  CHECK(s.Resolve("${instance.web[1].name}", 2).ok);
}

TEST_CASE("a reference field must be given the id of its kind") {
  Stack s;
  auto kind = s.Resolve("${instance.db[\"a\"].id}", 1, "/network");
  CHECK(Code(kind) == "reference_kind_mismatch");
  CHECK(kind.diagnostics[0].summary == "field \"network\" must refer to network, not to instance");
  auto attr = s.Resolve("${network.main.name}", 1, "/network");
  CHECK(attr.diagnostics[0].summary == "field \"network\" takes an id, not name");
  CHECK(s.Resolve("${network.main.id}", 1, "/network").ok);
  // A list field's items are checked too.
  CHECK(Code(s.Resolve("${network.main.id}", 1, "/ssh_keys/0")) == "reference_kind_mismatch");
}

TEST_CASE("a derived reference fails without repeating what was reported where it was written") {
  Stack s;
  auto quiet = s.Resolve("${network.mian.id}", 1, "/tags", /*derived=*/true);
  CHECK_FALSE(quiet.ok);
  CHECK(quiet.diagnostics.empty());
  // The field it lands in is the module's own, so a wrong kind is reported.
  auto loud = s.Resolve("${instance.db[\"a\"].id}", 1, "/network", /*derived=*/true);
  CHECK_FALSE(loud.ok);
  CHECK(Code(loud) == "reference_kind_mismatch");
}

TEST_CASE("depends_on takes every instance of an address without index") {
  Stack s;
  auto all = ReferenceTargets(s.declared(), *ResourceAddress::Parse("instance.web"), false,
                              /*want_all=*/true, s.groups.at("instance.web"));
  REQUIRE(std::holds_alternative<std::vector<size_t>>(all));
  CHECK(std::get<std::vector<size_t>>(all) == std::vector<size_t>{1, 2});
  CHECK(DeclaredNames(s.declared(), "instance", {}) == std::vector<std::string>{"db", "web"});
  CHECK(DeclaredNames(s.declared(), "instance", {{"app", {}}}).empty());
}

}  // namespace references_test
