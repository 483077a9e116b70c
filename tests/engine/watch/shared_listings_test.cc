// Listings shared between the runs of stacks of one project: read once per
// max_age, one reader at a time, failures not kept.
#include "engine/watch/shared_listings.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "tests/engine/support/fake_provider.h"

namespace shared_listings_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;
using namespace std::chrono_literals;

TEST_CASE("a kind listed for one run serves the others until it is max_age old") {
  FakeProvider api;
  api.Inject("network", {{"name", "a"}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}});
  SharedListings shared(api);
  ListingSharingProvider one(api, shared, 1h), two(api, shared, 1h), fresh(api, shared, 0ms);
  ListResponse first = one.List({"network"}, {});
  REQUIRE(first.status.ok());
  CHECK(first.resources.size() == 1);
  CHECK(first.requests >= 1);
  CHECK(shared.reads() == 1);
  // Another stack's run: served again, no request.
  api.Inject("network", {{"name", "b"}, {"region", "eu-central"}, {"cidr", "10.2.0.0/16"}});
  ListResponse again = two.List({"network"}, {});
  CHECK(again.resources.size() == 1);
  CHECK(again.requests == 0);
  CHECK(shared.reads() == 1);
  CHECK(two.list_requests() == 0);
  CHECK(one.list_requests() == first.requests);
  // Older than a run accepts: read again, and the new object is there.
  ListResponse now = fresh.List({"network"}, {});
  CHECK(now.resources.size() == 2);
  CHECK(shared.reads() == 2);
  // Another kind is its own listing.
  CHECK(one.List({"volume"}, {}).status.ok());
  CHECK(shared.reads() == 3);
}

TEST_CASE("a failed listing is not served again") {
  FakeProvider api;
  SharedListings shared(api);
  ListingSharingProvider p(api, shared, 1h);
  api.SetUnreachable(true);
  CHECK_FALSE(p.List({"network"}, {}).status.ok());
  api.SetUnreachable(false);
  CHECK(p.List({"network"}, {}).status.ok());
  CHECK(shared.reads() == 2);
}

TEST_CASE("runs asking for one listing at once read it once") {
  FakeProvider api;
  for (int i = 0; i < 50; ++i) {
    api.Inject(
        "network",
        {{"name", "n" + std::to_string(i)}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}});
  }
  SharedListings shared(api);
  std::vector<std::jthread> runs;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    runs.emplace_back([&] {
      ListingSharingProvider p(api, shared, 1h);
      ListResponse r = p.List({"network"}, {});
      if (r.status.ok() && r.resources.size() == 50) ++ok;
    });
  }
  runs.clear();
  CHECK(ok == 8);
  CHECK(shared.reads() == 1);
}

}  // namespace shared_listings_test
