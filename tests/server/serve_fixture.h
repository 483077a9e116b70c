// Test-only support for integration tests of `cairn serve`: a small
// blocking HTTP client over libcurl (one easy handle per client, reused, so
// keep-alive is exercised; TCP_NODELAY is libcurl's default) and a fixture
// that starts the real binary on an ephemeral loopback port.
#pragma once

#include <curl/curl.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "server/token.h"
#include "tests/support/pg_database.h"
#include "tests/support/process.h"
#include "tests/support/prometheus_text.h"

namespace cairn::testing {

inline constexpr const char* kDevToken = "cairn_test_dev_token_0123456789abcdef";
inline constexpr const char* kOtherToken = "cairn_test_other_token_0123456789abcdef";
// Project "dev" too, but scope read: it may only read.
inline constexpr const char* kReadToken = "cairn_test_read_token_0123456789abcdef";

struct HttpResult {
  int status = 0;                              // 0: no response (connection dropped)
  std::string error;                           // libcurl's message when status is 0
  std::map<std::string, std::string> headers;  // lowercase names
  std::string body;
  std::string raw_headers;   // everything after the status line, as received
  long new_connections = 0;  // connections libcurl opened for it (0: one kept alive reused)
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
  std::string header(const std::string& lower) const {
    auto it = headers.find(lower);
    return it == headers.end() ? std::string() : it->second;
  }
  bool has_header(const std::string& lower) const { return headers.count(lower) > 0; }
};

class HttpClient {
 public:
  explicit HttpClient(std::string base, std::string token = kDevToken)
      : base_(std::move(base)), token_(std::move(token)), curl_(curl_easy_init()) {}
  ~HttpClient() { curl_easy_cleanup(curl_); }
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // `headers` are "Name: value" lines; an Authorization header is added
  // unless the token is empty or one is given.
  HttpResult Request(const std::string& method, const std::string& path,
                     const std::string& body = "", std::vector<std::string> headers = {}) {
    HttpResult r;
    curl_easy_reset(curl_);
    std::string url = base_ + path;
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(curl_, CURLOPT_TCP_NODELAY, 1L);
    if (!ca_file_.empty()) curl_easy_setopt(curl_, CURLOPT_CAINFO, ca_file_.c_str());
    curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, method.c_str());
    if (method == "HEAD") curl_easy_setopt(curl_, CURLOPT_NOBODY, 1L);
    if (!body.empty() || method == "POST" || method == "PATCH") {
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    }
    bool has_auth = false, has_ct = false;
    for (const auto& h : headers) {
      has_auth = has_auth || h.rfind("Authorization:", 0) == 0;
      has_ct = has_ct || h.rfind("Content-Type:", 0) == 0;
    }
    if (!has_auth && !token_.empty()) headers.push_back("Authorization: Bearer " + token_);
    if (!has_ct)
      headers.push_back(body.empty() ? "Content-Type:" : "Content-Type: application/json");
    headers.push_back("Expect:");
    curl_slist* list = nullptr;
    for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &Append);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, &Append);
    curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &r.raw_headers);
    char detail[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, detail);
    CURLcode rc = curl_easy_perform(curl_);
    curl_slist_free_all(list);
    curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, nullptr);  // `detail` goes out of scope
    curl_easy_getinfo(curl_, CURLINFO_NUM_CONNECTS, &r.new_connections);
    if (rc != CURLE_OK) {
      // libcurl's summary, then its detail ("... certificate verify failed").
      r.error = curl_easy_strerror(rc);
      if (detail[0] != '\0') r.error += std::string(": ") + detail;
      return r;
    }
    long code = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &code);
    r.status = static_cast<int>(code);
    size_t nl = r.raw_headers.find("\r\n");
    r.raw_headers = nl == std::string::npos ? "" : r.raw_headers.substr(nl + 2);
    size_t pos = 0;
    while ((nl = r.raw_headers.find("\r\n", pos)) != std::string::npos) {
      std::string line = r.raw_headers.substr(pos, nl - pos);
      pos = nl + 2;
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      r.headers[name] = value;
    }
    return r;
  }

  HttpResult Get(const std::string& path) { return Request("GET", path); }
  // HTTPS: trust the CAs of this PEM file instead of the system's (peer
  // and host verification stay on).
  void TrustCa(const std::string& ca_file) { ca_file_ = ca_file; }
  HttpResult Post(const std::string& path, const nlohmann::json& body,
                  const std::string& key = "") {
    return Request("POST", path, body.dump(), KeyHeader(key));
  }
  HttpResult Patch(const std::string& path, const nlohmann::json& body,
                   const std::string& key = "") {
    return Request("PATCH", path, body.dump(), KeyHeader(key));
  }
  HttpResult Delete(const std::string& path, const std::string& key = "") {
    return Request("DELETE", path, "", KeyHeader(key));
  }

 private:
  static std::vector<std::string> KeyHeader(const std::string& key) {
    if (key.empty()) return {};
    return {"Idempotency-Key: " + key};
  }
  static size_t Append(char* p, size_t size, size_t n, void* out) {
    static_cast<std::string*>(out)->append(p, size * n);
    return size * n;
  }
  std::string base_, token_, ca_file_;
  CURL* curl_;
};

// `cairn serve` on 127.0.0.1:0 with project "dev" (kDevToken, and
// kReadToken, which may only read) and project "other" (kOtherToken),
// provision delay 0 unless `args` says otherwise.
// With CAIRN_TEST_SERVE_STORE=postgres (the ctest entry "server: on
// PostgreSQL" sets it, under pg_harness.sh), the server's store is a
// PostgreSQL database of its own, named after the data directory: a
// fixture given the same data_dir again finds the same data.
class ServeFixture {
 public:
  static bool OnPostgres() {
    const char* store = std::getenv("CAIRN_TEST_SERVE_STORE");
    return store != nullptr && std::string(store) == "postgres";
  }
  // The database a server of `data_dir` uses on PostgreSQL.
  static std::string DatabaseFor(const std::string& data_dir) {
    std::string name = "serve_" + server::Sha256Hex(data_dir).substr(0, 24);
    return TestDatabaseUrl(name);
  }

  explicit ServeFixture(std::vector<std::string> args = {}, const std::string& data_dir = "")
      : data_dir_(data_dir.empty() ? own_dir_.path() + "/data" : data_dir) {
    std::string tokens = own_dir_.path() + "/tokens";
    WriteFile(tokens, "# projects\nother " + server::Sha256Hex(kOtherToken) + "\ndev " +
                          server::Sha256Hex(kReadToken) + " read\n");
    std::vector<std::string> argv = {CairnBinary(),   "serve",   "--listen",    "127.0.0.1:0",
                                     "--data-dir",    data_dir_, "--dev-token", kDevToken,
                                     "--tokens-file", tokens};
    bool has_delay = false;
    for (const auto& a : args) has_delay = has_delay || a == "--provision-delay";
    if (!has_delay) args.insert(args.end(), {"--provision-delay", "0"});
    argv.insert(argv.end(), args.begin(), args.end());
    std::map<std::string, std::string> env;
    if (OnPostgres()) {
      argv.insert(argv.end(), {"--store", "postgres"});
      env["CAIRN_SERVE_PG_URL"] = DatabaseFor(data_dir_);
    }
    proc_ = std::make_unique<ChildProcess>(argv, env);
    auto line = proc_->ReadLine(std::chrono::seconds(30));
    INFO("stderr: " << proc_->Stderr());
    REQUIRE(line.has_value());
    // "listening on http://HOST:PORT", https:// with --tls-cert.
    const std::string prefix = "listening on ";
    REQUIRE(line->rfind(prefix, 0) == 0);
    base_ = line->substr(prefix.size());
    REQUIRE((base_.rfind("http://", 0) == 0 || base_.rfind("https://", 0) == 0));
  }
  const std::string& base() const { return base_; }
  const std::string& data_dir() const { return data_dir_; }
  ChildProcess& process() { return *proc_; }
  std::unique_ptr<HttpClient> Client(const std::string& token = kDevToken) {
    return std::make_unique<HttpClient>(base_, token);
  }

 private:
  TempDir own_dir_;
  std::string data_dir_;
  std::unique_ptr<ChildProcess> proc_;
  std::string base_;
};

inline nlohmann::json InstanceBody(const std::string& name = "web-1",
                                   const std::string& region = "eu-central") {
  return {{"name", name}, {"region", region}, {"image", "debian-12"}, {"plan", "s-1vcpu-1gb"}};
}

// Polls `fetch` until `done(result)` or about 30 s pass (no timing asserts:
// the bound only stops a hung test).
template <typename Fetch, typename Done>
auto PollUntil(Fetch fetch, Done done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto r = fetch();
  while (!done(r) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    r = fetch();
  }
  return r;
}

// GET /metrics, parsed (tests/support/prometheus_text.h): the page must be
// well-formed text format 0.0.4, and each of its histograms well formed.
inline std::vector<MetricFamily> ScrapeMetrics(HttpClient& c) {
  HttpResult r = c.Get("/metrics");
  REQUIRE(r.status == 200);
  auto families = ParsePrometheusText(r.body);
  INFO(families.status().message() << "\n" << r.body);
  REQUIRE(families.ok());
  for (const MetricFamily& f : *families) {
    if (f.type != "histogram") continue;
    Status st = CheckHistogram(f);
    INFO(st.message() << "\n" << r.body);
    REQUIRE(st.ok());
  }
  return std::move(*families);
}

// The value of the sample `name` with exactly `labels` in /metrics, or -1
// when there is none.
inline double MetricValue(HttpClient& c, const std::string& name,
                          const PrometheusLabels& labels = {}) {
  auto families = ScrapeMetrics(c);
  const Sample* s = FindSample(families, name, labels);
  return s == nullptr ? -1.0 : s->value;
}

}  // namespace cairn::testing
