#include "tests/engine/support/fake_provider.h"

#include <algorithm>
#include <condition_variable>
#include <optional>

namespace cairn::testing {

template <typename Response>
bool FakeProvider::FailUnreachable(Response& r) {
  if (!unreachable_) return false;
  r.status = Status::Unreachable("cannot reach the API at http://fake (3 attempts)");
  r.diagnostics.push_back({Severity::kError,
                           "unreachable",
                           "cannot reach the API at http://fake (3 attempts)",
                           "connection refused",
                           {}});
  return true;
}

void FakeProvider::SetUnreachable(bool unreachable) {
  std::lock_guard lock(mu_);
  unreachable_ = unreachable;
}

ReadResponse FakeProvider::Read(const ReadRequest& req, std::stop_token) {
  std::lock_guard lock(mu_);
  ++reads_;
  ReadResponse r;
  if (FailUnreachable(r)) return r;
  auto& m = live_[req.kind];
  auto it = m.find(req.id);
  if (it != m.end()) r.resource = RemoteResource{req.kind, req.id, it->second};
  return r;
}

ListResponse FakeProvider::List(const ListRequest& req, std::stop_token) {
  std::lock_guard lock(mu_);
  ListResponse r;
  r.requests = 1;
  if (FailUnreachable(r)) return r;
  for (const auto& [id, attrs] : live_[req.kind]) {
    if (!hidden_.count(id)) r.resources.push_back({req.kind, id, attrs});
  }
  return r;
}

Result<PreparedMutation> FakeProvider::Prepare(const PrepareRequest& req) {
  if (ContainsUnknown(req.spec)) return Status::InvalidArgument("unknown value in request");
  PreparedMutation m;
  m.kind = req.kind;
  m.action = req.action;
  m.id = req.id;
  m.method = req.action == Action::kCreate   ? "POST"
             : req.action == Action::kUpdate ? "PATCH"
                                             : "DELETE";
  m.path = "/fake/" + req.kind + (req.id.empty() ? "" : "/" + req.id);
  m.body = req.action == Action::kDelete ? "" : req.spec.dump();
  return m;
}

CreateResponse FakeProvider::Create(const CreateRequest& req, std::stop_token) {
  InFlight counted(*this);
  if (on_send) on_send(req.idempotency_key);
  std::lock_guard lock(mu_);
  CreateResponse r;
  if (FailUnreachable(r)) return r;
  ++sent_;
  Value spec = Value::parse(req.mutation.body);
  calls_.push_back("create " + req.mutation.kind + " " + StringMember(spec, "name"));
  if (drop_ > 0) {
    --drop_;
    r.status = Status::Unavailable("connection reset (injected)");
    return r;
  }
  if (auto it = keys_.find(req.idempotency_key); it != keys_.end()) {
    if (it->second.first != req.mutation.body) {
      r.status = Status::Conflict("idempotency_conflict");
      return r;
    }
    r.resource = it->second.second;
    r.replayed = true;
    return r;
  }
  if (refused_.count(StringMember(spec, "name"))) {
    r.status = Status::InvalidArgument("validation_error: refused by the fake");
    return r;
  }
  std::string id = req.mutation.kind + "-" + std::to_string(next_id_++);
  Value attrs = spec;
  attrs["id"] = id;
  attrs["status"] = "running";
  if (auto alt = altered_.find(StringMember(spec, "name")); alt != altered_.end()) {
    attrs[alt->second.first] = alt->second.second;
  }
  live_[req.mutation.kind][id] = attrs;
  RemoteResource res{req.mutation.kind, id, attrs};
  keys_[req.idempotency_key] = {req.mutation.body, res};
  if (lose_ > 0) {
    --lose_;
    r.status = Status::Unavailable("response lost after commit (injected)");
    return r;
  }
  r.resource = res;
  return r;
}

UpdateResponse FakeProvider::Update(const UpdateRequest& req, std::stop_token) {
  InFlight counted(*this);
  if (on_send) on_send(req.idempotency_key);
  std::lock_guard lock(mu_);
  UpdateResponse r;
  if (FailUnreachable(r)) return r;
  ++sent_;
  calls_.push_back("update " + req.mutation.kind + " " + req.mutation.id);
  if (drop_ > 0) {
    --drop_;
    r.status = Status::Unavailable("connection reset (injected)");
    return r;
  }
  auto& m = live_[req.mutation.kind];
  auto it = m.find(req.mutation.id);
  if (it == m.end()) {
    r.status = Status::NotFound("resource_not_found");
    return r;
  }
  Value patch = Value::parse(req.mutation.body);
  if (refused_.count(patch.value("name", it->second.value("name", "")))) {
    r.status = Status::InvalidArgument("validation_error: refused by the fake");
    return r;
  }
  it->second.merge_patch(patch);
  if (auto alt = altered_.find(StringMember(it->second, "name")); alt != altered_.end()) {
    it->second[alt->second.first] = alt->second.second;
  }
  if (lose_ > 0) {
    --lose_;
    r.status = Status::Unavailable("response lost after commit (injected)");
    return r;
  }
  r.resource = RemoteResource{req.mutation.kind, it->first, it->second};
  return r;
}

DeleteResponse FakeProvider::Delete(const DeleteRequest& req, std::stop_token) {
  InFlight counted(*this);
  if (on_send) on_send(req.idempotency_key);
  std::lock_guard lock(mu_);
  DeleteResponse r;
  if (FailUnreachable(r)) return r;
  ++sent_;
  calls_.push_back("delete " + req.mutation.kind + " " + req.mutation.id);
  if (drop_ > 0) {
    --drop_;
    r.status = Status::Unavailable("connection reset (injected)");
    return r;
  }
  r.already_gone = live_[req.mutation.kind].erase(req.mutation.id) == 0;
  if (lose_ > 0) {
    --lose_;
    r.status = Status::Unavailable("response lost after commit (injected)");
  }
  return r;
}

FakeProvider::InFlight::InFlight(FakeProvider& provider) : p(provider) {
  std::lock_guard lock(p.mu_);
  p.max_in_flight_ = std::max(p.max_in_flight_, ++p.in_flight_);
}
FakeProvider::InFlight::~InFlight() {
  std::lock_guard lock(p.mu_);
  --p.in_flight_;
}

WaitResponse FakeProvider::Wait(const WaitRequest& req, std::stop_token) {
  // Through Watch, so that held readiness holds a blocking wait too.
  std::mutex m;
  std::condition_variable cv;
  std::optional<WaitResponse> got;
  Watch(req, [&](WaitResponse r) {
    std::lock_guard lock(m);
    got = std::move(r);
    cv.notify_all();
  });
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return got.has_value(); });
  return std::move(*got);
}

void FakeProvider::Watch(const WaitRequest& req, std::function<void(WaitResponse)> done) {
  std::unique_lock lock(mu_);
  if (hold_) {
    held_.emplace_back(req, std::move(done));
    max_waiting_ = std::max(max_waiting_, static_cast<int>(held_.size()));
    return;
  }
  WaitResponse r = Answer(req);
  lock.unlock();
  done(std::move(r));
}

void FakeProvider::AlterField(const std::string& name, const std::string& field, Value value) {
  std::lock_guard lock(mu_);
  altered_[name] = {field, std::move(value)};
}

void FakeProvider::HoldReadiness(bool hold) {
  std::lock_guard lock(mu_);
  hold_ = hold;
}

void FakeProvider::Release(const std::vector<std::string>& ids) {
  std::vector<std::pair<std::function<void(WaitResponse)>, WaitResponse>> ready;
  {
    std::lock_guard lock(mu_);
    std::erase_if(held_, [&](auto& w) {
      if (!ids.empty() && std::find(ids.begin(), ids.end(), w.first.id) == ids.end()) return false;
      ready.emplace_back(std::move(w.second), Answer(w.first));
      return true;
    });
  }
  for (auto& [done, r] : ready) done(std::move(r));
}

int FakeProvider::waiting() {
  std::lock_guard lock(mu_);
  return static_cast<int>(held_.size());
}

std::vector<std::string> FakeProvider::waiting_ids() {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& w : held_) out.push_back(w.first.id);
  return out;
}

int FakeProvider::max_waiting() {
  std::lock_guard lock(mu_);
  return max_waiting_;
}

int FakeProvider::max_in_flight() {
  std::lock_guard lock(mu_);
  return max_in_flight_;
}

void FakeProvider::ResetMaxInFlight() {
  std::lock_guard lock(mu_);
  max_in_flight_ = in_flight_;
}

WaitResponse FakeProvider::Answer(const WaitRequest& req) {
  WaitResponse r;
  auto& m = live_[req.kind];
  auto it = m.find(req.id);
  if (req.target == WaitTarget::kDeleted) {
    if (it != m.end()) r.status = Status::DeadlineExceeded("still there");
    return r;
  }
  if (it == m.end()) {
    r.status = Status::NotFound("gone while waiting");
    return r;
  }
  if (it->second.is_object() && failing_.count(StringMember(it->second, "name"))) {
    it->second["status"] = "failed";
    r.status = Status::FailedPrecondition(req.kind + " " + req.id + " failed: provisioning_failed");
    // As the real provider reports it: the API's reason code, its guidance.
    r.diagnostics.push_back({Severity::kError,
                             "provisioning_failed",
                             req.kind + " " + req.id + " failed: provisioning_failed",
                             "delete it and create it again",
                             {}});
    r.failed_reason = "provisioning_failed";
  }
  r.resource = RemoteResource{req.kind, req.id, it->second};
  return r;
}

void FakeProvider::FailProvisioning(const std::string& name, bool fail) {
  std::lock_guard lock(mu_);
  if (fail) {
    failing_.insert(name);
  } else {
    failing_.erase(name);
  }
}

void FakeProvider::RefuseName(const std::string& name) {
  std::lock_guard lock(mu_);
  refused_.insert(name);
}
void FakeProvider::LoseResponses(int n) {
  std::lock_guard lock(mu_);
  lose_ = n;
}
void FakeProvider::DropRequests(int n) {
  std::lock_guard lock(mu_);
  drop_ = n;
}
std::string FakeProvider::Inject(const std::string& kind, Value attributes) {
  std::lock_guard lock(mu_);
  std::string id = kind + "-" + std::to_string(next_id_++);
  attributes["id"] = id;
  live_[kind][id] = attributes;
  return id;
}
void FakeProvider::Remove(const std::string& kind, const std::string& id) {
  std::lock_guard lock(mu_);
  live_[kind].erase(id);
}
void FakeProvider::HideFromList(const std::string& id) {
  std::lock_guard lock(mu_);
  hidden_.insert(id);
}
void FakeProvider::Edit(const std::string& kind, const std::string& id, const std::string& field,
                        Value v) {
  std::lock_guard lock(mu_);
  live_[kind][id][field] = std::move(v);
}
int FakeProvider::reads() {
  std::lock_guard lock(mu_);
  return reads_;
}
std::vector<std::string> FakeProvider::calls() {
  std::lock_guard lock(mu_);
  return calls_;
}
std::map<std::string, Value> FakeProvider::resources(const std::string& kind) {
  std::lock_guard lock(mu_);
  return live_[kind];
}
int FakeProvider::mutations_sent() {
  std::lock_guard lock(mu_);
  return sent_;
}

}  // namespace cairn::testing
