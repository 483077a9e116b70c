#include "engine/plan/refresh.h"

#include <future>

namespace cairn {

RefreshResult Refresh(const StateSnapshot& state, Provider& provider,
                      const RefreshOptions& options) {
  RefreshResult result;
  auto canonical = [&](const std::string& id) {
    return options.canonical_id ? options.canonical_id(id) : id;
  };
  std::set<std::string> kinds = options.extra_kinds;
  for (const auto& [addr, rs] : state.resources) kinds.insert(rs.kind);

  std::map<std::string, std::future<ListResponse>> lists;
  for (const auto& kind : kinds) {
    lists[kind] = std::async(std::launch::async, [&provider, kind, stop = options.stop] {
      return provider.List(ListRequest{kind}, stop);
    });
  }
  std::map<std::string, std::map<std::string, const RemoteResource*>> by_id;  // kind -> id -> res
  std::set<std::string> failed_kinds;
  for (auto& [kind, fut] : lists) {
    ListResponse resp = fut.get();
    result.requests += resp.requests;
    result.diagnostics.insert(result.diagnostics.end(), resp.diagnostics.begin(),
                              resp.diagnostics.end());
    if (!resp.status.ok()) {
      failed_kinds.insert(kind);
      result.diagnostics.push_back(
          {Severity::kError,
           "refresh_failed",
           "could not list " + kind + " resources: " + resp.status.message(),
           "",
           {}});
      continue;
    }
    result.listed[kind] = std::move(resp.resources);
  }
  for (const auto& [kind, resources] : result.listed) {
    for (const auto& r : resources) by_id[kind][canonical(r.id)] = &r;
  }
  for (const auto& [addr, rs] : state.resources) {
    if (failed_kinds.count(rs.kind)) continue;
    auto& ids = by_id[rs.kind];
    if (auto it = ids.find(canonical(rs.id)); it != ids.end()) {
      result.live[addr] = it->second->attributes;
      continue;
    }
    // Not in the listing: confirm with one GET before calling it gone.
    ReadResponse read = provider.Read(ReadRequest{rs.kind, rs.id}, options.stop);
    ++result.requests;
    if (!read.status.ok()) {
      result.diagnostics.push_back({Severity::kError,
                                    "refresh_failed",
                                    "could not read " + addr + ": " + read.status.message(),
                                    "",
                                    {}});
      continue;
    }
    result.live[addr] =
        read.resource ? std::optional<Value>(read.resource->attributes) : std::nullopt;
  }
  return result;
}

}  // namespace cairn
