// Integration tests: HTTP that no well-behaved client sends, over raw
// sockets: pipelined and HTTP/1.0 requests, header floods, invalid UTF-8
// and control bytes, garbage cursors and limits, and hundreds of half-open
// connections (slowloris). Each gets an answer in the error envelope or a
// closed connection, never a crash or a 500, and the server is healthy after.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/raw_connection.h"
#include "tests/server/serve_fixture.h"

using namespace cairn::testing;
using nlohmann::json;

namespace {

std::string Get(const std::string& target, const std::string& version = "HTTP/1.1",
                const std::string& extra = "") {
  return "GET " + target + " " + version + "\r\nHost: cairn\r\nAuthorization: Bearer " +
         std::string(kDevToken) + "\r\n" + extra + "\r\n";
}

// The status codes of the HTTP responses in `stream`, in order (each read
// to the end of its Content-Length body).
std::vector<int> Statuses(const std::string& stream) {
  std::vector<int> out;
  size_t at = 0;
  while (at < stream.size()) {
    if (stream.compare(at, 7, "HTTP/1.") != 0) break;
    out.push_back(std::stoi(stream.substr(at + 9, 3)));
    size_t head_end = stream.find("\r\n\r\n", at);
    if (head_end == std::string::npos) break;
    std::string head = stream.substr(at, head_end - at);
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t length = 0;
    if (size_t cl = head.find("\r\ncontent-length:"); cl != std::string::npos) {
      length = std::stoul(head.substr(cl + 17));
    }
    at = head_end + 4 + length;
  }
  return out;
}

// The server still answers, and still creates.
void CheckHealthy(ServeFixture& srv) {
  static int checks = 0;
  auto c = srv.Client();
  CHECK(c->Get("/healthz").status == 200);
  CHECK(c->Post("/api/v1/compute", InstanceBody("after-http"), "http-" + std::to_string(++checks))
            .status == 201);
  CHECK(srv.process().running());
}

double Metric(ServeFixture& srv, const std::string& name) {
  auto m = srv.Client()->Get("/metrics");
  std::string key = "\n" + name + " ";
  size_t pos = m.body.find(key);
  return pos == std::string::npos ? -1.0 : std::stod(m.body.substr(pos + key.size()));
}

}  // namespace

TEST_CASE("pipelined requests are answered in order on one connection") {
  ServeFixture srv;
  RawConnection conn(srv.base());
  REQUIRE(conn.SendAll(Get("/healthz") + Get("/v1/instances?limit=0") + Get("/v1/instances") +
                       Get("/healthz", "HTTP/1.1", "Connection: close\r\n")) == 0);
  int error = 0;
  std::string all = conn.ReadToEnd(&error);
  CHECK(error == 0);
  CHECK(Statuses(all) == std::vector<int>{200, 400, 200, 200});
  CHECK(all.find("\"validation_error\"") != std::string::npos);
  CheckHealthy(srv);
}

TEST_CASE("an HTTP/1.0 request gets an HTTP/1.0 answer and the connection closes") {
  ServeFixture srv;
  RawConnection conn(srv.base());
  REQUIRE(conn.SendAll(Get("/v1/instances", "HTTP/1.0")) == 0);
  int error = 0;
  std::string all = conn.ReadToEnd(&error);  // returns only once the server closes
  CHECK(error == 0);
  CHECK(all.rfind("HTTP/1.0 200", 0) == 0);
  CHECK(all.find("\"data\"") != std::string::npos);
  CheckHealthy(srv);
}

TEST_CASE("a flood of headers is refused with 431, whatever their number or size") {
  ServeFixture srv;
  for (auto [count, size] : {std::pair{5000, 1}, std::pair{1, 40000}, std::pair{300, 100}}) {
    std::string extra;
    for (int i = 0; i < count; ++i) {
      extra += "X-Flood-" + std::to_string(i) + ": " + std::string(size, 'v') + "\r\n";
    }
    RawConnection conn(srv.base());
    conn.SendAll(Get("/v1/instances", "HTTP/1.1", extra));
    int error = 0;
    std::string all = conn.ReadToEnd(&error);
    INFO(count << " headers of " << size << " bytes");
    CHECK(all.rfind("HTTP/1.1 431", 0) == 0);
    CHECK(all.find("\"validation_error\"") != std::string::npos);
  }
  CheckHealthy(srv);
}

TEST_CASE("invalid UTF-8 and control bytes in bodies and headers get the error envelope") {
  ServeFixture srv;
  auto c = srv.Client();
  auto send = [&](const std::string& head_extra, const std::string& body) {
    RawConnection conn(srv.base());
    std::string req = "POST /v1/instances HTTP/1.1\r\nHost: cairn\r\nAuthorization: Bearer " +
                      std::string(kDevToken) + "\r\nContent-Type: application/json\r\n" +
                      head_extra + "Content-Length: " + std::to_string(body.size()) +
                      "\r\nConnection: close\r\n\r\n" + body;
    conn.SendAll(req);
    int error = 0;
    return conn.ReadToEnd(&error);
  };
  const std::string valid = InstanceBody("ok").dump();
  for (const std::string& body :
       {std::string("{\"name\": \"\xff\xfe\", \"region\": \"eu-central\"}"),
        std::string("{\"name\": \"web\xc0\xaf\"}"), std::string("{\"name\": \"a\x01\x02\"}"),
        std::string("\x00\x00\x00", 3)}) {
    std::string answer = send("", body);
    INFO(json(body).dump(-1, ' ', true, json::error_handler_t::replace));
    CHECK(answer.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(answer.find("\"validation_error\"") != std::string::npos);
  }
  // A byte order mark before JSON may be ignored (RFC 8259, 8.1): it is.
  CHECK(send("", "\xef\xbb\xbf" + valid).rfind("HTTP/1.1 201", 0) == 0);
  // A header value holding invalid UTF-8 or control bytes: never a 500.
  for (const std::string& header :
       {std::string("Idempotency-Key: \xff\xfe\r\n"), std::string("X-Request-ID: a\x01b\r\n")}) {
    std::string answer = send(header, valid);
    INFO(answer.substr(0, 200));
    REQUIRE(answer.size() > 12);
    int status = std::stoi(answer.substr(9, 3));
    CHECK(status < 500);
    CHECK((status == 201 || answer.find("\"error\"") != std::string::npos));
  }
  CheckHealthy(srv);
}

TEST_CASE("garbage cursors and limits are 400 validation_error") {
  ServeFixture srv;
  auto c = srv.Client();
  for (const std::string& query : std::vector<std::string>{
           "?cursor=garbage", "?cursor=%FF%FE", "?cursor=" + std::string(5000, 'A'),
           "?cursor=", "?limit=-1", "?limit=0", "?limit=201", "?limit=abc",
           "?limit=99999999999999999999", "?limit=1e3", "?limit=5&limit=6", "?cursor=%00"}) {
    for (const std::string route : {"/v1/instances", "/api/v1/compute"}) {
      auto r = c->Get(route + query);
      INFO(route << query);
      CHECK(r.status == 400);
      CHECK(r.json()["error"]["code"] == "validation_error");
    }
  }
  CheckHealthy(srv);
}

TEST_CASE("hundreds of half-open connections do not stop other clients, and time out") {
  ServeFixture srv({"--read-timeout", "2s"});
  const double before = Metric(srv, "cairn_open_connections");
  // Slowloris: each sends part of a request's headers, then nothing.
  std::vector<std::unique_ptr<RawConnection>> loris;
  for (int i = 0; i < 300; ++i) {
    loris.push_back(std::make_unique<RawConnection>(srv.base(), 60));
    REQUIRE(loris.back()->SendAll("GET /v1/instances HTTP/1.1\r\nHost: cairn\r\nX-Slow: ") == 0);
  }
  // Others are served meanwhile, at once.
  auto c = srv.Client();
  for (int i = 0; i < 20; ++i) CHECK(c->Get("/v1/instances").status == 200);
  CHECK(c->Post("/api/v1/compute", InstanceBody("beside-loris"), "loris").status == 201);
  // The half-open ones are closed by the server once their time is up.
  int closed = 0;
  for (auto& conn : loris) {
    int error = 0;
    std::string got = conn->ReadToEnd(&error);  // blocks until the server closes it
    closed += got.empty() && (error == 0 || error == ECONNRESET);
  }
  CHECK(closed == 300);
  CHECK(PollUntil([&] { return Metric(srv, "cairn_open_connections"); },
                  [&](double v) { return v <= before + 1; }) <= before + 1);
  CheckHealthy(srv);
}

TEST_CASE("a body sent more slowly than the read timeout allows is cut off") {
  ServeFixture srv({"--read-timeout", "1s"});
  RawConnection conn(srv.base(), 30);
  const std::string body = InstanceBody("slow").dump();
  std::string head = "POST /v1/instances HTTP/1.1\r\nHost: cairn\r\nAuthorization: Bearer " +
                     std::string(kDevToken) + "\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\n\r\n";
  REQUIRE(conn.SendAll(head + body.substr(0, 5)) == 0);
  int error = 0;
  std::string got = conn.ReadToEnd(&error);  // the server closes: no request was made
  CHECK(got.empty());
  CHECK(srv.Client()->Get("/v1/instances").json()["data"].empty());
  CheckHealthy(srv);
}
