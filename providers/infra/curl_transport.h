// CurlTransport: HttpTransport over libcurl.
//
// Each thread that sends gets one libcurl easy handle of its own (a
// thread_local, created on first use and reused for every later request of
// that thread, by any CurlTransport), so connections stay alive and are
// reused between requests to the same host. Handles are never shared between
// threads, which is all libcurl asks of threaded code; CURLOPT_NOSIGNAL keeps
// it from using signals for DNS timeouts.
//
// Invariants of every request:
//   - TLS peer and host verification are on; there is no switch to turn them
//     off (`ca_file` may point at another CA bundle, e.g. for a test server);
//   - proxies come from the environment as libcurl reads them
//     (HTTPS_PROXY/https_proxy, HTTP_PROXY, NO_PROXY); nothing here overrides;
//   - only http and https; redirects are not followed (an API answer is final,
//     and following one could carry the Authorization header elsewhere);
//   - TCP_NODELAY is set (see DESIGN.md: delayed ACKs stall keep-alive);
//   - connect timeout and whole-request timeout come from the HttpRequest;
//   - a stop requested on the stop_token aborts the transfer within about a
//     second (libcurl's progress callback cadence when idle) -> Cancelled.
// Response header names are lowercased. A timeout is DeadlineExceeded, a
// cancellation Cancelled, any other transport failure Unavailable; the message
// is libcurl's, which never contains request headers.
//
// Thread-safe.
#pragma once

#include <string>

#include "providers/http_transport.h"

namespace cairn {

class CurlTransport final : public HttpTransport {
 public:
  struct Options {
    std::string ca_file;               // PEM CA bundle; empty: the system's
    std::string user_agent = "cairn";  // unless the request sets User-Agent
  };

  CurlTransport();  // default Options
  explicit CurlTransport(Options options);

  Result<HttpResponse> Send(const HttpRequest& req, std::stop_token stop) override;

 private:
  Options options_;  // immutable after construction
};

// Whether a bearer token may be sent to `endpoint` (a base URL): over
// https, or over plain http to a loopback host (localhost, 127.0.0.0/8,
// ::1), whose traffic never leaves the machine. Plain http elsewhere is
// InvalidArgument unless `allow_insecure_http` (--insecure-http): the token
// would cross the network readable by anyone on the path. The URL is parsed
// by libcurl, as it will be when sent.
Status CheckTokenTransport(const std::string& endpoint, bool allow_insecure_http);

}  // namespace cairn
