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
  // kind -> canonical id -> listed object, and its value in the live view
  // once an address took it: moved there, not copied (copies were two
  // fifths of the refresh at 100,000 resources).
  struct Listed {
    RemoteResource* resource;
    const std::optional<Value>* live = nullptr;
  };
  std::map<std::string, std::unordered_map<std::string, Listed>> by_id;
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
  for (auto& [kind, resources] : result.listed) {
    auto& ids = by_id[kind];
    ids.reserve(resources.size());
    for (auto& r : resources) ids[canonical(r.id)] = {&r};
  }
  // The state's addresses come in order: each is the live view's last.
  auto live_value = [&](const std::string& addr, std::optional<Value> value) {
    return &result.live.emplace_hint(result.live.end(), addr, std::move(value))->second;
  };
  for (const auto& [addr, rs] : state.resources) {
    if (failed_kinds.count(rs.kind)) continue;
    auto& ids = by_id[rs.kind];
    if (auto it = ids.find(canonical(rs.id)); it != ids.end()) {
      Listed& listed = it->second;
      // A second address tracking the same object (a state edited by
      // hand) gets a copy.
      listed.live = listed.live ? live_value(addr, *listed.live)
                                : live_value(addr, std::move(listed.resource->attributes));
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
