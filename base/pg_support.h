// What the PostgreSQL users of Cairn share (the state backend and the store
// of `cairn serve`): keeping the connection URL's credentials out of every
// output, and turning libpqxx's exceptions into a Status, so that no
// exception crosses a module boundary. Includes only <pqxx/except>.
#pragma once

#include <pqxx/except>
#include <string>

#include "base/redact.h"
#include "base/status.h"

namespace cairn {

// The password inside a libpq URL ("postgresql://user:pw@host/db",
// "...?password=pw") or keyword string ("password=pw host=..."), or "".
std::string PasswordInUrl(const std::string& url);

// Registers the URL and its password with the redactor.
void RegisterUrlSecrets(const std::string& url);

// Runs `body`, turning every exception into a Status prefixed with
// `where` ("state database (PostgreSQL)") and `what` (the operation).
template <typename F>
auto GuardPostgres(const std::string& where, const char* what, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const pqxx::broken_connection& e) {
    return Status::Unavailable(where + ": " + what + ": connection failed: " + Redact(e.what()));
  } catch (const pqxx::in_doubt_error& e) {
    return Status::Unavailable(
        where + ": " + what +
        ": the connection broke during commit; outcome unknown: " + Redact(e.what()));
  } catch (const std::exception& e) {
    return Status::IOError(where + ": " + what + ": " + Redact(e.what()));
  }
}

}  // namespace cairn
