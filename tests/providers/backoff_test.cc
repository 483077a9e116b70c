#include "providers/backoff.h"

#include <catch2/catch.hpp>

namespace backoff_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using std::chrono::milliseconds;

TEST_CASE("backoff grows exponentially within jitter bounds and is capped") {
  BackoffPolicy p{milliseconds(100), milliseconds(1000), 2.0};
  CHECK(BackoffDelay(p, 0, 0.0) == milliseconds(50));
  CHECK(BackoffDelay(p, 0, 0.999999).count() == 99);
  CHECK(BackoffDelay(p, 2, 0.0) == milliseconds(200));
  CHECK(BackoffDelay(p, 10, 0.0) == milliseconds(500));
  CHECK(BackoffDelay(p, 1000, 1.0) == milliseconds(1000));
}

TEST_CASE("Retry-After overrides the computed delay") {
  BackoffPolicy p;
  CHECK(BackoffDelay(p, 0, 0.5, std::chrono::seconds(3)) == milliseconds(3000));
}

}  // namespace backoff_test
