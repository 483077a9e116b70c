// libFuzzer target: the whole request path of `cairn serve` below HTTP
// parsing, server::Api::Handle, wired as server/server.cc wires it (a real
// ApiStore in a temporary directory, Metrics, a FaultInjector without faults, a
// RateLimiter that is on but generous) and driven through authentication,
// rate limiting, content type, idempotency, JSON and private key checks,
// validation, the handlers and the store's group commit.
//
// Input framing (seeds in tests/fuzz/seeds/server_api/): up to eight
// requests separated by a line "--next--"; each is
//
//   METHOD TARGET
//   Header-Name: value          (any number; the ones Api reads are
//   ...                          Authorization, Content-Type,
//                                Idempotency-Key and X-Request-ID)
//   <empty line>
//   body (everything up to the next separator)
//
// "{id}" anywhere in a request stands for the id of the resource the last
// successful create of the same input made (its Location's last segment),
// so one input can create, read, patch and delete the same record; "{token}"
// is a valid bearer token of project "fuzz", "{other}" one of "other".
//
// The oracle, beyond "no crash, leak or hang": `done` is called exactly once
// per request; no request gets a 5xx (no faults are injected and the store
// is healthy, so a 500 is an exception a handler let escape); every error
// is the JSON envelope {"error": {"code", "message", ...}} and every
// response carries X-Request-ID; a 2xx JSON body is valid JSON.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/schema/schema_registry.h"
#include "base/value.h"
#include "server/api.h"
#include "server/api_store.h"
#include "server/faults.h"
#include "server/metrics.h"
#include "server/rate_limiter.h"
#include "server/sqlite_api_store.h"
#include "server/token.h"

namespace {

using cairn::server::ApiRequest;
using cairn::server::ApiResponse;

constexpr const char* kToken = "cairn_fuzz_token_0123456789abcdefghijklmnopq";
constexpr const char* kOtherToken = "cairn_fuzz_other_0123456789abcdefghijklmnopq";
constexpr const char* kReadToken = "cairn_fuzz_read_0123456789abcdefghijklmnopqr";
constexpr size_t kMaxRequests = 8;

[[noreturn]] void Fail(const std::string& what, const ApiRequest& req, const ApiResponse* res) {
  std::fprintf(stderr, "server_api_fuzz: %s\n  request: %s %s\n", what.c_str(),
               req.method.substr(0, 40).c_str(), req.target.substr(0, 200).c_str());
  if (res) {
    std::fprintf(stderr, "  response: %d %s\n", res->status, res->body.substr(0, 500).c_str());
  }
  std::abort();
}

// The server's parts, made once and kept for the whole run (as a server
// keeps them across requests); the data directory is removed at exit.
struct Harness {
  std::string dir;
  std::unique_ptr<cairn::server::ApiStore> store;
  cairn::server::Metrics metrics;
  std::unique_ptr<cairn::server::FaultInjector> faults;
  std::unique_ptr<cairn::server::RateLimiter> limiter;
  std::unique_ptr<cairn::server::Api> api;

  Harness() {
    spdlog::set_level(spdlog::level::warn);
    // tmpfs when there is one: the store fsyncs every batch.
    std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string templ = base + "/cairn-server-fuzz-XXXXXX";
    if (!mkdtemp(templ.data())) std::abort();
    dir = templ;
    auto s = cairn::server::SqliteApiStore::Open(dir + "/data", {});
    if (!s.ok()) {
      std::fprintf(stderr, "store: %s\n", s.status().ToString().c_str());
      std::abort();
    }
    store = std::move(*s);
    auto schemas = cairn::SchemaRegistry::Embedded();
    if (!schemas.ok()) std::abort();
    cairn::server::ApiOptions options;
    options.provision_delay = std::chrono::milliseconds(0);  // creates settle in their own write
    options.schemas = *schemas;
    // A write token, another project's, and a read token of the first.
    for (auto [token, project, scope] :
         {std::tuple{kToken, "fuzz", cairn::server::TokenScope::kWrite},
          std::tuple{kOtherToken, "other", cairn::server::TokenScope::kWrite},
          std::tuple{kReadToken, "fuzz", cairn::server::TokenScope::kRead}}) {
      const std::string sha = cairn::server::Sha256Hex(token);
      options.tokens[sha] = {project, sha, scope};
    }
    faults = std::make_unique<cairn::server::FaultInjector>(cairn::server::FaultSpec{});
    // On (so every response carries the RateLimit headers), never refusing.
    limiter = std::make_unique<cairn::server::RateLimiter>(1e9, 1'000'000'000);
    api = std::make_unique<cairn::server::Api>(store.get(), &metrics, faults.get(), limiter.get(),
                                               options);
  }
};

Harness& TheHarness() {
  // Never destroyed: the store's threads outlive the fuzzing loop, and exit()
  // must not race them. Only the directory goes.
  static Harness* h = [] {
    auto* made = new Harness();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(TheHarness().dir, ec);
    });
    return made;
  }();
  return *h;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) {
    s.replace(pos, from.size(), to);
  }
}

ApiRequest ParseRequest(std::string text, const std::string& last_id) {
  ReplaceAll(text, "{id}", last_id);
  ReplaceAll(text, "{token}", kToken);
  ReplaceAll(text, "{other}", kOtherToken);
  ReplaceAll(text, "{read}", kReadToken);
  ApiRequest req;
  size_t eol = text.find('\n');
  std::string first = text.substr(0, eol);
  size_t sp = first.find(' ');
  req.method = first.substr(0, sp);
  req.target = sp == std::string::npos ? "" : first.substr(sp + 1);
  size_t pos = eol == std::string::npos ? text.size() : eol + 1;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? text.size() : end + 1;
    if (line.empty()) break;  // the body follows
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = Lower(line.substr(0, colon));
    std::string value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    if (name == "authorization") req.authorization = value;
    if (name == "content-type") req.content_type = value;
    if (name == "idempotency-key") req.idempotency_key = value;
    if (name == "x-request-id") req.client_request_id = value;
  }
  req.body = text.substr(pos);
  return req;
}

std::string HeaderValue(const ApiResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (Lower(k) == Lower(name)) return v;
  }
  return "";
}

// One request's answers. Kept until the next input starts, so that a second
// call of `done` (which may come later, from the writer thread) is seen.
struct Answer {
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  ApiResponse response;
  ApiRequest request;
};
std::vector<std::shared_ptr<Answer>>& Answered() {
  static auto* answered = new std::vector<std::shared_ptr<Answer>>();
  return *answered;
}

void CheckAnsweredOnce() {
  for (const auto& a : Answered()) {
    std::lock_guard<std::mutex> lock(a->mu);
    if (a->calls != 1) Fail("done was called more than once", a->request, &a->response);
  }
  Answered().clear();
}

// Handles `req` and waits for its answer.
ApiResponse Exchange(cairn::server::Api& api, const ApiRequest& req) {
  auto answer = std::make_shared<Answer>();
  answer->request = req;
  Answered().push_back(answer);
  api.Handle(req, [answer](ApiResponse r) {
    std::lock_guard<std::mutex> lock(answer->mu);
    if (++answer->calls == 1) answer->response = std::move(r);
    answer->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(answer->mu);
  // libFuzzer's -timeout reports a hang long before this; the bound only
  // names what hung when run without one.
  if (!answer->cv.wait_for(lock, std::chrono::seconds(60), [&] { return answer->calls > 0; })) {
    Fail("done was never called", req, nullptr);
  }
  return answer->response;
}

void Check(const ApiRequest& req, const ApiResponse& res) {
  if (res.drop) Fail("a response was dropped although no fault is injected", req, &res);
  if (res.status < 200 || res.status >= 500) Fail("status outside 2xx-4xx", req, &res);
  if (HeaderValue(res, "X-Request-ID").empty()) Fail("no X-Request-ID", req, &res);
  // A read token changes nothing: no mutation of it succeeds.
  if (req.authorization && *req.authorization == std::string("Bearer ") + kReadToken &&
      req.method != "GET" && req.method != "HEAD" && res.status < 300) {
    Fail("a read token's mutation succeeded", req, &res);
  }
  if (res.status >= 400) {
    auto body = cairn::ParseJson(res.body);
    if (!body.ok() || !body->is_object() || !body->contains("error") ||
        !(*body)["error"].is_object() || !(*body)["error"].contains("code") ||
        !(*body)["error"]["code"].is_string() || !(*body)["error"].contains("message") ||
        !(*body)["error"]["message"].is_string()) {
      Fail("an error that is not the error envelope", req, &res);
    }
  } else if (HeaderValue(res, "Content-Type").rfind("application/json", 0) == 0 &&
             !cairn::ParseJson(res.body).ok()) {
    Fail("a success whose body is not JSON", req, &res);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Harness& h = TheHarness();
  CheckAnsweredOnce();
  std::string input(reinterpret_cast<const char*>(data), size);
  std::string last_id = "0";
  size_t start = 0;
  for (size_t n = 0; n < kMaxRequests && start <= input.size(); ++n) {
    size_t sep = input.find("\n--next--\n", start);
    std::string text =
        input.substr(start, sep == std::string::npos ? std::string::npos : sep - start);
    start = sep == std::string::npos ? input.size() + 1 : sep + 10;
    ApiRequest req = ParseRequest(std::move(text), last_id);
    ApiResponse res = Exchange(*h.api, req);
    Check(req, res);
    if (res.status == 201) {
      std::string location = HeaderValue(res, "Location");
      if (size_t slash = location.rfind('/'); slash != std::string::npos) {
        last_id = location.substr(slash + 1);
      }
    }
  }
  return 0;
}
