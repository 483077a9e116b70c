#include "server/ssh_key.h"

#include <catch2/catch.hpp>

namespace ssh_key_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::server;

// Generated with ssh-keygen; fingerprints from `ssh-keygen -lf`.
static const char* kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK03FjmFCSrkKBVTLO9D6rL1ZNPfmk22wHBvofUlUGz7 test@cairn";
static const char* kRsa =
    "ssh-rsa "
    "AAAAB3NzaC1yc2EAAAADAQABAAABAQC9piwqjNEAahkNOV8CimWiYtqSomu+flSbuVcDYEE/"
    "4GQCrNMMgdU06QaDhjPu1iAQe1gyXV2LBnR6Vvv6YXlwyFQYQlTFB/xoFPqEpbB1/"
    "lfjo6Re2jDmpKny1Y5GUOT98t8HA4TBWN3y6TGi1Wi2QGHO+oP+ewfeYQrjWXhyh02NnBvEnnUn+4+ajzbxgQy/"
    "Hz4dST+070sc5gZY1JcrBMtrUReizOapOG+tgaLdmYU6YQ9MEtH4f4ekxeWyGbTHz+MbzOV1/"
    "87zmCmmVNA09gdgRXV0J2R7U1fXdA/X5cXSTNanN4zySjPTmhcLC/T1QJ1Z7+u4J6D4sok2NKWX rsa";
static const char* kEcdsa =
    "ecdsa-sha2-nistp256 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBGF7rHlgYjhQH6FPgfE7624Cm/Fu/"
    "uiKmFlMIZEbGAvCcOn3ug/JaHNpACWPxje8c8K7wcdki5ek5FKjnNc3P/c=";

TEST_CASE("OpenSSH public keys parse with ssh-keygen's SHA256 fingerprint") {
  auto ed = ParseSshPublicKey(kEd25519);
  REQUIRE(ed.ok());
  CHECK(ed->type == "ssh-ed25519");
  CHECK(ed->fingerprint == "SHA256:pKUCZphKjiNEFFC/VLj86rjqxrYtBDUUODgbovL4k+8");
  CHECK(ed->line == kEd25519);
  auto rsa = ParseSshPublicKey(std::string(kRsa) + "\n");
  REQUIRE(rsa.ok());
  CHECK(rsa->fingerprint == "SHA256:8EVvaRb9EHA072tfQnXqUjFGpzOIHp/ZQIGqc47UveE");
  auto ec = ParseSshPublicKey(kEcdsa);
  REQUIRE(ec.ok());
  CHECK(ec->fingerprint == "SHA256:KaKmYTKExAPZLZNFDcssXEeR9Y82SJ3YfFzJwyL56jY");
}

TEST_CASE("malformed public key lines are refused") {
  CHECK_FALSE(ParseSshPublicKey("").ok());
  CHECK_FALSE(ParseSshPublicKey("ssh-ed25519").ok());
  CHECK_FALSE(ParseSshPublicKey("ssh-dss AAAAB3NzaC1kc3M= x").ok());
  CHECK_FALSE(ParseSshPublicKey("ssh-ed25519 not*base64").ok());
  // The blob says ssh-ed25519 but the line says ssh-rsa.
  CHECK_FALSE(ParseSshPublicKey(
                  "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIK03FjmFCSrkKBVTLO9D6rL1ZNPfmk22wHBvofUlUGz7")
                  .ok());
  CHECK_FALSE(ParseSshPublicKey("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5").ok());  // truncated
  CHECK_FALSE(ParseSshPublicKey(std::string(kEd25519) + "\nssh-rsa AAAA").ok());
}

TEST_CASE("private key material is recognised") {
  CHECK(ContainsPrivateKeyMaterial("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn...\n"));
  CHECK(ContainsPrivateKeyMaterial("x -----BEGIN RSA PRIVATE KEY----- y"));
  CHECK(ContainsPrivateKeyMaterial("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
  CHECK(ContainsPrivateKeyMaterial("PuTTY-User-Key-File-3: ssh-ed25519"));
  CHECK_FALSE(ContainsPrivateKeyMaterial("-----BEGIN PUBLIC KEY-----"));
  CHECK_FALSE(ContainsPrivateKeyMaterial(kEd25519));
}

}  // namespace ssh_key_test
