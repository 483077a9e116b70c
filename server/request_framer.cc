#include "server/request_framer.h"

#include <algorithm>
#include <boost/beast/http.hpp>
#include <cctype>
#include <exception>
#include <vector>

namespace cairn::server {

namespace beast = boost::beast;
namespace http = beast::http;

struct RequestFramer::Parser {
  Parser() {
    p.header_limit(static_cast<std::uint32_t>(kHeaderLimit));
    p.body_limit(kBodyLimit);
  }
  http::request_parser<http::string_body> p;
};

RequestFramer::RequestFramer() : parser_(std::make_unique<Parser>()) {}
RequestFramer::~RequestFramer() = default;

bool RequestFramer::idle() const { return !parser_->p.got_some(); }

void RequestFramer::Fail(int status, std::string code, std::string message) {
  state_ = State::kFailed;
  error_.status = status;
  error_.code = std::move(code);
  error_.message = std::move(message);
  // The fields parsed so far (all of them when the body is too large): the
  // access log and the answer say what they can.
  try {
    const auto& partial = parser_->p.get();
    error_.method = std::string(partial.method_string());
    if (auto it = partial.find("X-Request-ID"); it != partial.end()) {
      error_.client_request_id = std::string(it->value());
    }
  } catch (const std::exception&) {
    // Only what the envelope would echo is lost.
  }
}

namespace {

// The codings a Transfer-Encoding field value lists, lowercased, empty
// elements dropped (RFC 9110 section 5.6.1).
void AppendCodings(beast::string_view value, std::vector<std::string>* out) {
  for (auto& part : http::token_list(value)) {
    std::string coding(part);
    std::transform(coding.begin(), coding.end(), coding.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out->push_back(std::move(coding));
  }
}

}  // namespace

bool RequestFramer::CheckHead() {
  const auto& h = parser_->p.get();
  const bool has_te = h.count(http::field::transfer_encoding) > 0;
  const size_t lengths = h.count(http::field::content_length);
  // A body whose length two fields state, or that two parties may measure
  // differently, is how a request hides another behind it (smuggling).
  if (has_te) {
    if (lengths > 0) {
      Fail(400, "validation_error",
           "Transfer-Encoding and Content-Length together: the body's length is ambiguous");
      return false;
    }
    if (h.version() < 11) {
      Fail(400, "validation_error", "Transfer-Encoding in an HTTP/1.0 request");
      return false;
    }
    std::vector<std::string> codings;
    auto [first, last] = h.equal_range(http::field::transfer_encoding);
    for (auto it = first; it != last; ++it) AppendCodings(it->value(), &codings);
    if (codings != std::vector<std::string>{"chunked"}) {
      Fail(400, "validation_error", "Transfer-Encoding: only chunked is accepted, once and alone");
      return false;
    }
  }
  if (lengths > 1) {
    Fail(400, "validation_error", "Content-Length given more than once");
    return false;
  }
  if (h.version() >= 11 && h.count(http::field::host) != 1) {
    Fail(400, "validation_error", "Host: an HTTP/1.1 request needs exactly one Host header");
    return false;
  }
  return true;
}

size_t RequestFramer::Feed(std::string_view bytes) {
  if (state_ != State::kNeedMore) return 0;
  auto& p = parser_->p;
  size_t used = 0;
  try {
    while (state_ == State::kNeedMore) {
      std::string_view rest = bytes.substr(used);
      // After the head, a chunked body's framing (chunk lines, extensions,
      // trailers) may not take more than what the head left of the header
      // limit: Beast buffers a trailer whole, with no bound of its own.
      size_t budget = rest.size();
      bool bounded = false;
      if (head_checked_ && p.chunked()) {
        budget = kHeaderLimit > head_bytes_ ? kHeaderLimit - head_bytes_ : 0;
        bounded = rest.size() >= budget;
        budget = std::min(budget, rest.size());
      }
      beast::error_code ec;
      size_t n = p.put(boost::asio::const_buffer(rest.data(), budget), ec);
      used += n;
      consumed_ += n;
      if (ec == http::error::need_more || (!ec && n == 0 && !p.is_done())) {
        // Beast, fed a head in pieces, lets it grow past its limit (what
        // it has consumed of the head is not counted again): the head's
        // bytes are counted here, so that how they arrive changes nothing.
        if (!head_checked_ && consumed_ + (rest.size() - n) >= kHeaderLimit) {
          Fail(431, "validation_error", "headers: request headers exceed 16 KiB");
          return used;
        }
        if (bounded && n == 0) {
          Fail(431, "validation_error",
               "headers: request headers and chunked framing (trailers) exceed 16 KiB");
        }
        return used;
      }
      if (ec == http::error::body_limit) {
        Fail(413, "payload_too_large", "request bodies are limited to 1 MiB");
        return used;
      }
      if (ec == http::error::header_limit) {
        Fail(431, "validation_error", "headers: request headers exceed 16 KiB");
        return used;
      }
      if (ec) {
        Fail(400, "validation_error", "malformed HTTP request");
        return used;
      }
      if (!head_checked_ && p.is_header_done()) {
        head_checked_ = true;
        head_bytes_ = consumed_;
        if (head_bytes_ > kHeaderLimit) {
          Fail(431, "validation_error", "headers: request headers exceed 16 KiB");
          return used;
        }
        if (!CheckHead()) return used;
      }
      if (p.is_done()) state_ = State::kComplete;
      if (used == bytes.size()) return used;
    }
  } catch (const std::exception& e) {
    Fail(0, "internal_error", std::string("the HTTP parser threw: ") + e.what());
  }
  return used;
}

void RequestFramer::FeedEof() {
  if (state_ != State::kNeedMore) return;
  // A request cut short is never run: it goes with the connection.
  state_ = State::kClosed;
}

FramedRequest RequestFramer::Take() {
  auto req = parser_->p.release();
  FramedRequest out;
  out.version = req.version();
  // HTTP/1.0 has no persistent connections here, `Connection: keep-alive`
  // or not: one request, one answer, closed (docs/api.md).
  out.keep_alive = req.version() >= 11 && req.keep_alive();
  ApiRequest& ar = out.request;
  ar.method = std::string(req.method_string());
  ar.target = std::string(req.target());
  auto opt = [&](auto name) -> std::optional<std::string> {
    auto it = req.find(name);
    if (it == req.end()) return std::nullopt;
    return std::string(it->value());
  };
  ar.authorization = opt(http::field::authorization);
  ar.content_type = opt(http::field::content_type);
  ar.idempotency_key = opt("Idempotency-Key");
  ar.client_request_id = opt("X-Request-ID");
  ar.body = std::move(req.body());
  parser_ = std::make_unique<Parser>();
  state_ = State::kNeedMore;
  error_ = {};
  head_checked_ = false;
  head_bytes_ = 0;
  consumed_ = 0;
  return out;
}

}  // namespace cairn::server
