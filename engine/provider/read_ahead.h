// ReadAheadProvider: listings read before they are asked for. A command
// that knows which kinds its refresh will list (plan's and drift's: every
// kind the state records) has them read while it still loads its
// manifests (cli/engine_session.cc); the first List of each kind read
// ahead is then answered with that listing, as it was read. Any later
// listing of the kind, and every other call, goes to the wrapped
// provider: a listing is served once, so no refresh is answered with what
// another refresh already saw. A listing that failed is not kept: the
// caller lists again, and reports the error it meets.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "base/mutex.h"
#include "engine/provider/forwarding_provider.h"

namespace cairn {

class ReadAheadProvider final : public ForwardingProvider {
 public:
  explicit ReadAheadProvider(std::unique_ptr<Provider> inner)
      : ForwardingProvider(*inner), owned_(std::move(inner)) {}

  // Lists `kinds` through the wrapped provider, in parallel, and keeps each
  // listing that succeeds for the first List of its kind. Returns the HTTP
  // requests the listings took.
  int ReadAhead(const std::set<std::string>& kinds, std::stop_token stop) EXCLUDES(mu_);
  // Kinds read ahead and not asked for yet (tests).
  size_t kept() const EXCLUDES(mu_);

  ListResponse List(const ListRequest& req, std::stop_token stop) override EXCLUDES(mu_);
  // Recovery's search is a fresh listing, never one read ahead.
  ListResponse FindByName(const std::string& kind, const std::string& name,
                          std::stop_token stop) override {
    return inner().FindByName(kind, name, stop);
  }

 private:
  const std::unique_ptr<Provider> owned_;  // the wrapped provider
  mutable Mutex mu_;
  std::map<std::string, ListResponse> ahead_ GUARDED_BY(mu_);
};

}  // namespace cairn
