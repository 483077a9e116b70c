// Scoped tokens through a real `cairn serve`: a token whose tokens-file line
// says `read` reads everything its project may, and gets 403
// token_read_only on every mutating route of both APIs (the route table
// itself is walked, so a new route is covered); the server logs which token
// made each mutation by its id, never the token.
#include <catch2/catch.hpp>
#include <sstream>

#include "server/api.h"
#include "server/token.h"
#include "tests/server/serve_fixture.h"

namespace serve_token_scope_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

// `pattern` with its parameters filled: {id} with `id`, {action} with a
// valid action.
std::string FillRoute(std::string pattern, const std::string& id) {
  for (auto [param, value] : {std::pair<std::string, std::string>{"{id}", id},
                              std::pair<std::string, std::string>{"{action}", "start"}}) {
    for (size_t at; (at = pattern.find(param)) != std::string::npos;) {
      pattern.replace(at, param.size(), value);
    }
  }
  return pattern;
}

}  // namespace

TEST_CASE("a read token reads, and is refused on every mutating route of both APIs") {
  ServeFixture server({"--log-level", "info"});
  auto writer = server.Client(kDevToken);
  auto reader = server.Client(kReadToken);
  // Something of the project's to read, made with the write token.
  auto made = writer->Request("POST", "/api/v1/networking",
                              R"({"name": "core", "region": "eu-central", "cidr": "10.20.0.0/16"})",
                              {"Idempotency-Key: scope-1"});
  REQUIRE(made.status == 201);
  const std::string id = made.json()["network"]["publicId"].get<std::string>();

  auto listed = reader->Request("GET", "/api/v1/networking");
  CHECK(listed.status == 200);
  CHECK(listed.body.find(id) != std::string::npos);
  CHECK(reader->Request("GET", "/api/v1/networking/" + id).status == 200);

  size_t mutating = 0;
  for (const auto& [pattern, allow] : cairn::server::Api::Routes()) {
    std::stringstream methods(allow);
    for (std::string m; std::getline(methods, m, ',');) {
      m.erase(0, m.find_first_not_of(' '));
      if (m == "GET" || m == "HEAD") continue;
      ++mutating;
      const std::string path = FillRoute(pattern, id);
      INFO(m << " " << path);
      auto r = reader->Request(m, path, m == "DELETE" ? "" : "{}", {"Idempotency-Key: ro-key"});
      CHECK(r.status == 403);
      CHECK(r.json()["error"]["code"] == "token_read_only");
    }
  }
  CHECK(mutating >= 10);  // create, update, delete of each kind, actions
  // Nothing changed: the network is still there, as it was.
  auto after = writer->Request("GET", "/api/v1/networking/" + id);
  REQUIRE(after.status == 200);
  CHECK(after.json()["network"]["name"] == "core");

  // The write token's mutation is logged with its id, never the token.
  auto renamed = writer->Request("PATCH", "/api/v1/networking/" + id, R"({"name": "core2"})",
                                 {"Idempotency-Key: scope-2"});
  CHECK(renamed.status == 200);
  const std::string write_id = cairn::server::TokenId(cairn::server::Sha256Hex(kDevToken));
  const std::string read_id = cairn::server::TokenId(cairn::server::Sha256Hex(kReadToken));
  std::string log;
  PollUntil([&] { return log = server.process().Stderr(); },
            [&](const std::string& l) { return l.find("PATCH /api/v1/networking/") != l.npos; });
  CHECK(log.find("PATCH /api/v1/networking/" + id + " by token " + write_id + " of project dev") !=
        std::string::npos);
  CHECK(log.find("token " + read_id + " of project dev may only read") != std::string::npos);
  CHECK(log.find(kDevToken) == std::string::npos);
  CHECK(log.find(kReadToken) == std::string::npos);
}

}  // namespace serve_token_scope_test
