// schemas/openapi.yaml against `cairn serve`: every operation the document
// lists is exercised over HTTP (with valid requests and with failing ones),
// every status the server answers must be documented for that operation, and
// every JSON body must validate (valijson) against the schema the document
// gives for that status.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "engine/manifest/yaml_tree.h"
#include "server/api.h"
#include "tests/server/serve_fixture.h"

namespace openapi_conformance_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

// YAML as JSON, with YAML 1.2's core types for plain scalars.
json ToJson(const cairn::YamlNode& n, int depth = 0) {
  REQUIRE(depth < 64);
  switch (n.type()) {
    case cairn::YamlNode::Type::kMap: {
      json out = json::object();
      for (const auto& [k, v] : n.pairs()) out[k.Scalar()] = ToJson(v, depth + 1);
      return out;
    }
    case cairn::YamlNode::Type::kSequence: {
      json out = json::array();
      for (const auto& item : n.items()) out.push_back(ToJson(item, depth + 1));
      return out;
    }
    case cairn::YamlNode::Type::kScalar: {
      const std::string& s = n.Scalar();
      if (n.quoted()) return s;
      if (s == "true" || s == "false") return s == "true";
      if (s == "null" || s == "~") return nullptr;
      if (std::regex_match(s, std::regex("-?[0-9]+"))) return std::stoll(s);
      if (std::regex_match(s, std::regex("-?[0-9]+\\.[0-9]+"))) return std::stod(s);
      return s;
    }
    default:
      return nullptr;
  }
}

json LoadOpenApi() {
  std::ifstream in(std::string(CAIRN_SOURCE_DIR) + "/schemas/openapi.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  auto tree = cairn::YamlTree::Parse(ss.str());
  REQUIRE_FALSE(tree->error);
  REQUIRE(tree->documents.size() == 1);
  return ToJson(tree->documents[0]);
}

std::string Escape(const std::string& token) {  // JSON pointer
  std::string out;
  for (char c : token) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// The operation of the document a concrete request path matches.
std::string MatchPath(const json& doc, const std::string& path) {
  for (const auto& [templ, item] : doc["paths"].items()) {
    std::string re = std::regex_replace(templ, std::regex("\\{[^}]+\\}"), "[^/]+");
    if (std::regex_match(path, std::regex(re))) return templ;
  }
  return "";
}

struct Checker {
  json doc;
  std::set<std::string> covered;  // "METHOD TEMPLATE"
  int validated = 0;

  // A response's JSON pointer in the document, following a $ref to
  // components/responses.
  std::string ResponsePointer(const std::string& templ, const std::string& method,
                              const std::string& status) {
    std::string ptr = "/paths/" + Escape(templ) + "/" + method + "/responses/" + status;
    const json& r = doc.at(json::json_pointer(ptr));
    if (r.contains("$ref")) return r["$ref"].get<std::string>().substr(1);
    return ptr;
  }

  void Check(const std::string& method, const std::string& path, const HttpResult& res) {
    std::string why = Validate(method, path, res);
    INFO(method << " " << path << " -> " << res.status << " " << res.body.substr(0, 300));
    CHECK(why.empty());
  }

  // What is wrong with `res` as an answer to METHOD PATH ("" when nothing).
  std::string Validate(const std::string& method, const std::string& path, const HttpResult& res) {
    std::string bare = path.substr(0, path.find('?'));
    std::string templ = MatchPath(doc, bare);
    INFO(method << " " << path << " -> " << res.status << " " << res.body.substr(0, 300));
    REQUIRE_FALSE(templ.empty());
    std::string m = method;
    for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const json& op = doc["paths"][templ];
    REQUIRE(op.contains(m));
    covered.insert(m + " " + templ);
    const std::string status = std::to_string(res.status);
    REQUIRE(op[m]["responses"].contains(status));  // a documented status
    std::string ptr = ResponsePointer(templ, m, status);
    const json& response = doc.at(json::json_pointer(ptr));
    if (!response.contains("content") || !response["content"].contains("application/json")) {
      return "";
    }
    const json body = json::parse(res.body, nullptr, false);
    REQUIRE_FALSE(body.is_discarded());
    // The whole document as the root, so that "#/components/..." resolves.
    json root = doc;
    root["$ref"] = "#" + ptr + "/content/application~1json/schema";
    valijson::Schema schema;
    valijson::SchemaParser parser;
    valijson::adapters::NlohmannJsonAdapter schema_adapter(root);
    parser.populateSchema(schema_adapter, schema);
    valijson::Validator validator;
    valijson::adapters::NlohmannJsonAdapter target(body);
    valijson::ValidationResults results;
    std::string why;
    if (!validator.validate(schema, target, &results)) {
      valijson::ValidationResults::Error e;
      while (results.popError(e)) {
        std::string where;
        for (const auto& c : e.context) where += c;
        why += where + ": " + e.description + "\n";
      }
    }
    ++validated;
    return why;
  }
};

}  // namespace

TEST_CASE("openapi.yaml: every operation answers only documented statuses and schemas") {
  Checker ck{LoadOpenApi()};
  ServeFixture srv;
  auto c = srv.Client();
  auto noauth = srv.Client("");
  int key = 0;
  auto k = [&] { return "conf-" + std::to_string(++key); };
  auto get = [&](const std::string& p) { ck.Check("GET", p, c->Get(p)); };
  auto post = [&](const std::string& p, const json& body, bool keyed = true) {
    auto r = c->Post(p, body, keyed ? k() : "");
    ck.Check("POST", p, r);
    return r;
  };
  auto patch = [&](const std::string& p, const json& body, bool keyed = true) {
    ck.Check("PATCH", p, c->Patch(p, body, keyed ? k() : ""));
  };
  auto del = [&](const std::string& p, bool keyed = true) {
    ck.Check("DELETE", p, c->Delete(p, keyed ? k() : ""));
  };
  const std::string pubkey =
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g c@cairn";
  json rule = {{"direction", "inbound"},
               {"protocol", "tcp"},
               {"port", "22"},
               {"source", "0.0.0.0/0"},
               {"action", "allow"}};

  for (const char* p : {"/healthz", "/metrics", "/v1/regions", "/v1/plans", "/v1/images"}) {
    ck.Check("GET", p, c->Get(p));
  }
  ck.Check("GET", "/v1/regions", noauth->Get("/v1/regions"));  // 401

  // Preview collections: create, read, list, update, errors, delete.
  std::string net = post("/v1/networks",
                         {{"name", "n"}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}}, false)
                        .json()["id"];
  std::string key_id =
      post("/v1/ssh_keys", {{"name", "k"}, {"public_key", pubkey}}, false).json()["id"];
  std::string inst = post("/v1/instances", InstanceBody("i"), false).json()["id"];
  std::string fw =
      post("/v1/firewalls", {{"name", "f"}, {"rules", {rule}}, {"instances", {inst}}}, false)
          .json()["id"];
  for (const auto& [coll, id] : std::vector<std::pair<std::string, std::string>>{
           {"networks", net}, {"ssh_keys", key_id}, {"instances", inst}, {"firewalls", fw}}) {
    const std::string base = "/v1/" + coll;
    get(base);
    get(base + "?limit=1");
    get(base + "?limit=0");  // 400
    get(base + "/" + id);
    get(base + "/missing");  // 404
    patch(base + "/" + id, {{"name", "renamed-" + coll}}, false);
    patch(base + "/" + id, {{"nope", 1}}, false);  // 400
    post(base, json::object(), false);             // 400
  }
  del("/v1/networks/" + net, false);  // in use? no: 204 or 409, both documented
  del("/v1/firewalls/" + fw, false);
  del("/v1/instances/" + inst, false);
  del("/v1/ssh_keys/" + key_id, false);
  del("/v1/ssh_keys/" + key_id, false);  // gone: 404

  // Control-plane collections.
  std::string cnet = post("/api/v1/networking",
                          {{"name", "cn"}, {"region", "eu-central"}, {"cidr", "10.2.0.0/16"}})
                         .json()["network"]["publicId"];
  json ib = InstanceBody("ci");
  ib["networkId"] = cnet;
  std::string cinst = post("/api/v1/compute", ib).json()["instance"]["publicId"];
  std::string cvol =
      post("/api/v1/storage", {{"name", "cv"}, {"region", "eu-central"}, {"sizeGb", 10}})
          .json()["volume"]["publicId"];
  post("/api/v1/compute", InstanceBody("no-key"), false);  // 400: Idempotency-Key required
  for (const auto& [coll, id] : std::vector<std::pair<std::string, std::string>>{
           {"networking", cnet}, {"compute", cinst}, {"storage", cvol}}) {
    const std::string base = "/api/v1/" + coll;
    get(base);
    get(base + "?cursor=garbage");  // 400
    get(base + "/" + id);
    get(base + "/00000000-0000-4000-8000-000000000000");  // 404
    patch(base + "/" + id, {{"name", "renamed-" + coll}});
    patch(base + "/" + id, {{"bogus", true}});  // 400
  }
  // Actions, allowed or not in the instance's state.
  for (const char* action : {"stop", "start", "reboot", "explode"}) {
    post("/api/v1/compute/" + cinst + "/actions/" + action, json::object());
  }
  del("/api/v1/networking/" + cnet);  // in use by the instance: 409
  del("/api/v1/storage/" + cvol);
  del("/api/v1/compute/" + cinst);
  del("/api/v1/compute/" + cinst);  // deleting already, or gone

  // Every operation of the document was exercised.
  std::set<std::string> all;
  for (const auto& [templ, item] : ck.doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      if (method == "get" || method == "post" || method == "patch" || method == "delete" ||
          method == "put") {
        all.insert(method + " " + templ);
      }
    }
  }
  for (const auto& op : all) {
    INFO(op);
    CHECK(ck.covered.count(op) == 1);
  }
  CHECK(ck.validated > 50);
  // The validation is real: a body that breaks the document is caught.
  HttpResult wrong;
  wrong.status = 200;
  wrong.body = R"({"data": 5, "pagination": {"next_cursor": null, "has_more": false}})";
  CHECK_FALSE(ck.Validate("GET", "/v1/instances", wrong).empty());
  wrong.body = R"({"data": [], "pagination": {"next_cursor": null, "has_more": false}})";
  CHECK(ck.Validate("GET", "/v1/instances", wrong).empty());
}

TEST_CASE("openapi.yaml: every route the router answers is in the document, with its methods") {
  const json doc = LoadOpenApi();
  const auto routes = cairn::server::Api::Routes();
  REQUIRE(routes.size() >= 20);
  for (const auto& [pattern, allow] : routes) {
    INFO(pattern << " answers " << allow);
    REQUIRE(doc["paths"].contains(pattern));
    std::set<std::string> answered, documented;
    std::stringstream methods(allow);
    for (std::string m; std::getline(methods, m, ',');) {
      m.erase(0, m.find_first_not_of(' '));
      for (char& ch : m) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (m != "head") answered.insert(m);  // HEAD is GET without a body
    }
    for (const auto& [key, op] : doc["paths"][pattern].items()) {
      if (key != "parameters") documented.insert(key);
    }
    CHECK(answered == documented);
  }
}

}  // namespace openapi_conformance_test
