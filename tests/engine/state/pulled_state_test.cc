// The pulled state format: printed and read back exactly, each malformed
// resource its own diagnostic, located at its address in the text.
#include "engine/state/pulled_state.h"

#include <catch2/catch.hpp>

namespace pulled_state_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

StateSnapshot Sample() {
  StateSnapshot st;
  st.lineage = "8a4c2f8e-3b53-4c1e-9a53-0d2b9f6f4a11";
  st.serial = 12;
  st.sequence = 30;
  ResourceState net;
  net.address = "network.core";
  net.kind = "network";
  net.id = "6c1f0e2a-0000-4000-8000-000000000001";
  net.attributes = {{"name", "core"}, {"cidr", "10.0.0.0/16"}};
  st.resources[net.address] = net;
  ResourceState web = net;
  web.address = "instance.web[10]";
  web.kind = "instance";
  web.id = "6c1f0e2a-0000-4000-8000-000000000002";
  web.depends_on = {"network.core"};
  web.tainted = "provisioning failed: x";
  st.resources[web.address] = web;
  ResourceState old = web;
  old.address = "instance.web[10] (deposed)";
  old.tainted.clear();
  st.resources[old.address] = old;
  st.outputs = {{"ip", "10.0.0.5"}, {"password", "hush"}};
  st.sensitive_outputs = {"password"};
  return st;
}

}  // namespace

TEST_CASE("a pulled state reads back as it was printed, deposed objects included") {
  const StateSnapshot st = Sample();
  const std::string text = PulledStateText(st);
  PulledState back = ParsePulledState(text, "backup.json");
  INFO(text);
  REQUIRE(back.ok());
  CHECK(back.state.lineage == st.lineage);
  CHECK(back.state.serial == 12);
  CHECK(back.state.sequence == 30);
  REQUIRE(back.state.resources.size() == 3);
  for (const auto& [addr, rs] : st.resources) {
    const ResourceState& r = back.state.resources.at(addr);
    CHECK(r.kind == rs.kind);
    CHECK(r.id == rs.id);
    CHECK(r.attributes == rs.attributes);
    CHECK(r.depends_on == rs.depends_on);
    CHECK(r.tainted == rs.tainted);
  }
  CHECK(back.state.outputs == st.outputs);
  CHECK(back.state.sensitive_outputs == st.sensitive_outputs);
  CHECK(PulledStateText(back.state) == text);
  // Each address is located where it is written.
  const SourceLocation& at = back.locations.at("network.core");
  CHECK(at.file == "backup.json");
  REQUIRE(at.line > 0);
  std::string line;
  size_t start = 0;
  for (int i = 1; i < at.line; ++i) start = text.find('\n', start) + 1;
  line = text.substr(start, text.find('\n', start) - start);
  CHECK(line.substr(at.column - 1, at.length) == "\"network.core\"");
}

TEST_CASE("each malformed resource of a pulled state is a diagnostic of its own") {
  Value j = Value::parse(PulledStateText(Sample()));
  auto resource = [&](const std::string& address) -> Value& {
    for (Value& r : j["resources"]) {
      if (r["address"] == address) return r;
    }
    FAIL("no " << address);
    throw 0;
  };
  const Value again = resource("network.core");
  resource("instance.web[10] (deposed)")["kind"] = "network";
  resource("instance.web[10]")["address"] = "instance.web[010]";
  j["resources"].push_back(again);
  PulledState back = ParsePulledState(j.dump(2), "backup.json");
  std::string summaries;
  for (const auto& d : back.diagnostics) summaries += d.summary + "\n";
  INFO(summaries);
  REQUIRE(back.diagnostics.size() == 3);
  for (const auto& d : back.diagnostics) {
    CHECK(d.code == "invalid_state");
    CHECK(d.location.line > 0);
  }
  std::map<std::string, const Diagnostic*> by_start;
  for (const auto& d : back.diagnostics) by_start[d.summary.substr(0, 12)] = &d;
  REQUIRE(by_start.count("\"instance.we"));
  CHECK(by_start["\"instance.we"]->summary == "\"instance.web[010]\" is not a resource address");
  CHECK(by_start["\"instance.we"]->detail == "the state writes it instance.web[10]");
  REQUIRE(by_start.count("instance.web"));
  CHECK(by_start["instance.web"]->summary.find("needs kind (instance)") != std::string::npos);
  REQUIRE(by_start.count("network.core"));
  CHECK(by_start["network.core"]->summary == "network.core is there twice");
  CHECK(back.state.resources.size() == 1);  // the one left is read

  // Not a pulled state at all: one diagnostic, at the file.
  for (const char* text : {"not json", "{}", "{\"format_version\": 2, \"resources\": []}"}) {
    PulledState bad = ParsePulledState(text, "x.json");
    REQUIRE(bad.diagnostics.size() == 1);
    CHECK(bad.diagnostics[0].summary.rfind("not a state printed by 'cairn state pull'", 0) == 0);
    CHECK(bad.diagnostics[0].location.file == "x.json");
  }
}

}  // namespace pulled_state_test
