#include "server/cursor.h"

#include <catch2/catch.hpp>

namespace cursor_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::server;

TEST_CASE("cursors round-trip a record id and are opaque base64url") {
  for (std::string id : {std::string(32, '0'), std::string("0123456789abcdef0123456789abcdef"),
                         std::string(32, 'f')}) {
    std::string c = EncodeCursor(id);
    CHECK(c.size() == 22);
    CHECK(c.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
          std::string::npos);
    CHECK(c.find(id) == std::string::npos);
    auto back = DecodeCursor(c);
    REQUIRE(back.has_value());
    CHECK(*back == id);
  }
}

TEST_CASE("malformed cursors are refused, old sequence cursors too") {
  const std::string id = "0123456789abcdef0123456789abcdef";
  CHECK_FALSE(DecodeCursor("").has_value());
  CHECK_FALSE(DecodeCursor("!!!").has_value());
  CHECK_FALSE(DecodeCursor("abc").has_value());
  CHECK_FALSE(DecodeCursor(Base64UrlEncode("v1:12")).has_value());  // a server-wide count
  CHECK_FALSE(DecodeCursor(Base64UrlEncode(std::string(15, 'x'))).has_value());
  CHECK_FALSE(DecodeCursor(Base64UrlEncode(std::string(17, 'x'))).has_value());
  CHECK_FALSE(DecodeCursor(EncodeCursor(id) + "=").has_value());
  CHECK_FALSE(DecodeCursor(EncodeCursor(id) + "A").has_value());
}

TEST_CASE("base64url matches RFC 4648 vectors") {
  CHECK(Base64UrlEncode("") == "");
  CHECK(Base64UrlEncode("f") == "Zg");
  CHECK(Base64UrlEncode("foob") == "Zm9vYg");
  CHECK(Base64UrlEncode("\xfb\xff") == "-_8");
  CHECK(Base64UrlDecode("Zm9vYg") == std::optional<std::string>("foob"));
  CHECK(Base64UrlDecode("-_8") == std::optional<std::string>("\xfb\xff"));
}

}  // namespace cursor_test
