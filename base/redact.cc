#include "base/redact.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "base/mutex.h"

namespace cairn {
namespace {

constexpr std::string_view kTokenPrefix = "cairn_";
constexpr size_t kMinTokenBody = 20;
constexpr size_t kMinSecretLength = 6;

// The secrets registered so far: read on every log line, written rarely.
struct SecretRegistry {
  SharedMutex mu;
  std::vector<std::string> secrets GUARDED_BY(mu);
};

SecretRegistry& Registry() {
  static SecretRegistry registry;
  return registry;
}

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// Length of the token starting at `pos` (which holds the prefix), or 0.
size_t TokenLengthAt(std::string_view text, size_t pos) {
  if (pos > 0 && IsTokenChar(text[pos - 1])) return 0;  // inside a longer word
  size_t end = pos + kTokenPrefix.size();
  while (end < text.size() && IsTokenChar(text[end])) ++end;
  return (end - pos - kTokenPrefix.size() >= kMinTokenBody) ? end - pos : 0;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

void RegisterSecret(std::string_view secret) {
  if (secret.size() < kMinSecretLength) return;
  SecretRegistry& r = Registry();
  WriterMutexLock lock(r.mu);
  auto& s = r.secrets;
  if (std::find(s.begin(), s.end(), secret) == s.end()) s.emplace_back(secret);
  // Longest first, so a secret containing another is replaced whole.
  std::sort(s.begin(), s.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
}

void ClearSecretsForTesting() {
  SecretRegistry& r = Registry();
  WriterMutexLock lock(r.mu);
  r.secrets.clear();
}

std::string Redact(std::string_view text) {
  std::string out(text);
  {
    SecretRegistry& r = Registry();
    ReaderMutexLock lock(r.mu);
    for (const auto& secret : r.secrets) {
      for (size_t pos = out.find(secret); pos != std::string::npos;
           pos = out.find(secret, pos + kRedacted.size())) {
        out.replace(pos, secret.size(), kRedacted);
      }
    }
  }
  // "Bearer <credential>": the credential is whatever follows up to whitespace
  // or a quote, but for the words prose puts there ("invalid bearer token"
  // became "invalid bearer [REDACTED]", which reads like a leak).
  constexpr std::string_view kBearer = "bearer ";
  constexpr std::string_view kProse[] = {"token", "tokens",         "credential", "credentials",
                                         "auth",  "authentication", "scheme",     "header"};
  // Only a 'b' or 'B' can begin it: the scan jumps from one to the next (a
  // comparison at every byte was 0.16 s of printing a plan of 100,000).
  auto next_b = [&](size_t from) {
    while (from < out.size() && (out[from] | 0x20) != 'b') ++from;
    return from;
  };
  for (size_t i = next_b(0); i + kBearer.size() <= out.size(); i = next_b(i + 1)) {
    if (!EqualsIgnoreCase(std::string_view(out).substr(i, kBearer.size()), kBearer)) continue;
    size_t start = i + kBearer.size();
    while (start < out.size() && out[start] == ' ') ++start;
    size_t end = start;
    while (end < out.size() && !std::isspace(static_cast<unsigned char>(out[end])) &&
           out[end] != '"' && out[end] != '\'') {
      ++end;
    }
    std::string_view word = std::string_view(out).substr(start, end - start);
    std::string_view bare = word;
    while (!bare.empty() && std::ispunct(static_cast<unsigned char>(bare.back()))) {
      bare.remove_suffix(1);
    }
    bool prose = std::any_of(std::begin(kProse), std::end(kProse),
                             [&](std::string_view p) { return EqualsIgnoreCase(bare, p); });
    if (end > start && word != kRedacted && !prose) out.replace(start, end - start, kRedacted);
    i = start;
  }
  for (size_t pos = out.find(kTokenPrefix); pos != std::string::npos;
       pos = out.find(kTokenPrefix, pos + 1)) {
    if (size_t len = TokenLengthAt(out, pos)) out.replace(pos, len, kRedacted);
  }
  return out;
}

bool LooksLikeApiToken(std::string_view text) {
  for (size_t pos = text.find(kTokenPrefix); pos != std::string_view::npos;
       pos = text.find(kTokenPrefix, pos + 1)) {
    if (TokenLengthAt(text, pos)) return true;
  }
  return false;
}

}  // namespace cairn
