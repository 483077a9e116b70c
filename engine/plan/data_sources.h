// Data sources (`kind: data`): existing resources the stack reads but does
// not manage, read at plan time: by id with one GET, by filter through the
// kind's list endpoint (one listing per kind, however many data sources
// filter it). A missing resource, or a filter that matches none or several,
// is an error naming the data document.
#pragma once

#include <functional>
#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/config.h"
#include "engine/provider/provider.h"

namespace cairn {

struct DataSourcesResult {
  // "data.KIND.NAME" -> the resource's attributes, "id" included.
  std::map<std::string, Value> values;
  std::vector<Diagnostic> diagnostics;
  bool ok() const { return !HasErrors(diagnostics); }
};

DataSourcesResult ReadDataSources(const std::vector<DataConfig>& data, Provider& provider,
                                  std::stop_token stop);

}  // namespace cairn
