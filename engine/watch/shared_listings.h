// Listings shared by the runs of every watched stack that talks to one API
// (the same endpoint and token: one project). The API lists a kind whole,
// with no filter, so each stack's refresh would read the listing of the
// whole project: a hundred stacks sharing one would read it a hundred
// times an interval. Here a kind listed for one run serves the others' for
// `max_age` (half their interval): the project is listed at most twice an
// interval, whatever the number of stacks. A listing that fails is not
// kept. The listings are made by a provider of their own (`lister`), so
// that what a provider remembers of what it listed is kept once.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "engine/provider/forwarding_provider.h"

namespace cairn {

class SharedListings {
 public:
  // `lister` must outlive this.
  explicit SharedListings(Provider& lister) : lister_(lister) {}

  // The kind's listing, as read at most `max_age` ago: from the last one,
  // or read now (one caller reads, those asking meanwhile wait for it). A
  // listing served again says it took no request.
  ListResponse List(const ListRequest& req, std::chrono::milliseconds max_age, std::stop_token stop)
      EXCLUDES(mu_);
  // Listings read so far (tests, benchmarks).
  int64_t reads() const EXCLUDES(mu_);

 private:
  struct Kind {
    Mutex mu;  // held while reading: one read at a time per kind
    std::optional<ListResponse> last GUARDED_BY(mu);
    std::chrono::steady_clock::time_point read_at GUARDED_BY(mu);
  };
  Provider& lister_;
  mutable Mutex mu_;
  std::map<std::string, std::unique_ptr<Kind>> kinds_ GUARDED_BY(mu_);
  int64_t reads_ GUARDED_BY(mu_) = 0;
};

// A stack's provider for a watch run: its listings through `listings`,
// everything else (reads, and anything a run would write) to `inner`.
class ListingSharingProvider final : public ForwardingProvider {
 public:
  ListingSharingProvider(Provider& inner, SharedListings& listings,
                         std::chrono::milliseconds max_age)
      : ForwardingProvider(inner), listings_(listings), max_age_(max_age) {}

  ListResponse List(const ListRequest& req, std::stop_token stop) override {
    ListResponse r = listings_.List(req, max_age_, stop);
    list_requests_.fetch_add(r.requests, std::memory_order_relaxed);
    return r;
  }
  // Requests the listings read for this provider took (0 for those served
  // again).
  int64_t list_requests() const { return list_requests_.load(std::memory_order_relaxed); }

 private:
  SharedListings& listings_;
  const std::chrono::milliseconds max_age_;
  std::atomic<int64_t> list_requests_{0};
};

}  // namespace cairn
