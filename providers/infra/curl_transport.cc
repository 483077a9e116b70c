#include "providers/infra/curl_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <mutex>

namespace cairn {
namespace {

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The calling thread's easy handle; cleaned up when the thread exits.
class ThreadHandle {
 public:
  ThreadHandle() {
    GlobalInitOnce();
    handle_ = curl_easy_init();
  }
  ~ThreadHandle() {
    if (handle_ != nullptr) curl_easy_cleanup(handle_);
  }
  ThreadHandle(const ThreadHandle&) = delete;
  ThreadHandle& operator=(const ThreadHandle&) = delete;
  CURL* get() const { return handle_; }

 private:
  CURL* handle_ = nullptr;
};

CURL* ThisThreadsHandle() {
  thread_local ThreadHandle handle;
  return handle.get();
}

struct Exchange {
  HttpResponse* response;
  std::stop_token stop;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  ex->response->body.append(data, size * n);
  return size * n;
}

std::string Trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    ex->response->headers.clear();  // a new response (after 100 Continue)
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = Trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  ex->response->headers[name] = Trim(line.substr(colon + 1));
  return size * n;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* ex = static_cast<Exchange*>(user);
  return ex->stop.stop_requested() ? 1 : 0;
}

struct HeaderList {
  curl_slist* list = nullptr;
  ~HeaderList() { curl_slist_free_all(list); }
  bool Append(const std::string& line) {
    curl_slist* next = curl_slist_append(list, line.c_str());
    if (next == nullptr) return false;
    list = next;
    return true;
  }
};

bool HasHeader(const HttpRequest& req, std::string_view name) {
  for (const auto& [k, v] : req.headers) {
    (void)v;
    if (k.size() == name.size() && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return true;
    }
  }
  return false;
}

}  // namespace

CurlTransport::CurlTransport() : CurlTransport(Options{}) {}

CurlTransport::CurlTransport(Options options) : options_(std::move(options)) { GlobalInitOnce(); }

Result<HttpResponse> CurlTransport::Send(const HttpRequest& req, std::stop_token stop) {
  if (stop.stop_requested()) return Status::Cancelled("request cancelled");
  CURL* h = ThisThreadsHandle();
  if (h == nullptr) return Status::Internal("curl_easy_init failed");
  // Back to defaults, keeping the connection cache, DNS cache and TLS sessions.
  curl_easy_reset(h);

  HttpResponse response;
  Exchange ex{&response, stop};
  char errbuf[CURL_ERROR_SIZE] = {0};

  HeaderList headers;
  for (const auto& [name, value] : req.headers) {
    if (!headers.Append(name + ": " + value)) return Status::Internal("curl_slist_append failed");
  }
  // No "Expect: 100-continue" round trip for larger bodies.
  if (!HasHeader(req, "Expect") && !headers.Append("Expect:")) {
    return Status::Internal("curl_slist_append failed");
  }

  curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());
  if (!options_.user_agent.empty() && !HasHeader(req, "User-Agent")) {
    curl_easy_setopt(h, CURLOPT_USERAGENT, options_.user_agent.c_str());
  }
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &OnProgress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &ex);

  if (req.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (req.method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else {
    if (req.method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    if (req.method == "POST" || !req.body.empty()) {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    }
  }

  CURLcode rc = curl_easy_perform(h);
  // Nothing that points into this frame may outlive it on the reused handle.
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, nullptr);

  if (rc != CURLE_OK) {
    std::string detail = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
    std::string what = req.method + " " + req.url + ": " + detail;
    if (rc == CURLE_ABORTED_BY_CALLBACK) return Status::Cancelled("request cancelled: " + what);
    // Nothing sent: the name did not resolve, or no connection was made
    // (refused, or not within the connect timeout).
    long sent = 0;
    curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent);
    if (sent == 0 && (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                      rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_OPERATION_TIMEDOUT)) {
      return Status::Unreachable("cannot connect: " + what);
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) return Status::DeadlineExceeded("timed out: " + what);
    // The server's certificate is not trusted (unknown CA, wrong host name,
    // expired) or the CA bundle cannot be used: nothing was sent, since the
    // request follows the handshake, and sending again changes nothing.
    if (sent == 0 && (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)) {
      return Status::FailedPrecondition("TLS certificate not trusted: " + what);
    }
    // A failed handshake (e.g. https:// to a plain HTTP port): nothing sent.
    if (sent == 0 && rc == CURLE_SSL_CONNECT_ERROR) {
      return Status::Unreachable("TLS handshake failed: " + what);
    }
    return Status::Unavailable(what);
  }
  long code = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  response.status = static_cast<int>(code);
  return response;
}

Status CheckTokenTransport(const std::string& endpoint, bool allow_insecure_http) {
  GlobalInitOnce();
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> url(curl_url(), &curl_url_cleanup);
  if (!url || curl_url_set(url.get(), CURLUPART_URL, endpoint.c_str(), 0) != CURLUE_OK) {
    return Status::InvalidArgument("the API endpoint \"" + endpoint +
                                   "\" is not a URL (e.g. https://api.example.com)");
  }
  auto part = [&](CURLUPart which) {
    char* text = nullptr;
    std::string out;
    if (curl_url_get(url.get(), which, &text, 0) == CURLUE_OK && text) out = text;
    curl_free(text);
    return out;
  };
  const std::string scheme = part(CURLUPART_SCHEME), host = part(CURLUPART_HOST);
  if (scheme == "https") return Status::Ok();
  if (scheme != "http") {
    return Status::InvalidArgument("the API endpoint \"" + endpoint +
                                   "\" is neither http:// nor https://");
  }
  // Loopback: the name, any 127.x.y.z written as four numbers, or ::1.
  auto loopback_v4 = [](const std::string& h) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    char end = 0;
    return std::sscanf(h.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &end) == 4 && a == 127 &&
           b < 256 && c < 256 && d < 256;
  };
  if (host == "localhost" || host == "[::1]" || loopback_v4(host) || allow_insecure_http) {
    return Status::Ok();
  }
  return Status::InvalidArgument(
      "refusing to send the API token over plain http to " + host +
      ": anyone on the network path could read it. Use https:// (CAIRN_CA_BUNDLE trusts a "
      "private CA), or pass --insecure-http on a network you trust");
}

}  // namespace cairn
