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

// This boot of this machine (a random UUID the kernel draws at boot), empty
// if unknown. Host names repeat across machines (cloned VMs), and PID
// namespace numbers repeat across kernels (the first is 4026531836 on every
// Linux machine): only with the boot id do pid and start time name one
// process.
std::string BootId() {
  std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f == nullptr) return "";
  char buf[64] = {};
  size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  std::string id(buf, n);
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

// The PID namespace of this process ("4026531836"), empty if unknown. Two
// processes with the same pid on one host name are the same process only
// within one namespace (containers may share a host name).
std::string PidNamespace() {
  char buf[64] = {};
  ssize_t n = readlink("/proc/self/ns/pid", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string link(buf, static_cast<size_t>(n));  // "pid:[4026531836]"
  size_t open = link.find('['), close = link.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  return link.substr(open + 1, close - open - 1);
}

// When process `pid` started, in clock ticks since boot (field 22 of
// /proc/PID/stat), empty if it does not exist. With the pid, it names one
// process: a pid reused by a later process has another start time.
std::string ProcessStart(long pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (f == nullptr) return "";
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  std::string stat(buf, n);
  size_t pos = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (pos == std::string::npos) return "";
  // Fields after the name start with field 3 (state); starttime is field 22.
  std::string field;
  int index = 2;
  for (size_t i = pos + 1; i <= stat.size(); ++i) {
    if (i == stat.size() || stat[i] == ' ') {
      if (!field.empty() && ++index == 22) return field;
      field.clear();
    } else {
      field += stat[i];
    }
  }
  return "";
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
  std::string holder = UserName() + "@" + HostName() + " pid " + std::to_string(getpid());
  std::string boot = BootId(), ns = PidNamespace(), start = ProcessStart(getpid());
  if (!boot.empty() && !ns.empty() && !start.empty()) {
    holder += " (boot " + boot + ", pidns " + ns + ", start " + start + ")";
  }
  return holder;
}

std::string FormatIsoTime(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

enum class Liveness { kUnknown, kGone, kRunning };

Liveness HolderLiveness(const std::string& holder) {
  // "user@host pid N (boot B, pidns NS, start T)"
  size_t at = holder.find('@');
  size_t pid_pos = holder.find(" pid ", at == std::string::npos ? 0 : at);
  if (at == std::string::npos || pid_pos == std::string::npos) return Liveness::kUnknown;
  if (holder.substr(at + 1, pid_pos - at - 1) != HostName()) return Liveness::kUnknown;
  const char* text = holder.c_str() + pid_pos + 5;
  char* end = nullptr;
  long pid = std::strtol(text, &end, 10);
  if (end == text || pid <= 0) return Liveness::kUnknown;
  // Without boot, namespace and start time (a lock from an older Cairn), or
  // from another boot or PID namespace, the holder cannot be told apart:
  // unsure.
  const std::string identity = std::string(end);
  const std::string prefix = " (boot ", ns_part = ", pidns ", start_part = ", start ";
  size_t ns_at = identity.find(ns_part), start_at = identity.find(start_part);
  if (identity.rfind(prefix, 0) != 0 || ns_at == std::string::npos ||
      start_at == std::string::npos || start_at < ns_at || identity.back() != ')') {
    return Liveness::kUnknown;
  }
  const std::string boot = identity.substr(prefix.size(), ns_at - prefix.size());
  const std::string ns = identity.substr(ns_at + ns_part.size(), start_at - ns_at - ns_part.size());
  const std::string start = identity.substr(start_at + start_part.size(),
                                            identity.size() - 1 - start_at - start_part.size());
  if (boot.empty() || boot != BootId() || ns.empty() || ns != PidNamespace()) {
    return Liveness::kUnknown;
  }
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return Liveness::kGone;
  // The pid is in use: by the holder, or by a later process that reused it.
  std::string now = ProcessStart(pid);
  if (now.empty()) return Liveness::kUnknown;  // exited meanwhile, or /proc unreadable
  return now == start ? Liveness::kRunning : Liveness::kGone;
}

}  // namespace

bool LockHolderIsGone(const std::string& holder) {
  return HolderLiveness(holder) == Liveness::kGone;
}

bool LockHolderIsRunning(const std::string& holder) {
  return HolderLiveness(holder) == Liveness::kRunning;
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

std::optional<LockInfo> ReleaseLockOfGoneHolder(StateStore& store) {
  auto held = store.CurrentLock();
  if (!held.ok() || !held->has_value() || !LockHolderIsGone((*held)->holder)) return std::nullopt;
  if (!store.ForceUnlock((*held)->id).ok()) return std::nullopt;
  return **held;
}

Result<std::optional<LockInfo>> WaitWhileLocked(StateStore& store, Clock& clock,
                                                std::chrono::milliseconds wait) {
  std::optional<LockInfo> held_by;
  auto free = WaitForLock(clock, wait, [&]() -> Result<LockInfo> {
    auto held = store.CurrentLock();
    if (!held.ok()) return held.status();
    if (!held->has_value() || LockHolderIsGone((*held)->holder)) {
      held_by.reset();
      return LockInfo{};
    }
    held_by = **held;
    return LockConflict(**held);
  });
  if (free.ok()) return std::optional<LockInfo>();
  if (free.status().code() == StatusCode::kConflict && held_by) return held_by;
  return free.status();
}

}  // namespace cairn
