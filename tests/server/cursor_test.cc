#include "server/cursor.h"

#include <catch2/catch.hpp>

using namespace cairn::server;

TEST_CASE("cursors round-trip and are opaque base64url") {
  for (int64_t seq : {int64_t{0}, int64_t{1}, int64_t{42}, int64_t{9007199254740993}}) {
    std::string c = EncodeCursor(seq);
    CHECK(c.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
          std::string::npos);
    auto back = DecodeCursor(c);
    REQUIRE(back.has_value());
    CHECK(*back == seq);
  }
}

TEST_CASE("malformed cursors are refused") {
  CHECK_FALSE(DecodeCursor("").has_value());
  CHECK_FALSE(DecodeCursor("!!!").has_value());
  CHECK_FALSE(DecodeCursor("abc").has_value());
  CHECK_FALSE(DecodeCursor(Base64UrlEncode("v1:-5")).has_value());
  CHECK_FALSE(DecodeCursor(Base64UrlEncode("v1:12x")).has_value());
  CHECK_FALSE(DecodeCursor(Base64UrlEncode("v2:12")).has_value());
  CHECK_FALSE(DecodeCursor(Base64UrlEncode("v1:")).has_value());
  CHECK_FALSE(DecodeCursor(EncodeCursor(7) + "=").has_value());
}

TEST_CASE("base64url matches RFC 4648 vectors") {
  CHECK(Base64UrlEncode("") == "");
  CHECK(Base64UrlEncode("f") == "Zg");
  CHECK(Base64UrlEncode("foob") == "Zm9vYg");
  CHECK(Base64UrlEncode("\xfb\xff") == "-_8");
  CHECK(Base64UrlDecode("Zm9vYg") == std::optional<std::string>("foob"));
  CHECK(Base64UrlDecode("-_8") == std::optional<std::string>("\xfb\xff"));
}
