#include "engine/plan/data_sources.h"

#include <algorithm>

namespace cairn {

DataSourcesResult ReadDataSources(const std::vector<DataConfig>& data, Provider& provider,
                                  std::stop_token stop) {
  DataSourcesResult out;
  std::map<std::string, ListResponse> listings;  // by kind, read once
  // Where the data document names it (data_not_found and the rest point at
  // its name, not at its `kind:` line).
  auto at = [](const DataConfig& d) {
    return d.name_location.has_position() ? d.name_location : d.location;
  };
  auto fail = [&](const DataConfig& d, const std::string& code, const std::string& summary,
                  const std::string& detail = "") {
    out.diagnostics.push_back({Severity::kError, code, summary, detail, at(d)});
  };
  // A read that failed: the API's failure as a whole once (unreachable,
  // credentials refused), or this data source's.
  auto read_failed = [&](const DataConfig& d, const std::string& summary,
                         const std::vector<Diagnostic>& from) {
    if (std::any_of(from.begin(), from.end(), IsApiWideFailure)) {
      AppendOncePerCause(out.diagnostics, from);
    } else {
      fail(d, "data_read_failed", summary);
    }
  };
  for (const DataConfig& d : data) {
    std::optional<RemoteResource> found;
    if (!d.id.empty()) {
      ReadResponse r = provider.Read({d.kind, d.id}, stop);
      if (!r.status.ok()) {
        read_failed(d, "could not read " + d.Address() + ": " + r.status.message(), r.diagnostics);
        continue;
      }
      if (!r.resource) {
        fail(d, "data_not_found", d.Address() + ": there is no " + d.kind + " with id " + d.id);
        continue;
      }
      found = std::move(r.resource);
    } else {
      auto it = listings.find(d.kind);
      if (it == listings.end()) it = listings.emplace(d.kind, provider.List({d.kind}, stop)).first;
      const ListResponse& all = it->second;
      if (!all.status.ok()) {
        read_failed(d, "could not list " + d.kind + ": " + all.status.message(), all.diagnostics);
        continue;
      }
      std::vector<const RemoteResource*> matches;
      for (const RemoteResource& r : all.resources) {
        bool match = true;
        for (const auto& [field, want] : d.filter) {
          match = match && r.attributes.value(field, "") == want;
        }
        if (match) matches.push_back(&r);
      }
      std::string filter;
      for (const auto& [field, want] : d.filter) {
        filter += (filter.empty() ? "" : ", ") + field + " = \"" + want + "\"";
      }
      if (matches.empty()) {
        fail(d, "data_not_found", d.Address() + ": no " + d.kind + " has " + filter,
             "the filter matches the live " + d.kind + "s' name and region exactly");
        continue;
      }
      if (matches.size() > 1) {
        std::string ids;
        for (const auto* m : matches) ids += (ids.empty() ? "" : ", ") + m->id;
        fail(d, "data_ambiguous",
             d.Address() + ": " + std::to_string(matches.size()) + " " + d.kind + "s have " +
                 filter + " (" + ids + ")",
             "narrow the filter (add region), or read it by id");
        continue;
      }
      found = *matches.front();
    }
    Value attrs = found->attributes;
    attrs["id"] = found->id;
    out.values[d.Address()] = std::move(attrs);
  }
  return out;
}

}  // namespace cairn
