// `cairn serve --tls-cert --tls-key`: HTTPS with a certificate of a
// throwaway CA made here (tests/support/test_tls.h), checked by libcurl as
// any client would; old protocol versions and plain HTTP refused without
// harm; the certificate re-read on SIGHUP, a broken one never replacing a
// good one; bad files refused before the server listens.
#include <openssl/ssl.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/server/raw_connection.h"
#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"
#include "tests/support/test_tls.h"

namespace serve_tls_test {

using namespace cairn::testing;

// The files of one TLS setup: the CA's certificate, the server's
// certificate and key.
struct TlsFiles {
  TempDir dir;
  std::string ca = dir.path() + "/ca.pem";
  std::string cert = dir.path() + "/server.crt";
  std::string key = dir.path() + "/server.key";
  TlsFiles(const TestCa& ca_, long serial) {
    WriteFile(ca, ca_.ca_pem());
    Write(ca_.Issue(serial));
  }
  void Write(const TestCertificate& c) {
    WriteFile(cert, c.cert_pem);
    WriteFile(key, c.key_pem);
  }
  std::vector<std::string> Args(std::vector<std::string> more = {}) const {
    std::vector<std::string> args = {"--tls-cert", cert, "--tls-key", key};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
};

int PortOf(const std::string& base) { return std::stoi(base.substr(base.rfind(':') + 1)); }

std::unique_ptr<HttpClient> Trusting(const ServeFixture& srv, const std::string& ca) {
  auto c = std::make_unique<HttpClient>(srv.base());
  c->TrustCa(ca);
  return c;
}

uint64_t Metric(HttpClient& c, const std::string& name) {
  auto families = ScrapeMetrics(c);
  const Sample* s = FindSample(families, name);
  INFO(name);
  REQUIRE(s != nullptr);
  return static_cast<uint64_t>(s->value);
}

// The handshake failures counted, once the server has seen `at_least` (a
// refused client may hang up before the server has counted its failure).
uint64_t HandshakeFailures(HttpClient& c, uint64_t at_least) {
  return PollUntil([&] { return Metric(c, "cairn_tls_handshake_failures_total"); },
                   [&](uint64_t n) { return n >= at_least; });
}

TEST_CASE("tls: a client trusting the CA uses the whole API over HTTPS") {
  TestCa ca;
  TlsFiles files(ca, 0x1001);
  ServeFixture srv(files.Args());
  REQUIRE(srv.base().rfind("https://127.0.0.1:", 0) == 0);
  auto c = Trusting(srv, files.ca);

  auto health = c->Get("/healthz");
  INFO(health.error);
  REQUIRE(health.status == 200);
  auto created = c->Post("/api/v1/compute", InstanceBody("tls-1"), "tls-create-1");
  INFO(created.body);
  REQUIRE(created.status == 201);
  const std::string id = created.json()["instance"]["publicId"];
  // Keep-alive: the next requests ride the same TLS connection.
  auto got = c->Get("/api/v1/compute/" + id);
  CHECK(got.status == 200);
  CHECK(got.new_connections == 0);
  CHECK(got.json()["instance"]["name"] == "tls-1");
  // The idempotency key replays over TLS as over plain HTTP.
  auto replay = c->Post("/api/v1/compute", InstanceBody("tls-1"), "tls-create-1");
  CHECK(replay.status == 201);
  CHECK(replay.json()["instance"]["publicId"] == id);
  // The framer's limits hold inside TLS: a body over 1 MiB is refused.
  auto big = c->Request("POST", "/api/v1/compute", std::string(2 * 1024 * 1024, 'x'),
                        {"Content-Type: application/json", "Idempotency-Key: tls-big"});
  CHECK(big.status == 413);
  // Served as localhost too (the certificate names both).
  HttpClient by_name("https://localhost:" + std::to_string(PortOf(srv.base())));
  by_name.TrustCa(files.ca);
  CHECK(by_name.Get("/v1/regions").status == 200);
  CHECK(Metric(*c, "cairn_open_connections") >= 1);
  CHECK(Metric(*c, "cairn_tls_handshake_failures_total") == 0);

  // Graceful shutdown as without TLS.
  srv.process().Signal(SIGTERM);
  CHECK(srv.process().Wait() == 0);
}

TEST_CASE("tls: a client that does not trust the CA is refused") {
  TestCa ca;
  TlsFiles files(ca, 0x1002);
  ServeFixture srv(files.Args());
  // The system's CAs do not know the test CA.
  HttpClient system(srv.base());
  auto r = system.Get("/healthz");
  CHECK(r.status == 0);
  CHECK(r.error.find("certificate") != std::string::npos);
  // Nor does another CA's bundle vouch for it.
  TestCa other("Another Test CA");
  TempDir dir;
  WriteFile(dir.path() + "/other.pem", other.ca_pem());
  HttpClient wrong_ca(srv.base());
  wrong_ca.TrustCa(dir.path() + "/other.pem");
  auto wrong = wrong_ca.Get("/healthz");
  INFO(wrong.error);
  CHECK(wrong.status == 0);
  CHECK(wrong.error.find("SSL certificate problem: unable to get local issuer certificate") !=
        std::string::npos);
  // The server is unharmed and counted both.
  auto good = Trusting(srv, files.ca);
  CHECK(good->Get("/healthz").status == 200);
  CHECK(HandshakeFailures(*good, 2) == 2);
}

TEST_CASE("tls: TLS 1.0 and 1.1 are refused and 1.2 and 1.3 accepted") {
  TestCa ca;
  TlsFiles files(ca, 0x1003);
  ServeFixture srv(files.Args());
  const int port = PortOf(srv.base());

  auto tls11 = TlsProbe(port, TLS1_1_VERSION, TLS1_1_VERSION);
  CHECK_FALSE(tls11.ok);
  CHECK(tls11.error.find("protocol version") != std::string::npos);
  auto tls10 = TlsProbe(port, TLS1_VERSION, TLS1_VERSION);
  CHECK_FALSE(tls10.ok);
  CHECK(tls10.error.find("protocol version") != std::string::npos);

  auto tls12 = TlsProbe(port, TLS1_2_VERSION, TLS1_2_VERSION);
  INFO(tls12.error);
  CHECK(tls12.ok);
  CHECK(tls12.version == "TLSv1.2");
  CHECK(tls12.peer_serial == "1003");
  auto tls13 = TlsProbe(port, TLS1_3_VERSION, TLS1_3_VERSION);
  CHECK(tls13.ok);
  CHECK(tls13.version == "TLSv1.3");
  // A client that offers 1.1 to 1.3 gets the newest.
  auto any = TlsProbe(port, TLS1_1_VERSION, TLS1_3_VERSION);
  CHECK(any.version == "TLSv1.3");
  auto c = Trusting(srv, files.ca);
  CHECK(HandshakeFailures(*c, 2) == 2);
}

TEST_CASE("tls: plain HTTP or silence on the TLS port closes the connection and nothing else") {
  TestCa ca;
  TlsFiles files(ca, 0x1004);
  ServeFixture srv(files.Args({"--read-timeout", "1s"}));
  const std::string port = std::to_string(PortOf(srv.base()));
  {
    // A plain request gets a plain 400 saying why, then the end.
    RawConnection raw("http://127.0.0.1:" + port);
    REQUIRE(raw.SendAll("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") == 0);
    int error = 0;
    std::string answer = raw.ReadToEnd(&error);
    CHECK(error == 0);
    CHECK(answer.rfind("HTTP/1.1 400 ", 0) == 0);
    CHECK(answer.find("\"code\":\"https_required\"") != std::string::npos);
    CHECK(answer.find("send the request to https://") != std::string::npos);
  }
  {
    // libcurl sees the same.
    HttpClient plain("http://127.0.0.1:" + port);
    auto r = plain.Get("/healthz");
    CHECK(r.status == 400);
    CHECK(r.json()["error"]["code"] == "https_required");
    CHECK(r.header("connection") == "close");
  }
  {
    // A client that connects and sends nothing is dropped at the read
    // timeout, as one that stalls mid-handshake is.
    RawConnection silent("http://127.0.0.1:" + port);
    int error = 0;
    CHECK(silent.ReadToEnd(&error).empty());
    CHECK(error == 0);
    RawConnection stalled("http://127.0.0.1:" + port);
    REQUIRE(stalled.SendAll(std::string("\x16\x03\x01\x02\x00\x01", 6)) == 0);
    stalled.ReadToEnd(&error);
    CHECK(error != EAGAIN);  // closed by the server, not our 10 s timeout
  }
  {
    // A ClientHello that is garbage fails the handshake.
    RawConnection garbage("http://127.0.0.1:" + port);
    REQUIRE(garbage.SendAll(std::string("\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00", 10)) == 0);
    int error = 0;
    garbage.ReadToEnd(&error);
    CHECK(error != EAGAIN);
  }
  auto c = Trusting(srv, files.ca);
  CHECK(c->Get("/healthz").status == 200);
  CHECK(HandshakeFailures(*c, 5) == 5);
  srv.process().Signal(SIGTERM);
  CHECK(srv.process().Wait() == 0);
}

TEST_CASE("tls: SIGHUP loads a renewed certificate and a broken one keeps the old") {
  TestCa ca;
  TlsFiles files(ca, 0x1005);
  ServeFixture srv(files.Args());
  const int port = PortOf(srv.base());
  REQUIRE(TlsProbe(port, TLS1_2_VERSION, TLS1_3_VERSION).peer_serial == "1005");
  // A connection opened before the reload...
  auto kept = Trusting(srv, files.ca);
  REQUIRE(kept->Get("/healthz").status == 200);

  files.Write(ca.Issue(0x2006));
  srv.process().Signal(SIGHUP);
  auto renewed = PollUntil([&] { return TlsProbe(port, TLS1_2_VERSION, TLS1_3_VERSION); },
                           [](const TlsProbeResult& r) { return r.peer_serial == "2006"; });
  CHECK(renewed.peer_serial == "2006");
  // ... goes on, on its connection, undisturbed.
  auto again = kept->Get("/v1/regions");
  CHECK(again.status == 200);
  CHECK(again.new_connections == 0);
  // A new client verifies the new certificate against the same CA.
  CHECK(Trusting(srv, files.ca)->Get("/healthz").status == 200);

  SECTION("a file that is not a certificate") { WriteFile(files.cert, "not a certificate\n"); }
  SECTION("a key that is not the certificate's") {
    TestCertificate a = ca.Issue(0x3007), b = ca.Issue(0x3008);
    WriteFile(files.cert, a.cert_pem);
    WriteFile(files.key, b.key_pem);
  }
  SECTION("a missing key file") {
    files.Write(ca.Issue(0x3009));
    std::remove(files.key.c_str());
  }
  srv.process().Signal(SIGHUP);
  auto logged = PollUntil([&] { return srv.process().Stderr(); },
                          [](const std::string& err) {
                            return err.find("TLS certificate not reloaded") != std::string::npos;
                          });
  INFO(logged);
  CHECK(logged.find("TLS certificate not reloaded, the previous one stays in use") !=
        std::string::npos);
  CHECK((logged.find(files.cert) != std::string::npos ||
         logged.find(files.key) != std::string::npos));
  // Still the renewed certificate, and still serving.
  CHECK(TlsProbe(port, TLS1_2_VERSION, TLS1_3_VERSION).peer_serial == "2006");
  CHECK(Trusting(srv, files.ca)->Get("/healthz").status == 200);
  CHECK(kept->Get("/healthz").status == 200);
  srv.process().Signal(SIGTERM);
  CHECK(srv.process().Wait() == 0);
}

TEST_CASE("tls: a bad certificate or key stops the start before listening") {
  TestCa ca;
  TlsFiles files(ca, 0x100a);
  TempDir data;
  auto serve = [&](std::vector<std::string> tls) {
    std::vector<std::string> args = {
        "serve",       "--listen", "127.0.0.1:0", "--data-dir", data.path() + "/data",
        "--dev-token", kDevToken};
    args.insert(args.end(), tls.begin(), tls.end());
    return RunCairn(args);
  };
  auto check = [&](const CommandResult& r, const std::string& message) {
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("listening") == std::string::npos);
    CHECK(r.err.find(message) != std::string::npos);
  };
  check(serve({"--tls-cert", files.cert}), "--tls-cert needs --tls-key");
  check(serve({"--tls-key", files.key}), "--tls-key needs --tls-cert");
  const std::string missing = data.path() + "/missing.crt";
  check(serve({"--tls-cert", missing, "--tls-key", files.key}), "cannot read " + missing);
  check(serve({"--tls-cert", files.cert, "--tls-key", missing}), "cannot read " + missing);
  // A key file given as the certificate, and the other way round.
  check(serve({"--tls-cert", files.key, "--tls-key", files.key}),
        files.key + " holds no PEM certificate");
  check(serve({"--tls-cert", files.cert, "--tls-key", files.cert}),
        files.cert + " holds no PEM private key");
  // Another certificate's key.
  const std::string other_key = data.path() + "/other.key";
  WriteFile(other_key, ca.Issue(0x100b).key_pem);
  check(serve({"--tls-cert", files.cert, "--tls-key", other_key}),
        other_key + " is not the private key of the certificate in " + files.cert);
  // A passphrase-protected key: refused, never a prompt.
  const std::string locked = data.path() + "/locked.key";
  WriteFile(locked, EncryptedKeyPem(ReadFile(files.key), "s3cret-passphrase"));
  check(serve({"--tls-cert", files.cert, "--tls-key", locked}), "protected by a passphrase");
  // Nothing was opened: the data directory was never made.
  CHECK_FALSE(std::filesystem::exists(data.path() + "/data"));
}

}  // namespace serve_tls_test
