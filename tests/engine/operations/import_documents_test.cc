// `kind: import` documents through the plan and apply (stacks loaded from
// text, the FakeProvider as the API, the state in memory): the plan reads
// the object by its id and shows it imported, with any update the
// manifests ask for; apply adopts it in its first commit, sending nothing
// for it; the next plan has nothing to do. tests/cli/import_documents_test.cc
// runs the same through `cairn serve`.
#include <catch2/catch.hpp>

#include "base/schema/schema_registry.h"
#include "engine/apply/apply.h"
#include "engine/manifest/loader.h"
#include "engine/operations/import.h"
#include "engine/operations/operations.h"
#include "engine/report/apply_report.h"
#include "engine/report/plan_html.h"
#include "engine/report/plan_report.h"
#include "engine/state/memory_state_store.h"
#include "tests/engine/support/fake_provider.h"

namespace import_documents_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

struct ImportWorld {
  std::shared_ptr<const SchemaRegistry> registry = *SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  KindCatalog kinds = KindCatalogFrom(*registry);
  FakeProvider api;
  MemoryStateStore store;

  StackConfig Load(const std::string& yaml, bool allow_undeclared = false) {
    LoadOptions o;
    o.registry = registry;
    o.getenv = [](const char*) -> const char* { return nullptr; };
    o.allow_undeclared_imports = allow_undeclared;
    LoadResult r = LoadStackFromText({{"main.yaml", yaml}}, o);
    std::string diags;
    for (const auto& d : r.diagnostics) diags += d.code + ": " + d.summary + "\n";
    INFO(diags);
    REQUIRE(r.ok());
    return r.config;
  }

  PlanResult Plan(const StackConfig& config, PlanOptions options = {}) {
    auto st = store.Load();
    REQUIRE(st.ok());
    return PlanStack(config, *st, &api, kinds, options);
  }

  std::string Network(const std::string& name, const std::string& cidr) {
    return api.Inject("network", {{"name", name}, {"region", "eu-central"}, {"cidr", cidr}});
  }
};

std::string ImportNetworkDoc(const std::string& name, const std::string& cidr) {
  return "kind: network\nname: " + name + "\nspec: {region: eu-central, cidr: " + cidr + "}\n---\n";
}

const PlannedChange* ChangeAt(const Plan& plan, const std::string& address) {
  for (const PlannedChange& c : plan.changes) {
    if (c.address == address) return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE(
    "import document: the plan imports and apply adopts with no request and then nothing to do") {
  ImportWorld w;
  const std::string id = w.Network("core", "10.1.0.0/16");
  const StackConfig config = w.Load(ImportNetworkDoc("core", "10.1.0.0/16") +
                                    "kind: import\nto: network.core\nid: " + id + "\n");
  PlanResult p = w.Plan(config);
  REQUIRE(p.ok());
  REQUIRE(p.plan.imports.size() == 1);
  CHECK(p.plan.imports[0].address == "network.core");
  CHECK(p.plan.imports[0].remote_id == id);
  CHECK(p.plan.imports[0].attributes["cidr"] == "10.1.0.0/16");
  const PlannedChange* c = ChangeAt(p.plan, "network.core");
  REQUIRE(c);
  CHECK(c->action == Action::kNoOp);  // the manifest matches the object: a pure import
  CHECK(p.plan.has_changes());
  CHECK(p.plan.counts().to_import == 1);
  CHECK(p.plan.counts().add == 0);
  const std::string text = RenderPlanText(p.plan, {});
  CHECK(text.find("  <- network.core   will be imported (id " + id + ")\n") != std::string::npos);
  CHECK(text.find("Plan: 1 to import, 0 to add, 0 to change, 0 to replace, 0 to destroy.") !=
        std::string::npos);
  CHECK(RenderPlanMarkdown(p.plan).find("**1** to import") != std::string::npos);
  CHECK(RenderPlanMarkdown(p.plan).find("| import | `network.core` | will be imported") !=
        std::string::npos);
  CHECK(RenderPlanHtml(p.plan, {}).find("<tr class=\"import\" data-address=\"network.core\">") !=
        std::string::npos);

  const int reads = w.api.reads();
  ApplyResult applied = Apply(p.plan, w.api, w.store, {});
  REQUIRE(applied.ok());
  CHECK(w.api.calls().empty());  // adopting sends nothing
  CHECK(w.api.reads() == reads);
  CHECK(applied.summary.imported == 1);
  CHECK(ApplySummaryLine(applied.summary, false, true, false)
            .find("Resources: 1 imported, 0 added, 0 changed") != std::string::npos);
  auto st = w.store.Load();
  REQUIRE(st.ok());
  REQUIRE(st->resources.count("network.core"));
  CHECK(st->resources.at("network.core").id == id);
  CHECK(st->resources.at("network.core").attributes["region"] == "eu-central");

  // The document stays: the next plan has nothing to do, and reads no object by it.
  PlanResult again = w.Plan(config);
  REQUIRE(again.ok());
  CHECK(again.plan.imports.empty());
  CHECK_FALSE(again.plan.has_changes());
}

TEST_CASE("import document: an update the manifest asks for comes in the same plan") {
  ImportWorld w;
  const std::string id = w.api.Inject("firewall", {{"name", "edge"}, {"rules", Value::array()}});
  const StackConfig config = w.Load(
      "kind: firewall\nname: edge\nspec:\n  rules:\n"
      "    - {direction: inbound, protocol: tcp, port: \"22\", source: 0.0.0.0/0, action: allow}\n"
      "---\nkind: import\nto: firewall.edge\nid: " +
      id + "\n");
  PlanResult p = w.Plan(config);
  REQUIRE(p.ok());
  REQUIRE(p.plan.imports.size() == 1);
  const PlannedChange* c = ChangeAt(p.plan, "firewall.edge");
  REQUIRE(c);
  CHECK(c->action == Action::kUpdate);
  CHECK(c->remote_id == id);
  CHECK(RenderPlanText(p.plan, {}).find("Plan: 1 to import, 0 to add, 1 to change") !=
        std::string::npos);
  ApplyResult applied = Apply(p.plan, w.api, w.store, {});
  REQUIRE(applied.ok());
  CHECK(w.api.calls() == std::vector<std::string>{"update firewall " + id});
  CHECK(applied.summary.imported == 1);
  CHECK(applied.summary.updated == 1);
  PlanResult again = w.Plan(config);
  REQUIRE(again.ok());
  CHECK_FALSE(again.plan.has_changes());
}

TEST_CASE("import document: for_each imports one object per key") {
  ImportWorld w;
  const std::string a = w.Network("net-a", "10.1.0.0/16");
  const std::string b = w.Network("net-b", "10.2.0.0/16");
  const StackConfig config = w.Load(
      "kind: variable\nname: nets\ndefault: {a: {id: " + a + ", cidr: 10.1.0.0/16}, b: {id: " + b +
      ", cidr: 10.2.0.0/16}}\n---\n"
      "kind: network\nname: net\nfor_each: ${var.nets}\n"
      "spec: {region: eu-central, cidr: \"${each.value.cidr}\"}\n---\n"
      "kind: import\nfor_each: ${var.nets}\nto: network.net[each.key]\nid: ${each.value.id}\n");
  PlanResult p = w.Plan(config);
  REQUIRE(p.ok());
  REQUIRE(p.plan.imports.size() == 2);
  CHECK(p.plan.imports[0].address == "network.net[\"a\"]");
  CHECK(p.plan.imports[1].address == "network.net[\"b\"]");
  CHECK(p.plan.counts().to_import == 2);
  CHECK(p.plan.counts().add == 0);
  CHECK(p.plan.counts().change == 0);
  REQUIRE(Apply(p.plan, w.api, w.store, {}).ok());
  CHECK(w.api.calls().empty());
  CHECK(w.store.Load()->resources.at("network.net[\"b\"]").id == b);
  CHECK_FALSE(w.Plan(config).plan.has_changes());
}

TEST_CASE("import document: an id that names nothing is an error at the document's id") {
  ImportWorld w;
  const StackConfig config = w.Load(ImportNetworkDoc("core", "10.1.0.0/16") +
                                    "kind: import\nto: network.core\nid: nope\n");
  PlanResult p = w.Plan(config);
  REQUIRE_FALSE(p.ok());
  REQUIRE(p.diagnostics.size() == 1);
  CHECK(p.diagnostics[0].code == "import_not_found");
  CHECK(p.diagnostics[0].summary == "there is no network with id nope to import to network.core");
  CHECK(p.diagnostics[0].location.file == "main.yaml");
  CHECK(p.diagnostics[0].location.line == 7);
  CHECK(p.diagnostics[0].location.column == 5);
}

TEST_CASE("import document: the state tracking another object at to or this one elsewhere") {
  ImportWorld w;
  const std::string yaml =
      ImportNetworkDoc("core", "10.1.0.0/16") + ImportNetworkDoc("spare", "10.9.0.0/16");
  // Applied without imports: both are created.
  REQUIRE(Apply(w.Plan(w.Load(yaml)).plan, w.api, w.store, {}).ok());
  const std::string spare = w.store.Load()->resources.at("network.spare").id;
  const std::string third = w.Network("third", "10.9.0.0/16");

  PlanResult conflict =
      w.Plan(w.Load(yaml + "kind: import\nto: network.core\nid: " + third + "\n"));
  REQUIRE(conflict.diagnostics.size() == 1);
  CHECK(conflict.diagnostics[0].code == "import_conflict");
  CHECK(conflict.diagnostics[0].summary.find(
            "the state tracks " + w.store.Load()->resources.at("network.core").id + " there") !=
        std::string::npos);
  CHECK(conflict.diagnostics[0].location.line == 10);

  PlanResult elsewhere =
      w.Plan(w.Load(yaml + "kind: import\nto: network.core\nid: " + spare + "\n"));
  REQUIRE(elsewhere.diagnostics.size() == 1);
  CHECK(elsewhere.diagnostics[0].code == "duplicate_id");
  CHECK(elsewhere.diagnostics[0].summary ==
        "network " + spare + " is tracked already, at network.spare");
  CHECK(elsewhere.diagnostics[0].location.line == 11);
}

TEST_CASE("import document: a moved document's destination tracking the id is imported already") {
  ImportWorld w;
  REQUIRE(
      Apply(w.Plan(w.Load(ImportNetworkDoc("old", "10.1.0.0/16"))).plan, w.api, w.store, {}).ok());
  const std::string id = w.store.Load()->resources.at("network.old").id;
  PlanResult p = w.Plan(w.Load(ImportNetworkDoc("new", "10.1.0.0/16") +
                               "kind: moved\nfrom: network.old\nto: network.new\n---\n"
                               "kind: import\nto: network.new\nid: " +
                               id + "\n"));
  INFO((p.diagnostics.empty() ? std::string() : p.diagnostics[0].summary));
  REQUIRE(p.ok());
  CHECK(p.plan.imports.empty());
  CHECK(p.plan.moves.size() == 1);
}

TEST_CASE("import document: targets leave an import out with its change and destroy ignores it") {
  ImportWorld w;
  const std::string id = w.Network("core", "10.1.0.0/16");
  const StackConfig config =
      w.Load(ImportNetworkDoc("core", "10.1.0.0/16") + ImportNetworkDoc("edge", "10.2.0.0/16") +
             "kind: import\nto: network.core\nid: " + id + "\n");
  PlanOptions targeted;
  targeted.targets = {"network.edge"};
  PlanResult p = w.Plan(config, targeted);
  REQUIRE(p.ok());
  CHECK(p.plan.imports.empty());
  CHECK(p.plan.counts().add == 1);
  PlanOptions destroy;
  destroy.destroy = true;
  const int reads = w.api.reads();
  PlanResult d = w.Plan(config, destroy);
  REQUIRE(d.ok());
  CHECK(d.plan.imports.empty());
  CHECK(w.api.reads() == reads);  // nothing read for it
}

TEST_CASE("import document: the saved plan carries the imports and format 4 is still read") {
  ImportWorld w;
  const std::string id = w.Network("core", "10.1.0.0/16");
  PlanResult p = w.Plan(w.Load(ImportNetworkDoc("core", "10.1.0.0/16") +
                               "kind: import\nto: network.core\nid: " + id + "\n"));
  REQUIRE(p.ok());
  Value j = PlanToJson(p.plan);
  CHECK(j["format_version"] == 6);
  CHECK(j["summary"]["import"] == 1);
  REQUIRE(j["imports"].size() == 1);
  CHECK(j["imports"][0]["address"] == "network.core");
  CHECK(j["imports"][0]["remote_id"] == id);
  CHECK(PlanToJsonText(p.plan) == j.dump(2));
  auto back = PlanFromJson(j);
  REQUIRE(back.ok());
  REQUIRE(back->imports.size() == 1);
  CHECK(back->imports[0].attributes["cidr"] == "10.1.0.0/16");
  // Applying what was read back adopts it, exactly once even if applied again.
  REQUIRE(Apply(*back, w.api, w.store, {}).ok());
  REQUIRE(Apply(*back, w.api, w.store, {}).ok());
  CHECK(w.store.Load()->resources.size() == 1);
  CHECK(w.api.calls().empty());

  Value old = j;
  old["format_version"] = 4;
  old.erase("imports");
  auto four = PlanFromJson(old);
  REQUIRE(four.ok());
  CHECK(four->imports.empty());
  old["format_version"] = Plan::kFormatVersion + 1;
  CHECK_FALSE(PlanFromJson(old).ok());
}

TEST_CASE("plan --generate-config: the documents of undeclared imports and then a pure import") {
  ImportWorld w;
  const std::string id = w.Network("edge", "10.2.0.0/16");
  const StackConfig config =
      w.Load("kind: import\nto: network.edge\nid: " + id + "\n", /*allow_undeclared=*/true);
  REQUIRE(config.imports.size() == 1);
  CHECK_FALSE(config.imports[0].declared);
  auto st = w.store.Load();
  REQUIRE(st.ok());
  ImportReads reads = ReadImports(config, *st, w.api, w.kinds);
  REQUIRE(reads.ok());
  std::string error;
  const std::string text =
      GenerateImportConfig(config, reads, *st, *w.registry, w.kinds, {}, error);
  INFO(text);
  CHECK(error.empty());
  CHECK(text.rfind("# Written by cairn plan --generate-config", 0) == 0);
  CHECK(text.find("kind: network\nname: edge\n") != std::string::npos);
  // Loaded with what was written, the plan is a pure import.
  const StackConfig now = w.Load(text + "---\nkind: import\nto: network.edge\nid: " + id + "\n");
  PlanResult p = w.Plan(now);
  REQUIRE(p.ok());
  CHECK(p.plan.counts().to_import == 1);
  CHECK(p.plan.counts().add + p.plan.counts().change + p.plan.counts().replace == 0);

  // A sensitive variable's value in the object: nothing is written.
  const std::string none =
      GenerateImportConfig(config, reads, *st, *w.registry, w.kinds, {"10.2.0.0"}, error);
  CHECK(none.empty());
  CHECK(error.find("sensitive") != std::string::npos);
}

}  // namespace import_documents_test
