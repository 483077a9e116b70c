#include "base/schema/schema_registry.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "base/schema/embedded_schemas.h"
#include "base/schema/formats.h"
#include "base/schema/suggest.h"

namespace cairn {

namespace fs = std::filesystem;

struct SchemaRegistry::KindInfo {
  Value doc;
  // `doc` without its "format" keywords, which valijson is given: the
  // formats are custom and checked after it (valijson would throw on a
  // format over a non-string value instead of reporting the type).
  Value validated_doc;
  valijson::Schema schema;
  std::vector<std::string> fields;
  std::vector<std::string> required;
  Value computed = Value::object();
  std::vector<std::string> computed_names;
  std::vector<std::string> immutable;
  std::vector<std::string> grow_only;
  std::vector<std::string> write_only;
  std::string id_alias;
  std::map<std::string, std::string> references;
  Value wire = Value::object();
  std::vector<std::string> attributes;
};

namespace {

const Value& NullValue() {
  static const Value kNull;
  return kNull;
}

template <typename T>
const T& Empty() {
  static const T kEmpty{};
  return kEmpty;
}

std::string EscapePointerToken(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> SplitPointer(const std::string& pointer) {
  std::vector<std::string> out;
  if (pointer.empty()) return out;
  size_t pos = 1;
  while (true) {
    size_t next = pointer.find('/', pos);
    std::string tok =
        pointer.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    std::string un;
    for (size_t i = 0; i < tok.size(); ++i) {
      if (tok[i] == '~' && i + 1 < tok.size()) {
        un += tok[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        un += tok[i];
      }
    }
    out.push_back(std::move(un));
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return out;
}

bool IsDigits(const std::string& s) {
  return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), ::isdigit);
}

// The value at `pointer`, or nullptr.
const Value* ValueAt(const Value& root, const std::string& pointer) {
  const Value* cur = &root;
  for (const auto& seg : SplitPointer(pointer)) {
    if (cur->is_object()) {
      auto it = cur->find(seg);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array() && IsDigits(seg)) {
      size_t i = std::stoul(seg);
      if (i >= cur->size()) return nullptr;
      cur = &(*cur)[i];
    } else {
      return nullptr;
    }
  }
  return cur;
}

const Value* ResolveRef(const Value& root, const Value* schema) {
  for (int depth = 0; schema && schema->is_object() && depth < 8; ++depth) {
    auto it = schema->find("$ref");
    if (it == schema->end() || !it->is_string()) return schema;
    const std::string& ref = it->get_ref<const std::string&>();
    if (ref.rfind("#", 0) != 0) return schema;
    schema = ValueAt(root, ref.substr(1));
  }
  return schema;
}

// The subschema describing the value at `pointer`, or nullptr.
const Value* SubschemaAt(const Value& root, const std::string& pointer) {
  const Value* cur = ResolveRef(root, &root);
  for (const auto& seg : SplitPointer(pointer)) {
    if (!cur || !cur->is_object()) return nullptr;
    const Value* next = nullptr;
    if (auto p = cur->find("properties"); p != cur->end() && p->is_object() && p->contains(seg)) {
      next = &(*p)[seg];
    } else if (auto i = cur->find("items"); i != cur->end() && i->is_object() && IsDigits(seg)) {
      next = &*i;
    } else if (auto a = cur->find("additionalProperties"); a != cur->end() && a->is_object()) {
      next = &*a;
    }
    cur = ResolveRef(root, next);
  }
  return cur;
}

std::string TypeNoun(const std::string& t) {
  if (t == "string") return "a string";
  if (t == "integer") return "an integer";
  if (t == "number") return "a number";
  if (t == "boolean") return "a boolean";
  if (t == "array") return "a list";
  if (t == "object") return "a mapping";
  if (t == "null") return "null";
  return t;
}

std::string ExpectedTypes(const Value* schema) {
  if (!schema || !schema->contains("type")) return "something else";
  const Value& t = (*schema)["type"];
  if (t.is_string()) return TypeNoun(t.get<std::string>());
  std::string out;
  if (t.is_array()) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (i) out += " or ";
      if (t[i].is_string()) out += TypeNoun(t[i].get<std::string>());
    }
  }
  return out;
}

std::string Subject(std::string_view kind, const std::string& pointer) {
  if (pointer.empty()) return std::string(kind) + " spec";
  return "field \"" + PointerToFieldPath(pointer) + "\"";
}

std::string Container(std::string_view kind, const std::string& pointer) {
  if (pointer.empty()) return std::string(kind) + " spec";
  return PointerToFieldPath(pointer);
}

std::string NumberText(const Value& v) {
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == static_cast<double>(static_cast<long long>(d)))
      return std::to_string(static_cast<long long>(d));
  }
  return v.dump();
}

bool IsExpression(const Value* v) {
  return v && v->is_string() && v->get_ref<const std::string&>().find("${") != std::string::npos;
}

std::vector<std::string> PropertyNames(const Value* schema) {
  std::vector<std::string> out;
  if (schema && schema->is_object()) {
    if (auto p = schema->find("properties"); p != schema->end() && p->is_object()) {
      for (auto it = p->begin(); it != p->end(); ++it) out.push_back(it.key());
    }
  }
  return out;
}

void CheckFormats(const Value& root, const Value* schema, const Value& value,
                  const std::string& pointer, Expressions expressions,
                  std::vector<SchemaViolation>& out) {
  schema = ResolveRef(root, schema);
  if (!schema || !schema->is_object()) return;
  if (value.is_string()) {
    auto f = schema->find("format");
    if (f == schema->end() || !f->is_string()) return;
    const std::string& text = value.get_ref<const std::string&>();
    if (expressions == Expressions::kDeferred && text.find("${") != std::string::npos) return;
    if (auto problem =
            CheckFormat(f->get_ref<const std::string&>(), text, FormatLimitsOf(*schema))) {
      SchemaViolation v;
      v.pointer = pointer;
      v.code = "invalid_format";
      v.summary = "field \"" + PointerToFieldPath(pointer) + "\" " + problem->expected;
      v.predicate = problem->Precise();
      if (*f == "openssh-public-key") {
        v.detail = problem->reason;  // key material is never echoed back
      } else if (text.size() <= 80 && IsValidUtf8(text)) {
        v.detail = "got \"" + text + "\"";
      }
      out.push_back(std::move(v));
    }
    return;
  }
  if (value.is_object()) {
    auto p = schema->find("properties");
    if (p == schema->end() || !p->is_object()) return;
    for (auto it = value.begin(); it != value.end(); ++it) {
      auto s = p->find(it.key());
      if (s != p->end())
        CheckFormats(root, &*s, *it, pointer + "/" + EscapePointerToken(it.key()), expressions,
                     out);
    }
  } else if (value.is_array()) {
    auto items = schema->find("items");
    if (items == schema->end() || !items->is_object()) return;
    for (size_t i = 0; i < value.size(); ++i) {
      CheckFormats(root, &*items, value[i], pointer + "/" + std::to_string(i), expressions, out);
    }
  }
}

bool ContainsInvalidUtf8(const Value& v) {
  if (v.is_string()) return !IsValidUtf8(v.get_ref<const std::string&>());
  if (v.is_array()) return std::any_of(v.begin(), v.end(), ContainsInvalidUtf8);
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!IsValidUtf8(it.key()) || ContainsInvalidUtf8(*it)) return true;
    }
  }
  return false;
}

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string QuotedBetween(const std::string& s) {
  size_t last = s.rfind('\'');
  if (last == std::string::npos || last == 0) return "";
  size_t first = s.rfind('\'', last - 1);
  if (first == std::string::npos) return "";
  return s.substr(first + 1, last - first - 1);
}

std::vector<std::string> StringList(const Value& v) {
  std::vector<std::string> out;
  if (v.is_array()) {
    for (const auto& s : v) {
      if (s.is_string()) out.push_back(s.get<std::string>());
    }
  }
  return out;
}

// Removes "format" from every schema object reachable from `schema` (not
// from property maps, whose keys are field names).
void StripFormats(Value& schema) {
  if (!schema.is_object()) return;
  if (auto f = schema.find("format"); f != schema.end() && f->is_string()) schema.erase(f);
  for (const char* map : {"properties", "definitions", "patternProperties"}) {
    if (auto m = schema.find(map); m != schema.end() && m->is_object()) {
      for (auto& sub : *m) StripFormats(sub);
    }
  }
  for (const char* one : {"items", "additionalProperties", "additionalItems", "contains", "not",
                          "if", "then", "else", "propertyNames"}) {
    if (auto o = schema.find(one); o != schema.end()) {
      if (o->is_array()) {
        for (auto& sub : *o) StripFormats(sub);
      } else {
        StripFormats(*o);
      }
    }
  }
  for (const char* list : {"allOf", "anyOf", "oneOf"}) {
    if (auto l = schema.find(list); l != schema.end() && l->is_array()) {
      for (auto& sub : *l) StripFormats(sub);
    }
  }
}

// "a" or "an" before a kind name as it is read aloud ("an ssh_key").
std::string WithArticle(const std::string& noun) {
  bool vowel = !noun.empty() && (std::string("aeiou").find(noun[0]) != std::string::npos ||
                                 noun.rfind("ssh", 0) == 0);
  return (vowel ? "an " : "a ") + noun;
}

// "\"icmp\" or \"any\"" for a list of JSON values.
std::string Alternatives(const Value& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
    out += values[i].dump(-1, ' ', false, Value::error_handler_t::replace);
  }
  return out;
}

// The predicate of a failed "const" at `pointer`: the field's own const, or
// one an if/then/else of the enclosing object sets ("must be \"any\" when
// protocol is \"icmp\" or \"any\"").
std::string ConstPredicate(const Value& root, const std::string& pointer) {
  if (const Value* own = SubschemaAt(root, pointer); own && own->contains("const")) {
    return "must be " + (*own)["const"].dump();
  }
  size_t slash = pointer.rfind('/');
  if (slash == std::string::npos) return "is invalid";
  std::string field = SplitPointer(pointer).back();
  const Value* parent = SubschemaAt(root, pointer.substr(0, slash));
  if (!parent || !parent->is_object()) return "is invalid";
  for (const char* branch : {"then", "else"}) {
    const Value* b = ResolveRef(root, parent->contains(branch) ? &(*parent)[branch] : nullptr);
    if (!b || !b->is_object() || !b->contains("properties")) continue;
    const Value& props = (*b)["properties"];
    if (!props.is_object() || !props.contains(field) || !props[field].contains("const")) continue;
    std::string out = "must be " + props[field]["const"].dump();
    // Say when, if the condition is one property's enum or const.
    const Value* cond = parent->contains("if") ? &(*parent)["if"] : nullptr;
    if (cond && cond->is_object() && cond->contains("properties") &&
        (*cond)["properties"].is_object() && (*cond)["properties"].size() == 1) {
      auto it = (*cond)["properties"].begin();
      const Value& c = *it;
      std::string when;
      if (c.contains("enum") && c["enum"].is_array()) when = Alternatives(c["enum"]);
      if (c.contains("const")) when = c["const"].dump();
      if (!when.empty()) {
        out += std::string(branch == std::string("then") ? " when " : " unless ") + it.key() +
               " is " + when;
      }
    }
    return out;
  }
  return "is invalid";
}

}  // namespace

FormatLimits FormatLimitsOf(const Value& property_schema) {
  FormatLimits limits;
  if (!property_schema.is_object()) return limits;
  auto p = property_schema.find("x-cairn-prefix-length");
  if (p == property_schema.end() || !p->is_object()) return limits;
  if (auto lo = p->find("minimum"); lo != p->end() && lo->is_number_integer())
    limits.min_prefix = lo->get<int>();
  if (auto hi = p->find("maximum"); hi != p->end() && hi->is_number_integer())
    limits.max_prefix = hi->get<int>();
  return limits;
}

std::string PointerToFieldPath(const std::string& pointer) {
  std::string out;
  for (const auto& seg : SplitPointer(pointer)) {
    if (IsDigits(seg) && !out.empty()) {
      out += "[" + seg + "]";
    } else {
      if (!out.empty()) out += ".";
      out += seg;
    }
  }
  return out;
}

SchemaRegistry::~SchemaRegistry() = default;

Result<std::shared_ptr<const SchemaRegistry>> SchemaRegistry::Embedded() {
  // A function-local static: thread-safe initialisation, and valijson parses
  // each schema once however many loaders and servers a process starts.
  static const Result<std::shared_ptr<const SchemaRegistry>> kEmbedded =
      FromDocuments(EmbeddedSchemas(), "embedded schemas");
  return kEmbedded;
}

Result<std::shared_ptr<const SchemaRegistry>> SchemaRegistry::Load(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Status::NotFound("schema directory " + dir + " not found");
  }
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() > 12 && name.substr(name.size() - 12) == ".schema.json")
      paths.push_back(entry.path());
  }
  if (ec) return Status::IOError("cannot list " + dir + ": " + ec.message());
  if (paths.empty()) return Status::NotFound("no *.schema.json files in " + dir);
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::IOError("cannot read " + path.string());
    std::stringstream ss;
    ss << in.rdbuf();
    files.emplace_back(path.filename().string(), ss.str());
  }
  return FromDocuments(files, dir);
}

Result<std::shared_ptr<const SchemaRegistry>> SchemaRegistry::FromDocuments(
    const std::vector<std::pair<std::string, std::string>>& unsorted, const std::string& origin) {
  std::vector<std::pair<std::string, std::string>> files = unsorted;
  std::sort(files.begin(), files.end());
  if (files.empty()) return Status::NotFound("no *.schema.json files in " + origin);
  std::shared_ptr<SchemaRegistry> reg(new SchemaRegistry());
  reg->dir_ = origin;
  for (const auto& [name, text] : files) {
    const std::string path = (fs::path(origin) / name).string();
    if (name.size() <= 12 || name.substr(name.size() - 12) != ".schema.json") {
      return Status::InvalidArgument(path + ": not a *.schema.json file");
    }
    std::string kind = name.substr(0, name.size() - 12);
    auto info = std::make_unique<KindInfo>();
    info->doc = Value::parse(text, nullptr, /*allow_exceptions=*/false);
    if (info->doc.is_discarded()) return Status::InvalidArgument(path + ": not valid JSON");
    const Value& d = info->doc;
    auto bad = [&](const std::string& what) { return Status::InvalidArgument(path + ": " + what); };
    if (!d.is_object() || !d.contains("x-cairn") || !d["x-cairn"].is_object()) {
      return bad("missing the \"x-cairn\" object");
    }
    const Value& x = d["x-cairn"];
    if (x.value("kind", std::string()) != kind) return bad("x-cairn.kind must be \"" + kind + "\"");
    if (!x.contains("computed") || !x["computed"].is_object())
      return bad("x-cairn.computed must be an object");
    if (!x.contains("immutable") || !x["immutable"].is_array())
      return bad("x-cairn.immutable must be a list");
    if (!x.contains("references") || !x["references"].is_object()) {
      return bad("x-cairn.references must be an object");
    }
    if (!x.contains("wire") || !x["wire"].is_object()) return bad("x-cairn.wire must be an object");
    info->validated_doc = d;
    StripFormats(info->validated_doc);
    try {
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
      valijson::adapters::NlohmannJsonAdapter adapter(info->validated_doc);
      parser.populateSchema(adapter, info->schema);
    } catch (const std::exception& e) {
      return bad(std::string("not a valid JSON Schema: ") + e.what());
    }
    info->fields = PropertyNames(&d);
    std::sort(info->fields.begin(), info->fields.end());
    info->required = StringList(d.value("required", Value::array()));
    info->computed = x["computed"];
    for (auto it = info->computed.begin(); it != info->computed.end(); ++it) {
      info->computed_names.push_back(it.key());
    }
    info->immutable = StringList(x["immutable"]);
    if (x.contains("grow_only") && !x["grow_only"].is_array())
      return bad("x-cairn.grow_only must be a list");
    info->grow_only = StringList(x.value("grow_only", Value::array()));
    if (x.contains("write_only") && !x["write_only"].is_array())
      return bad("x-cairn.write_only must be a list");
    info->write_only = StringList(x.value("write_only", Value::array()));
    for (const std::string& f : info->write_only) {
      const Value& props = d.value("properties", Value::object());
      if (!props.contains(f)) return bad("x-cairn.write_only names unknown field \"" + f + "\"");
      const Value& wf = x["wire"].value("fields", Value::object());
      if (wf.contains(f) && wf[f].is_object() && wf[f].contains("response"))
        return bad("x-cairn.write_only field \"" + f +
                   "\" has a response path: the API never returns it");
    }
    if (x.contains("id_alias")) {
      const Value& a = x["id_alias"];
      if (!a.is_string() || a.get<std::string>().empty() || a.get<std::string>().back() != '_')
        return bad("x-cairn.id_alias must be a prefix ending in \"_\" (\"inst_\")");
      info->id_alias = a.get<std::string>();
    }
    for (auto it = x["references"].begin(); it != x["references"].end(); ++it) {
      if (!it->is_string()) return bad("x-cairn.references values must be kind names");
      info->references[it.key()] = it->get<std::string>();
    }
    info->wire = x["wire"];
    std::set<std::string> attrs(info->fields.begin(), info->fields.end());
    attrs.insert(info->computed_names.begin(), info->computed_names.end());
    info->attributes.assign(attrs.begin(), attrs.end());
    reg->kinds_.push_back(kind);
    reg->info_.emplace(kind, std::move(info));
  }
  for (const auto& [kind, info] : reg->info_) {
    for (const auto& [field, target] : info->references) {
      if (!reg->HasKind(target)) {
        return Status::InvalidArgument(kind + ".schema.json: x-cairn.references." + field +
                                       " names unknown kind \"" + target + "\"");
      }
    }
  }
  return std::shared_ptr<const SchemaRegistry>(std::move(reg));
}

const SchemaRegistry::KindInfo* SchemaRegistry::Find(std::string_view kind) const {
  auto it = info_.find(kind);
  return it == info_.end() ? nullptr : it->second.get();
}

bool SchemaRegistry::HasKind(std::string_view kind) const { return Find(kind) != nullptr; }

const Value& SchemaRegistry::Document(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->doc : NullValue();
}

std::string SchemaRegistry::Description(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->doc.value("description", std::string()) : "";
}

const std::vector<std::string>& SchemaRegistry::Fields(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->fields : Empty<std::vector<std::string>>();
}

const std::vector<std::string>& SchemaRegistry::RequiredFields(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->required : Empty<std::vector<std::string>>();
}

const Value& SchemaRegistry::Computed(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->computed : NullValue();
}

std::vector<std::string> SchemaRegistry::ComputedNames(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->computed_names : std::vector<std::string>{};
}

const std::vector<std::string>& SchemaRegistry::Immutable(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->immutable : Empty<std::vector<std::string>>();
}

const std::string& SchemaRegistry::IdAlias(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->id_alias : Empty<std::string>();
}

const std::vector<std::string>& SchemaRegistry::WriteOnly(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->write_only : Empty<std::vector<std::string>>();
}

const std::vector<std::string>& SchemaRegistry::GrowOnly(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->grow_only : Empty<std::vector<std::string>>();
}

const std::map<std::string, std::string>& SchemaRegistry::References(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->references : Empty<std::map<std::string, std::string>>();
}

const Value& SchemaRegistry::Wire(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->wire : NullValue();
}

const std::vector<std::string>& SchemaRegistry::Attributes(std::string_view kind) const {
  const KindInfo* k = Find(kind);
  return k ? k->attributes : Empty<std::vector<std::string>>();
}

bool SchemaRegistry::HasAttribute(std::string_view kind, std::string_view attr) const {
  const auto& attrs = Attributes(kind);
  return std::binary_search(attrs.begin(), attrs.end(), attr);
}

bool SchemaRegistry::IsComputed(std::string_view kind, std::string_view attr) const {
  const KindInfo* k = Find(kind);
  return k && k->computed.contains(std::string(attr));
}

std::vector<SchemaViolation> SchemaRegistry::Validate(std::string_view kind, const Value& spec,
                                                      Expressions expressions) const {
  std::vector<SchemaViolation> out;
  const KindInfo* k = Find(kind);
  if (!k) return out;
  const bool deferred = expressions == Expressions::kDeferred;
  // valijson must only ever see well-formed UTF-8 (see IsValidUtf8).
  Value clean;
  if (ContainsInvalidUtf8(spec)) {
    clean = Value::parse(spec.dump(-1, ' ', false, Value::error_handler_t::replace));
  }
  const Value& checked = clean.is_null() ? spec : clean;
  // One validator per thread, kept: it caches the std::regex of every
  // "pattern", which costs far more to build than to run.
  thread_local valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(checked);
  bool valid = false;
  try {
    valid = validator.validate(k->schema, adapter, &results);
  } catch (const std::exception& e) {
    SchemaViolation v;
    v.code = "schema_violation";
    v.summary = std::string(kind) + " spec could not be validated";
    v.detail = e.what();
    v.predicate = "could not be validated";
    out.push_back(std::move(v));
    return out;
  }
  const Value& root = k->doc;
  valijson::ValidationResults::Error err;
  while (!valid && results.popError(err)) {
    // valijson's context: "<root>", then "[field]" or "[index]" per level.
    std::string pointer;
    const Value* cur = &checked;
    for (size_t i = 1; i < err.context.size(); ++i) {
      std::string seg = err.context[i];
      if (seg.size() >= 2 && seg.front() == '[' && seg.back() == ']')
        seg = seg.substr(1, seg.size() - 2);
      pointer += "/" + EscapePointerToken(seg);
      if (cur && cur->is_array() && IsDigits(seg) && std::stoul(seg) < cur->size()) {
        cur = &(*cur)[std::stoul(seg)];
      } else if (cur && cur->is_object() && cur->contains(seg)) {
        cur = &(*cur)[seg];
      } else {
        cur = nullptr;
      }
    }
    const std::string& desc = err.description;
    const Value* sub = SubschemaAt(root, pointer);
    SchemaViolation v;
    v.pointer = pointer;
    // Most summaries are the subject followed by the predicate.
    auto say = [&](std::string predicate) {
      v.summary = Subject(kind, pointer) + " " + predicate;
      v.predicate = std::move(predicate);
    };
    if (StartsWith(desc, "Failed to validate against") ||
        StartsWith(desc, "Failed to validate item #") ||
        StartsWith(desc, "Cannot validate item #")) {
      continue;  // a wrapper around the errors of the nested value
    } else if (StartsWith(desc, "Object contains a property that could not be validated")) {
      std::string field = QuotedBetween(desc);
      v.pointer = pointer + "/" + EscapePointerToken(field);
      v.at_key = true;
      v.code = "unknown_field";
      v.summary = "unknown field \"" + field + "\" in " + Container(kind, pointer);
      v.predicate = "unknown field";
      v.detail = DidYouMean(field, PropertyNames(sub));
    } else if (StartsWith(desc, "Missing required property")) {
      v.code = "missing_field";
      v.predicate = "missing required field \"" + QuotedBetween(desc) + "\"";
      v.summary = v.predicate + " in " + Container(kind, pointer);
    } else if (deferred && IsExpression(cur)) {
      continue;  // known only later: type, value and format are checked then
    } else if (StartsWith(desc, "Value type not permitted")) {
      v.code = "wrong_type";
      v.predicate = "must be " + ExpectedTypes(sub);
      v.summary = Subject(kind, pointer) + " " + v.predicate + ", not " +
                  (cur ? ValueTypeNoun(*cur) : std::string("null"));
      if (cur && (cur->is_number() || cur->is_boolean()) && ExpectedTypes(sub) == "a string") {
        v.detail = "quote the value to make it a string: \"" + cur->dump() + "\"";
      }
    } else if (StartsWith(desc, "Failed to match against any enum values")) {
      v.code = "invalid_value";
      std::string allowed;
      if (sub && sub->contains("enum") && (*sub)["enum"].is_array()) {
        for (const auto& e : (*sub)["enum"]) allowed += (allowed.empty() ? "" : ", ") + e.dump();
      }
      say("must be one of " + allowed);
      if (cur && cur->is_string() && cur->get_ref<const std::string&>().size() <= 80)
        v.detail = "got " + cur->dump(-1, ' ', false, Value::error_handler_t::replace);
    } else if (StartsWith(desc, "Failed to match expected value set by 'const'")) {
      v.code = "invalid_value";
      say(ConstPredicate(root, pointer));
    } else if (StartsWith(desc, "Failed to match regex specified by 'pattern'")) {
      v.code = "invalid_format";
      std::string pattern = sub ? sub->value("pattern", std::string()) : std::string();
      // A reference field's pattern is the shape of the ids it takes.
      std::vector<std::string> segs = SplitPointer(pointer);
      auto ref = segs.empty() ? k->references.end() : k->references.find(segs[0]);
      if (ref != k->references.end()) {
        say("must be " + WithArticle(ref->second) + " id");
        v.detail = "ids match " + pattern;
      } else {
        say("must match the pattern " + pattern);
      }
    } else if (StartsWith(desc, "Expected number greater") ||
               StartsWith(desc, "Expected number less") ||
               StartsWith(desc, "String should be no") ||
               StartsWith(desc, "Array should contain no")) {
      v.code = "out_of_range";
      auto num = [&](const char* key) {
        return sub && sub->contains(key) ? NumberText((*sub)[key]) : "?";
      };
      if (StartsWith(desc, "Expected number greater")) {
        say("must be at least " + num("minimum"));
      } else if (StartsWith(desc, "Expected number less")) {
        say("must be at most " + num("maximum"));
      } else if (StartsWith(desc, "String should be no fewer")) {
        say(num("minLength") == "1" ? "must not be empty"
                                    : "must be at least " + num("minLength") + " characters long");
      } else if (StartsWith(desc, "String should be no more")) {
        say("must be at most " + num("maxLength") + " characters long");
      } else if (StartsWith(desc, "Array should contain no fewer")) {
        say("must have at least " + num("minItems") + " items");
      } else {
        say("must have at most " + num("maxItems") + " items");
      }
    } else if (StartsWith(desc, "Elements at indexes")) {
      v.code = "invalid_value";
      say("lists the same value twice");
    } else {
      v.code = "schema_violation";
      say("is invalid");
      v.detail = desc;
    }
    out.push_back(std::move(v));
  }
  CheckFormats(root, &root, checked, "", expressions, out);
  // A value of the wrong type is reported as that alone: a number where a
  // string is expected is not also "not one of" the strings allowed.
  std::set<std::string> mistyped;
  for (const auto& v : out) {
    if (v.code == "wrong_type") mistyped.insert(v.pointer);
  }
  // Deduplicate, keeping the first of equal violations.
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  std::vector<SchemaViolation> unique;
  for (auto& v : out) {
    if (v.code != "wrong_type" && v.code != "unknown_field" && mistyped.count(v.pointer)) continue;
    if (seen.insert({v.pointer, v.code, v.summary}).second) unique.push_back(std::move(v));
  }
  return unique;
}

std::vector<Diagnostic> SchemaRegistry::Validate(std::string_view kind, const Value& spec,
                                                 const PointerLocator& locate) const {
  std::vector<Diagnostic> out;
  for (auto& v : Validate(kind, spec)) {
    Diagnostic d;
    d.code = std::move(v.code);
    d.summary = std::move(v.summary);
    d.detail = std::move(v.detail);
    if (locate) d.location = locate(v.pointer, v.at_key);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace cairn
