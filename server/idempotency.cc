#include "server/idempotency.h"

#include <nlohmann/json.hpp>

#include "base/value.h"

namespace cairn::server {

Result<std::string> CanonicalJson(std::string_view text) {
  size_t i = 0;
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
    ++i;
  if (i == text.size()) return std::string();
  auto j = ParseJson(text);
  if (!j.ok()) return j.status();
  return j->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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
