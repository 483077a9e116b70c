// ApplySender alone, against the FakeProvider: a journaled request sent as
// it is, and what came of it.
#include "engine/apply/apply_sender.h"

#include <catch2/catch.hpp>

#include "engine/apply/apply_journal.h"
#include "tests/engine/support/fake_provider.h"

namespace apply_sender_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::FakeProvider;

namespace {

struct SenderFixture {
  FakeProvider provider;
  ApplyOptions options;
  ApplySender sender{provider, options};

  PlannedChange Change(const std::string& address, Action action, const std::string& id = "") {
    PlannedChange c;
    c.address = address;
    c.parsed_address = *ResourceAddress::Parse(address);
    c.kind = c.parsed_address.kind;
    c.action = action;
    c.remote_id = id;
    return c;
  }
  // The request of `op` on `c` with `spec`, journaled as `seq`.
  std::pair<JournalEntry, PreparedMutation> Journal(const PlannedChange& c, Action op, Value spec,
                                                    int64_t seq = 1) {
    auto prepared = provider.Prepare({c.kind, op, op == Action::kCreate ? "" : c.remote_id, spec});
    REQUIRE(prepared.ok());
    return {JournalEntryFor(c, op, false, seq, "lin", *prepared, 0), *prepared};
  }
};

}  // namespace

TEST_CASE_METHOD(SenderFixture, "apply sender: a create is sent with its key, and its wait named") {
  options.create_timeout = std::chrono::seconds(42);
  PlannedChange c = Change("network.core", Action::kCreate);
  auto [entry, prepared] = Journal(c, Action::kCreate, {{"name", "core"}});
  std::vector<std::string> keys;
  provider.on_send = [&](const std::string& key) { keys.push_back(key); };
  SendOutcome out = sender.Send(c, Action::kCreate, false, entry, prepared);
  REQUIRE(out.status.ok());
  CHECK(keys == std::vector<std::string>{entry.idempotency_key});
  REQUIRE(out.sent);
  CHECK(out.sent->kind == "network");
  CHECK(provider.resources("network").count(out.sent->id) == 1);
  CHECK_FALSE(out.already_gone);
  CHECK(out.wait.kind == "network");
  CHECK(out.wait.id == out.sent->id);
  CHECK(out.wait.target == WaitTarget::kReady);
  CHECK(out.wait.timeout == std::chrono::seconds(42));
  REQUIRE(out.wait.just_created);
  CHECK(out.wait.just_created->id == out.sent->id);
}

TEST_CASE_METHOD(SenderFixture, "apply sender: a refusal is definite, a lost response unknown") {
  PlannedChange c = Change("network.core", Action::kCreate);
  auto [entry, prepared] = Journal(c, Action::kCreate, {{"name", "core"}});
  SECTION("refused") {
    provider.RefuseName("core");
    SendOutcome out = sender.Send(c, Action::kCreate, false, entry, prepared);
    CHECK_FALSE(out.status.ok());
    CHECK_FALSE(OutcomeUnknown(out.status));
  }
  SECTION("the response lost after it took effect") {
    provider.LoseResponses(1);
    SendOutcome out = sender.Send(c, Action::kCreate, false, entry, prepared);
    CHECK_FALSE(out.status.ok());
    CHECK(OutcomeUnknown(out.status));
    CHECK(provider.resources("network").size() == 1);
    SECTION("sent again with the same key, the API replays what it made") {
      SendOutcome again = sender.Send(c, Action::kCreate, true, entry, prepared);
      REQUIRE(again.status.ok());
      CHECK(provider.resources("network").size() == 1);
      CHECK(again.how == "adopted the API's replayed response");
    }
  }
}

TEST_CASE_METHOD(SenderFixture, "apply sender: a delete waits until deleted, unless already gone") {
  std::string id = provider.Inject("network", {{"name", "core"}, {"status", "ready"}});
  PlannedChange c = Change("network.core", Action::kDelete, id);
  auto [entry, prepared] = Journal(c, Action::kDelete, Value::object());
  SendOutcome out = sender.Send(c, Action::kDelete, false, entry, prepared);
  REQUIRE(out.status.ok());
  CHECK_FALSE(out.already_gone);
  CHECK(out.wait.id == id);
  CHECK(out.wait.target == WaitTarget::kDeleted);
  CHECK(out.how == "delete completed");
  SendOutcome again = sender.Send(c, Action::kDelete, true, entry, prepared);
  REQUIRE(again.status.ok());
  CHECK(again.already_gone);
}

TEST_CASE_METHOD(SenderFixture,
                 "apply sender: an update is sent to its object, and its wait named") {
  std::string id = provider.Inject("network", {{"name", "core"}, {"status", "ready"}});
  PlannedChange c = Change("network.core", Action::kUpdate, id);
  c.before = {{"name", "core"}};
  auto [entry, prepared] = Journal(c, Action::kUpdate, {{"cidr", "10.0.0.0/16"}});
  SendOutcome out = sender.Send(c, Action::kUpdate, false, entry, prepared);
  REQUIRE(out.status.ok());
  REQUIRE(out.sent);
  CHECK(out.sent->id == id);
  CHECK(out.wait.id == id);
  CHECK(provider.calls() == std::vector<std::string>{"update network " + id});
}

TEST_CASE_METHOD(
    SenderFixture,
    "apply sender: an interrupted create the API cannot deduplicate is found by name") {
  options.find_by_name_kinds = {"network"};
  PlannedChange c = Change("network.core", Action::kCreate);
  auto [entry, prepared] = Journal(c, Action::kCreate, {{"name", "core"}, {"region", "eu"}});
  SECTION("its own object is adopted, nothing sent") {
    std::string id = provider.Inject("network", {{"name", "core"}, {"region", "eu"}});
    SendOutcome out = sender.Send(c, Action::kCreate, true, entry, prepared);
    REQUIRE(out.status.ok());
    REQUIRE(out.sent);
    CHECK(out.sent->id == id);
    CHECK(out.how == "found by name");
    CHECK_FALSE(out.wait.just_created);
    CHECK(provider.mutations_sent() == 0);
  }
  SECTION("a same-named object that differs is someone else's: the create is sent") {
    provider.Inject("network", {{"name", "core"}, {"region", "us"}});
    SendOutcome out = sender.Send(c, Action::kCreate, true, entry, prepared);
    REQUIRE(out.status.ok());
    CHECK(out.how == "re-sent with its original idempotency key");
    CHECK(provider.mutations_sent() == 1);
  }
  SECTION("a run that was not interrupted never looks") {
    provider.Inject("network", {{"name", "core"}, {"region", "eu"}});
    SendOutcome out = sender.Send(c, Action::kCreate, false, entry, prepared);
    REQUIRE(out.status.ok());
    CHECK(provider.mutations_sent() == 1);
  }
}

TEST_CASE("apply sender: a network failure or a deadline leaves the outcome unknown") {
  CHECK(OutcomeUnknown(Status::Unavailable("x")));
  CHECK(OutcomeUnknown(Status::DeadlineExceeded("x")));
  CHECK(OutcomeUnknown(Status::Internal("x")));
  CHECK_FALSE(OutcomeUnknown(Status::InvalidArgument("x")));
  CHECK_FALSE(OutcomeUnknown(Status::Conflict("x")));
  CHECK_FALSE(OutcomeUnknown(Status::NotFound("x")));
}

}  // namespace apply_sender_test
