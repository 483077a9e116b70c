#include "engine/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace cairn {
namespace {

struct CrashConfig {
  std::string name;
  long at = 0;
  std::atomic<long> hits{0};
};

CrashConfig* Config() {
  static CrashConfig* config = []() -> CrashConfig* {
    const char* env = std::getenv("CAIRN_CRASH_AT");
    if (env == nullptr || *env == '\0') return nullptr;
    std::string spec(env);
    size_t colon = spec.rfind(':');
    auto* c = new CrashConfig;
    c->name = spec.substr(0, colon);
    c->at = colon == std::string::npos ? 1 : std::atol(spec.c_str() + colon + 1);
    return c;
  }();
  return config;
}

}  // namespace

void CrashPoint(const char* name) {
  CrashConfig* c = Config();
  if (c == nullptr || c->name != name) return;
  if (c->hits.fetch_add(1) + 1 == c->at) {
    ::kill(::getpid(), SIGKILL);
    ::pause();
  }
}

}  // namespace cairn
