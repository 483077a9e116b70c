#include "base/duration.h"

#include <charconv>
#include <cstdint>
#include <string>

namespace cairn {
namespace {

constexpr std::string_view kExamples = "e.g. 30s, 5m, 1h30m or 7d";

// The text as a message shows it: bounded, and without control characters.
std::string Shown(std::string_view text) {
  constexpr size_t kLimit = 64;
  std::string out;
  for (char c : text.substr(0, kLimit)) {
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  }
  if (text.size() > kLimit) out += "...";
  return out;
}

Status Invalid(std::string_view text, std::string_view why) {
  return Status::InvalidArgument("'" + Shown(text) + "' is not a duration: " + std::string(why));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

struct Unit {
  std::string_view name;
  int64_t ms;
  int rank;  // larger units first: a later part needs a smaller rank
};

constexpr Unit kUnits[] = {
    {"d", 86'400'000, 4}, {"h", 3'600'000, 3}, {"m", 60'000, 2}, {"s", 1000, 1}, {"ms", 1, 0}};

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  if (text.empty()) return Invalid(text, "nothing given (" + std::string(kExamples) + ")");
  const int64_t max_ms = kMaxDuration.count();
  int64_t total = 0;
  int previous_rank = 5;  // above every unit's
  size_t pos = 0;
  while (pos < text.size()) {
    const char c = text[pos];
    if (c == '-') return Invalid(text, "a duration cannot be negative");
    if (!IsDigit(c)) {
      return Invalid(text, "expected a number and a unit (" + std::string(kExamples) + ")");
    }
    const size_t number_start = pos;
    int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), n);
    pos = end - text.data();
    if (ec == std::errc::result_out_of_range) {
      while (pos < text.size() && IsDigit(text[pos])) ++pos;
      return Invalid(text, "longer than the most a duration may be, 36500d (100 years)");
    }
    // A decimal fraction: its digits, trailing zeros dropped (1.50m is 1.5m).
    std::string_view fraction;
    if (pos < text.size() && text[pos] == '.') {
      size_t digits_end = pos + 1;
      while (digits_end < text.size() && IsDigit(text[digits_end])) ++digits_end;
      if (digits_end == pos + 1) {
        return Invalid(text, "a digit must follow the point (" + std::string(kExamples) + ")");
      }
      fraction = text.substr(pos + 1, digits_end - pos - 1);
      while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
      pos = digits_end;
    }
    if (pos == text.size()) {
      // "0" alone needs no unit: nothing is nothing in any unit.
      if (n == 0 && fraction.empty() && total == 0 && previous_rank == 5) {
        return std::chrono::milliseconds(0);
      }
      return Invalid(text, "a unit is missing after " + Shown(text.substr(number_start)) +
                               " (ms, s, m, h or d)");
    }
    size_t unit_end = pos;
    while (unit_end < text.size() && IsLetter(text[unit_end])) ++unit_end;
    std::string_view name = text.substr(pos, unit_end - pos);
    if (name.empty()) {
      return Invalid(text, "unexpected '" + Shown(text.substr(pos, 1)) + "' after " +
                               Shown(text.substr(number_start, pos - number_start)) + " (" +
                               std::string(kExamples) + ")");
    }
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (u.name == name) unit = &u;
    }
    if (unit == nullptr) {
      return Invalid(text, "unknown unit '" + Shown(name) + "' (ms, s, m, h or d)");
    }
    if (unit->rank >= previous_rank) {
      return Invalid(text,
                     "its parts go from the largest unit down, each unit once (1h30m, not "
                     "30m1h)");
    }
    previous_rank = unit->rank;
    // The fraction's milliseconds, exactly: digits * unit / 10^digits must be
    // whole. A unit is at most 2^10 * 3^3 * 5^5 ms (a day), so a fraction of
    // more than 10 digits (its last not 0) never is, and one of at most 10
    // digits times the unit fits in 64 bits.
    int64_t fraction_ms = 0;
    if (!fraction.empty()) {
      const std::string finer =
          "a fraction finer than a millisecond (0.25s is 250ms; 0.0001s and 1.5ms are not "
          "whole milliseconds)";
      if (fraction.size() > 10) return Invalid(text, finer);
      int64_t digits = 0;
      int64_t scale = 1;
      for (char d : fraction) {
        digits = digits * 10 + (d - '0');
        scale *= 10;
      }
      if (digits * unit->ms % scale != 0) return Invalid(text, finer);
      fraction_ms = digits * unit->ms / scale;
    }
    if (n > (max_ms - total) / unit->ms || n * unit->ms > max_ms - total - fraction_ms) {
      return Invalid(text, "longer than the most a duration may be, 36500d (100 years)");
    }
    total += n * unit->ms + fraction_ms;
    pos = unit_end;
  }
  return std::chrono::milliseconds(total);
}

}  // namespace cairn
