// serve_scale: `cairn serve` holding N resources (issue 33).
//
// For each N it fills a fresh store with N instances of project "dev" and
// then starts the real `cairn serve` on it and measures:
//   startup    process start to the "listening on" line (3 starts, each)
//   first      GET /v1/instances?limit=50, the first page (median of 50)
//   walk       every page of /v1/instances?limit=200, following the
//              cursors from the first to the last: the mean per page, and
//              the count seen (must be N)
//   deep       the last page again, by its cursor (median of 50)
//   get        GET /v1/instances/{id} of random ids (1,000; median, p99)
// The store is filled directly through the store's API (ApiStore::Submit,
// WriteTxn::Insert, 10,000 records per mutation, the database's own
// group-committed transactions), not over HTTP: the records are copies of
// one instance created over HTTP first, each with a fresh id. A size
// N/D makes the oldest D of the N deleted (their rows stay, as a DELETE
// leaves them; the first record stays live): the walk then sees N - D.
//
//   serve_scale [--sizes 1000,1000000,1000000/999000] [--cairn PATH]
//               [--store-url-env VAR]   PostgreSQL in $VAR (an empty database
//                                       for each size: the bench drops the
//                                       cairn_serve_ tables first)
//               [--upgrade-cairn PATH]  then start this other cairn on the
//                                       store (a newer one migrating it)
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "providers/infra/curl_transport.h"
#include "server/api_store.h"
#include "server/postgres_api_store.h"
#include "server/record_ids.h"
#include "server/sqlite_api_store.h"
#include "tests/support/process.h"

namespace {

using Clock = std::chrono::steady_clock;
using cairn::testing::ChildProcess;
using cairn::testing::TempDir;
using nlohmann::json;
namespace srv = cairn::server;

constexpr const char* kToken = "cairn_bench_token_0123456789abcdef";

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "serve_scale: %s\n", what.c_str());
  std::exit(1);
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

struct Serve {
  std::unique_ptr<ChildProcess> process;
  std::string endpoint;
  double startup_ms = 0;
};

Serve Start(const std::string& cairn, const std::string& dir, const std::string& url_env) {
  std::vector<std::string> argv = {
      cairn,         "serve", "--listen",          "127.0.0.1:0", "--data-dir",   dir,
      "--dev-token", kToken,  "--provision-delay", "1h",          "--rate-limit", "0"};
  if (!url_env.empty()) {
    argv.push_back("--store");
    argv.push_back("postgres");
    argv.push_back("--store-url-env");
    argv.push_back(url_env);
  }
  Serve s;
  auto t0 = Clock::now();
  s.process = std::make_unique<ChildProcess>(argv);
  for (;;) {
    auto line = s.process->ReadLine(std::chrono::seconds(300));
    if (!line) Die("cairn serve did not start: " + s.process->Stderr());
    if (line->rfind("listening on ", 0) == 0) {
      s.endpoint = line->substr(13);
      break;
    }
  }
  s.startup_ms = Ms(Clock::now() - t0);
  return s;
}

void Stop(Serve& s) {
  s.process->Signal(SIGTERM);
  s.process->Wait(std::chrono::seconds(60));
}

struct Client {
  cairn::CurlTransport t;
  std::string endpoint;
  json Get(const std::string& path, int want = 200) {
    cairn::HttpRequest req{
        "GET", endpoint + path,          {{"Authorization", std::string("Bearer ") + kToken}},
        "",    std::chrono::seconds(60), std::chrono::seconds(10)};
    auto r = t.Send(req, {});
    if (!r.ok()) Die("GET " + path + ": " + r.status().message());
    if (r->status != want) Die("GET " + path + ": " + std::to_string(r->status) + " " + r->body);
    return json::parse(r->body);
  }
  json Post(const std::string& path, const std::string& body) {
    cairn::HttpRequest req{
        "POST",
        endpoint + path,
        {{"Authorization", std::string("Bearer ") + kToken}, {"Content-Type", "application/json"}},
        body,
        std::chrono::seconds(60),
        std::chrono::seconds(10)};
    auto r = t.Send(req, {});
    if (!r.ok() || r->status / 100 != 2) Die("POST " + path + " failed");
    return json::parse(r->body);
  }
};

std::unique_ptr<srv::ApiStore> OpenStore(const std::string& dir, const std::string& url_env) {
  auto st = url_env.empty() ? srv::SqliteApiStore::Open(dir, {})
                            : srv::PostgresApiStore::Open(std::getenv(url_env.c_str()), {});
  if (!st.ok()) Die("open store: " + st.status().message());
  return std::move(st).value();
}

// Runs `m` on the store's writer and waits for its commit.
void RunMutation(srv::ApiStore& store, srv::ApiStore::Mutation m) {
  std::promise<cairn::Status> p;
  auto f = p.get_future();
  store.Submit(std::move(m), [&p](const cairn::Status& st) { p.set_value(st); });
  cairn::Status st = f.get();
  if (!st.ok()) Die("store: " + st.message());
}

void DropPgTables(const std::string& url_env) {
  if (url_env.empty()) return;
  std::string cmd = std::string("psql -q -X \"$") + url_env +
                    "\" -c 'DROP TABLE IF EXISTS cairn_serve_tokens, cairn_serve_resources, "
                    "cairn_serve_idempotency, cairn_serve_ipv4_pool, cairn_serve_claims, "
                    "cairn_serve_buckets, cairn_serve_schema CASCADE; DROP FUNCTION IF EXISTS "
                    "cairn_serve_claim CASCADE' >/dev/null 2>&1";
  (void)std::system(cmd.c_str());
}

std::string upgrade_cairn;

void RunSize(const std::string& cairn, long n, long deleted, const std::string& url_env) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/serve";
  DropPgTables(url_env);
  // One instance over HTTP: the template of the rest.
  {
    Serve s = Start(cairn, dir, url_env);
    Client c{{}, s.endpoint};
    c.Post("/v1/instances",
           R"({"name":"bench","region":"eu-central","image":"debian-12","plan":"s-1vcpu-1gb"})");
    Stop(s);
  }
  auto fill0 = Clock::now();
  {
    auto store = OpenStore(dir, url_env);
    auto first = store->List("dev", "instance", 0, 1);
    if (!first.ok() || first->empty()) Die("no template instance");
    srv::Record tmpl = (*first)[0];
    tmpl.status = "running";
    tmpl.next_step_ms = 0;
    tmpl.fate = "";
    constexpr long kPerMutation = 10'000;
    for (long done = 1; done < n;) {
      long k = std::min(kPerMutation, n - done);
      RunMutation(*store, [&tmpl, k, done, deleted](srv::WriteTxn& txn) {
        for (long i = 0; i < k; ++i) {
          srv::Record r = tmpl;
          r.id = srv::NewResourceHex();
          if (done + i <= deleted) r.status = "deleted";
          if (!txn.Insert(&r).ok()) return false;
        }
        return true;
      });
      done += k;
    }
    store->Close();
  }
  const double fill_s = Ms(Clock::now() - fill0) / 1000;
  std::vector<double> startups;
  Serve s;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) Stop(s);
    s = Start(cairn, dir, url_env);
    startups.push_back(s.startup_ms);
  }
  Client c{{}, s.endpoint};
  std::vector<double> first_ms;
  for (int i = 0; i < 50; ++i) {
    auto t0 = Clock::now();
    json page = c.Get("/v1/instances?limit=50");
    first_ms.push_back(Ms(Clock::now() - t0));
    if (page["data"].size() != static_cast<size_t>(std::min(n - deleted, 50L))) {
      Die("short first page");
    }
  }
  // The walk: every page, by cursor.
  std::vector<std::string> ids;
  ids.reserve(n);
  std::string cursor, last_cursor;
  long pages = 0;
  auto w0 = Clock::now();
  for (;;) {
    json page = c.Get("/v1/instances?limit=200" + (cursor.empty() ? "" : "&cursor=" + cursor));
    ++pages;
    for (const json& r : page["data"]) ids.push_back(r["id"].get<std::string>());
    const json& next = page["pagination"]["next_cursor"];
    if (next.is_null()) break;
    last_cursor = cursor = next.get<std::string>();
  }
  const double walk_ms = Ms(Clock::now() - w0);
  if (static_cast<long>(ids.size()) != n - deleted) {
    Die("the walk saw " + std::to_string(ids.size()) + " of " + std::to_string(n - deleted));
  }
  std::vector<double> deep_ms;
  for (int i = 0; i < 50; ++i) {
    auto t0 = Clock::now();
    c.Get("/v1/instances?limit=200" + (last_cursor.empty() ? "" : "&cursor=" + last_cursor));
    deep_ms.push_back(Ms(Clock::now() - t0));
  }
  std::mt19937 rng(42);
  std::vector<double> get_ms;
  for (int i = 0; i < 1000; ++i) {
    const std::string& id = ids[rng() % ids.size()];
    auto t0 = Clock::now();
    c.Get("/v1/instances/" + id);
    get_ms.push_back(Ms(Clock::now() - t0));
  }
  Stop(s);
  std::printf(
      "N=%ld deleted=%ld store=%s fill %.1f s | startup ms %.0f %.0f %.0f | first page(50) p50 "
      "%.2f ms | "
      "walk %ld pages(200) %.2f ms/page | deep page(200) p50 %.2f ms | get p50 %.2f ms p99 "
      "%.2f ms\n",
      n, deleted, url_env.empty() ? "sqlite" : "postgres", fill_s, startups[0], startups[1],
      startups[2], Pct(first_ms, 0.5), pages, walk_ms / static_cast<double>(pages),
      Pct(deep_ms, 0.5), Pct(get_ms, 0.5), Pct(get_ms, 0.99));
  std::fflush(stdout);
  if (!upgrade_cairn.empty()) {
    Serve u = Start(upgrade_cairn, dir, url_env);
    Stop(u);
    Serve again = Start(upgrade_cairn, dir, url_env);
    Stop(again);
    std::printf("  upgrade: %s starts in %.0f ms (migrating), then in %.0f ms\n",
                upgrade_cairn.c_str(), u.startup_ms, again.startup_ms);
    std::fflush(stdout);
  }
  DropPgTables(url_env);
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes = "1000,1000000,1000000/999000";
  std::string cairn =
      (std::filesystem::absolute(argv[0]).parent_path() / ".." / "cli" / "cairn").string();
  std::string url_env;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--sizes") {
      sizes = argv[i + 1];
    } else if (a == "--cairn") {
      cairn = argv[i + 1];
    } else if (a == "--upgrade-cairn") {
      upgrade_cairn = argv[i + 1];
    } else if (a == "--store-url-env") {
      url_env = argv[i + 1];
    } else {
      Die("unknown flag " + a);
    }
  }
  std::stringstream ss(sizes);
  for (std::string one; std::getline(ss, one, ',');) {
    size_t slash = one.find('/');
    long deleted = slash == std::string::npos ? 0 : std::stol(one.substr(slash + 1));
    RunSize(cairn, std::stol(one.substr(0, slash)), deleted, url_env);
  }
  return 0;
}
