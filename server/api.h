// The API of `cairn serve`, independent of HTTP plumbing: one request in,
// one response out (possibly later, after the store's group commit).
// Pipeline: route (404/405) -> auth (401) -> rate limit (429) -> injected
// faults -> content type (415) -> idempotency key (400) -> JSON and private
// key checks (400) -> idempotency (replay / 409) -> validation (400) ->
// handler -> store. Which steps a route takes (auth, faults, body,
// idempotency rule) and its handler are one row of the route table in
// api.cc (Api::Impl::RouteTable). docs/api.md describes every decision.
// Thread-safe: Handle() may be called from any number of threads.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/token.h"

namespace cairn {
class SchemaRegistry;
}

namespace cairn::server {

class ApiStore;
class FaultInjector;
class RateLimiter;
class Metrics;

struct ApiRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query
  std::optional<std::string> authorization;
  std::optional<std::string> content_type;
  std::optional<std::string> idempotency_key;
  std::optional<std::string> client_request_id;  // X-Request-ID as sent
  std::string body;
};

struct ApiResponse {
  int status = 200;
  // Every header but Content-Length, Date, Server and Connection.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool drop = false;       // close the connection without answering (fault injection)
  std::string request_id;  // also in the X-Request-ID header
  std::string route;       // route pattern, for the access log
};

struct ApiOptions {
  std::chrono::milliseconds provision_delay{2000};
  std::chrono::milliseconds idempotency_retention{std::chrono::hours(24)};
  // SHA-256 hex of a token -> its grant: the tokens accepted at start.
  std::unordered_map<std::string, TokenGrant> tokens;
  // The kinds' schemas (EmbeddedSchemas()): every limit on a field's value.
  // Required.
  std::shared_ptr<const SchemaRegistry> schemas;
};

class Api {
 public:
  using Done = std::function<void(ApiResponse)>;
  Api(ApiStore* store, Metrics* metrics, FaultInjector* faults, RateLimiter* limiter,
      ApiOptions options);
  ~Api();
  // Calls `done` exactly once, on this thread or on the store's writer thread.
  void Handle(ApiRequest req, Done done);
  // Replaces the accepted tokens (SHA-256 hex -> grant) at once: a request
  // authenticated after this returns sees only the new set.
  void SetTokens(std::unordered_map<std::string, TokenGrant> tokens);

  // Every route the router answers, as {pattern, methods}:
  // {"/api/v1/compute/{id}", "GET, HEAD, PATCH, DELETE"}, ... (read from
  // the route table itself, so a new route shows here).
  static std::vector<std::pair<std::string, std::string>> Routes();

  // An error response in the standard envelope (used by the HTTP layer for
  // errors found before a request is complete: 400, 413, 431).
  static ApiResponse Error(int status, std::string_view code, std::string_view message,
                           const std::string& request_id);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn::server
