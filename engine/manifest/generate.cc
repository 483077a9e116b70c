#include "engine/manifest/generate.h"

#include <yaml-cpp/yaml.h>

#include "base/identifiers.h"
#include "engine/manifest/expr.h"

namespace cairn {
namespace {

// A JSON value as YAML; strings escaped as literal text (no `${`).
void Emit(YAML::Emitter& out, const Value& v) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [k, item] : v.items()) {
      out << YAML::Key << k << YAML::Value;
      Emit(out, item);
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const auto& item : v) Emit(out, item);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    // Quoted, so that "true", "123" or "null" stay strings.
    out << YAML::DoubleQuoted << v.get<std::string>();
  } else if (v.is_boolean()) {
    out << v.get<bool>();
  } else if (v.is_number_integer()) {
    out << v.get<int64_t>();
  } else if (v.is_number()) {
    out << v.get<double>();
  } else {
    out << YAML::Null;
  }
}

// `v` with every string written as literal text.
Value Escaped(const Value& v) {
  if (v.is_string()) return EscapeTemplateLiteral(v.get<std::string>());
  if (!v.is_structured()) return v;
  Value out = v;
  for (auto& item : out) item = Escaped(item);
  return out;
}

}  // namespace

std::string GenerateManifests(const std::vector<ExistingResource>& resources,
                              const SchemaRegistry& registry,
                              const std::map<std::string, std::string>& known_ids) {
  std::vector<std::string> aliases;
  for (const std::string& kind : registry.kinds()) {
    if (!registry.IdAlias(kind).empty()) aliases.push_back(registry.IdAlias(kind));
  }
  // An id of `kind` the stack knows, as a reference; else the literal.
  auto reference = [&](const std::string& kind, const Value& v) -> Value {
    if (!v.is_string()) return v;
    auto it = known_ids.find(CanonicalIdWith(v.get<std::string>(), aliases));
    if (it == known_ids.end() || it->second.rfind(kind + ".", 0) != 0) {
      return EscapeTemplateLiteral(v.get<std::string>());
    }
    return "${" + it->second + ".id}";
  };
  std::string text;
  for (const ExistingResource& r : resources) {
    const std::string& kind = r.address.kind;
    const auto& refs = registry.References(kind);
    Value spec = Value::object();
    for (const std::string& field : registry.Fields(kind)) {
      auto it = r.attributes.find(field);
      if (it == r.attributes.end() || it->is_null() || registry.IsComputed(kind, field)) continue;
      Value v = *it;
      if (auto ref = refs.find(field); ref != refs.end()) {
        if (v.is_array()) {
          for (auto& item : v) item = reference(ref->second, item);
        } else {
          v = reference(ref->second, v);
        }
      } else {
        v = Escaped(v);
      }
      spec[field] = std::move(v);
    }
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << kind << YAML::Key << "name"
        << YAML::Value << r.address.name << YAML::Key << "spec" << YAML::Value;
    Emit(out, spec);
    out << YAML::EndMap;
    text += (text.empty() ? "" : "---\n") + std::string(out.c_str()) + "\n";
  }
  return text;
}

}  // namespace cairn
