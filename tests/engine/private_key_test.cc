#include "base/private_key.h"

#include <catch2/catch.hpp>
#include <vector>

#include "providers/infra/infra_provider.h"
#include "server/ssh_key.h"

namespace private_key_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("private key armour and PuTTY headers are found with their position") {
  auto m = FindPrivateKey(
      "a: 1\n  key: -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n");
  CHECK(m.line == 2);
  CHECK(m.column == 8);
  CHECK(m.length == 31);
  CHECK(FindPrivateKey("-----BEGIN PRIVATE KEY-----").found());
  CHECK(FindPrivateKey("x\n-----BEGIN ENCRYPTED PRIVATE KEY-----").line == 2);
  CHECK(FindPrivateKey("PuTTY-User-Key-File-3: ssh-ed25519\n").found());
  CHECK_FALSE(FindPrivateKey("-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----").found());
  CHECK_FALSE(FindPrivateKey("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA user@host").found());
}

TEST_CASE("redaction keeps the marker line and hides every line of key material") {
  std::string text =
      "kind: ssh_key\n"
      "spec:\n"
      "  public_key: |\n"
      "    -----BEGIN OPENSSH PRIVATE KEY-----\n"
      "    b3BlbnNzaC1rZXktdjEAAAAA\n"
      "    -----END OPENSSH PRIVATE KEY-----\n"
      "name: k\n"
      "inline: \"-----BEGIN RSA PRIVATE KEY-----\\nMIIEsecret\\n-----END RSA PRIVATE KEY-----\"\n"
      "after: 1\n";
  std::string r = RedactPrivateKeys(text);
  CHECK(r.find("b3BlbnNzaC1rZXktdjEAAAAA") == std::string::npos);
  CHECK(r.find("MIIEsecret") == std::string::npos);
  CHECK(r.find("    -----BEGIN OPENSSH PRIVATE KEY----- [REDACTED]\n[REDACTED]\n[REDACTED]\nname: "
               "k\n") != std::string::npos);
  CHECK(r.find("after: 1") != std::string::npos);
  // Lines are kept one for one, so positions stay right.
  CHECK(std::count(r.begin(), r.end(), '\n') == std::count(text.begin(), text.end(), '\n'));
}

TEST_CASE("one private key rule for the loader, the provider and the server") {
  // Every spelling of an armour line whose label names a private key, and
  // PuTTY files; not public keys, certificates, nor the words alone.
  const std::vector<std::pair<std::string, bool>> cases = {
      {"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----", true},
      {"x -----BEGIN RSA PRIVATE KEY----- y", true},
      {"-----BEGIN ENCRYPTED PRIVATE KEY-----", true},
      {"-----BEGIN PRIVATE KEY-----", true},
      {"-----BEGINPRIVATE KEY-----", true},
      {"-----BEGIN EC PRIVATE KEY BLOCK-----", true},
      {"PuTTY-User-Key-File-3: ssh-ed25519", true},
      {"PuTTY-User-Key-File: x", true},
      {"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", false},
      {"-----BEGIN CERTIFICATE-----", false},
      {"my PRIVATE KEY is elsewhere", false},
      {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g c", false},
  };
  for (const auto& [text, key] : cases) {
    INFO(text);
    CHECK(FindPrivateKey(text).found() == key);                        // the loader's
    CHECK(cairn::server::ContainsPrivateKeyMaterial(text) == key);     // the server's
    CHECK(ValueHasPrivateKey(Value{{"spec", {{"k", text}}}}) == key);  // the provider's
    CHECK(ValueHasPrivateKey(Value{{text, 1}}) == key);                // keys too
  }
}

}  // namespace private_key_test
