// Durations written by people (flags of the engine's commands and of `cairn
// serve`, the server's fault spec): one grammar everywhere.
//
//   duration := "0" | part+
//   part     := digits ["." digits] unit
//   unit     := "d" | "h" | "m" | "s" | "ms"
//
// The parts of one duration go from the largest unit down, each unit at most
// once: 0, 500ms, 30s, 5m, 1h30m, 7d, 1d12h. A part may have a decimal
// fraction (1.5m is 90s, 0.25s is 250ms) as long as the whole is a whole
// number of milliseconds; it is computed exactly, in integers. Refused, each
// with a message saying why: nothing, a sign, a number without its unit
// (other than 0), a fraction finer than a millisecond (1.5ms), an exponent,
// inf or nan, an unknown unit, units out of order or repeated, and anything
// longer than kMaxDuration (so that adding one to a clock reading never
// overflows).
#pragma once

#include <chrono>
#include <string_view>

#include "base/status.h"

namespace cairn {

// 100 years: far beyond any timeout or retention, far below what
// std::chrono's nanosecond clocks can add without overflowing.
inline constexpr std::chrono::milliseconds kMaxDuration = std::chrono::hours(24 * 36500);

// The grammar in a few words, for the help text of every flag that takes a
// duration.
inline constexpr std::string_view kDurationSyntax =
    "a number and a unit, ms, s, m, h or d (500ms, 30s, 1.5m, 7d), or several from the "
    "largest unit down (1h30m); 0 alone for none";

// The duration `text` spells, or InvalidArgument naming the text and what is
// wrong with it.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

}  // namespace cairn
