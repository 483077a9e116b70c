#include "providers/infra/kind_wire.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "providers/infra/canonical_id.h"

namespace cairn {
namespace {

Status Bad(const std::string& kind, const std::string& what) {
  return Status::InvalidArgument("x-cairn descriptor" + (kind.empty() ? "" : " of " + kind) + ": " +
                                 what);
}

Result<std::string> RequiredString(const Value& obj, const char* key, const std::string& kind) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string() || it->get<std::string>().empty()) {
    return Bad(kind, std::string("\"") + key + "\" must be a non-empty string");
  }
  return it->get<std::string>();
}

// Calls f(part) for each dot-separated part of `path`, as getline(.., '.')
// splits it: "" has no part, and a trailing dot adds none. Allocates
// nothing: it runs for every field of every listed resource.
template <typename F>
void ForEachPathPart(std::string_view path, F f) {
  while (!path.empty()) {
    size_t dot = path.find('.');
    if (!f(path.substr(0, dot))) return;
    if (dot == std::string_view::npos) return;
    path.remove_prefix(dot + 1);
  }
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  ForEachPathPart(path, [&](std::string_view part) {
    parts.emplace_back(part);
    return true;
  });
  return parts;
}

Value CanonicalReference(const Value& v) {
  if (v.is_string()) return CanonicalId(v.get<std::string>());
  if (v.is_array()) {
    Value out = Value::array();
    for (const auto& item : v) out.push_back(CanonicalReference(item));
    return out;
  }
  return v;
}

}  // namespace

const Value* FindPath(const Value& obj, const std::string& path) {
  const Value* cur = &obj;
  ForEachPathPart(path, [&](std::string_view part) {
    auto it = cur->is_object() ? cur->find(part) : cur->end();
    cur = it == cur->end() ? nullptr : &*it;
    return cur != nullptr;
  });
  return cur;
}

void SetPath(Value& obj, const std::string& path, Value v) {
  Value* cur = &obj;
  auto parts = SplitPath(path);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!cur->is_object()) *cur = Value::object();
    cur = &(*cur)[parts[i]];
  }
  if (!cur->is_object()) *cur = Value::object();
  (*cur)[parts.back()] = std::move(v);
}

Result<KindWire> ParseKindWire(const Value& x) {
  if (!x.is_object()) return Bad("", "must be an object");
  auto kind = RequiredString(x, "kind", "");
  if (!kind.ok()) return kind.status();
  KindWire w;
  w.kind = *kind;
  auto wit = x.find("wire");
  if (wit == x.end() || !wit->is_object()) return Bad(w.kind, "\"wire\" must be an object");
  const Value& wire = *wit;

  auto api = RequiredString(wire, "api", w.kind);
  if (!api.ok()) return api.status();
  if (*api != "control-plane" && *api != "preview") {
    return Bad(w.kind, "wire.api must be \"control-plane\" or \"preview\"");
  }
  w.api = *api;
  auto collection = RequiredString(wire, "collection", w.kind);
  if (!collection.ok()) return collection.status();
  w.collection = *collection;
  while (w.collection.size() > 1 && w.collection.back() == '/') w.collection.pop_back();
  if (w.collection.front() != '/') return Bad(w.kind, "wire.collection must start with /");

  if (auto it = wire.find("envelope"); it != wire.end() && !it->is_null()) {
    if (!it->is_string() || it->get<std::string>().empty()) {
      return Bad(w.kind, "wire.envelope must be null or a non-empty string");
    }
    w.envelope = it->get<std::string>();
  }
  auto id_field = RequiredString(wire, "id_field", w.kind);
  if (!id_field.ok()) return id_field.status();
  w.id_field = *id_field;

  auto pagination = RequiredString(wire, "pagination", w.kind);
  if (!pagination.ok()) return pagination.status();
  if (*pagination == "next_cursor") {
    w.pagination = PaginationShape::kNextCursor;
  } else if (*pagination == "next") {
    w.pagination = PaginationShape::kNext;
  } else {
    return Bad(w.kind, "wire.pagination must be \"next_cursor\" or \"next\"");
  }

  auto fit = wire.find("fields");
  if (fit == wire.end() || !fit->is_object()) return Bad(w.kind, "wire.fields must be an object");
  for (const auto& [name, spec] : fit->items()) {
    if (!spec.is_object()) return Bad(w.kind, "wire.fields." + name + " must be an object");
    WireField f;
    f.name = name;
    for (const char* key : {"request", "response"}) {
      auto it = spec.find(key);
      if (it == spec.end() || it->is_null()) continue;
      if (!it->is_string() || it->get<std::string>().empty()) {
        return Bad(w.kind, "wire.fields." + name + "." + key + " must be a non-empty string");
      }
      (std::string(key) == "request" ? f.request : f.response) = it->get<std::string>();
    }
    if (f.response && f.response->rfind("customerStatus.", 0) == 0) w.has_customer_status = true;
    w.fields.emplace(name, std::move(f));
  }

  if (auto it = x.find("references"); it != x.end() && it->is_object()) {
    for (const auto& [name, target] : it->items()) {
      (void)target;
      auto f = w.fields.find(name);
      if (f == w.fields.end()) return Bad(w.kind, "reference \"" + name + "\" is not a wire field");
      f->second.reference = true;
    }
  }

  if (auto it = x.find("immutable"); it != x.end() && it->is_array()) {
    for (const auto& name : *it) {
      if (!name.is_string()) return Bad(w.kind, "immutable must list field names");
      w.immutable.insert(name.get<std::string>());
    }
  }

  if (auto it = wire.find("ready"); it != wire.end() && !it->is_null()) {
    if (!it->is_object()) return Bad(w.kind, "wire.ready must be an object");
    auto status = RequiredString(*it, "status", w.kind);
    if (!status.ok()) return status.status();
    if (w.fields.find("status") == w.fields.end() || !w.fields.at("status").response) {
      return Bad(w.kind, "wire.ready needs a \"status\" field with a response path");
    }
    w.ready_status = *status;
    if (auto t = it->find("timeout_seconds"); t != it->end()) {
      if (!t->is_number_integer() || t->get<int64_t>() <= 0) {
        return Bad(w.kind, "wire.ready.timeout_seconds must be a positive integer");
      }
      w.ready_timeout = std::chrono::seconds(t->get<int64_t>());
    }
  }
  return w;
}

Result<std::map<std::string, Value>> LoadKindDescriptors(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return Status::IOError("cannot read schema directory " + dir + ": " + ec.message());
  std::vector<fs::path> files;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return Status::IOError("cannot read schema directory " + dir + ": " + ec.message());
    const std::string name = it->path().filename().string();
    const std::string suffix = ".schema.json";
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());

  std::map<std::string, Value> out;
  std::map<std::string, std::string> source;  // kind -> file
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::IOError("cannot open " + path.string());
    std::ostringstream text;
    text << in.rdbuf();
    Value doc = Value::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return Status::InvalidArgument(path.string() + ": not valid JSON");
    auto x = doc.find("x-cairn");
    if (!doc.is_object() || x == doc.end()) continue;
    auto parsed = ParseKindWire(*x);
    if (!parsed.ok()) {
      return Status::InvalidArgument(path.string() + ": " + parsed.status().message());
    }
    const std::string& kind = parsed->kind;
    if (source.count(kind)) {
      return Status::InvalidArgument(path.string() + ": kind \"" + kind +
                                     "\" is also described by " + source[kind]);
    }
    source[kind] = path.string();
    out.emplace(kind, *x);
  }
  return out;
}

const std::string* ResponseId(const KindWire& wire, const Value& obj) {
  const Value* id = obj.is_object() ? FindPath(obj, wire.id_field) : nullptr;
  if (id == nullptr || !id->is_string() || id->get_ref<const std::string&>().empty())
    return nullptr;
  return &id->get_ref<const std::string&>();
}

Result<MappedResource> MapResponse(const KindWire& wire, const Value& obj) {
  if (!obj.is_object()) {
    return Status::InvalidArgument(wire.kind + " response is not a JSON object");
  }
  const std::string* id = ResponseId(wire, obj);
  if (id == nullptr) {
    return Status::InvalidArgument(wire.kind + " response has no string \"" + wire.id_field + "\"");
  }
  MappedResource out;
  out.id = *id;
  for (const auto& [name, f] : wire.fields) {
    if (!f.response) continue;
    const Value* v = FindPath(obj, *f.response);
    if (v == nullptr) continue;
    out.attributes[name] = f.reference ? CanonicalReference(*v) : *v;
  }
  out.attributes["id"] = out.id;
  return out;
}

Result<Value> MapRequest(const KindWire& wire, const Value& spec) {
  if (!spec.is_object()) return Status::InvalidArgument(wire.kind + " spec must be an object");
  Value body = Value::object();
  for (const auto& [name, v] : spec.items()) {
    auto f = wire.fields.find(name);
    if (f == wire.fields.end()) {
      return Status::InvalidArgument(wire.kind + " has no field \"" + name + "\"");
    }
    if (!f->second.request) continue;  // computed: the API sets it
    SetPath(body, *f->second.request, v);
  }
  return body;
}

}  // namespace cairn
