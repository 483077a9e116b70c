// The webhook sender over a scripted transport: events delivered in order,
// retried until the receiver takes them, refused ones dropped, a full queue
// dropping its oldest, and the URL's credentials never shown.
#include "providers/webhook.h"

#include <catch2/catch.hpp>
#include <thread>

#include "base/redact.h"
#include "tests/providers/fake_transport.h"

namespace webhook_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using cairn::testing::Dropped;
using cairn::testing::FakeTransport;
using cairn::testing::JsonAnswer;
using namespace std::chrono_literals;

namespace {

WebhookOptions Fast() {
  WebhookOptions o;
  o.first_backoff = 5ms;
  o.max_backoff = 20ms;
  return o;
}

}  // namespace

TEST_CASE("webhook events are POSTed as JSON in order") {
  FakeTransport t;
  t.SetHandler([](const HttpRequest&) { return JsonAnswer(204, ""); });
  WebhookSender s(t, "http://127.0.0.1:9/hook", Fast());
  s.Post(R"({"event":"drift_detected","n":1})");
  s.Post(R"({"event":"drift_resolved","n":2})");
  REQUIRE(s.Drain(20s));
  auto sent = t.sent();
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].method == "POST");
  CHECK(sent[0].url == "http://127.0.0.1:9/hook");
  CHECK(cairn::testing::HeaderOf(sent[0], "Content-Type") == "application/json");
  CHECK(sent[0].body == R"({"event":"drift_detected","n":1})");
  CHECK(sent[1].body == R"({"event":"drift_resolved","n":2})");
  CHECK(s.counts().delivered == 2);
  CHECK(s.counts().queued == 0);
}

TEST_CASE("a webhook receiver that is down gets the event once it is up") {
  FakeTransport t;
  t.Push(Dropped());
  t.Push(JsonAnswer(503, "{}"));
  t.Push(JsonAnswer(429, "{}"));
  t.SetHandler([](const HttpRequest&) { return JsonAnswer(200, "{}"); });
  WebhookSender s(t, "http://127.0.0.1:9/hook", Fast());
  s.Post(R"({"event":"run_failed"})");
  s.Post(R"({"event":"run_recovered"})");
  REQUIRE(s.Drain(20s));
  auto sent = t.sent();
  REQUIRE(sent.size() == 5);
  // The first event was sent four times, the second once, in that order.
  for (int i = 0; i < 4; ++i) CHECK(sent[i].body == R"({"event":"run_failed"})");
  CHECK(sent[4].body == R"({"event":"run_recovered"})");
  const WebhookCounts c = s.counts();
  CHECK(c.delivered == 2);
  CHECK(c.failed_attempts == 3);
}

TEST_CASE("a webhook refusal is final and the next event goes on") {
  FakeTransport t;
  t.Push(JsonAnswer(400, R"({"error":"bad"})"));
  t.SetHandler([](const HttpRequest&) { return JsonAnswer(200, "{}"); });
  WebhookSender s(t, "http://127.0.0.1:9/hook", Fast());
  s.Post("{\"n\":1}");
  s.Post("{\"n\":2}");
  REQUIRE(s.Drain(20s));
  CHECK(t.count() == 2);
  CHECK(s.counts().refused == 1);
  CHECK(s.counts().delivered == 1);
}

TEST_CASE("a full webhook queue drops its oldest events and counts them") {
  FakeTransport t;
  std::atomic<bool> up{false};
  t.SetHandler([&](const HttpRequest&) -> Result<HttpResponse> {
    if (!up) return Dropped();
    return JsonAnswer(200, "{}");
  });
  WebhookOptions o = Fast();
  o.max_queue = 3;
  WebhookSender s(t, "http://127.0.0.1:9/hook", o);
  for (int i = 0; i < 10; ++i) s.Post("{\"n\":" + std::to_string(i) + "}");
  const WebhookCounts waiting = s.counts();
  CHECK(waiting.dropped >= 6);
  CHECK(waiting.queued <= 4);
  up = true;
  REQUIRE(s.Drain(20s));
  // The newest is never the one dropped.
  CHECK(t.sent().back().body == "{\"n\":9}");
  CHECK(s.counts().delivered + s.counts().dropped == 10);
}

TEST_CASE("a webhook URL's credentials are never shown") {
  CHECK(WebhookDisplayUrl("https://bot:s3cr3t-hook@hooks.example.com/x?y=1") ==
        "https://***@hooks.example.com/x?y=1");
  CHECK(WebhookDisplayUrl("https://hooks.example.com/a@b") == "https://hooks.example.com/a@b");
  CHECK(WebhookDisplayUrl("http://h:8080/") == "http://h:8080/");
  CHECK(WebhookDisplayUrl("https://only-user@h/x") == "https://***@h/x");
  CHECK(WebhookDisplayUrl("not a url at all") == "(not a URL)");
  FakeTransport t;
  WebhookSender s(t, "https://bot:s3cr3t-hook@hooks.example.com/x", Fast());
  CHECK(s.display_url() == "https://***@hooks.example.com/x");
  // Registered as a secret: any message that would hold it is redacted.
  CHECK(Redact("failed: s3cr3t-hook").find("s3cr3t-hook") == std::string::npos);
}

}  // namespace webhook_test
