// Encoding functions: base64decode, base64encode, csvdecode, jsondecode,
// jsonencode, urlencode, yamldecode, yamlencode.
//
// Decoders read text a user controls, so each is bounded: JSON through
// cairn::ParseJson (iterative, depth-limited), YAML through yaml-cpp (whose
// parser limits its own recursion) with every exception caught here and a
// walk that refuses cycles, deep nesting and documents whose aliases would
// expand past kMaxYamlNodes. Decoded text must be UTF-8, as Terraform's
// strings are.
//
// The encoders write Terraform's text exactly (jsonencode's escapes, its
// numbers without exponents; yamlencode's double-quoted strings and block
// style), so they are written here rather than through nlohmann's dump()
// or yaml-cpp's emitter, whose layouts differ.
#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdio>

#include "base/value.h"
#include "engine/expr/functions.h"

namespace cairn::expr {

namespace {

constexpr size_t kMaxDecodeBytes = size_t{4} << 20;
constexpr size_t kMaxYamlNodes = 100000;

// A double without an exponent, in the fewest digits that read back exactly
// (Terraform writes numbers so: 1e21 is 1000000000000000000000).
std::string PlainNumber(const Number& n) {
  if (n.is_int) return std::to_string(n.i);
  char buf[400];
  auto r = std::to_chars(buf, buf + sizeof buf, n.d, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

void AppendJson(std::string& out, const Value& v) {
  switch (v.type()) {
    case Type::kNull:
    case Type::kUnknown:
      out += "null";
      return;
    case Type::kBool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Type::kNumber:
      out += PlainNumber(v.as_number());
      return;
    case Type::kString:
      out += JsonQuote(v.as_string());
      return;
    case Type::kList:
    case Type::kSet: {
      out += '[';
      bool first = true;
      for (const Value& item : v.items()) {
        if (!first) out += ',';
        first = false;
        AppendJson(out, item);
      }
      out += ']';
      return;
    }
    case Type::kMap: {
      out += '{';
      bool first = true;
      for (const auto& [k, item] : v.entries()) {
        if (!first) out += ',';
        first = false;
        out += JsonQuote(k);
        out += ':';
        AppendJson(out, item);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    char32_t c = Utf8Next(s, i);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case kUtf8Invalid:
        out += "\\ufffd";
        break;
      default:
        // HTML's special characters and the JavaScript line separators are
        // escaped, as Go's encoding/json (and so Terraform) escapes them.
        if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          Utf8Append(out, c);
        }
    }
  }
  out += '"';
  return out;
}

std::string JsonEncode(const Value& v) {
  std::string out;
  AppendJson(out, v);
  return out;
}

namespace {

// ---- base64 and URLs ----

Value Base64EncodeFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  std::string out(4 * ((s->size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(s->data()),
                          static_cast<int>(s->size()));
  out.resize(static_cast<size_t>(n));
  return Value::String(std::move(out));
}

// Standard base64 with its padding, as Go's StdEncoding (line breaks are
// ignored); nullopt when it is not.
std::optional<std::string> DecodeBase64(const std::string& in) {
  std::string text;
  text.reserve(in.size());
  for (char c : in)
    if (c != '\r' && c != '\n') text += c;
  if (text.size() % 4 != 0) return std::nullopt;
  size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  // EVP_DecodeBlock checks the alphabet; '=' is allowed only as padding.
  if (text.find('=') < text.size() - pad) return std::nullopt;
  std::string out(text.size() / 4 * 3 + 1, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

Value Base64DecodeFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  auto out = DecodeBase64(*s);
  if (!out) {
    cx.ArgError(0, "the string is not valid base64 (RFC 4648's standard alphabet, with padding)");
    return Value();
  }
  if (!Utf8Valid(*out)) {
    cx.ArgError(0, "the decoded bytes are not valid UTF-8; strings are text");
    return Value();
  }
  return Value::String(std::move(*out));
}

// Go's url.QueryEscape: letters, digits and -_.~ stay, a space becomes +,
// every other byte %XX.
Value UrlEncodeFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  std::string out;
  for (unsigned char c : *s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return Value::String(std::move(out));
}

// ---- CSV ----

// RFC 4180 as Go's encoding/csv reads it (Terraform's csvdecode): records
// end at \n or \r\n, empty lines are skipped, a quoted field may hold
// commas, newlines and "" for a quote, and a quote elsewhere is an error.
struct CsvReader {
  std::string_view text;
  size_t pos = 0;
  size_t line = 1;
  std::string error;

  bool AtEnd() const { return pos >= text.size(); }

  // The next record; false at the end of the text or on an error.
  bool Read(std::vector<std::string>& fields) {
    fields.clear();
    // Skip empty lines.
    while (!AtEnd() && (text[pos] == '\n' ||
                        (text[pos] == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n'))) {
      pos += text[pos] == '\r' ? 2 : 1;
      ++line;
    }
    if (AtEnd()) return false;
    size_t record_line = line;
    while (true) {
      std::string field;
      if (!AtEnd() && text[pos] == '"') {
        ++pos;
        while (true) {
          if (AtEnd()) {
            error = "line " + std::to_string(record_line) + ": a quoted field is not closed";
            return false;
          }
          char c = text[pos++];
          if (c == '"') {
            if (!AtEnd() && text[pos] == '"') {
              field += '"';
              ++pos;
              continue;
            }
            break;
          }
          if (c == '\r' && !AtEnd() && text[pos] == '\n') continue;
          if (c == '\n') ++line;
          field += c;
        }
        if (!AtEnd() && text[pos] != ',' && text[pos] != '\n' &&
            !(text[pos] == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n')) {
          error = "line " + std::to_string(line) + ": extraneous or missing \" in a quoted field";
          return false;
        }
      } else {
        while (!AtEnd() && text[pos] != ',' && text[pos] != '\n' &&
               !(text[pos] == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n')) {
          if (text[pos] == '"') {
            error = "line " + std::to_string(line) + ": a bare \" in a field that is not quoted";
            return false;
          }
          field += text[pos++];
        }
      }
      fields.push_back(std::move(field));
      if (AtEnd()) return true;
      if (text[pos] == ',') {
        ++pos;
        continue;
      }
      pos += text[pos] == '\r' ? 2 : 1;
      ++line;
      return true;
    }
  }
};

Value CsvDecodeFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  if (s->size() > kMaxDecodeBytes) {
    cx.ArgError(0, "the CSV text is over " + std::to_string(kMaxDecodeBytes >> 20) + " MiB");
    return Value();
  }
  CsvReader reader;
  reader.text = *s;
  std::vector<std::string> header, fields;
  if (!reader.Read(header)) {
    cx.ArgError(0, reader.error.empty() ? "missing header line" : "CSV: " + reader.error);
    return Value();
  }
  for (size_t i = 0; i < header.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {
      if (header[k] == header[i]) {
        cx.ArgError(0, "duplicate column name \"" + header[i] + "\"");
        return Value();
      }
    }
  }
  List rows;
  while (true) {
    size_t line = reader.line;
    if (!reader.Read(fields)) break;
    if (fields.size() != header.size()) {
      cx.ArgError(0, "CSV: line " + std::to_string(line) + " has " + std::to_string(fields.size()) +
                         " fields, but the header has " + std::to_string(header.size()));
      return Value();
    }
    Map row;
    for (size_t i = 0; i < fields.size(); ++i) row.emplace(header[i], Value::String(fields[i]));
    rows.push_back(Value::MakeMap(std::move(row)));
  }
  if (!reader.error.empty()) {
    cx.ArgError(0, "CSV: " + reader.error);
    return Value();
  }
  return Value::MakeList(std::move(rows));
}

// ---- JSON ----

// Parsed JSON as a value. Not Value::FromJson: that reads Cairn's own
// unknown marker ({"$cairn_unknown": true}) as unknown, and text a user
// decodes must never become "known after apply".
std::optional<Value> FromParsedJson(const cairn::Value& j, std::string& error) {
  switch (j.type()) {
    case cairn::Value::value_t::null:
    case cairn::Value::value_t::discarded:
    case cairn::Value::value_t::binary:
      return Value::Null();
    case cairn::Value::value_t::boolean:
      return Value::Bool(j.get<bool>());
    case cairn::Value::value_t::number_integer:
      return Value::Int(j.get<int64_t>());
    case cairn::Value::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value::Int(static_cast<int64_t>(u));
      return Value::Num(Number{false, 0, static_cast<double>(u)});
    }
    case cairn::Value::value_t::number_float: {
      double d = j.get<double>();
      if (!std::isfinite(d)) {
        error = "a number is too large";
        return std::nullopt;
      }
      return Value::Real(d);
    }
    case cairn::Value::value_t::string:
      return Value::String(j.get<std::string>());
    case cairn::Value::value_t::array: {
      List items;
      items.reserve(j.size());
      for (const auto& item : j) {
        auto v = FromParsedJson(item, error);
        if (!v) return std::nullopt;
        items.push_back(std::move(*v));
      }
      return Value::MakeList(std::move(items));
    }
    case cairn::Value::value_t::object: {
      Map m;
      for (auto it = j.begin(); it != j.end(); ++it) {
        auto v = FromParsedJson(*it, error);
        if (!v) return std::nullopt;
        m.insert_or_assign(it.key(), std::move(*v));
      }
      return Value::MakeMap(std::move(m));
    }
  }
  return Value::Null();
}

Value JsonDecodeFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  if (!Utf8Valid(*s)) {
    cx.ArgError(0, "the JSON text is not valid UTF-8");
    return Value();
  }
  auto parsed = cairn::ParseJson(*s);
  if (!parsed.ok()) {
    cx.ArgError(0, parsed.status().message());
    return Value();
  }
  std::string error;
  auto v = FromParsedJson(*parsed, error);
  if (!v) {
    cx.ArgError(0, "invalid JSON: " + error);
    return Value();
  }
  return *v;
}

Value JsonEncodeFn(const std::vector<Value>& a, CallContext&) {
  return Value::String(JsonEncode(a[0]));
}

// ---- YAML ----

constexpr std::string_view kYamlTag = "tag:yaml.org,2002:";

// "2001-12-14" (YAML's date-only timestamp) as RFC 3339, as Terraform
// writes it; nullopt for anything else.
std::optional<std::string> YamlDate(std::string_view s) {
  int part[3] = {0, 0, 0}, digits[3] = {0, 0, 0}, k = 0;
  for (char c : s) {
    if (c == '-' && k < 2 && digits[k] > 0) {
      ++k;
    } else if (c >= '0' && c <= '9' && digits[k] < (k == 0 ? 4 : 2)) {
      part[k] = part[k] * 10 + (c - '0');
      ++digits[k];
    } else {
      return std::nullopt;
    }
  }
  if (k != 2 || digits[0] != 4 || digits[2] == 0) return std::nullopt;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT00:00:00Z", part[0], part[1], part[2]);
  return buf;
}

// A plain scalar as Terraform's yamldecode resolves it: YAML 1.2's core
// schema, plus YAML 1.1's yes/no/on/off (and y/n) booleans, and dates
// written out as RFC 3339 timestamps.
std::optional<Value> ResolvePlain(const std::string& s, std::string& error) {
  static const char* const kTrue[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                      "True", "TRUE", "on",  "On",  "ON"};
  static const char* const kFalse[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                       "False", "FALSE", "off", "Off", "OFF"};
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Value::Null();
  for (const char* t : kTrue)
    if (s == t) return Value::Bool(true);
  for (const char* f : kFalse)
    if (s == f) return Value::Bool(false);
  if (auto date = YamlDate(s)) return Value::String(*date);
  auto integer = [&](std::string_view digits, int base, bool negative) -> std::optional<Value> {
    uint64_t u = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
    // Out of range: read again as a float, below.
    if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size())
      return std::nullopt;
    if (u > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0)) {
      return Value::Real(negative ? -static_cast<double>(u) : static_cast<double>(u));
    }
    if (negative) return Value::Int(static_cast<int64_t>(0 - u));
    return Value::Int(static_cast<int64_t>(u));
  };
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body.starts_with("0x")) {
    if (auto v = integer(body.substr(2), 16, negative); v && s[0] != '-' && s[0] != '+') return v;
  } else if (body.starts_with("0o")) {
    if (auto v = integer(body.substr(2), 8, negative); v && s[0] != '-' && s[0] != '+') return v;
  } else if (auto v = integer(body, 10, negative)) {
    return v;
  }
  std::string lower;
  for (char c : body) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == ".inf" || lower == ".nan") {
    error = "\"" + s + "\": infinity and NaN are not numbers Cairn can hold";
    return std::nullopt;
  }
  // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
  size_t i = 0;
  auto digits = [&] {
    size_t from = i;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i;
    return i - from;
  };
  size_t whole = digits(), frac = 0;
  bool dot = i < body.size() && body[i] == '.';
  if (dot) {
    ++i;
    frac = digits();
  }
  bool ok = whole > 0 || frac > 0;
  if (ok && i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '-' || body[i] == '+')) ++i;
    ok = digits() > 0;
  }
  if (ok && i == body.size()) {
    double d = 0;
    std::string text(body);
    if (!text.empty() && text[0] == '.') text.insert(0, "0");
    auto r = std::from_chars(text.data(), text.data() + text.size(), d);
    if (r.ec == std::errc() && std::isfinite(d)) return Value::Real(negative ? -d : d);
    error = "\"" + s + "\" is out of range for a number";
    return std::nullopt;
  }
  return Value::String(s);
}

struct YamlWalk {
  size_t nodes = 0;
  std::vector<YAML::Node> ancestors;
  std::string error;

  std::optional<Value> Scalar(const YAML::Node& n) {
    const std::string& tag = n.Tag();
    const std::string& text = n.Scalar();
    if (tag == "?") return ResolvePlain(text, error);
    if (tag == "!" || tag == std::string(kYamlTag) + "str") return Value::String(text);
    if (tag == std::string(kYamlTag) + "timestamp") {
      auto date = YamlDate(text);
      return Value::String(date ? *date : text);
    }
    if (tag == std::string(kYamlTag) + "binary") {
      if (!DecodeBase64(text)) {
        error = "\"" + text + "\" is not valid base64 for !!binary";
        return std::nullopt;
      }
      return Value::String(text);
    }
    if (tag == std::string(kYamlTag) + "null") return Value::Null();
    if (tag == std::string(kYamlTag) + "bool" || tag == std::string(kYamlTag) + "int" ||
        tag == std::string(kYamlTag) + "float") {
      auto v = ResolvePlain(text, error);
      if (!v) return std::nullopt;
      bool fits = tag.ends_with("bool") ? v->is_bool() : v->is_number();
      if (!fits) {
        error = "\"" + text + "\" is not a valid " + tag.substr(kYamlTag.size());
        return std::nullopt;
      }
      return v;
    }
    error = "unsupported tag \"" + tag + "\"";
    return std::nullopt;
  }

  std::optional<Value> Convert(const YAML::Node& n) {
    if (++nodes > kMaxYamlNodes) {
      error = "the document expands to more than " + std::to_string(kMaxYamlNodes) +
              " values (through its aliases)";
      return std::nullopt;
    }
    for (const YAML::Node& up : ancestors) {
      if (up.is(n)) {
        error = "an alias refers to an anchor from inside its own definition";
        return std::nullopt;
      }
    }
    switch (n.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return Value::Null();
      case YAML::NodeType::Scalar:
        return Scalar(n);
      case YAML::NodeType::Sequence:
      case YAML::NodeType::Map:
        break;
    }
    bool is_map = n.Type() == YAML::NodeType::Map;
    const std::string& tag = n.Tag();
    if (tag != "?" && tag != "!" && tag != std::string(kYamlTag) + (is_map ? "map" : "seq")) {
      error = "unsupported tag \"" + tag + "\"";
      return std::nullopt;
    }
    if (ancestors.size() >= static_cast<size_t>(cairn::kMaxValueDepth)) {
      error = "the document nests deeper than " + std::to_string(cairn::kMaxValueDepth) + " levels";
      return std::nullopt;
    }
    ancestors.push_back(n);
    std::optional<Value> out;
    if (is_map) {
      Map m;
      for (const auto& kv : n) {
        if (!kv.first.IsScalar() && !kv.first.IsNull()) {
          error = "a mapping's keys must be strings, numbers or bools";
          ancestors.pop_back();
          return std::nullopt;
        }
        auto key = kv.first.IsNull() ? std::optional<Value>(Value::Null()) : Scalar(kv.first);
        if (!key) break;
        auto text = ToStringValue(*key);
        if (!text) {
          error = "a mapping's key cannot be null";
          ancestors.pop_back();
          return std::nullopt;
        }
        auto v = Convert(kv.second);
        if (!v) break;
        m.insert_or_assign(*text, std::move(*v));
      }
      if (error.empty()) out = Value::MakeMap(std::move(m));
    } else {
      List items;
      for (const auto& item : n) {
        auto v = Convert(item);
        if (!v) break;
        items.push_back(std::move(*v));
      }
      if (error.empty()) out = Value::MakeList(std::move(items));
    }
    ancestors.pop_back();
    return out;
  }
};

Value YamlDecodeFn(const std::vector<Value>& a, CallContext& cx) {
  auto s = ArgString(a[0], 0, cx);
  if (!s) return Value();
  if (s->size() > kMaxDecodeBytes) {
    cx.ArgError(0, "the YAML text is over " + std::to_string(kMaxDecodeBytes >> 20) + " MiB");
    return Value();
  }
  if (!Utf8Valid(*s) || s->find('\0') != std::string::npos) {
    cx.ArgError(0, "the YAML text is not valid UTF-8 (or holds a NUL byte)");
    return Value();
  }
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(*s);
    if (docs.size() > 1) {
      cx.ArgError(0, "the text holds " + std::to_string(docs.size()) +
                         " YAML documents; yamldecode() reads one");
      return Value();
    }
    if (docs.empty()) return Value::Null();
    YamlWalk walk;
    auto v = walk.Convert(docs[0]);
    if (!v) {
      cx.ArgError(0, "YAML: " + walk.error);
      return Value();
    }
    return *v;
  } catch (const YAML::Exception& e) {
    cx.ArgError(0, "invalid YAML: line " + std::to_string(e.mark.line + 1) + ", column " +
                       std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    cx.ArgError(0, std::string("invalid YAML: ") + e.what());
  }
  return Value();
}

// libyaml's "printable" characters: what a double-quoted or block scalar
// may hold without an escape.
bool YamlPrintable(char32_t c) {
  return c == '\n' || (c >= 0x20 && c <= 0x7E) || c == 0x85 || (c >= 0xA0 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD && c != 0xFEFF) || (c >= 0x10000 && c <= 0x10FFFF);
}

std::string YamlDoubleQuoted(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    char32_t c = Utf8Next(s, i);
    if (c == kUtf8Invalid) c = 0xFFFD;
    const char* esc = nullptr;
    switch (c) {
      case 0:
        esc = "\\0";
        break;
      case 0x07:
        esc = "\\a";
        break;
      case 0x08:
        esc = "\\b";
        break;
      case 0x09:
        esc = "\\t";
        break;
      case 0x0A:
        esc = "\\n";
        break;
      case 0x0B:
        esc = "\\v";
        break;
      case 0x0C:
        esc = "\\f";
        break;
      case 0x0D:
        esc = "\\r";
        break;
      case 0x1B:
        esc = "\\e";
        break;
      case '"':
        esc = "\\\"";
        break;
      case '\\':
        esc = "\\\\";
        break;
      case 0x85:
        esc = "\\N";
        break;
      case 0x2028:
        esc = "\\L";
        break;
      case 0x2029:
        esc = "\\P";
        break;
      default:
        break;
    }
    if (esc) {
      out += esc;
    } else if (!YamlPrintable(c)) {
      char buf[16];
      if (c <= 0xFF) {
        std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(c));
      } else if (c <= 0xFFFF) {
        std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c));
      } else {
        std::snprintf(buf, sizeof buf, "\\U%08X", static_cast<unsigned>(c));
      }
      out += buf;
    } else {
      Utf8Append(out, c);
    }
  }
  out += '"';
  return out;
}

// Whether libyaml would write `s` as a literal block: it has a line break,
// and no character a block cannot hold (tabs, \r, other control
// characters), no space right before a break, no space at the end.
bool YamlLiteralAllowed(std::string_view s) {
  if (s.find('\n') == std::string_view::npos) return false;
  if (s.back() == ' ') return false;
  for (size_t i = 0; i < s.size();) {
    size_t at = i;
    char32_t c = Utf8Next(s, i);
    if (c == kUtf8Invalid || !YamlPrintable(c) || c == 0x85 || c == 0x2028 || c == 0x2029)
      return false;
    if (c == ' ' && at + 1 < s.size() && s[at + 1] == '\n') return false;
  }
  return true;
}

// A literal block scalar's header and lines, its lines at `indent`.
void YamlLiteral(std::string& out, std::string_view s, size_t indent) {
  out += '|';
  if (s[0] == ' ' || s[0] == '\n') out += '2';
  if (s.back() != '\n') {
    out += '-';
  } else if (s.size() == 1 || s[s.size() - 2] == '\n') {
    out += '+';
  }
  out += '\n';
  std::string_view body = s.back() == '\n' ? s.substr(0, s.size() - 1) : s;
  size_t start = 0;
  while (true) {
    size_t nl = body.find('\n', start);
    std::string_view line = body.substr(start, nl == std::string_view::npos ? nl : nl - start);
    if (!line.empty()) out += std::string(indent, ' ');
    out += line;
    out += '\n';
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
}

bool EmptyCollection(const Value& v) { return v.is_collection() && v.size() == 0; }
bool BlockCollection(const Value& v) { return v.is_collection() && v.size() > 0; }

// One node in block style. The caller has written the line up to where the
// node begins (after "key:" or "- "); `indent` is the indentation of the
// node's own lines. `inline_first`: the node starts on the caller's line
// (a collection's first entry right after "- ").
void YamlNode(std::string& out, const Value& v, size_t indent, bool inline_first) {
  if (v.is_map() && v.size() > 0) {
    bool first = true;
    for (const auto& [k, item] : v.entries()) {
      if (!(first && inline_first)) out += std::string(indent, ' ');
      first = false;
      out += YamlDoubleQuoted(k);
      out += ':';
      if (BlockCollection(item)) {
        out += '\n';
        // A sequence under a key is not indented further (libyaml's layout).
        YamlNode(out, item, item.is_map() ? indent + 2 : indent, false);
      } else {
        out += ' ';
        YamlNode(out, item, indent + 2, false);
      }
    }
    return;
  }
  if (v.is_sequence() && v.size() > 0) {
    bool first = true;
    for (const Value& item : v.items()) {
      if (!(first && inline_first)) out += std::string(indent, ' ');
      first = false;
      out += "- ";
      YamlNode(out, item, indent + 2, BlockCollection(item));
    }
    return;
  }
  if (EmptyCollection(v)) {
    out += v.is_map() ? "{}\n" : "[]\n";
    return;
  }
  if (v.is_string()) {
    if (YamlLiteralAllowed(v.as_string())) {
      // At the top, a block's lines are indented too.
      YamlLiteral(out, v.as_string(), std::max<size_t>(indent, 2));
    } else {
      out += YamlDoubleQuoted(v.as_string());
      out += '\n';
    }
    return;
  }
  if (v.is_number()) {
    out += PlainNumber(v.as_number());
  } else if (v.is_bool()) {
    out += v.as_bool() ? "true" : "false";
  } else {
    out += "null";
  }
  out += '\n';
}

Value YamlEncodeFn(const std::vector<Value>& a, CallContext&) {
  std::string out;
  const Value& v = a[0];
  YamlNode(out, v, 0, false);
  // A plain scalar alone is followed by the end-of-document marker, as
  // libyaml writes it.
  if (v.is_number() || v.is_bool() || v.is_null()) out += "...\n";
  return Value::String(std::move(out));
}

}  // namespace

void RegisterEncodingFunctions(FunctionTable& t) {
  auto add = [&](const char* name, FunctionImpl f, const char* sig, bool null_args = false) {
    FunctionSpec s;
    s.min_args = s.max_args = 1;
    s.impl = std::move(f);
    s.signature = sig;
    s.null_args = null_args;
    t[name] = std::move(s);
  };
  add("base64decode", Base64DecodeFn, "string");
  add("base64encode", Base64EncodeFn, "string");
  add("csvdecode", CsvDecodeFn, "string");
  add("jsondecode", JsonDecodeFn, "string");
  add("jsonencode", JsonEncodeFn, "value", true);
  add("urlencode", UrlEncodeFn, "string");
  add("yamldecode", YamlDecodeFn, "string");
  add("yamlencode", YamlEncodeFn, "value", true);
}

}  // namespace cairn::expr
