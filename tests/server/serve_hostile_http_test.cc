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

namespace serve_hostile_http_test {  // one namespace per test file: see tests/CMakeLists.txt

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
  return MetricValue(*srv.Client(), name);
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

TEST_CASE("HTTP/1.0 with Connection: keep-alive is answered once and closed too") {
  ServeFixture srv;
  RawConnection conn(srv.base(), 5);
  REQUIRE(conn.SendAll(Get("/v1/instances", "HTTP/1.0", "Connection: keep-alive\r\n")) == 0);
  int error = 0;
  std::string all = conn.ReadToEnd(&error);  // kept open, this ran into the 5 s receive timeout
  CHECK(error == 0);
  CHECK(Statuses(all) == std::vector<int>{200});
  CHECK(all.rfind("HTTP/1.0 200", 0) == 0);
  CHECK(all.find("eep-alive") == std::string::npos);
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

namespace {

// A chunked POST to /v1/instances whose trailer section is `trailer`.
std::string ChunkedPost(const std::string& trailer) {
  return "POST /v1/instances HTTP/1.1\r\nHost: cairn\r\nAuthorization: Bearer " +
         std::string(kDevToken) +
         "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
         "1\r\n \r\n0\r\n" +
         trailer + "\r\n";
}

}  // namespace

TEST_CASE("trailers count toward the header limit, and a huge trailer field is no crash") {
  ServeFixture srv;
  // One field of 65,534 bytes made Beast throw out of the connection's
  // handler (SIGABRT); a 1.2 MB trailer of small fields was accepted.
  for (const std::string& trailer :
       {"X-T: " + std::string(65534, 'a') + "\r\n", "X-T: " + std::string(70000, 'a') + "\r\n", [] {
          std::string many;
          for (int i = 0; i < 12000; ++i)
            many += "X-" + std::to_string(i) + ": " + "vvvvvvvvvv\r\n";
          return many;
        }()}) {
    RawConnection conn(srv.base());
    conn.SendAll(ChunkedPost(trailer));
    int error = 0;
    std::string all = conn.ReadToEnd(&error);  // the server closes after answering
    INFO("trailer of " << trailer.size() << " bytes; got " << all.substr(0, 200));
    CHECK(all.rfind("HTTP/1.1 431", 0) == 0);
    CHECK(all.find("\"validation_error\"") != std::string::npos);
    REQUIRE(srv.process().running());
  }
  // A small trailer is still fine (the body is one space: not JSON).
  RawConnection conn(srv.base());
  conn.SendAll(ChunkedPost("X-T: small\r\n"));
  CHECK(Statuses(conn.ReadUntil("}}")) == std::vector<int>{400});
  CheckHealthy(srv);
}

TEST_CASE("a Transfer-Encoding that is not exactly chunked is 400 and closes: no smuggling") {
  ServeFixture srv;
  auto c = srv.Client();
  auto created = c->Post("/v1/instances", InstanceBody("victim"), "victim");
  REQUIRE(created.status == 201);
  const std::string id = created.json()["id"];
  // Behind each request: a DELETE, which must never run.
  const std::string smuggled = "DELETE /v1/instances/" + id +
                               " HTTP/1.1\r\nHost: cairn\r\nAuthorization: Bearer " +
                               std::string(kDevToken) + "\r\n\r\n";
  auto head = [](const std::string& fields) {
    return "GET /v1/instances HTTP/1.1\r\nHost: cairn\r\nAuthorization: Bearer " +
           std::string(kDevToken) + "\r\n" + fields + "\r\n";
  };
  const std::vector<std::string> requests = {
      head("Transfer-Encoding: gzip\r\n"),
      head("Transfer-Encoding: identity\r\n"),
      head("Transfer-Encoding: foo\r\n"),
      head("Transfer-Encoding: chunked, identity\r\n"),
      head("Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n"),
      head("Transfer-Encoding: gzip, chunked\r\n") + "0\r\n\r\n",
      head("Transfer-Encoding: xchunked\r\nContent-Length: 0\r\n"),
      head("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n") + "0\r\n\r\n",
      head("Content-Length: 0\r\nContent-Length: 0\r\n"),
      "GET /v1/instances HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
  };
  for (const std::string& req : requests) {
    RawConnection conn(srv.base());
    conn.SendAll(req + smuggled);
    int error = 0;
    std::string all = conn.ReadToEnd(&error);
    INFO(req);
    CHECK(Statuses(all) == std::vector<int>{400});
    CHECK(all.find("\"validation_error\"") != std::string::npos);
  }
  auto victim = c->Get("/v1/instances/" + id);
  CHECK(victim.status == 200);  // never deleted
  CHECK(victim.body.find("delet") == std::string::npos);
  CheckHealthy(srv);
}

TEST_CASE("an HTTP/1.1 request without exactly one Host is 400") {
  ServeFixture srv;
  for (const std::string& hosts : {std::string(""), std::string("Host: a\r\nHost: b\r\n")}) {
    RawConnection conn(srv.base());
    conn.SendAll("GET /v1/instances HTTP/1.1\r\n" + hosts + "Authorization: Bearer " +
                 std::string(kDevToken) + "\r\n\r\n");
    int error = 0;
    std::string all = conn.ReadToEnd(&error);
    INFO(hosts);
    CHECK(Statuses(all) == std::vector<int>{400});
    CHECK(all.find("Host") != std::string::npos);
  }
  // HTTP/1.0 needs none.
  RawConnection conn(srv.base());
  conn.SendAll("GET /v1/instances HTTP/1.0\r\nAuthorization: Bearer " + std::string(kDevToken) +
               "\r\n\r\n");
  int error = 0;
  CHECK(Statuses(conn.ReadToEnd(&error)) == std::vector<int>{200});
  CheckHealthy(srv);
}

TEST_CASE("a chunked request with a proper Transfer-Encoding is still served") {
  ServeFixture srv;
  const std::string body = InstanceBody("chunked").dump();
  char size[16];
  std::snprintf(size, sizeof(size), "%zx", body.size());
  RawConnection conn(srv.base());
  conn.SendAll("POST /v1/instances HTTP/1.1\r\nHost: cairn\r\nAuthorization: Bearer " +
               std::string(kDevToken) +
               "\r\nContent-Type: application/json\r\nTransfer-Encoding: Chunked\r\n"
               "Connection: close\r\n\r\n" +
               size + "\r\n" + body + "\r\n0\r\nX-Trailer: fine\r\n\r\n");
  int error = 0;
  CHECK(Statuses(conn.ReadToEnd(&error)) == std::vector<int>{201});
  CheckHealthy(srv);
}

TEST_CASE("clients that send requests and never read are dropped after the read timeout") {
  ServeFixture srv({"--read-timeout", "1s"});
  auto c = srv.Client();
  for (int i = 0; i < 20; ++i) {
    REQUIRE(c->Post("/v1/instances", InstanceBody("big-" + std::to_string(i))).status == 201);
  }
  const double before = Metric(srv, "cairn_open_connections");
  // Each answer is ~10 KB: 2,000 of them fill every buffer on the way, and
  // the server's write of the next one can never finish.
  std::string pipeline;
  for (int i = 0; i < 2000; ++i) pipeline += Get("/v1/instances?limit=200");
  std::vector<std::unique_ptr<RawConnection>> deaf;
  for (int i = 0; i < 10; ++i) {
    deaf.push_back(std::make_unique<RawConnection>(srv.base(), 2, 4096));
    deaf.back()->SendAll(pipeline);  // may stop at the send timeout: the server stopped reading
  }
  // Without a write timeout they stayed open for good (and their answers
  // in memory); now each is closed once its write has taken over 1 s.
  CHECK(PollUntil([&] { return Metric(srv, "cairn_open_connections"); },
                  [&](double v) { return v <= before + 1; }) <= before + 1);
  CheckHealthy(srv);
}

TEST_CASE("connections past --max-connections are closed at once, and /metrics counts them") {
  ServeFixture srv({"--max-connections", "4"});
  auto c = srv.Client();  // every metric is read on this one connection
  auto metric = [&](const std::string& name) { return MetricValue(*c, name); };
  CHECK(metric("cairn_max_connections") == 4);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<RawConnection>(srv.base()));
    REQUIRE(held.back()->SendAll(Get("/healthz")) == 0);
    CHECK(held.back()->ReadUntil("\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0);
  }
  CHECK(metric("cairn_open_connections") == 4);
  {
    RawConnection fifth(srv.base());
    fifth.SendAll(Get("/healthz"));
    int error = 0;
    CHECK(fifth.ReadToEnd(&error).empty());  // closed without a byte
  }
  CHECK(metric("cairn_connections_refused_total") == 1);
  CHECK(metric("cairn_open_connections") == 4);
  // A slot that frees up is taken again.
  held.pop_back();
  CHECK(PollUntil([&] { return metric("cairn_open_connections"); },
                  [](double v) { return v <= 3; }) <= 3);
  RawConnection again(srv.base());
  REQUIRE(again.SendAll(Get("/healthz", "HTTP/1.1", "Connection: close\r\n")) == 0);
  int error = 0;
  CHECK(Statuses(again.ReadToEnd(&error)) == std::vector<int>{200});
}

}  // namespace serve_hostile_http_test
