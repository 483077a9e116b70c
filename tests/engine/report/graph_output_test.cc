#include "engine/report/graph_output.h"

#include <catch2/catch.hpp>

namespace graph_output_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

StackConfig TwoResources() {
  StackConfig c;
  ResourceConfig n;
  n.address = {"network", "n", {}};
  n.kind = "network";
  ResourceConfig w;
  w.address = {"instance", "w", std::string("eu \"west\"")};
  w.kind = "instance";
  w.depends_on = {n.address};
  c.resources = {n, w};
  return c;
}

}  // namespace

TEST_CASE("DOT output labels nodes by address, colours them by kind and escapes quotes") {
  std::string dot = GraphToDot(TwoResources(), {"instance", "network"});
  CHECK(dot.rfind("digraph cairn {\n", 0) == 0);
  CHECK(dot.find("\"network.n\" [label=\"network.n\", fillcolor=\"#ffffb3\"];") !=
        std::string::npos);
  CHECK(dot.find("\"instance.w[\\\"eu \\\\\\\"west\\\\\\\"\\\"]\" -> \"network.n\";") !=
        std::string::npos);
  CHECK(dot.substr(dot.size() - 2) == "}\n");
}

TEST_CASE("JSON output lists nodes, edges and the order") {
  auto j = nlohmann::json::parse(GraphToJson(TwoResources()));
  CHECK(j["order"] == nlohmann::json::array({"network.n", "instance.w[\"eu \\\"west\\\"\"]"}));
  CHECK(j["nodes"][1]["index"] == "eu \"west\"");
  CHECK(j["edges"][0]["to"] == "network.n");
}

TEST_CASE("each module instance is a cluster, nested, and JSON names the module") {
  StackConfig c;
  auto add = [&](const char* text) {
    ResourceConfig r;
    r.address = *ResourceAddress::Parse(text);
    r.kind = r.address.kind;
    c.resources.push_back(r);
  };
  add("network.top");
  add("module.app[0].network.main");
  add("module.app[0].module.db.volume.data");
  add("module.web.instance.x");
  std::string dot = GraphToDot(c, {"network", "volume", "instance"});
  auto at = [&](const std::string& s) { return dot.find(s); };
  REQUIRE(at("subgraph \"cluster_module.app[0]\" {") != std::string::npos);
  REQUIRE(at("subgraph \"cluster_module.app[0].module.db\" {") != std::string::npos);
  REQUIRE(at("subgraph \"cluster_module.web\" {") != std::string::npos);
  // The nested cluster sits inside its parent's, and each node in its own.
  CHECK(at("cluster_module.app[0]\"") < at("\"module.app[0].network.main\" [label"));
  CHECK(at("\"module.app[0].network.main\" [label") < at("cluster_module.app[0].module.db"));
  CHECK(at("cluster_module.app[0].module.db") <
        at("\"module.app[0].module.db.volume.data\" [label"));
  CHECK(at("\"module.app[0].module.db.volume.data\" [label") < at("cluster_module.web"));
  CHECK(at("\"network.top\" [label") < at("subgraph"));
  // Braces balance: every cluster is closed.
  CHECK(std::count(dot.begin(), dot.end(), '{') == std::count(dot.begin(), dot.end(), '}'));
  auto j = nlohmann::json::parse(GraphToJson(c));
  CHECK_FALSE(j["nodes"][0].contains("module"));
  CHECK(j["nodes"][2]["module"] == "module.app[0].module.db");
}

}  // namespace graph_output_test
