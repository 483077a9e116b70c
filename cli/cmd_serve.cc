// cairn serve: runs the control-plane API server (server/server.h). This
// file only turns flags into ServerOptions, prints the token and the
// listening line, and waits for shutdown.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "base/duration.h"
#include "base/pg_support.h"
#include "base/redact.h"
#include "cli/command.h"
#include "cli/flag_checks.h"
#include "server/faults.h"
#include "server/server.h"
#include "server/token.h"

namespace cairn::cli {
namespace {

struct ServeFlags {
  std::string listen = "127.0.0.1:8080";
  std::string data_dir = ".cairn/serve";
  std::string store = "sqlite";
  std::string store_url_env = "CAIRN_SERVE_PG_URL";
  bool dev = false;
  std::string dev_token;
  std::string tokens_file;
  std::string provision_delay = "2s";
  std::string rate_limit = "0";
  std::string faults;
  std::string retention = "24h";
  size_t io_threads = 0;
  std::string read_timeout = "60s";
  size_t max_connections = 4096;
  std::string tls_cert;
  std::string tls_key;
};

int RunServe(const ServeFlags& f) {
  auto fail = [](const std::string& msg) {
    std::cerr << "error: " << Redact(msg) << "\n";
    return 1;
  };
  server::ServerOptions opt;
  size_t colon = f.listen.rfind(':');
  if (colon == std::string::npos)
    return fail("--listen: expected HOST:PORT, got '" + f.listen + "'");
  opt.host = f.listen.substr(0, colon);
  if (opt.host.size() >= 2 && opt.host.front() == '[' && opt.host.back() == ']') {
    opt.host = opt.host.substr(1, opt.host.size() - 2);
  }
  try {
    size_t used = 0;
    std::string port = f.listen.substr(colon + 1);
    int p = std::stoi(port, &used);
    if (used != port.size() || p < 0 || p > 65535) throw std::out_of_range("port");
    opt.port = static_cast<uint16_t>(p);
  } catch (const std::exception&) {
    return fail("--listen: invalid port in '" + f.listen + "'");
  }
  opt.data_dir = f.data_dir;
  if (f.store == "postgres") {
    const char* url = std::getenv(f.store_url_env.c_str());
    if (url == nullptr || *url == '\0') {
      return fail("--store postgres: environment variable " + f.store_url_env +
                  " is not set; it must hold the PostgreSQL connection URL");
    }
    opt.store_url = url;
  } else if (f.store.rfind("postgres://", 0) == 0 || f.store.rfind("postgresql://", 0) == 0) {
    opt.store_url = f.store;  // shown by ps: prefer --store postgres and the variable
  } else if (f.store != "sqlite") {
    return fail("--store: expected sqlite, postgres or a postgres:// URL");
  }
  if (!opt.store_url.empty()) RegisterUrlSecrets(opt.store_url);
  auto delay = ParseDuration(f.provision_delay);
  if (!delay.ok()) return fail("--provision-delay: " + delay.status().message());
  opt.provision_delay = *delay;
  auto retention = ParseDuration(f.retention);
  if (!retention.ok()) return fail("--idempotency-retention: " + retention.status().message());
  if (*retention < std::chrono::hours(24)) {
    return fail("--idempotency-retention: must be at least 24h (spec 4.3)");
  }
  opt.idempotency_retention = *retention;
  opt.io_threads = f.io_threads;
  auto read_timeout = ParseDuration(f.read_timeout);
  if (!read_timeout.ok()) return fail("--read-timeout: " + read_timeout.status().message());
  if (read_timeout->count() <= 0) return fail("--read-timeout: must be more than 0");
  opt.idle_timeout = *read_timeout;
  opt.max_connections = f.max_connections;
  if (f.tls_cert.empty() != f.tls_key.empty()) {
    return fail(std::string(f.tls_cert.empty() ? "--tls-key" : "--tls-cert") + " needs " +
                (f.tls_cert.empty() ? "--tls-cert" : "--tls-key") +
                " too: TLS takes the certificate and its private key (or neither, for plain "
                "HTTP)");
  }
  opt.tls_cert_file = f.tls_cert;
  opt.tls_key_file = f.tls_key;
  if (Status st = server::ParseRateLimit(f.rate_limit, &opt.rate, &opt.burst); !st.ok()) {
    return fail(st.message());
  }
  if (!f.faults.empty()) {
    auto spec = server::ParseFaultSpec(f.faults);
    if (!spec.ok()) return fail(spec.status().message());
    opt.faults = *spec;
  }
  // The tokens of this start are the whole truth: the file's and this
  // start's dev token. Tokens of earlier starts stop working, and SIGHUP
  // re-reads the file (the way to revoke a token of a running server).
  std::string printed_token;
  std::vector<server::TokenGrant> dev;
  if (!f.dev_token.empty()) {
    RegisterSecret(f.dev_token);
    dev.push_back({"dev", server::Sha256Hex(f.dev_token)});
  } else if (f.dev) {
    printed_token = server::GenerateToken();
    RegisterSecret(printed_token);
    dev.push_back({"dev", server::Sha256Hex(printed_token)});
  }
  opt.reload_tokens = [file = f.tokens_file, dev]() -> Result<std::vector<server::TokenGrant>> {
    std::vector<server::TokenGrant> tokens;
    if (!file.empty()) {
      auto listed = server::ReadTokensFile(file);
      if (!listed.ok()) return listed.status();
      tokens = std::move(*listed);
    }
    tokens.insert(tokens.end(), dev.begin(), dev.end());
    return tokens;
  };
  auto tokens = opt.reload_tokens();
  if (!tokens.ok()) return fail(tokens.status().message());
  opt.tokens = std::move(*tokens);
  if (opt.tokens.empty()) {
    std::cerr << "warning: no tokens (--dev, --dev-token or --tokens-file): every "
                 "request but /healthz is refused with 401\n";
  }
  server::Server srv(opt);
  if (Status st = srv.Start(); !st.ok()) return fail(st.message());
  // The token is shown exactly once, on stdout, never in a log.
  if (!printed_token.empty()) std::printf("token: %s\n", printed_token.c_str());
  std::printf("listening on %s://%s\n", srv.Tls() ? "https" : "http", srv.BoundAddress().c_str());
  std::fflush(stdout);
  srv.Wait();
  return 0;
}

std::function<int()> SetupServe(CLI::App& sub, const GlobalOptions&) {
  auto flags = std::make_shared<ServeFlags>();
  sub.add_option("--listen", flags->listen, "HOST:PORT to listen on; port 0 picks a free port")
      ->capture_default_str();
  sub.add_option("--data-dir", flags->data_dir, "Directory of the SQLite database")
      ->capture_default_str();
  sub.add_option("--store", flags->store,
                 "sqlite (the default, in --data-dir), or postgres: a PostgreSQL database whose "
                 "URL is in --store-url-env, shared by every server given it (replicas)")
      ->capture_default_str();
  sub.add_option("--store-url-env", flags->store_url_env,
                 "The environment variable holding the PostgreSQL URL (never printed)")
      ->capture_default_str();
  sub.add_flag("--dev", flags->dev,
               "Create project 'dev' and print a fresh token for it once ('token: cairn_...')");
  sub.add_option("--dev-token", flags->dev_token,
                 "Use this token for project 'dev' instead of generating one (implies --dev)");
  sub.add_option("--tokens-file", flags->tokens_file,
                 "File of 'PROJECT SHA256_HEX_OF_TOKEN [read|write]' lines: with the dev "
                 "token, the only tokens accepted; a read token gets 403 on every change; "
                 "re-read on SIGHUP");
  sub.add_option("--provision-delay", flags->provision_delay,
                 "Time per lifecycle step: " + std::string(kDurationSyntax))
      ->type_name("DURATION")
      ->capture_default_str();
  sub.add_option("--rate-limit", flags->rate_limit,
                 "Token bucket per project, RATE:BURST requests (0 = off)")
      ->capture_default_str();
  sub.add_option("--faults", flags->faults,
                 "Fault injection, e.g. error500=0.1,drop_after=0.05,provision_failed=0.2,seed=42 "
                 "(see docs/api.md)");
  sub.add_option(
         "--idempotency-retention", flags->retention,
         "How long idempotency keys are kept, at least 24h: " + std::string(kDurationSyntax))
      ->type_name("DURATION")
      ->capture_default_str();
  sub.add_option("--read-timeout", flags->read_timeout,
                 "How long a client may take to send a whole request (headers and body), or "
                 "to start the next one on a kept-alive connection, and to take in a whole "
                 "response; then it is closed. More than 0: " +
                     std::string(kDurationSyntax))
      ->type_name("DURATION")
      ->capture_default_str();
  sub.add_option("--max-connections", flags->max_connections,
                 "Open connections at most, 1 to 1000000; one more is closed as soon as it is "
                 "accepted")
      ->type_name("N")
      ->check(WholeNumberIn(1, 1000000))
      ->capture_default_str();
  sub.add_option("--io-threads", flags->io_threads,
                 "Threads serving requests, 0 to 1024 (default 0: one per core; on PostgreSQL, "
                 "whose requests wait for the database, four per core and at least 8)")
      ->type_name("N")
      ->check(WholeNumberIn(0, 1024))
      ->capture_default_str();
  sub.add_option("--tls-cert", flags->tls_cert,
                 "Serve HTTPS: PEM file of the server certificate (then its intermediates); "
                 "needs --tls-key. TLS 1.2 and 1.3 only; re-read on SIGHUP")
      ->type_name("FILE");
  sub.add_option("--tls-key", flags->tls_key,
                 "PEM file of the certificate's private key (no passphrase; keep it mode "
                 "0600); needs --tls-cert; re-read on SIGHUP")
      ->type_name("FILE");
  sub.footer(
      "Example:\n"
      "  cairn serve --dev --listen 127.0.0.1:8080 --data-dir /tmp/cairn-dev\n"
      "  # prints 'token: cairn_...' then 'listening on http://127.0.0.1:8080'\n"
      "  curl -H \"Authorization: Bearer $TOKEN\" http://127.0.0.1:8080/v1/regions\n"
      "SIGTERM or Ctrl-C shuts down gracefully (in-flight requests finish; exit 0).\n"
      "Tokens: each start accepts only the tokens of --tokens-file and of this start's\n"
      "--dev/--dev-token; those of earlier starts stop working. To revoke a token of a\n"
      "running server, delete its line from the tokens file and send SIGHUP:\n"
      "  kill -HUP $(pidof cairn)   # tokens reloaded; the removed one gets 401\n"
      "A line ending in 'read' gives a token that only reads (CI that plans):\n"
      "  echo \"web $(printf %s \"$CI_TOKEN\" | sha256sum | cut -d' ' -f1) read\" >> tokens\n"
      "Several replicas on one PostgreSQL database behave as one server:\n"
      "  export CAIRN_SERVE_PG_URL=postgresql://cairn@db/cairn\n"
      "  cairn serve --store postgres --listen 127.0.0.1:8081 --tokens-file tokens &\n"
      "  cairn serve --store postgres --listen 127.0.0.1:8082 --tokens-file tokens &\n"
      "HTTPS (TLS 1.2+), the certificate and key re-read on SIGHUP (renewal):\n"
      "  cairn serve --listen 0.0.0.0:8443 --tokens-file tokens \\\n"
      "      --tls-cert /etc/cairn/tls/server.crt --tls-key /etc/cairn/tls/server.key\n"
      "  # prints 'listening on https://0.0.0.0:8443'; clients of a private CA:\n"
      "  CAIRN_ENDPOINT=https://cairn.internal:8443 CAIRN_CA_BUNDLE=/etc/cairn/tls/ca.pem \\\n"
      "      cairn plan stack/\n"
      "  kill -HUP $(pidof cairn)   # after renewing the files: new connections use them");
  return [flags] { return RunServe(*flags); };
}

}  // namespace

CAIRN_COMMAND("serve", "Run the control-plane API server (for development and tests)", 90,
              SetupServe);

}  // namespace cairn::cli
