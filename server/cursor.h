// Keyset pagination cursors. A cursor is opaque to clients: the unpadded
// base64url of the 16 bytes of the id of the last record on the page. The
// next page holds the records created after that one, found by its
// creation sequence number, which the server looks up in the requesting
// project (api.cc): so paging while others insert and delete never skips or
// repeats a record that existed throughout (new records always get a
// greater seq, and deleted ones keep their row), a cursor says nothing a
// project has not seen (the seq counts every project's creations), and one
// from another project or collection names no record and is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cairn::server {

// `record_id`: 32 lowercase hex digits (server/record_ids.h).
std::string EncodeCursor(std::string_view record_id);

// The record id, or nullopt for anything EncodeCursor could not have
// produced.
std::optional<std::string> DecodeCursor(std::string_view cursor);

// Unpadded base64url (RFC 4648 section 5) over OpenSSL's base64.
std::string Base64UrlEncode(std::string_view bytes);
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace cairn::server
