// Provider: the only way the engine reaches an API. One request and one
// response struct per operation; every response carries diagnostics and a
// Status; every call is cancellable through a std::stop_token.
//
// The interface is header-only so that the engine depends on it without
// linking any provider.
//
// Values crossing this interface use the manifest's snake_case field names
// (schemas/<kind>.schema.json), never wire names: the provider maps them.
//
// Mutations are two-step, Prepare() building the exact request (method,
// path, body) without sending it and Create()/Update()/Delete() sending
// that prepared request, so that the engine can journal it first: the
// exactly-once protocol, described once in engine/state/state_store.h. A
// send retries with the same key and body until it succeeds, fails for
// good, or the deadline passes.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/status.h"
#include "base/value.h"
#include "engine/action.h"

namespace cairn {

// A failure of the API as a whole rather than of one request: it cannot be
// reached (code "unreachable"), it refuses the credentials
// ("unauthorized"), or its TLS certificate is not trusted ("tls_untrusted").
// A provider reports it with the same code
// and summary from every call (no call's resource in it), since every
// request would fail alike: the engine says it once and, in an apply,
// starts nothing more.
inline bool IsApiWideFailure(const Diagnostic& d) {
  return d.is_error() &&
         (d.code == "unreachable" || d.code == "unauthorized" || d.code == "tls_untrusted");
}

// Appends `from` to `to`, but an API-wide failure that `to` holds already
// (same code and summary) only once: one diagnostic per cause.
inline void AppendOncePerCause(std::vector<Diagnostic>& to, const std::vector<Diagnostic>& from) {
  for (const Diagnostic& d : from) {
    const bool said = IsApiWideFailure(d) && std::any_of(to.begin(), to.end(), [&](const auto& x) {
                        return x.code == d.code && x.summary == d.summary;
                      });
    if (!said) to.push_back(d);
  }
}

// A resource as the API reports it, in manifest field names, computed
// attributes included. `attributes["id"] == id`.
struct RemoteResource {
  std::string kind;
  std::string id;
  Value attributes = Value::object();
};

// True when `found` can be what a create whose request body was `body` made:
// every field of the body that `found` also has holds the same value there.
// For APIs that cannot deduplicate creates (the preview API), a resource
// found by name is adopted as the result of an earlier attempt only then:
// another stack or a person may use the same name for something else.
inline bool IsResultOf(const RemoteResource& found, const Value& body) {
  if (!body.is_object()) return false;
  for (const auto& [field, v] : body.items()) {
    if (found.attributes.contains(field) && found.attributes[field] != v) return false;
  }
  return true;
}

// Of `candidates` (resources found by name), the one that IsResultOf
// `body`; nullopt when none is, or when more than one could be (then there
// is no telling which).
inline std::optional<RemoteResource> SoleResultOf(std::vector<RemoteResource> candidates,
                                                  const Value& body) {
  std::optional<RemoteResource> found;
  for (auto& r : candidates) {
    if (!IsResultOf(r, body)) continue;
    if (found) return std::nullopt;
    found = std::move(r);
  }
  return found;
}

// Everything needed to send a mutation, and to send it again byte for byte.
struct PreparedMutation {
  std::string kind;
  Action action = Action::kCreate;
  std::string method;  // "POST", "PATCH", "DELETE"
  std::string path;    // e.g. "/api/v1/compute" or "/v1/ssh_keys/key_..."
  std::string body;    // exact JSON body; empty for DELETE
  std::string id;      // remote id for update and delete; empty for create
};

struct ReadRequest {
  std::string kind;
  std::string id;
};
struct ReadResponse {
  Status status;                           // not OK: the read itself failed
  std::optional<RemoteResource> resource;  // nullopt with OK status: it does not exist
  std::vector<Diagnostic> diagnostics;
};

struct ListRequest {
  std::string kind;
};
struct ListResponse {
  Status status;
  std::vector<RemoteResource> resources;  // every live resource of the kind
  int requests = 0;                       // HTTP requests it took (pages)
  std::vector<Diagnostic> diagnostics;
};

struct PrepareRequest {
  std::string kind;
  Action action = Action::kCreate;
  std::string id;  // update, delete
  // create: the whole desired spec; update: only the changed fields (merge
  // patch); delete: unused. No unknown values may remain.
  Value spec = Value::object();
};

struct CreateRequest {
  PreparedMutation mutation;
  std::string idempotency_key;
};
struct CreateResponse {
  Status status;
  std::optional<RemoteResource> resource;  // the created resource as answered
  bool replayed = false;                   // the server replayed a stored response
  // An attempt failed with its outcome unknown, and the resource was then
  // found by name, made by that attempt (APIs that cannot deduplicate).
  bool found_by_name = false;
  std::vector<Diagnostic> diagnostics;
};

struct UpdateRequest {
  PreparedMutation mutation;
  std::string idempotency_key;
};
struct UpdateResponse {
  Status status;
  std::optional<RemoteResource> resource;
  bool replayed = false;
  std::vector<Diagnostic> diagnostics;
};

struct DeleteRequest {
  PreparedMutation mutation;
  std::string idempotency_key;
};
struct DeleteResponse {
  Status status;  // OK also when the resource was already gone
  bool already_gone = false;
  std::vector<Diagnostic> diagnostics;
};

enum class WaitTarget { kReady, kDeleted };
struct WaitRequest {
  std::string kind;
  std::string id;
  WaitTarget target = WaitTarget::kReady;
  std::chrono::seconds timeout{600};
  // The resource as the answer to the create just made showed it, if any.
  // When it shows the resource not yet ready, the wait for kReady starts
  // with one poll delay instead of a read that could only see the same.
  std::optional<RemoteResource> just_created;
};
struct WaitResponse {
  Status status;  // DeadlineExceeded on timeout; FailedPrecondition when it failed
  std::optional<RemoteResource> resource;  // last seen state (ready: the ready resource)
  std::vector<Diagnostic> diagnostics;     // failure reasonCode and guidance, for users
  // Set when the resource itself failed (status failed), not the wait: the
  // API's reason code ("provisioning_failed"), or "resource_failed".
  std::string failed_reason;
};

// Implementations are thread-safe: the engine calls them from many workers.
class Provider {
 public:
  virtual ~Provider() = default;

  virtual ReadResponse Read(const ReadRequest& req, std::stop_token stop) = 0;
  virtual ListResponse List(const ListRequest& req, std::stop_token stop) = 0;
  virtual Result<PreparedMutation> Prepare(const PrepareRequest& req) = 0;
  virtual CreateResponse Create(const CreateRequest& req, std::stop_token stop) = 0;
  virtual UpdateResponse Update(const UpdateRequest& req, std::stop_token stop) = 0;
  virtual DeleteResponse Delete(const DeleteRequest& req, std::stop_token stop) = 0;
  virtual WaitResponse Wait(const WaitRequest& req, std::stop_token stop) = 0;
  // Starts the same wait without holding the caller: returns at once, and
  // calls `done` exactly once with what Wait would have returned, from a
  // thread of the provider's (or, here by default, before returning). The
  // engine sends the next operation meanwhile: a resource provisioning holds
  // no --parallelism slot. `done` must not block.
  virtual void Watch(const WaitRequest& req, std::function<void(WaitResponse)> done) {
    done(Wait(req, {}));
  }

  // Finds live resources of `kind` whose name equals `name` (recovery of an
  // interrupted create on APIs without idempotency): one paginated listing,
  // as the preview API has no filter by name. A resource without a name
  // never matches.
  virtual ListResponse FindByName(const std::string& kind, const std::string& name,
                                  std::stop_token stop) {
    ListResponse all = List(ListRequest{kind}, stop);
    if (!all.status.ok()) return all;
    ListResponse out;
    out.requests = all.requests;
    for (auto& r : all.resources) {
      if (!name.empty() && StringMember(r.attributes, "name") == name)
        out.resources.push_back(std::move(r));
    }
    return out;
  }
};

}  // namespace cairn
