#include "tests/support/prometheus_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

namespace cairn::testing {

namespace {

bool PromTextIsBlank(char c) { return c == ' ' || c == '\t'; }
bool PromTextIsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool PromTextIsDigit(char c) { return c >= '0' && c <= '9'; }
bool PromTextIsMetricNameChar(char c, bool first) {
  return PromTextIsLetter(c) || c == '_' || c == ':' || (!first && PromTextIsDigit(c));
}
bool PromTextIsLabelNameChar(char c, bool first) {
  return PromTextIsLetter(c) || c == '_' || (!first && PromTextIsDigit(c));
}

bool PromTextEqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// A float as Go's strconv.ParseFloat reads it in decimal (what Prometheus
// reads): an optional sign, then digits with an optional point and
// exponent, or NaN, Inf or Infinity in any case.
std::optional<double> ParsePromValue(std::string_view token) {
  bool negative = false;
  std::string_view rest = token;
  if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  if (rest.empty()) return std::nullopt;
  double v = 0;
  if (PromTextEqualsIgnoringCase(rest, "nan")) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (PromTextEqualsIgnoringCase(rest, "inf") ||
             PromTextEqualsIgnoringCase(rest, "infinity")) {
    v = std::numeric_limits<double>::infinity();
  } else {
    // from_chars would also take "nan(...)" and "inf": only digits, '.', and
    // an exponent get here.
    for (char c : rest) {
      if (!PromTextIsDigit(c) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') {
        return std::nullopt;
      }
    }
    if (!PromTextIsDigit(rest[0]) && rest[0] != '.') return std::nullopt;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    // Out of range: ParseFloat answers +-Inf or 0 with an error; so do we.
    if (ec != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
  }
  return negative ? -v : v;
}

std::optional<int64_t> ParsePromTimestamp(std::string_view token) {
  bool plus = !token.empty() && token[0] == '+';
  if (plus) token.remove_prefix(1);
  if (token.empty() || token[0] == '+' || (plus && token[0] == '-')) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return v;
}

std::string RenderPromLabels(const PrometheusLabels& labels) {
  std::string out = "{";
  for (const auto& [k, v] : labels) {
    if (out.size() > 1) out += ",";
    out += k + "=\"" + v + "\"";
  }
  return out + "}";
}

bool PromTextEndsWith(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// One line being read: a cursor over it and its number, for errors.
class PromTextLine {
 public:
  PromTextLine(std::string_view text, size_t number) : text_(text), number_(number) {}

  Status Error(const std::string& what) const {
    return Status::InvalidArgument("line " + std::to_string(number_) + ": " + what + ": \"" +
                                   std::string(text_) + "\"");
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void Advance() { ++pos_; }
  // Returns whether any blank was skipped.
  bool SkipBlanks() {
    size_t start = pos_;
    while (!AtEnd() && PromTextIsBlank(text_[pos_])) ++pos_;
    return pos_ > start;
  }
  std::string_view ReadMetricName() {
    size_t start = pos_;
    while (!AtEnd() && PromTextIsMetricNameChar(text_[pos_], pos_ == start)) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  std::string_view ReadLabelName() {
    size_t start = pos_;
    while (!AtEnd() && PromTextIsLabelNameChar(text_[pos_], pos_ == start)) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  std::string_view ReadToken() {
    size_t start = pos_;
    while (!AtEnd() && !PromTextIsBlank(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  std::string_view Rest() {
    std::string_view r = text_.substr(std::min(pos_, text_.size()));
    pos_ = text_.size();
    return r;
  }
  // The text up to the closing quote (consumed), unescaping \\ and \"
  // (when `quoted`) and \n.
  Result<std::string> ReadEscaped(bool quoted) {
    std::string out;
    while (true) {
      if (AtEnd()) {
        if (quoted) return Error("a label value without its closing quote");
        return out;
      }
      char c = text_[pos_++];
      if (quoted && c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (AtEnd()) return Error("a backslash at the end of the line");
      char e = text_[pos_++];
      if (e == '\\') {
        out += '\\';
      } else if (e == 'n') {
        out += '\n';
      } else if (e == '"' && quoted) {
        out += '"';
      } else {
        return Error(std::string("an invalid escape sequence \\") + e);
      }
    }
  }

 private:
  std::string_view text_;
  size_t number_;
  size_t pos_ = 0;
};

class PromTextParser {
 public:
  Result<std::vector<MetricFamily>> Parse(std::string_view text) {
    size_t number = 0;
    while (!text.empty()) {
      ++number;
      size_t nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
      if (line.empty()) continue;
      PromTextLine l(line, number);
      Status st = line[0] == '#' ? Comment(l) : SampleLine(l);
      if (!st.ok()) return st;
    }
    return std::move(families_);
  }

 private:
  // Marks `name`'s family as the one whose lines are being read: each
  // family's lines must form one group.
  Status Enter(const PromTextLine& l, const std::string& name) {
    if (current_ == name) return Status::Ok();
    if (families_by_name_.count(name) > 0) {
      return l.Error("the lines of " + name + " are not in one group");
    }
    current_ = name;
    families_by_name_[name] = families_.size();
    families_.push_back(MetricFamily{name, "untyped", "", {}});
    return Status::Ok();
  }
  MetricFamily& Family(const std::string& name) { return families_[families_by_name_.at(name)]; }

  Status Comment(PromTextLine& l) {
    l.Advance();  // '#'
    l.SkipBlanks();
    std::string_view keyword = l.ReadToken();
    if (keyword != "HELP" && keyword != "TYPE") return Status::Ok();  // a comment
    if (!l.SkipBlanks()) return l.Error("no metric name after " + std::string(keyword));
    std::string name(l.ReadMetricName());
    if (name.empty()) return l.Error("no metric name after " + std::string(keyword));
    if (!l.AtEnd() && !PromTextIsBlank(l.Peek())) return l.Error("an invalid metric name");
    l.SkipBlanks();
    CAIRN_RETURN_IF_ERROR(Enter(l, name));
    MetricFamily& f = Family(name);
    if (keyword == "HELP") {
      if (has_help_.count(name) > 0) return l.Error("a second HELP line for " + name);
      has_help_.insert(name);
      auto help = l.ReadEscaped(false);
      if (!help.ok()) return help.status();
      f.help = std::move(*help);
      return Status::Ok();
    }
    if (has_type_.count(name) > 0) return l.Error("a second TYPE line for " + name);
    if (!f.samples.empty()) return l.Error("the TYPE line of " + name + " after its samples");
    std::string type(l.ReadToken());
    l.SkipBlanks();
    if (!l.AtEnd()) return l.Error("more after the type");
    static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                 "untyped"};
    if (kTypes.count(type) == 0) return l.Error("an unknown type \"" + type + "\"");
    has_type_.insert(name);
    f.type = type;
    return Status::Ok();
  }

  // The family a sample named `name` belongs to, and whether its type allows it.
  Result<std::string> FamilyOf(const PromTextLine& l, const std::string& name,
                               const PrometheusLabels& labels) {
    auto type_of = [&](const std::string& n) -> std::string {
      auto it = families_by_name_.find(n);
      return it == families_by_name_.end() ? "" : families_[it->second].type;
    };
    std::string own = type_of(name);
    if (own == "histogram") {
      return l.Error("histogram " + name + " holds only _bucket, _sum and _count samples");
    }
    if (!own.empty()) {
      if (own == "summary" && labels.count("quantile") == 0) {
        return l.Error("summary sample " + name + " without a quantile label");
      }
      return name;
    }
    for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
      if (!PromTextEndsWith(name, suffix)) continue;
      std::string base = name.substr(0, name.size() - suffix.size());
      std::string type = type_of(base);
      if (type == "histogram" || (type == "summary" && suffix != "_bucket")) {
        if (suffix == "_bucket" && labels.count("le") == 0) {
          return l.Error("histogram bucket " + name + " without an le label");
        }
        return base;
      }
    }
    return name;  // an untyped family of its own
  }

  Status SampleLine(PromTextLine& l) {
    Sample s;
    s.name = std::string(l.ReadMetricName());
    if (s.name.empty()) return l.Error("expected a metric name");
    const bool blank = l.SkipBlanks();
    if (l.Peek() == '{') {
      l.Advance();
      while (true) {
        l.SkipBlanks();
        if (l.Peek() == '}') {
          l.Advance();
          break;
        }
        std::string label(l.ReadLabelName());
        if (label.empty()) return l.Error("expected a label name");
        l.SkipBlanks();
        if (l.Peek() != '=') return l.Error("expected '=' after label " + label);
        l.Advance();
        l.SkipBlanks();
        if (l.Peek() != '"') return l.Error("expected '\"' to open the value of label " + label);
        l.Advance();
        auto value = l.ReadEscaped(true);
        if (!value.ok()) return value.status();
        if (!s.labels.emplace(label, std::move(*value)).second) {
          return l.Error("label " + label + " twice");
        }
        l.SkipBlanks();
        if (l.Peek() == ',') {
          l.Advance();
        } else if (l.Peek() != '}') {
          return l.Error("expected ',' or '}' after the value of label " + label);
        }
      }
      l.SkipBlanks();
    } else if (!blank) {
      return l.Error(l.AtEnd() ? "a sample without a value" : "an invalid metric name");
    }
    std::string_view value = l.ReadToken();
    if (value.empty()) return l.Error("a sample without a value");
    auto v = ParsePromValue(value);
    if (!v) return l.Error("an invalid value \"" + std::string(value) + "\"");
    s.value = *v;
    l.SkipBlanks();
    if (!l.AtEnd()) {
      std::string_view ts = l.ReadToken();
      auto t = ParsePromTimestamp(ts);
      if (!t) return l.Error("an invalid timestamp \"" + std::string(ts) + "\"");
      s.timestamp_ms = *t;
      l.SkipBlanks();
      if (!l.AtEnd()) return l.Error("more after the timestamp");
    }
    auto family = FamilyOf(l, s.name, s.labels);
    if (!family.ok()) return family.status();
    CAIRN_RETURN_IF_ERROR(Enter(l, *family));
    if (!seen_.emplace(s.name, s.labels).second) {
      return l.Error("sample " + s.name + RenderPromLabels(s.labels) + " twice");
    }
    Family(*family).samples.push_back(std::move(s));
    return Status::Ok();
  }

  std::vector<MetricFamily> families_;
  std::map<std::string, size_t> families_by_name_;
  std::set<std::string> has_help_, has_type_;
  std::set<std::pair<std::string, PrometheusLabels>> seen_;
  std::string current_;
};

}  // namespace

Result<std::vector<MetricFamily>> ParsePrometheusText(std::string_view text) {
  return PromTextParser().Parse(text);
}

const MetricFamily* FindFamily(const std::vector<MetricFamily>& families, std::string_view name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const Sample* FindSample(const std::vector<MetricFamily>& families, std::string_view name,
                         const PrometheusLabels& labels) {
  for (const auto& f : families) {
    for (const auto& s : f.samples) {
      if (s.name == name && s.labels == labels) return &s;
    }
  }
  return nullptr;
}

double SumSamples(const std::vector<MetricFamily>& families, std::string_view name) {
  double sum = 0;
  for (const auto& f : families) {
    for (const auto& s : f.samples) {
      if (s.name == name) sum += s.value;
    }
  }
  return sum;
}

Status CheckHistogram(const MetricFamily& family) {
  const std::string& n = family.name;
  if (family.type != "histogram") {
    return Status::InvalidArgument(n + " is a " + family.type + ", not a histogram");
  }
  struct Series {
    std::vector<std::pair<double, double>> buckets;  // le, cumulative count
    std::optional<double> sum, count;
  };
  std::map<PrometheusLabels, Series> series;
  for (const Sample& s : family.samples) {
    PrometheusLabels labels = s.labels;
    labels.erase("le");
    Series& one = series[labels];
    if (s.name == n + "_bucket") {
      auto it = s.labels.find("le");
      auto le = it == s.labels.end() ? std::nullopt : ParsePromValue(it->second);
      if (!le || std::isnan(*le)) {
        return Status::InvalidArgument(n + "_bucket" + RenderPromLabels(s.labels) +
                                       ": no le, or one that is not a number");
      }
      one.buckets.emplace_back(*le, s.value);
    } else if (s.name == n + "_sum") {
      one.sum = s.value;
    } else {
      one.count = s.value;
    }
  }
  if (series.empty()) return Status::InvalidArgument(n + ": a histogram without samples");
  for (auto& [labels, one] : series) {
    std::string where = n + (labels.empty() ? "" : RenderPromLabels(labels));
    if (!one.count) return Status::InvalidArgument(where + ": no _count");
    if (!one.sum) return Status::InvalidArgument(where + ": no _sum");
    std::sort(one.buckets.begin(), one.buckets.end());
    if (one.buckets.empty() || !std::isinf(one.buckets.back().first) ||
        one.buckets.back().first < 0) {
      return Status::InvalidArgument(where + ": no +Inf bucket");
    }
    for (size_t i = 1; i < one.buckets.size(); ++i) {
      if (one.buckets[i].first == one.buckets[i - 1].first) {
        return Status::InvalidArgument(where + ": two buckets with le " +
                                       std::to_string(one.buckets[i].first));
      }
      if (one.buckets[i].second < one.buckets[i - 1].second) {
        return Status::InvalidArgument(
            where + ": the bucket le " + std::to_string(one.buckets[i].first) + " counts fewer (" +
            std::to_string(one.buckets[i].second) + ") than the one before");
      }
    }
    if (one.buckets.back().second != *one.count) {
      return Status::InvalidArgument(where + ": the +Inf bucket (" +
                                     std::to_string(one.buckets.back().second) +
                                     ") is not _count (" + std::to_string(*one.count) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace cairn::testing
