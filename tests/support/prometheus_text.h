// A strict parser of the Prometheus text exposition format 0.0.4, for tests
// that read a /metrics page (`cairn serve`, `cairn watch`) and assert on
// values rather than on substrings.
//
// What it accepts (https://prometheus.io/docs/instrumenting/exposition_formats/):
//   # HELP name docstring          (escapes \\ and \n; at most one per family)
//   # TYPE name counter|gauge|histogram|summary|untyped
//                                  (at most one per family, before its samples)
//   # anything else                (a comment, ignored)
//   name{label="value",...} value [timestamp]
// Names are [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*;
// label values escape \\, \" and \n and nothing else; blanks and tabs may
// separate the tokens; a trailing comma in the labels is allowed. A value is
// a decimal float, or NaN, +Inf, -Inf (case-insensitive, as Go's ParseFloat
// reads them; prometheus-cpp writes NaN as "Nan"); a timestamp is an integer
// (milliseconds). Empty lines are skipped.
//
// Rejected, with an error naming the line: anything else on a line; a
// label named twice in a sample; one sample (name and labels) twice; a
// family's lines not in one group; a sample whose name its family's type
// does not allow (a histogram holds only NAME_bucket with `le`, NAME_sum and
// NAME_count; a summary NAME with `quantile`, NAME_sum and NAME_count).
// A sample without TYPE belongs to an untyped family of its own name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn::testing {

using PrometheusLabels = std::map<std::string, std::string>;

struct Sample {
  std::string name;         // as written, e.g. "x_bucket" in family "x"
  PrometheusLabels labels;  // values unescaped
  double value = 0;
  std::optional<int64_t> timestamp_ms;
};

struct MetricFamily {
  std::string name;
  std::string type = "untyped";  // counter, gauge, histogram, summary, untyped
  std::string help;              // unescaped; empty without a HELP line
  std::vector<Sample> samples;   // in the order written
};

// The families of `text`, in the order they first appear, or an
// InvalidArgument error "line N: what is wrong".
Result<std::vector<MetricFamily>> ParsePrometheusText(std::string_view text);

// The family named `name`, or null.
const MetricFamily* FindFamily(const std::vector<MetricFamily>& families, std::string_view name);

// The sample named `name` whose labels are exactly `labels`, or null.
const Sample* FindSample(const std::vector<MetricFamily>& families, std::string_view name,
                         const PrometheusLabels& labels = {});

// The sum of the values of every sample named `name`, whatever its labels
// (0 when there is none).
double SumSamples(const std::vector<MetricFamily>& families, std::string_view name);

// OK if `family` is a well-formed histogram: for each label set (but `le`)
// a NAME_count, a NAME_sum, and NAME_bucket samples whose `le` are numbers,
// distinct, with counts that never decrease as `le` grows, ending with a
// `+Inf` bucket equal to NAME_count. Otherwise an error saying what is wrong.
Status CheckHistogram(const MetricFamily& family);

}  // namespace cairn::testing
