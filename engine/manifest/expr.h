// Expressions: the only computation the manifest language has. They appear
// inside strings as `${...}`:
//   ${var.NAME}                 a variable
//   ${env.NAME}                 an environment variable
//   ${count.index}              the instance's index under `count`
//   ${each.key} ${each.value}   the instance's key and value under `for_each`
//   ${each.value.FIELD}         a field of a mapping `each.value`
//   ${file("relative/path")}    a file's content (relative to the manifest)
//   ${KIND.NAME.ATTR}           an attribute of another resource; also
//   ${KIND.NAME[2].ATTR} ${KIND.NAME["key"].ATTR} ${KIND.NAME[*].ATTR}
//   ${data.KIND.NAME.ATTR}      an attribute of a data source (an existing
//                               resource read at plan time; its target's
//                               kind is "data.KIND")
//   ${module.NAME.OUTPUT}       an output of a module (`kind: module`); also
//   ${module.NAME[0].OUTPUT} ${module.NAME["key"].OUTPUT}
// The loader writes a reference made inside a module with the module's
// path in front (${module.app.instance.web.id}); a resource target's
// `module` holds that path.
// `$${` is a literal `${`. A string that is exactly one expression takes the
// value's type (a list stays a list); otherwise the string is interpolated.
//
// LoadStack (loader.h) substitutes everything except resource references
// (a module's outputs too: they become the references they stand for),
// and expands an exact `[*]` reference into a list of per-instance
// references. Strings left in a StackConfig are in "expression form": `$${`
// escapes are kept, so pass every spec and output value through
// ResolveReferences before use (it is the identity on plain values).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/value.h"
#include "engine/address.h"
#include "engine/manifest/config.h"

namespace cairn {

struct Expression {
  enum class Type {
    kVar,
    kEnv,
    kCountIndex,
    kEachKey,
    kEachValue,
    kFile,
    kResource,
    kModuleOutput
  };
  Type type = Type::kVar;
  // kVar, kEnv: the name; kFile: the path; kEachValue: dotted field path or "".
  std::string name;
  // kResource: the target (its index: none, count index or for_each key)
  // and attribute; `splat` for [*]. kModuleOutput: target.module is the
  // module instance and attr the output's name.
  ResourceAddress target;
  bool splat = false;
  std::string attr;
  // Byte offsets of "${" and one past "}" in the source string.
  size_t begin = 0;
  size_t end = 0;

  // Canonical text without "${" "}": "instance.web[0].id", "var.region".
  std::string ToString() const;
};

// A string split into literal text (escapes already undone) and expressions.
struct Template {
  std::vector<std::variant<std::string, Expression>> parts;

  // True when the string is exactly one expression and nothing else.
  bool exact() const { return parts.size() == 1 && std::holds_alternative<Expression>(parts[0]); }
  bool has_expressions() const;
};

struct TemplateError {
  std::string message;  // "unterminated expression: missing \"}\""
  size_t offset = 0;    // byte offset in the string where the problem is
  size_t length = 1;
};

// True when `s` needs parsing at all (holds "${" or "$${").
bool HasTemplateSyntax(std::string_view s);

// Parses `s`; on failure returns the first problem.
std::variant<Template, TemplateError> ParseTemplate(std::string_view s);

// `s` with every "${" written as "$${", so it reads back as literal text.
std::string EscapeTemplateLiteral(std::string_view s);

// A value interpolated into a string: strings as they are, numbers and
// booleans as JSON text, null as "", lists and mappings as compact JSON.
std::string InterpolationText(const Value& v);

// Substitutes every `${kind.name...attr}` left in `v` (strings in any
// nested position) using `lookup`, and undoes `$${` escapes. An exact
// reference takes the looked-up value's type; an interpolated string stays a
// string. When the lookup returns nullopt or UnknownValue() (or a value that
// contains one), the whole string becomes UnknownValue(). Strings that do not
// parse, and expressions other than resource references, are kept as they
// are; a leftover [*] becomes UnknownValue().
Value ResolveReferences(const Value& v, const AttributeLookup& lookup);

// Every resource-reference expression in `v`, in document order.
std::vector<Expression> ResourceReferences(const Value& v);

}  // namespace cairn
