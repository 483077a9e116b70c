#include "base/log.h"

#include <catch2/catch.hpp>

namespace log_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("the log level comes from the flag, then CAIRN_LOG, then warn") {
  CHECK(*ResolveLogLevel("", nullptr) == "warn");
  CHECK(*ResolveLogLevel("", "debug") == "debug");
  CHECK(*ResolveLogLevel("error", "debug") == "error");
  auto bad = ResolveLogLevel("loud", nullptr);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("loud") != std::string::npos);
}

}  // namespace log_test
