#include "providers/provider.h"

namespace cairn {

const char* MutationActionName(MutationAction a) {
  switch (a) {
    case MutationAction::kCreate: return "create";
    case MutationAction::kUpdate: return "update";
    case MutationAction::kDelete: return "delete";
  }
  return "create";
}

ListResponse Provider::FindByName(const std::string& kind, const std::string& name,
                                  std::stop_token stop) {
  ListResponse all = List(ListRequest{kind}, stop);
  if (!all.status.ok()) return all;
  ListResponse out;
  out.requests = all.requests;
  for (auto& r : all.resources) {
    if (r.attributes.value("name", "") == name) out.resources.push_back(std::move(r));
  }
  return out;
}

}  // namespace cairn
