// ForwardingProvider: a Provider that passes every call to another one, for
// a provider that changes only some of them (ListingSharingProvider,
// ReadAheadProvider) to override just those. FindByName is left to the
// interface's default, which lists through this provider's own List.
#pragma once

#include "engine/provider/provider.h"

namespace cairn {

class ForwardingProvider : public Provider {
 public:
  // `inner` must outlive this.
  explicit ForwardingProvider(Provider& inner) : inner_(inner) {}

  ReadResponse Read(const ReadRequest& req, std::stop_token stop) override {
    return inner_.Read(req, stop);
  }
  ListResponse List(const ListRequest& req, std::stop_token stop) override {
    return inner_.List(req, stop);
  }
  Result<PreparedMutation> Prepare(const PrepareRequest& req) override {
    return inner_.Prepare(req);
  }
  CreateResponse Create(const CreateRequest& req, std::stop_token stop) override {
    return inner_.Create(req, stop);
  }
  UpdateResponse Update(const UpdateRequest& req, std::stop_token stop) override {
    return inner_.Update(req, stop);
  }
  DeleteResponse Delete(const DeleteRequest& req, std::stop_token stop) override {
    return inner_.Delete(req, stop);
  }
  WaitResponse Wait(const WaitRequest& req, std::stop_token stop) override {
    return inner_.Wait(req, stop);
  }
  void Watch(const WaitRequest& req, std::function<void(WaitResponse)> done) override {
    inner_.Watch(req, std::move(done));
  }

 protected:
  Provider& inner() { return inner_; }

 private:
  Provider& inner_;
};

}  // namespace cairn
