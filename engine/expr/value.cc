#include "engine/expr/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace cairn::expr {
namespace {

const List& EmptyList() {
  static const List empty;
  return empty;
}
const Map& EmptyMap() {
  static const Map empty;
  return empty;
}

int CompareNumbers(const Number& a, const Number& b) {
  if (a.is_int && b.is_int) return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
  // Mixed or both real: compare as long double, which holds every int64
  // exactly (64-bit mantissa on x86-64).
  long double x = a.is_int ? static_cast<long double>(a.i) : a.d;
  long double y = b.is_int ? static_cast<long double>(b.i) : b.d;
  return x < y ? -1 : (x > y ? 1 : 0);
}

void AppendQuoted(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
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
      case '$':
      case '%':
        // "${" and "%{" would start an interpolation or a directive.
        out += c;
        if (i + 1 < s.size() && s[i + 1] == '{') out += c;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

void AppendSource(std::string& out, const Value& v, bool display);

void AppendUnmarkedSource(std::string& out, const Value& v, bool display) {
  switch (v.type()) {
    case Type::kNull:
      out += "null";
      return;
    case Type::kUnknown:
      out += "(known after apply)";
      return;
    case Type::kBool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Type::kNumber:
      out += v.as_number().ToString();
      return;
    case Type::kString:
      AppendQuoted(out, v.as_string());
      return;
    case Type::kList:
    case Type::kSet: {
      bool set = v.is_set();
      out += set ? "toset([" : "[";
      bool first = true;
      for (const Value& item : v.items()) {
        if (!first) out += ", ";
        first = false;
        AppendSource(out, item, display);
      }
      out += set ? "])" : "]";
      return;
    }
    case Type::kMap: {
      out += '{';
      bool first = true;
      for (const auto& [k, item] : v.entries()) {
        if (!first) out += ", ";
        first = false;
        if (IsIdentifier(k) && k != "null" && k != "true" && k != "false" && k != "for") {
          out += k;
        } else {
          AppendQuoted(out, k);
        }
        out += " = ";
        AppendSource(out, item, display);
      }
      out += '}';
      return;
    }
  }
}

void AppendSource(std::string& out, const Value& v, bool display) {
  if (v.sensitive()) {
    if (display) {
      out += "(sensitive value)";
      return;
    }
    out += "sensitive(";
    AppendUnmarkedSource(out, v, display);
    out += ')';
    return;
  }
  AppendUnmarkedSource(out, v, display);
}

}  // namespace

Number Number::Real(double v) {
  // 2^63 is exactly representable; values from -2^63 up to (not including)
  // 2^63 fit int64.
  if (std::isfinite(v) && v == std::trunc(v) && v >= -9223372036854775808.0 &&
      v < 9223372036854775808.0) {
    return Int(static_cast<int64_t>(v));
  }
  return {false, 0, v};
}

std::string Number::ToString() const {
  if (is_int) return std::to_string(i);
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  // Terraform writes numbers without an exponent ("1000000000000000000000",
  // "0.0000001"), in the fewest digits that read back exactly.
  char buf[400];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
  if (r.ec != std::errc()) r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

Value Value::Unknown() {
  Value v;
  v.type_ = Type::kUnknown;
  return v;
}

Value Value::Bool(bool b) {
  Value v;
  v.type_ = Type::kBool;
  v.bool_ = b;
  return v;
}

Value Value::Int(int64_t i) { return Num(Number::Int(i)); }

Value Value::Num(Number n) {
  Value v;
  v.type_ = Type::kNumber;
  v.num_ = n;
  return v;
}

Value Value::String(std::string s) {
  Value v;
  v.type_ = Type::kString;
  v.str_ = std::move(s);
  return v;
}

Value Value::MakeList(List items) {
  Value v;
  v.type_ = Type::kList;
  v.list_ = std::make_shared<const List>(std::move(items));
  return v;
}

Value Value::MakeSet(List items) {
  std::stable_sort(items.begin(), items.end(),
                   [](const Value& a, const Value& b) { return Compare(a, b) < 0; });
  // Repeats merge; a repeat's marks join the one kept.
  List unique;
  for (Value& item : items) {
    if (!unique.empty() && Compare(unique.back(), item) == 0) {
      if (item.sensitive()) unique.back() = unique.back().WithMarksOf(item);
      continue;
    }
    unique.push_back(std::move(item));
  }
  Value v;
  v.type_ = Type::kSet;
  v.list_ = std::make_shared<const List>(std::move(unique));
  return v;
}

Value Value::MakeMap(Map items) {
  Value v;
  v.type_ = Type::kMap;
  v.map_ = std::make_shared<const Map>(std::move(items));
  return v;
}

const List& Value::items() const { return list_ && is_sequence() ? *list_ : EmptyList(); }
const Map& Value::entries() const { return map_ && is_map() ? *map_ : EmptyMap(); }

size_t Value::size() const {
  if (is_sequence()) return items().size();
  if (is_map()) return entries().size();
  return 0;
}

bool Value::ContainsUnknown() const {
  if (is_unknown()) return true;
  if (is_sequence()) {
    return std::any_of(items().begin(), items().end(),
                       [](const Value& v) { return v.ContainsUnknown(); });
  }
  if (is_map()) {
    return std::any_of(entries().begin(), entries().end(),
                       [](const auto& e) { return e.second.ContainsUnknown(); });
  }
  return false;
}

const std::vector<std::string>& Value::sensitive_from() const {
  static const std::vector<std::string> none;
  return marks_ ? *marks_ : none;
}

Value Value::MarkedSensitive(const std::string& from) const {
  Value v = *this;
  auto origins = marks_ ? std::vector<std::string>(*marks_) : std::vector<std::string>();
  if (std::find(origins.begin(), origins.end(), from) == origins.end()) origins.push_back(from);
  v.marks_ = std::make_shared<const std::vector<std::string>>(std::move(origins));
  return v;
}

Value Value::WithMarksOf(const Value& other) const {
  if (!other.marks_ || other.marks_ == marks_) return *this;
  if (!marks_) {
    Value v = *this;
    v.marks_ = other.marks_;
    return v;
  }
  Value v = *this;
  for (const std::string& from : *other.marks_) v = v.MarkedSensitive(from);
  return v;
}

Value Value::Unmarked() const {
  Value v = *this;
  v.marks_.reset();
  return v;
}

Value Value::DeepUnmarked() const {
  Value v = Unmarked();
  if (is_sequence()) {
    List items;
    items.reserve(size());
    for (const Value& item : this->items()) items.push_back(item.DeepUnmarked());
    v.list_ = std::make_shared<const List>(std::move(items));
  } else if (is_map()) {
    Map m;
    for (const auto& [k, item] : entries()) m.emplace(k, item.DeepUnmarked());
    v.map_ = std::make_shared<const Map>(std::move(m));
  }
  return v;
}

bool Value::DeepSensitive(std::vector<std::string>* from) const {
  bool found = false;
  if (marks_) {
    found = true;
    if (!from) return true;
    for (const std::string& f : *marks_) {
      if (std::find(from->begin(), from->end(), f) == from->end()) from->push_back(f);
    }
  }
  if (is_sequence()) {
    for (const Value& item : items()) {
      if (item.DeepSensitive(from)) {
        found = true;
        if (!from) return true;
      }
    }
  } else if (is_map()) {
    for (const auto& [k, item] : entries()) {
      if (item.DeepSensitive(from)) {
        found = true;
        if (!from) return true;
      }
    }
  }
  return found;
}

Value Value::FromJson(const cairn::Value& j) {
  switch (j.type()) {
    case cairn::Value::value_t::null:
    case cairn::Value::value_t::discarded:
      return Null();
    case cairn::Value::value_t::boolean:
      return Bool(j.get<bool>());
    case cairn::Value::value_t::number_integer:
      return Int(j.get<int64_t>());
    case cairn::Value::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Int(static_cast<int64_t>(u));
      return Num(Number{false, 0, static_cast<double>(u)});
    }
    case cairn::Value::value_t::number_float:
      return Real(j.get<double>());
    case cairn::Value::value_t::string:
      return String(j.get<std::string>());
    case cairn::Value::value_t::array: {
      List items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(FromJson(item));
      return MakeList(std::move(items));
    }
    case cairn::Value::value_t::object: {
      if (IsUnknown(j)) return Unknown();
      Map m;
      for (auto it = j.begin(); it != j.end(); ++it) m.emplace(it.key(), FromJson(*it));
      return MakeMap(std::move(m));
    }
    case cairn::Value::value_t::binary:
      return Null();
  }
  return Null();
}

cairn::Value Value::ToJson() const {
  switch (type_) {
    case Type::kNull:
      return nullptr;
    case Type::kUnknown:
      return UnknownValue();
    case Type::kBool:
      return bool_;
    case Type::kNumber:
      if (num_.is_int) return num_.i;
      return num_.d;
    case Type::kString:
      return str_;
    case Type::kList:
    case Type::kSet: {
      cairn::Value out = cairn::Value::array();
      for (const Value& item : items()) out.push_back(item.ToJson());
      return out;
    }
    case Type::kMap: {
      cairn::Value out = cairn::Value::object();
      for (const auto& [k, item] : entries()) out[k] = item.ToJson();
      return out;
    }
  }
  return nullptr;
}

const char* Value::TypeName(Type t) {
  switch (t) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return "bool";
    case Type::kNumber:
      return "number";
    case Type::kString:
      return "string";
    case Type::kList:
      return "list";
    case Type::kSet:
      return "set";
    case Type::kMap:
      return "map";
    case Type::kUnknown:
      return "unknown";
  }
  return "value";
}

int Compare(const Value& a, const Value& b) {
  if (a.type() != b.type()) return static_cast<int>(a.type()) < static_cast<int>(b.type()) ? -1 : 1;
  switch (a.type()) {
    case Type::kNull:
    case Type::kUnknown:
      return 0;
    case Type::kBool:
      return static_cast<int>(a.as_bool()) - static_cast<int>(b.as_bool());
    case Type::kNumber:
      return CompareNumbers(a.as_number(), b.as_number());
    case Type::kString: {
      int c = a.as_string().compare(b.as_string());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case Type::kList:
    case Type::kSet: {
      const List& x = a.items();
      const List& y = b.items();
      for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
        if (int c = Compare(x[i], y[i])) return c;
      }
      return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    case Type::kMap: {
      auto i = a.entries().begin(), j = b.entries().begin();
      for (; i != a.entries().end() && j != b.entries().end(); ++i, ++j) {
        int c = i->first.compare(j->first);
        if (c) return c < 0 ? -1 : 1;
        if (int d = Compare(i->second, j->second)) return d;
      }
      if (i == a.entries().end() && j == b.entries().end()) return 0;
      return i == a.entries().end() ? -1 : 1;
    }
  }
  return 0;
}

bool Equal(const Value& a, const Value& b) { return Compare(a, b) == 0; }

std::optional<std::string> ToStringValue(const Value& v) {
  switch (v.type()) {
    case Type::kString:
      return v.as_string();
    case Type::kNumber:
      return v.as_number().ToString();
    case Type::kBool:
      return std::string(v.as_bool() ? "true" : "false");
    default:
      return std::nullopt;
  }
}

std::string ToSource(const Value& v) {
  std::string out;
  AppendSource(out, v, false);
  return out;
}

std::string Display(const Value& v) {
  std::string out;
  AppendSource(out, v, true);
  return out;
}

}  // namespace cairn::expr
