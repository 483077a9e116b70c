#include "engine/provider/read_ahead.h"

#include <future>

namespace cairn {

int ReadAheadProvider::ReadAhead(const std::set<std::string>& kinds, std::stop_token stop) {
  std::map<std::string, std::future<ListResponse>> lists;
  for (const std::string& kind : kinds) {
    lists[kind] = std::async(std::launch::async,
                             [this, kind, stop] { return inner().List(ListRequest{kind}, stop); });
  }
  int requests = 0;
  for (auto& [kind, list] : lists) {
    ListResponse listed = list.get();
    requests += listed.requests;
    if (!listed.status.ok()) continue;
    MutexLock lock(mu_);
    ahead_[kind] = std::move(listed);
  }
  return requests;
}

size_t ReadAheadProvider::kept() const {
  MutexLock lock(mu_);
  return ahead_.size();
}

ListResponse ReadAheadProvider::List(const ListRequest& req, std::stop_token stop) {
  {
    MutexLock lock(mu_);
    if (auto it = ahead_.find(req.kind); it != ahead_.end()) {
      ListResponse listed = std::move(it->second);
      ahead_.erase(it);
      return listed;
    }
  }
  return inner().List(req, stop);
}

}  // namespace cairn
