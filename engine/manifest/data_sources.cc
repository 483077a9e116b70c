#include "engine/manifest/data_sources.h"

#include <map>

#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {
namespace {

// What `type:` of a data document may be.
std::vector<std::string> StackAndKinds(const SchemaRegistry& registry) {
  std::vector<std::string> kinds = registry.kinds();
  kinds.push_back("stack");
  return kinds;
}

}  // namespace

DataSources LoadDataSources(const std::vector<const ManifestDocument*>& docs,
                            const SchemaRegistry& registry, const EvalSetting& eval,
                            std::vector<Diagnostic>& diags) {
  DataSources out;
  std::map<std::string, SourceLocation> first;
  for (const ManifestDocument* doc_ptr : docs) {
    const ManifestDocument& doc = *doc_ptr;
    SourceLocation name_loc = NodeLoc(doc.file, ChildNode(doc.node, "name"));
    if (!doc.value.contains("type") || !doc.value["type"].is_string()) {
      AddError(diags, doc.value.contains("type") ? "wrong_type" : "missing_field",
               "a data document needs type: the kind of resource it reads", doc.location,
               "one of " + JoinNames(registry.kinds()) + ", or stack (another stack's outputs)");
      continue;
    }
    DataConfig d;
    d.kind = doc.value["type"].get<std::string>();
    d.name = doc.name;
    d.location = doc.location;
    d.name_location = name_loc;
    SourceLocation type_loc = NodeLoc(doc.file, ChildNode(doc.node, "type"));
    if (d.kind == "stack") {
      if (auto [it, inserted] = first.emplace(d.Address(), name_loc); !inserted) {
        AddError(diags, "duplicate_data", d.Address() + " is declared twice", name_loc,
                 "first declared at " + LocationText(it->second));
        continue;
      }
      out.addresses.insert(d.Address());
      out.stacks.push_back(doc_ptr);
      continue;
    }
    bool stack_only = false;
    for (const char* key : {"dir", "backend", "workspace", "defaults"}) {
      if (!doc.value.contains(key)) continue;
      AddError(diags, "invalid_value",
               std::string(key) + " applies to stack data sources (type: stack) only",
               KeyLoc(doc.file, doc.node, key));
      stack_only = true;
    }
    if (stack_only) continue;
    if (!registry.HasKind(d.kind)) {
      AddError(diags, "unknown_kind", "unknown kind \"" + d.kind + "\" in a data document",
               type_loc, DidYouMean(d.kind, StackAndKinds(registry)));
      continue;
    }
    if (auto [it, inserted] = first.emplace(d.Address(), name_loc); !inserted) {
      AddError(diags, "duplicate_data", d.Address() + " is declared twice", name_loc,
               "first declared at " + LocationText(it->second));
      continue;
    }
    out.addresses.insert(d.Address());
    const bool by_id = doc.value.contains("id"), by_filter = doc.value.contains("filter");
    if (by_id == by_filter) {
      AddError(diags, by_id ? "invalid_value" : "missing_field",
               "a data document reads by id or by filter, " +
                   std::string(by_id ? "not both" : "and has neither"),
               doc.location, "id: THE_ID, or filter: {name: NAME, region: REGION}");
      continue;
    }
    if (by_id) {
      Value v = eval(doc, "id", "a data document");
      if (!v.is_string() || v.get<std::string>().empty()) {
        AddError(diags, "wrong_type", "id must be a non-empty string",
                 NodeLoc(doc.file, ChildNode(doc.node, "id")));
        continue;
      }
      d.id = v.get<std::string>();
    } else {
      Value f = eval(doc, "filter", "a data document");
      SourceLocation at = NodeLoc(doc.file, ChildNode(doc.node, "filter"));
      bool ok = f.is_object() && !f.empty();
      for (auto it = f.begin(); ok && it != f.end(); ++it) {
        if ((it.key() != "name" && it.key() != "region") || !it->is_string()) {
          AddError(diags, "invalid_value",
                   "filter \"" + it.key() + "\": a data filter matches name and region, as strings",
                   at);
          ok = false;
          break;
        }
        d.filter[it.key()] = it->get<std::string>();
      }
      if (!ok) {
        if (!f.is_object() || f.empty()) {
          AddError(diags, "wrong_type", "filter must be a mapping of name and/or region", at);
        }
        continue;
      }
    }
    out.data.push_back(std::move(d));
  }
  return out;
}

}  // namespace cairn
