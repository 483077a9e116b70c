// "Did you mean" suggestions for misspelt names (kinds, fields, resources,
// attributes): the closest candidate by edit distance, if close enough.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// The candidate closest to `word` (Damerau-Levenshtein with adjacent
// transpositions), when its distance is at most max(1, |word| / 3); ties go
// to the earlier candidate.
std::optional<std::string> SuggestName(std::string_view word,
                                       const std::vector<std::string>& candidates);

// `did you mean "x"?`, or "" when there is no suggestion.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace cairn
