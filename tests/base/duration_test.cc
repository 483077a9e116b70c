#include "base/duration.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

namespace duration_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace std::chrono_literals;

namespace {

// The message of a refused duration ("" when it parses).
std::string Why(std::string_view text) {
  auto d = ParseDuration(text);
  return d.ok() ? "" : d.status().message();
}

}  // namespace

TEST_CASE("duration: a whole number and a unit, each unit") {
  CHECK(*ParseDuration("500ms") == 500ms);
  CHECK(*ParseDuration("2s") == 2s);
  CHECK(*ParseDuration("10m") == 10min);
  CHECK(*ParseDuration("24h") == 24h);
  CHECK(*ParseDuration("7d") == 7 * 24h);
  CHECK(*ParseDuration("0s") == 0ms);
  CHECK(*ParseDuration("0ms") == 0ms);
}

TEST_CASE("duration: 0 alone needs no unit but another number does") {
  CHECK(*ParseDuration("0") == 0ms);
  CHECK(*ParseDuration("000") == 0ms);
  CHECK(Why("2") == "'2' is not a duration: a unit is missing after 2 (ms, s, m, h or d)");
  CHECK(Why("1m30") == "'1m30' is not a duration: a unit is missing after 30 (ms, s, m, h or d)");
  CHECK_FALSE(ParseDuration("1h0").ok());
}

TEST_CASE("duration: parts combine from the largest unit down") {
  CHECK(*ParseDuration("1h30m") == 90min);
  CHECK(*ParseDuration("1m30s") == 90s);
  CHECK(*ParseDuration("1d12h") == 36h);
  CHECK(*ParseDuration("1d2h3m4s5ms") == 24h + 2h + 3min + 4s + 5ms);
  CHECK(*ParseDuration("2s500ms") == 2500ms);
  CHECK(*ParseDuration("90s") == 90s);  // a part need not be below the next unit
  const std::string order =
      "its parts go from the largest unit down, each unit once (1h30m, not 30m1h)";
  CHECK(Why("30m1h") == "'30m1h' is not a duration: " + order);
  CHECK(Why("1m1m") == "'1m1m' is not a duration: " + order);
  CHECK(Why("500ms1s") == "'500ms1s' is not a duration: " + order);
}

TEST_CASE("duration: a decimal fraction is exact, down to the millisecond") {
  CHECK(*ParseDuration("1.5m") == 90s);
  CHECK(*ParseDuration("0.25s") == 250ms);
  CHECK(*ParseDuration("1.5h") == 90min);
  CHECK(*ParseDuration("0.5d") == 12h);
  CHECK(*ParseDuration("2.50s") == 2500ms);   // trailing zeros say nothing
  CHECK(*ParseDuration("1.001s") == 1001ms);  // 1.001 * 1000 is not 1000.9999...
  CHECK(*ParseDuration("0.001s") == 1ms);
  CHECK(*ParseDuration("1.0ms") == 1ms);
  CHECK(*ParseDuration("1.5h30s") == 90min + 30s);
  CHECK_FALSE(ParseDuration("0.000011574d").ok());  // 999.9936ms: not rounded to 1s
}

TEST_CASE("duration: fractions finer than a millisecond, signs, NaN and infinity are refused") {
  const std::string finer =
      "a fraction finer than a millisecond (0.25s is 250ms; 0.0001s and 1.5ms are not whole "
      "milliseconds)";
  CHECK(Why("1.5ms") == "'1.5ms' is not a duration: " + finer);
  CHECK(Why("0.0001s") == "'0.0001s' is not a duration: " + finer);
  CHECK(Why("1.00000000001d") == "'1.00000000001d' is not a duration: " + finer);
  CHECK(Why("5.s") ==
        "'5.s' is not a duration: a digit must follow the point (e.g. 30s, 5m, "
        "1h30m or 7d)");
  CHECK(Why("1.5") == "'1.5' is not a duration: a unit is missing after 1.5 (ms, s, m, h or d)");
  CHECK(Why("1,5m") ==
        "'1,5m' is not a duration: unexpected ',' after 1 (e.g. 30s, 5m, 1h30m or 7d)");
  CHECK(Why("-1s") == "'-1s' is not a duration: a duration cannot be negative");
  CHECK(Why("1h-5m") == "'1h-5m' is not a duration: a duration cannot be negative");
  const std::string expected = "expected a number and a unit (e.g. 30s, 5m, 1h30m or 7d)";
  for (const char* text : {"infs", "inf", "nans", "NaN", "+5s", ".5s", "1e3s", "0x10s", " 5s", "s",
                           "ms", "five seconds", "1.5.5s"}) {
    INFO(text);
    auto d = ParseDuration(text);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().code() == StatusCode::kInvalidArgument);
  }
  CHECK(Why("infs") == "'infs' is not a duration: " + expected);
  CHECK(Why("nan") == "'nan' is not a duration: " + expected);
  CHECK(Why(".5s") == "'.5s' is not a duration: " + expected);
  CHECK(Why("1e3s") == "'1e3s' is not a duration: unknown unit 'e' (ms, s, m, h or d)");
  CHECK(Why("") == "'' is not a duration: nothing given (e.g. 30s, 5m, 1h30m or 7d)");
}

TEST_CASE("duration: unknown units and stray characters are named") {
  CHECK(Why("5x") == "'5x' is not a duration: unknown unit 'x' (ms, s, m, h or d)");
  CHECK(Why("5sec") == "'5sec' is not a duration: unknown unit 'sec' (ms, s, m, h or d)");
  CHECK(Why("5S") == "'5S' is not a duration: unknown unit 'S' (ms, s, m, h or d)");
  CHECK(Why("5us") == "'5us' is not a duration: unknown unit 'us' (ms, s, m, h or d)");
  CHECK(Why("5s ") ==
        "'5s ' is not a duration: expected a number and a unit (e.g. 30s, 5m, 1h30m or 7d)");
  CHECK(Why("5 s") ==
        "'5 s' is not a duration: unexpected ' ' after 5 (e.g. 30s, 5m, 1h30m or 7d)");
}

TEST_CASE("duration: at most 100 years, and nothing overflows on the way") {
  CHECK(*ParseDuration("36500d") == kMaxDuration);
  CHECK(*ParseDuration("36499d24h") == kMaxDuration);
  CHECK(*ParseDuration("36499.5d12h") == kMaxDuration);
  CHECK(Why("36500.5d") ==
        "'36500.5d' is not a duration: longer than the most a duration may "
        "be, 36500d (100 years)");
  CHECK(Why("36499.5d13h") ==
        "'36499.5d13h' is not a duration: longer than the most a duration "
        "may be, 36500d (100 years)");
  const std::string too_long =
      "is not a duration: longer than the most a duration may be, 36500d (100 years)";
  CHECK(Why("36501d") == "'36501d' " + too_long);
  CHECK(Why("36500d1ms") == "'36500d1ms' " + too_long);
  CHECK(Why("9223372036854775807ms") == "'9223372036854775807ms' " + too_long);
  CHECK(Why("9223372036854775808s") == "'9223372036854775808s' " + too_long);
  CHECK(Why("99999999999999999999999999d") == "'99999999999999999999999999d' " + too_long);
  CHECK(Why("106751991167300d") == "'106751991167300d' " + too_long);  // wraps int64 in ms
}

TEST_CASE("duration: a message shows the text bounded and without control characters") {
  std::string long_text(200, '1');
  long_text += "x";
  std::string why = Why(long_text);
  CHECK(why.size() < 200);
  CHECK(why.find("...") != std::string::npos);
  CHECK(Why(std::string("5\ns")).find('\n') == std::string::npos);
}

TEST_CASE("duration: the help text states the grammar the parser takes") {
  for (const char* example : {"500ms", "30s", "1.5m", "7d", "1h30m", "0"}) {
    INFO(example);
    CHECK(std::string(kDurationSyntax).find(example) != std::string::npos);
    CHECK(ParseDuration(example).ok());
  }
}

}  // namespace duration_test
