// Keyset pagination cursors. A cursor is opaque to clients: unpadded
// base64url of "v1:<seq>", where seq is the creation sequence number of the
// last record on the page. The next page holds records with a greater seq,
// so paging while others insert and delete never skips or repeats a record
// that existed throughout (new records always get a greater seq).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cairn::server {

std::string EncodeCursor(int64_t last_seq);

// nullopt for anything EncodeCursor could not have produced.
std::optional<int64_t> DecodeCursor(std::string_view cursor);

// Unpadded base64url (RFC 4648 section 5) over OpenSSL's base64.
std::string Base64UrlEncode(std::string_view bytes);
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace cairn::server
