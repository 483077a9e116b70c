#include "engine/manifest/references.h"

#include <algorithm>

#include "base/schema/schema_registry.h"
#include "base/schema/suggest.h"

namespace cairn {
std::vector<std::string> DeclaredNames(const DeclaredResources& declared, const std::string& kind,
                                       const std::vector<ModuleStep>& module) {
  std::vector<std::string> out;
  for (const auto& [base, g] : declared.groups) {
    if (g.kind == kind && g.module == module) out.push_back(g.name);
  }
  return out;
}

std::variant<std::vector<size_t>, std::string> ReferenceTargets(const DeclaredResources& declared,
                                                                const ResourceAddress& addr,
                                                                bool splat, bool want_all,
                                                                const ResourceGroup& g) {
  using Mode = ResourceGroup::Mode;
  std::string base = addr.BaseString();
  bool no_index = std::holds_alternative<std::monostate>(addr.index);
  if (g.mode == Mode::kSingle) {
    if (!no_index || splat) {
      return base + " has neither count nor for_each; refer to it without an index";
    }
    return g.instances;
  }
  if (splat || (no_index && want_all)) return g.instances;
  if (no_index) {
    std::string how = g.mode == Mode::kCount ? "[0]" : "[\"KEY\"]";
    return base + " has " + (g.mode == Mode::kCount ? "count" : "for_each") +
           "; name one instance (" + base + how + ") or all of them (" + base + "[*])";
  }
  for (size_t i : g.instances) {
    if (declared.resources[i].address.index == addr.index) return std::vector<size_t>{i};
  }
  if (g.mode == Mode::kCount && !std::holds_alternative<int>(addr.index)) {
    return base + " has count; index it with a number";
  }
  if (g.mode == Mode::kForEach && !std::holds_alternative<std::string>(addr.index)) {
    return base + " has for_each; index it with a quoted key";
  }
  return addr.ToString() + " does not exist: " + base + " has " +
         std::to_string(g.instances.size()) +
         (g.instances.size() == 1 ? " instance" : " instances");
}

ResolvedReference ResolveReference(const ReferenceUse& use, const DeclaredResources& declared) {
  ResolvedReference out;
  const Expression& e = *use.expr;
  const ResourceAddress& t = e.target;
  const SchemaRegistry& registry = declared.registry;
  auto fail = [&](std::string code, std::string summary, std::string detail = "",
                  bool even_derived = false) {
    if (!use.derived || even_derived) {
      out.diagnostics.push_back({Severity::kError, std::move(code), std::move(summary),
                                 std::move(detail), *use.location});
    }
    return out;
  };
  if (!registry.HasKind(t.kind)) {
    return fail("unknown_reference",
                "reference to unknown kind \"" + t.kind + "\" in " + e.ToString(),
                DidYouMean(t.kind, registry.kinds()));
  }
  auto g = declared.groups.find(t.BaseString());
  if (g == declared.groups.end()) {
    return fail("unknown_reference", "reference to undeclared resource " + t.BaseString(),
                DidYouMean(t.name, DeclaredNames(declared, t.kind, t.module)));
  }
  // Every instance when its index is known only at apply, or when the
  // resource is used whole (`length(instance.web)`, `instance.web[*].id`),
  // whatever its mode.
  auto targets = ReferenceTargets(declared, t, false, e.splat, g->second);
  if (auto* msg = std::get_if<std::string>(&targets)) return fail("invalid_index", *msg);
  std::vector<size_t>& ids = std::get<std::vector<size_t>>(targets);
  // Used whole, its attributes are checked where they are read.
  if (!e.attr.empty() && !registry.HasAttribute(t.kind, e.attr)) {
    std::string hint = DidYouMean(e.attr, registry.Attributes(t.kind));
    return fail("unknown_attribute", t.kind + " has no attribute \"" + e.attr + "\"",
                (hint.empty() ? "" : hint + "\n") + "attributes of " + t.kind + ": " +
                    JoinNames(registry.Attributes(t.kind)));
  }
  const bool computed = e.attr.empty() || registry.IsComputed(t.kind, e.attr);
  bool self = use.from >= 0 &&
              std::find(ids.begin(), ids.end(), static_cast<size_t>(use.from)) != ids.end();
  if (self && e.attr.empty()) {
    return fail("self_reference",
                declared.resources[use.from].address.ToString() + " cannot refer to itself",
                "read one of its fields or another resource's attribute");
  }
  if (self && computed) {
    return fail("self_reference",
                declared.resources[use.from].address.ToString() +
                    " cannot see its own computed attribute \"" + e.attr + "\"",
                "\"" + e.attr + "\" is known only after this resource is created");
  }
  if (!computed) {
    bool unset = std::any_of(ids.begin(), ids.end(), [&](size_t id) {
      const Value& s = declared.resources[id].spec;
      return !s.is_object() || !s.contains(e.attr);
    });
    if (unset) {
      return fail(
          "unset_attribute",
          (e.splat ? t.BaseString() + "[*]" : t.ToString()) + " does not set \"" + e.attr + "\"",
          "only fields written in its spec and computed attributes (" +
              JoinNames(registry.ComputedNames(t.kind)) + ") can be referred to");
    }
  }
  // Schema-declared reference fields must point at the right kind's id.
  if (use.from >= 0 && use.exact) {
    size_t slash = use.pointer.find('/', 1);
    std::string field = std::string(
        use.pointer.substr(1, slash == std::string::npos ? std::string::npos : slash - 1));
    const auto& refs = registry.References(declared.resources[use.from].kind);
    auto want = refs.find(field);
    int depth = static_cast<int>(std::count(use.pointer.begin(), use.pointer.end(), '/'));
    if (want != refs.end() && depth <= 2) {
      if (want->second != t.kind) {
        return fail("reference_kind_mismatch",
                    "field \"" + field + "\" must refer to " + want->second + ", not to " + t.kind,
                    "use an id such as ${" + want->second + ".NAME.id}", /*even_derived=*/true);
      }
      if (e.attr != "id") {
        return fail("reference_kind_mismatch",
                    "field \"" + field + "\" takes an id, not " +
                        (e.attr.empty() ? "the whole " + t.kind : e.attr),
                    "use ${" + t.ToString() + (e.splat ? "[*]" : "") + ".id}",
                    /*even_derived=*/true);
      }
    }
  }
  out.ok = true;
  out.targets = std::move(ids);
  return out;
}

}  // namespace cairn
