#include "server/idempotency.h"

#include <catch2/catch.hpp>

#include "base/duration.h"
#include "server/faults.h"
#include "server/record_ids.h"

namespace idempotency_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::server;
using cairn::ParseDuration;  // the one grammar, base/duration.h

TEST_CASE("idempotency keys: printable ASCII, at most 255 characters") {
  CHECK(IsValidIdempotencyKey("a"));
  CHECK(IsValidIdempotencyKey(std::string(255, 'k')));
  CHECK_FALSE(IsValidIdempotencyKey(std::string(256, 'k')));
  CHECK_FALSE(IsValidIdempotencyKey(""));
  CHECK_FALSE(IsValidIdempotencyKey("has space"));
  CHECK(IdempotencyScope("p", "POST", "/a", "k") != IdempotencyScope("q", "POST", "/a", "k"));
  CHECK(IdempotencyScope("p", "POST", "/a", "k") != IdempotencyScope("p", "PATCH", "/a", "k"));
}

TEST_CASE("resource ids: both forms parse to the same hex") {
  std::string hex = NewResourceHex();
  CHECK(hex.size() == 32);
  CHECK(hex[12] == '4');  // version 4
  std::string uuid = HexToUuid(hex);
  CHECK(uuid.size() == 36);
  CHECK(ParseResourceId(uuid, "inst") == hex);
  CHECK(ParseResourceId("inst_" + hex, "inst") == hex);
  CHECK_FALSE(ParseResourceId("net_" + hex, "inst").has_value());
  // "net_" + 32 hex is 36 characters, like a UUID: still a prefixed id.
  CHECK(ParseResourceId("net_" + hex, "net") == hex);
  CHECK_FALSE(ParseResourceId("inst_" + hex.substr(1), "inst").has_value());
  CHECK(IsSaneRequestId("abc-1.2_3"));
  CHECK_FALSE(IsSaneRequestId("bad id"));
  CHECK_FALSE(IsSaneRequestId(std::string(129, 'a')));
}

TEST_CASE("durations and fault specs parse, and bad ones are refused") {
  CHECK(ParseDuration("0")->count() == 0);
  CHECK(ParseDuration("500ms")->count() == 500);
  CHECK(ParseDuration("2s")->count() == 2000);
  CHECK(ParseDuration("24h")->count() == 86400000);
  CHECK_FALSE(ParseDuration("2").ok());
  CHECK_FALSE(ParseDuration("-1s").ok());
  auto f =
      ParseFaultSpec("error500=0.1,drop_after=0.05,provision_failed=1,mutation_delay=2s,seed=42");
  REQUIRE(f.ok());
  CHECK(f->error500 == Approx(0.1));
  CHECK(f->drop_after == Approx(0.05));
  CHECK(f->provision_failed == 1.0);
  CHECK(f->mutation_delay.count() == 2000);
  CHECK(f->seed == 42);
  CHECK_FALSE(ParseFaultSpec("nonsense=1").ok());
  CHECK_FALSE(ParseFaultSpec("error500=2").ok());
  CHECK_FALSE(ParseFaultSpec("error500").ok());
  CHECK_FALSE(ParseFaultSpec("error500=0.6,error503=0.6").ok());
  FaultInjector always(*ParseFaultSpec("error503=1,seed=1"));
  CHECK(always.PickRequestFault(false) == RequestFault::kError503);
  FaultInjector drop(*ParseFaultSpec("drop_after=1,seed=1"));
  CHECK(drop.PickRequestFault(false) == RequestFault::kNone);
  CHECK(drop.PickRequestFault(true) == RequestFault::kDropAfter);
}

}  // namespace idempotency_test
