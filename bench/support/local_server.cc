#include "bench/support/local_server.h"

#include <unistd.h>

#include <csignal>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "tests/support/prometheus_text.h"

namespace cairn::bench {

void Die(const std::string& what) { throw BenchFailure(what); }

LocalServer::LocalServer(const std::string& cairn, const std::string& data_dir,
                         const std::string& provision_delay) {
  process_ = std::make_unique<testing::ChildProcess>(std::vector<std::string>{
      cairn, "serve", "--listen", "127.0.0.1:0", "--data-dir", data_dir, "--dev-token", kToken,
      "--provision-delay", provision_delay, "--rate-limit", "0"});
  for (;;) {
    auto line = process_->ReadLine(std::chrono::seconds(30));
    if (!line) Die("cairn serve did not start: " + process_->Stderr());
    if (line->rfind("listening on ", 0) == 0) {
      endpoint_ = line->substr(13);
      break;
    }
  }
}

LocalServer::~LocalServer() {
  process_->Signal(SIGTERM);
  process_->Wait(std::chrono::seconds(30));
}

double LocalServer::CpuSeconds() const {
  std::ifstream in("/proc/" + std::to_string(process_->pid()) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces): state is field
  // 3, utime and stime are fields 14 and 15.
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long LocalServer::MetricSum(const std::string& name) {
  HttpRequest req{
      "GET", endpoint_ + "/metrics",   {{"Authorization", std::string("Bearer ") + kToken}},
      "",    std::chrono::seconds(10), std::chrono::seconds(10)};
  auto resp = transport_.Send(req, {});
  if (!resp.ok() || resp->status != 200) Die("GET /metrics failed");
  auto families = testing::ParsePrometheusText(resp->body);
  if (!families.ok()) Die("GET /metrics: " + families.status().message());
  return static_cast<long>(testing::SumSamples(*families, name));
}

}  // namespace cairn::bench
