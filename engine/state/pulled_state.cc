#include "engine/state/pulled_state.h"

#include <algorithm>
#include <cctype>

#include "engine/address.h"

namespace cairn {
namespace {

// Where each resource's address string is written: the first `"address":
// "..."` pair holding it. A scan of the text, as the JSON parser keeps no
// positions; a text written by hand in another layout still gets its
// diagnostics, at the file.
std::map<std::string, SourceLocation> LocateAddresses(const std::string& text,
                                                      const std::string& file) {
  std::map<std::string, SourceLocation> out;
  static constexpr std::string_view kKey = "\"address\"";
  int line = 1;
  size_t line_start = 0, counted = 0;
  for (size_t at = text.find(kKey); at != std::string::npos; at = text.find(kKey, at + 1)) {
    size_t p = at + kKey.size();
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    if (p >= text.size() || text[p] != ':') continue;
    ++p;
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
    if (p >= text.size() || text[p] != '"') continue;
    size_t end = p + 1;
    while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
    if (end >= text.size()) break;
    auto value = ParseJson(std::string_view(text).substr(p, end + 1 - p));
    if (!value.ok() || !value->is_string()) continue;
    for (; counted < p; ++counted) {
      if (text[counted] == '\n') {
        ++line;
        line_start = counted + 1;
      }
    }
    out.emplace(value->get<std::string>(),
                SourceLocation{file, line, static_cast<int>(p - line_start) + 1,
                               static_cast<int>(end + 1 - p)});
  }
  return out;
}

Diagnostic Problem(std::string summary, SourceLocation at, std::string detail = "") {
  return {Severity::kError, "invalid_state", std::move(summary), std::move(detail), std::move(at)};
}

}  // namespace

std::string PulledStateText(const StateSnapshot& state) {
  std::vector<const ResourceState*> sorted;
  for (const auto& [addr, rs] : state.resources) sorted.push_back(&rs);
  std::sort(sorted.begin(), sorted.end(), [](const ResourceState* a, const ResourceState* b) {
    return AddressTextLess(a->address, b->address);
  });
  Value resources = Value::array();
  for (const ResourceState* rs : sorted) {
    resources.push_back({{"address", rs->address},
                         {"kind", rs->kind},
                         {"id", rs->id},
                         {"attributes", rs->attributes},
                         {"depends_on", rs->depends_on},
                         {"schema_version", rs->schema_version}});
    if (!rs->tainted.empty()) resources.back()["tainted"] = rs->tainted;
  }
  Value j = {{"format_version", kPulledStateFormat},
             {"lineage", state.lineage},
             {"serial", state.serial},
             {"sequence", state.sequence},
             {"resources", resources},
             {"outputs", state.outputs},
             {"sensitive_outputs", state.sensitive_outputs}};
  return j.dump(2, ' ', false, Value::error_handler_t::replace) + "\n";
}

PulledState ParsePulledState(const std::string& text, const std::string& file) {
  PulledState out;
  const SourceLocation whole{file, 0, 0, 1};
  auto refuse = [&](const std::string& why) {
    out.diagnostics.push_back(
        Problem("not a state printed by 'cairn state pull': " + why, whole,
                "'cairn state pull' prints one; 'cairn state push' takes nothing else"));
    return out;
  };
  Result<Value> parsed = ParseJson(text);
  if (!parsed.ok()) return refuse(parsed.status().message());
  const Value& j = *parsed;
  auto non_negative = [](const Value& v) { return v.is_number_integer() && v.get<int64_t>() >= 0; };
  if (!j.is_object() || !j.contains("format_version") || !j.contains("resources")) {
    return refuse("no format_version and resources");
  }
  if (!j["format_version"].is_number_integer() ||
      j["format_version"].get<int64_t>() != kPulledStateFormat) {
    return refuse("format_version " + j["format_version"].dump() + " (this Cairn reads " +
                  std::to_string(kPulledStateFormat) + ")");
  }
  if (!j.contains("lineage") || !j["lineage"].is_string() ||
      j["lineage"].get<std::string>().empty() || !j.contains("serial") ||
      !non_negative(j["serial"]) || (j.contains("sequence") && !non_negative(j["sequence"])) ||
      !j["resources"].is_array() || !j.contains("outputs") || !j["outputs"].is_object()) {
    return refuse("it needs a lineage, a serial, resources (a list) and outputs (an object)");
  }
  StateSnapshot& st = out.state;
  st.lineage = j["lineage"].get<std::string>();
  st.serial = j["serial"].get<int64_t>();
  st.sequence = j.value("sequence", int64_t{0});
  out.locations = LocateAddresses(text, file);
  auto at = [&](const std::string& address) {
    auto it = out.locations.find(address);
    return it == out.locations.end() ? whole : it->second;
  };
  size_t index = 0;
  for (const Value& r : j["resources"]) {
    ++index;
    if (!r.is_object() || !r.contains("address") || !r["address"].is_string()) {
      out.diagnostics.push_back(
          Problem("resource " + std::to_string(index) + " has no address", whole));
      continue;
    }
    ResourceState rs;
    rs.address = r["address"].get<std::string>();
    const SourceLocation where = at(rs.address);
    // The state's keys: a resource address in canonical form, or the
    // object a create_before_destroy replace deposed there.
    auto key = StateKey::Parse(rs.address);
    if (!key || key->ToString() != rs.address) {
      out.diagnostics.push_back(
          Problem("\"" + rs.address + "\" is not a resource address", where,
                  key ? "the state writes it " + key->ToString()
                      : "addresses look like KIND.NAME, KIND.NAME[2] or KIND.NAME[\"key\"]"));
      continue;
    }
    auto is = [&](const char* name, auto check) { return r.contains(name) && check(r[name]); };
    const bool complete =
        is("kind", [&](const Value& v) { return v == key->resource.kind; }) &&
        is("id", [](const Value& v) { return v.is_string(); }) &&
        is("attributes", [](const Value& v) { return v.is_object(); }) &&
        is("depends_on",
           [](const Value& v) {
             return v.is_array() &&
                    std::all_of(v.begin(), v.end(), [](const Value& d) { return d.is_string(); });
           }) &&
        is("schema_version", [](const Value& v) { return v.is_number_integer(); }) &&
        (!r.contains("tainted") || r["tainted"].is_string());
    if (!complete) {
      out.diagnostics.push_back(Problem(rs.address + " needs kind (" + key->resource.kind +
                                            "), id (a string), attributes (an object), "
                                            "depends_on (a list of addresses) and schema_version",
                                        where));
      continue;
    }
    rs.kind = key->resource.kind;
    rs.id = r["id"].get<std::string>();
    rs.attributes = r["attributes"];
    for (const Value& d : r["depends_on"]) rs.depends_on.push_back(d.get<std::string>());
    rs.schema_version = r["schema_version"].get<int>();
    rs.tainted = r.value("tainted", "");
    if (st.resources.count(rs.address)) {
      out.diagnostics.push_back(Problem(rs.address + " is there twice", where));
      continue;
    }
    st.resources.emplace(rs.address, std::move(rs));
  }
  for (const auto& [name, v] : j["outputs"].items()) st.outputs[name] = v;
  if (!j.contains("sensitive_outputs")) {
    for (const auto& [name, v] : st.outputs) st.sensitive_outputs.insert(name);
  } else if (!j["sensitive_outputs"].is_array()) {
    out.diagnostics.push_back(Problem("sensitive_outputs is not a list of names", whole));
  } else {
    for (const Value& n : j["sensitive_outputs"]) {
      if (!n.is_string()) {
        out.diagnostics.push_back(
            Problem("sensitive_outputs holds something that is not a name", whole));
        break;
      }
      st.sensitive_outputs.insert(n.get<std::string>());
    }
  }
  return out;
}

}  // namespace cairn
