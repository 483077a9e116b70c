#include "engine/state/state_lock.h"

#include <openssl/rand.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace cairn {
namespace {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown-host";
  return buf;
}

std::string UserName() {
  if (const passwd* pw = getpwuid(geteuid()); pw != nullptr && pw->pw_name != nullptr) {
    return pw->pw_name;
  }
  if (const char* user = std::getenv("USER"); user != nullptr && *user != '\0') return user;
  return "uid" + std::to_string(geteuid());
}

}  // namespace

Result<std::string> RandomUuid() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof(b)) != 1) return Status::Internal("OpenSSL RAND_bytes failed");
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof(out),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return std::string(out);
}

std::string CurrentLockHolder() {
  return UserName() + "@" + HostName() + " pid " + std::to_string(getpid());
}

std::string FormatIsoTime(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool LockHolderIsGone(const std::string& holder) {
  // "user@host pid N"
  size_t at = holder.find('@');
  size_t pid_pos = holder.rfind(" pid ");
  if (at == std::string::npos || pid_pos == std::string::npos || pid_pos < at) return false;
  if (holder.substr(at + 1, pid_pos - at - 1) != HostName()) return false;
  const std::string pid_text = holder.substr(pid_pos + 5);
  char* end = nullptr;
  long pid = std::strtol(pid_text.c_str(), &end, 10);
  if (pid_text.empty() || end == nullptr || *end != '\0' || pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

Status LockConflict(const LockInfo& held) {
  std::string msg = "state is locked by " + held.holder + " (operation " + held.operation +
                    ") since " + FormatIsoTime(held.created_at) + " (lock ID " + held.id + ")";
  if (LockHolderIsGone(held.holder)) msg += "; the holder process no longer runs on this host";
  msg += "; use --lock-timeout to wait, or 'cairn force-unlock " + held.id +
         "' if that process is gone";
  return Status::Conflict(std::move(msg));
}

Result<LockInfo> WaitForLock(Clock& clock, std::chrono::milliseconds wait,
                             const std::function<Result<LockInfo>()>& try_once) {
  const Clock::time_point deadline = clock.Now() + wait;
  std::chrono::milliseconds backoff(50);
  constexpr std::chrono::milliseconds kMaxBackoff(1000);
  while (true) {
    Result<LockInfo> r = try_once();
    if (r.ok() || r.status().code() != StatusCode::kConflict) return r;
    const Clock::time_point now = clock.Now();
    if (wait.count() <= 0) return r;
    if (now >= deadline) {
      const auto waited = std::chrono::duration_cast<std::chrono::seconds>(wait).count();
      return Status::Conflict(r.status().message() + " (waited " + std::to_string(waited) + " s)");
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (!clock.SleepFor(std::min(backoff, left), std::stop_token())) return r;
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

}  // namespace cairn
