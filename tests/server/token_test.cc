#include "server/token.h"

#include <catch2/catch.hpp>

#include "base/redact.h"

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
