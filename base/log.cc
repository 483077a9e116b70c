#include "base/log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "base/redact.h"

namespace cairn {
namespace {

constexpr std::array<std::string_view, 7> kLevels = {"trace", "debug",    "info", "warn",
                                                     "error", "critical", "off"};

// Formats each record, redacts the whole line, writes it to stderr.
class RedactingStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    std::string line = Redact(std::string_view(formatted.data(), formatted.size()));
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

}  // namespace

Result<std::string> ResolveLogLevel(std::string_view flag_level, const char* env_value) {
  std::string level = "warn";
  if (!flag_level.empty()) {
    level = std::string(flag_level);
  } else if (env_value != nullptr && *env_value != '\0') {
    level = env_value;
  }
  for (auto l : kLevels) {
    if (l == level) return level;
  }
  return Status::InvalidArgument("unknown log level \"" + level +
                                 "\" (use trace, debug, info, warn, error, critical or off)");
}

Status InitLogging(std::string_view flag_level) {
  auto level = ResolveLogLevel(flag_level, std::getenv("CAIRN_LOG"));
  if (!level.ok()) return level.status();
  auto logger = std::make_shared<spdlog::logger>("cairn", std::make_shared<RedactingStderrSink>());
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(*level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  return Status::Ok();
}

}  // namespace cairn
