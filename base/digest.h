// SHA-256 of bytes, as lowercase hex: what the tokens file stores, what a
// saved plan records of each manifest, what names a write-only value in
// the journal. One implementation, on OpenSSL.
#pragma once

#include <string>
#include <string_view>

namespace cairn {

// The 64 hex digits of SHA-256(`data`).
std::string Sha256Hex(std::string_view data);

}  // namespace cairn
