// server_load: a load generator for `cairn serve` (loopback only).
//
// By default it starts the server in-process (server/server.h) on
// 127.0.0.1:0 with a fresh data directory and --provision-delay 1h (the
// lifecycle worker stays idle, so the figures are the API's own), seeds
// instances, then runs, each bounded by --duration and --max-requests:
//   get-one   GET /api/v1/compute/{id} of a random seeded instance
//   list      GET /v1/instances?limit=50 (one page of 50)
//   create    POST /api/v1/compute with a unique Idempotency-Key (durable,
//             group-committed, fsync per batch)
// at 16 and 64 connections, then get-one over 1,000 concurrent connections.
// Prints requests/s and p50/p99 latency per run, and the error count.
//
// With --target (a comma-separated list: several replicas of one server),
// it drives running servers instead, the connections spread over them.
// With --tls the in-process server serves HTTPS (a certificate of a
// throwaway CA, tests/support/test_tls.h) and every connection shakes hands
// once, then keeps alive as over plain HTTP; with --target, --tls speaks
// HTTPS to the targets without verifying their certificates.
//
//   server_load [--duration SECONDS] [--max-requests N] [--data-dir DIR]
//               [--target HOST:PORT[,HOST:PORT...] --token TOKEN] [--provision-delay D]
//               [--only get-one,list,create,get-one@16,create@64,get-one@1000,...]
//               [--io-threads N] [--tls]
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/duration.h"
#include "server/server.h"
#include "server/token.h"
#include "tests/support/process.h"
#include "tests/support/test_tls.h"

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

struct Config {
  std::string host = "127.0.0.1";
  std::string port;
  // More servers to spread the connections over (host, port), after the first.
  std::vector<std::pair<std::string, std::string>> more;
  std::string token;
  double duration_s = 3.0;
  long max_requests = 200000;
  net::ssl::context* tls = nullptr;  // HTTPS with this client context
};

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

using MakeRequest = std::function<void(http::request<http::string_body>&, long seq)>;

struct RunStats {
  long ok = 0, errors = 0;
  std::vector<double> latencies_us;
  double seconds = 0;
};

// One keep-alive connection issuing requests back to back, over
// beast::tcp_stream or TlsStream (one handshake, then keep-alive).
template <class Stream>
class Conn : public std::enable_shared_from_this<Conn<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
  static Stream MakeStream(net::io_context& ioc, net::ssl::context* tls) {
    if constexpr (kTls) {
      return Stream(ioc, *tls);
    } else {
      (void)tls;
      return Stream(ioc);
    }
  }

 public:
  Conn(net::io_context& ioc, net::ssl::context* tls, RunStats* stats, const MakeRequest* make,
       long* issued, long max, Clock::time_point deadline, int* live)
      : stream_(MakeStream(ioc, tls)),
        stats_(stats),
        make_(make),
        issued_(issued),
        max_(max),
        deadline_(deadline),
        live_(live) {}
  void Start(const tcp::endpoint& ep) {
    ++*live_;
    beast::get_lowest_layer(stream_).async_connect(ep, [self = this->shared_from_this()](
                                                           beast::error_code ec) {
      if (ec) {
        self->stats_->errors++;
        return self->Done();
      }
      beast::get_lowest_layer(self->stream_).socket().set_option(tcp::no_delay(true));
      if constexpr (kTls) {
        self->stream_.async_handshake(net::ssl::stream_base::client, [self](beast::error_code hec) {
          if (hec) {
            self->stats_->errors++;
            return self->Done();
          }
          self->Next();
        });
      } else {
        self->Next();
      }
    });
  }

 private:
  void Next() {
    if (*issued_ >= max_ || Clock::now() >= deadline_) return Done();
    req_ = {};
    (*make_)(req_, (*issued_)++);
    // HTTP/1.1 needs exactly one Host header (the server answers 400
    // without: the request-smuggling fix).
    if (req_.find(http::field::host) == req_.end()) req_.set(http::field::host, "localhost");
    req_.prepare_payload();
    res_.emplace();
    res_->body_limit(16 * 1024 * 1024);
    start_ = Clock::now();
    http::async_write(
        stream_, req_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (ec) {
            self->stats_->errors++;
            return self->Done();
          }
          http::async_read(self->stream_, self->buf_, *self->res_,
                           [self](beast::error_code ec2, size_t) { self->OnRead(ec2); });
        });
  }
  void OnRead(beast::error_code ec) {
    if (ec) {
      stats_->errors++;
      return Done();
    }
    double us = std::chrono::duration<double, std::micro>(Clock::now() - start_).count();
    unsigned status = res_->get().result_int();
    if (status >= 200 && status < 300) {
      stats_->ok++;
      stats_->latencies_us.push_back(us);
    } else {
      stats_->errors++;
      if (stats_->errors <= 3)
        std::fprintf(stderr, "error response %u: %s\n", status, res_->get().body().c_str());
    }
    Next();
  }
  void Done() {
    beast::error_code ec;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ec);
    --*live_;
  }

  Stream stream_;
  beast::flat_buffer buf_;
  http::request<http::string_body> req_;
  std::optional<http::response_parser<http::string_body>> res_;
  RunStats* stats_;
  const MakeRequest* make_;
  long* issued_;
  long max_;
  Clock::time_point deadline_;
  int* live_;
  Clock::time_point start_;
};

RunStats Run(const Config& cfg, int connections, const MakeRequest& make, long max_requests) {
  net::io_context ioc;
  tcp::resolver resolver(ioc);
  std::vector<tcp::endpoint> eps = {*resolver.resolve(cfg.host, cfg.port).begin()};
  for (const auto& [host, port] : cfg.more) eps.push_back(*resolver.resolve(host, port).begin());
  RunStats stats;
  stats.latencies_us.reserve(std::min<long>(max_requests, 2'000'000));
  long issued = 0;
  int live = 0;
  auto start = Clock::now();
  auto deadline = start + std::chrono::microseconds(static_cast<long>(cfg.duration_s * 1e6));
  std::vector<std::shared_ptr<void>> conns;
  for (int i = 0; i < connections; ++i) {
    if (cfg.tls) {
      auto c = std::make_shared<Conn<TlsStream>>(ioc, cfg.tls, &stats, &make, &issued, max_requests,
                                                 deadline, &live);
      c->Start(eps[i % eps.size()]);
      conns.push_back(c);
    } else {
      auto c = std::make_shared<Conn<beast::tcp_stream>>(ioc, nullptr, &stats, &make, &issued,
                                                         max_requests, deadline, &live);
      c->Start(eps[i % eps.size()]);
      conns.push_back(c);
    }
  }
  ioc.run();
  stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return stats;
}

void Report(const char* name, int connections, RunStats s) {
  std::sort(s.latencies_us.begin(), s.latencies_us.end());
  auto pct = [&](double p) {
    if (s.latencies_us.empty()) return 0.0;
    return s.latencies_us[std::min(s.latencies_us.size() - 1,
                                   static_cast<size_t>(p * s.latencies_us.size()))] /
           1000.0;
  };
  std::printf(
      "%-10s %6d conns %9ld ok %6ld errors %8.1f s %10.0f req/s   p50 %7.3f ms   p99 %7.3f ms\n",
      name, connections, s.ok, s.errors, s.seconds, s.ok / s.seconds, pct(0.50), pct(0.99));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);  // no access log lines in the figures
  Config cfg;
  std::string data_dir, target, delay = "1h", only;
  size_t io_threads = 0;  // 0: the server's default (hardware concurrency)
  bool tls = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "server_load: %s needs a value\n", a.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--duration")
      cfg.duration_s = std::stod(next());
    else if (a == "--max-requests")
      cfg.max_requests = std::stol(next());
    else if (a == "--data-dir")
      data_dir = next();
    else if (a == "--target")
      target = next();
    else if (a == "--token")
      cfg.token = next();
    else if (a == "--provision-delay")
      delay = next();
    else if (a == "--only")
      only = next();
    else if (a == "--io-threads")
      io_threads = std::stoul(next());
    else if (a == "--tls")
      tls = true;
    else {
      std::fprintf(stderr,
                   "usage: server_load [--duration S] [--max-requests N] [--data-dir DIR] "
                   "[--target HOST:PORT --token T] [--provision-delay D] [--only RUNS] "
                   "[--io-threads N] [--tls]\n");
      return 1;
    }
  }
  std::unique_ptr<cairn::server::Server> server;
  std::string tmp;
  // --tls: the server's certificate (in-process) and the client context.
  std::unique_ptr<cairn::testing::TempDir> tls_dir;
  net::ssl::context client_tls(net::ssl::context::tls_client);
  if (tls) cfg.tls = &client_tls;
  if (target.empty()) {
    if (data_dir.empty()) {
      tmp = (std::filesystem::temp_directory_path() / ("cairn-bench-" + std::to_string(getpid())))
                .string();
      data_dir = tmp;
    }
    cfg.token = cairn::server::GenerateToken();
    cairn::server::ServerOptions opt;
    opt.host = "127.0.0.1";
    opt.port = 0;
    opt.data_dir = data_dir;
    opt.tokens = {{"bench", cairn::server::Sha256Hex(cfg.token)}};
    auto d = cairn::ParseDuration(delay);
    if (!d.ok()) {
      std::fprintf(stderr, "server_load: %s\n", d.status().message().c_str());
      return 1;
    }
    opt.provision_delay = *d;
    opt.handle_signals = false;
    opt.io_threads = io_threads;
    if (tls) {
      cairn::testing::TestCa ca("server_load CA");
      cairn::testing::TestCertificate cert = ca.Issue(1);
      tls_dir = std::make_unique<cairn::testing::TempDir>();
      opt.tls_cert_file = tls_dir->path() + "/server.crt";
      opt.tls_key_file = tls_dir->path() + "/server.key";
      cairn::testing::WriteFile(opt.tls_cert_file, cert.cert_pem);
      cairn::testing::WriteFile(opt.tls_key_file, cert.key_pem);
      client_tls.add_certificate_authority(net::buffer(ca.ca_pem()));
      client_tls.set_verify_mode(net::ssl::verify_peer);
    }
    server = std::make_unique<cairn::server::Server>(opt);
    if (auto st = server->Start(); !st.ok()) {
      std::fprintf(stderr, "server_load: %s\n", st.message().c_str());
      return 1;
    }
    cfg.port = std::to_string(server->BoundPort());
    std::printf(
        "in-process cairn serve on %s://127.0.0.1:%s, data dir %s, provision delay %s, %u "
        "hardware threads\n",
        tls ? "https" : "http", cfg.port.c_str(), data_dir.c_str(), delay.c_str(),
        std::thread::hardware_concurrency());
  } else {
    size_t start = 0;
    for (;;) {
      size_t comma = target.find(',', start);
      std::string one = target.substr(start, comma == std::string::npos ? comma : comma - start);
      size_t colon = one.rfind(':');
      if (cfg.port.empty()) {
        cfg.host = one.substr(0, colon);
        cfg.port = one.substr(colon + 1);
      } else {
        cfg.more.emplace_back(one.substr(0, colon), one.substr(colon + 1));
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    std::printf("target %s://%s\n", tls ? "https" : "http", target.c_str());
  }
  const std::string auth = "Bearer " + cfg.token;
  const std::string create_body =
      R"({"name":"bench","region":"eu-central","image":"debian-12","plan":"s-1vcpu-1gb"})";
  std::string run_id = std::to_string(Clock::now().time_since_epoch().count());

  // Seed instances for get-one and list.
  std::vector<std::string> ids;
  {
    MakeRequest seed = [&](http::request<http::string_body>& r, long seq) {
      r.method(http::verb::post);
      r.target("/v1/instances");
      r.set(http::field::authorization, auth);
      r.set(http::field::content_type, "application/json");
      r.set("Idempotency-Key", "seed-" + run_id + "-" + std::to_string(seq));
      r.body() = create_body;
    };
    Config c = cfg;
    c.duration_s = 60;
    auto s = Run(c, 16, seed, 1000);
    std::printf("seeded %ld instances (%ld errors)\n", s.ok, s.errors);
  }
  // Fetch ids through the list API.
  {
    // Ids are fetched page by page with a synchronous client.
    net::io_context ioc;
    tcp::resolver resolver(ioc);
    auto fetch = [&](auto& s) {
      std::string next;
      do {
        http::request<http::string_body> r{
            http::verb::get, "/api/v1/compute?limit=200" + (next.empty() ? "" : "&cursor=" + next),
            11};
        r.set(http::field::authorization, auth);
        r.set(http::field::host, cfg.host);
        http::write(s, r);
        beast::flat_buffer b;
        http::response<http::string_body> res;
        http::read(s, b, res);
        const std::string& body = res.body();
        size_t pos = 0;
        while ((pos = body.find("\"publicId\":\"", pos)) != std::string::npos) {
          pos += 12;
          ids.push_back(body.substr(pos, 36));
        }
        size_t np = body.find("\"next\":\"");
        next = np == std::string::npos ? "" : body.substr(np + 8, body.find('"', np + 8) - np - 8);
      } while (!next.empty() && ids.size() < 5000);
    };
    if (cfg.tls) {
      TlsStream s(ioc, *cfg.tls);
      beast::get_lowest_layer(s).connect(resolver.resolve(cfg.host, cfg.port));
      s.handshake(net::ssl::stream_base::client);
      fetch(s);
    } else {
      beast::tcp_stream s(ioc);
      s.connect(resolver.resolve(cfg.host, cfg.port));
      fetch(s);
    }
  }
  if (ids.empty()) {
    std::fprintf(stderr, "server_load: no instances to read\n");
    return 1;
  }
  std::mt19937 rng(42);
  MakeRequest get_one = [&](http::request<http::string_body>& r, long) {
    r.method(http::verb::get);
    r.target("/api/v1/compute/" + ids[rng() % ids.size()]);
    r.set(http::field::authorization, auth);
  };
  MakeRequest list = [&](http::request<http::string_body>& r, long) {
    r.method(http::verb::get);
    r.target("/v1/instances?limit=50");
    r.set(http::field::authorization, auth);
  };
  long create_seq = 0;
  MakeRequest create = [&](http::request<http::string_body>& r, long) {
    r.method(http::verb::post);
    r.target("/api/v1/compute");
    r.set(http::field::authorization, auth);
    r.set(http::field::content_type, "application/json");
    r.set("Idempotency-Key", "bench-" + run_id + "-" + std::to_string(create_seq++));
    r.body() = create_body;
  };
  std::printf("%-10s %12s %12s %13s %10s %14s %16s %16s\n", "run", "", "", "", "", "", "", "");
  auto wanted = [&](const std::string& name) {
    return only.empty() || ("," + only + ",").find("," + name + ",") != std::string::npos;
  };
  for (int conns : {16, 64}) {
    std::string n = std::to_string(conns);
    if (wanted("get-one") || wanted("get-one@" + n))
      Report("get-one", conns, Run(cfg, conns, get_one, cfg.max_requests));
    if (wanted("list") || wanted("list@" + n))
      Report("list", conns, Run(cfg, conns, list, cfg.max_requests));
    if (wanted("create") || wanted("create@" + n))
      Report("create", conns, Run(cfg, conns, create, cfg.max_requests));
  }
  if (wanted("get-one") || wanted("get-one@1000")) {
    Report("get-one", 1000, Run(cfg, 1000, get_one, cfg.max_requests));
  }
  if (server) {
    server->Shutdown();
    server->Wait();
  }
  if (!tmp.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);
  }
  return 0;
}
