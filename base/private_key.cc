#include "base/private_key.h"

#include <vector>

namespace cairn {
namespace {

constexpr std::string_view kBegin = "-----BEGIN";
constexpr std::string_view kPrivate = "PRIVATE KEY";
constexpr std::string_view kPutty = "PuTTY-User-Key-File";

// Column (0-based) of a private key marker in `line`, with its width.
std::pair<size_t, size_t> MarkerIn(std::string_view line) {
  size_t pos = 0;
  while ((pos = line.find(kBegin, pos)) != std::string_view::npos) {
    size_t end = line.find("-----", pos + kBegin.size());
    if (end == std::string_view::npos) break;
    std::string_view label = line.substr(pos + kBegin.size(), end - pos - kBegin.size());
    if (label.find(kPrivate) != std::string_view::npos) return {pos, end + 5 - pos};
    pos = end;
  }
  if (size_t p = line.find(kPutty); p != std::string_view::npos) return {p, kPutty.size()};
  return {std::string_view::npos, 0};
}

// Calls `fn(line, last)` for each line of `text` (split at '\n', the last
// one possibly empty) until it returns false.
template <typename Fn>
void ForEachLine(std::string_view text, Fn fn) {
  size_t start = 0;
  for (;;) {
    size_t nl = text.find('\n', start);
    const bool last = nl == std::string_view::npos;
    if (!fn(text.substr(start, last ? std::string_view::npos : nl - start), last) || last) return;
    start = nl + 1;
  }
}

}  // namespace

PrivateKeyMatch FindPrivateKey(std::string_view text) {
  PrivateKeyMatch m;
  // Fast path: most text holds no marker at all.
  if (text.find(kPrivate) == std::string_view::npos &&
      text.find(kPutty) == std::string_view::npos) {
    return m;
  }
  int line_no = 0;
  ForEachLine(text, [&](std::string_view line, bool) {
    ++line_no;
    auto [col, len] = MarkerIn(line);
    if (col == std::string_view::npos) return true;
    m.line = line_no;
    m.column = static_cast<int>(col) + 1;
    m.length = static_cast<int>(len);
    return false;
  });
  return m;
}

std::string RedactPrivateKeys(std::string_view text) {
  if (!FindPrivateKey(text).found()) return std::string(text);
  std::string out;
  bool inside = false;
  ForEachLine(text, [&](std::string_view line, bool last) {
    auto [col, len] = MarkerIn(line);
    if (col != std::string_view::npos) {
      out += std::string(line.substr(0, col + len)) + " [REDACTED]";
      // A one-line (escaped) key ends on this line; an armoured one continues.
      inside = line.find("-----END", col + len) == std::string_view::npos &&
               line.find("\\n", col + len) == std::string_view::npos &&
               line.substr(col).find(kPutty) != 0;
      if (line.substr(col).find(kPutty) == 0) inside = true;
    } else if (inside) {
      out += "[REDACTED]";
      if (line.find("-----END") != std::string_view::npos ||
          line.find("Private-MAC") != std::string_view::npos) {
        inside = false;
      }
    } else {
      out += line;
    }
    if (!last) out += '\n';
    return true;
  });
  return out;
}

}  // namespace cairn
