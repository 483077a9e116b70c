// Secret redaction. Every log line (through the sink installed by
// base/log.h) and every rendered error message passes through Redact(), so
// an API token can never be printed, whether it was registered as a secret or
// merely looks like one.
//
// Cairn API tokens have the shape "cairn_" followed by at least 20 characters
// of [A-Za-z0-9_-]; `cairn serve` issues tokens of that shape.
#pragma once

#include <string>
#include <string_view>

namespace cairn {

inline constexpr std::string_view kRedacted = "[REDACTED]";

// Registers a secret value (e.g. the token read from CAIRN_TOKEN). Values
// shorter than 6 characters are ignored: redacting them would mangle ordinary
// text and they are not credible secrets. Thread-safe.
void RegisterSecret(std::string_view secret);

// Forgets every registered secret (tests only).
void ClearSecretsForTesting();

// Returns `text` with registered secrets, "Bearer <credential>" and strings
// that look like Cairn API tokens replaced by [REDACTED]. Thread-safe.
std::string Redact(std::string_view text);

// True when `text` contains something shaped like a Cairn API token.
bool LooksLikeApiToken(std::string_view text);

}  // namespace cairn
