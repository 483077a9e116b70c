#include "engine/graph/graph_output.h"

#include <catch2/catch.hpp>

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
