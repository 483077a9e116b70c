// Integration tests: the answers to requests over the HTTP limits (413 body,
// 431 headers) reach clients that send the whole request before reading,
// as Python's http.client and many SDKs do; the server then lingers only
// within its bounds, and stays healthy.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "tests/server/raw_connection.h"
#include "tests/server/serve_fixture.h"

namespace serve_limits_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kMiB = 1024 * 1024;

std::string PostHead(size_t content_length, const std::string& extra_headers = "") {
  return "POST /v1/instances HTTP/1.1\r\nHost: cairn\r\nAuthorization: Bearer " +
         std::string(kDevToken) + "\r\nContent-Type: application/json\r\n" + extra_headers +
         "Content-Length: " + std::to_string(content_length) + "\r\n\r\n";
}

// A JSON body of exactly `size` bytes.
std::string BigBody(size_t size) {
  std::string body = "{\"name\":\"";
  body += std::string(size - body.size() - 2, 'a');
  return body + "\"}";
}

void CheckHealthy(ServeFixture& srv) {
  static int checks = 0;
  auto c = srv.Client();
  CHECK(c->Get("/healthz").status == 200);
  auto made =
      c->Post("/api/v1/compute", InstanceBody("after"), "limits-" + std::to_string(++checks));
  CHECK(made.status == 201);
  CHECK(srv.process().running());
}

// cairn_open_connections once it settles at `want` (or its last value).
double OpenConnectionsSettle(ServeFixture& srv, double want) {
  auto c = srv.Client();
  auto read = [&] { return MetricValue(*c, "cairn_open_connections"); };
  return PollUntil(read, [&](double v) { return v == want; });
}

}  // namespace

TEST_CASE("a client that sends a whole 3 MiB body before reading gets the 413") {
  ServeFixture srv;
  for (int attempt = 0; attempt < 3; ++attempt) {
    INFO("attempt " << attempt);
    RawConnection conn(srv.base());
    std::string body = BigBody(3 * kMiB);
    // One write of the whole request, as http.client does, then read.
    int sent = conn.SendAll(PostHead(body.size()) + body);
    CHECK(sent == 0);
    int error = 0;
    std::string answer = conn.ReadToEnd(&error);
    INFO("send errno " << sent << ", recv errno " << error << " (" << std::strerror(error) << ")");
    CHECK(error == 0);
    REQUIRE(answer.rfind("HTTP/1.1 413 ", 0) == 0);
    CHECK(answer.find("\"code\":\"payload_too_large\"") != std::string::npos);
    CHECK(answer.find("Connection: close") != std::string::npos);
  }
  CheckHealthy(srv);
}

TEST_CASE("Python's http.client reads the 413 of a 3 MiB body and the 431 of huge headers") {
  ServeFixture srv;
  std::string hostport = srv.base().substr(std::string("http://").size());
  std::string script =
      "import http.client, json, sys\n"
      "host, port = sys.argv[1].rsplit(':', 1)\n"
      "def post(body, headers):\n"
      "    c = http.client.HTTPConnection(host, int(port), timeout=30)\n"
      "    h = {'Authorization': 'Bearer " +
      std::string(kDevToken) +
      "', 'Content-Type': 'application/json'}\n"
      "    h.update(headers)\n"
      "    c.request('POST', '/v1/instances', body=body, headers=h)\n"
      "    r = c.getresponse()\n"
      "    print(r.status, json.loads(r.read())['error']['code'])\n"
      "for _ in range(5):\n"
      "    post(b'{\"name\":\"' + b'a' * (3 * 1024 * 1024) + b'\"}', {})\n"
      "    post(b'{\"name\":\"' + b'a' * (512 * 1024) + b'\"}', {'X-Padding': 'p' * (20 * "
      "1024)})\n";
  auto r = RunCommand({"/usr/bin/env", "python3", "-c", script, hostport});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  std::string expected;
  for (int i = 0; i < 5; ++i) expected += "413 payload_too_large\n431 validation_error\n";
  CHECK(r.out == expected);
  CheckHealthy(srv);
}

TEST_CASE("headers over 16 KiB followed by a body: the 431 arrives whole") {
  ServeFixture srv;
  RawConnection conn(srv.base());
  std::string body = BigBody(kMiB);
  std::string head = PostHead(body.size(), "X-Padding: " + std::string(20 * 1024, 'p') + "\r\n");
  CHECK(conn.SendAll(head + body) == 0);
  int error = 0;
  std::string answer = conn.ReadToEnd(&error);
  CHECK(error == 0);
  CHECK(answer.rfind("HTTP/1.1 431 ", 0) == 0);
  CheckHealthy(srv);
}

TEST_CASE("a sender that never stops cannot hold the connection past the linger bound") {
  ServeFixture srv;
  // The server lingers at most 2 s (and 16 MiB) after its answer; allow
  // generous slack for a loaded machine, no lower bound.
  const auto kBound = std::chrono::seconds(8);

  SECTION("slowly: 1 KiB every 50 ms, announcing 100 MiB") {
    RawConnection conn(srv.base());
    REQUIRE(conn.SendAll(PostHead(100 * kMiB)) == 0);
    std::string answer = conn.ReadUntil("\"payload_too_large\"");
    REQUIRE(answer.rfind("HTTP/1.1 413 ", 0) == 0);
    auto start = Clock::now();
    int error = 0;
    while (Clock::now() - start < std::chrono::seconds(30)) {
      error = conn.SendAll(std::string(1024, 'a'));
      if (error != 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    auto held = Clock::now() - start;
    INFO("errno " << error << ", held "
                  << std::chrono::duration_cast<std::chrono::milliseconds>(held).count() << " ms");
    CHECK((error == EPIPE || error == ECONNRESET));
    CHECK(held < kBound);
  }

  SECTION("as fast as it can, announcing 1 GiB") {
    RawConnection conn(srv.base());
    REQUIRE(conn.SendAll(PostHead(1024 * kMiB)) == 0);
    auto start = Clock::now();
    std::string chunk(64 * 1024, 'a');
    size_t sent = 0;
    int error = 0;
    while (Clock::now() - start < std::chrono::seconds(30)) {
      error = conn.SendAll(chunk);
      if (error != 0) break;
      sent += chunk.size();
    }
    auto held = Clock::now() - start;
    INFO("errno " << error << ", sent " << sent / kMiB << " MiB in "
                  << std::chrono::duration_cast<std::chrono::milliseconds>(held).count() << " ms");
    CHECK((error == EPIPE || error == ECONNRESET));
    CHECK(held < kBound);
    CHECK(sent < 256 * kMiB);
  }

  // Every lingering connection is gone: only the metrics client's remains.
  CHECK(OpenConnectionsSettle(srv, 1) == 1);
  CheckHealthy(srv);
}

}  // namespace serve_limits_test
