#include "engine/manifest/expr.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

namespace cairn {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

std::string QuoteString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A cursor over the text between "${" and "}".
class BodyParser {
 public:
  explicit BodyParser(std::string_view body) : s_(body) {}

  std::optional<std::string> Parse(Expression& e) {
    SkipSpace();
    if (AtEnd()) return "empty expression";
    size_t start = pos_;
    std::string first = Ident();
    if (first.empty()) return Fail(start, "expected a name such as var.region or instance.web.id");
    if (first == "file") {
      SkipSpace();
      if (!Eat('(')) return Fail(pos_, "expected file(\"path\")");
      SkipSpace();
      auto path = StringLiteral();
      if (!path) return Fail(pos_, "expected a quoted path in file(\"path\")");
      SkipSpace();
      if (!Eat(')')) return Fail(pos_, "expected \")\" after the path");
      e.type = Expression::Type::kFile;
      e.name = *path;
      return End();
    }
    if (first == "var" || first == "env") {
      if (!Eat('.')) return Fail(pos_, "expected " + first + ".NAME");
      e.name = Ident();
      if (e.name.empty()) return Fail(pos_, "expected " + first + ".NAME");
      e.type = first == "var" ? Expression::Type::kVar : Expression::Type::kEnv;
      return End();
    }
    if (first == "count") {
      if (!Eat('.') || Ident() != "index")
        return Fail(start, "count has only one attribute: count.index");
      e.type = Expression::Type::kCountIndex;
      return End();
    }
    if (first == "each") {
      if (!Eat('.')) return Fail(pos_, "expected each.key or each.value");
      std::string what = Ident();
      if (what == "key") {
        e.type = Expression::Type::kEachKey;
        return End();
      }
      if (what != "value") return Fail(start, "expected each.key or each.value");
      e.type = Expression::Type::kEachValue;
      while (Eat('.')) {
        std::string field = Ident();
        if (field.empty()) return Fail(pos_, "expected a field name after \".\"");
        e.name += (e.name.empty() ? "" : ".") + field;
      }
      return End();
    }
    // module.NAME[INDEX]. steps: a module's output, or (as the loader
    // writes them) a resource inside a module instance.
    while (first == "module") {
      if (!Eat('.')) return Fail(pos_, "expected module.NAME.OUTPUT, e.g. module.app.network_id");
      ModuleStep step;
      step.name = Ident();
      if (step.name.empty()) return Fail(pos_, "expected a module name after \"module.\"");
      if (Eat('[')) {
        bool splat = false;
        if (auto err = Index(step.index, splat)) return err;
        if (splat) return Fail(pos_ - 2, "a module's outputs are read one instance at a time");
      }
      if (!Eat('.'))
        return Fail(pos_, "expected an output after module." + step.name + ", e.g. module." +
                              step.name + ".id");
      e.target.module.push_back(std::move(step));
      first = Ident();
      if (first.empty()) return Fail(pos_, "expected an output name");
      SkipSpace();
      if (AtEnd()) {
        e.type = Expression::Type::kModuleOutput;
        e.attr = first;
        return std::nullopt;
      }
    }
    // KIND.NAME[INDEX].ATTR, or data.KIND.NAME.ATTR (a data source's
    // address has the kind "data.KIND").
    e.type = Expression::Type::kResource;
    e.target.kind = first;
    if (first == "data") {
      if (!Eat('.'))
        return Fail(pos_, "expected data.KIND.NAME.ATTRIBUTE, e.g. data.network.shared.id");
      std::string kind = Ident();
      if (kind.empty()) return Fail(pos_, "expected data.KIND.NAME.ATTRIBUTE");
      e.target.kind = "data." + kind;
    }
    if (!Eat('.')) return Fail(pos_, "expected KIND.NAME.ATTRIBUTE, e.g. instance.web.id");
    e.target.name = Ident();
    if (e.target.name.empty())
      return Fail(pos_, "expected a resource name after \"" + first + ".\"");
    if (Eat('[')) {
      if (auto err = Index(e.target.index, e.splat)) return err;
    }
    if (!Eat('.')) {
      return Fail(pos_, "expected an attribute after " + e.target.ToString() +
                            (e.splat ? "[*]" : "") + ", e.g. " + e.target.BaseString() + ".id");
    }
    e.attr = Ident();
    if (e.attr.empty()) return Fail(pos_, "expected an attribute name");
    return End();
  }

  size_t error_offset() const { return error_offset_; }

 private:
  // What follows a "[": a count index, a quoted key or "*", then "]".
  std::optional<std::string> Index(AddressIndex& index, bool& splat) {
    SkipSpace();
    if (Eat('*')) {
      splat = true;
    } else if (!AtEnd() && s_[pos_] == '"') {
      auto key = StringLiteral();
      if (!key) return Fail(pos_, "unterminated key string");
      index = *key;
    } else {
      size_t num_start = pos_;
      while (!AtEnd() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      int n = 0;
      auto [ptr, ec] = std::from_chars(s_.data() + num_start, s_.data() + pos_, n);
      if (num_start == pos_ || ec != std::errc() || ptr != s_.data() + pos_) {
        return Fail(num_start, "expected an index: a number, a quoted key or *");
      }
      index = n;
    }
    SkipSpace();
    if (!Eat(']')) return Fail(pos_, "expected \"]\"");
    return std::nullopt;
  }

  bool AtEnd() const { return pos_ >= s_.size(); }
  void SkipSpace() {
    while (!AtEnd() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  bool Eat(char c) {
    if (!AtEnd() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string Ident() {
    if (AtEnd() || !IsIdentStart(s_[pos_])) return "";
    size_t start = pos_;
    while (!AtEnd() && IsIdentChar(s_[pos_])) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }
  std::optional<std::string> StringLiteral() {
    if (!Eat('"')) return std::nullopt;
    std::string out;
    while (!AtEnd()) {
      char c = s_[pos_++];
      if (c == '"') return out;
      if (c == '\\' && !AtEnd()) c = s_[pos_++];
      out += c;
    }
    return std::nullopt;
  }
  std::optional<std::string> End() {
    SkipSpace();
    if (!AtEnd()) return Fail(pos_, "unexpected \"" + std::string(s_.substr(pos_)) + "\"");
    return std::nullopt;
  }
  std::optional<std::string> Fail(size_t at, std::string message) {
    error_offset_ = at;
    return message;
  }

  std::string_view s_;
  size_t pos_ = 0;
  size_t error_offset_ = 0;
};

void CollectReferences(const Value& v, std::vector<Expression>& out) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (!HasTemplateSyntax(s)) return;
    auto parsed = ParseTemplate(s);
    if (auto* t = std::get_if<Template>(&parsed)) {
      for (auto& part : t->parts) {
        if (auto* e = std::get_if<Expression>(&part); e && e->type == Expression::Type::kResource) {
          out.push_back(*e);
        }
      }
    }
  } else if (v.is_structured()) {
    for (const auto& item : v) CollectReferences(item, out);
  }
}

}  // namespace

std::string Expression::ToString() const {
  switch (type) {
    case Type::kVar:
      return "var." + name;
    case Type::kEnv:
      return "env." + name;
    case Type::kCountIndex:
      return "count.index";
    case Type::kEachKey:
      return "each.key";
    case Type::kEachValue:
      return name.empty() ? "each.value" : "each.value." + name;
    case Type::kFile:
      return "file(" + QuoteString(name) + ")";
    case Type::kResource: {
      std::string out = target.ToString();
      if (splat) out += "[*]";
      return out + "." + attr;
    }
    case Type::kModuleOutput:
      return ModulePathPrefix(target.module) + attr;
  }
  return "";
}

bool Template::has_expressions() const {
  return std::any_of(parts.begin(), parts.end(),
                     [](const auto& p) { return std::holds_alternative<Expression>(p); });
}

bool HasTemplateSyntax(std::string_view s) { return s.find("${") != std::string_view::npos; }

std::variant<Template, TemplateError> ParseTemplate(std::string_view s) {
  Template t;
  std::string literal;
  size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, 3, "$${") == 0) {
      literal += "${";
      i += 3;
      continue;
    }
    if (s.compare(i, 2, "${") != 0) {
      literal += s[i++];
      continue;
    }
    // Find the closing brace, skipping quoted strings.
    size_t j = i + 2;
    bool in_string = false;
    for (; j < s.size(); ++j) {
      char c = s[j];
      if (in_string) {
        if (c == '\\') {
          ++j;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '}') {
        break;
      } else if (c == '{' || c == '$') {
        if (s.compare(j, 2, "${") == 0) break;  // nested: report unterminated
      }
    }
    if (j >= s.size() || s[j] != '}') {
      return TemplateError{"unterminated expression: missing \"}\"", i, 2};
    }
    Expression e;
    BodyParser parser(s.substr(i + 2, j - i - 2));
    if (auto err = parser.Parse(e)) {
      return TemplateError{
          "invalid expression \"" + std::string(s.substr(i, j + 1 - i)) + "\": " + *err, i,
          j + 1 - i};
    }
    e.begin = i;
    e.end = j + 1;
    if (!literal.empty()) t.parts.emplace_back(std::move(literal));
    literal.clear();
    t.parts.emplace_back(std::move(e));
    i = j + 1;
  }
  if (!literal.empty() || t.parts.empty()) t.parts.emplace_back(std::move(literal));
  return t;
}

std::string EscapeTemplateLiteral(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{') out += '$';
    out += s[i];
  }
  return out;
}

std::string InterpolationText(const Value& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump(-1, ' ', false, Value::error_handler_t::replace);
}

Value ResolveReferences(const Value& v, const AttributeLookup& lookup) {
  if (v.is_array()) {
    Value out = Value::array();
    for (const auto& item : v) out.push_back(ResolveReferences(item, lookup));
    return out;
  }
  if (v.is_object()) {
    if (IsUnknown(v)) return v;
    Value out = Value::object();
    for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = ResolveReferences(*it, lookup);
    return out;
  }
  if (!v.is_string()) return v;
  const auto& s = v.get_ref<const std::string&>();
  if (!HasTemplateSyntax(s)) return v;
  auto parsed = ParseTemplate(s);
  const auto* t = std::get_if<Template>(&parsed);
  if (!t) return v;
  auto look = [&](const Expression& e) -> Value {
    if (e.splat) return UnknownValue();
    auto found = lookup ? lookup(e.target, e.attr) : std::nullopt;
    if (!found) return UnknownValue();
    return *found;
  };
  if (t->exact()) {
    const auto& e = std::get<Expression>(t->parts[0]);
    if (e.type == Expression::Type::kResource) {
      Value r = look(e);
      return ContainsUnknown(r) ? UnknownValue() : r;
    }
  }
  std::string out;
  for (const auto& part : t->parts) {
    if (const auto* lit = std::get_if<std::string>(&part)) {
      out += *lit;
      continue;
    }
    const auto& e = std::get<Expression>(part);
    if (e.type != Expression::Type::kResource) {
      out += "${" + e.ToString() + "}";
      continue;
    }
    Value r = look(e);
    if (ContainsUnknown(r)) return UnknownValue();
    out += InterpolationText(r);
  }
  return out;
}

std::vector<Expression> ResourceReferences(const Value& v) {
  std::vector<Expression> out;
  CollectReferences(v, out);
  return out;
}

}  // namespace cairn
