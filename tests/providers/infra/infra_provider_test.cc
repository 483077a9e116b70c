#include "providers/infra/infra_provider.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <catch2/catch.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "base/clock.h"
#include "base/redact.h"
#include "tests/providers/fake_transport.h"
#include "tests/providers/test_descriptors.h"

namespace infra_provider_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;
using std::chrono::seconds;

namespace {

const std::string kToken = "cairn_TESTtokenTESTtokenTESTtoken0123";
const std::string kUuid = "0123abcd-4567-89ef-0123-456789abcdef";
const std::string kUuid2 = "00112233-4455-6677-8899-aabbccddeeff";

struct Fixture {
  FakeTransport transport;
  ManualClock clock;
  InfraProvider provider;

  explicit Fixture(InfraProvider::Options o = DefaultOptions())
      : provider(std::move(o), TestKinds(), transport, clock) {}

  static InfraProvider::Options DefaultOptions() {
    InfraProvider::Options o;
    o.endpoint = "http://api.test/";
    o.token = kToken;
    o.operation_deadline = seconds(60);
    // These tests teach the first-poll estimate from 5 ms (see the tests of
    // waits after creates); the default starts at nothing.
    o.first_look_initial = std::chrono::milliseconds(5);
    return o;
  }
};

std::string InstanceJson(const std::string& id, const std::string& status, bool edit = true,
                         bool del = true) {
  Value v = {{"publicId", id},
             {"name", "web"},
             {"regionKey", "fra1"},
             {"planKey", "s-1"},
             {"imageKey", "debian-12"},
             {"sshKeys", Value::array()},
             {"networkId", nullptr},
             {"status", "queued"},
             {"createdAt", "2026-01-01T00:00:00Z"},
             {"customerStatus",
              {{"status", status},
               {"reasonCode", status == "failed" ? "capacity_unavailable" : "ok"},
               {"guidance", status == "failed" ? "try another region" : "wait"},
               {"actions", {{"edit", edit}, {"delete", del}}}}}};
  return Value{{"instance", v}}.dump();
}

// A listing of one page: the instance `id`, running, every action offered.
std::string OnePageListing(const std::string& id) {
  return Value{{"data", {Value::parse(InstanceJson(id, "running"))["instance"]}},
               {"pagination", {{"limit", 200}, {"next", nullptr}}}}
      .dump();
}

std::string KeyJson(const std::string& id, const std::string& name) {
  return Value{{"id", id},
               {"name", name},
               {"public_key", "ssh-ed25519 AAAA"},
               {"fingerprint", "SHA256:x"},
               {"created_at", "2026-01-01T00:00:00Z"}}
      .dump();
}

PreparedMutation PrepareOrDie(InfraProvider& p, const PrepareRequest& req) {
  auto m = p.Prepare(req);
  REQUIRE(m.ok());
  return *m;
}

PreparedMutation InstanceCreate(InfraProvider& p) {
  return PrepareOrDie(
      p, {"instance", Action::kCreate, "",
          Value{{"name", "web"}, {"region", "fra1"}, {"plan", "s-1"}, {"image", "debian-12"}}});
}

}  // namespace

TEST_CASE("Prepare builds the exact create, update and delete requests") {
  Fixture f;
  auto create = InstanceCreate(f.provider);
  CHECK(create.method == "POST");
  CHECK(create.path == "/api/v1/compute");
  CHECK(create.body == R"({"image":"debian-12","name":"web","plan":"s-1","region":"fra1"})");
  CHECK(create.id.empty());
  // Deterministic: the same spec gives the same bytes.
  CHECK(InstanceCreate(f.provider).body == create.body);

  auto update =
      PrepareOrDie(f.provider, {"instance", Action::kUpdate, kUuid, Value{{"plan", "s-2"}}});
  CHECK(update.method == "PATCH");
  CHECK(update.path == "/api/v1/compute/" + kUuid);
  CHECK(update.body == R"({"plan":"s-2"})");
  CHECK(update.id == kUuid);

  auto del = PrepareOrDie(f.provider, {"ssh_key", Action::kDelete, "key_1", {}});
  CHECK(del.method == "DELETE");
  CHECK(del.path == "/v1/ssh_keys/key_1");
  CHECK(del.body.empty());

  auto rename =
      PrepareOrDie(f.provider, {"network", Action::kUpdate, kUuid, Value{{"name", nullptr}}});
  CHECK(rename.body == R"({"name":null})");  // merge patch: null clears
  CHECK(f.transport.count() == 0);
}

TEST_CASE("Prepare refuses private keys, unknown values, bad ids and immutable updates") {
  Fixture f;
  const char* pem =
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE "
      "KEY-----\n";
  auto key = f.provider.Prepare(
      {"ssh_key", Action::kCreate, "", Value{{"name", "k"}, {"public_key", pem}}});
  REQUIRE_FALSE(key.ok());
  CHECK(key.status().code() == StatusCode::kInvalidArgument);
  CHECK(key.status().message().find("private key") != std::string::npos);
  CHECK(key.status().message().find("b3BlbnNza") == std::string::npos);  // never echoed

  auto rsa = f.provider.Prepare(
      {"ssh_key", Action::kCreate, "",
       Value{{"name", "k"}, {"public_key", "-----BEGIN RSA PRIVATE KEY-----\nMII"}}});
  CHECK_FALSE(rsa.ok());
  auto putty =
      f.provider.Prepare({"ssh_key", Action::kUpdate, "key_1",
                          Value{{"name", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none"}}});
  CHECK_FALSE(putty.ok());
  // A public key is fine.
  CHECK(f.provider
            .Prepare({"ssh_key", Action::kCreate, "",
                      Value{{"name", "k"}, {"public_key", "ssh-ed25519 AAAAC3Nza me@host"}}})
            .ok());

  auto unknown =
      f.provider.Prepare({"instance", Action::kCreate, "",
                          Value{{"name", "web"}, {"region", "fra1"}, {"network", UnknownValue()}}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("network") != std::string::npos);
  auto nested = f.provider.Prepare(
      {"firewall", Action::kCreate, "",
       Value{{"name", "fw"}, {"instances", Value::array({"x", UnknownValue()})}}});
  CHECK_FALSE(nested.ok());

  CHECK_FALSE(f.provider.Prepare({"instance", Action::kUpdate, "../x", Value{{"name", "a"}}}).ok());
  auto immutable =
      f.provider.Prepare({"instance", Action::kUpdate, kUuid, Value{{"region", "ams3"}}});
  REQUIRE_FALSE(immutable.ok());
  CHECK(immutable.status().message().find("region") != std::string::npos);
  CHECK_FALSE(f.provider.Prepare({"instance", Action::kUpdate, kUuid, Value::object()}).ok());
  CHECK_FALSE(f.provider.Prepare({"bucket", Action::kCreate, "", Value::object()}).ok());
  CHECK_FALSE(f.provider.Prepare({"instance", Action::kCreate, "", Value{{"nmae", "x"}}}).ok());
  CHECK(f.transport.count() == 0);
}

TEST_CASE("a private key in a journaled body is refused with zero requests sent") {
  Fixture f;
  PreparedMutation m;
  m.kind = "ssh_key";
  m.action = Action::kCreate;
  m.method = "POST";
  m.path = "/v1/ssh_keys";
  m.body = R"({"name":"k","public_key":"-----BEGIN PRIVATE KEY-----\nMC4CAQ"})";
  auto r = f.provider.Create({m, "key-1"}, {});
  CHECK(r.status.code() == StatusCode::kInvalidArgument);
  CHECK(f.transport.count() == 0);

  // So are requests that do not match their kind's route, or carry no key.
  auto ok = InstanceCreate(f.provider);
  PreparedMutation elsewhere = ok;
  elsewhere.path = "/api/v1/storage";
  CHECK(f.provider.Create({elsewhere, "key-1"}, {}).status.code() == StatusCode::kInvalidArgument);
  CHECK(f.provider.Create({ok, ""}, {}).status.code() == StatusCode::kInvalidArgument);
  CHECK(f.transport.count() == 0);
}

TEST_CASE("create sends the headers and maps the enveloped answer") {
  Fixture f;
  f.transport.Push(JsonAnswer(201, InstanceJson(kUuid, "pending")));
  auto m = InstanceCreate(f.provider);
  auto r = f.provider.Create({m, "lineage-1/instance.web/create/1"}, {});
  REQUIRE(r.status.ok());
  CHECK_FALSE(r.replayed);
  REQUIRE(r.resource);
  CHECK(r.resource->kind == "instance");
  CHECK(r.resource->id == kUuid);
  CHECK(r.resource->attributes["status"] == "pending");
  CHECK(r.resource->attributes["plan"] == "s-1");

  auto sent = f.transport.sent();
  REQUIRE(sent.size() == 1);
  const HttpRequest& req = sent[0];
  CHECK(req.method == "POST");
  CHECK(req.url == "http://api.test/api/v1/compute");
  CHECK(req.body == m.body);
  CHECK(HeaderOf(req, "Authorization") == "Bearer " + kToken);
  CHECK(HeaderOf(req, "Content-Type") == "application/json");
  CHECK(HeaderOf(req, "Accept") == "application/json");
  CHECK(HeaderOf(req, "Idempotency-Key") == "lineage-1/instance.web/create/1");
  CHECK_FALSE(HeaderOf(req, "X-Request-ID").empty());
  CHECK(req.timeout <= std::chrono::milliseconds(30'000));
}

TEST_CASE("every retry reuses the same key and body, byte for byte") {
  Fixture f;
  f.transport.Push(Dropped());
  f.transport.Push(ErrorAnswer(500, "internal_error", "boom"));
  f.transport.Push(ErrorAnswer(503, "service_unavailable", "busy"));
  f.transport.Push(RateLimited(3));
  f.transport.Push(ErrorAnswer(409, "idempotency_key_in_use", "still executing"));
  f.transport.Push(
      JsonAnswer(201, InstanceJson(kUuid, "pending"), {{"idempotent-replayed", "true"}}));
  auto m = InstanceCreate(f.provider);
  auto r = f.provider.Create({m, "key-42"}, {});
  REQUIRE(r.status.ok());
  CHECK(r.replayed);
  auto sent = f.transport.sent();
  REQUIRE(sent.size() == 6);
  std::set<std::string> request_ids;
  for (const auto& req : sent) {
    CHECK(req.method == "POST");
    CHECK(req.url == sent[0].url);
    CHECK(req.body == m.body);
    CHECK(HeaderOf(req, "Idempotency-Key") == "key-42");
    request_ids.insert(HeaderOf(req, "X-Request-ID"));
  }
  CHECK(request_ids.size() == 6);  // a fresh request id per attempt
  CHECK(f.clock.total_slept() >= seconds(3));
}

namespace {

HttpResponse KeyPage(const std::vector<Value>& keys) {
  return JsonAnswer(
      200,
      Value{{"data", keys}, {"pagination", {{"next_cursor", ""}, {"has_more", false}}}}.dump());
}

}  // namespace

TEST_CASE("a preview create whose answer was lost is found by name, not sent twice") {
  Fixture f;
  auto m = PrepareOrDie(f.provider, {"ssh_key", Action::kCreate, "",
                                     Value{{"name", "k"}, {"public_key", "ssh-ed25519 AAAA"}}});
  f.transport.Push(Dropped());  // the POST may or may not have been executed
  f.transport.Push(
      KeyPage({Value::parse(KeyJson("key_9", "other")), Value::parse(KeyJson("key_1", "k"))}));
  auto r = f.provider.Create({m, "key-1"}, {});
  REQUIRE(r.status.ok());
  REQUIRE(r.resource);
  CHECK(r.resource->id == "key_1");
  CHECK(r.found_by_name);
  auto sent = f.transport.sent();
  REQUIRE(sent.size() == 2);  // the POST, then one listing; no second POST
  CHECK(sent[0].method == "POST");
  CHECK(sent[1].method == "GET");
  CHECK(sent[1].url == "http://api.test/v1/ssh_keys?limit=200");
}

TEST_CASE("a preview create is sent again, same key and body, when nothing it made is found") {
  Fixture f;
  auto m = PrepareOrDie(f.provider, {"ssh_key", Action::kCreate, "",
                                     Value{{"name", "k"}, {"public_key", "ssh-ed25519 AAAA"}}});
  f.transport.Push(ErrorAnswer(503, "service_unavailable", "busy"));
  // Same name, another key: someone else's, not the result of this create.
  Value theirs = Value::parse(KeyJson("key_7", "k"));
  theirs["public_key"] = "ssh-ed25519 BBBB";
  f.transport.Push(KeyPage({theirs}));
  f.transport.Push(JsonAnswer(201, KeyJson("key_1", "k")));
  auto r = f.provider.Create({m, "key-1"}, {});
  REQUIRE(r.status.ok());
  CHECK(r.resource->id == "key_1");
  CHECK_FALSE(r.found_by_name);
  auto sent = f.transport.sent();
  REQUIRE(sent.size() == 3);
  CHECK(sent[2].method == "POST");
  CHECK(sent[2].body == sent[0].body);
  CHECK(HeaderOf(sent[2], "Idempotency-Key") == "key-1");

  // Once an attempt's outcome is unknown, every resend is preceded by a look,
  // even after an attempt that did nothing (429): the first may finish late.
  Fixture late;
  late.transport.Push(Dropped());
  late.transport.Push(KeyPage({}));  // not there yet
  late.transport.Push(RateLimited(1));
  late.transport.Push(KeyPage({Value::parse(KeyJson("key_1", "k"))}));  // now it is
  auto lr = late.provider.Create({m, "key-4"}, {});
  REQUIRE(lr.status.ok());
  CHECK(lr.found_by_name);
  CHECK(lr.resource->id == "key_1");
  std::vector<std::string> methods;
  for (const auto& req : late.transport.sent()) methods.push_back(req.method);
  CHECK(methods == std::vector<std::string>{"POST", "GET", "POST", "GET"});

  // A look that fails ends the create, outcome unknown, rather than risk a
  // second resource: the journal entry stays for recovery.
  Fixture blind;
  blind.transport.Push(Dropped());
  blind.transport.SetHandler([](const HttpRequest&) -> Result<HttpResponse> {
    return ErrorAnswer(500, "internal_error", "listing is down");
  });
  auto br = blind.provider.Create({m, "key-5"}, {});
  CHECK(br.status.code() == StatusCode::kUnavailable);
  CHECK(br.status.message().find("cannot be checked") != std::string::npos);
  CHECK_FALSE(br.resource);
  auto bs = blind.transport.sent();
  REQUIRE(bs.size() >= 2);
  for (size_t i = 1; i < bs.size(); ++i) CHECK(bs[i].method == "GET");  // never a second POST

  // A 429 is no unknown outcome (nothing was done): retried without a look.
  Fixture g;
  g.transport.Push(RateLimited(1));
  g.transport.Push(JsonAnswer(201, KeyJson("key_1", "k")));
  REQUIRE(g.provider.Create({m, "key-2"}, {}).status.ok());
  CHECK(g.transport.count() == 2);

  // The control plane deduplicates by key: a lost answer is simply re-sent.
  Fixture h;
  auto inst = InstanceCreate(h.provider);
  h.transport.Push(Dropped());
  h.transport.Push(JsonAnswer(201, InstanceJson(kUuid, "queued")));
  REQUIRE(h.provider.Create({inst, "key-3"}, {}).status.ok());
  auto hs = h.transport.sent();
  REQUIRE(hs.size() == 2);
  CHECK(hs[1].method == "POST");
}

TEST_CASE("429 waits exactly Retry-After") {
  Fixture f;
  f.transport.Push(RateLimited(7));
  f.transport.Push(RateLimited(2));
  f.transport.Push(JsonAnswer(200, KeyJson("key_1", "k")));
  auto r = f.provider.Read({"ssh_key", "key_1"}, {});
  REQUIRE(r.status.ok());
  CHECK(f.transport.count() == 3);
  CHECK(f.clock.total_slept() == seconds(9));
}

TEST_CASE("reads and listings give up at the read deadline, well before the mutation deadline") {
  auto o = Fixture::DefaultOptions();
  o.operation_deadline = seconds(600);
  o.read_deadline = seconds(20);
  Fixture f(o);
  f.transport.SetHandler([](const HttpRequest&) { return Dropped(); });
  auto list = f.provider.List({"instance"}, {});
  CHECK(list.status.code() == StatusCode::kDeadlineExceeded);
  CHECK(f.clock.total_slept() <= seconds(20));
  CHECK(f.clock.total_slept() >= seconds(10));
  auto before = f.clock.total_slept();
  CHECK(f.provider.Read({"ssh_key", "key_1"}, {}).status.code() == StatusCode::kDeadlineExceeded);
  CHECK(f.clock.total_slept() - before <= seconds(20));
  // Mutations keep the longer deadline.
  auto m = InstanceCreate(f.provider);
  before = f.clock.total_slept();
  CHECK(f.provider.Create({m, "key-1"}, {}).status.code() == StatusCode::kDeadlineExceeded);
  CHECK(f.clock.total_slept() - before > seconds(60));
}

TEST_CASE("an API that cannot be connected to fails a call after 3 attempts, in seconds") {
  auto o = Fixture::DefaultOptions();
  o.operation_deadline = seconds(600);
  Fixture f(o);
  f.transport.SetHandler([](const HttpRequest&) -> Result<HttpResponse> {
    return Status::Unreachable("cannot connect: Connection refused");
  });
  auto list = f.provider.List({"instance"}, {});
  CHECK(list.status.code() == StatusCode::kUnreachable);
  CHECK(list.status.message().find("cannot reach the API at http://api.test") != std::string::npos);
  CHECK(f.transport.count() == 3);
  CHECK(f.clock.total_slept() < seconds(2));
  // A mutation none of whose attempts was sent failed definitely: Unreachable.
  auto m = InstanceCreate(f.provider);
  CHECK(f.provider.Create({m, "key-1"}, {}).status.code() == StatusCode::kUnreachable);

  // One attempt that may have reached the API makes the outcome unknown.
  Fixture g(o);
  int n = 0;
  g.transport.SetHandler([&](const HttpRequest&) -> Result<HttpResponse> {
    if (n++ == 0) return Dropped();
    return Status::Unreachable("cannot connect: Connection refused");
  });
  auto m2 = InstanceCreate(g.provider);
  CHECK(g.provider.Create({m2, "key-2"}, {}).status.code() == StatusCode::kUnavailable);
}

TEST_CASE("an untrusted TLS certificate fails at the first attempt with a CA bundle hint") {
  Fixture f;
  f.transport.SetHandler([](const HttpRequest&) -> Result<HttpResponse> {
    return Status::FailedPrecondition(
        "TLS certificate not trusted: GET https://api.test/v1/instances: SSL certificate "
        "problem: unable to get local issuer certificate");
  });
  auto list = f.provider.List({"instance"}, {});
  CHECK(list.status.code() == StatusCode::kFailedPrecondition);
  CHECK(f.transport.count() == 1);  // retrying cannot help
  CHECK(f.clock.total_slept() == seconds(0));
  REQUIRE(list.diagnostics.size() == 1);
  CHECK(list.diagnostics[0].code == "tls_untrusted");
  CHECK(list.diagnostics[0].detail.find("CAIRN_CA_BUNDLE") != std::string::npos);
  // Nothing of a mutation was sent: it failed definitely, not unknown.
  auto m = InstanceCreate(f.provider);
  CHECK(f.provider.Create({m, "key-1"}, {}).status.code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("the per-operation deadline bounds retries") {
  Fixture f;
  f.transport.SetHandler(
      [](const HttpRequest&) { return ErrorAnswer(503, "service_unavailable", "busy"); });
  auto m = InstanceCreate(f.provider);
  auto r = f.provider.Create({m, "key-1"}, {});
  CHECK(r.status.code() == StatusCode::kDeadlineExceeded);
  CHECK(f.clock.total_slept() <= seconds(60));
  CHECK(f.clock.total_slept() >= seconds(30));  // it kept trying for a good while
  CHECK(f.transport.count() >= 4);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "service_unavailable");

  // A Retry-After beyond the deadline gives up at once rather than overrun it.
  Fixture g;
  g.transport.SetHandler([](const HttpRequest&) { return RateLimited(3600); });
  CHECK(g.provider.Read({"ssh_key", "key_1"}, {}).status.code() == StatusCode::kDeadlineExceeded);
  CHECK(g.transport.count() == 1);
  CHECK(g.clock.total_slept() == seconds(0));

  // Network errors are retried the same way.
  Fixture h;
  h.transport.SetHandler([](const HttpRequest&) { return Dropped(); });
  auto read = h.provider.Read({"ssh_key", "key_1"}, {});
  CHECK(read.status.code() == StatusCode::kDeadlineExceeded);
  REQUIRE(read.diagnostics.size() == 1);
  CHECK(read.diagnostics[0].code == "network_error");
}

TEST_CASE("other 4xx answers fail at once with the server's code and message") {
  Fixture f;
  f.transport.Push(ErrorAnswer(400, "validation_error", "plan: unknown plan key"));
  auto r = f.provider.Create({InstanceCreate(f.provider), "key-1"}, {});
  CHECK(r.status.code() == StatusCode::kInvalidArgument);
  CHECK(f.transport.count() == 1);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "validation_error");
  CHECK(r.diagnostics[0].summary.find("plan: unknown plan key") != std::string::npos);
  CHECK(r.diagnostics[0].detail.find("HTTP 400") != std::string::npos);
  CHECK(r.diagnostics[0].detail.find("req_server") != std::string::npos);

  f.transport.Push(ErrorAnswer(409, "idempotency_conflict", "different request"));
  auto c = f.provider.Create({InstanceCreate(f.provider), "key-1"}, {});
  CHECK(c.status.code() == StatusCode::kConflict);
  REQUIRE(c.diagnostics.size() == 1);
  CHECK(c.diagnostics[0].code == "idempotency_conflict");
}

TEST_CASE("list follows the next shape to the end and counts requests") {
  Fixture f;
  auto page = [](std::vector<std::string> ids, Value next) {
    Value data = Value::array();
    for (const auto& id : ids)
      data.push_back(Value::parse(InstanceJson(id, "running"))["instance"]);
    return JsonAnswer(200,
                      Value{{"data", data}, {"pagination", {{"limit", 2}, {"next", next}}}}.dump());
  };
  f.transport.Push(page({kUuid, kUuid2}, "djE6Mg"));
  f.transport.Push(
      page({"11111111-2222-3333-4444-555555555555"}, "/api/v1/compute?limit=200&cursor=djE6Mw"));
  f.transport.Push(page({"21111111-2222-3333-4444-555555555555"}, nullptr));
  auto r = f.provider.List({"instance"}, {});
  REQUIRE(r.status.ok());
  CHECK(r.requests == 3);
  REQUIRE(r.resources.size() == 4);
  CHECK(r.resources[0].id == kUuid);
  CHECK(r.resources[3].attributes["status"] == "running");
  auto sent = f.transport.sent();
  CHECK(sent[0].url == "http://api.test/api/v1/compute?limit=200");
  CHECK(sent[1].url == "http://api.test/api/v1/compute?limit=200&cursor=djE6Mg");
  CHECK(sent[2].url == "http://api.test/api/v1/compute?limit=200&cursor=djE6Mw");
}

TEST_CASE("list follows the next_cursor shape until has_more is false") {
  Fixture f;
  auto page = [](std::vector<std::string> ids, std::string cursor, bool more) {
    Value data = Value::array();
    for (const auto& id : ids) data.push_back(Value::parse(KeyJson(id, "k-" + id)));
    return JsonAnswer(
        200, Value{{"data", data}, {"pagination", {{"next_cursor", cursor}, {"has_more", more}}}}
                 .dump());
  };
  f.transport.Push(page({"key_1", "key_2"}, "c+/=1", true));
  f.transport.Push(page({"key_3"}, "c2", true));
  f.transport.Push(page({}, "", false));
  auto r = f.provider.List({"ssh_key"}, {});
  REQUIRE(r.status.ok());
  CHECK(r.requests == 3);
  CHECK(r.resources.size() == 3);
  auto sent = f.transport.sent();
  CHECK(sent[1].url == "http://api.test/v1/ssh_keys?limit=200&cursor=c%2B%2F%3D1");

  // FindByName uses the same paginated list.
  Fixture g;
  g.transport.Push(page({"key_1", "key_2"}, "c1", true));
  g.transport.Push(page({"key_3"}, "", false));
  auto found = g.provider.FindByName("ssh_key", "k-key_3", {});
  REQUIRE(found.status.ok());
  CHECK(found.requests == 2);
  REQUIRE(found.resources.size() == 1);
  CHECK(found.resources[0].id == "key_3");
}

TEST_CASE("list maps each page as it is read: a bad object or a failed page leaves nothing") {
  auto page = [](std::vector<Value> items, std::string cursor, bool more) {
    return JsonAnswer(
        200, Value{{"data", items}, {"pagination", {{"next_cursor", cursor}, {"has_more", more}}}}
                 .dump());
  };
  // An object without its id, on the first page: the listing stops there,
  // the second page is never asked for.
  Fixture f;
  f.transport.Push(
      page({Value::parse(KeyJson("key_1", "k1")), Value{{"name", "no id"}}}, "c1", true));
  f.transport.Push(page({Value::parse(KeyJson("key_2", "k2"))}, "", false));
  auto r = f.provider.List({"ssh_key"}, {});
  CHECK(r.status.code() == StatusCode::kInternal);
  CHECK(r.status.message().find("list of ssh_key: ssh_key response has no string \"id\"") !=
        std::string::npos);
  CHECK(r.resources.empty());
  CHECK(f.transport.count() == 1);
  // The first page mapped, the second failing: no resources either.
  Fixture g;
  g.transport.Push(page({Value::parse(KeyJson("key_1", "k1"))}, "c1", true));
  g.transport.Push(JsonAnswer(200, R"({"items": []})"));
  auto failed = g.provider.List({"ssh_key"}, {});
  CHECK_FALSE(failed.status.ok());
  CHECK(failed.resources.empty());
  CHECK(failed.requests == 2);
}

TEST_CASE("list refuses a next link to another origin") {
  Fixture f;
  f.transport.Push(JsonAnswer(
      200, R"({"data": [], "pagination": {"limit": 1, "next": "https://evil.test/steal"}})"));
  auto r = f.provider.List({"instance"}, {});
  CHECK_FALSE(r.status.ok());
  CHECK(f.transport.count() == 1);
}

TEST_CASE("read unwraps the envelope, maps fields and canonicalises references") {
  Fixture f;
  Value v = Value::parse(InstanceJson(kUuid, "running"));
  v["instance"]["networkId"] = "net_00112233445566778899aabbccddeeff";
  v["instance"]["ipv4"] = "10.0.0.5";
  f.transport.Push(JsonAnswer(200, v.dump()));
  auto r = f.provider.Read({"instance", kUuid}, {});
  REQUIRE(r.status.ok());
  REQUIRE(r.resource);
  CHECK(f.transport.sent()[0].url == "http://api.test/api/v1/compute/" + kUuid);
  CHECK(f.transport.sent()[0].method == "GET");
  const Value& a = r.resource->attributes;
  CHECK(a["id"] == kUuid);
  CHECK(a["name"] == "web");
  CHECK(a["region"] == "fra1");
  CHECK(a["image"] == "debian-12");
  CHECK(a["status"] == "running");
  CHECK(a["ipv4"] == "10.0.0.5");
  CHECK(a["network"] == kUuid2);
  CHECK(a["created_at"] == "2026-01-01T00:00:00Z");

  f.transport.Push(ErrorAnswer(404, "resource_not_found", "no such instance"));
  auto missing = f.provider.Read({"instance", kUuid}, {});
  CHECK(missing.status.ok());
  CHECK_FALSE(missing.resource);

  f.transport.Push(JsonAnswer(200, R"({"not_the_envelope": {}})"));
  CHECK(f.provider.Read({"instance", kUuid}, {}).status.code() == StatusCode::kInternal);
}

TEST_CASE("update waits while the edit action is not offered") {
  Fixture f;
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "provisioning", false)));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "provisioning", false)));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running", true)));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running", true)));
  auto m = PrepareOrDie(f.provider, {"instance", Action::kUpdate, kUuid, Value{{"plan", "s-2"}}});
  auto r = f.provider.Update({m, "key-u"}, {});
  REQUIRE(r.status.ok());
  REQUIRE(r.resource);
  auto sent = f.transport.sent();
  REQUIRE(sent.size() == 4);
  CHECK(sent[0].method == "GET");
  CHECK(sent[2].method == "GET");
  CHECK(sent[3].method == "PATCH");
  CHECK(sent[3].body == R"({"plan":"s-2"})");
  CHECK(HeaderOf(sent[3], "Idempotency-Key") == "key-u");
  CHECK(f.clock.total_slept() > seconds(0));
}

TEST_CASE("delete gives up at the deadline while delete is not offered, sending nothing doomed") {
  Fixture f;
  f.transport.SetHandler([](const HttpRequest&) {
    return JsonAnswer(200, InstanceJson(kUuid, "provisioning", true, false));
  });
  auto m = PrepareOrDie(f.provider, {"instance", Action::kDelete, kUuid, {}});
  auto r = f.provider.Delete({m, "key-d"}, {});
  CHECK(r.status.code() == StatusCode::kDeadlineExceeded);
  for (const auto& req : f.transport.sent()) CHECK(req.method == "GET");
  REQUIRE_FALSE(r.diagnostics.empty());
  CHECK(r.diagnostics.back().code == "action_not_allowed");
  CHECK(f.clock.total_slept() <= seconds(60));
}

TEST_CASE("delete of a missing resource is OK and already gone") {
  Fixture f;
  // Preview kinds have no customerStatus: straight to DELETE.
  f.transport.Push(ErrorAnswer(404, "resource_not_found", "gone"));
  auto m = PrepareOrDie(f.provider, {"ssh_key", Action::kDelete, "key_1", {}});
  auto r = f.provider.Delete({m, "key-d"}, {});
  CHECK(r.status.ok());
  CHECK(r.already_gone);
  REQUIRE(f.transport.count() == 1);
  CHECK(f.transport.sent()[0].method == "DELETE");
  CHECK(f.transport.sent()[0].body.empty());
  CHECK(HeaderOf(f.transport.sent()[0], "Idempotency-Key") == "key-d");  // preview too

  // Control-plane kinds find out on the action-flag read.
  Fixture g;
  g.transport.Push(ErrorAnswer(404, "resource_not_found", "gone"));
  auto cp = PrepareOrDie(g.provider, {"instance", Action::kDelete, kUuid, {}});
  auto d = g.provider.Delete({cp, "key-d"}, {});
  CHECK(d.status.ok());
  CHECK(d.already_gone);

  // And a plain successful delete.
  Fixture h;
  h.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running")));
  h.transport.Push(JsonAnswer(202, InstanceJson(kUuid, "deleting")));
  auto ok = h.provider.Delete({cp, "key-d"}, {});
  CHECK(ok.status.ok());
  CHECK_FALSE(ok.already_gone);
}

TEST_CASE("wait for ready polls until running") {
  Fixture f;
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "pending")));
  f.transport.Push(ErrorAnswer(503, "service_unavailable", "busy"));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "provisioning")));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running")));
  auto r = f.provider.Wait({"instance", kUuid, WaitTarget::kReady, seconds(600)}, {});
  REQUIRE(r.status.ok());
  REQUIRE(r.resource);
  CHECK(r.resource->attributes["status"] == "running");
  CHECK(f.transport.count() == 4);
}

TEST_CASE("wait for ready right after a create starts with the poll delay, not a read") {
  Fixture f;
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running")));
  WaitRequest req{"instance", kUuid, WaitTarget::kReady, seconds(600)};
  req.just_created = RemoteResource{"instance", kUuid, {{"status", "queued"}}};
  auto r = f.provider.Wait(req, {});
  REQUIRE(r.status.ok());
  CHECK(f.transport.count() == 1);
  CHECK(f.clock.total_slept() > seconds(0));

  // Created ready (or with no status): read at once, as without the hint.
  Fixture g;
  g.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running")));
  req.just_created = RemoteResource{"instance", kUuid, {{"status", "running"}}};
  REQUIRE(g.provider.Wait(req, {}).status.ok());
  CHECK(g.transport.count() == 1);
  CHECK(g.clock.total_slept() == seconds(0));
}

TEST_CASE("waits after creates learn when to poll: a miss waits longer next time") {
  Fixture f;
  WaitRequest req{"instance", kUuid, WaitTarget::kReady, seconds(600)};
  req.just_created = RemoteResource{"instance", kUuid, {{"status", "queued"}}};
  // First create: not ready at the first poll, ready at the third.
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "provisioning")));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "provisioning")));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running")));
  REQUIRE(f.provider.Wait(req, {}).status.ok());
  auto first_wait = f.clock.total_slept();
  CHECK(first_wait > std::chrono::milliseconds(5));
  // Second create: the first poll now waits at least half of what the first
  // create took (the learnt estimate, with jitter down to 75%), not 5 ms.
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running")));
  REQUIRE(f.provider.Wait(req, {}).status.ok());
  auto second_first_poll = f.clock.total_slept() - first_wait;
  CHECK(second_first_poll >= first_wait / 2 * 3 / 4);
  CHECK(second_first_poll > std::chrono::milliseconds(5));
  CHECK(f.transport.count() == 4);
  // A wait not after a create never sleeps before its first read.
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running")));
  auto before = f.clock.total_slept();
  REQUIRE(f.provider.Wait({"instance", kUuid, WaitTarget::kReady, seconds(600)}, {}).status.ok());
  CHECK(f.clock.total_slept() == before);
}

TEST_CASE("waits after creates: on an API whose creates are ready at once, the read goes at once") {
  Fixture f;
  f.transport.SetHandler(
      [](const HttpRequest&) { return JsonAnswer(200, InstanceJson(kUuid, "running")); });
  WaitRequest req{"instance", kUuid, WaitTarget::kReady, seconds(600)};
  req.just_created = RemoteResource{"instance", kUuid, {{"status", "queued"}}};
  // Every first poll finds it ready: the learnt delay shrinks (10% a hit)
  // from the initial 5 ms until it is not worth a sleep.
  REQUIRE(f.provider.Wait(req, {}).status.ok());
  CHECK(f.clock.total_slept() > std::chrono::milliseconds(3));
  for (int i = 0; i < 60; ++i) REQUIRE(f.provider.Wait(req, {}).status.ok());
  auto before = f.clock.total_slept();
  const size_t reads = f.transport.count();
  REQUIRE(f.provider.Wait(req, {}).status.ok());
  CHECK(f.clock.total_slept() == before);   // no sleep at all
  CHECK(f.transport.count() == reads + 1);  // one read

  // Then the API slows down: a first read that misses teaches the next
  // create to wait again before its first read.
  f.transport.SetHandler(nullptr);
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "provisioning")));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running")));
  REQUIRE(f.provider.Wait(req, {}).status.ok());
  before = f.clock.total_slept();
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running")));
  REQUIRE(f.provider.Wait(req, {}).status.ok());
  CHECK(f.clock.total_slept() > before);
}

TEST_CASE("wait for ready ends on failed with reasonCode and guidance") {
  Fixture f;
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "provisioning")));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "failed")));
  auto r = f.provider.Wait({"instance", kUuid, WaitTarget::kReady, seconds(600)}, {});
  CHECK(r.status.code() == StatusCode::kFailedPrecondition);
  REQUIRE(r.resource);
  CHECK(r.resource->attributes["status"] == "failed");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "capacity_unavailable");
  CHECK(r.diagnostics[0].summary.find("capacity_unavailable") != std::string::npos);
  CHECK(r.diagnostics[0].detail == "try another region");
}

TEST_CASE("wait for ready times out") {
  Fixture f;
  f.transport.SetHandler(
      [](const HttpRequest&) { return JsonAnswer(200, InstanceJson(kUuid, "provisioning")); });
  auto r = f.provider.Wait({"instance", kUuid, WaitTarget::kReady, seconds(120)}, {});
  CHECK(r.status.code() == StatusCode::kDeadlineExceeded);
  CHECK(f.clock.total_slept() <= seconds(120));
  CHECK(f.clock.total_slept() >= seconds(100));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "wait_timeout");
  CHECK(r.diagnostics[0].summary.find("provisioning") != std::string::npos);
  REQUIRE(r.resource);  // the last state seen
}

TEST_CASE("wait for deleted polls until 404, and kinds without ready are ready at once") {
  Fixture f;
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "deleting")));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "deleting")));
  f.transport.Push(ErrorAnswer(404, "resource_not_found", "gone"));
  auto r = f.provider.Wait({"instance", kUuid, WaitTarget::kDeleted, seconds(600)}, {});
  CHECK(r.status.ok());
  CHECK_FALSE(r.resource);
  CHECK(f.transport.count() == 3);

  Fixture g;
  g.transport.Push(JsonAnswer(200, KeyJson("key_1", "k")));
  auto k = g.provider.Wait({"ssh_key", "key_1", WaitTarget::kReady, seconds(600)}, {});
  REQUIRE(k.status.ok());
  REQUIRE(k.resource);
  CHECK(k.resource->attributes["fingerprint"] == "SHA256:x");
  CHECK(g.transport.count() == 1);
  CHECK(g.clock.total_slept() == seconds(0));
}

TEST_CASE("a requested stop cancels retries and waits") {
  Fixture f;
  f.transport.SetHandler(
      [](const HttpRequest&) { return ErrorAnswer(503, "service_unavailable", "busy"); });
  std::stop_source stop;
  stop.request_stop();
  auto r = f.provider.Create({InstanceCreate(f.provider), "k"}, stop.get_token());
  CHECK(r.status.code() == StatusCode::kCancelled);
  CHECK(f.transport.count() == 0);
}

TEST_CASE("the token never appears in a diagnostic, a status or a log line") {
  std::ostringstream captured;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
  auto logger = std::make_shared<spdlog::logger>("capture", sink);
  logger->set_level(spdlog::level::trace);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);

  for (const std::string& token : {kToken, std::string("plain-secret-value-123")}) {
    InfraProvider::Options o = Fixture::DefaultOptions();
    o.token = token;
    o.operation_deadline = seconds(5);
    Fixture f(o);
    // A server and a network stack that echo the credential back.
    f.transport.Push(Result<HttpResponse>(Status::Unavailable("proxy said: Bearer " + token)));
    f.transport.Push(ErrorAnswer(401, "unauthorized", "bad token " + token));
    std::vector<std::string> texts;
    auto collect = [&](const Status& st, const std::vector<Diagnostic>& diags) {
      texts.push_back(st.ToString());
      for (const auto& d : diags) texts.push_back(d.code + d.summary + d.detail);
    };
    auto c = f.provider.Create({InstanceCreate(f.provider), "k"}, {});
    CHECK(c.status.code() == StatusCode::kFailedPrecondition);
    collect(c.status, c.diagnostics);
    f.transport.SetHandler([&](const HttpRequest&) { return Dropped(); });
    auto l = f.provider.List({"instance"}, {});
    collect(l.status, l.diagnostics);
    f.transport.SetHandler([&](const HttpRequest&) {
      return Result<HttpResponse>(Status::Unavailable("reset " + token));
    });
    auto w = f.provider.Wait({"instance", kUuid, WaitTarget::kReady, seconds(5)}, {});
    collect(w.status, w.diagnostics);
    for (const auto& t : texts) {
      INFO(t);
      CHECK(t.find(token) == std::string::npos);
    }
    CHECK(f.transport.sent()[0].headers[0].second == "Bearer " + token);  // it was sent
  }
  spdlog::set_default_logger(previous);
  const std::string log = captured.str();
  CHECK(log.find("POST /api/v1/compute -> 401") != std::string::npos);  // it did log
  CHECK(log.find(kToken) == std::string::npos);
  CHECK(log.find("plain-secret-value-123") == std::string::npos);
  CHECK(log.find("Authorization") == std::string::npos);
  ClearSecretsForTesting();
}

TEST_CASE("many threads share one provider") {
  Fixture f;
  f.transport.SetHandler([](const HttpRequest& req) {
    if (req.method == "POST") return JsonAnswer(201, InstanceJson(kUuid, "pending"));
    return JsonAnswer(200, InstanceJson(kUuid, "running"));
  });
  std::vector<std::jthread> workers;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    workers.emplace_back([&, i] {
      for (int j = 0; j < 20; ++j) {
        auto c = f.provider.Create({InstanceCreate(f.provider), "k" + std::to_string(i)}, {});
        auto w = f.provider.Wait({"instance", kUuid, WaitTarget::kReady, seconds(60)}, {});
        if (c.status.ok() && w.status.ok()) ++ok;
      }
    });
  }
  workers.clear();
  CHECK(ok == 160);
}

TEST_CASE("a malformed descriptor is reported and only its kind fails") {
  FakeTransport transport;
  ManualClock clock;
  auto kinds = TestKinds();
  kinds["network"]["wire"]["pagination"] = "pages";
  InfraProvider p(Fixture::DefaultOptions(), kinds, transport, clock);
  CHECK(p.descriptor_status().code() == StatusCode::kInvalidArgument);
  CHECK(p.List({"network"}, {}).status.code() == StatusCode::kInvalidArgument);
  CHECK(p.wire("instance") != nullptr);
  CHECK(p.wire("network") == nullptr);
}

TEST_CASE("a 409 action_not_allowed sends update back to waiting for the flag") {
  Fixture f;
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running", true)));
  f.transport.Push(ErrorAnswer(409, "action_not_allowed", "reconciling"));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "reconciling", false)));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running", true)));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running", true)));
  auto m = PrepareOrDie(f.provider, {"instance", Action::kUpdate, kUuid, Value{{"name", "web2"}}});
  auto r = f.provider.Update({m, "key-u"}, {});
  REQUIRE(r.status.ok());
  auto sent = f.transport.sent();
  REQUIRE(sent.size() == 5);
  CHECK(sent[1].method == "PATCH");
  CHECK(sent[4].method == "PATCH");
  CHECK(sent[4].body == sent[1].body);
  CHECK(HeaderOf(sent[4], "Idempotency-Key") == "key-u");

  // Preview kinds have no flags to wait for: the 409 is the answer.
  Fixture g;
  g.transport.Push(ErrorAnswer(409, "action_not_allowed", "no"));
  auto k = PrepareOrDie(g.provider, {"ssh_key", Action::kUpdate, "key_1", Value{{"name", "n"}}});
  auto u = g.provider.Update({k, "key-u"}, {});
  CHECK(u.status.code() == StatusCode::kConflict);
  CHECK(g.transport.count() == 1);
}

TEST_CASE("a zero wait timeout means the kind's ready timeout") {
  Fixture f;
  f.transport.SetHandler(
      [](const HttpRequest&) { return JsonAnswer(200, InstanceJson(kUuid, "provisioning")); });
  auto r = f.provider.Wait({"instance", kUuid, WaitTarget::kReady, seconds(0)}, {});
  CHECK(r.status.code() == StatusCode::kDeadlineExceeded);
  CHECK(f.clock.total_slept() > seconds(500));
  CHECK(f.clock.total_slept() <= seconds(600));
}

TEST_CASE("a delete right after a listing that showed it offered sends no read first") {
  Fixture f;
  f.transport.Push(JsonAnswer(200, OnePageListing(kUuid)));
  REQUIRE(f.provider.List({"instance"}, {}).status.ok());
  f.transport.Push(JsonAnswer(202, InstanceJson(kUuid, "deleting", false, false)));
  auto m = PrepareOrDie(f.provider, {"instance", Action::kDelete, kUuid, {}});
  REQUIRE(f.provider.Delete({m, "key-d"}, {}).status.ok());
  auto sent = f.transport.sent();
  REQUIRE(sent.size() == 2);  // the listing, then the DELETE
  CHECK(sent[1].method == "DELETE");

  // Refused after all (the flag changed since): the resource is read, and
  // the delete waits for the flag as usual; the seen flags are not trusted
  // again.
  f.transport.Push(JsonAnswer(200, OnePageListing(kUuid2)));
  REQUIRE(f.provider.List({"instance"}, {}).status.ok());
  f.transport.Push(ErrorAnswer(409, "action_not_allowed", "delete is not allowed"));
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid2, "running", true, true)));
  f.transport.Push(JsonAnswer(202, InstanceJson(kUuid2, "deleting", false, false)));
  auto m2 = PrepareOrDie(f.provider, {"instance", Action::kDelete, kUuid2, {}});
  REQUIRE(f.provider.Delete({m2, "key-d2"}, {}).status.ok());
  sent = f.transport.sent();
  REQUIRE(sent.size() == 6);
  CHECK(sent[3].method == "DELETE");
  CHECK(sent[4].method == "GET");
  CHECK(sent[5].method == "DELETE");
}

TEST_CASE("a provider that only reads keeps nothing of a listing: a delete then reads first") {
  InfraProvider::Options o = Fixture::DefaultOptions();
  o.remember_actions = false;
  Fixture f(o);
  f.transport.Push(JsonAnswer(200, OnePageListing(kUuid)));
  REQUIRE(f.provider.List({"instance"}, {}).status.ok());
  f.transport.Push(JsonAnswer(200, InstanceJson(kUuid, "running", true, true)));
  f.transport.Push(JsonAnswer(202, InstanceJson(kUuid, "deleting", false, false)));
  auto m = PrepareOrDie(f.provider, {"instance", Action::kDelete, kUuid, {}});
  REQUIRE(f.provider.Delete({m, "key-d"}, {}).status.ok());
  auto sent = f.transport.sent();
  REQUIRE(sent.size() == 3);  // the listing, the read the listing no longer spares, the DELETE
  CHECK(sent[1].method == "GET");
  CHECK(sent[2].method == "DELETE");
}

TEST_CASE(
    "a refused token is worded alike from every call, and an API's ids as the state has them") {
  Fixture f;
  f.transport.Push(ErrorAnswer(401, "unauthorized", "invalid bearer token"));
  f.transport.Push(ErrorAnswer(401, "unauthorized", "invalid bearer token"));
  auto listed = f.provider.List({"instance"}, {});
  auto created = f.provider.Create({InstanceCreate(f.provider), "k-1"}, {});
  REQUIRE(listed.diagnostics.size() == 1);
  REQUIRE(created.diagnostics.size() == 1);
  CHECK(listed.diagnostics[0].code == "unauthorized");
  CHECK(IsApiWideFailure(listed.diagnostics[0]));
  CHECK(listed.diagnostics[0].summary == created.diagnostics[0].summary);
  CHECK(listed.diagnostics[0].summary == "the API refused the token: invalid bearer token");

  f.transport.Push(
      ErrorAnswer(409, "resource_in_use", "in use by inst_0123abcd456789ef0123456789abcdef"));
  auto refused = f.provider.Create({InstanceCreate(f.provider), "k-2"}, {});
  CHECK(refused.status.message().find("in use by " + kUuid) != std::string::npos);
  REQUIRE(refused.diagnostics.size() == 1);
  CHECK(refused.diagnostics[0].summary.find("inst_") == std::string::npos);
}

}  // namespace infra_provider_test
