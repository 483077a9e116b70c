// libFuzzer target: the expression language (engine/manifest/expr.h) on an
// arbitrary string, the text of one manifest value. Beyond "no crash, hang
// or leak" it checks what the header promises:
//   - EscapeTemplateLiteral(s) reads back as the one literal s;
//   - every expression's ToString parses back to an expression with the
//     same ToString;
//   - ResolveReferences keeps a string without expressions as it is, and
//     resolves references nested in lists and mappings like at the top.
// ResourceReferences runs over the same value.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>

#include "base/value.h"
#include "engine/address.h"
#include "engine/manifest/expr.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& input) {
  std::fprintf(stderr, "expr_fuzz: %s\n  input: %s\n", what, input.substr(0, 400).c_str());
  std::abort();
}

// Attribute values of every shape; `id` of network.core is unknown.
std::optional<cairn::Value> Lookup(const cairn::ResourceAddress& a, const std::string& attr) {
  if (attr == "missing") return std::nullopt;
  if (attr == "id") return a.kind == "network" ? cairn::UnknownValue() : cairn::Value(a.ToString());
  if (attr == "n") return cairn::Value(42);
  if (attr == "list") return cairn::Value::array({"a", 1, nullptr});
  if (attr == "map") return cairn::Value{{"k", "v"}};
  if (attr == "bad") return cairn::Value("\xff\xfe");  // not UTF-8: dumps must not throw
  return cairn::Value(attr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s(reinterpret_cast<const char*>(data), size);
  auto parsed = cairn::ParseTemplate(s);
  if (const auto* t = std::get_if<cairn::Template>(&parsed)) {
    (void)t->exact();
    (void)t->has_expressions();
    for (const auto& part : t->parts) {
      const auto* e = std::get_if<cairn::Expression>(&part);
      if (!e) continue;
      if (e->begin >= e->end || e->end > s.size()) Fail("expression offsets out of range", s);
      std::string text = "${" + e->ToString() + "}";
      auto reparsed = cairn::ParseTemplate(text);
      const auto* t3 = std::get_if<cairn::Template>(&reparsed);
      if (!t3 || !t3->exact()) Fail("an expression's ToString does not parse back", s);
      if (std::get<cairn::Expression>(t3->parts[0]).ToString() != e->ToString())
        Fail("an expression's ToString changes when parsed back", s);
      if (e->type == cairn::Expression::Type::kResource) {
        (void)cairn::ResourceAddress::Parse(e->target.ToString());
      }
    }
  } else {
    const auto& err = std::get<cairn::TemplateError>(parsed);
    if (err.offset > s.size()) Fail("error offset out of range", s);
  }

  std::string escaped = cairn::EscapeTemplateLiteral(s);
  auto literal = cairn::ParseTemplate(escaped);
  const auto* lt = std::get_if<cairn::Template>(&literal);
  if (!lt || lt->has_expressions()) Fail("an escaped literal holds an expression", s);
  std::string joined;
  for (const auto& part : lt->parts) joined += std::get<std::string>(part);
  if (joined != s) Fail("an escaped literal does not read back as itself", s);

  cairn::Value v = s;
  cairn::Value resolved = cairn::ResolveReferences(v, Lookup);
  if (!cairn::HasTemplateSyntax(s) && resolved != v) Fail("a plain string changed", s);
  cairn::Value nested = {{"a", cairn::Value::array({s, {{"b", s}}})}, {"c", 1}};
  cairn::Value nested_resolved = cairn::ResolveReferences(nested, Lookup);
  if (!cairn::IsUnknown(resolved) && nested_resolved["a"][0] != resolved)
    Fail("a nested string resolves differently", s);
  (void)cairn::InterpolationText(resolved);
  (void)cairn::ResourceReferences(nested);
  return 0;
}
