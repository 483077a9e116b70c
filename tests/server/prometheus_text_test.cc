// The test-side parser of the Prometheus text exposition format 0.0.4
// (tests/support/prometheus_text.h): what it reads, what it refuses (each
// refusal naming the line), the histogram check, and that it reads what
// prometheus-cpp's TextSerializer writes (the serializer behind the
// /metrics of `cairn serve` and `cairn watch`).
#include "tests/support/prometheus_text.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

namespace prometheus_text_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

std::vector<MetricFamily> MustParse(const std::string& text) {
  auto parsed = ParsePrometheusText(text);
  INFO(parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

std::string ErrorOf(const std::string& text) {
  auto parsed = ParsePrometheusText(text);
  if (parsed.ok()) return "";
  return parsed.status().message();
}

const char* kHistogram =
    "# HELP h Latency.\n"
    "# TYPE h histogram\n"
    "h_bucket{le=\"0.5\"} 1\n"
    "h_bucket{le=\"1\"} 3\n"
    "h_bucket{le=\"+Inf\"} 4\n"
    "h_sum 2.5\n"
    "h_count 4\n";

}  // namespace

TEST_CASE("prometheus text: families with help and type and samples with labels and timestamps") {
  auto families = MustParse(
      "# HELP http_requests_total The total number of HTTP requests.\n"
      "# TYPE http_requests_total counter\n"
      "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
      "http_requests_total{method=\"post\",code=\"400\"}    3 1395066363000\n"
      "\n"
      "# A comment, ignored.\n"
      "# HELP temp Escapes: a backslash \\\\ and a newline \\n end.\n"
      "# TYPE temp gauge\n"
      "temp -12.5\n"
      "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find "
      "file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n"
      "metric_without_timestamp_and_labels 12.47\n"
      "spaced { a = \"1\" , b=\"2\", } 7\n"
      "tabbed\t5\t-3\n");
  REQUIRE(families.size() == 6);
  CHECK(families[0].name == "http_requests_total");
  CHECK(families[0].type == "counter");
  CHECK(families[0].help == "The total number of HTTP requests.");
  REQUIRE(families[0].samples.size() == 2);
  CHECK(families[0].samples[0].labels == PrometheusLabels{{"method", "post"}, {"code", "200"}});
  CHECK(families[0].samples[0].value == 1027);
  CHECK(families[0].samples[0].timestamp_ms == 1395066363000);
  CHECK(families[0].samples[1].value == 3);
  CHECK(families[1].name == "temp");
  CHECK(families[1].type == "gauge");
  CHECK(families[1].help == "Escapes: a backslash \\ and a newline \n end.");
  CHECK(families[1].samples[0].value == -12.5);
  CHECK_FALSE(families[1].samples[0].timestamp_ms);
  // Without a TYPE line: an untyped family of the sample's own name.
  CHECK(families[2].name == "msdos_file_access_time_seconds");
  CHECK(families[2].type == "untyped");
  CHECK(families[2].help.empty());
  CHECK(families[2].samples[0].labels ==
        PrometheusLabels{{"path", "C:\\DIR\\FILE.TXT"},
                         {"error", "Cannot find file:\n\"FILE.TXT\""}});
  CHECK(families[2].samples[0].value == 1458255915.0);
  CHECK(families[3].samples[0].value == 12.47);
  CHECK(families[4].samples[0].labels == PrometheusLabels{{"a", "1"}, {"b", "2"}});
  CHECK(families[4].samples[0].value == 7);
  CHECK(families[5].samples[0].value == 5);
  CHECK(families[5].samples[0].timestamp_ms == -3);

  const Sample* s =
      FindSample(families, "http_requests_total", {{"code", "400"}, {"method", "post"}});
  REQUIRE(s != nullptr);
  CHECK(s->value == 3);
  CHECK(FindSample(families, "http_requests_total", {{"code", "400"}}) == nullptr);
  CHECK(FindSample(families, "http_requests_total") == nullptr);
  CHECK(FindSample(families, "temp") != nullptr);
  CHECK(SumSamples(families, "http_requests_total") == 1030);
  CHECK(SumSamples(families, "nothing") == 0);
  CHECK(FindFamily(families, "temp") == &families[1]);
  CHECK(FindFamily(families, "nothing") == nullptr);
  CHECK(MustParse("").empty());
}

TEST_CASE("prometheus text: special values as Go's ParseFloat reads them") {
  auto families = MustParse(
      "a +Inf\nb -Inf\nc NaN\nd Nan\ne inf\nf +1e3\ng .5\nh 5.\ni -0\nj 1E-2\nk Infinity\n");
  auto value = [&](const char* name) { return FindSample(families, name)->value; };
  CHECK(value("a") == std::numeric_limits<double>::infinity());
  CHECK(value("b") == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(value("c")));
  CHECK(std::isnan(value("d")));
  CHECK(value("e") == std::numeric_limits<double>::infinity());
  CHECK(value("f") == 1000);
  CHECK(value("g") == 0.5);
  CHECK(value("h") == 5);
  CHECK(value("i") == 0);
  CHECK(value("j") == 0.01);
  CHECK(value("k") == std::numeric_limits<double>::infinity());
}

TEST_CASE("prometheus text: histograms and summaries group their samples") {
  auto families = MustParse(std::string(kHistogram) +
                            "# TYPE s summary\n"
                            "s{quantile=\"0.5\"} 0.1\n"
                            "s{quantile=\"0.9\"} 0.3\n"
                            "s_sum 4\n"
                            "s_count 20\n");
  REQUIRE(families.size() == 2);
  CHECK(families[0].name == "h");
  CHECK(families[0].type == "histogram");
  CHECK(families[0].help == "Latency.");
  CHECK(families[0].samples.size() == 5);
  CHECK(CheckHistogram(families[0]).ok());
  CHECK(FindSample(families, "h_bucket", {{"le", "1"}})->value == 3);
  CHECK(FindSample(families, "h_count")->value == 4);
  CHECK(families[1].type == "summary");
  CHECK(families[1].samples.size() == 4);
  CHECK(CheckHistogram(families[1]).message() == "s is a summary, not a histogram");

  // A histogram with labels: each label set is checked as its own series.
  auto labelled = MustParse(
      "# TYPE r histogram\n"
      "r_bucket{path=\"/a\",le=\"1\"} 1\n"
      "r_bucket{path=\"/a\",le=\"+Inf\"} 1\n"
      "r_sum{path=\"/a\"} 0.5\n"
      "r_count{path=\"/a\"} 1\n"
      "r_bucket{path=\"/b\",le=\"1\"} 2\n"
      "r_bucket{path=\"/b\",le=\"+Inf\"} 3\n"
      "r_sum{path=\"/b\"} 9\n"
      "r_count{path=\"/b\"} 2\n");
  CHECK(CheckHistogram(labelled[0]).message() ==
        "r{path=\"/b\"}: the +Inf bucket (3.000000) is not _count (2.000000)");
}

TEST_CASE("prometheus text: malformed histograms are named") {
  auto check = [](std::string text) {
    auto families = MustParse(text);
    REQUIRE(families.size() == 1);
    return CheckHistogram(families[0]).message();
  };
  std::string head = "# TYPE h histogram\n";
  CHECK(check(head + "h_bucket{le=\"1\"} 3\nh_bucket{le=\"2\"} 2\nh_bucket{le=\"+Inf\"} 3\n"
                     "h_sum 1\nh_count 3\n") ==
        "h: the bucket le 2.000000 counts fewer (2.000000) than the one before");
  // Out of order in the text but cumulative by le: well formed.
  CHECK(
      check(head + "h_bucket{le=\"+Inf\"} 3\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 3\n").empty());
  CHECK(check(head + "h_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n") == "h: no +Inf bucket");
  CHECK(check(head + "h_bucket{le=\"+Inf\"} 1\nh_count 1\n") == "h: no _sum");
  CHECK(check(head + "h_bucket{le=\"+Inf\"} 1\nh_sum 1\n") == "h: no _count");
  CHECK(check(head + "h_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n") ==
        "h: the +Inf bucket (2.000000) is not _count (1.000000)");
  CHECK(check(head + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"1.0\"} 1\nh_bucket{le=\"+Inf\"} 1\n"
                     "h_sum 1\nh_count 1\n") == "h: two buckets with le 1.000000");
  CHECK(check(head + "h_bucket{le=\"x\"} 1\nh_sum 1\nh_count 1\n") ==
        "h_bucket{le=\"x\"}: no le, or one that is not a number");
  CHECK(check(head) == "h: a histogram without samples");
}

TEST_CASE("prometheus text: malformed input is refused naming its line") {
  struct Bad {
    std::string text;
    std::string error;  // the start of the message
  };
  const Bad bad[] = {
      {"a 1\n{x=\"1\"} 2\n", "line 2: expected a metric name"},
      {"9a 1\n", "line 1: expected a metric name"},
      {"a-b 1\n", "line 1: an invalid metric name"},
      {"a\n", "line 1: a sample without a value"},
      {"a{} \n", "line 1: a sample without a value"},
      {"a one\n", "line 1: an invalid value \"one\""},
      {"a 1x\n", "line 1: an invalid value \"1x\""},
      {"a 0x10\n", "line 1: an invalid value \"0x10\""},
      {"a nan(1)\n", "line 1: an invalid value \"nan(1)\""},
      {"a ++1\n", "line 1: an invalid value \"++1\""},
      {"a 1e\n", "line 1: an invalid value \"1e\""},
      {"a 1e999\n", "line 1: an invalid value \"1e999\""},
      {"a 1 2.5\n", "line 1: an invalid timestamp \"2.5\""},
      {"a 1 +-2\n", "line 1: an invalid timestamp \"+-2\""},
      {"a 1 2 3\n", "line 1: more after the timestamp"},
      {"a{b=\"1\" 2\n", "line 1: expected ',' or '}' after the value of label b"},
      {"a{b=\"1} 2\n", "line 1: a label value without its closing quote"},
      {"a{b=1} 2\n", "line 1: expected '\"' to open the value of label b"},
      {"a{b} 2\n", "line 1: expected '=' after label b"},
      {"a{1b=\"x\"} 2\n", "line 1: expected a label name"},
      {"a{b:c=\"x\"} 2\n", "line 1: expected '=' after label b"},
      {"a{,} 2\n", "line 1: expected a label name"},
      {"a{b=\"x\",,} 2\n", "line 1: expected a label name"},
      {"a{b=\"\\t\"} 2\n", "line 1: an invalid escape sequence \\t"},
      {"a{b=\"x\",b=\"y\"} 2\n", "line 1: label b twice"},
      {"a{b=\"x\"} 1\na{b=\"x\"} 2\n", "line 2: sample a{b=\"x\"} twice"},
      {"a 1\nb 1\na 2\n", "line 3: the lines of a are not in one group"},
      {"# TYPE a counter\n# TYPE a gauge\n", "line 2: a second TYPE line for a"},
      {"# HELP a x\n# HELP a y\n", "line 2: a second HELP line for a"},
      {"a 1\n# TYPE a counter\n", "line 2: the TYPE line of a after its samples"},
      {"# TYPE a countr\n", "line 1: an unknown type \"countr\""},
      {"# TYPE a Counter\n", "line 1: an unknown type \"Counter\""},
      {"# TYPE a\n", "line 1: an unknown type \"\""},
      {"# TYPE a counter extra\n", "line 1: more after the type"},
      {"# TYPE\n", "line 1: no metric name after TYPE"},
      {"# HELP a-b x\n", "line 1: an invalid metric name"},
      {"# HELP a \\q\n", "line 1: an invalid escape sequence \\q"},
      {"# HELP a ends with \\\n", "line 1: a backslash at the end of the line"},
      {"# TYPE h histogram\nh 1\n", "line 2: histogram h holds only _bucket, _sum and _count"},
      {"# TYPE h histogram\nh_bucket 1\n", "line 2: histogram bucket h_bucket without an le label"},
      {"# TYPE s summary\ns 1\n", "line 2: summary sample s without a quantile label"},
      {"a 1\r\n", "line 1: an invalid value \"1\r\""},
  };
  for (const Bad& b : bad) {
    INFO(b.text);
    std::string error = ErrorOf(b.text);
    CHECK(error.rfind(b.error, 0) == 0);
    if (error.rfind(b.error, 0) != 0) CHECK(error == b.error);  // show both
  }
}

TEST_CASE("prometheus text: reads what prometheus-cpp's TextSerializer writes") {
  prometheus::Registry registry;
  auto& requests = prometheus::BuildCounter()
                       .Name("requests_total")
                       .Help("Requests by path.")
                       .Register(registry);
  requests.Add({{"path", "a\\b \"quoted\"\nnext"}}).Increment(3);
  requests.Add({{"path", "/"}}).Increment();
  auto& gauges = prometheus::BuildGauge().Name("level").Help("Levels.").Register(registry);
  gauges.Add({{"kind", "nan"}}).Set(std::numeric_limits<double>::quiet_NaN());
  gauges.Add({{"kind", "inf"}}).Set(-std::numeric_limits<double>::infinity());
  gauges.Add({{"kind", "small"}}).Set(0.0005);
  auto& latency =
      prometheus::BuildHistogram()
          .Name("latency_seconds")
          .Help("Latency.")
          .Register(registry)
          .Add({{"route", "x"}}, prometheus::Histogram::BucketBoundaries{0.001, 0.1, 1});
  for (double v : {0.0001, 0.05, 0.05, 0.5, 7.0}) latency.Observe(v);
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  INFO(text);

  auto families = MustParse(text);
  REQUIRE(families.size() == 3);
  CHECK(FindFamily(families, "requests_total")->type == "counter");
  CHECK(FindFamily(families, "requests_total")->help == "Requests by path.");
  CHECK(FindSample(families, "requests_total", {{"path", "a\\b \"quoted\"\nnext"}})->value == 3);
  CHECK(FindSample(families, "requests_total", {{"path", "/"}})->value == 1);
  CHECK(std::isnan(FindSample(families, "level", {{"kind", "nan"}})->value));
  CHECK(FindSample(families, "level", {{"kind", "inf"}})->value ==
        -std::numeric_limits<double>::infinity());
  CHECK(FindSample(families, "level", {{"kind", "small"}})->value == 0.0005);
  const MetricFamily* hist = FindFamily(families, "latency_seconds");
  REQUIRE(hist != nullptr);
  CHECK(hist->type == "histogram");
  CHECK(CheckHistogram(*hist).ok());
  CHECK(FindSample(families, "latency_seconds_bucket", {{"route", "x"}, {"le", "0.001"}})->value ==
        1);
  CHECK(FindSample(families, "latency_seconds_bucket", {{"route", "x"}, {"le", "0.1"}})->value ==
        3);
  CHECK(FindSample(families, "latency_seconds_bucket", {{"route", "x"}, {"le", "+Inf"}})->value ==
        5);
  CHECK(FindSample(families, "latency_seconds_count", {{"route", "x"}})->value == 5);
  CHECK(FindSample(families, "latency_seconds_sum", {{"route", "x"}})->value == Approx(7.6001));
}

}  // namespace prometheus_text_test
