// AnsweringProvider: a Provider for the fuzz targets that run apply or the
// journal's recovery on hostile input (a saved plan, a corrupted state). It
// checks what it is asked to prepare as the real provider does
// (providers/infra: a create or update spec must be an object without
// unknown values) and answers every call at once as an API would for a
// well-behaved resource: a create makes it, with the request's fields; a
// wait finds it running, or gone; a listing shows one resource per kind.
// Thread-safe (it keeps no state).
#pragma once

#include <string>

#include "base/value.h"
#include "engine/provider/provider.h"

namespace cairn::fuzz {

class AnsweringProvider final : public Provider {
 public:
  ReadResponse Read(const ReadRequest& req, std::stop_token) override {
    return {Status::Ok(), Remote(req.kind, req.id, Value::object()), {}};
  }
  ListResponse List(const ListRequest& req, std::stop_token) override {
    ListResponse r;
    r.resources.push_back(Remote(req.kind, "listed-1", Value{{"name", "api"}}));
    return r;
  }
  Result<PreparedMutation> Prepare(const PrepareRequest& req) override {
    PreparedMutation m;
    m.kind = req.kind;
    m.action = req.action;
    m.id = req.id;
    m.method = req.action == Action::kCreate   ? "POST"
               : req.action == Action::kUpdate ? "PATCH"
                                               : "DELETE";
    m.path = "/" + req.kind + (req.id.empty() ? "" : "/" + req.id);
    if (req.action != Action::kDelete) {
      if (!req.spec.is_object()) return Status::InvalidArgument("spec must be an object");
      if (ContainsUnknown(req.spec)) return Status::InvalidArgument("unknown value in spec");
      m.body = req.spec.dump(-1, ' ', false, Value::error_handler_t::replace);
    }
    return m;
  }
  CreateResponse Create(const CreateRequest& req, std::stop_token) override {
    CreateResponse r;
    r.resource = Remote(req.mutation.kind, "made-" + std::to_string(req.idempotency_key.size()),
                        Body(req.mutation.body));
    return r;
  }
  UpdateResponse Update(const UpdateRequest& req, std::stop_token) override {
    UpdateResponse r;
    r.resource = Remote(req.mutation.kind, req.mutation.id, Body(req.mutation.body));
    return r;
  }
  DeleteResponse Delete(const DeleteRequest&, std::stop_token) override { return {}; }
  WaitResponse Wait(const WaitRequest& req, std::stop_token) override {
    WaitResponse r;
    if (req.target == WaitTarget::kReady) r.resource = Remote(req.kind, req.id, Value::object());
    return r;
  }

 private:
  // What a journaled body holds, which a corrupted state may make anything.
  static Value Body(const std::string& text) {
    auto v = ParseJson(text);
    return v.ok() && v->is_object() ? *v : Value::object();
  }
  static RemoteResource Remote(const std::string& kind, const std::string& id, Value attrs) {
    attrs["id"] = id;
    attrs["status"] = "running";
    return {kind, id, std::move(attrs)};
  }
};

}  // namespace cairn::fuzz
