#include "engine/expr/parser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace cairn::expr {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Thrown inside the parser only, caught at its entry points: the parse
// stops at the first error (one diagnostic per string).
struct Failure {
  ParseError error;
};

// One part of a template before its directives are nested: text, an
// interpolation, or a directive's keyword with its expression.
struct Part {
  enum Kind { kText, kInterp, kIf, kElse, kEndIf, kFor, kEndFor } kind = kText;
  std::string text;                // kText
  NodePtr expr;                    // kInterp, kIf, kFor (the collection)
  std::string key_var, value_var;  // kFor
  uint32_t begin = 0, end = 0;
  bool strip_before = false;  // "~" after the opening "${" or "%{"
  bool strip_after = false;   // "~" before the closing "}"
};

NodePtr Unwrap(NodePtr t);

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  // A whole template, up to the end of the text.
  NodePtr TopTemplate(bool directives) {
    std::vector<Part> parts = TemplateParts(directives, /*quoted=*/false);
    return BuildTemplate(parts, 0, static_cast<uint32_t>(s_.size()));
  }

  NodePtr TopExpression() {
    NodePtr e = Expr();
    SkipSpace();
    if (!AtEnd()) Fail(pos_, pos_ + 1, "unexpected " + Describe(pos_) + " after the expression");
    return e;
  }

 private:
  // ---- characters ----
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  bool LookingAt(std::string_view t) const { return s_.substr(pos_, t.size()) == t; }
  bool Eat(std::string_view t) {
    if (!LookingAt(t)) return false;
    pos_ += t.size();
    return true;
  }
  uint32_t Pos() const { return static_cast<uint32_t>(pos_); }

  [[noreturn]] void Fail(size_t begin, size_t end, std::string message) const {
    if (end <= begin) end = begin + 1;
    throw Failure{{std::move(message), static_cast<uint32_t>(begin), static_cast<uint32_t>(end)}};
  }

  std::string Describe(size_t at) const {
    if (at >= s_.size()) return "end of expression";
    char c = s_[at];
    if (IsNameStart(c)) {
      size_t e = at;
      while (e < s_.size() && IsNameChar(s_[e])) ++e;
      return "\"" + std::string(s_.substr(at, e - at)) + "\"";
    }
    if (static_cast<unsigned char>(c) < 0x20) return "a control character";
    return "\"" + std::string(1, c) + "\"";
  }

  // Spaces, newlines and comments. Returns whether a newline was skipped
  // (object elements may be separated by one).
  bool SkipSpace() {
    bool newline = false;
    while (!AtEnd()) {
      char c = Peek();
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\n') {
        newline = true;
        ++pos_;
      } else if (c == '#' || (c == '/' && Peek(1) == '/')) {
        while (!AtEnd() && Peek() != '\n') ++pos_;
      } else if (c == '/' && Peek(1) == '*') {
        size_t close = s_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) Fail(pos_, pos_ + 2, "unterminated comment");
        for (size_t i = pos_; i < close; ++i) newline |= s_[i] == '\n';
        pos_ = close + 2;
      } else {
        break;
      }
    }
    return newline;
  }

  void Expect(std::string_view t, const std::string& what) {
    SkipSpace();
    if (!Eat(t))
      Fail(pos_, pos_ + 1,
           "expected \"" + std::string(t) + "\" " + what + ", found " + Describe(pos_));
  }

  std::string Name() {
    size_t start = pos_;
    if (!IsNameStart(Peek())) return "";
    while (!AtEnd() && IsNameChar(Peek())) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }

  // A keyword at the cursor, as a whole name (so "format" is not "for").
  bool AtKeyword(std::string_view kw) const {
    return LookingAt(kw) && !IsNameChar(pos_ + kw.size() < s_.size() ? s_[pos_ + kw.size()] : ' ');
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) {
        p.Fail(p.pos_, p.pos_ + 1,
               "the expression nests more than " + std::to_string(kMaxDepth) + " levels deep");
      }
    }
    ~DepthGuard() { --p.depth_; }
  };

  // ---- expressions ----
  NodePtr Expr() {
    DepthGuard guard(*this);
    NodePtr cond = Binary(0);
    size_t save = pos_;
    SkipSpace();
    if (Peek() != '?') {
      pos_ = save;
      return cond;
    }
    ++pos_;
    NodePtr yes = Expr();
    Expect(":", "between the two results of the conditional");
    NodePtr no = Expr();
    auto n = std::make_shared<Node>();
    n->kind = NodeKind::kConditional;
    n->begin = cond->begin;
    n->end = no->end;
    n->kids = {cond, yes, no};
    return n;
  }

  // The binary operators, loosest first.
  static constexpr int kLevels = 6;
  std::optional<std::string> BinaryOp(int level) {
    size_t save = pos_;
    SkipSpace();
    // Most operands are followed by no operator at all: say so at once.
    static constexpr std::string_view kFirst = "|&=!<>+-*/%";
    if (AtEnd() || kFirst.find(Peek()) == std::string_view::npos) {
      pos_ = save;
      return std::nullopt;
    }
    static const std::vector<std::vector<std::string_view>> ops = {
        {"||"}, {"&&"}, {"==", "!="}, {"<=", ">=", "<", ">"}, {"+", "-"}, {"*", "/", "%"}};
    for (std::string_view op : ops[level]) {
      if (!LookingAt(op)) continue;
      // "=>" is not ">=", "==" is not "=" (object syntax), "%{" is a
      // directive, and "->"? none; "-" followed by ">" is not HCL.
      if ((op == "<" && LookingAt("<<")) || (op == "%" && Peek(1) == '{')) break;
      pos_ += op.size();
      return std::string(op);
    }
    pos_ = save;  // the space may end an object's element
    return std::nullopt;
  }

  NodePtr Binary(int level) {
    if (level == kLevels) return Unary();
    DepthGuard guard(*this);
    NodePtr left = Binary(level + 1);
    while (auto op = BinaryOp(level)) {
      NodePtr right = Binary(level + 1);
      auto n = std::make_shared<Node>();
      n->kind = NodeKind::kBinary;
      n->op = *op;
      n->begin = left->begin;
      n->end = right->end;
      n->kids = {left, right};
      left = n;
    }
    return left;
  }

  NodePtr Unary() {
    DepthGuard guard(*this);
    SkipSpace();
    if (Peek() == '-' || Peek() == '!') {
      uint32_t begin = Pos();
      std::string op(1, Peek());
      ++pos_;
      NodePtr operand = Unary();
      auto n = std::make_shared<Node>();
      n->kind = NodeKind::kUnary;
      n->op = op;
      n->begin = begin;
      n->end = operand->end;
      n->kids = {operand};
      return n;
    }
    return Postfix(Primary());
  }

  // Attribute access, indexes and splats after a term.
  NodePtr Postfix(NodePtr term) {
    while (true) {
      size_t save = pos_;
      SkipSpace();
      if (Peek() == '.' && Peek(1) == '*') {
        pos_ += 2;
        term = Splat(term, /*attr_only=*/true);
      } else if (Peek() == '.' && !LookingAt("...")) {
        ++pos_;
        if (IsDigit(Peek())) {
          uint32_t b = Pos();
          int64_t index = 0;
          while (IsDigit(Peek())) {
            if (index > (INT64_MAX - 9) / 10) Fail(b, pos_ + 1, "index too large");
            index = index * 10 + (Peek() - '0');
            ++pos_;
          }
          term = MakeIndex(term, MakeLiteral(Value::Int(index), b, Pos()), Pos());
        } else {
          std::string name = Name();
          if (name.empty())
            Fail(pos_, pos_ + 1, "expected an attribute name after \".\", found " + Describe(pos_));
          term = MakeGetAttr(term, name, Pos());
        }
      } else if (Peek() == '[') {
        size_t open = pos_;
        ++pos_;
        SkipSpace();
        if (Peek() == '*') {
          size_t star = pos_;
          ++pos_;
          SkipSpace();
          if (Peek() == ']') {
            ++pos_;
            term = Splat(term, /*attr_only=*/false);
            continue;
          }
          pos_ = star;
        }
        NodePtr key = Expr();
        SkipSpace();
        if (!Eat("]"))
          Fail(open, pos_, "expected \"]\" to close the index, found " + Describe(pos_));
        term = MakeIndex(term, key, Pos());
      } else {
        pos_ = save;
        return term;
      }
    }
  }

  // `source[*]` or `source.*`, and the traversal that follows it, applied to
  // each element.
  NodePtr Splat(NodePtr source, bool attr_only) {
    auto item = std::make_shared<Node>();
    item->kind = NodeKind::kSplatItem;
    item->begin = item->end = Pos();
    NodePtr trav = item;
    while (true) {
      size_t save = pos_;
      SkipSpace();
      if (Peek() == '.' && Peek(1) != '*' && !LookingAt("...")) {
        ++pos_;
        if (IsDigit(Peek()) && !attr_only) {
          uint32_t b = Pos();
          int64_t index = 0;
          while (IsDigit(Peek()) && index < INT64_MAX / 10 - 9)
            index = index * 10 + (s_[pos_++] - '0');
          trav = MakeIndex(trav, MakeLiteral(Value::Int(index), b, Pos()), Pos());
          continue;
        }
        std::string name = Name();
        if (name.empty()) Fail(pos_, pos_ + 1, "expected an attribute name after \".\"");
        trav = MakeGetAttr(trav, name, Pos());
      } else if (Peek() == '[' && !attr_only) {
        size_t open = pos_;
        ++pos_;
        SkipSpace();
        if (Peek() == '*') {  // a second splat applies to the result
          pos_ = save;
          break;
        }
        NodePtr key = Expr();
        SkipSpace();
        if (!Eat("]")) Fail(open, pos_, "expected \"]\" to close the index");
        trav = MakeIndex(trav, key, Pos());
      } else {
        pos_ = save;
        break;
      }
    }
    auto n = std::make_shared<Node>();
    n->kind = NodeKind::kSplat;
    n->begin = source->begin;
    n->end = Pos();
    n->expand_last = attr_only;
    n->kids = {source, trav == item ? nullptr : trav};
    return n;
  }

  NodePtr Primary() {
    SkipSpace();
    uint32_t begin = Pos();
    char c = Peek();
    if (AtEnd()) Fail(pos_, pos_ + 1, "expected an expression, found the end");
    if (IsDigit(c)) return NumberLiteral();
    if (c == '"') return QuotedTemplate();
    if (c == '(') {
      ++pos_;
      NodePtr inner = Expr();
      SkipSpace();
      if (!Eat(")")) Fail(begin, pos_, "expected \")\" to close \"(\", found " + Describe(pos_));
      auto n = std::make_shared<Node>();
      n->kind = NodeKind::kParens;
      n->begin = begin;
      n->end = Pos();
      n->kids = {inner};
      return n;
    }
    if (c == '[') return TupleOrFor();
    if (c == '{') return ObjectOrFor();
    if (c == '<' && LookingAt("<<"))
      Fail(
          pos_, pos_ + 2,
          "heredocs are not supported inside \"${...}\": use a YAML block scalar (|) for the text");
    if (IsNameStart(c)) {
      std::string name = Name();
      if (name == "true" || name == "false")
        return MakeLiteral(Value::Bool(name == "true"), begin, Pos());
      if (name == "null") return MakeLiteral(Value::Null(), begin, Pos());
      size_t after = pos_;
      SkipSpace();
      if (Peek() == '(') return Call(name, begin);
      if (LookingAt("::"))
        Fail(begin, pos_ + 2, "provider-defined functions (" + name + "::...) are not supported");
      pos_ = after;
      return MakeVariable(name, begin, Pos());
    }
    Fail(pos_, pos_ + 1, "expected an expression, found " + Describe(pos_));
  }

  NodePtr NumberLiteral() {
    uint32_t begin = Pos();
    while (IsDigit(Peek())) ++pos_;
    bool real = false;
    if (Peek() == '.' && IsDigit(Peek(1))) {
      real = true;
      ++pos_;
      while (IsDigit(Peek())) ++pos_;
    }
    if ((Peek() == 'e' || Peek() == 'E') &&
        (IsDigit(Peek(1)) || ((Peek(1) == '+' || Peek(1) == '-') && IsDigit(Peek(2))))) {
      real = true;
      pos_ += 2;
      while (IsDigit(Peek())) ++pos_;
    }
    std::string_view text = s_.substr(begin, pos_ - begin);
    if (!real) {
      int64_t i = 0;
      auto r = std::from_chars(text.data(), text.data() + text.size(), i);
      if (r.ec == std::errc() && r.ptr == text.data() + text.size())
        return MakeLiteral(Value::Int(i), begin, Pos());
    }
    std::string copy(text);
    double d = std::strtod(copy.c_str(), nullptr);
    if (!std::isfinite(d)) Fail(begin, Pos(), "the number " + copy + " is too large");
    return MakeLiteral(Value::Real(d), begin, Pos());
  }

  NodePtr Call(const std::string& name, uint32_t begin) {
    Expect("(", "");
    auto n = std::make_shared<Node>();
    n->kind = NodeKind::kCall;
    n->name = name;
    n->begin = begin;
    SkipSpace();
    while (!Eat(")")) {
      if (AtEnd()) Fail(begin, pos_, "expected \")\" to close the call to " + name + "()");
      n->kids.push_back(Expr());
      SkipSpace();
      if (Eat("...")) {
        n->expand_last = true;
        SkipSpace();
        if (!Eat(")"))
          Fail(pos_, pos_ + 1, "\"...\" must follow the last argument of " + name + "()");
        break;
      }
      if (Eat(",")) {
        SkipSpace();
        continue;
      }
      if (!Eat(")"))
        Fail(pos_, pos_ + 1,
             "expected \",\" or \")\" in the call to " + name + "(), found " + Describe(pos_));
      break;
    }
    n->end = Pos();
    return n;
  }

  // After "for": `k, v in COLLECTION :`.
  void ForIntro(Node& n) {
    pos_ += 3;
    SkipSpace();
    std::string first = Name();
    if (first.empty()) Fail(pos_, pos_ + 1, "expected a variable name after \"for\"");
    SkipSpace();
    if (Eat(",")) {
      SkipSpace();
      n.key_var = first;
      n.name = Name();
      if (n.name.empty()) Fail(pos_, pos_ + 1, "expected a second variable name after \",\"");
    } else {
      n.name = first;
    }
    SkipSpace();
    if (!AtKeyword("in"))
      Fail(pos_, pos_ + 1,
           "expected \"in\" after the variables of the for, found " + Describe(pos_));
    pos_ += 2;
    n.kids.push_back(Expr());
    Expect(":", "after the collection of the for");
  }

  // `if COND` at the end of a for, or nothing.
  NodePtr ForCondition() {
    SkipSpace();
    if (!AtKeyword("if")) return nullptr;
    pos_ += 2;
    return Expr();
  }

  NodePtr TupleOrFor() {
    uint32_t begin = Pos();
    ++pos_;
    SkipSpace();
    auto n = std::make_shared<Node>();
    n->begin = begin;
    if (AtKeyword("for")) {
      n->kind = NodeKind::kFor;
      ForIntro(*n);
      n->kids.push_back(nullptr);  // no key expression
      n->kids.push_back(Expr());
      n->kids.push_back(ForCondition());
      SkipSpace();
      if (!Eat("]"))
        Fail(begin, pos_, "expected \"]\" to close the for expression, found " + Describe(pos_));
      n->end = Pos();
      return n;
    }
    n->kind = NodeKind::kTuple;
    while (true) {
      SkipSpace();
      if (Eat("]")) break;
      if (AtEnd()) Fail(begin, pos_, "expected \"]\" to close the list");
      n->kids.push_back(Expr());
      SkipSpace();
      if (Eat(",")) continue;
      if (Eat("]")) break;
      if (AtEnd()) Fail(begin, pos_, "expected \"]\" to close the list");
      Fail(pos_, pos_ + 1, "expected \",\" or \"]\" in the list, found " + Describe(pos_));
    }
    n->end = Pos();
    return n;
  }

  NodePtr ObjectOrFor() {
    uint32_t begin = Pos();
    ++pos_;
    SkipSpace();
    auto n = std::make_shared<Node>();
    n->begin = begin;
    if (AtKeyword("for")) {
      n->kind = NodeKind::kFor;
      n->flag = true;
      ForIntro(*n);
      n->kids.push_back(Expr());
      Expect("=>", "between the key and the value of the for");
      n->kids.push_back(Expr());
      SkipSpace();
      if (Eat("...")) n->expand_last = true;
      n->kids.push_back(ForCondition());
      SkipSpace();
      if (!Eat("}"))
        Fail(begin, pos_, "expected \"}\" to close the for expression, found " + Describe(pos_));
      n->end = Pos();
      return n;
    }
    n->kind = NodeKind::kObject;
    while (true) {
      SkipSpace();
      if (Eat("}")) break;
      if (AtEnd()) Fail(begin, pos_, "expected \"}\" to close the object");
      n->kids.push_back(ObjectKey());
      SkipSpace();
      if (!Eat("=") && !Eat(":"))
        Fail(pos_, pos_ + 1, "expected \"=\" or \":\" after the key, found " + Describe(pos_));
      n->kids.push_back(Expr());
      bool newline = SkipSpace();
      if (Eat(",") || newline) continue;
      if (Eat("}")) break;
      Fail(pos_, pos_ + 1,
           "expected \",\", a new line or \"}\" in the object, found " + Describe(pos_));
    }
    n->end = Pos();
    return n;
  }

  // A bare name is the key itself ({a = 1} has the key "a"); anything else
  // is an expression ({(var.k) = 1}, {"a b" = 1}).
  NodePtr ObjectKey() {
    uint32_t begin = Pos();
    if (IsNameStart(Peek())) {
      size_t save = pos_;
      std::string name = Name();
      size_t after = pos_;
      SkipSpace();
      if ((Peek() == '=' && Peek(1) != '=' && Peek(1) != '>') || Peek() == ':') {
        pos_ = after;
        auto key = std::make_shared<Node>();
        key->kind = NodeKind::kLiteral;
        key->value = Value::String(name);
        key->flag = true;
        key->begin = begin;
        key->end = Pos();
        return key;
      }
      pos_ = save;
    }
    return Expr();
  }

  // ---- templates ----
  // A string in quotes inside an expression.
  NodePtr QuotedTemplate() {
    uint32_t begin = Pos();
    ++pos_;  // "
    std::vector<Part> parts = TemplateParts(/*directives=*/true, /*quoted=*/true);
    return Unwrap(BuildTemplate(parts, begin, Pos()));
  }

  // Reads template text up to the end (or, quoted, the closing quote, which
  // is consumed) into parts.
  std::vector<Part> TemplateParts(bool directives, bool quoted) {
    std::vector<Part> parts;
    std::string text;
    uint32_t text_begin = Pos();
    auto flush = [&] {
      if (!text.empty()) {
        Part p;
        p.kind = Part::kText;
        p.text = std::move(text);
        p.begin = text_begin;
        p.end = Pos();
        parts.push_back(std::move(p));
      }
      text.clear();
      text_begin = Pos();
    };
    size_t open = pos_ == 0 ? 0 : pos_ - 1;
    while (true) {
      if (AtEnd()) {
        if (quoted) Fail(open, pos_, "unterminated string: missing the closing \"");
        break;
      }
      char c = Peek();
      if (quoted && c == '"') {
        ++pos_;
        break;
      }
      if (quoted && c == '\n') Fail(open, pos_, "a quoted string cannot span lines");
      // As \u0000 is refused: a NUL would end the string wherever a C
      // string carries it, and printing the tree would write \u0000.
      if (quoted && c == '\0') Fail(pos_, pos_ + 1, "a quoted string cannot hold a NUL byte");
      if (quoted && c == '\\') {
        text += Escape();
        continue;
      }
      if (LookingAt("$${") || (directives && LookingAt("%%{"))) {
        text += c;
        text += '{';
        pos_ += 3;
        continue;
      }
      if (LookingAt("${")) {
        flush();
        parts.push_back(Interpolation());
        text_begin = Pos();
        continue;
      }
      if (directives && LookingAt("%{")) {
        flush();
        parts.push_back(Directive());
        text_begin = Pos();
        continue;
      }
      text += c;
      ++pos_;
    }
    flush();
    return parts;
  }

  std::string Escape() {
    size_t at = pos_;
    ++pos_;  // backslash
    char c = Peek();
    ++pos_;
    switch (c) {
      case 'n':
        return "\n";
      case 'r':
        return "\r";
      case 't':
        return "\t";
      case '"':
        return "\"";
      case '\\':
        return "\\";
      case 'u':
      case 'U': {
        size_t digits = c == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t i = 0; i < digits; ++i, ++pos_) {
          char h = Peek();
          int d = IsDigit(h)               ? h - '0'
                  : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                  : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                           : -1;
          if (d < 0)
            Fail(
                at, pos_ + 1,
                std::string("\\") + c + " needs " + std::to_string(digits) + " hexadecimal digits");
          cp = cp * 16 + static_cast<uint32_t>(d);
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0)
          Fail(at, pos_, "\\" + std::string(1, c) + " names no character (or NUL)");
        std::string out;
        if (cp < 0x80) {
          out += static_cast<char>(cp);
        } else if (cp < 0x800) {
          out += static_cast<char>(0xC0 | (cp >> 6));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          out += static_cast<char>(0xE0 | (cp >> 12));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          out += static_cast<char>(0xF0 | (cp >> 18));
          out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        }
        return out;
      }
      default:
        Fail(at, pos_, "unknown escape \\" + std::string(1, c) + " (write \\\\ for a backslash)");
    }
  }

  Part Interpolation() {
    Part p;
    p.kind = Part::kInterp;
    p.begin = Pos();
    pos_ += 2;  // ${
    if (Eat("~")) p.strip_before = true;
    SkipSpace();
    if (Peek() == '}')
      Fail(p.begin, pos_ + 1, "empty expression: write something between \"${\" and \"}\"");
    p.expr = Expr();
    CloseBrace(p, "expression");
    return p;
  }

  void CloseBrace(Part& p, const char* what) {
    SkipSpace();
    if (Eat("~")) p.strip_after = true;
    if (!Eat("}")) {
      if (AtEnd()) Fail(p.begin, pos_, std::string("unterminated ") + what + ": missing \"}\"");
      Fail(pos_, pos_ + 1,
           std::string("expected \"}\" to close the ") + what + ", found " + Describe(pos_));
    }
    p.end = Pos();
  }

  Part Directive() {
    Part p;
    p.begin = Pos();
    pos_ += 2;  // %{
    if (Eat("~")) p.strip_before = true;
    SkipSpace();
    if (AtKeyword("if")) {
      pos_ += 2;
      p.kind = Part::kIf;
      p.expr = Expr();
    } else if (AtKeyword("else")) {
      pos_ += 4;
      p.kind = Part::kElse;
    } else if (AtKeyword("endif")) {
      pos_ += 5;
      p.kind = Part::kEndIf;
    } else if (AtKeyword("endfor")) {
      pos_ += 6;
      p.kind = Part::kEndFor;
    } else if (AtKeyword("for")) {
      p.kind = Part::kFor;
      ForIntroDirective(p);
    } else {
      Fail(pos_, pos_ + 1,
           "expected if, else, endif, for or endfor after \"%{\" (write \"%%{\" for a literal "
           "\"%{\")");
    }
    CloseBrace(p, "directive");
    return p;
  }

  void ForIntroDirective(Part& p) {
    pos_ += 3;
    SkipSpace();
    std::string first = Name();
    if (first.empty()) Fail(pos_, pos_ + 1, "expected a variable name after \"for\"");
    SkipSpace();
    if (Eat(",")) {
      SkipSpace();
      p.key_var = first;
      p.value_var = Name();
      if (p.value_var.empty()) Fail(pos_, pos_ + 1, "expected a second variable name after \",\"");
    } else {
      p.value_var = first;
    }
    SkipSpace();
    if (!AtKeyword("in")) Fail(pos_, pos_ + 1, "expected \"in\" in the for directive");
    pos_ += 2;
    p.expr = Expr();
  }

  // Strip markers remove the whitespace beside them; then directives nest.
  NodePtr BuildTemplate(std::vector<Part>& parts, uint32_t begin, uint32_t end) {
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].kind == Part::kText) continue;
      if (parts[i].strip_before && i > 0 && parts[i - 1].kind == Part::kText) {
        std::string& t = parts[i - 1].text;
        t.erase(t.find_last_not_of(" \t\r\n") + 1);
      }
      if (parts[i].strip_after && i + 1 < parts.size() && parts[i + 1].kind == Part::kText) {
        std::string& t = parts[i + 1].text;
        t.erase(0, t.find_first_not_of(" \t\r\n") == std::string::npos
                       ? t.size()
                       : t.find_first_not_of(" \t\r\n"));
      }
    }
    size_t i = 0;
    NodePtr t = Sequence(parts, i, begin, end);
    if (i < parts.size()) {
      const Part& p = parts[i];
      Fail(p.begin, p.end,
           std::string("unexpected ") +
               (p.kind == Part::kElse    ? "else"
                : p.kind == Part::kEndIf ? "endif"
                                         : "endfor") +
               " directive without its opening one");
    }
    return t;
  }

  // Parts from `i` up to a directive that closes the enclosing one (left at
  // `i`), as one node.
  NodePtr Sequence(std::vector<Part>& parts, size_t& i, uint32_t begin, uint32_t end) {
    auto seq = std::make_shared<Node>();
    seq->kind = NodeKind::kTemplate;
    seq->begin = begin;
    seq->end = end;
    for (; i < parts.size(); ++i) {
      Part& p = parts[i];
      if (p.kind == Part::kElse || p.kind == Part::kEndIf || p.kind == Part::kEndFor) break;
      if (p.kind == Part::kText) {
        if (p.text.empty()) continue;
        seq->kids.push_back(MakeLiteral(Value::String(p.text), p.begin, p.end));
      } else if (p.kind == Part::kInterp) {
        seq->kids.push_back(p.expr);
      } else if (p.kind == Part::kIf) {
        auto n = std::make_shared<Node>();
        n->kind = NodeKind::kTemplateIf;
        n->begin = p.begin;
        size_t open = i++;
        NodePtr then = Sequence(parts, i, p.end, p.end);
        NodePtr otherwise;
        if (i < parts.size() && parts[i].kind == Part::kElse) {
          ++i;
          otherwise = Sequence(parts, i, parts[i - 1].end, parts[i - 1].end);
        }
        if (i >= parts.size() || parts[i].kind != Part::kEndIf)
          Fail(parts[open].begin, parts[open].end, "this if directive has no %{endif}");
        n->end = parts[i].end;
        n->kids = {parts[open].expr, then, otherwise};
        seq->kids.push_back(n);
      } else if (p.kind == Part::kFor) {
        auto n = std::make_shared<Node>();
        n->kind = NodeKind::kTemplateFor;
        n->begin = p.begin;
        n->key_var = p.key_var;
        n->name = p.value_var;
        size_t open = i++;
        NodePtr body = Sequence(parts, i, p.end, p.end);
        if (i >= parts.size() || parts[i].kind != Part::kEndFor)
          Fail(parts[open].begin, parts[open].end, "this for directive has no %{endfor}");
        n->end = parts[i].end;
        n->kids = {parts[open].expr, body};
        seq->kids.push_back(n);
      }
    }
    return seq;
  }

  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// A template of one part: the literal text itself, or the one expression
// (so "${var.list}" is the list).
NodePtr Unwrap(NodePtr t) {
  if (t->kind != NodeKind::kTemplate) return t;
  if (t->kids.empty()) return MakeLiteral(Value::String(""), t->begin, t->end);
  if (t->kids.size() == 1) {
    const Node& only = *t->kids[0];
    if (only.kind == NodeKind::kLiteral) return MakeLiteral(only.value, t->begin, t->end);
    if (only.kind != NodeKind::kTemplateIf && only.kind != NodeKind::kTemplateFor)
      return t->kids[0];
  }
  return t;
}

template <typename F>
ParseResult Guarded(F&& f) {
  try {
    return f();
  } catch (const Failure& failure) {
    return failure.error;
  }
}

}  // namespace

ParseResult ParseTemplate(std::string_view text) {
  return Guarded([&]() -> ParseResult {
    Parser p(text);
    return Unwrap(p.TopTemplate(false));
  });
}

ParseResult ParseTemplateWithDirectives(std::string_view text) {
  return Guarded([&]() -> ParseResult {
    Parser p(text);
    return Unwrap(p.TopTemplate(true));
  });
}

ParseResult ParseExpression(std::string_view text) {
  return Guarded([&]() -> ParseResult {
    Parser p(text);
    return p.TopExpression();
  });
}

bool HasTemplateSyntax(std::string_view text) { return text.find("${") != std::string_view::npos; }

std::string EscapeTemplateText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') out += '$';
  }
  return out;
}

}  // namespace cairn::expr
