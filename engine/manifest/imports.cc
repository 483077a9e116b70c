#include "engine/manifest/imports.h"

#include <cctype>
#include <limits>
#include <map>
#include <variant>

#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"
#include "engine/manifest/locate.h"
#include "engine/manifest/moved.h"

namespace cairn {
namespace {

constexpr const char* kImportAddressHint =
    "kind.name, kind.name[0], kind.name[\"key\"], module.NAME.kind.name; with for_each, "
    "kind.name[each.key]";

// Why `to` cannot take an import when the manifests do not declare it:
// what to do instead.
std::string ImportUndeclaredHint(const ResourceAddress& to, const DeclaredResources& declared) {
  const bool whole = std::holds_alternative<std::monostate>(to.index);
  auto group = declared.groups.find(to.BaseString());
  if (group != declared.groups.end()) {
    if (whole && !group->second.instances.empty()) {
      return to.BaseString() + " has count or for_each: import to one of its instances, such as " +
             declared.resources[group->second.instances.front()].address.ToString();
    }
    return to.BaseString() + " has no such instance: import to one it declares";
  }
  std::string hint = DidYouMean(to.name, DeclaredNames(declared, to.kind, to.module));
  if (!hint.empty()) hint += "\n";
  if (to.module.empty() && whole) {
    return hint +
           "declare it, or let 'cairn plan --generate-config FILE' write its document from the "
           "live object";
  }
  return hint +
         "declare it first ('cairn plan --generate-config' writes documents only for "
         "resources of the stack, without an index)";
}

bool ImportIndexIsLiteral(std::string_view text) {
  if (text == "*") return true;
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string_view ImportTrim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The end of the quoted string starting at `at` (its closing quote), or npos.
size_t ImportQuoteEnd(std::string_view s, size_t at) {
  for (size_t i = at + 1; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<std::vector<ImportIndexExpression>> FindImportIndexExpressions(std::string_view to) {
  std::vector<ImportIndexExpression> out;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] != '[') continue;
    const size_t begin = i + 1;
    size_t j = begin;
    int depth = 0;
    for (; j < to.size(); ++j) {
      if (to[j] == '"') {
        j = ImportQuoteEnd(to, j);
        if (j == std::string_view::npos) return std::nullopt;
      } else if (to[j] == '[' || to[j] == '(') {
        ++depth;
      } else if (to[j] == ')') {
        --depth;
      } else if (to[j] == ']') {
        if (depth == 0) break;
        --depth;
      }
    }
    if (j >= to.size()) return std::nullopt;
    std::string_view inside = ImportTrim(to.substr(begin, j - begin));
    const bool quoted =
        !inside.empty() && inside.front() == '"' && ImportQuoteEnd(inside, 0) == inside.size() - 1;
    if (!quoted && !ImportIndexIsLiteral(inside)) {
      out.push_back({begin, j - begin, std::string(inside)});
    }
    i = j;
  }
  return out;
}

std::optional<std::string> SubstituteImportIndexes(std::string_view to,
                                                   const std::vector<ImportIndexExpression>& found,
                                                   const std::vector<Value>& values,
                                                   std::string& error) {
  std::string out;
  size_t at = 0;
  for (size_t k = 0; k < found.size() && k < values.size(); ++k) {
    const Value& v = values[k];
    AddressIndex index;
    if (v.is_string()) {
      index = v.get<std::string>();
    } else if (v.is_number_integer() && v.get<long long>() >= 0 &&
               v.get<long long>() <= std::numeric_limits<int>::max()) {
      index = static_cast<int>(v.get<long long>());
    } else {
      error = "the index " + found[k].text + " must be a string or a whole number, not " +
              ValueTypeNoun(v);
      return std::nullopt;
    }
    std::string text = IndexText(index);  // "[...]"
    out.append(to.substr(at, found[k].begin - at));
    out.append(text.substr(1, text.size() - 2));
    at = found[k].begin + found[k].size;
  }
  out.append(to.substr(at));
  return out;
}

Imports LoadImports(const std::vector<ImportInstance>& instances, const DeclaredResources& declared,
                    const std::vector<RemovedConfig>& removed, bool allow_undeclared) {
  Imports out;
  std::vector<Diagnostic>& diags = out.diagnostics;
  std::map<std::string, SourceLocation> first_to;                       // by address
  std::map<std::pair<std::string, std::string>, std::string> first_id;  // kind, id -> address
  for (const ImportInstance& in : instances) {
    ImportConfig ic;
    ic.location = in.location;
    ic.id_location = in.id_location;
    bool ok = true;
    if (!in.id.is_string()) {
      AddError(diags, "wrong_type", "id must be a string, not " + ValueTypeNoun(in.id),
               in.id_location, "the object's id in the API, as 'cairn import ADDRESS ID' takes it");
      ok = false;
    } else if (in.id.get_ref<const std::string&>().empty()) {
      AddError(diags, "invalid_value", "id must not be empty", in.id_location,
               "the object's id in the API, as 'cairn import ADDRESS ID' takes it");
      ok = false;
    } else {
      ic.id = in.id.get<std::string>();
    }
    auto to = ResourceAddress::Parse(in.to);
    if (!to) {
      AddError(diags, "invalid_address",
               ParseModulePath(in.to)
                   ? "to must be a resource instance, not the module path \"" + in.to + "\""
                   : "to must be a resource instance address, not \"" + in.to + "\"",
               in.location, kImportAddressHint);
      continue;
    }
    if (!declared.registry.HasKind(to->kind)) {
      AddError(diags, "unknown_kind", "unknown kind \"" + to->kind + "\" in to", in.location,
               DidYouMean(to->kind, declared.registry.kinds()));
      continue;
    }
    ic.to = std::move(*to);
    const std::string address = ic.to.ToString();
    if (auto [it, inserted] = first_to.emplace(address, in.location); !inserted) {
      AddError(diags, "duplicate_import", address + " is imported twice", in.location,
               "first imported at " + LocationText(it->second) +
                   "; with for_each, put each.key in to's index: " + ic.to.BaseString() +
                   "[each.key]");
      continue;
    }
    if (!ok) continue;
    auto removal = std::find_if(removed.begin(), removed.end(),
                                [&](const RemovedConfig& r) { return r.Matches(ic.to); });
    if (removal != removed.end()) {
      AddError(diags, "import_and_removed",
               address + " is imported, but a removed document removes " + removal->FromText(),
               in.location,
               "removed at " + LocationText(removal->location) + "; keep one of the two");
      continue;
    }
    if (auto [it, inserted] = first_id.emplace(std::pair{ic.to.kind, ic.id}, address); !inserted) {
      AddError(
          diags, "duplicate_import_id",
          ic.to.kind + " " + ic.id + " is imported twice, at " + it->second + " and " + address,
          in.id_location,
          "one object of the API is tracked at one address: apply would manage it twice");
      continue;
    }
    if (!Declares(declared, ic.to)) {
      const bool writable = allow_undeclared && ic.to.module.empty() &&
                            std::holds_alternative<std::monostate>(ic.to.index) &&
                            !declared.groups.count(ic.to.BaseString());
      if (!writable) {
        AddError(diags, "import_to_undeclared",
                 address + " is not a resource instance the manifests declare", in.location,
                 ImportUndeclaredHint(ic.to, declared));
        continue;
      }
      ic.declared = false;
    }
    out.imports.push_back(std::move(ic));
  }
  return out;
}

}  // namespace cairn
