#include "engine/watch/shared_listings.h"

namespace cairn {

ListResponse SharedListings::List(const ListRequest& req, std::chrono::milliseconds max_age,
                                  std::stop_token stop) {
  Kind* kind = nullptr;
  {
    MutexLock lock(mu_);
    auto& slot = kinds_[req.kind];
    if (!slot) slot = std::make_unique<Kind>();
    kind = slot.get();
  }
  MutexLock lock(kind->mu);
  const auto now = std::chrono::steady_clock::now();
  if (kind->last && now - kind->read_at <= max_age) {
    ListResponse again = *kind->last;
    again.requests = 0;
    return again;
  }
  ListResponse fresh = lister_.List(req, stop);
  {
    MutexLock count(mu_);
    ++reads_;
  }
  if (!fresh.status.ok()) {
    kind->last.reset();
    return fresh;
  }
  kind->last = fresh;
  kind->read_at = std::chrono::steady_clock::now();
  return fresh;
}

int64_t SharedListings::reads() const {
  MutexLock lock(mu_);
  return reads_;
}

}  // namespace cairn
