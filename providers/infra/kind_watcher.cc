#include "providers/infra/kind_watcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <utility>

#include "base/redact.h"
#include "providers/infra/canonical_id.h"

namespace cairn {
namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

// A look due sooner than this is taken now: putting the thread to sleep and
// waking it would cost more than the wait.
constexpr microseconds kShortestSleep{50};

// What reading one listing page costs, in GETs (a round trip each against
// the parsing of a page of 200 objects), measured on loopback.
constexpr size_t kGetsPerPage = 8;

// The ReadyEstimate a wait learns from: creates per kind, deletes apart.
std::string EstimateKey(const WaitRequest& req) {
  return req.target == WaitTarget::kDeleted ? req.kind + " (delete)" : req.kind;
}

double Jitter() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

std::string SecondsText(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

// A look that failed for good: waiting longer cannot help.
bool Permanent(const Status& st) {
  return st.code() == StatusCode::kInvalidArgument || st.code() == StatusCode::kInternal ||
         st.code() == StatusCode::kFailedPrecondition;
}

}  // namespace

InfraProvider::KindWatcher::KindWatcher(InfraProvider& provider, const KindWire& wire)
    : provider_(provider),
      wire_(wire),
      clock_(provider.clock_),
      sleeping_until_(Clock::time_point::max()),
      thread_([this](std::stop_token stop) { Run(stop); }) {}

InfraProvider::KindWatcher::~KindWatcher() {
  thread_.request_stop();
  {
    MutexLock lock(mu_);
    wake_.request_stop();
  }
  cv_.NotifyAll();
  thread_.join();
}

void InfraProvider::KindWatcher::Add(const WaitRequest& req,
                                     std::function<void(WaitResponse)> done) {
  Waiter w;
  w.req = req;
  w.canonical_id = CanonicalId(req.id);
  w.done = std::move(done);
  const auto now = clock_.Now();
  const std::chrono::seconds timeout = req.timeout.count() > 0 ? req.timeout : wire_.ready_timeout;
  w.deadline = now + timeout;
  w.started = now;
  w.due = now;
  // After a create that answered "not ready", or a delete the API accepted
  // (it takes its lifecycle step too), the first look comes when such waits
  // of this kind have been ending, and each teaches the estimate.
  bool learnable = false;
  if (req.target == WaitTarget::kReady && req.just_created && wire_.ready_status) {
    // The create answered a moment ago: if not ready then, not ready now.
    const Value& attrs = req.just_created->attributes;
    auto status = attrs.find("status");
    learnable = status != attrs.end() && status->is_string() && *status != *wire_.ready_status &&
                *status != "failed";
  } else if (req.target == WaitTarget::kDeleted && wire_.ready_status) {
    learnable = true;
  }
  if (learnable) {
    microseconds first = provider_.ready_estimate_.FirstPoll(EstimateKey(req));
    w.due = now + duration_cast<Clock::duration>(first * (0.75 + 0.25 * Jitter()));
    w.learning = now;
    if (first < kShortestSleep) {
      // Such waits have been over by the time their request was answered
      // (an API that provisions at once): one GET on the caller's thread,
      // as quick as handing it over, settles it; a miss goes to the
      // watcher and teaches the estimate to wait.
      Finished finished;
      LookOne(w, {}, finished);
      if (!w.done) {
        for (auto& [done, response] : finished) done(std::move(response));
        return;
      }
      provider_.ready_estimate_.NotYet(EstimateKey(req),
                                       duration_cast<microseconds>(clock_.Now() - now));
    }
  }
  MutexLock lock(mu_);
  // Asleep until a listing may be taken again, the watcher lists then: a
  // waiter due sooner would be swept into that listing anyway. Waking it
  // for each one (a scan of every waiter) made an apply of 10,000
  // quadratic.
  if (w.due < sleeping_until_ && !listing_gated_) wake_.request_stop();
  waiters_.push_back(std::move(w));
  cv_.NotifyAll();
}

void InfraProvider::KindWatcher::Run(std::stop_token stop) {
  const InfraProvider::Options& options = provider_.options_;
  MutexUnlockableLock lock(mu_);
  while (!stop.stop_requested()) {
    // Listings are at least this far apart: 1 / max_lists_per_second, and
    // for a large collection the time its pages take at
    // max_list_pages_per_second (a listing reads every object, settled or
    // not: back to back, those of an apply of 10,000 instances came to 800
    // pages, 80 MB of JSON for the server to write and the client to read).
    const auto listing_gap = duration_cast<Clock::duration>(std::chrono::duration<double>(
        std::max(1.0 / std::max(options.max_lists_per_second, 0.01),
                 static_cast<double>(pages_) / std::max(options.max_list_pages_per_second, 0.01))));
    if (waiters_.empty()) {
      // No deadline: with no waiter there is nothing to time out. Add pushes
      // under mu_ and notifies; the destructor's stop ends the wait.
      cv_.Wait(mu_, stop, [&]() REQUIRES(mu_) { return !waiters_.empty(); });
      continue;
    }
    const auto now = clock_.Now();
    std::vector<Waiter*> due;
    Clock::time_point next = Clock::time_point::max();
    // Once one waiter is due, those due within the listing gap come along:
    // jittered first looks would otherwise come due one at a time, a GET
    // each, where one listing answers them all.
    Clock::time_point earliest = Clock::time_point::max();
    for (const Waiter& w : waiters_) earliest = std::min({earliest, w.due, w.deadline});
    const Clock::time_point horizon =
        earliest <= now + kShortestSleep ? now + listing_gap : now + kShortestSleep;
    for (Waiter& w : waiters_) {
      Clock::time_point when = std::min(w.due, w.deadline);
      if (when <= horizon) {
        due.push_back(&w);
      } else {
        next = std::min(next, when);
      }
    }
    // A listing reads every object of the collection (up to 200 a page); a
    // GET one. Listing pays once the due waiters outnumber what its pages
    // cost to read: about eight GETs' worth of objects a page.
    const bool list = list_usable_ && due.size() > kGetsPerPage * pages_;
    const bool gated = list && listed_once_ && now < last_listing_ + listing_gap;
    if (gated) {
      due.clear();
      next = std::min(next, last_listing_ + listing_gap);
    }
    if (due.empty()) {
      wake_ = std::stop_source();
      sleeping_until_ = next;
      listing_gated_ = gated;
      // A copy shares wake_'s stop state; the callback below uses it, since
      // it runs on the thread that stops the watcher, without mu_.
      std::stop_source wake = wake_;
      std::stop_token woken = wake.get_token();
      lock.Unlock();
      {
        // Until the earliest due time or deadline of any waiter (`next`), so
        // no wait outlives its deadline. Woken sooner by a new waiter due
        // before that: sleeping_until_ and wake_ are set under mu_ before
        // it is let go, and Add compares under mu_, so none is missed. Or by
        // the end of the watcher.
        std::stop_callback on_stop(stop, [&] { wake.request_stop(); });
        clock_.SleepFor(next - now, woken);
      }
      lock.Lock();
      sleeping_until_ = Clock::time_point::max();
      listing_gated_ = false;
      continue;
    }
    lock.Unlock();
    Finished finished;
    Look(due, list, stop, finished);
    lock.Lock();
    // Only this thread removes waiters: settled ones have no `done` left.
    waiters_.remove_if([](const Waiter& w) { return !w.done; });
    lock.Unlock();
    for (auto& [done, response] : finished) done(std::move(response));
    lock.Lock();
  }
  // Stopping: every wait still pending ends, cancelled.
  Finished cancelled;
  for (Waiter& w : waiters_) {
    WaitResponse r;
    r.status = Status::Cancelled("waiting for " + wire_.kind + " " + w.req.id + " cancelled");
    cancelled.emplace_back(std::move(w.done), std::move(r));
  }
  waiters_.clear();
  lock.Unlock();
  for (auto& [done, response] : cancelled) done(std::move(response));
}

void InfraProvider::KindWatcher::Look(const std::vector<Waiter*>& due, bool list,
                                      std::stop_token stop, Finished& finished) {
  if (!list) {
    for (Waiter* w : due) LookOne(*w, stop, finished);
    return;
  }
  const Clock::time_point listing_began = clock_.Now();
  last_listing_ = listing_began;
  listed_once_ = true;
  const auto deadline = clock_.Now() + provider_.options_.read_deadline;
  int pages = 0;
  std::vector<Diagnostic> diags;
  auto objects = provider_.ListRaw(wire_, deadline, stop, &pages, &diags);
  requests_ += pages;
  if (!objects.ok()) {
    spdlog::debug("watch {}: listing failed: {}", wire_.kind, objects.status().ToString());
    if (Permanent(objects.status())) {
      // A listing that cannot answer (malformed, refused) will not: one
      // GET per wait from now on.
      list_usable_ = false;
      for (Waiter* w : due) LookOne(*w, stop, finished);
      return;
    }
    for (Waiter* w : due) {
      w->last_problem = Redact(objects.status().message());
      Reschedule(*w, finished);
    }
    return;
  }
  pages_ = std::max(1, pages);
  // The listed objects by id: only the waiters' are mapped (Settle), not
  // every object of the collection (at 10,000 instances, nine in ten
  // listed objects have no waiter by the time a listing is read).
  std::unordered_map<std::string, const Value*> by_id;
  by_id.reserve(objects->size());
  for (const Value& obj : *objects) {
    if (const std::string* id = ResponseId(wire_, obj)) by_id.emplace(CanonicalId(*id), &obj);
  }
  for (Waiter* w : due) w->in_round = true;
  MutexUnlockableLock guard(mu_);  // the list only; Add may push meanwhile
  for (Waiter& w : waiters_) {
    const bool is_due = std::exchange(w.in_round, false);
    if (!w.done) continue;
    auto it = by_id.find(w.canonical_id);
    if (it != by_id.end()) {
      // Shown by the listing: settled now, due or not (one not due keeps
      // its schedule: the first-poll estimate learns from scheduled looks).
      Consider(w, *it->second, finished, /*reschedule=*/is_due);
    } else if (w.req.target == WaitTarget::kDeleted && w.started < listing_began) {
      // Deleted: keyset pages show every record that exists throughout a
      // listing, and this one existed when its wait began, before the
      // listing did. Gone is what its wait is for.
      WaitResponse r;
      provider_.SettleGone(wire_, w.req, &r);
      Finish(w, std::move(r), finished);
    } else if (is_due) {
      // Made after the listing began, or gone: one GET tells.
      guard.Unlock();
      LookOne(w, stop, finished);
      guard.Lock();
    }
  }
}

void InfraProvider::KindWatcher::LookOne(Waiter& w, std::stop_token stop, Finished& finished) {
  const auto deadline = std::min(w.deadline, clock_.Now() + provider_.options_.read_deadline);
  std::vector<Diagnostic> diags;
  auto obj = provider_.Fetch(wire_, w.req.id, deadline, stop, &diags);
  ++requests_;
  if (!obj.ok()) {
    if (Permanent(obj.status())) {
      WaitResponse r;
      r.status = obj.status();
      r.diagnostics = std::move(diags);
      return Finish(w, std::move(r), finished);
    }
    w.last_problem = Redact(obj.status().message());
    return Reschedule(w, finished);
  }
  if (!obj->has_value()) {
    WaitResponse r;
    provider_.SettleGone(wire_, w.req, &r);
    return Finish(w, std::move(r), finished);
  }
  Consider(w, **obj, finished, /*reschedule=*/true);
}

bool InfraProvider::KindWatcher::Consider(Waiter& w, const Value& obj, Finished& finished,
                                          bool reschedule) {
  WaitResponse r;
  if (provider_.Settle(wire_, w.req, obj, &r)) {
    if (w.learning && r.status.ok()) {
      provider_.ready_estimate_.Record(EstimateKey(w.req), /*on_first_poll=*/w.looks == 0,
                                       duration_cast<microseconds>(clock_.Now() - *w.learning));
    }
    Finish(w, std::move(r), finished);
    return true;
  }
  if (r.resource) {
    const Value& attrs = r.resource->attributes;
    auto status = attrs.find("status");
    w.last_status = status != attrs.end() && status->is_string() ? status->get<std::string>() : "";
    w.last_seen = std::move(r.resource);
  }
  w.last_problem.clear();
  if (reschedule) Reschedule(w, finished);
  return false;
}

void InfraProvider::KindWatcher::Reschedule(Waiter& w, Finished& finished) {
  const auto now = clock_.Now();
  if (now >= w.deadline) {
    const bool for_ready = w.req.target == WaitTarget::kReady;
    std::string summary =
        wire_.kind + " " + w.req.id +
        (for_ready ? " not " + wire_.ready_status.value_or("ready") : std::string(" not deleted")) +
        " after " + SecondsText(w.req.timeout.count() > 0 ? w.req.timeout : wire_.ready_timeout) +
        (w.last_status.empty() ? "" : " (status " + w.last_status + ")");
    WaitResponse r;
    r.diagnostics.push_back({Severity::kError,
                             "wait_timeout",
                             summary,
                             w.last_problem.empty() ? "" : "last failure: " + w.last_problem,
                             {}});
    r.status = Status::DeadlineExceeded(Redact(summary));
    r.resource = std::move(w.last_seen);
    return Finish(w, std::move(r), finished);
  }
  // Looks every tenth of the time waited so far: a wait overshoots the
  // moment its resource is ready by about a tenth, whatever the API's pace,
  // while a long one costs few looks (and never fewer than one per
  // max_poll_interval). Never sooner than min_poll_interval.
  const auto& options = provider_.options_;
  auto delay = std::clamp(duration_cast<milliseconds>((now - w.started) / 10),
                          options.min_poll_interval, options.max_poll_interval);
  ++w.looks;
  w.due = now + delay;
}

void InfraProvider::KindWatcher::Finish(Waiter& w, WaitResponse response, Finished& finished) {
  response.diagnostics.insert(response.diagnostics.begin(), w.diagnostics.begin(),
                              w.diagnostics.end());
  finished.emplace_back(std::move(w.done), std::move(response));
  w.done = nullptr;
}

}  // namespace cairn
