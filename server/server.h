// `cairn serve`: the control-plane API server. Boost.Beast over Asio with a
// small fixed pool of I/O threads (no thread per connection), keep-alive,
// TCP_NODELAY on every connection, limits on header size (16 KiB), body
// size (1 MiB), idle and write time and the number of open connections; requests go to Api
// (server/api.h), writes to the ApiStore's group-commit writer, and a LifecycleWorker moves
// records. Graceful shutdown (SIGTERM, SIGINT or Shutdown()): stop accepting, close idle
// connections, finish in-flight requests, flush the store. SIGHUP reloads the tokens
// (ReloadTokens), which is how a token is revoked, and the TLS certificate
// (ReloadCertificate). With tls_cert_file/tls_key_file every connection is
// HTTPS (server/tls.h), everything else the same.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "server/faults.h"
#include "server/token.h"

namespace cairn::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0: any free port
  std::string data_dir = ".cairn/serve";
  // A PostgreSQL URL: the store is that database, shared with any other
  // server given the same (data_dir is then unused). Empty: SQLite in
  // data_dir.
  std::string store_url;
  // The tokens accepted, all of them (project, SHA-256 hex, scope). At
  // start they replace whatever an earlier run stored: a token not listed
  // stops working.
  std::vector<TokenGrant> tokens;
  // Where ReloadTokens (and SIGHUP) reads the new list; empty: no reload.
  std::function<Result<std::vector<TokenGrant>>()> reload_tokens;
  std::chrono::milliseconds provision_delay{2000};
  std::chrono::milliseconds idempotency_retention{std::chrono::hours(24)};
  double rate = 0;  // requests per second per project; 0: no limit
  int64_t burst = 0;
  FaultSpec faults;
  // A connection's next request, headers and body, must have arrived
  // within it, counted from the connection's start or the previous answer;
  // else the connection is closed (--read-timeout).
  // A response must also be written within it (a client that never reads
  // is dropped).
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(60)};
  // Open connections at most; one more is closed as soon as it is accepted
  // (--max-connections).
  size_t max_connections = 4096;
  std::chrono::milliseconds shutdown_grace{std::chrono::seconds(20)};
  // 0: one per core, or four per core (at least 8) on a shared store,
  // whose requests wait for the database.
  size_t io_threads = 0;
  bool handle_signals = true;  // SIGTERM/SIGINT start a graceful shutdown
  // TLS (--tls-cert, --tls-key): both PEM files, or neither (plain HTTP).
  // Read at Start (an error there is Start's) and again by
  // ReloadCertificate.
  std::string tls_cert_file;
  std::string tls_key_file;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  // Opens the store, binds and starts serving; returns once listening.
  Status Start();
  // "HOST:PORT" actually bound (valid after Start).
  std::string BoundAddress() const;
  uint16_t BoundPort() const;
  // Blocks until a shutdown completes.
  void Wait();
  // Starts a graceful shutdown (thread-safe, idempotent).
  void Shutdown();
  // Replaces the accepted tokens with what `reload_tokens` returns, in the
  // store and for every request from now on; on error nothing changes.
  // SIGHUP calls it. Valid after Start.
  Status ReloadTokens();
  // Reads the TLS certificate and key again: connections accepted from
  // now on use them, open ones keep theirs. On error (logged by the SIGHUP
  // handler) the certificate in use stays. SIGHUP calls it when serving
  // TLS. FailedPrecondition when not.
  Status ReloadCertificate();
  // Whether connections are HTTPS.
  bool Tls() const;

  struct Impl;  // implementation detail (server.cc)

 private:
  std::unique_ptr<Impl> impl_;
};

// Parses "RATE:BURST" (e.g. "100:200"; "0" disables). RATE must be a
// finite number above 0 (NaN, infinities, 0:5 and negatives are refused).
Status ParseRateLimit(const std::string& text, double* rate, int64_t* burst);

// Reads a tokens file: one "PROJECT SHA256_HEX [SCOPE]" a line, SCOPE
// `write` (the default) or `read`; blank lines and lines starting with #
// are ignored. A hash given to two projects, or twice with two scopes, is
// an error (naming both lines).
Result<std::vector<TokenGrant>> ReadTokensFile(const std::string& path);

}  // namespace cairn::server
