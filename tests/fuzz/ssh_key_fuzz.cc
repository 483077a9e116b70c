// libFuzzer target: the SSH public key parser of POST /v1/ssh_keys
// (server/ssh_key.h, over base/schema/formats.h's ParseOpenSshPublicKey)
// and the private key detector every request body goes through. Beyond "no
// crash, hang or leak" it checks what the headers promise:
//   - a key that parses is normalised to "TYPE BASE64[ COMMENT]", which
//     parses again to itself with the same fingerprint ("SHA256:" and 43
//     characters of unpadded base64);
//   - the server and `cairn validate` agree: IsOpenSshPublicKey (the
//     schema format) accepts exactly what parses;
//   - a text that holds private key material still does when surrounded by
//     more text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/schema/formats.h"
#include "server/ssh_key.h"

namespace {
[[noreturn]] void Fail(const char* what, const std::string& input) {
  std::fprintf(stderr, "ssh_key_fuzz: %s\n  input: %s\n", what, input.substr(0, 400).c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s(reinterpret_cast<const char*>(data), size);
  auto key = cairn::server::ParseSshPublicKey(s);
  bool format_ok = cairn::IsOpenSshPublicKey(s);
  if (format_ok != key.ok()) Fail("server and validate disagree on a key", s);
  if (key.ok()) {
    if (key->fingerprint.size() != 7 + 43 || key->fingerprint.rfind("SHA256:", 0) != 0)
      Fail("a fingerprint of the wrong shape", s);
    if (key->line.rfind(key->type + " ", 0) != 0) Fail("the line does not start with its type", s);
    auto again = cairn::server::ParseSshPublicKey(key->line);
    if (!again.ok()) Fail("a normalised key does not parse", s);
    if (again->line != key->line || again->fingerprint != key->fingerprint ||
        again->type != key->type)
      Fail("a normalised key parses to something else", s);
  } else if (key.status().message().empty()) {
    Fail("a refusal without a message", s);
  }
  bool is_private = cairn::server::ContainsPrivateKeyMaterial(s);
  if (is_private && !cairn::server::ContainsPrivateKeyMaterial("x\n" + s + "\ny"))
    Fail("private key material hidden by surrounding text", s);
  return 0;
}
