// `cairn plan` and `cairn apply` against `cairn serve --tls-cert`: the
// engine verifies the server's certificate against CAIRN_CA_BUNDLE (or a
// provider's ca_bundle), refuses a server it cannot verify, and never sends
// the token before it has.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "tests/cli/support/stack_env.h"
#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"
#include "tests/support/test_tls.h"

namespace tls_command_test {

using namespace cairn::testing;

struct TlsServer {
  TempDir dir;
  TestCa ca;
  std::string ca_file = dir.path() + "/ca.pem";
  std::string cert = dir.path() + "/server.crt";
  std::string key = dir.path() + "/server.key";
  TlsServer() {
    WriteFile(ca_file, ca.ca_pem());
    TestCertificate c = ca.Issue(0x7001);
    WriteFile(cert, c.cert_pem);
    WriteFile(key, c.key_pem);
  }
  std::vector<std::string> Args() const { return {"--tls-cert", cert, "--tls-key", key}; }
};

TEST_CASE("tls: plan and apply a stack over HTTPS with CAIRN_CA_BUNDLE") {
  TlsServer tls;
  StackEnv s(tls.Args());
  REQUIRE(s.server.base().rfind("https://127.0.0.1:", 0) == 0);

  HttpClient c(s.server.base());
  c.TrustCa(tls.ca_file);
  auto instances = [&] {
    auto listed = c.Get("/api/v1/compute?limit=50");
    REQUIRE(listed.status == 200);
    return listed.json()["data"].size();
  };

  // Without the CA the engine refuses the server, and says why: at the
  // first attempt, once however many resources, the token never sent.
  auto refused = s.Cairn({"apply", s.stack, "--auto-approve"});
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("tls_untrusted") != std::string::npos);
  CHECK(refused.err.find("certificate") != std::string::npos);
  CHECK(refused.err.find("CAIRN_CA_BUNDLE") != std::string::npos);
  CHECK(refused.err.find(kDevToken) == std::string::npos);
  size_t first = refused.err.find("tls_untrusted");
  CHECK(refused.err.find("tls_untrusted", first + 1) == std::string::npos);
  CHECK(refused.err.find("retrying") == std::string::npos);
  CHECK(instances() == 0);

  s.env["CAIRN_CA_BUNDLE"] = tls.ca_file;
  auto plan = s.Cairn({"plan", s.stack, "--detailed-exitcode"});
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 2);
  CHECK(plan.out.find("+ instance.web[1]") != std::string::npos);
  auto apply = s.Cairn({"apply", s.stack, "--auto-approve"});
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  CHECK(instances() == 2);

  // Nothing left to do (the plan refreshes every resource over HTTPS); the
  // same through the certificate's other name.
  auto again = s.Cairn({"plan", s.stack, "--detailed-exitcode"});
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  const std::string port = s.server.base().substr(s.server.base().rfind(':') + 1);
  s.env["CAIRN_ENDPOINT"] = "https://localhost:" + port;
  CHECK(s.Cairn({"plan", s.stack, "--detailed-exitcode"}).exit_code == 0);

  // Another CA's bundle: refused as well, the refresh never sent.
  TestCa other("Another Test CA");
  WriteFile(tls.dir.path() + "/other.pem", other.ca_pem());
  s.env["CAIRN_CA_BUNDLE"] = tls.dir.path() + "/other.pem";
  auto wrong_ca = s.Cairn({"plan", s.stack});
  INFO(wrong_ca.out << wrong_ca.err);
  CHECK(wrong_ca.exit_code == 1);
  CHECK(wrong_ca.err.find("tls_untrusted") != std::string::npos);
}

TEST_CASE("tls: a provider's ca_bundle trusts the server and plain http to it fails clearly") {
  TlsServer tls;
  StackEnv s(tls.Args());
  // The provider document names the bundle (relative to the stack).
  WriteFile(s.stack + "/ca.pem", ReadFile(tls.ca_file));
  WriteFile(s.stack + "/provider.yaml",
            "kind: provider\nname: infra\nendpoint: " + s.server.base() + "\nca_bundle: ca.pem\n");
  s.env["CAIRN_ENDPOINT"] = "";  // unset: the provider document says where
  auto apply = s.Cairn({"apply", s.stack, "--auto-approve"});
  INFO(apply.out << apply.err);
  CHECK(apply.exit_code == 0);
  CHECK(s.Cairn({"plan", s.stack, "--detailed-exitcode"}).exit_code == 0);

  // http:// to the HTTPS port: an error that says so, not a hang.
  const std::string port = s.server.base().substr(s.server.base().rfind(':') + 1);
  WriteFile(s.stack + "/provider.yaml",
            "kind: provider\nname: infra\nendpoint: http://127.0.0.1:" + port + "\n");
  auto plain = s.Cairn({"plan", s.stack});  // its refresh meets the 400
  INFO(plain.out << plain.err);
  CHECK(plain.exit_code == 1);
  CHECK(plain.err.find("https_required") != std::string::npos);
  CHECK(plain.err.find("send the request to https://") != std::string::npos);
  CHECK(plain.err.find(kDevToken) == std::string::npos);
}

TEST_CASE("tls: https to a plain HTTP server fails as unreachable and sends no token") {
  StackEnv s;  // plain HTTP
  const std::string port = s.server.base().substr(s.server.base().rfind(':') + 1);
  s.env["CAIRN_ENDPOINT"] = "https://127.0.0.1:" + port;
  auto apply = s.Cairn({"apply", s.stack, "--auto-approve"});
  INFO(apply.out << apply.err);
  CHECK(apply.exit_code == 1);
  CHECK(apply.err.find("[unreachable]") != std::string::npos);
  CHECK(apply.err.find("TLS handshake failed") != std::string::npos);
  CHECK(apply.err.find(kDevToken) == std::string::npos);
  CHECK(s.Names("/api/v1/compute").empty());
}

}  // namespace tls_command_test
