// libFuzzer target: the raw bytes of one client connection of `cairn serve`
// (requests, pipelines, chunked bodies, trailers, garbage) through
// server::RequestFramer, the Beast parser and framing rules Session runs
// (server/request_framer.h), fed the way Session feeds it: what arrived and
// was not consumed, again with the next bytes appended, then end of stream.
//
// Input framing: the first byte says how the rest arrives: 0 all at once,
// N > 0 in reads of N * 61 bytes (an odd step, so splits fall everywhere);
// the rest are the connection's bytes, unchanged.
//
// The oracle, beyond "no crash, leak or hang":
//   - nothing throws out of the parser (an error of status 0 is one that
//     did: item 1 of the HTTP framing issue, a trailer field of 64 KiB);
//   - every refusal is 400, 413 or 431 with a message;
//   - how the bytes are split changes no request framed: they are those of
//     feeding the bytes all at once;
//   - no request framed carries more than the 1 MiB body limit, and none
//     follows a refusal (the connection closes there).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "server/request_framer.h"

namespace {

using cairn::server::RequestFramer;
using State = RequestFramer::State;

[[noreturn]] void Fail(const char* what, std::string_view input) {
  std::fprintf(stderr, "http_framing_fuzz: %s\n  input (first 400 bytes): %s\n", what,
               std::string(input.substr(0, 400)).c_str());
  std::abort();
}

// What a connection made of: one line per request framed, then the end.
std::string Frame(std::string_view bytes, size_t step) {
  RequestFramer f;
  std::string pending, trace;
  size_t at = 0;
  while (true) {
    if (f.state() == State::kComplete) {
      auto r = f.Take();
      if (r.request.body.size() > cairn::server::kBodyLimit) Fail("a body over the limit", bytes);
      trace += r.request.method + " " + r.request.target + " v" + std::to_string(r.version) +
               (r.keep_alive ? " keep" : " close") +
               " body=" + std::to_string(r.request.body.size()) + "\n";
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
    pending.append(bytes.substr(at, n));
    at += n;
  }
  if (f.state() == State::kFailed) {
    const auto& e = f.error();
    if (e.status == 0) Fail(("the parser threw: " + e.message).c_str(), bytes);
    if ((e.status != 400 && e.status != 413 && e.status != 431) || e.message.empty() ||
        e.code.empty()) {
      Fail("a refusal that is not 400, 413 or 431 with a message", bytes);
    }
    // How the stream ended is not traced: Beast reports a malformed or
    // oversized head that never completes only if enough of it arrived at
    // once (400 or 431), else the stream just ends (closed); either way
    // the connection ends with nothing run (found by this target).
  } else if (f.state() != State::kClosed) {
    Fail("the stream ended in neither a refusal nor a close", bytes);
  }
  return trace;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t step = data[0] == 0 ? bytes.size() + 1 : size_t{data[0]} * 61;
  std::string whole = Frame(bytes, bytes.size() + 1);
  if (step <= bytes.size() && Frame(bytes, step) != whole) {
    Fail("splitting the bytes changed what was framed", bytes);
  }
  return 0;
}
