#include "base/pg_support.h"

namespace cairn {

std::string PasswordInUrl(const std::string& url) {
  if (size_t scheme = url.find("://"); scheme != std::string::npos) {
    size_t start = scheme + 3;
    size_t at = url.find('@', start);
    size_t slash = url.find('/', start);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      size_t colon = url.find(':', start);
      if (colon != std::string::npos && colon < at) return url.substr(colon + 1, at - colon - 1);
    }
  }
  if (size_t p = url.find("password="); p != std::string::npos) {
    size_t start = p + 9;
    size_t end = url.find_first_of(" &", start);
    return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  return "";
}

void RegisterUrlSecrets(const std::string& url) {
  RegisterSecret(url);
  RegisterSecret(PasswordInUrl(url));
}

}  // namespace cairn
