// InfraProvider::KindWatcher: every pending wait (Watch, Wait) on one kind,
// answered by one thread, so that a thousand resources provisioning cost a
// few listings a second rather than a thread and a poll loop each.
//
// Each waiter has a due time: after a create that answered "not ready" (or a
// delete), the kind's learnt first-poll delay (ReadyEstimate, jittered to
// 75-100%) -- when that has shrunk to nothing (an API that provisions at
// once), Add itself takes the first look, one GET on the caller's thread,
// and hands over only a miss; else at once; after a look that did not settle it, a tenth of
// the time it has waited so far, within [min_poll_interval,
// max_poll_interval]: it overshoots readiness by about a tenth, and a long
// wait costs few looks. When waiters are due the watcher
// looks: one GET each when no more are due than the last listing had pages,
// else one listing of the collection (all pages), which settles every
// waiter it shows, due or not. A waiter for a deletion missing from a
// listing that began after its wait did is done: keyset pages show every
// record that exists throughout. A due waiter for readiness missing from the
// listing (made after it began, or gone) is confirmed with a GET, and called
// gone only on a 404. Listings of the kind are at least 1 / max_lists_per_second
// apart, and as far apart as the last one's pages take at
// max_list_pages_per_second (a wait added while the watcher sleeps out that
// gap, with enough due to list, does not wake it: the listing at the gap's
// end takes it in); a kind whose listing fails for good (a malformed answer) is
// watched by GETs alone from then on. A look that fails (the exchange already retried within the
// read deadline; 429 and Retry-After slow it down) settles nothing: its waiters are due again
// later, and end DeadlineExceeded at their own deadline with the last problem.
//
// Thread-safe. `done` callbacks run on the watcher's thread, without its
// lock; they must not block. Destruction stops the thread; waits still
// pending end Cancelled.
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <stop_token>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "providers/infra/infra_provider.h"

namespace cairn {

class InfraProvider::KindWatcher {
 public:
  KindWatcher(InfraProvider& provider, const KindWire& wire);
  ~KindWatcher();
  KindWatcher(const KindWatcher&) = delete;
  KindWatcher& operator=(const KindWatcher&) = delete;

  void Add(const WaitRequest& req, std::function<void(WaitResponse)> done) EXCLUDES(mu_);
  // Requests sent so far (listing pages and GETs).
  int requests() const { return requests_.load(); }

 private:
  struct Waiter {
    WaitRequest req;
    std::string canonical_id;
    std::function<void(WaitResponse)> done;
    Clock::time_point started;
    Clock::time_point due;
    Clock::time_point deadline;
    int looks = 0;          // looks that did not settle it
    bool in_round = false;  // due in the listing being read (watcher thread only)
    // Set after a create that answered not ready: when the wait began, to
    // teach the ReadyEstimate how long readiness took.
    std::optional<Clock::time_point> learning;
    std::optional<RemoteResource> last_seen;  // what a timeout reports
    std::string last_status;                  // for the timeout message
    std::string last_problem;                 // a failed look, for the timeout message
    std::vector<Diagnostic> diagnostics;
  };
  using Finished = std::vector<std::pair<std::function<void(WaitResponse)>, WaitResponse>>;

  void Run(std::stop_token stop) EXCLUDES(mu_);
  // One round over the due waiters (only the watcher's thread touches
  // waiters' fields after Add; mu_ guards the list).
  void Look(const std::vector<Waiter*>& due, bool list, std::stop_token stop, Finished& finished)
      EXCLUDES(mu_);
  // A waiter's resource as fetched by one GET.
  void LookOne(Waiter& w, std::stop_token stop, Finished& finished);
  // Settles `w` with `obj` (the resource as the API shows it) or, if that
  // does not end it and `reschedule`, schedules its next look. True when
  // settled.
  bool Consider(Waiter& w, const Value& obj, Finished& finished, bool reschedule);
  void Reschedule(Waiter& w, Finished& finished);
  void Finish(Waiter& w, WaitResponse response, Finished& finished);

  InfraProvider& provider_;
  const KindWire& wire_;
  Clock& clock_;
  std::atomic<int> requests_{0};

  mutable Mutex mu_;
  CondVar cv_;
  std::list<Waiter> waiters_ GUARDED_BY(mu_);  // the list; see Look
  std::stop_source wake_ GUARDED_BY(mu_);      // ends the current sleep
  Clock::time_point sleeping_until_ GUARDED_BY(mu_);
  // Asleep until the listing gap ends, with enough waiters due to list: a
  // new waiter cannot change that, so Add does not wake the thread.
  bool listing_gated_ GUARDED_BY(mu_) = false;
  Clock::time_point last_listing_{};  // watcher thread only
  bool listed_once_ = false;          // watcher thread only
  size_t pages_ = 1;                  // pages of the last listing; watcher thread only
  bool list_usable_ = true;           // false once a listing failed for good
  std::jthread thread_;               // last: started once the rest exists
};

}  // namespace cairn
