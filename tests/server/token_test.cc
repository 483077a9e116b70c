#include "server/token.h"

#include <catch2/catch.hpp>

#include "base/redact.h"
#include "server/server.h"
#include "tests/support/process.h"

namespace token_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::server;

TEST_CASE("SHA-256 matches the FIPS 180-2 test vectors") {
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("generated tokens are distinct, well shaped and recognised as secrets") {
  std::string a = GenerateToken(), b = GenerateToken();
  CHECK(a != b);
  CHECK(a.rfind("cairn_", 0) == 0);
  CHECK(a.size() == 6 + 43);
  CHECK(cairn::LooksLikeApiToken(a));
}

TEST_CASE("a tokens file line takes an optional scope, read or write") {
  cairn::testing::TempDir dir;
  const std::string a(64, 'a'), b(64, 'b'), c(64, 'c');
  const std::string path = dir.path() + "/tokens";
  cairn::testing::WriteFile(path, "# ci plans with a read token\nweb " + a + "\nweb " + b +
                                      " read\nweb " + c + " write\n");
  auto grants = ReadTokensFile(path);
  REQUIRE(grants.ok());
  REQUIRE(grants->size() == 3);
  CHECK((*grants)[0].project == "web");
  CHECK((*grants)[0].sha256 == a);
  CHECK((*grants)[0].scope == TokenScope::kWrite);  // today's files keep working
  CHECK((*grants)[1].scope == TokenScope::kRead);
  CHECK((*grants)[2].scope == TokenScope::kWrite);

  cairn::testing::WriteFile(path, "web " + a + " admin\n");
  auto bad = ReadTokensFile(path);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        path +
            ":1: expected 'PROJECT SHA256_HEX [read|write]' (64 lowercase hex digits; the scope "
            "defaults to write)");
  cairn::testing::WriteFile(path, "web " + a + " read\nweb " + a + "\n");
  auto twice = ReadTokensFile(path);
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message() ==
        path + ":2: this token hash is already given scope read (line 1): a token has one scope");
  CHECK(TokenId(a) == std::string(12, 'a'));
}

}  // namespace token_test
