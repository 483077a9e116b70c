// Checks of flag values for the CLI11 options of the commands, written as
// the rest of Cairn's messages are ("--parallelism must be a whole number
// from 1 to 256"), and described by the option's own help text: CLI11's
// validators print "INT:INT in [1 - 256]" beside the option in --help.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <string>

namespace cairn::cli {

// A whole number from `lo` to `hi`; no description in --help (say the range
// in the option's help text).
inline CLI::Validator WholeNumberIn(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& value) -> std::string {
        long long n = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec == std::errc() && end == value.data() + value.size() && n >= lo && n <= hi) {
          return "";
        }
        return "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
               ", not \"" + value + "\"";
      },
      "");
}

}  // namespace cairn::cli
