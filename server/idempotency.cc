#include "server/idempotency.h"

namespace cairn::server {

bool IsValidIdempotencyKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxIdempotencyKeyLength) return false;
  for (char c : key) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

std::string IdempotencyScope(std::string_view project, std::string_view method,
                             std::string_view path, std::string_view key) {
  std::string s;
  s.reserve(project.size() + method.size() + path.size() + key.size() + 3);
  s.append(project).append("\n").append(method).append("\n").append(path).append("\n").append(key);
  return s;
}

}  // namespace cairn::server
