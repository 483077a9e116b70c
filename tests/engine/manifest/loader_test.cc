// LoadStack over inline manifests: expansion, variables, references, order.
#include "engine/manifest/loader.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "base/redact.h"
#include "engine/manifest/expr.h"
#include "tests/support/process.h"

namespace loader_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

LoadOptions Options(std::map<std::string, std::string> env = {}) {
  LoadOptions o;
  o.schema_dir = CAIRN_SOURCE_SCHEMA_DIR;
  auto e = std::make_shared<std::map<std::string, std::string>>(std::move(env));
  o.getenv = [e](const char* name) -> const char* {
    auto it = e->find(name);
    return it == e->end() ? nullptr : it->second.c_str();
  };
  return o;
}

LoadResult Load(const std::string& yaml, LoadOptions o = Options()) {
  return LoadStackFromText({{"main.yaml", yaml}}, o);
}

std::string Codes(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) out += d.code + ":" + d.summary + "\n";
  return out;
}

std::vector<std::string> Addresses(const StackConfig& c) {
  std::vector<std::string> out;
  for (const auto& r : c.resources) out.push_back(r.address.ToString());
  return out;
}

const char* kNet = "kind: network\nname: n\nspec: {region: eu-central, cidr: 10.0.0.0/16}\n";

}  // namespace

TEST_CASE("count expands to indexed instances with count.index substituted") {
  auto r = Load(std::string(kNet) +
                "---\nkind: instance\nname: web\ncount: 3\n"
                "spec: {name: \"web-${count.index}\", region: eu-central, plan: s-1vcpu-1gb, "
                "image: debian-12, network: "
                "\"${network.n.id}\"}\n");
  REQUIRE(r.ok());
  CHECK(Addresses(r.config) == std::vector<std::string>{"network.n", "instance.web[0]",
                                                        "instance.web[1]", "instance.web[2]"});
  const auto* w2 = r.config.Find(*ResourceAddress::Parse("instance.web[2]"));
  REQUIRE(w2);
  CHECK(w2->spec["name"] == "web-2");
  CHECK(w2->spec["network"] == "${network.n.id}");
  REQUIRE(w2->depends_on.size() == 1);
  CHECK(w2->depends_on[0].ToString() == "network.n");
}

TEST_CASE("count keeps numeric order past ten instances in [*] lists") {
  auto r = Load(
      "kind: instance\nname: w\ncount: 11\nspec: {region: eu-central, plan: s-1vcpu-1gb, image: "
      "debian-12}\n---\n"
      "kind: output\nname: ips\nvalue: ${instance.w[*].ipv4}\n");
  REQUIRE(r.ok());
  // Each instance read on its own, in index order.
  AttributeLookup lookup = [](const ResourceAddress& a,
                              const std::string&) -> std::optional<Value> {
    return Value(std::get<int>(a.index));
  };
  const Value v = ResolveReferences(r.config.outputs.at(0).value, lookup);
  REQUIRE(v.size() == 11);
  CHECK(v[2] == 2);
  CHECK(v[10] == 10);
}

TEST_CASE("for_each over a list and a mapping, spec.name defaults with the key") {
  auto r = Load(
      "kind: network\nname: zone\nfor_each: [us-east, eu-central]\nspec: {region: \"${each.key}\", "
      "cidr: "
      "10.0.0.0/16}\n---\n"
      "kind: volume\nname: data\nfor_each: {db: {size: 20}, logs: {size: 5}}\n"
      "spec: {region: eu-central, size_gb: \"${each.value.size}\"}\n");
  REQUIRE(r.ok());
  CHECK(Addresses(r.config) ==
        std::vector<std::string>{"network.zone[\"eu-central\"]", "network.zone[\"us-east\"]",
                                 "volume.data[\"db\"]", "volume.data[\"logs\"]"});
  CHECK(r.config.resources[0].spec["name"] == "zone-eu-central");
  CHECK(r.config.resources[0].spec["region"] == "eu-central");
  CHECK(r.config.resources[2].spec["size_gb"] == 20);
  CHECK(r.config.resources[3].spec["name"] == "data-logs");
}

TEST_CASE("a resource without count keeps its document name as spec.name") {
  auto r = Load(kNet);
  REQUIRE(r.ok());
  CHECK(r.config.resources.at(0).spec["name"] == "n");
}

TEST_CASE("variable precedence: default < CAIRN_VAR_ < var files < --var") {
  cairn::testing::TempDir dir;
  cairn::testing::WriteFile(dir.path() + "/a.yaml", "region: from-file-a\nsize: 7\n");
  cairn::testing::WriteFile(dir.path() + "/b.yaml", "region: from-file-b\n");
  std::string yaml =
      "kind: variable\nname: region\ndefault: from-default\n---\n"
      "kind: variable\nname: size\ntype: number\ndefault: 1\n---\n"
      "kind: variable\nname: zones\ntype: list\ndefault: [a]\n---\n"
      "kind: network\nname: n\nspec: {name: \"${var.region}\", region: eu-central, cidr: "
      "10.0.0.0/16}\n";
  CHECK(Load(yaml).config.variables.at("region") == "from-default");
  auto o = Options({{"CAIRN_VAR_region", "from-env"}, {"CAIRN_VAR_zones", "[x, y]"}});
  auto r = Load(yaml, o);
  CHECK(r.config.variables.at("region") == "from-env");
  CHECK(r.config.variables.at("zones") == Value::array({"x", "y"}));
  o.var_files = {dir.path() + "/a.yaml", dir.path() + "/b.yaml"};
  r = Load(yaml, o);
  CHECK(r.config.variables.at("region") == "from-file-b");
  CHECK(r.config.variables.at("size") == 7);
  o.vars["region"] = "from-flag";
  o.vars["size"] = "9";
  r = Load(yaml, o);
  REQUIRE(r.ok());
  CHECK(r.config.variables.at("region") == "from-flag");
  CHECK(r.config.variables.at("size") == 9);
  CHECK(r.config.resources.at(0).spec["name"] == "from-flag");
}

TEST_CASE("a variable file's undeclared variable is a warning, whatever its value holds") {
  cairn::testing::TempDir dir;
  // A repeated key would be an error in a declared variable's value.
  cairn::testing::WriteFile(dir.path() + "/vars.yaml",
                            "region: eu\nunused: {a: 1, a: 2}\nregoin: [x\n  , y]\n");
  std::string yaml =
      "kind: variable\nname: region\n---\n"
      "kind: network\nname: n\nspec: {name: \"${var.region}\", region: eu-central, cidr: "
      "10.0.0.0/16}\n";
  auto o = Options({});
  o.var_files = {dir.path() + "/vars.yaml"};
  auto r = Load(yaml, o);
  INFO(RenderDiagnostics(r.diagnostics, r.sources));
  REQUIRE(r.ok());
  CHECK(r.config.variables.at("region") == "eu");
  REQUIRE(r.diagnostics.size() == 2);
  for (const auto& d : r.diagnostics) {
    CHECK(d.code == "unknown_variable");
    CHECK(d.severity == Severity::kWarning);
  }
}

TEST_CASE("a saved plan's variable values win over CAIRN_VAR_, which is then named") {
  std::string yaml =
      "kind: variable\nname: region\ndefault: from-default\n---\n"
      "kind: variable\nname: size\ntype: number\ndefault: 1\n---\n"
      "kind: network\nname: n\nspec: {name: \"${var.region}\", region: eu-central, cidr: "
      "10.0.0.0/16}\n";
  auto o = Options({{"CAIRN_VAR_region", "from-env"}, {"CAIRN_VAR_size", "3"}});
  o.plan_vars = {{"region", "from-plan"}, {"size", 3}};
  auto r = Load(yaml, o);
  REQUIRE(r.ok());
  CHECK(r.config.variables.at("region") == "from-plan");
  CHECK(r.config.variables.at("size") == 3);
  // Only the variable whose environment value differs is named.
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].severity == Severity::kWarning);
  CHECK(r.diagnostics[0].code == "variable_not_used");
  CHECK(r.diagnostics[0].summary.find("CAIRN_VAR_region") != std::string::npos);
  // Without the environment variable, the plan's value is used silently.
  o = Options();
  o.plan_vars = {{"region", "from-plan"}};
  r = Load(yaml, o);
  REQUIRE(r.ok());
  CHECK(r.diagnostics.empty());
  CHECK(r.config.variables.at("region") == "from-plan");
}

TEST_CASE("an exact expression keeps the value's type, interpolation makes strings") {
  auto r = Load(
      "kind: variable\nname: keys\ntype: list\ndefault: [key_00000000000000000000000000000001, "
      "key_00000000000000000000000000000002]\n---\n"
      "kind: variable\nname: size\ntype: number\ndefault: 30\n---\n"
      "kind: instance\nname: w\nspec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12, "
      "ssh_keys: "
      "\"${var.keys}\"}\n---\n"
      "kind: volume\nname: v\nspec: {region: eu-central, size_gb: \"${var.size}\", name: "
      "\"v-${var.size}\"}\n");
  REQUIRE(r.ok());
  CHECK(r.config.Find(*ResourceAddress::Parse("instance.w"))->spec["ssh_keys"] ==
        Value::array(
            {"key_00000000000000000000000000000001", "key_00000000000000000000000000000002"}));
  const auto* v = r.config.Find(*ResourceAddress::Parse("volume.v"));
  CHECK(v->spec["size_gb"] == 30);
  CHECK(v->spec["name"] == "v-30");
}

TEST_CASE("env, file and escapes are substituted at load time, escapes stay escaped") {
  cairn::testing::TempDir dir;
  std::string pub =
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHnTeJ4cv3DIaWIqPkOPGOGfkr1jBWHybmrVyQxFyV4V "
      "deploy@example";
  cairn::testing::WriteFile(dir.path() + "/keys/deploy.pub", pub + "\n");
  cairn::testing::WriteFile(
      dir.path() + "/main.yaml",
      "kind: ssh_key\nname: deploy\nspec:\n  public_key: ${file(\"keys/deploy.pub\")}\n"
      "---\nkind: network\nname: n\nspec: {name: \"$${literal}-${env.REGION}\", region: "
      "\"${env.REGION}\", cidr: 10.0.0.0/16}\n");
  auto o = Options({{"REGION", "eu-central"}});
  o.paths = {dir.path()};
  auto r = LoadStack(o);
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(r.config.Find(*ResourceAddress::Parse("ssh_key.deploy"))->spec["public_key"] == pub);
  const auto* n = r.config.Find(*ResourceAddress::Parse("network.n"));
  CHECK(n->spec["name"] == "$${literal}-eu-central");
  CHECK(ResolveReferences(n->spec, {})["name"] == "${literal}-eu-central");
}

TEST_CASE("depends_on and references give a deterministic order, depends_on lists all deps") {
  auto r = Load(
      std::string(kNet) +
      "---\nkind: firewall\nname: edge\nspec: {rules: [], instances: [\"${instance.b.id}\"]}\n---\n"
      "kind: instance\nname: b\nspec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12, "
      "network: "
      "\"${network.n.id}\"}\n"
      "---\nkind: instance\nname: a\nspec: {region: eu-central, plan: s-1vcpu-1gb, image: "
      "debian-12}\ndepends_on: "
      "[firewall.edge]\n");
  REQUIRE(r.ok());
  CHECK(Addresses(r.config) ==
        std::vector<std::string>{"network.n", "instance.b", "firewall.edge", "instance.a"});
  CHECK(r.config.Find(*ResourceAddress::Parse("instance.a"))->depends_on.at(0).ToString() ==
        "firewall.edge");
}

TEST_CASE("a field's location is where its value is written, else the resource's name") {
  auto r = Load(std::string(kNet) +
                "---\nkind: instance\nname: web\ncount: 2\nspec:\n"
                "  region: eu-central\n"
                "  plan:   s-1vcpu-1gb\n"
                "  image: \"debian-12\"\n");
  INFO(Codes(r));
  REQUIRE(r.ok());
  const auto* w0 = r.config.Find(*ResourceAddress::Parse("instance.web[0]"));
  const auto* w1 = r.config.Find(*ResourceAddress::Parse("instance.web[1]"));
  REQUIRE(w0);
  REQUIRE(w1);
  // kNet is 3 lines: the instance's document begins on line 5.
  SourceLocation plan = w0->LocationOf("plan");
  CHECK(plan.file == "main.yaml");
  CHECK(plan.line == 10);
  CHECK(plan.column == 11);
  CHECK(plan.length == 11);
  SourceLocation image = w0->LocationOf("image");
  CHECK(image.line == 11);
  CHECK(image.column == 10);
  CHECK(image.length == 11);  // with its quotes
  // Not written (spec.name is defaulted), or not a field: the name's.
  for (const char* field : {"name", "network", ""}) {
    SourceLocation at = w0->LocationOf(field);
    CHECK(at.line == 6);
    CHECK(at.column == 7);
  }
  // The instances of one document share its fields' locations.
  CHECK(w0->field_locations == w1->field_locations);
  CHECK(w1->LocationOf("region").line == 9);

  FieldLocations written;
  written.file = "f.yaml";
  written.fields = {{"a", 3, 4, 2}, {"b", 0, 0, 1}, {"a", 7, 8, 5}};
  auto a = written.Find("a");  // written twice: the last, as a mapping keeps it
  REQUIRE(a);
  CHECK(a->file == "f.yaml");
  CHECK(a->line == 7);
  CHECK(a->column == 8);
  CHECK(a->length == 5);
  CHECK_FALSE(written.Find("b"));  // no position
  CHECK_FALSE(written.Find("c"));
}

TEST_CASE("lifecycle, provider and backend documents are read") {
  auto r = Load(
      "kind: instance\nname: w\nspec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12}\n"
      "lifecycle: {ignore_changes: [plan], prevent_destroy: true, create_before_destroy: "
      "true}\n---\n"
      "kind: provider\nendpoint: http://localhost:9\ntoken_env: MY_TOKEN\nparallelism: 3\n"
      "timeouts: {create: 120}\n---\n"
      "kind: backend\nname: web-prod\ntype: postgres\nurl_env: DB_URL\n");
  INFO(Codes(r));
  REQUIRE(r.ok());
  const auto& lc = r.config.resources.at(0).lifecycle;
  CHECK(lc.ignore_changes == std::vector<std::string>{"plan"});
  CHECK(lc.prevent_destroy);
  CHECK(lc.create_before_destroy);
  CHECK(r.config.provider.endpoint == "http://localhost:9");
  CHECK(r.config.provider.token_env == "MY_TOKEN");
  CHECK(r.config.provider.parallelism == 3);
  CHECK(r.config.provider.timeouts.at("create") == 120);
  CHECK(r.config.backend.type == "postgres");
  CHECK(r.config.backend.url_env == "DB_URL");
  CHECK(r.config.backend.stack_name == "web-prod");
}

TEST_CASE("all problems are reported, sorted by file and line") {
  auto r = LoadStackFromText(
      {{"b.yaml",
        "kind: instance\nname: w\nspec: {region: eu-central, plan: 1, image: debian-12}\n"},
       {"a.yaml", "kind: network\nname: n\nspec: {region: eu-central, cidr: x, colour: red}\n"}},
      Options());
  REQUIRE(r.diagnostics.size() == 3);
  CHECK(r.diagnostics[0].location.file == "a.yaml");
  CHECK(r.diagnostics[0].location.column < r.diagnostics[1].location.column);
  CHECK(r.diagnostics[2].location.file == "b.yaml");
  CHECK(r.diagnostics[2].code == "wrong_type");
}

TEST_CASE("sensitive variable values are registered with the redactor") {
  ClearSecretsForTesting();
  auto r = Load("kind: variable\nname: pw\nsensitive: true\ndefault: hunter2-secret\n");
  REQUIRE(r.ok());
  CHECK(r.config.sensitive_variables == std::vector<std::string>{"pw"});
  CHECK(Redact("the password is hunter2-secret") == "the password is [REDACTED]");
  ClearSecretsForTesting();
}

TEST_CASE("an empty directory is an error") {
  cairn::testing::TempDir dir;
  auto o = Options();
  o.paths = {dir.path()};
  auto r = LoadStack(o);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "no_manifests");
}

TEST_CASE("the example stack is valid") {
  auto o = Options();
  o.paths = {std::string(CAIRN_SOURCE_DIR) + "/examples/web"};
  auto r = LoadStack(o);
  INFO(Codes(r));
  CHECK(r.ok());
  CHECK(r.config.resources.size() == 8);
}

TEST_CASE("private key material from the environment is refused without echoing it") {
  auto r = Load("kind: ssh_key\nname: k\nspec: {public_key: \"${env.KEY}\"}\n",
                Options({{"KEY",
                          "-----BEGIN OPENSSH PRIVATE KEY-----\nsecretbody\n-----END OPENSSH "
                          "PRIVATE KEY-----"}}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.diagnostics.at(0).code == "private_key_material");
  CHECK(r.diagnostics.at(0).summary.find("secretbody") == std::string::npos);
}

TEST_CASE("a YAML alias bomb is refused, not expanded") {
  std::string yaml = "kind: network\nname: n\nspec:\n  region: eu\n  cidr: 10.0.0.0/8\n";
  yaml += "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  std::string prev = "a";
  for (int i = 0; i < 8; ++i) {
    std::string name = "l" + std::to_string(i);
    yaml += name + ": &" + name + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
            ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" +
            prev + "]\n";
    prev = name;
  }
  auto r = Load(yaml);
  REQUIRE_FALSE(r.ok());
  bool too_large = false;
  for (const auto& d : r.diagnostics) too_large = too_large || d.code == "document_too_large";
  CHECK(too_large);
}

TEST_CASE("bytes that are not UTF-8 never break the JSON form of diagnostics") {
  auto r = Load(
      "kind: network\nname: n\nspec: {region: eu-central, cidr: 10.0.0.0/8, \"caf\xe9\": 1}\n---\n"
      "kind: instance\nname: w\ncount: [\"\xff\"]\nspec: {region: eu-central, plan: s-1vcpu-1gb, "
      "image: debian-12}\n");
  INFO(Codes(r));
  // Each bad byte where it is; the key is read as "caf\uFFFD".
  REQUIRE(r.diagnostics.size() == 4);
  CHECK(r.diagnostics[0].code == "unknown_field");
  CHECK(r.diagnostics[1].code == "invalid_utf8");
  CHECK(r.diagnostics[3].code == "invalid_utf8");
  std::string json;
  CHECK_NOTHROW(json = DiagnosticsToJson(r.diagnostics));
  CHECK(json.find("invalid_count") != std::string::npos);
}

TEST_CASE(
    "fuzz regression: yaml-cpp looping on a malformed sequence is a syntax error, not a hang") {
  // tests/fuzz/regressions/timeout-yaml-cpp-endless-sequence
  auto r = Load(std::string(",2.]-  1\x8a"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.diagnostics.at(0).code == "yaml_syntax");
}

TEST_CASE("fuzz regression: text that is not UTF-8 never reaches valijson") {
  // tests/fuzz/regressions/crash-valijson-strlen-invalid-utf8
  auto r = Load("kind: instance\nname: web\nspec:\n  region: eu-cen" + std::string(60, '\x97') +
                "\n  plan: s-1vcpu-1gb\n  image: debian-12\n");
  REQUIRE_FALSE(r.ok());
  bool at_byte = false;  // the first bad byte, one diagnostic for the run
  for (const auto& d : r.diagnostics) {
    if (d.code != "invalid_utf8") continue;
    CHECK_FALSE(at_byte);
    at_byte = d.location.line == 4 && d.location.column == 17 && d.location.length == 60;
  }
  CHECK(at_byte);
}

TEST_CASE("StackConfig::Find uses the index LoadStack builds and survives a stale one") {
  auto r = Load(std::string(kNet) +
                "---\nkind: instance\nname: w\ncount: 3\nspec: {region: eu-central, plan: "
                "s-1vcpu-1gb, image: debian-12}\n");
  REQUIRE(r.ok());
  CHECK(r.config.resource_index.size() == 4);
  auto w1 = *ResourceAddress::Parse("instance.w[1]");
  REQUIRE(r.config.Find(w1));
  CHECK(r.config.Find(w1)->address == w1);
  std::reverse(r.config.resources.begin(), r.config.resources.end());  // the index is now stale
  REQUIRE(r.config.Find(w1));
  CHECK(r.config.Find(w1)->address == w1);
  CHECK(r.config.Find(*ResourceAddress::Parse("instance.w[7]")) == nullptr);
}

TEST_CASE("settings only: resources are not read, and unset variables matter only where used") {
  const std::string text =
      "kind: variable\nname: size\ntype: string\n---\n"
      "kind: variable\nname: dir\ntype: string\ndefault: states\n---\n"
      "kind: backend\ntype: sqlite\npath: ${var.dir}/web.db\n---\n"
      "kind: instance\nname: web\nspec: {name: web, plan: \"${var.size}\", colour: blue}\n";
  LoadOptions o = Options();
  o.settings_only = true;
  auto r = Load(text, o);
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(r.config.backend.path == "states/web.db");
  CHECK(r.config.resources.empty());
  CHECK(r.config.variables.count("size") == 0);

  // Loaded whole, the same stack has both problems.
  auto whole = Load(text);
  CHECK(Codes(whole).find("missing_variable") != std::string::npos);
  CHECK(Codes(whole).find("colour") != std::string::npos);
}

namespace {

// Every diagnostic rendered as a user sees it.
std::string Rendered(LoadResult& r) { return RenderDiagnostics(r.diagnostics, r.sources); }

const char* kKeyBody = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";

}  // namespace

TEST_CASE("file() reads only regular files, and at most kMaxFileFunctionBytes") {
  cairn::testing::TempDir dir;
  auto load = [&](const std::string& arg) {
    cairn::testing::WriteFile(
        dir.path() + "/a.yaml",
        "kind: ssh_key\nname: k\nspec:\n  public_key: ${file(\"" + arg + "\")}\n");
    LoadOptions o = Options();
    o.paths = {dir.path()};
    return LoadStack(o);
  };
  // A device never ends (this grew to 4 GB and died with bad_alloc).
  auto zero = load("/dev/zero");
  REQUIRE(zero.diagnostics.size() == 1);
  CHECK(zero.diagnostics[0].code == "file_not_regular");
  CHECK(zero.diagnostics[0].summary == "cannot read file \"/dev/zero\": a character device");
  CHECK(zero.diagnostics[0].location.line == 4);
  CHECK(zero.diagnostics[0].location.column == 22);  // under the path

  // A FIFO nobody writes to would block a plain open forever.
  std::string fifo = dir.path() + "/pipe";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  auto piped = load("pipe");
  REQUIRE(piped.diagnostics.size() == 1);
  CHECK(piped.diagnostics[0].summary == "cannot read file \"pipe\": a FIFO");

  // One byte over the limit, and exactly at it.
  std::string big(kMaxFileFunctionBytes + 1, 'A');
  cairn::testing::WriteFile(dir.path() + "/big.txt", big);
  auto over = load("big.txt");
  REQUIRE(over.diagnostics.size() == 1);
  CHECK(over.diagnostics[0].code == "file_too_large");
  big.pop_back();
  cairn::testing::WriteFile(dir.path() + "/big.txt", big);
  auto at_limit = load("big.txt");
  CHECK(Codes(at_limit).find("file_too_large") == std::string::npos);
}

TEST_CASE("variable files and manifests given by path must be regular files too") {
  cairn::testing::TempDir dir;
  cairn::testing::WriteFile(dir.path() + "/a.yaml", "kind: variable\nname: v\ndefault: 1\n");
  LoadOptions o = Options();
  o.paths = {dir.path(), "/dev/null"};
  o.var_files = {"/dev/zero"};
  auto r = LoadStack(o);
  CHECK(Codes(r) ==
        "file_not_regular:cannot read /dev/null: a character device\n"
        "file_not_regular:cannot read variable file /dev/zero: a character device\n");
}

TEST_CASE("a private key spelt with YAML escapes is refused and never shown") {
  std::string escaped =
      "\\x2D\\x2D\\x2D\\x2D\\x2DBEGIN OPENSSH PRIVATE KEY\\x2D\\x2D\\x2D\\x2D\\x2D\\n" +
      std::string(kKeyBody) +
      "\\n\\x2D\\x2D\\x2D\\x2D\\x2DEND OPENSSH PRIVATE KEY\\x2D\\x2D\\x2D\\x2D\\x2D\\n";
  auto r = Load("kind: ssh_key\nname: deploy\nspec:\n  name: deploy\n  public_key: \"" + escaped +
                "\"\n");
  REQUIRE(r.diagnostics.size() == 2);  // and: it is no public key
  CHECK(r.diagnostics[1].code == "private_key_material");
  CHECK(r.diagnostics[1].location.line == 5);
  std::string out = Rendered(r);
  CHECK(out.find(kKeyBody) == std::string::npos);
  CHECK(out.find("x2D") == std::string::npos);
  CHECK(out.find(kRedactedLine) != std::string::npos);

  // In a flow mapping, over several lines, in a variable file: the same.
  auto flow =
      Load("kind: variable\nname: v\ndefault: {a: \"x\",\n  b: \"" + escaped + "\", c: 1}\n");
  CHECK(Codes(flow).find("private_key_material") != std::string::npos);
  CHECK(Rendered(flow).find(kKeyBody) == std::string::npos);
}

TEST_CASE("a key assembled from variables and for_each values: no excerpt shows a piece") {
  const std::string body =
      "ATE KEY-----\\n" + std::string(kKeyBody) + "\\n-----END OPENSSH PRIVATE KEY-----";
  std::string text =
      "kind: variable\nname: head\ndefault: \"-----BEGIN OPENSSH PRIV\"\n---\n"
      // Line 5: a whole document on one line, with an unknown field: its
      // diagnostic's excerpt is the line that holds a piece of the key.
      "{kind: variable, name: body, default: \"" +
      body +
      "\", colour: 1}\n---\n"
      "kind: ssh_key\nname: deploy\nspec:\n  name: deploy\n"
      "  public_key: \"${var.head}${var.body}\"\n---\n"
      "kind: ssh_key\nname: each\n"
      // Line 15.
      "for_each: {a: {k: \"-----BEGIN OPENSSH PRIV\", v: \"" +
      body +
      "\"}}\n"
      "spec:\n  name: each\n  public_key: \"${each.value.k}${each.value.v}\"\n";
  auto r = Load(text);
  INFO(Codes(r));
  std::string out = Rendered(r);
  INFO(out);
  CHECK(Codes(r).find("unknown_field") != std::string::npos);
  CHECK(Codes(r).find("private_key_material") != std::string::npos);
  CHECK(out.find(kKeyBody) == std::string::npos);
  CHECK(out.find("ATE KEY") == std::string::npos);
  // What feeds the keys is hidden from any excerpt; the rest is not.
  CHECK(r.sources.Line("main.yaml", 5) == kRedactedLine);
  CHECK(r.sources.Line("main.yaml", 15) == kRedactedLine);
  CHECK(r.sources.Line("main.yaml", 16) == "spec:");
  CHECK(r.sources.Line("main.yaml", 1) == "kind: variable");
}

TEST_CASE("a file holding a key still reports its other problems, and no message quotes the key") {
  std::string key = "-----BEGIN OPENSSH PRIVATE KEY-----\\n" + std::string(kKeyBody) +
                    "\\n-----END OPENSSH PRIVATE KEY-----";
  auto r = Load(
      "kind: network\nname: n\nspec: {region: eu-central, cidr: 10.0.0.0/16, colour: 1}\n"
      "---\nkind: ssh_key\nname: deploy\nspec:\n  name: \"" +
      key +
      "\"\n"
      "  public_key: \"ssh-ed25519 AAAA\"\n");
  INFO(Codes(r));
  CHECK(Codes(r).find("private_key_material") != std::string::npos);
  CHECK(Codes(r).find("unknown field \"colour\"") != std::string::npos);  // not hidden by the key
  CHECK(r.diagnostics.size() >= 3);  // the key, colour, and the name it is not
  std::string out = Rendered(r);
  CHECK(out.find(kKeyBody) == std::string::npos);
  // Reported once, not again as "a value".
  CHECK(Codes(r).find("private key material in a value") == std::string::npos);
}

TEST_CASE("a stack over the instance limit is refused before its instances are made") {
  const std::string yaml = std::string(kNet) +
                           "---\nkind: instance\nname: a\ncount: 3\n"
                           "spec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12}\n"
                           "---\nkind: instance\nname: b\nfor_each: [x, y, z]\n"
                           "spec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12}\n";
  LoadOptions o = Options();
  o.max_instances = 7;  // 1 + 3 + 3
  REQUIRE(Load(yaml, o).ok());
  o.max_instances = 6;
  auto r = Load(yaml, o);
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  CHECK(d.code == "too_many_instances");
  CHECK(d.summary == "the stack has more than 6 resource instances");
  CHECK(d.location.file == "main.yaml");
  CHECK(d.location.line == 12);  // b's for_each
  CHECK(d.location.column == 11);
  CHECK(d.detail.find("instance.b's 3 take it over the limit, with 4 declared before it") !=
        std::string::npos);
  CHECK(r.config.resources.empty());
}

TEST_CASE("the default instance limit refuses 30 resources of count 100000 at once") {
  // Loading them took 4.3 GB, or ended in std::bad_alloc, before the limit.
  std::string yaml = kNet;
  for (int i = 0; i < 30; ++i) {
    yaml += "---\nkind: instance\nname: w" + std::to_string(i) +
            "\ncount: 100000\nspec: {region: eu-central, plan: s-1vcpu-1gb, image: debian-12}\n";
  }
  auto r = Load(yaml);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "too_many_instances");
  CHECK(r.diagnostics[0].summary ==
        "the stack has more than " + std::to_string(kDefaultMaxInstances) + " resource instances");
  // w9 takes it to 1,000,001 (the network, then 10 * 100000).
  CHECK(r.diagnostics[0].location.line == 4 + 5 * 9 + 3);
  CHECK(r.config.resources.empty());
}

TEST_CASE("a long for_each written out is not taken for an alias bomb") {
  // A mapping takes two nodes an entry: past 50,000 entries it used to be
  // refused as document_too_large, blaming aliases.
  std::string yaml = std::string(kNet) + "---\nkind: variable\nname: zones\ndefault:\n";
  for (int i = 0; i < 60000; ++i) yaml += "  z" + std::to_string(i) + ": eu-central\n";
  auto r = Load(yaml);
  CHECK(r.ok());
  CHECK(Codes(r).find("document_too_large") == std::string::npos);
}

TEST_CASE("on_settings is called once with the settings, before the resources load") {
  const std::string text =
      "kind: variable\nname: dir\ntype: string\ndefault: states\n---\n"
      "kind: backend\ntype: sqlite\npath: ${var.dir}/web.db\n---\n"
      "kind: provider\nname: infra\nendpoint: http://127.0.0.1:9\n---\n"
      "kind: network\nname: app\nspec: {region: eu-central, cidr: 10.30.0.0/16}\n";
  LoadOptions o = Options();
  int calls = 0;
  std::string path, endpoint;
  size_t resources_then = 99;
  bool had_registry = false;
  o.on_settings = [&](const StackConfig& c, const std::shared_ptr<const SchemaRegistry>& reg) {
    ++calls;
    path = c.backend.path;
    endpoint = c.provider.endpoint;
    resources_then = c.resources.size();
    had_registry = reg != nullptr;
  };
  auto r = Load(text, o);
  INFO(Codes(r));
  REQUIRE(r.ok());
  CHECK(calls == 1);
  CHECK(path == "states/web.db");
  CHECK(endpoint == "http://127.0.0.1:9");
  CHECK(had_registry);
  CHECK(resources_then == 0);
  CHECK(r.config.resources.size() == 1);

  // A resource's error comes after: the settings were still offered, and
  // the load fails all the same.
  calls = 0;
  auto bad = Load(text + "---\nkind: network\nname: bad\nspec: {region: eu-central}\n", o);
  CHECK_FALSE(bad.ok());
  CHECK(calls == 1);

  // Settings in error: nothing is offered.
  calls = 0;
  auto unset = Load(
      "kind: variable\nname: dir\ntype: string\n---\n" + text.substr(text.find("kind: backend")),
      o);
  CHECK_FALSE(unset.ok());
  CHECK(calls == 0);
}

}  // namespace loader_test
