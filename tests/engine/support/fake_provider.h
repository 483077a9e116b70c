// FakeProvider: a scripted in-memory Provider for plan/apply unit tests. It
// records every call, deduplicates creates by Idempotency-Key like the real
// server (same key + same body replays; a different body is a conflict), and
// injects faults: a definite refusal for a named resource, or a response lost
// after the mutation took effect (the case idempotency keys exist for).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "engine/provider/provider.h"

namespace cairn::testing {

class FakeProvider final : public Provider {
 public:
  ReadResponse Read(const ReadRequest& req, std::stop_token stop) override;
  ListResponse List(const ListRequest& req, std::stop_token stop) override;
  Result<PreparedMutation> Prepare(const PrepareRequest& req) override;
  CreateResponse Create(const CreateRequest& req, std::stop_token stop) override;
  UpdateResponse Update(const UpdateRequest& req, std::stop_token stop) override;
  DeleteResponse Delete(const DeleteRequest& req, std::stop_token stop) override;
  WaitResponse Wait(const WaitRequest& req, std::stop_token stop) override;
  // Like the real provider: a wait never holds the caller. Unless readiness
  // is held (HoldReadiness), `done` is called before it returns.
  void Watch(const WaitRequest& req, std::function<void(WaitResponse)> done) override;

  // While held, resources do not become ready (nor gone) until Release:
  // waits pile up, as on an API that provisions slowly.
  void HoldReadiness(bool hold);
  // Ends the held waits for these ids (all when empty) as they stand now.
  void Release(const std::vector<std::string>& ids = {});
  // Waits held right now, their ids, and the most ever held at once.
  int waiting();
  std::vector<std::string> waiting_ids();
  int max_waiting();
  // The most Create/Update/Delete calls in flight at once, ever or since
  // the last ResetMaxInFlight().
  int max_in_flight();
  void ResetMaxInFlight();

  // Creates/updates of a resource with this spec name fail with a 400-like refusal.
  void RefuseName(const std::string& name);
  // A resource with this spec name is made, but its provisioning fails: its
  // status becomes "failed" and waits for it to be ready fail with
  // reasonCode provisioning_failed.
  // `fail` false: the API provisions it again.
  void FailProvisioning(const std::string& name, bool fail = true);
  // Creates and updates of a resource with this spec name take effect with
  // `field` set to `value`, whatever was sent: an API that changes a value
  // it was given.
  void AlterField(const std::string& name, const std::string& field, Value value);
  // While set, every call fails as against an API nobody listens on
  // (Unreachable, with the "unreachable" diagnostic the real provider gives,
  // worded alike for every call); nothing takes effect.
  void SetUnreachable(bool unreachable);
  // The next `n` mutations take effect but their responses are lost (Unavailable).
  void LoseResponses(int n);
  // The next `n` mutations are lost before taking effect (Unavailable).
  void DropRequests(int n);
  // Puts a resource directly, as if made outside Cairn; returns its id.
  std::string Inject(const std::string& kind, Value attributes);
  void Remove(const std::string& kind, const std::string& id);
  // Leaves a resource out of listings (as if created or moved between pages);
  // Read still finds it.
  void HideFromList(const std::string& id);
  // Changes a live attribute, as someone editing it outside Cairn would.
  void Edit(const std::string& kind, const std::string& id, const std::string& field, Value v);
  int reads();

  // Called with each mutation's idempotency key as it is sent, before the
  // fake does anything (from the calling thread, without the fake's lock).
  std::function<void(const std::string& idempotency_key)> on_send;

  // "create network core", "update instance i-2", "delete ssh_key k-1", in call order.
  std::vector<std::string> calls();
  // Live resources of a kind (id -> attributes).
  std::map<std::string, Value> resources(const std::string& kind);
  int mutations_sent();

 private:
  std::mutex mu_;
  std::map<std::string, std::map<std::string, Value>> live_;            // kind -> id -> attrs
  std::map<std::string, std::pair<std::string, RemoteResource>> keys_;  // key -> (body, result)
  std::set<std::string> refused_;
  std::set<std::string> failing_;
  std::set<std::string> hidden_;
  std::map<std::string, std::pair<std::string, Value>> altered_;  // name -> (field, value)
  int reads_ = 0;
  std::vector<std::string> calls_;
  int lose_ = 0;
  bool unreachable_ = false;
  // REQUIRES: mu_ held. Fills `r` as an unreachable API answers; false when reachable.
  template <typename Response>
  bool FailUnreachable(Response& r);
  int drop_ = 0;
  int next_id_ = 1;
  int sent_ = 0;
  bool hold_ = false;
  std::vector<std::pair<WaitRequest, std::function<void(WaitResponse)>>> held_;
  int max_waiting_ = 0;
  int in_flight_ = 0, max_in_flight_ = 0;
  // Counts a mutation in flight for its lifetime.
  struct InFlight {
    FakeProvider& p;
    explicit InFlight(FakeProvider& provider);
    ~InFlight();
  };
  WaitResponse Answer(const WaitRequest& req);  // REQUIRES: mu_ held
};

}  // namespace cairn::testing
