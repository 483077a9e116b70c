// libFuzzer target: ParseJson (base/value.h), which reads every API answer,
// listing page, state row and request body, with simdjson under it and
// nlohmann's parser for what simdjson refuses. Beyond "no crash, hang or
// leak" it checks that the two parsers are one to a caller: ParseJson
// accepts exactly what nlohmann's parser accepts (a NUL byte and nesting
// past the limit aside, which it refuses first), and builds the same value,
// equal, written the same and of the same type at every level (an integer
// -0 aside: base/value.cc).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/value.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& input) {
  std::fprintf(stderr, "json_fuzz: %s\n  input: %s\n", what, input.substr(0, 400).c_str());
  std::abort();
}

// The same type at every level, an unsigned 0 for a signed one aside.
bool SameTypes(const cairn::Value& a, const cairn::Value& b) {
  if (a.type() != b.type()) {
    return a.is_number_integer() && b.is_number_integer() && a == 0 && b == 0;
  }
  if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameTypes(a[i], b[i])) return false;
    }
  }
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !SameTypes(it.value(), *other)) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto got = cairn::ParseJson(text);
  if (text.find('\0') != std::string::npos) {
    if (got.ok()) Fail("a NUL byte was accepted", text);
    return 0;
  }
  const cairn::Value expected =
      cairn::Value::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (expected.is_discarded()) {
    if (got.ok()) Fail("accepted what nlohmann's parser refuses", text);
    return 0;
  }
  if (!got.ok()) {
    if (got.status().message().find("nests deeper") == std::string::npos)
      Fail("refused what nlohmann's parser accepts", text);
    return 0;
  }
  if (*got != expected) Fail("a value unequal to nlohmann's", text);
  if (got->dump(-1, ' ', false, cairn::Value::error_handler_t::replace) !=
      expected.dump(-1, ' ', false, cairn::Value::error_handler_t::replace))
    Fail("a value written otherwise than nlohmann's", text);
  if (!SameTypes(*got, expected)) Fail("a value of other types than nlohmann's", text);
  return 0;
}
