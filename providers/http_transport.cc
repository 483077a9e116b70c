#include "providers/http_transport.h"

#include <algorithm>
#include <cctype>

namespace cairn {

std::string HttpResponse::Header(const std::string& name) const {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  auto it = headers.find(lower);
  return it == headers.end() ? "" : it->second;
}

}  // namespace cairn
