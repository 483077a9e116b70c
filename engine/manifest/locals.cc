#include "engine/manifest/locals.h"

#include <algorithm>

#include "base/schema/suggest.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/yaml_value.h"

namespace cairn {

std::map<std::string, DeclaredLocal>& Locals::Declare(size_t s) {
  auto [it, first_time] = by_scope_.try_emplace(s);
  if (!first_time) return it->second;
  std::map<std::string, SourceLocation> first;
  for (size_t i : scopes_[s].local_docs) {
    const ManifestDocument& doc = docs_[i];
    SourceLocation name_loc = NodeLoc(doc.file, ChildNode(doc.node, "name"));
    if (auto [at, inserted] = first.emplace(doc.name, name_loc); !inserted) {
      AddError(diags_, "duplicate_local", "local \"" + doc.name + "\" is declared twice", name_loc,
               "first declared at " + LocationText(at->second));
      continue;
    }
    it->second[doc.name].doc = i;
  }
  return it->second;
}

const std::map<std::string, DeclaredLocal>& Locals::Of(size_t s) { return Declare(s); }

const DeclaredLocal* Locals::Find(size_t s, const std::string& name) const {
  auto scope = by_scope_.find(s);
  if (scope == by_scope_.end()) return nullptr;
  auto it = scope->second.find(name);
  return it == scope->second.end() ? nullptr : &it->second;
}

std::optional<LocalValue> Locals::Get(size_t s, const std::string& name, const SourceLocation& at) {
  std::map<std::string, DeclaredLocal>& locals = Declare(s);
  auto it = locals.find(name);
  if (it == locals.end()) {
    std::vector<std::string> names;
    for (const auto& [n, st] : locals) names.push_back(n);
    AddError(diags_, "unknown_local",
             "reference to undeclared local \"" + name + "\"" +
                 (s == 0 ? "" : " in module " + ModuleScopeName(scopes_, s)),
             at, DidYouMean(name, names));
    return std::nullopt;
  }
  DeclaredLocal& st = it->second;
  const std::string key = scopes_[s].prefix + "local." + name;
  switch (st.state) {
    case DeclaredLocal::kDone:
      return st.value;
    case DeclaredLocal::kFailed:
      return std::nullopt;
    case DeclaredLocal::kEvaluating: {
      auto on_path = std::find(path_.begin(), path_.end(), key);
      std::string cycle;
      for (auto p = on_path; p != path_.end(); ++p) cycle += *p + " -> ";
      const ManifestDocument& doc = docs_[st.doc];
      AddError(diags_, "dependency_cycle", "dependency cycle: " + cycle + key,
               NodeLoc(doc.file, ChildNode(doc.node, "value")),
               "locals refer to each other; break the cycle by removing one of these references");
      return std::nullopt;
    }
    case DeclaredLocal::kDeclared:
      break;
  }
  const ManifestDocument& doc = docs_[st.doc];
  if (!doc.value.contains("value")) {
    AddError(diags_, "missing_field", "missing required field \"value\" in local document",
             doc.location);
    st.state = DeclaredLocal::kFailed;
    return std::nullopt;
  }
  st.state = DeclaredLocal::kEvaluating;
  path_.push_back(key);
  LocalEvaluation e = evaluate_(doc);
  path_.pop_back();
  DeclaredLocal& done = by_scope_[s][name];
  if (!e.ok) {
    done.state = DeclaredLocal::kFailed;
    return std::nullopt;
  }
  done.value.value = FromExpressionForm(e.value);
  for (const auto& [pointer, from] : e.sensitive) {
    done.value.value = done.value.value.MarkedSensitive(from);
  }
  if (!done.value.value.WhollyKnown()) done.value.residual = NodeFromExpressionForm(e.value);
  done.sensitive = std::move(e.sensitive);
  done.state = DeclaredLocal::kDone;
  return done.value;
}

void Locals::EvaluateAll(size_t s) {
  // Get may declare other scopes' locals: by name, not by iterator.
  std::vector<std::string> names;
  for (const auto& [name, st] : Declare(s)) {
    if (st.state == DeclaredLocal::kDeclared) names.push_back(name);
  }
  for (const std::string& name : names) {
    if (Find(s, name)->state == DeclaredLocal::kDeclared) Get(s, name, {});
  }
}

}  // namespace cairn
