#include "base/redact.h"

#include <catch2/catch.hpp>

namespace redact_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("registered secrets are replaced wherever they appear") {
  ClearSecretsForTesting();
  RegisterSecret("hunter2hunter2");
  CHECK(Redact("a hunter2hunter2 b hunter2hunter2") == "a [REDACTED] b [REDACTED]");
  ClearSecretsForTesting();
  CHECK(Redact("a hunter2hunter2") == "a hunter2hunter2");
}

TEST_CASE("short values are not treated as secrets") {
  ClearSecretsForTesting();
  RegisterSecret("abc");
  CHECK(Redact("abc abc") == "abc abc");
}

TEST_CASE("a bearer credential is redacted whatever its shape") {
  ClearSecretsForTesting();
  CHECK(Redact("Authorization: Bearer xyz.123-abc") == "Authorization: Bearer [REDACTED]");
  CHECK(Redact("authorization: bearer   opaque\"rest") ==
        "authorization: bearer   [REDACTED]\"rest");
  CHECK(Redact("a Bearer") == "a Bearer");
  // Wherever it begins: first, after other b's, twice, at the very end.
  CHECK(Redact("bearer abc") == "bearer [REDACTED]");
  CHECK(Redact("bb Bb bEARER abc") == "bb Bb bEARER [REDACTED]");
  CHECK(Redact("x: bearer a1 bearer b2") == "x: bearer [REDACTED] bearer [REDACTED]");
  CHECK(Redact("bearerbearer q") == "bearerbearer [REDACTED]");  // the second one
  CHECK(Redact("ends with bearer q") == "ends with bearer [REDACTED]");
  CHECK(Redact("b") == "b");
  CHECK(Redact("") == "");
}

TEST_CASE("strings shaped like Cairn tokens are redacted and detected") {
  ClearSecretsForTesting();
  const std::string token = "cairn_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_";
  CHECK(Redact("token=" + token + " end") == "token=[REDACTED] end");
  CHECK(LooksLikeApiToken("x " + token));
  CHECK_FALSE(LooksLikeApiToken("cairn_short"));
  CHECK_FALSE(LooksLikeApiToken("mycairn_AbCdEfGhIjKlMnOpQrStUvWxYz"));
  CHECK(Redact("cairn_short") == "cairn_short");
}

TEST_CASE("a secret containing another is replaced whole") {
  ClearSecretsForTesting();
  RegisterSecret("abcdef");
  RegisterSecret("abcdef-longer");
  CHECK(Redact("abcdef-longer") == "[REDACTED]");
  ClearSecretsForTesting();
}

TEST_CASE("prose about bearer tokens is not mistaken for a credential") {
  CHECK(Redact("401 unauthorized: invalid bearer token") ==
        "401 unauthorized: invalid bearer token");
  CHECK(Redact("send a Bearer token, or Bearer credentials.") ==
        "send a Bearer token, or Bearer credentials.");
  CHECK(Redact("Authorization: Bearer tokenXYZ") == "Authorization: Bearer [REDACTED]");
  CHECK(Redact("Bearer token-1234") == "Bearer [REDACTED]");
}

}  // namespace redact_test
