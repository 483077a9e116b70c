// The HTTP side of `cairn watch --listen ADDR`: GET requests only, answered
// by a handler from the path (Beast over one thread of its own; a slow or
// idle client is cut off after 10 s). Serves the status page, the status
// document and /metrics: small answers to a few scrapers and browsers.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace cairn::cli {

struct WatchHttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class WatchHttpServer {
 public:
  // The path of a GET (query string removed) to its answer; called on the
  // server's thread.
  using Handler = std::function<WatchHttpReply(const std::string& path)>;
  // Listens on `listen` ("HOST:PORT", "[::1]:PORT"; port 0 picks one):
  // InvalidArgument for an address that is not one, Unavailable when it
  // cannot be bound.
  static Result<std::unique_ptr<WatchHttpServer>> Start(const std::string& listen, Handler handler);
  ~WatchHttpServer();
  WatchHttpServer(const WatchHttpServer&) = delete;
  WatchHttpServer& operator=(const WatchHttpServer&) = delete;
  // "HOST:PORT" as bound (the port chosen, when 0 was asked).
  const std::string& address() const;

 private:
  struct Impl;
  explicit WatchHttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn::cli
