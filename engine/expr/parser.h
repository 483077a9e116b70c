// The parser of the expression language: HCL's native expression syntax, as
// Terraform users write it inside "${...}" (docs/manifests.md,
// "Expressions"), into the tree of ast.h.
//
// A manifest string is a template: literal text with "${ EXPR }"
// interpolations ("$${" is a literal "${"; "${~" and "~}" strip the
// whitespace beside them). Inside an expression, a quoted string is a
// template too, with HCL's escapes (\n \t \" \\ \uNNNN \UNNNNNNNN) and,
// there and in templatefile() only, the directives %{if}/%{else}/%{endif}
// and %{for}/%{endfor} ("%%{" is a literal "%{"). Outside quoted strings
// a manifest string's "%{" is plain text, as it always was.
//
// Grammar, loosest first (HCL's precedence):
//   expr    := or ("?" expr ":" expr)?
//   or      := and ("||" and)*          and := eq ("&&" eq)*
//   eq      := cmp (("=="|"!=") cmp)*   cmp := add (("<"|"<="|">"|">=") add)*
//   add     := mul (("+"|"-") mul)*     mul := unary (("*"|"/"|"%") unary)*
//   unary   := ("-"|"!") unary | postfix
//   postfix := primary ("." NAME | "." DIGITS | "[" expr "]" | "[*]" trav | ".*" trav)*
//   primary := NUMBER | "true" | "false" | "null" | STRING | NAME | NAME "(" args ")"
//            | "(" expr ")" | "[" tuple-or-for "]" | "{" object-or-for "}"
// Names may hold letters, digits, "_" and "-" (HCL's identifiers): `a-b` is
// one name; subtraction wants spaces or an operand that is not a name.
// Comments (# and // to the end of the line, /* */) count as spaces.
//
// Nesting is bounded (kMaxDepth) so that no input overflows the stack.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "engine/expr/ast.h"

namespace cairn::expr {

inline constexpr int kMaxDepth = 64;

struct ParseError {
  std::string message;  // "expected \"]\" to close the list"
  uint32_t begin = 0;   // where, in bytes of the text parsed
  uint32_t end = 0;
};

using ParseResult = std::variant<NodePtr, ParseError>;

// A manifest string as a template. The result is a kLiteral string when the
// text holds no interpolation (escapes undone), the expression itself when
// the text is exactly one "${...}" (so that it keeps its value's type), and
// a kTemplate otherwise.
ParseResult ParseTemplate(std::string_view text);

// Text with directives, as templatefile() reads a file.
ParseResult ParseTemplateWithDirectives(std::string_view text);

// One expression, the whole of `text` (`cairn console`, tests).
ParseResult ParseExpression(std::string_view text);

// True when `text` needs ParseTemplate at all: it holds "${" (or "$${").
bool HasTemplateSyntax(std::string_view text);

// `text` with every "${" written "$${", so that ParseTemplate reads it back
// as this literal text.
std::string EscapeTemplateText(std::string_view text);

}  // namespace cairn::expr
