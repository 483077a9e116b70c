// InfraProvider: the Provider for the Infrastructure Management API (both the
// control-plane API under /api/v1 and the preview API under /v1), over an
// HttpTransport. Everything it knows about a kind comes from that kind's
// x-cairn descriptor (providers/infra/kind_wire.h); there is no per-kind code.
//
// Semantics the engine relies on:
//   - Read: GET collection/{id}; 404 is OK with no resource.
//   - List: GET collection?limit=N, following either pagination shape to the
//     end; `requests` counts the pages.
//   - Prepare: the exact request, deterministic bytes (nlohmann dump() of an
//     object with sorted keys). Refuses (InvalidArgument) unknown values,
//     fields the kind does not have, unsafe ids, and anything that looks like
//     private key material (PEM "PRIVATE KEY" blocks, PuTTY key files): such a
//     spec never reaches the network.
//   - Create/Update/Delete send a PreparedMutation with its Idempotency-Key.
//     Retried, always with the same key and the same body bytes: 429 after
//     Retry-After seconds; 5xx, network errors and 409 idempotency_key_in_use
//     (the first attempt is still executing) after exponential backoff with
//     jitter; all within Options::operation_deadline (then DeadlineExceeded).
//     Any other 4xx fails at once with a Diagnostic whose code is the
//     server's error code. `replayed` reports Idempotent-Replayed: true.
//     Preview-API creates (which that API cannot deduplicate, spec 4.3
//     rule 6) are never sent again blindly once an attempt failed with its
//     outcome unknown: before each resend the kind is listed, and the one
//     resource of that name that IsResultOf the request is adopted
//     (`found_by_name`); if the listing fails, the create fails with
//     Unavailable (outcome unknown: the journal entry stays for recovery).
//     Delete of a missing resource is OK with `already_gone`.
//   - Before an update or delete of a kind whose responses carry
//     customerStatus, the resource is read and, while its
//     customerStatus.actions.edit (update) / .delete (delete) flag is false,
//     read again with backoff until the deadline, instead of sending a request
//     the server would refuse; a 409 action_not_allowed answer (the flag
//     changed in between) goes back to that waiting. The read is skipped when
//     a listing or read of the last 10 s showed the flag offered (a destroy
//     right after its refresh costs one request per resource, not two).
//   - Watch(kReady) (and Wait, which blocks on it) ends when attribute
//     "status" equals the kind's ready.status; customer status "failed" ends
//     it with FailedPrecondition and a Diagnostic (code: the reasonCode,
//     detail: the guidance); the timeout is DeadlineExceeded.
//     WaitRequest::timeout <= 0 means the kind's ready.timeout_seconds.
//     Kinds without `ready` are ready once they exist. Watch(kDeleted) ends
//     at 404 (or customer status "deleted").
//     Waits hold no thread of the caller's: one watcher per kind
//     (kind_watcher.h) answers all of them, from one paginated listing
//     (the pages refresh reads) when several are due, or one GET each when
//     fewer are due than the listing has pages. A resource missing from the
//     listing is confirmed with a GET before it is called gone. After a
//     create, the first look comes after the kind's learnt first-poll
//     delay (providers/ready_estimate.h), which each such wait teaches;
//     later ones every tenth of the time waited (within min_poll_interval
//     and max_poll_interval), and listings of a kind never come closer than
//     1 / max_lists_per_second.
//   - Reads and lists retry like mutations (they are safe to repeat).
//   - Reference attributes (x-cairn.references) are canonicalised with
//     CanonicalId (providers/infra/canonical_id.h).
// Every request carries Authorization: Bearer <token>, Accept and (with a
// body) Content-Type application/json, User-Agent and a fresh X-Request-ID per
// attempt. The token is registered with the redactor at construction; it is
// never logged nor put into a Status or Diagnostic. Each attempt is logged at
// debug level: method, path, HTTP status or error, latency, request id; never
// headers or bodies.
//
// All time and sleeping goes through the Clock. Thread-safe: after
// construction the object is immutable but for the ReadyEstimate, which
// guards itself (jitter uses a thread-local PRNG).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/private_key.h"
#include "engine/provider/provider.h"
#include "providers/backoff.h"
#include "providers/http_transport.h"
#include "providers/infra/kind_wire.h"
#include "providers/ready_estimate.h"

namespace cairn {

class InfraProvider final : public Provider {
 public:
  struct Options {
    std::string endpoint;  // base URL without /v1, e.g. "http://127.0.0.1:8080"
    std::string token;     // bearer token (from CAIRN_TOKEN, never a manifest)
    std::chrono::milliseconds connect_timeout{5'000};
    // Attempts that could not connect before a call gives up with
    // Unreachable: an API that is not there fails a command in seconds, not
    // after the whole retry deadline. Other failures retry until it.
    int max_unreachable_attempts = 3;
    std::chrono::milliseconds request_timeout{30'000};  // one HTTP attempt
    std::chrono::seconds operation_deadline{600};       // all attempts of one call
    // All attempts of one Read or List (refresh): an unreachable API fails a
    // plan within a minute instead of retrying for the mutation deadline.
    std::chrono::seconds read_deadline{60};
    BackoffPolicy retry_backoff{std::chrono::milliseconds(200), std::chrono::milliseconds(10'000),
                                2.0};  // 5xx, network errors, key in use
    // Wait and action-flag polling. Starts short and doubles: a resource that
    // is ready within milliseconds (most, on a fast API) costs one short
    // sleep, while a slow one costs only a few more polls than a longer first
    // delay would (12 polls over its first 30 s, then one per 10 s). After a
    // create, the first poll waits instead what creates of that kind have
    // been taking (ReadyEstimate, starting at `initial`), and later polls
    // double from there.
    BackoffPolicy poll_backoff{std::chrono::milliseconds(5), std::chrono::milliseconds(10'000),
                               2.0};
    // The first-poll estimate of a kind before any wait has taught it: none,
    // so the first wait of a kind looks at once (on an API that provisions at
    // once, every later one too; on a slow one, one look that misses).
    std::chrono::microseconds first_look_initial{0};
    // While waits are pending, a resource is looked at again every tenth of
    // the time it has waited, within these bounds; a kind is listed at most
    // max_lists_per_second times a second, and at most
    // max_list_pages_per_second pages a second (its listings spaced by
    // what the last one's pages take at that rate: a second apart at
    // 10,000 objects).
    std::chrono::milliseconds min_poll_interval{50};
    std::chrono::milliseconds max_poll_interval{2'000};
    double max_lists_per_second = 10;
    double max_list_pages_per_second = 50;
    // Keep what each listed or read object offers (customerStatus.actions),
    // so that an update or delete right after needs no read of its own.
    // False for a provider that only reads (`cairn plan`, `cairn drift`):
    // at 100,000 listed objects that memory cost a plan 0.4 s of CPU and
    // 100 MB of its peak.
    bool remember_actions = true;
    std::string user_agent = "cairn";
    int page_limit = 200;  // `limit` of list requests
  };

  // `kinds`: per kind its x-cairn object (LoadKindDescriptors()). A
  // descriptor ParseKindWire refuses makes every call on that kind fail with
  // InvalidArgument; descriptor_status() reports the first such problem.
  // `transport` and `clock` must outlive the provider.
  InfraProvider(Options options, const std::map<std::string, Value>& kinds,
                HttpTransport& transport, Clock& clock);
  // Stops the watchers; waits still pending end Cancelled.
  ~InfraProvider() override;

  // OK when every descriptor parsed.
  const Status& descriptor_status() const { return descriptor_status_; }
  // The parsed descriptor of `kind`, or nullptr.
  const KindWire* wire(const std::string& kind) const;

  ReadResponse Read(const ReadRequest& req, std::stop_token stop) override;
  ListResponse List(const ListRequest& req, std::stop_token stop) override;
  Result<PreparedMutation> Prepare(const PrepareRequest& req) override;
  CreateResponse Create(const CreateRequest& req, std::stop_token stop) override;
  UpdateResponse Update(const UpdateRequest& req, std::stop_token stop) override;
  DeleteResponse Delete(const DeleteRequest& req, std::stop_token stop) override;
  WaitResponse Wait(const WaitRequest& req, std::stop_token stop) override;
  void Watch(const WaitRequest& req, std::function<void(WaitResponse)> done) override
      EXCLUDES(watchers_mu_);

  // The requests the watchers have sent (listing pages and GETs), for
  // benchmarks and tests.
  int watcher_requests() const EXCLUDES(watchers_mu_);

 private:
  struct Outcome;     // one finished exchange (after retries); infra_provider.cc
  class KindWatcher;  // kind_watcher.h
  friend class KindWatcher;

  Result<const KindWire*> Lookup(const std::string& kind) const;
  // One request, retried as the class comment says until a final answer
  // (OK status; any HTTP status) or a final failure (non-OK status with a
  // diagnostic). When given, `before_resend` is asked before every retry
  // once an attempt has failed with its outcome unknown (network error,
  // 5xx): a resource it returns ends the exchange as Outcome::found; an
  // error ends it with Unavailable (still unknown), as sending again could
  // make a second resource.
  Outcome Exchange(
      const std::string& method, const std::string& path, const std::string& body,
      const std::string& idempotency_key, Clock::time_point deadline, std::stop_token stop,
      const std::function<Result<std::optional<RemoteResource>>()>& before_resend = {});
  // GET collection/{id}: the unwrapped wire object, nullopt on 404. Errors
  // are returned with their diagnostics appended to `diags`.
  Result<std::optional<Value>> Fetch(const KindWire& wire, const std::string& id,
                                     Clock::time_point deadline, std::stop_token stop,
                                     std::vector<Diagnostic>* diags);
  // Polls until the customerStatus action `flag` is offered. OK also when
  // the resource is gone (`*gone` set).
  Status AwaitAction(const KindWire& wire, const std::string& id, const char* flag,
                     Clock::time_point deadline, std::stop_token stop, bool* gone,
                     std::vector<Diagnostic>* diags);
  // Update and delete: awaits the action `flag` (kinds with customerStatus),
  // then sends; a 409 action_not_allowed (the flags are informational, the
  // server decides) goes back to waiting, all within `deadline`. `*gone`: the
  // resource was found missing before anything was sent.
  Outcome SendGated(const KindWire& wire, const PreparedMutation& m, const std::string& key,
                    const char* flag, Clock::time_point deadline, std::stop_token stop, bool* gone);
  // Every object of the collection (all pages), unwrapped, as the API shows
  // them, handed to `each` as its page is read: a listing of 100,000 is
  // never held whole. `*requests` counts the pages read. A status `each`
  // returns that is not OK ends the listing with it.
  Status ListEach(const KindWire& wire, Clock::time_point deadline, std::stop_token stop,
                  int* requests, std::vector<Diagnostic>* diags,
                  const std::function<Status(Value&&)>& each);
  // ListEach's objects, collected.
  Result<std::vector<Value>> ListRaw(const KindWire& wire, Clock::time_point deadline,
                                     std::stop_token stop, int* requests,
                                     std::vector<Diagnostic>* diags);
  // What the resource `obj` (as the API shows it) means for `req`: true when
  // it ends the wait, with `out` filled (ready, failed or deleted).
  bool Settle(const KindWire& wire, const WaitRequest& req, const Value& obj,
              WaitResponse* out) const;
  // The wait's end when its resource is gone (404): done for kDeleted,
  // NotFound for kReady.
  void SettleGone(const KindWire& wire, const WaitRequest& req, WaitResponse* out) const;
  Result<Value> Unwrap(const KindWire& wire, const HttpResponse& resp) const;
  // The RemoteResource of an enveloped single-resource answer.
  Result<RemoteResource> ToResource(const KindWire& wire, const HttpResponse& resp) const;
  Status CheckMutation(const PreparedMutation& m, Action action, const std::string& key) const;
  Clock::time_point DeadlineFromNow(std::chrono::seconds d) const;

  Options options_;
  HttpTransport& transport_;
  Clock& clock_;
  std::map<std::string, KindWire> wires_;
  std::map<std::string, Status> broken_;  // kind -> why its descriptor was refused
  Status descriptor_status_;
  ReadyEstimate ready_estimate_;
  // The customerStatus.actions each resource showed last, and when (from a
  // listing: refresh or a watcher; or a read). An update or delete shortly
  // after needs no read of its own to know the server will not refuse it.
  // What is older than kSeenFresh is of no use and is dropped, so that a
  // long-lived provider (`cairn watch`, listing a project again and again)
  // keeps about one listing's worth.
  static constexpr std::chrono::seconds kSeenFresh{10};
  void RememberActions(const KindWire& wire, const Value& obj) EXCLUDES(seen_mu_);
  std::optional<bool> OfferedRecently(const std::string& id, const char* flag) EXCLUDES(seen_mu_);
  struct SeenActions {
    Clock::time_point at;
    Value actions;
  };
  Mutex seen_mu_;
  std::unordered_map<std::string, SeenActions> seen_ GUARDED_BY(seen_mu_);  // by canonical id
  Clock::time_point seen_pruned_at_ GUARDED_BY(seen_mu_);

  mutable Mutex watchers_mu_;
  std::map<std::string, std::unique_ptr<KindWatcher>> watchers_ GUARDED_BY(watchers_mu_);
};

// True when any string of `v` (keys included) holds private key material,
// by the engine's one rule (base/private_key.h).
bool ValueHasPrivateKey(const Value& v);

}  // namespace cairn
