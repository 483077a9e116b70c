// base/discard.h: a value left to the process's end is never destroyed,
// except in a sanitized build, where leak checks must see everything.
#include "base/discard.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace discard_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

int destroyed = 0;

// Counts the destructions of the objects that still own their value.
struct Tracked {
  std::vector<std::string> value{"a", "b"};
  bool owns = true;
  Tracked() = default;
  Tracked(Tracked&& other) noexcept : value(std::move(other.value)), owns(other.owns) {
    other.owns = false;
  }
  ~Tracked() {
    if (owns) ++destroyed;
  }
};

}  // namespace

TEST_CASE("DiscardAtExit takes the value and leaves it undestroyed, unless sanitized") {
  destroyed = 0;
  Tracked held;
  DiscardAtExit(std::move(held));
  CHECK_FALSE(held.owns);  // moved from: what the caller frees is empty
  CHECK(held.value.empty());
#if defined(CAIRN_SANITIZED)
  CHECK(destroyed == 1);  // freed at once, for the leak checker
#else
  CHECK(destroyed == 0);  // still alive, and never destroyed
#endif
}

}  // namespace discard_test
