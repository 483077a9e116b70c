#include "engine/plan/refresh.h"

#include <algorithm>
#include <future>
#include <unordered_map>

namespace cairn {

RefreshResult Refresh(const StateSnapshot& state, Provider& provider, const KindCatalog& catalog,
                      const RefreshOptions& options) {
  RefreshResult result;
  auto canonical = [&](const std::string& id) { return CanonicalId(catalog, id); };
  std::set<std::string> kinds = options.extra_kinds;
  for (const auto& [addr, rs] : state.resources) kinds.insert(rs.kind);

  // One diagnostic per failure: the call's own (its error folded into the
  // detail, its warnings kept), or, when the whole API fails (unreachable,
  // credentials refused), that once for every call it failed.
  auto fail = [&](const std::string& summary, const std::vector<Diagnostic>& from) {
    if (std::any_of(from.begin(), from.end(), IsApiWideFailure)) {
      AppendOncePerCause(result.diagnostics, from);
      return;
    }
    std::string detail;
    for (const Diagnostic& d : from) {
      if (!d.is_error()) {
        result.diagnostics.push_back(d);
      } else if (detail.empty()) {
        detail = "the API's code: " + d.code + (d.detail.empty() ? "" : "; " + d.detail);
      }
    }
    result.diagnostics.push_back({Severity::kError, "refresh_failed", summary, detail, {}});
  };
  std::map<std::string, std::future<ListResponse>> lists;
  for (const auto& kind : kinds) {
    lists[kind] = std::async(std::launch::async, [&provider, kind, stop = options.stop] {
      return provider.List(ListRequest{kind}, stop);
    });
  }
  // kind -> canonical id -> listed object
  std::map<std::string, std::unordered_map<std::string, const RemoteResource*>> by_id;
  std::set<std::string> failed_kinds;
  for (auto& [kind, fut] : lists) {
    ListResponse resp = fut.get();
    result.requests += resp.requests;
    if (!resp.status.ok()) {
      failed_kinds.insert(kind);
      fail("could not list " + kind + " resources: " + resp.status.message(), resp.diagnostics);
      continue;
    }
    result.diagnostics.insert(result.diagnostics.end(), resp.diagnostics.begin(),
                              resp.diagnostics.end());
    result.listed[kind] = std::move(resp.resources);
  }
  for (const auto& [kind, resources] : result.listed) {
    auto& ids = by_id[kind];
    ids.reserve(resources.size());
    for (const auto& r : resources) ids[canonical(r.id)] = &r;
  }
  // The state's addresses come in order: each is the live view's last.
  auto live_value = [&](const std::string& addr, std::optional<Value> value) {
    result.live.emplace_hint(result.live.end(), addr, std::move(value));
  };
  for (const auto& [addr, rs] : state.resources) {
    if (failed_kinds.count(rs.kind)) continue;
    auto& ids = by_id[rs.kind];
    if (auto it = ids.find(canonical(rs.id)); it != ids.end()) {
      live_value(addr, it->second->attributes);
      continue;
    }
    // Not in the listing: confirm with one GET before calling it gone.
    ReadResponse read = provider.Read(ReadRequest{rs.kind, rs.id}, options.stop);
    ++result.requests;
    if (!read.status.ok()) {
      fail("could not read " + addr + ": " + read.status.message(), read.diagnostics);
      continue;
    }
    live_value(addr, read.resource ? std::optional<Value>(std::move(read.resource->attributes))
                                   : std::nullopt);
  }
  return result;
}

}  // namespace cairn
