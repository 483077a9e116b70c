// RequestFramer: the bytes of a connection into requests, fed whole or a
// byte at a time, with the framing rules Beast leaves to its caller.
#include "server/request_framer.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace request_framer_test {  // one namespace per test file: see tests/CMakeLists.txt

using cairn::server::FramedRequest;
using cairn::server::RequestFramer;
using State = RequestFramer::State;

namespace {

// Feeds `bytes` in pieces of `step` the way Session does (unconsumed bytes
// are fed again with what follows); returns the requests framed and the
// final state, with the error's status in `*status`.
State Run(const std::string& bytes, size_t step, std::vector<FramedRequest>* out,
          int* status = nullptr) {
  RequestFramer f;
  std::string pending;
  size_t at = 0;
  while (true) {
    if (f.state() == State::kComplete) {
      out->push_back(f.Take());
      continue;
    }
    if (f.state() != State::kNeedMore) break;
    if (!pending.empty()) {
      pending.erase(0, f.Feed(pending));
      if (f.state() != State::kNeedMore) continue;
    }
    if (at == bytes.size()) {
      f.FeedEof();
      break;
    }
    size_t n = std::min(step, bytes.size() - at);
    pending += bytes.substr(at, n);
    at += n;
  }
  if (status) *status = f.state() == State::kFailed ? f.error().status : -1;
  return f.state();
}

std::string Chunked(const std::string& trailer) {
  return "POST /v1/instances HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
         "1\r\n \r\n0\r\n" +
         trailer + "\r\n";
}

}  // namespace

TEST_CASE("framer: pipelined requests, whole or a byte at a time") {
  const std::string two =
      "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
      "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nX-Request-ID: r1\r\n\r\nabc";
  for (size_t step : {size_t{1}, size_t{7}, two.size()}) {
    std::vector<FramedRequest> got;
    CHECK(Run(two, step, &got) == State::kClosed);
    REQUIRE(got.size() == 2);
    CHECK(got[0].request.target == "/a");
    CHECK(got[1].request.method == "POST");
    CHECK(got[1].request.body == "abc");
    CHECK(got[1].request.client_request_id == "r1");
  }
}

TEST_CASE("framer: trailers count toward the header limit, and no field size makes it throw") {
  for (size_t size : {size_t{16400}, size_t{65534}, size_t{70000}}) {
    for (size_t step : {size_t{1000}, size_t{1 << 20}}) {
      std::vector<FramedRequest> got;
      int status = 0;
      INFO(size << " bytes fed " << step << " at a time");
      CHECK(Run(Chunked("X-T: " + std::string(size, 'a') + "\r\n"), step, &got, &status) ==
            State::kFailed);
      CHECK(status == 431);
      CHECK(got.empty());
    }
  }
  std::vector<FramedRequest> got;
  CHECK(Run(Chunked("X-T: small\r\n"), 3, &got) == State::kClosed);
  REQUIRE(got.size() == 1);
  CHECK(got[0].request.body == " ");
}

TEST_CASE("framer: ambiguous lengths and missing Host are 400") {
  const std::string tail = "\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n";
  for (std::string fields :
       {"Host: h\r\nTransfer-Encoding: gzip\r\n", "Host: h\r\nTransfer-Encoding: identity\r\n",
        "Host: h\r\nTransfer-Encoding: chunked, identity\r\n",
        "Host: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        "Host: h\r\nTransfer-Encoding: xchunked\r\nContent-Length: 0\r\n",
        "Host: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n",
        "Host: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n", "", "Host: a\r\nHost: b\r\n"}) {
    std::vector<FramedRequest> got;
    int status = 0;
    INFO(fields);
    CHECK(Run("POST /x HTTP/1.1\r\n" + fields + tail, 1 << 20, &got, &status) == State::kFailed);
    CHECK(status == 400);
    CHECK(got.empty());
  }
  std::vector<FramedRequest> got;
  int status = 0;
  CHECK(Run("POST /x HTTP/1.0\r\nTransfer-Encoding: chunked" + tail, 1 << 20, &got, &status) ==
        State::kFailed);
  CHECK(status == 400);
  CHECK(Run("GET /x HTTP/1.0\r\n\r\n", 1 << 20, &got) == State::kClosed);
  CHECK(got.size() == 1);
}

TEST_CASE("framer: a head past 16 KiB is 431 however it arrives") {
  std::string head = "GET /a HTTP/1.1\r\nHost: h\r\n";
  while (head.size() < 16700) head += "X-F: " + std::string(60, 'v') + "\r\n";
  head += "\r\n";
  // Fed to Beast in pieces, such a head was accepted (found by
  // http_framing_fuzz); whole, it was 431.
  for (size_t step : {size_t{1}, size_t{244}, size_t{4096}, head.size()}) {
    std::vector<FramedRequest> got;
    int status = 0;
    INFO("fed " << step << " at a time");
    CHECK(Run(head, step, &got, &status) == State::kFailed);
    CHECK(status == 431);
    CHECK(got.empty());
  }
}

}  // namespace request_framer_test
