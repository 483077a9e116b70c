// String functions: chomp, endswith, format, formatlist, indent, join,
// lower, regex, regexall, replace, split, startswith, strcontains, strrev,
// substr, title, trim, trimprefix, trimspace, trimsuffix, upper.
//
// Strings are UTF-8. What counts characters (substr, strrev, format's
// widths) counts code points, where Terraform counts grapheme clusters: a
// letter with a combining accent is two characters here (docs/functions.md).
// Case mapping is Unicode's, one code point at a time, through the
// "C.UTF-8" locale's ctype<wchar_t> (never the global locale).
//
// Regular expressions are RE2's, as Terraform's (Go's regexp is RE2 syntax):
// matching takes time linear in the text whatever the pattern, so a user's
// pattern cannot stall a plan. std::regex is never used on user input.
#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <locale>

#include "engine/expr/functions.h"

namespace cairn::expr {

char32_t Utf8Next(std::string_view s, size_t& i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) {
    ++i;
    return c;
  }
  size_t len = 0;
  char32_t cp = 0, min = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    ++i;
    return kUtf8Invalid;
  }
  if (i + len > s.size()) {
    ++i;
    return kUtf8Invalid;
  }
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      ++i;
      return kUtf8Invalid;
    }
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return kUtf8Invalid;
  }
  i += len;
  return cp;
}

void Utf8Append(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

bool Utf8Valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (Utf8Next(s, i) == kUtf8Invalid) return false;
  }
  return true;
}

namespace {

// ---- characters ----

// Unicode's case mappings, from the C.UTF-8 locale; null when the C library
// has no such locale (then only ASCII letters change case).
const std::ctype<wchar_t>* UnicodeCtype() {
  static const std::ctype<wchar_t>* ctype = []() -> const std::ctype<wchar_t>* {
    try {
      static const std::locale utf8("C.UTF-8");
      return &std::use_facet<std::ctype<wchar_t>>(utf8);
    } catch (const std::exception&) {
      return nullptr;
    }
  }();
  return ctype;
}

char32_t ToUpper(char32_t c) {
  if (const auto* ct = UnicodeCtype()) return static_cast<char32_t>(ct->toupper(wchar_t(c)));
  return c >= 'a' && c <= 'z' ? c - 32 : c;
}

char32_t ToLower(char32_t c) {
  if (const auto* ct = UnicodeCtype()) return static_cast<char32_t>(ct->tolower(wchar_t(c)));
  return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

bool IsLetterOrDigit(char32_t c) {
  if (const auto* ct = UnicodeCtype())
    return ct->is(std::ctype_base::alpha | std::ctype_base::digit, wchar_t(c));
  return (c < 0x80 && std::isalnum(static_cast<int>(c)));
}

// Unicode's White_Space property, as Go's unicode.IsSpace (trimspace).
bool IsUnicodeSpace(char32_t c) {
  switch (c) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

// Whether `c` separates words for title(): as Go's strings.Title, ASCII
// letters, digits and underscore do not, other ASCII does, and beyond ASCII
// letters and digits do not while spaces do.
bool SeparatesWords(char32_t c) {
  if (c < 0x80) return !(std::isalnum(static_cast<int>(c)) || c == '_');
  if (IsLetterOrDigit(c)) return false;
  return IsUnicodeSpace(c);
}

// `s` with every code point mapped by `f`; bytes that are not UTF-8 stay.
template <typename F>
std::string MapChars(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    char32_t c = Utf8Next(s, i);
    if (c == kUtf8Invalid) {
      out += s[start];
    } else {
      Utf8Append(out, f(c));
    }
  }
  return out;
}

// The code points of `s`, each as its bytes.
std::vector<std::string_view> Chars(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    Utf8Next(s, i);
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

// ---- simple string functions ----

Value UpperFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  return Value::String(MapChars(*s, ToUpper));
}

Value LowerFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  return Value::String(MapChars(*s, ToLower));
}

Value TitleFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  bool after_separator = true;
  return Value::String(MapChars(*s, [&](char32_t c) {
    char32_t r = after_separator ? ToUpper(c) : c;
    after_separator = SeparatesWords(c);
    return r;
  }));
}

Value ChompFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  size_t end = s->size();
  while (end > 0 && ((*s)[end - 1] == '\n' || (*s)[end - 1] == '\r')) --end;
  return Value::String(s->substr(0, end));
}

Value TrimSpaceFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  auto chars = Chars(*s);
  auto space = [](std::string_view ch) {
    size_t i = 0;
    return IsUnicodeSpace(Utf8Next(ch, i));
  };
  size_t b = 0, e = chars.size();
  while (b < e && space(chars[b])) ++b;
  while (e > b && space(chars[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) out += chars[i];
  return Value::String(std::move(out));
}

Value TrimFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  auto cutset = ArgString(a[1], 1, cx);
  if (!s || !cutset) return Value();
  auto set = Chars(*cutset);
  auto cut = [&](std::string_view ch) {
    return std::find(set.begin(), set.end(), ch) != set.end();
  };
  auto chars = Chars(*s);
  size_t b = 0, e = chars.size();
  while (b < e && cut(chars[b])) ++b;
  while (e > b && cut(chars[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) out += chars[i];
  return Value::String(std::move(out));
}

Value TrimPrefixFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  auto prefix = ArgString(a[1], 1, cx);
  if (!s || !prefix) return Value();
  if (s->starts_with(*prefix)) return Value::String(s->substr(prefix->size()));
  return Value::String(*s);
}

Value TrimSuffixFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  auto suffix = ArgString(a[1], 1, cx);
  if (!s || !suffix) return Value();
  if (s->ends_with(*suffix)) return Value::String(s->substr(0, s->size() - suffix->size()));
  return Value::String(*s);
}

Value StartsWithFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  auto prefix = ArgString(a[1], 1, cx);
  if (!s || !prefix) return Value();
  return Value::Bool(s->starts_with(*prefix));
}

Value EndsWithFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  auto suffix = ArgString(a[1], 1, cx);
  if (!s || !suffix) return Value();
  return Value::Bool(s->ends_with(*suffix));
}

Value StrContainsFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  auto sub = ArgString(a[1], 1, cx);
  if (!s || !sub) return Value();
  return Value::Bool(s->find(*sub) != std::string::npos);
}

Value StrRevFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  auto chars = Chars(*s);
  std::string out;
  out.reserve(s->size());
  for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
  return Value::String(std::move(out));
}

// substr(string, offset, length): as Terraform, a negative offset counts
// from the end and a negative length takes the rest.
Value SubstrFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  auto offset = ArgInt(a[1], 1, cx);
  auto length = ArgInt(a[2], 2, cx);
  if (!s || !offset || !length) return Value();
  int64_t total = static_cast<int64_t>(Utf8Length(*s));
  int64_t from = *offset;
  if (from < 0) from = std::max<int64_t>(0, from + total);
  if (from >= total || *length == 0) return Value::String("");
  size_t count = *length < 0 ? static_cast<size_t>(total - from) : static_cast<size_t>(*length);
  return Value::String(Utf8Substr(*s, static_cast<size_t>(from), count));
}

Value IndentFn(const std::vector<Value>& a, CallContext& cx) {
  auto spaces = ArgInt(a[0], 0, cx);
  auto s = ArgString(a[1], 1, cx);
  if (!spaces || !s) return Value();
  if (*spaces < 0 || *spaces > 1024) {
    cx.ArgError(0, "the number of spaces must be from 0 to 1024, not " + std::to_string(*spaces));
    return Value();
  }
  std::string pad = "\n" + std::string(static_cast<size_t>(*spaces), ' ');
  std::string out;
  for (char c : *s) {
    if (c == '\n') {
      out += pad;
    } else {
      out += c;
    }
  }
  return Value::String(std::move(out));
}

Value JoinFn(const std::vector<Value>& a, CallContext& cx) {
  auto sep = ArgString(a[0], 0, cx);
  if (!sep) return Value();
  std::string out;
  bool first = true;
  for (size_t i = 1; i < a.size(); ++i) {
    const List* items = ArgList(a[i], i, cx);
    if (!items) return Value();
    for (size_t k = 0; k < items->size(); ++k) {
      const Value& item = (*items)[k];
      auto s = ToStringValue(item);
      if (!s) {
        cx.ArgError(
            i, "element " + std::to_string(k) + " is " +
                   (item.is_null() ? std::string("null") : "a " + std::string(item.type_name())) +
                   "; join() needs strings");
        return Value();
      }
      if (!first) out += *sep;
      first = false;
      out += *s;
    }
  }
  return Value::String(std::move(out));
}

Value SplitFn(const std::vector<Value>& a, CallContext& cx) {
  auto sep = ArgString(a[0], 0, cx);
  auto s = ArgString(a[1], 1, cx);
  if (!sep || !s) return Value();
  List out;
  if (sep->empty()) {
    for (std::string_view ch : Chars(*s)) out.push_back(Value::String(std::string(ch)));
    return Value::MakeList(std::move(out));
  }
  size_t start = 0;
  while (true) {
    size_t at = s->find(*sep, start);
    if (at == std::string::npos) break;
    out.push_back(Value::String(s->substr(start, at - start)));
    start = at + sep->size();
  }
  out.push_back(Value::String(s->substr(start)));
  return Value::MakeList(std::move(out));
}

// ---- regular expressions ----

// `pattern` compiled, or an error at argument `arg` and null.
std::unique_ptr<RE2> Compile(const std::string& pattern, size_t arg, CallContext& cx) {
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_unique<RE2>(pattern, opts);
  if (!re->ok()) {
    cx.ArgError(arg, "invalid regular expression: " + re->error());
    return nullptr;
  }
  return re;
}

// What regex() returns for a pattern: a string (no groups), a list (unnamed
// groups) or a map (named groups); patterns mixing the two are refused.
enum class MatchShape { kString, kList, kMap };

std::optional<MatchShape> ShapeOf(const RE2& re, CallContext& cx) {
  int groups = re.NumberOfCapturingGroups();
  size_t named = re.CapturingGroupNames().size();
  if (groups == 0) return MatchShape::kString;
  if (named == 0) return MatchShape::kList;
  if (named == static_cast<size_t>(groups)) return MatchShape::kMap;
  cx.ArgError(0, "a pattern cannot mix named and unnamed capture groups");
  return std::nullopt;
}

Value MatchValue(const RE2& re, MatchShape shape, const std::vector<re2::StringPiece>& groups) {
  auto piece = [](const re2::StringPiece& p) {
    // A group that took no part in the match is null.
    return p.data() == nullptr ? Value::Null() : Value::String(std::string(p.data(), p.size()));
  };
  switch (shape) {
    case MatchShape::kString:
      return piece(groups[0]);
    case MatchShape::kList: {
      List out;
      for (size_t i = 1; i < groups.size(); ++i) out.push_back(piece(groups[i]));
      return Value::MakeList(std::move(out));
    }
    case MatchShape::kMap: {
      Map out;
      for (const auto& [index, name] : re.CapturingGroupNames())
        out.emplace(name, piece(groups[static_cast<size_t>(index)]));
      return Value::MakeMap(std::move(out));
    }
  }
  return Value();
}

// Every match of `re` in `text`, leftmost first, as Go's FindAll: after a
// match the search goes on where it ended, and an empty match right after
// a match is skipped, so "a*" in "baaa" matches "", "aaa" and not "" again.
template <typename F>
void EachMatch(const RE2& re, std::string_view text, F on_match) {
  size_t groups = static_cast<size_t>(re.NumberOfCapturingGroups()) + 1;
  std::vector<re2::StringPiece> sub(groups);
  size_t pos = 0;
  std::optional<size_t> prev_end;
  re2::StringPiece whole(text.data(), text.size());
  while (pos <= text.size()) {
    if (!re.Match(whole, pos, text.size(), RE2::UNANCHORED, sub.data(), static_cast<int>(groups)))
      break;
    size_t begin = static_cast<size_t>(sub[0].data() - text.data());
    size_t end = begin + sub[0].size();
    bool accept = true;
    if (end == begin) {
      if (prev_end && *prev_end == begin) accept = false;
      // Step over one character (its UTF-8 bytes), or past the end.
      size_t next = begin;
      if (next < text.size()) {
        Utf8Next(text, next);
      } else {
        ++next;
      }
      pos = next;
    } else {
      pos = end;
    }
    prev_end = end;
    if (accept) on_match(sub, begin, end);
  }
}

Value RegexFn(const std::vector<Value>& a, CallContext& cx) {
  auto pattern = ArgString(a[0], 0, cx);
  auto text = ArgString(a[1], 1, cx);
  if (!pattern || !text) return Value();
  auto re = Compile(*pattern, 0, cx);
  if (!re) return Value();
  auto shape = ShapeOf(*re, cx);
  if (!shape) return Value();
  std::vector<re2::StringPiece> sub(static_cast<size_t>(re->NumberOfCapturingGroups()) + 1);
  if (!re->Match(*text, 0, text->size(), RE2::UNANCHORED, sub.data(),
                 static_cast<int>(sub.size()))) {
    cx.ArgError(1, "the pattern did not match any part of the given string");
    return Value();
  }
  return MatchValue(*re, *shape, sub);
}

Value RegexAllFn(const std::vector<Value>& a, CallContext& cx) {
  auto pattern = ArgString(a[0], 0, cx);
  auto text = ArgString(a[1], 1, cx);
  if (!pattern || !text) return Value();
  auto re = Compile(*pattern, 0, cx);
  if (!re) return Value();
  auto shape = ShapeOf(*re, cx);
  if (!shape) return Value();
  List out;
  EachMatch(*re, *text, [&](const std::vector<re2::StringPiece>& sub, size_t, size_t) {
    out.push_back(MatchValue(*re, *shape, sub));
  });
  return Value::MakeList(std::move(out));
}

// The replacement for one match, with $1, ${1}, $name and ${name} standing
// for groups and $$ for "$", as Go's Regexp.Expand (Terraform's replace()):
// a name is the longest run of letters, digits and "_" after the "$"; an
// unknown group is empty, and a "$" that starts no name stays as it is.
void Expand(std::string& out, std::string_view tmpl, const RE2& re,
            const std::vector<re2::StringPiece>& groups) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < tmpl.size();) {
    if (tmpl[i] != '$') {
      out += tmpl[i++];
      continue;
    }
    if (i + 1 < tmpl.size() && tmpl[i + 1] == '$') {
      out += '$';
      i += 2;
      continue;
    }
    std::string_view name;
    size_t next = i + 1;
    if (next < tmpl.size() && tmpl[next] == '{') {
      size_t close = tmpl.find('}', next + 1);
      if (close != std::string_view::npos) {
        name = tmpl.substr(next + 1, close - next - 1);
        if (!std::all_of(name.begin(), name.end(), word)) name = {};
        next = close + 1;
      }
    } else {
      size_t e = next;
      while (e < tmpl.size() && word(tmpl[e])) ++e;
      name = tmpl.substr(next, e - next);
      next = e;
    }
    if (name.empty()) {
      out += '$';
      ++i;
      continue;
    }
    i = next;
    const re2::StringPiece* group = nullptr;
    if (std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      size_t n = 0;
      auto r = std::from_chars(name.data(), name.data() + name.size(), n);
      if (r.ec == std::errc() && n < groups.size()) group = &groups[n];
    } else {
      auto it = re.NamedCapturingGroups().find(std::string(name));
      if (it != re.NamedCapturingGroups().end()) group = &groups[static_cast<size_t>(it->second)];
    }
    if (group && group->data()) out.append(group->data(), group->size());
  }
}

Value ReplaceFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  auto search = ArgString(a[1], 1, cx);
  auto replacement = ArgString(a[2], 2, cx);
  if (!s || !search || !replacement) return Value();
  std::string out;
  if (search->size() > 1 && search->front() == '/' && search->back() == '/') {
    auto re = Compile(search->substr(1, search->size() - 2), 1, cx);
    if (!re) return Value();
    size_t last = 0;
    EachMatch(*re, *s, [&](const std::vector<re2::StringPiece>& sub, size_t begin, size_t end) {
      out.append(*s, last, begin - last);
      Expand(out, *replacement, *re, sub);
      last = end;
    });
    out.append(*s, last);
    return Value::String(std::move(out));
  }
  if (search->empty()) {
    // As Go's strings.Replace: the replacement before every character and
    // at the end.
    for (std::string_view ch : Chars(*s)) {
      out += *replacement;
      out += ch;
    }
    out += *replacement;
    return Value::String(std::move(out));
  }
  size_t start = 0;
  while (true) {
    size_t at = s->find(*search, start);
    if (at == std::string::npos) break;
    out.append(*s, start, at - start);
    out += *replacement;
    start = at + search->size();
  }
  out.append(*s, start);
  return Value::String(std::move(out));
}

// ---- format ----

struct Verb {
  bool zero = false, sharp = false, minus = false, plus = false, space = false;
  int width = -1;
  int precision = -1;
  size_t arg = 0;  // 1-based
  char mode = 0;
  std::string raw;
};

struct FormatError {
  size_t arg = 0;  // the call's argument at fault (0: the format string)
  std::string message;
};

// `body` padded to the verb's width (in characters) with spaces, or zeros
// when the verb says so; `sign` goes before zero padding.
std::string Pad(const Verb& v, const std::string& sign, const std::string& body) {
  size_t len = Utf8Length(sign) + Utf8Length(body);
  if (v.width < 0 || len >= static_cast<size_t>(v.width)) return sign + body;
  size_t pad = static_cast<size_t>(v.width) - len;
  if (v.minus) return sign + body + std::string(pad, ' ');
  if (v.zero) return sign + std::string(pad, '0') + body;
  return std::string(pad, ' ') + sign + body;
}

std::string SignOf(const Verb& v, bool negative) {
  if (negative) return "-";
  if (v.plus) return "+";
  if (v.space) return " ";
  return "";
}

// A number in %g's form without a precision, as Terraform's (Go's
// big.Float Text('g', -1)): the shortest digits that read back exactly, in
// exponent form when the decimal exponent is below -4 or 6 and above
// (format("%v", 1234567) is "1.234567e+06"). `n` is not negative.
std::string ShortestG(const Number& n, bool upper) {
  std::string digits;
  int exp = 0;
  if (n.is_int) {
    digits = std::to_string(n.i);
    exp = static_cast<int>(digits.size()) - 1;
  } else {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, n.d, std::chars_format::scientific);
    std::string sci(buf, r.ptr);  // "d.ddde+XX"
    size_t e = sci.find('e');
    for (char c : sci.substr(0, e))
      if (c != '.') digits += c;
    exp = std::stoi(sci.substr(e + 1));
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (exp < -4 || exp >= 6) {
    std::string out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "%c%c%02d", upper ? 'E' : 'e', exp < 0 ? '-' : '+', std::abs(exp));
    return out + eb;
  }
  if (n.is_int) return std::to_string(n.i);
  char buf[400];
  auto r = std::to_chars(buf, buf + sizeof buf, n.d, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

std::optional<std::string> FormatNumber(const Verb& v, const Value& arg, std::string& error) {
  std::optional<Number> n;
  if (arg.is_number()) n = arg.as_number();
  if (arg.is_string()) {
    // A string holding a number converts, as Terraform converts it.
    const std::string& s = arg.as_string();
    int64_t i = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), i);
    if (!s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size()) {
      n = Number::Int(i);
    } else {
      double d = 0;
      auto rd = std::from_chars(s.data(), s.data() + s.size(), d);
      if (!s.empty() && rd.ec == std::errc() && rd.ptr == s.data() + s.size() && std::isfinite(d))
        n = Number::Real(d);
    }
  }
  if (!n) {
    error =
        "a number is required, not " + (arg.is_string() ? "the string \"" + arg.as_string() + "\""
                                                        : "a " + std::string(arg.type_name()));
    return std::nullopt;
  }
  if (v.mode == 'b' || v.mode == 'd' || v.mode == 'o' || v.mode == 'x' || v.mode == 'X') {
    __int128 value = 0;
    if (n->is_int) {
      value = n->i;
    } else if (std::trunc(n->d) == n->d && std::fabs(n->d) < 1e38) {
      value = static_cast<__int128>(n->d);
    } else {
      error = "an integer is required, not " + n->ToString();
      return std::nullopt;
    }
    bool negative = value < 0;
    unsigned __int128 mag = static_cast<unsigned __int128>(value);
    if (negative) mag = -mag;
    int base = v.mode == 'b' ? 2 : v.mode == 'o' ? 8 : v.mode == 'd' ? 10 : 16;
    const char* alphabet = v.mode == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    std::string digits;
    do {
      digits.insert(digits.begin(), alphabet[static_cast<int>(mag % base)]);
      mag /= base;
    } while (mag > 0);
    if (v.precision == 0 && digits == "0") digits.clear();
    if (v.precision > 0 && digits.size() < static_cast<size_t>(v.precision))
      digits.insert(0, static_cast<size_t>(v.precision) - digits.size(), '0');
    std::string prefix;
    if (v.sharp) {
      prefix = v.mode == 'b'   ? "0b"
               : v.mode == 'o' ? "0"
               : v.mode == 'x' ? "0x"
               : v.mode == 'X' ? "0X"
                               : "";
    }
    Verb padding = v;
    if (v.precision >= 0) padding.zero = false;  // as Go: a precision turns zero padding off
    return Pad(padding, SignOf(v, negative) + prefix, digits);
  }
  double d = n->AsDouble();
  bool negative = std::signbit(d);
  double mag = std::fabs(d);
  std::string body;
  if ((v.mode == 'g' || v.mode == 'G') && v.precision < 0) {
    Number abs = n->is_int ? Number::Int(n->i < 0 ? -n->i : n->i) : Number{false, 0, mag};
    body = ShortestG(abs, v.mode == 'G');
  } else {
    char fmt[16];
    std::snprintf(fmt, sizeof fmt, "%%.*%c", v.mode);
    int prec = v.precision < 0 ? 6 : v.precision;
    int len = std::snprintf(nullptr, 0, fmt, prec, mag);
    std::string buf(static_cast<size_t>(len) + 1, '\0');
    std::snprintf(buf.data(), buf.size(), fmt, prec, mag);
    buf.resize(static_cast<size_t>(len));
    body = std::move(buf);
  }
  return Pad(v, SignOf(v, negative), body);
}

std::optional<std::string> FormatOne(const Verb& v, const Value& arg, std::string& error) {
  if (v.mode != 'v' && arg.is_null()) {
    error = "null cannot be formatted with %" + std::string(1, v.mode) + " (only with %v)";
    return std::nullopt;
  }
  switch (v.mode) {
    case 'v':
      if (!v.sharp && arg.is_string()) return Pad(v, "", arg.as_string());
      if (!v.sharp && arg.is_number()) {
        const Number& n = arg.as_number();
        bool negative = n.is_int ? n.i < 0 : std::signbit(n.d);
        if (n.is_int && n.i == INT64_MIN) return Pad(v, "-", "9.223372036854776e+18");
        Number abs =
            n.is_int ? Number::Int(negative ? -n.i : n.i) : Number{false, 0, std::fabs(n.d)};
        return Pad(v, negative ? "-" : "", ShortestG(abs, false));
      }
      return Pad(v, "", JsonEncode(arg));
    case 't':
      if (arg.is_bool()) return arg.as_bool() ? "true" : "false";
      if (arg.is_string() && (arg.as_string() == "true" || arg.as_string() == "false"))
        return arg.as_string();
      error = "a bool is required, not a " + std::string(arg.type_name());
      return std::nullopt;
    case 'b':
    case 'd':
    case 'o':
    case 'x':
    case 'X':
    case 'e':
    case 'E':
    case 'f':
    case 'g':
    case 'G':
      return FormatNumber(v, arg, error);
    case 's':
    case 'q': {
      auto s = ToStringValue(arg);
      if (!s) {
        error = "a string is required, not a " + std::string(arg.type_name());
        return std::nullopt;
      }
      if (v.precision > 0) *s = Utf8Substr(*s, 0, static_cast<size_t>(v.precision));
      return Pad(v, "", v.mode == 'q' ? JsonQuote(*s) : *s);
    }
    default:
      error = "unsupported format verb %" + std::string(1, v.mode) + " in \"" + v.raw + "\"";
      return std::nullopt;
  }
}

// Terraform's format(): `args[0]` is the first value (the call's second
// argument). Width and precision count characters.
std::optional<std::string> Format(const std::string& spec, const std::vector<Value>& args,
                                  FormatError& err) {
  std::string out;
  size_t next_arg = 1, highest = 0;
  auto digit = [&](size_t i) { return i < spec.size() && spec[i] >= '0' && spec[i] <= '9'; };
  auto number = [&](size_t& i) {
    int n = 0;
    while (digit(i)) {
      n = std::min(n * 10 + (spec[i] - '0'), 1 << 20);
      ++i;
    }
    return n;
  };
  for (size_t i = 0; i < spec.size();) {
    if (spec[i] != '%') {
      out += spec[i++];
      continue;
    }
    if (i + 1 < spec.size() && spec[i + 1] == '%') {
      out += '%';
      i += 2;
      continue;
    }
    size_t start = i++;
    Verb v;
    v.arg = next_arg;
    for (; i < spec.size(); ++i) {
      char c = spec[i];
      if (c == '0') {
        v.zero = true;
      } else if (c == '#') {
        v.sharp = true;
      } else if (c == '-') {
        v.minus = true;
      } else if (c == '+') {
        v.plus = true;
      } else if (c == ' ') {
        v.space = true;
      } else {
        break;
      }
    }
    if (digit(i)) v.width = number(i);
    if (i < spec.size() && spec[i] == '.') {
      ++i;
      v.precision = number(i);
    }
    if (i < spec.size() && spec[i] == '[') {
      ++i;
      if (!digit(i) || spec[i] == '0') {
        err = {0, "invalid argument index in the format string at offset " + std::to_string(i)};
        return std::nullopt;
      }
      v.arg = static_cast<size_t>(number(i));
      if (i >= spec.size() || spec[i] != ']') {
        err = {0, "invalid argument index in the format string at offset " + std::to_string(i)};
        return std::nullopt;
      }
      ++i;
    }
    if (i >= spec.size() || !std::isalpha(static_cast<unsigned char>(spec[i]))) {
      if (i >= spec.size()) {
        err = {0, "the format string ends inside the verb starting at offset " +
                      std::to_string(start)};
      } else {
        size_t k = i;
        std::string ch;
        char32_t c = Utf8Next(spec, k);
        if (c != kUtf8Invalid) Utf8Append(ch, c);
        err = {0, "unrecognized format character \"" + ch + "\" at offset " + std::to_string(i)};
      }
      return std::nullopt;
    }
    v.mode = spec[i++];
    v.raw = spec.substr(start, i - start);
    if (v.arg > args.size()) {
      err = {0, "not enough arguments for \"" + v.raw + "\" at offset " + std::to_string(start) +
                    ": it needs argument " + std::to_string(v.arg) + " but there are " +
                    std::to_string(args.size())};
      return std::nullopt;
    }
    std::string error;
    auto piece = FormatOne(v, args[v.arg - 1], error);
    if (!piece) {
      err = {v.arg, "\"" + v.raw + "\" at offset " + std::to_string(start) + ": " + error};
      return std::nullopt;
    }
    out += *piece;
    highest = std::max(highest, v.arg);
    next_arg = v.arg + 1;
  }
  if (highest < args.size()) {
    err = {highest + 1, highest == 0 ? "too many arguments: the format string has no verbs"
                                     : "too many arguments: the format string uses only " +
                                           std::to_string(highest)};
    return std::nullopt;
  }
  return out;
}

Value FormatFn(const std::vector<Value>& a, CallContext& cx) {
  auto spec = ArgString(a[0], 0, cx);
  if (!spec) return Value();
  std::vector<Value> args(a.begin() + 1, a.end());
  FormatError err;
  auto out = Format(*spec, args, err);
  if (!out) {
    cx.ArgError(err.arg, err.message);
    return Value();
  }
  return Value::String(std::move(*out));
}

// formatlist(spec, values...): lists and sets are iterated together (all of
// one length); other values repeat in every element.
Value FormatListFn(const std::vector<Value>& a, CallContext& cx) {
  auto spec = ArgString(a[0], 0, cx);
  if (!spec) return Value();
  std::optional<size_t> length;
  size_t length_from = 0;
  for (size_t i = 1; i < a.size(); ++i) {
    if (!a[i].is_sequence()) continue;
    if (length && *length != a[i].size()) {
      cx.ArgError(i, "argument " + std::to_string(i + 1) + " has length " +
                         std::to_string(a[i].size()) + ", which is not the length " +
                         std::to_string(*length) + " of argument " +
                         std::to_string(length_from + 1));
      return Value();
    }
    length = a[i].size();
    length_from = i;
  }
  size_t n = length.value_or(1);
  List out;
  for (size_t k = 0; k < n; ++k) {
    std::vector<Value> args;
    for (size_t i = 1; i < a.size(); ++i)
      args.push_back(a[i].is_sequence() ? a[i].items()[k] : a[i]);
    FormatError err;
    auto s = Format(*spec, args, err);
    if (!s) {
      cx.ArgError(err.arg, "element " + std::to_string(k) + ": " + err.message);
      return Value();
    }
    out.push_back(Value::String(std::move(*s)));
  }
  return Value::MakeList(std::move(out));
}

}  // namespace

void RegisterStringFunctions(FunctionTable& t) {
  auto add = [&](const char* name, int min, int max, FunctionImpl f, const char* sig,
                 bool null_args = false) {
    FunctionSpec s;
    s.min_args = min;
    s.max_args = max;
    s.impl = std::move(f);
    s.signature = sig;
    s.null_args = null_args;
    t[name] = std::move(s);
  };
  add("chomp", 1, 1, ChompFn, "string");
  add("endswith", 2, 2, EndsWithFn, "string, suffix");
  // format's values may be null (%v prints "null").
  add("format", 1, -1, FormatFn, "spec, values...", true);
  add("formatlist", 1, -1, FormatListFn, "spec, values...", true);
  add("indent", 2, 2, IndentFn, "num_spaces, string");
  add("join", 2, -1, JoinFn, "separator, lists...");
  add("lower", 1, 1, LowerFn, "string");
  add("regex", 2, 2, RegexFn, "pattern, string");
  add("regexall", 2, 2, RegexAllFn, "pattern, string");
  add("replace", 3, 3, ReplaceFn, "string, substring, replacement");
  add("split", 2, 2, SplitFn, "separator, string");
  add("startswith", 2, 2, StartsWithFn, "string, prefix");
  add("strcontains", 2, 2, StrContainsFn, "string, substr");
  add("strrev", 1, 1, StrRevFn, "string");
  add("substr", 3, 3, SubstrFn, "string, offset, length");
  add("title", 1, 1, TitleFn, "string");
  add("trim", 2, 2, TrimFn, "string, str_character_set");
  add("trimprefix", 2, 2, TrimPrefixFn, "string, prefix");
  add("trimspace", 1, 1, TrimSpaceFn, "string");
  add("trimsuffix", 2, 2, TrimSuffixFn, "string, suffix");
  add("upper", 1, 1, UpperFn, "string");
}

}  // namespace cairn::expr
