// The bytes of one client connection, turned into requests: Boost.Beast's
// request parser configured as `cairn serve` runs it (headers at most
// 16 KiB, bodies at most 1 MiB), plus the framing rules Beast leaves to its
// caller (RFC 9112 sections 3.2 and 6.3), so that Session (server.cc) and
// the fuzz target tests/fuzz/http_framing_fuzz.cc run exactly this code.
//
// Rules beyond Beast's own, each answered 400 (431 for sizes) with the
// connection closed, since the message's length cannot be trusted:
// - Transfer-Encoding other than exactly `chunked` (one coding, final);
//   Transfer-Encoding on an HTTP/1.0 request; Transfer-Encoding together
//   with Content-Length; more than one Content-Length.
// - An HTTP/1.1 request without exactly one Host.
// - Chunked framing (chunk lines, extensions, trailers) counts toward the
//   16 KiB header limit: Beast bounds neither, and a trailer field of
//   64 KiB makes it throw.
// No exception leaves Feed: one from Beast (a bug) becomes an error with
// status 0, which closes the connection without an answer.
// Not thread-safe: one framer per connection.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server/api.h"

namespace cairn::server {

inline constexpr size_t kHeaderLimit = 16 * 1024;
inline constexpr size_t kBodyLimit = 1024 * 1024;

// One complete request.
struct FramedRequest {
  ApiRequest request;
  unsigned version = 11;  // 10 for HTTP/1.0, 11 for HTTP/1.1
  // False for HTTP/1.0 (whatever its Connection header says) and for
  // `Connection: close`.
  bool keep_alive = true;
};

// Why the bytes are not a request the server will run.
struct FramingError {
  // 400, 413 or 431: answer in the error envelope, then close. 0: an
  // exception from the parser (a bug): close without answering.
  int status = 400;
  std::string code;     // the envelope's error code
  std::string message;  // the envelope's message (or the exception's text)
  // What the request's head said, if it got that far (for the access log
  // and to echo X-Request-ID).
  std::string method;
  std::optional<std::string> client_request_id;
};

class RequestFramer {
 public:
  enum class State {
    kNeedMore,  // feed more bytes
    kComplete,  // a request is ready: Take() it
    kFailed,    // error() says why; the connection must close
    kClosed,    // the client ended the stream between or inside requests
  };

  RequestFramer();
  ~RequestFramer();
  RequestFramer(const RequestFramer&) = delete;
  RequestFramer& operator=(const RequestFramer&) = delete;

  // Parses what it can of `bytes` (everything received and not yet
  // consumed) and returns how many it consumed; the rest must be fed again,
  // with what arrives next appended. Only in state kNeedMore.
  size_t Feed(std::string_view bytes);
  // The client ended its side of the stream.
  void FeedEof();
  State state() const { return state_; }
  // Nothing of a request has arrived since the last Take() (or the start).
  bool idle() const;
  // The request (state kComplete); the framer then waits for the next one.
  FramedRequest Take();
  // Valid in state kFailed.
  const FramingError& error() const { return error_; }

 private:
  struct Parser;
  void Fail(int status, std::string code, std::string message);
  // The checks on a complete head (see the rules above); false: failed.
  bool CheckHead();

  std::unique_ptr<Parser> parser_;
  State state_ = State::kNeedMore;
  FramingError error_;
  bool head_checked_ = false;
  size_t head_bytes_ = 0;  // bytes of the head, counted toward kHeaderLimit
  size_t consumed_ = 0;    // bytes of this request consumed so far
};

}  // namespace cairn::server
