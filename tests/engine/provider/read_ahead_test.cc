// Listings read ahead: each answers the first listing of its kind, once;
// a failed one is not kept; everything else goes to the wrapped provider.
#include "engine/provider/read_ahead.h"

#include <catch2/catch.hpp>

#include "tests/engine/support/fake_provider.h"

namespace read_ahead_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

Value Network(const std::string& name) {
  return {{"name", name}, {"region", "eu-central"}, {"cidr", "10.1.0.0/16"}};
}

}  // namespace

TEST_CASE("a listing read ahead answers the first listing of its kind, and only that one") {
  auto owned = std::make_unique<FakeProvider>();
  FakeProvider& api = *owned;
  api.Inject("network", Network("a"));
  ReadAheadProvider provider(std::move(owned));
  CHECK(provider.ReadAhead({"network", "volume"}, {}) == 2);
  CHECK(provider.kept() == 2);

  // Made after the read: the first listing is the one read before it.
  api.Inject("network", Network("b"));
  ListResponse first = provider.List({"network"}, {});
  REQUIRE(first.status.ok());
  CHECK(first.resources.size() == 1);
  CHECK(first.requests == 1);
  CHECK(provider.kept() == 1);
  // The next one is read now.
  ListResponse second = provider.List({"network"}, {});
  REQUIRE(second.status.ok());
  CHECK(second.resources.size() == 2);
  // A kind not read ahead is read when asked for.
  CHECK(provider.List({"ssh_key"}, {}).status.ok());
  CHECK(provider.kept() == 1);
  CHECK(provider.List({"volume"}, {}).resources.empty());
  CHECK(provider.kept() == 0);
}

TEST_CASE("a listing that failed ahead is read again when asked for") {
  auto owned = std::make_unique<FakeProvider>();
  FakeProvider& api = *owned;
  api.Inject("network", Network("a"));
  ReadAheadProvider provider(std::move(owned));
  api.SetUnreachable(true);
  CHECK(provider.ReadAhead({"network"}, {}) == 1);
  CHECK(provider.kept() == 0);
  api.SetUnreachable(false);
  ListResponse listed = provider.List({"network"}, {});
  REQUIRE(listed.status.ok());
  CHECK(listed.resources.size() == 1);
}

TEST_CASE("reads, writes and a search by name go to the wrapped provider") {
  auto owned = std::make_unique<FakeProvider>();
  FakeProvider& api = *owned;
  std::string id = api.Inject("network", Network("a"));
  ReadAheadProvider provider(std::move(owned));
  REQUIRE(provider.ReadAhead({"network"}, {}) == 1);
  api.Inject("network", Network("b"));
  // Recovery searches what is live now, not what was read ahead.
  ListResponse found = provider.FindByName("network", "b", {});
  REQUIRE(found.status.ok());
  CHECK(found.resources.size() == 1);
  CHECK(provider.kept() == 1);
  ReadResponse read = provider.Read({"network", id}, {});
  REQUIRE(read.status.ok());
  REQUIRE(read.resource.has_value());
  CHECK(StringMember(read.resource->attributes, "name") == "a");
}

}  // namespace read_ahead_test
