#include "server/api.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/schema/schema_registry.h"
#include "base/value.h"
#include "server/api_store.h"
#include "server/catalog.h"
#include "server/cursor.h"
#include "server/customer_status.h"
#include "server/faults.h"
#include "server/idempotency.h"
#include "server/lifecycle.h"
#include "server/metrics.h"
#include "server/rate_limiter.h"
#include "server/record_ids.h"
#include "server/ssh_key.h"
#include "server/token.h"

namespace cairn::server {

using json = nlohmann::json;

namespace {

// ---------------------------------------------------------------- views --

enum class View { kPreview, kControl };

enum class FieldType {
  kValue,      // stored as sent (name, region, plan, image, cidr, rules)
  kPublicKey,  // normalised, fingerprint computed
  kSizeGb,     // an integer; may only grow
  kRef,        // one id (either form), or null to detach
  kRefList,    // ids (either form), each at most once
  kWriteOnly   // taken on create, kept nowhere, never returned (user_data)
};

// How a body field is taken into a record. Which fields are required or
// editable, and every limit on their values, come from the kind's schema
// (schemas/<kind>.schema.json, compiled in): `attr` is the schema's name.
struct FieldSpec {
  const char* wire;
  const char* attr;
  FieldType type;
  const char* ref_kind = nullptr;    // for kRef / kRefList
  const char* ref_prefix = nullptr;  // preview prefix of the referenced kind
  bool same_region = false;          // the referenced record must be in this region
};

struct Collection {
  View view;
  const char* name;      // "instances", "compute", ...
  const char* kind;      // record kind
  const char* prefix;    // preview id prefix ("" when none)
  const char* envelope;  // control-plane envelope key
  bool lifecycle;        // moves through queued -> ... -> running
  std::vector<FieldSpec> fields;
  std::vector<const char*> read_only;
};

const std::vector<Collection>& Collections() {
  static const std::vector<Collection> kCollections = {
      {View::kPreview,
       "instances",
       "instance",
       "inst",
       "",
       true,
       {{"name", "name", FieldType::kValue},
        {"region", "region", FieldType::kValue},
        {"plan", "plan", FieldType::kValue},
        {"image", "image", FieldType::kValue},
        {"ssh_keys", "ssh_keys", FieldType::kRefList, "ssh_key", "key"},
        {"network", "network", FieldType::kRef, "network", "net", true},
        {"user_data", "user_data", FieldType::kWriteOnly}},
       {"id", "status", "ipv4", "created_at"}},
      {View::kPreview,
       "networks",
       "network",
       "net",
       "",
       true,
       {{"name", "name", FieldType::kValue},
        {"region", "region", FieldType::kValue},
        {"cidr", "cidr", FieldType::kValue}},
       {"id", "status", "created_at"}},
      {View::kPreview,
       "firewalls",
       "firewall",
       "fw",
       "",
       false,
       {{"name", "name", FieldType::kValue},
        {"rules", "rules", FieldType::kValue},
        {"instances", "instances", FieldType::kRefList, "instance", "inst"}},
       {"id", "created_at"}},
      {View::kPreview,
       "ssh_keys",
       "ssh_key",
       "key",
       "",
       false,
       {{"name", "name", FieldType::kValue}, {"public_key", "public_key", FieldType::kPublicKey}},
       {"id", "fingerprint", "created_at"}},
      {View::kControl,
       "compute",
       "instance",
       "inst",
       "instance",
       true,
       {{"name", "name", FieldType::kValue},
        {"region", "region", FieldType::kValue},
        {"image", "image", FieldType::kValue},
        {"plan", "plan", FieldType::kValue},
        {"sshKeys", "ssh_keys", FieldType::kRefList, "ssh_key", "key"},
        {"networkId", "network", FieldType::kRef, "network", "net", true},
        {"userData", "user_data", FieldType::kWriteOnly}},
       {"publicId", "regionKey", "imageKey", "planKey", "ipv4", "status", "customerStatus",
        "createdAt"}},
      {View::kControl,
       "networking",
       "network",
       "net",
       "network",
       true,
       {{"name", "name", FieldType::kValue},
        {"region", "region", FieldType::kValue},
        {"cidr", "cidr", FieldType::kValue}},
       {"publicId", "regionKey", "status", "customerStatus", "createdAt"}},
      {View::kControl,
       "storage",
       "volume",
       "",
       "volume",
       true,
       {{"name", "name", FieldType::kValue},
        {"region", "region", FieldType::kValue},
        {"sizeGb", "size_gb", FieldType::kSizeGb},
        {"instanceId", "instance", FieldType::kRef, "instance", "inst", true}},
       {"publicId", "regionKey", "status", "customerStatus", "createdAt"}},
  };
  return kCollections;
}

const char* PrefixOfKind(std::string_view kind) {
  if (kind == "instance") return "inst";
  if (kind == "network") return "net";
  if (kind == "firewall") return "fw";
  if (kind == "ssh_key") return "key";
  return "";
}

// A reference in the preview view: "<prefix>_<hex>"; in the control view:
// the UUID (SSH keys and firewalls have no UUID form there: prefixed).
json RefOut(View view, std::string_view kind, const json& hex) {
  if (!hex.is_string()) return nullptr;
  const std::string& h = hex.get_ref<const std::string&>();
  if (view == View::kControl && (kind == "instance" || kind == "network" || kind == "volume")) {
    return HexToUuid(h);
  }
  return std::string(PrefixOfKind(kind)) + "_" + h;
}

json RefListOut(View view, std::string_view kind, const json& list) {
  json out = json::array();
  if (list.is_array()) {
    for (const auto& e : list) out.push_back(RefOut(view, kind, e));
  }
  return out;
}

json Render(View view, const Record& r) {
  const json& a = r.attrs;
  json o = json::object();
  auto str = [&](const char* k) { return a.contains(k) ? a[k] : json(nullptr); };
  if (view == View::kPreview) {
    o["id"] = std::string(PrefixOfKind(r.kind)) + "_" + r.id;
    o["name"] = str("name");
    if (r.kind == "instance") {
      o["status"] = PreviewStatus(r.status);
      o["region"] = str("region");
      o["plan"] = str("plan");
      o["image"] = str("image");
      o["ssh_keys"] = RefListOut(view, "ssh_key", a.value("ssh_keys", json::array()));
      o["network"] = RefOut(view, "network", str("network"));
      if (a.contains("ipv4")) o["ipv4"] = a["ipv4"];
    } else if (r.kind == "network") {
      o["region"] = str("region");
      o["cidr"] = str("cidr");
      o["status"] = PreviewStatus(r.status);
    } else if (r.kind == "firewall") {
      o["rules"] = a.value("rules", json::array());
      o["instances"] = RefListOut(view, "instance", a.value("instances", json::array()));
    } else if (r.kind == "ssh_key") {
      o["public_key"] = str("public_key");
      o["fingerprint"] = str("fingerprint");
    }
    o["created_at"] = r.created_at;
    return o;
  }
  o["publicId"] = HexToUuid(r.id);
  o["name"] = str("name");
  o["regionKey"] = str("region");
  if (r.kind == "instance") {
    o["imageKey"] = str("image");
    o["planKey"] = str("plan");
    o["sshKeys"] = RefListOut(view, "ssh_key", a.value("ssh_keys", json::array()));
    o["networkId"] = RefOut(view, "network", str("network"));
    o["ipv4"] = str("ipv4");
  } else if (r.kind == "network") {
    o["cidr"] = str("cidr");
  } else if (r.kind == "volume") {
    o["sizeGb"] = a.value("size_gb", 0);
    o["instanceId"] = RefOut(view, "instance", str("instance"));
  }
  o["status"] = r.status;
  CustomerStatusToJson(ProjectCustomerStatus(r.status, r.last_op, r.kind == "instance"),
                       &o["customerStatus"]);
  o["createdAt"] = r.created_at;
  return o;
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// ----------------------------------------------------------- validation --

struct FieldError {
  std::string field, message;
};

// A reference the writer must resolve inside the transaction.
struct RefCheck {
  std::string field;  // wire name, e.g. "ssh_keys[1]"
  std::string hex;
  const char* kind;
  bool same_region;
};

// "rules[0].port" (wire names) for the schema pointer "/rules/0/port".
std::string WirePath(const Collection& c, const std::string& pointer) {
  std::string out;
  size_t pos = 1;
  while (pos <= pointer.size() && !pointer.empty()) {
    size_t next = pointer.find('/', pos);
    std::string seg = pointer.substr(pos, next == std::string::npos ? next : next - pos);
    for (size_t t = seg.find('~'); t != std::string::npos; t = seg.find('~', t + 1)) {
      if (t + 1 < seg.size()) seg.replace(t, 2, seg[t + 1] == '1' ? "/" : "~");
    }
    if (out.empty()) {
      out = seg;
      for (const FieldSpec& f : c.fields) {
        if (seg == f.attr) out = f.wire;
      }
    } else if (!seg.empty() && seg.find_first_not_of("0123456789") == std::string::npos) {
      out += "[" + seg + "]";
    } else {
      out += "." + seg;
    }
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return out.empty() ? "body" : out;
}

bool Contains(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// Checks `body` against the collection's fields and fills `attrs` (internal
// names) and `refs`. For PATCH (`patch`), only editable fields may appear.
// Every limit on a value is the kind's schema's, checked by the same
// SchemaRegistry::Validate as `cairn validate`; what follows it only takes
// the values apart and checks what a schema cannot say (the same resource
// listed twice in its two id forms).
// The path (wire names) of the first integer in `v` beyond int64: the
// schema checks read integers as int64, and 2^63 would wrap to a negative
// number ("must be at least 1").
std::optional<std::string> FindOversizedInteger(const json& v, const std::string& path) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return path;
  } else if (v.is_object()) {
    for (const auto& [key, member] : v.items()) {
      if (auto p = FindOversizedInteger(member, path.empty() ? key : path + "." + key)) return p;
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (auto p = FindOversizedInteger(v[i], path + "[" + std::to_string(i) + "]")) return p;
    }
  }
  return std::nullopt;
}

std::optional<FieldError> ValidateBody(const SchemaRegistry& schemas, const Collection& c,
                                       const json& body, bool patch, json* attrs,
                                       std::vector<RefCheck>* refs) {
  if (!body.is_object()) return FieldError{"body", "must be a JSON object"};
  if (auto path = FindOversizedInteger(body, "")) return FieldError{*path, "is too large"};
  const std::vector<std::string>& immutable = schemas.Immutable(c.kind);
  std::vector<std::pair<const FieldSpec*, const json*>> fields;
  json spec = json::object();
  for (const auto& [key, v] : body.items()) {
    const FieldSpec* f = nullptr;
    for (const FieldSpec& candidate : c.fields) {
      if (key == candidate.wire) f = &candidate;
    }
    if (f == nullptr) {
      for (const char* ro : c.read_only) {
        if (key == ro) {
          return FieldError{key, patch ? "is immutable (read-only field)" : "is read-only"};
        }
      }
      return FieldError{key, "unknown field"};
    }
    if (patch && Contains(immutable, f->attr)) {
      return FieldError{key, "is immutable and cannot be changed"};
    }
    if (patch && f->type == FieldType::kWriteOnly) {
      return FieldError{key, "is write-only: it is given only when the instance is created"};
    }
    fields.emplace_back(f, &v);
    // null detaches (an API extension; a manifest simply leaves the field out).
    if (f->type == FieldType::kRef && v.is_null()) continue;
    spec[f->attr] = v;
  }
  for (const SchemaViolation& v : schemas.Validate(c.kind, spec, Expressions::kPlainText)) {
    // Required fields of the kind are checked below, naming the wire field.
    if (v.code == "missing_field" && v.pointer.empty()) continue;
    return FieldError{WirePath(c, v.pointer), v.predicate};
  }
  if (!patch) {
    for (const std::string& required : schemas.RequiredFields(c.kind)) {
      for (const FieldSpec& f : c.fields) {
        if (required == f.attr && !body.contains(f.wire)) return FieldError{f.wire, "is required"};
      }
    }
  }
  for (const auto& [spec_field, value] : fields) {
    const std::string key = spec_field->wire;
    const json& v = *value;
    switch (spec_field->type) {
      case FieldType::kValue:
        (*attrs)[spec_field->attr] = v;
        break;
      case FieldType::kPublicKey: {
        auto k = ParseSshPublicKey(v.get<std::string>());
        if (!k.ok()) return FieldError{key, k.status().message()};
        (*attrs)["public_key"] = k->line;
        (*attrs)["fingerprint"] = k->fingerprint;
        break;
      }
      case FieldType::kSizeGb:
        (*attrs)[spec_field->attr] = v.get<int64_t>();
        break;
      case FieldType::kWriteOnly:
        break;  // handed on at first boot, kept nowhere (docs/api.md)
      case FieldType::kRef: {
        if (v.is_null()) {
          (*attrs)[spec_field->attr] = nullptr;
          break;
        }
        auto hex = ParseResourceId(v.get<std::string>(), spec_field->ref_prefix);
        if (!hex) {
          return FieldError{key, "is not a valid " + std::string(spec_field->ref_kind) + " id"};
        }
        (*attrs)[spec_field->attr] = *hex;
        refs->push_back({key, *hex, spec_field->ref_kind, spec_field->same_region});
        break;
      }
      case FieldType::kRefList: {
        json list = json::array();
        for (size_t i = 0; i < v.size(); ++i) {
          std::string f = key + "[" + std::to_string(i) + "]";
          auto hex = ParseResourceId(v[i].get<std::string>(), spec_field->ref_prefix);
          if (!hex) {
            return FieldError{f, "is not a valid " + std::string(spec_field->ref_kind) + " id"};
          }
          for (const auto& prev : list) {
            if (prev == *hex) return FieldError{f, "is listed twice"};
          }
          list.push_back(*hex);
          refs->push_back({f, *hex, spec_field->ref_kind, spec_field->same_region});
        }
        (*attrs)[spec_field->attr] = list;
        break;
      }
    }
  }
  return std::nullopt;
}

// The first top-level field holding private key material (or "body").
std::optional<std::string> PrivateKeyField(const json& body, std::string_view raw) {
  std::function<bool(const json&)> has = [&](const json& v) {
    if (v.is_string()) return ContainsPrivateKeyMaterial(v.get_ref<const std::string&>());
    if (v.is_array() || v.is_object()) {
      for (const auto& e : v) {
        if (has(e)) return true;
      }
    }
    return false;
  };
  if (body.is_object()) {
    for (const auto& [k, v] : body.items()) {
      if (has(v)) return k;
    }
  }
  if (has(body) || ContainsPrivateKeyMaterial(raw)) return std::string("body");
  return std::nullopt;
}

// --------------------------------------------------------------- routes --

// Who may call a route.
enum class Auth {
  kPublic,  // anyone: /healthz
  kToken,   // a project's bearer token (401 without), then its rate limit (429)
};

// What a route does with an Idempotency-Key header.
enum class Idempotency {
  kNoKey,        // reads: not looked at
  kKeyOptional,  // preview-API mutations: honoured when sent
  kKeyRequired,  // control-plane mutations: 400 idempotency_key_required without one
};

// What a route takes as a request body.
enum class BodyRule {
  kNoBody,      // reads: not looked at
  kJsonObject,  // create, update: a JSON object, sent as application/json
  kEmptyBody,   // delete, actions: nothing, or {}
};

// A path's segments between slashes ("/api/v1/compute/x": api, v1, compute,
// x; a trailing slash makes an empty last one). No route has more than
// kMaxSegments; a longer path matches none.
struct PathSegments {
  static constexpr size_t kMaxSegments = 8;
  std::array<std::string_view, kMaxSegments> at;
  size_t size = 0;
  bool too_long = false;
};

PathSegments SplitPath(std::string_view path) {
  PathSegments out;
  size_t i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (out.size == PathSegments::kMaxSegments) {
      out.too_long = true;
      break;
    }
    out.at[out.size++] = path.substr(i, j - i);
    i = j + 1;
  }
  return out;
}

}  // namespace

namespace {

// Query string "a=1&b=2" (values percent-decoded).
std::optional<std::string> QueryParam(std::string_view query, std::string_view name, bool* bad) {
  size_t pos = 0;
  while (pos < query.size()) {
    size_t amp = query.find('&', pos);
    std::string_view kv = query.substr(pos, amp == std::string_view::npos ? query.npos : amp - pos);
    size_t eq = kv.find('=');
    if (kv.substr(0, eq) == name) {
      std::string v;
      std::string_view raw = eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1);
      for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '%' && i + 2 < raw.size()) {
          int x = 0;
          auto [p, ec] = std::from_chars(raw.data() + i + 1, raw.data() + i + 3, x, 16);
          if (ec != std::errc() || p != raw.data() + i + 3) {
            *bad = true;
            return std::nullopt;
          }
          v += static_cast<char>(x);
          i += 2;
        } else if (raw[i] == '%') {
          *bad = true;
          return std::nullopt;
        } else {
          v += raw[i] == '+' ? ' ' : raw[i];
        }
      }
      return v;
    }
    if (amp == std::string_view::npos) break;
    pos = amp + 1;
  }
  return std::nullopt;
}

// How many times `name` is given in `query` (name=value or a bare name).
int CountParam(std::string_view query, std::string_view name) {
  int n = 0;
  for (size_t pos = 0; pos <= query.size();) {
    size_t amp = std::min(query.find('&', pos), query.size());
    std::string_view kv = query.substr(pos, amp - pos);
    n += kv.substr(0, kv.find('=')) == name;
    pos = amp + 1;
  }
  return n;
}

bool IsJsonContentType(std::string_view ct) {
  size_t semi = ct.find(';');
  std::string_view media = ct.substr(0, semi);
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  std::string lower;
  for (char c : media) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "application/json";
}

std::string HeadersToJson(const std::vector<std::pair<std::string, std::string>>& h) {
  json a = json::array();
  for (const auto& [k, v] : h) a.push_back({k, v});
  return a.dump();
}

}  // namespace

// ----------------------------------------------------------------- Impl --

struct Api::Impl {
  ApiStore* store;
  Metrics* metrics;
  FaultInjector* faults;
  RateLimiter* limiter;
  ApiOptions options;
  // The accepted tokens, replaced whole by SetTokens (a SIGHUP reload) while
  // requests read it.
  using TokenTable = std::unordered_map<std::string, TokenGrant>;
  std::atomic<std::shared_ptr<const TokenTable>> tokens;

  struct Call;
  // What a route runs once the pipeline lets its request through; `body` is
  // the checked request body (null for routes that take none).
  using Handler = void (Impl::*)(std::shared_ptr<Call> c, const json& body);

  // One route: a row of RouteTable(), the one place that says what the API
  // answers and how.
  struct RouteSpec {
    std::string_view method;  // HEAD is answered wherever GET is
    // Segments after the first '/': literal, "{id}" (any non-empty
    // segment), "{action}" (one of `actions`).
    std::string pattern;
    Handler handler;
    Auth auth;
    bool faults;  // --faults may strike it (all but /healthz and /metrics)
    Idempotency idempotency;
    BodyRule body;
    const Collection* collection = nullptr;  // the collection it serves
    std::vector<std::string_view> actions;   // what {action} may be
    // Made from the above when the table is built:
    struct Segment {
      enum Kind { kLiteral, kId, kAction } kind;
      std::string text;
    };
    std::vector<Segment> segments;  // `pattern` cut at its slashes
    std::string allow;              // every method of `pattern`, HEAD after GET
    bool Matches(const PathSegments& path) const;
  };
  static const std::vector<RouteSpec>& RouteTable();

  // A request's route, once matched.
  struct Route {
    const RouteSpec* spec = nullptr;
    const Collection* collection = nullptr;  // spec->collection
    std::string id;                          // the {id} segment as sent
    std::string action;                      // the {action} segment
    std::string pattern;                     // for messages and the access log
  };
  // 0 with `route` filled; 405 with `allow` (and route->pattern) set when the
  // path is a route's but not the method; 404 otherwise.
  static int MatchRoute(std::string_view method, std::string_view path, Route* route,
                        std::string* allow);
  // The pattern of `r` with its {action} named, as `path` has it
  // ("/api/v1/compute/{id}/actions/start"), for messages and the access log.
  static std::string NamedPattern(const RouteSpec& r, const PathSegments& path);

  // State of one request as it moves through the pipeline.
  struct Call {
    ApiRequest req;
    Done done;
    Route route;
    std::string request_id;
    std::string project;
    TokenScope token_scope = TokenScope::kWrite;
    std::string token_id;  // TokenId of the token: what logs name
    std::string path, query;
    std::vector<std::pair<std::string, std::string>> extra_headers;  // RateLimit-*
    std::string scope;  // idempotency scope; empty when none
    std::string request_sha;
    bool drop_after = false;
    // Filled by the mutation on the writer thread.
    ApiResponse result;
    bool store_result = false;
    // Lifecycle statuses the mutation entered (counted once it commits).
    std::vector<std::string> transitions;
    bool finished = false;  // `done` was called
  };

  void Finish(Call& c, ApiResponse r) {
    if (c.finished) return;
    c.finished = true;
    r.request_id = c.request_id;
    r.route = c.route.pattern.empty() ? "-" : c.route.pattern;
    r.headers.emplace_back("X-Request-ID", c.request_id);
    for (auto& h : c.extra_headers) r.headers.push_back(h);
    c.done(std::move(r));
  }

  static ApiResponse MakeError(int status, std::string_view code, std::string_view message,
                               const std::string& request_id) {
    ApiResponse r;
    r.status = status;
    json body = {{"error", {{"code", code}, {"message", message}, {"request_id", request_id}}}};
    r.body = Dump(body);
    r.headers.emplace_back("Content-Type", "application/json");
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
  }

  void Fail(Call& c, int status, std::string_view code, std::string_view message) {
    Finish(c, MakeError(status, code, message, c.request_id));
  }

  static ApiResponse Json(int status, const json& body) {
    ApiResponse r;
    r.status = status;
    r.body = Dump(body);
    r.headers.emplace_back("Content-Type", "application/json");
    return r;
  }

  json Wrap(const Collection& c, const Record& r) {
    if (c.view == View::kPreview) return Render(View::kPreview, r);
    return json{{c.envelope, Render(View::kControl, r)}};
  }

  void Handle(ApiRequest req, Done done);
  // route -> auth -> rate limit -> faults -> (a route that takes a body)
  // ReadBody, ClaimKey -> the route's handler. A handler of a mutation
  // releases the key when it refuses before the write (ReleaseAndFail) or
  // stores its answer with the write (Submit).
  void Pipeline(std::shared_ptr<Call> c);
  bool Authenticate(Call& c);
  bool TakeRateLimitToken(Call& c);
  bool InjectFaults(Call& c);
  std::optional<json> ReadBody(Call& c, bool& body_blank);
  bool ClaimKey(Call& c, bool body_blank, const json& body);
  void ReleaseAndFail(Call& c, int status, std::string_view code, const std::string& message);

  // The handlers of RouteTable().
  void HandleHealthz(std::shared_ptr<Call> c, const json& body);
  void HandleMetrics(std::shared_ptr<Call> c, const json& body);
  void HandleRegions(std::shared_ptr<Call> c, const json& body);
  void HandlePlans(std::shared_ptr<Call> c, const json& body);
  void HandleImages(std::shared_ptr<Call> c, const json& body);
  void HandleList(std::shared_ptr<Call> c, const json& body);
  void HandleGet(std::shared_ptr<Call> c, const json& body);
  void HandleCreate(std::shared_ptr<Call> c, const json& body);
  void HandleUpdate(std::shared_ptr<Call> c, const json& body);
  void HandleDelete(std::shared_ptr<Call> c, const json& body);
  void HandleAction(std::shared_ptr<Call> c, const json& body);

  // Delete and the instance actions: the record moves (or goes) in one write.
  void DeleteOrAct(std::shared_ptr<Call> c, const std::string& hex, const std::string& action);
  // The route's {id} in the collection's forms; nullopt after answering
  // 404 (and releasing the key).
  std::optional<std::string> TargetId(Call& c);
  // In a mutation's write: record `id` when it is a live one of the route's
  // kind; else nullopt with the answer set (a 500, or a 404 stored with the
  // key like any answer).
  std::optional<Record> LiveRecord(WriteTxn& txn, Call& call, const std::string& id,
                                   const Collection& coll);
  void Submit(std::shared_ptr<Call> c, std::function<void(WriteTxn&, Call&)> body);
  std::optional<ApiResponse> CheckRefs(WriteTxn& txn, Call& c, const std::vector<RefCheck>& refs,
                                       const std::string& region);
};

bool Api::Impl::RouteSpec::Matches(const PathSegments& path) const {
  if (path.too_long || path.size != segments.size()) return false;
  for (size_t i = 0; i < segments.size(); ++i) {
    std::string_view got = path.at[i];
    switch (segments[i].kind) {
      case Segment::kLiteral:
        if (got != segments[i].text) return false;
        break;
      case Segment::kId:
        if (got.empty()) return false;
        break;
      case Segment::kAction:
        if (std::find(actions.begin(), actions.end(), got) == actions.end()) return false;
        break;
    }
  }
  return true;
}

// Every route of the API, one row each; the pipeline (Pipeline) only reads
// the row a request matched. A collection's rows are the same for every
// collection (Collections()), its view deciding the idempotency rule.
const std::vector<Api::Impl::RouteSpec>& Api::Impl::RouteTable() {
  static const std::vector<RouteSpec> kTable = [] {
    using enum Auth;
    using enum Idempotency;
    using enum BodyRule;
    std::vector<RouteSpec> t;
    auto add = [&t](std::string_view method, std::string pattern, Handler handler, Auth auth,
                    bool faults, Idempotency idempotency, BodyRule body,
                    const Collection* collection = nullptr,
                    std::vector<std::string_view> actions = {}) {
      t.push_back({method, std::move(pattern), handler, auth, faults, idempotency, body, collection,
                   std::move(actions)});
    };
    // add(method, pattern, handler, auth, faults?, idempotency, body[, collection, actions])
    add("GET", "/healthz", &Impl::HandleHealthz, kPublic, false, kNoKey, kNoBody);
    add("GET", "/metrics", &Impl::HandleMetrics, kToken, false, kNoKey, kNoBody);
    add("GET", "/v1/regions", &Impl::HandleRegions, kToken, true, kNoKey, kNoBody);
    add("GET", "/v1/plans", &Impl::HandlePlans, kToken, true, kNoKey, kNoBody);
    add("GET", "/v1/images", &Impl::HandleImages, kToken, true, kNoKey, kNoBody);
    for (const Collection& c : Collections()) {
      const std::string base =
          (c.view == View::kPreview ? "/v1/" : "/api/v1/") + std::string(c.name);
      const Idempotency key = c.view == View::kControl ? kKeyRequired : kKeyOptional;
      const std::string one = base + "/{id}";
      add("GET", base, &Impl::HandleList, kToken, true, kNoKey, kNoBody, &c);
      add("POST", base, &Impl::HandleCreate, kToken, true, key, kJsonObject, &c);
      add("GET", one, &Impl::HandleGet, kToken, true, kNoKey, kNoBody, &c);
      add("PATCH", one, &Impl::HandleUpdate, kToken, true, key, kJsonObject, &c);
      add("DELETE", one, &Impl::HandleDelete, kToken, true, key, kEmptyBody, &c);
      if (c.view == View::kControl && std::string_view(c.kind) == "instance") {
        add("POST", one + "/actions/{action}", &Impl::HandleAction, kToken, true, key, kEmptyBody,
            &c, {"start", "stop", "reboot"});
      }
    }
    for (RouteSpec& r : t) {
      PathSegments cut = SplitPath(r.pattern);
      for (size_t i = 0; i < cut.size; ++i) {
        std::string_view text = cut.at[i];
        auto kind = text == "{id}"       ? RouteSpec::Segment::kId
                    : text == "{action}" ? RouteSpec::Segment::kAction
                                         : RouteSpec::Segment::kLiteral;
        r.segments.push_back({kind, std::string(text)});
      }
      for (const RouteSpec& other : t) {
        if (other.pattern != r.pattern) continue;
        r.allow += std::string(r.allow.empty() ? "" : ", ") + std::string(other.method);
        if (other.method == "GET") r.allow += ", HEAD";
      }
    }
    return t;
  }();
  return kTable;
}

int Api::Impl::MatchRoute(std::string_view method, std::string_view path, Route* route,
                          std::string* allow) {
  const PathSegments segs = SplitPath(path);
  const RouteSpec* path_only = nullptr;  // the path's route, for another method
  for (const RouteSpec& r : RouteTable()) {
    if (!r.Matches(segs)) continue;
    if (r.method != method && !(method == "HEAD" && r.method == "GET")) {
      if (path_only == nullptr) path_only = &r;
      continue;
    }
    route->spec = &r;
    route->collection = r.collection;
    for (size_t i = 0; i < r.segments.size(); ++i) {
      if (r.segments[i].kind == RouteSpec::Segment::kId) route->id = std::string(segs.at[i]);
      if (r.segments[i].kind == RouteSpec::Segment::kAction) {
        route->action = std::string(segs.at[i]);
      }
    }
    route->pattern = r.actions.empty() ? r.pattern : NamedPattern(r, segs);
    return 0;
  }
  if (path_only == nullptr) return 404;
  *allow = path_only->allow;
  route->pattern = path_only->actions.empty() ? path_only->pattern : NamedPattern(*path_only, segs);
  return 405;
}

std::string Api::Impl::NamedPattern(const RouteSpec& r, const PathSegments& path) {
  std::string out;
  for (size_t i = 0; i < r.segments.size(); ++i) {
    out += "/";
    out += r.segments[i].kind == RouteSpec::Segment::kAction ? std::string(path.at[i])
                                                             : r.segments[i].text;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Api::Routes() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Impl::RouteSpec& r : Impl::RouteTable()) {
    if (out.empty() || out.back().first != r.pattern) out.emplace_back(r.pattern, r.allow);
  }
  return out;
}

Api::Api(ApiStore* store, Metrics* metrics, FaultInjector* faults, RateLimiter* limiter,
         ApiOptions options)
    : impl_(new Impl{store, metrics, faults, limiter, std::move(options), {}}) {
  SetTokens(std::move(impl_->options.tokens));
}
Api::~Api() = default;

void Api::SetTokens(std::unordered_map<std::string, TokenGrant> tokens) {
  impl_->tokens.store(std::make_shared<const Impl::TokenTable>(std::move(tokens)));
}

ApiResponse Api::Error(int status, std::string_view code, std::string_view message,
                       const std::string& request_id) {
  ApiResponse r = Impl::MakeError(status, code, message, request_id);
  r.request_id = request_id;
  r.headers.emplace_back("X-Request-ID", request_id);
  return r;
}

void Api::Handle(ApiRequest req, Done done) { impl_->Handle(std::move(req), std::move(done)); }

void Api::Impl::Handle(ApiRequest req, Done done) {
  auto c = std::make_shared<Call>();
  c->req = std::move(req);
  c->done = std::move(done);
  c->request_id = c->req.client_request_id && IsSaneRequestId(*c->req.client_request_id)
                      ? *c->req.client_request_id
                      : NewRequestId();
  // No exception leaves the module: a broken invariant becomes a 500.
  try {
    Pipeline(c);
  } catch (const std::exception& e) {
    spdlog::error("internal error: request {} threw: {}", c->request_id, e.what());
    Fail(*c, 500, "internal_error", "internal error, please report");
  }
}

void Api::Impl::Pipeline(std::shared_ptr<Call> c) {
  std::string_view target = c->req.target;
  size_t q = target.find('?');
  c->path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) c->query = std::string(target.substr(q + 1));
  const std::string& method = c->req.method;

  std::string allow;
  int rc =
      c->path.empty() || c->path[0] != '/' ? 404 : MatchRoute(method, c->path, &c->route, &allow);
  if (rc == 404) return Fail(*c, 404, "route_not_found", "no route " + c->path.substr(0, 200));
  if (rc == 405) {
    ApiResponse r =
        MakeError(405, "method_not_allowed",
                  method + " is not allowed on " + c->route.pattern + " (allowed: " + allow + ")",
                  c->request_id);
    r.headers.emplace_back("Allow", allow);
    return Finish(*c, std::move(r));
  }
  const RouteSpec& route = *c->route.spec;
  if (route.auth == Auth::kToken && (!Authenticate(*c) || !TakeRateLimitToken(*c))) return;
  if (route.auth == Auth::kToken && method != "GET" && method != "HEAD") {
    // A read token changes nothing, whatever the route; every mutation is
    // logged with the token that made it (its id, never the token).
    if (c->token_scope == TokenScope::kRead) {
      spdlog::info("refused {} {}: token {} of project {} may only read", method, c->path,
                   c->token_id, c->project);
      return Fail(*c, 403, "token_read_only",
                  "this token may only read (its scope is read in the tokens file): " + method +
                      " changes resources");
    }
    spdlog::info("{} {} by token {} of project {} (request {})", method, c->path, c->token_id,
                 c->project, c->request_id);
  }
  if (route.faults && !InjectFaults(*c)) return;
  json body;
  if (route.body != BodyRule::kNoBody) {
    bool body_blank = true;
    std::optional<json> read = ReadBody(*c, body_blank);
    if (!read) return;
    body = std::move(*read);
    if (!ClaimKey(*c, body_blank, body)) return;
  }
  (this->*route.handler)(std::move(c), body);
}

// The project of the request's bearer token; false after answering 401.
bool Api::Impl::Authenticate(Call& c) {
  std::string_view auth = c.req.authorization ? std::string_view(*c.req.authorization) : "";
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() > kBearer.size() && auth.substr(0, kBearer.size()) == kBearer) {
    auto table = tokens.load();
    auto it = table->find(Sha256Hex(auth.substr(kBearer.size())));
    if (it != table->end()) {
      c.project = it->second.project;
      c.token_scope = it->second.scope;
      c.token_id = TokenId(it->first);
      return true;
    }
  }
  ApiResponse r =
      MakeError(401, "unauthorized",
                auth.empty() ? "missing Authorization: Bearer <token>" : "invalid bearer token",
                c.request_id);
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  Finish(c, std::move(r));
  return false;
}

// A token from the project's bucket (RateLimit-* headers on the answer);
// false after answering 429. Always true with no --rate-limit.
bool Api::Impl::TakeRateLimitToken(Call& c) {
  if (!limiter->enabled()) return true;
  // A store shared by several servers keeps one bucket per project for
  // all of them; else this server's own.
  auto shared = store->TakeToken(c.project, limiter->rate(), limiter->burst());
  if (!shared.ok()) {
    spdlog::warn("rate limit: the shared bucket could not be read ({}); request allowed",
                 shared.status().message());
  }
  RateLimitDecision d = shared.ok() && shared->has_value()
                            ? limiter->Decide((*shared)->allowed, (*shared)->tokens)
                            : limiter->Acquire(c.project, RateLimiter::Clock::now());
  c.extra_headers.emplace_back("RateLimit-Limit", std::to_string(d.limit));
  c.extra_headers.emplace_back("RateLimit-Remaining", std::to_string(d.remaining));
  c.extra_headers.emplace_back("RateLimit-Reset", std::to_string(d.reset_secs));
  if (d.allowed) return true;
  ApiResponse r =
      MakeError(429, "rate_limited",
                "request rate limit exceeded; retry after " + std::to_string(d.retry_after) + "s",
                c.request_id);
  r.headers.emplace_back("Retry-After", std::to_string(d.retry_after));
  Finish(c, std::move(r));
  return false;
}

// The --faults that strike this request: false after answering for one
// (an error, or a dropped connection); true to go on, perhaps to drop the
// connection after the write (drop_after).
bool Api::Impl::InjectFaults(Call& c) {
  switch (faults->PickRequestFault(c.route.spec->body != BodyRule::kNoBody)) {
    case RequestFault::kNone:
      return true;
    case RequestFault::kError500:
      metrics->CountFaultInjected();
      Fail(c, 500, "internal_error", "injected fault: internal error");
      return false;
    case RequestFault::kError503:
      metrics->CountFaultInjected();
      Fail(c, 503, "service_unavailable", "injected fault: service unavailable");
      return false;
    case RequestFault::kError429: {
      metrics->CountFaultInjected();
      ApiResponse r = MakeError(429, "rate_limited", "injected fault: rate limited", c.request_id);
      r.headers.emplace_back("Retry-After", "1");
      Finish(c, std::move(r));
      return false;
    }
    case RequestFault::kDropBefore: {
      metrics->CountFaultInjected();
      ApiResponse r;
      r.status = 0;  // nothing is sent
      r.drop = true;
      Finish(c, std::move(r));
      return false;
    }
    case RequestFault::kDropAfter:
      metrics->CountFaultInjected();
      c.drop_after = true;
      return true;
  }
  return true;
}

void Api::Impl::HandleHealthz(std::shared_ptr<Call> c, const json&) {
  Finish(*c, Json(200, {{"status", "ok"}}));
}

void Api::Impl::HandleMetrics(std::shared_ptr<Call> c, const json&) {
  ApiResponse r;
  r.body = metrics->Render(*store);
  r.headers.emplace_back("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  Finish(*c, std::move(r));
}

void Api::Impl::HandleRegions(std::shared_ptr<Call> c, const json&) {
  json data = json::array();
  for (const auto& r : kRegions)
    data.push_back({{"key", r.key}, {"name", r.name}, {"country", r.country}});
  Finish(*c, Json(200, {{"data", data}}));
}

void Api::Impl::HandlePlans(std::shared_ptr<Call> c, const json&) {
  json data = json::array();
  for (const auto& p : kPlans) {
    data.push_back({{"key", p.key},
                    {"vcpus", p.vcpus},
                    {"memory_mb", p.memory_mb},
                    {"disk_gb", p.disk_gb},
                    {"price_monthly_eur", p.price_monthly_eur}});
  }
  Finish(*c, Json(200, {{"data", data}}));
}

void Api::Impl::HandleImages(std::shared_ptr<Call> c, const json&) {
  json data = json::array();
  for (const auto& i : kImages)
    data.push_back({{"key", i.key}, {"name", i.name}, {"family", i.family}});
  Finish(*c, Json(200, {{"data", data}}));
}

void Api::Impl::HandleGet(std::shared_ptr<Call> c, const json&) {
  const Route& route = c->route;
  const Collection& coll = *route.collection;
  auto hex = ParseResourceId(route.id, coll.prefix);
  if (!hex)
    return Fail(*c, 404, "resource_not_found", "no such resource " + route.id.substr(0, 80));
  auto rec = store->Get(c->project, *hex);
  if (!rec.ok()) return Fail(*c, 500, "internal_error", "the store failed; retry later");
  if (!*rec || (*rec)->kind != coll.kind || (*rec)->status == "deleted") {
    return Fail(*c, 404, "resource_not_found", "no such resource " + route.id.substr(0, 80));
  }
  Finish(*c, Json(200, Wrap(coll, **rec)));
}

void Api::Impl::HandleList(std::shared_ptr<Call> c, const json&) {
  const Collection& coll = *c->route.collection;
  for (const char* param : {"limit", "cursor"}) {
    if (CountParam(c->query, param) > 1) {
      return Fail(*c, 400, "validation_error", std::string(param) + ": given more than once");
    }
  }
  bool bad = false;
  int limit = 50;
  if (auto l = QueryParam(c->query, "limit", &bad)) {
    auto [p, ec] = std::from_chars(l->data(), l->data() + l->size(), limit);
    if (ec != std::errc() || p != l->data() + l->size() || limit < 1 || limit > 200) {
      return Fail(*c, 400, "validation_error", "limit: must be an integer from 1 to 200");
    }
  }
  int64_t after = 0;
  if (auto cur = QueryParam(c->query, "cursor", &bad)) {
    // The cursor names the page's last record; only this project's records
    // of this collection are found, so another project's cursor is refused.
    auto id = DecodeCursor(*cur);
    if (!id) return Fail(*c, 400, "validation_error", "cursor: invalid or expired cursor");
    auto last = store->Get(c->project, *id);
    if (!last.ok()) return Fail(*c, 500, "internal_error", "the store failed; retry later");
    if (!*last || (*last)->kind != coll.kind) {
      return Fail(*c, 400, "validation_error", "cursor: invalid or expired cursor");
    }
    after = (*last)->seq;
  }
  if (bad) return Fail(*c, 400, "validation_error", "query: malformed percent-encoding");
  auto rows = store->List(c->project, coll.kind, after, limit + 1);
  if (!rows.ok()) return Fail(*c, 500, "internal_error", "the store failed; retry later");
  bool more = static_cast<int>(rows->size()) > limit;
  if (more) rows->resize(limit);
  json data = json::array();
  for (const Record& r : *rows) data.push_back(Render(coll.view, r));
  json next = more ? json(EncodeCursor(rows->back().id)) : json(nullptr);
  json body = {{"data", std::move(data)}};
  if (coll.view == View::kPreview) {
    body["pagination"] = {{"next_cursor", next}, {"has_more", more}};
  } else {
    body["pagination"] = {{"limit", limit}, {"next", next}};
  }
  Finish(*c, Json(200, body));
}

std::optional<std::string> Api::Impl::TargetId(Call& c) {
  auto hex = ParseResourceId(c.route.id, c.route.collection->prefix);
  if (!hex)
    ReleaseAndFail(c, 404, "resource_not_found", "no such resource " + c.route.id.substr(0, 80));
  return hex;
}

// The request's media type, Idempotency-Key and body, checked before
// anything else: the body (null when blank), or nullopt once answered.
std::optional<json> Api::Impl::ReadBody(Call& c, bool& body_blank) {
  const RouteSpec& route = *c.route.spec;
  const bool needs_body = route.body == BodyRule::kJsonObject;
  const std::string& method = c.req.method;
  const std::string& body_text = c.req.body;
  body_blank = body_text.find_first_not_of(" \t\r\n") == std::string::npos;
  auto refuse = [&](int status, std::string_view code, const std::string& message) {
    Fail(c, status, code, message);
    return std::nullopt;
  };

  // 415 before anything looks at the body; a route that takes none may be
  // sent nothing with any media type.
  if ((!body_blank || (c.req.content_type && needs_body)) &&
      (!c.req.content_type || !IsJsonContentType(*c.req.content_type))) {
    return refuse(415, "unsupported_media_type",
                  "request bodies must be sent with Content-Type: application/json");
  }
  if (c.req.idempotency_key) {
    if (!IsValidIdempotencyKey(*c.req.idempotency_key)) {
      return refuse(400, "validation_error",
                    "Idempotency-Key: must be 1 to 255 printable ASCII characters");
    }
  } else if (route.idempotency == Idempotency::kKeyRequired) {
    return refuse(400, "idempotency_key_required",
                  "the Idempotency-Key header is required on " + method + " " + c.route.pattern);
  }
  // Body: JSON; never private key material.
  json body;
  if (!body_blank) {
    // Bounded before anything walks it: every walk below recurses.
    auto parsed = ParseJson(body_text);
    if (!parsed.ok()) return refuse(400, "validation_error", "body: " + parsed.status().message());
    body = std::move(*parsed);
    if (auto f = PrivateKeyField(body, body_text)) {
      return refuse(400, "validation_error",
                    *f + ": private key material is never accepted; send only public keys");
    }
  } else if (ContainsPrivateKeyMaterial(body_text)) {
    return refuse(400, "validation_error", "body: private key material is never accepted");
  }
  if (needs_body && body_blank) {
    return refuse(400, "validation_error", "body: a JSON object is required");
  }
  if (!needs_body && !body_blank && !(body.is_object() && body.empty())) {
    return refuse(400, "validation_error", "body: must be empty (or {})");
  }
  return body;
}

// Claims the request's Idempotency-Key (when it has one): true to go on and
// execute it; false when it was answered here, replayed from the stored
// response or refused (in use, or used with another body).
bool Api::Impl::ClaimKey(Call& c, bool body_blank, const json& body) {
  if (c.req.idempotency_key) {
    c.scope = IdempotencyScope(c.project, c.req.method, c.path, *c.req.idempotency_key);
    c.request_sha = Sha256Hex(body_blank ? std::string() : Dump(body));
    // Held here, or by another server sharing the store, until the request
    // has executed (and its response is stored, in the same transaction).
    // A stored response (read after the claim was decided) means the
    // request has executed: replayed, whoever holds the key; otherwise the
    // key held elsewhere means it is executing.
    auto claim = store->ClaimKey(c.scope);
    if (!claim.ok()) {
      c.scope.clear();  // not ours to release
      Fail(c, 500, "internal_error", "the store failed; retry later");
      return false;
    }
    const int64_t horizon = NowMs() - options.idempotency_retention.count();
    const bool replay = claim->stored && claim->stored->created_ms >= horizon;
    if (!replay && !claim->claimed) {
      c.scope.clear();
      Fail(c, 409, "idempotency_key_in_use",
           "a request with this Idempotency-Key is still executing; retry later");
      return false;
    }
    if (replay) {
      if (claim->claimed) store->ReleaseKey(c.scope);
      c.scope.clear();
      const StoredResponse& s = *claim->stored;
      if (s.request_sha256 != c.request_sha) {
        Fail(c, 409, "idempotency_conflict",
             "this Idempotency-Key was used with a different request body");
        return false;
      }
      ApiResponse r;
      r.status = s.status;
      json headers = json::parse(s.headers_json, nullptr, false);
      if (headers.is_array()) {
        for (const auto& h : headers)
          r.headers.emplace_back(h[0].get<std::string>(), h[1].get<std::string>());
      }
      r.headers.emplace_back("Idempotent-Replayed", "true");
      r.body = s.body;
      metrics->CountIdempotentReplay();
      Finish(c, std::move(r));
      return false;
    }
  }
  return true;
}

void Api::Impl::ReleaseAndFail(Call& c, int status, std::string_view code,
                               const std::string& message) {
  if (!c.scope.empty()) store->ReleaseKey(c.scope);
  Fail(c, status, code, message);
}

void Api::Impl::HandleCreate(std::shared_ptr<Call> c, const json& body) {
  const Collection& coll = *c->route.collection;
  json attrs = json::object();
  std::vector<RefCheck> refs;
  if (auto e = ValidateBody(*options.schemas, coll, body, false, &attrs, &refs)) {
    return ReleaseAndFail(*c, 400, "validation_error", e->field + ": " + e->message);
  }
  if (std::string_view(coll.kind) == "instance") {
    if (!attrs.contains("ssh_keys")) attrs["ssh_keys"] = json::array();
    if (!attrs.contains("network")) attrs["network"] = nullptr;
  }
  if (std::string_view(coll.kind) == "firewall" && !attrs.contains("instances")) {
    attrs["instances"] = json::array();
  }
  if (std::string_view(coll.kind) == "volume" && !attrs.contains("instance"))
    attrs["instance"] = nullptr;
  auto rec = std::make_shared<Record>();
  rec->id = NewResourceHex();
  rec->project = c->project;
  rec->kind = coll.kind;
  rec->status = coll.lifecycle ? "queued" : "active";
  rec->last_op = "create";
  rec->next_step_ms = coll.lifecycle ? NowMs() + options.provision_delay.count() : 0;
  rec->created_at = IsoUtcNow();
  rec->attrs = std::move(attrs);
  // Rendered here, off the writer thread: the record is complete already.
  ApiResponse ok = Json(201, Wrap(coll, *rec));
  std::string location =
      coll.view == View::kPreview
          ? "/v1/" + std::string(coll.name) + "/" + PrefixOfKind(coll.kind) + "_" + rec->id
          : "/api/v1/" + std::string(coll.name) + "/" + HexToUuid(rec->id);
  ok.headers.emplace_back("Location", location);
  std::string region = rec->attrs.value("region", "");
  // With no provisioning delay, the steps the lifecycle worker would take
  // at once are taken in this same write: the answer still shows the
  // record as created (queued), and a read right after shows where it got.
  const bool settle = coll.lifecycle && options.provision_delay.count() == 0;
  return Submit(c, [this, rec, ok = std::move(ok), refs = std::move(refs), region, settle](
                       WriteTxn& txn, Call& call) mutable {
    if (auto err = CheckRefs(txn, call, refs, region)) {
      call.result = std::move(*err);
      return;
    }
    std::vector<std::string> entered;
    if (settle) {
      entered = AdvanceDue(
          rec.get(), rec->next_step_ms, 0, [&] { return faults->PickProvisionFate(); },
          [&](const std::string& r) { return txn.AllocateIpv4(r); });
    }
    Status st = txn.Insert(rec.get());
    if (!st.ok()) {
      call.result =
          MakeError(500, "internal_error", "the store failed; retry later", call.request_id);
      return;
    }
    call.result = std::move(ok);
    call.store_result = true;
    call.transitions = std::move(entered);
  });
}

void Api::Impl::HandleUpdate(std::shared_ptr<Call> c, const json& body) {
  std::optional<std::string> hex = TargetId(*c);
  if (!hex) return;
  const Collection& coll = *c->route.collection;
  json attrs = json::object();
  std::vector<RefCheck> refs;
  if (auto e = ValidateBody(*options.schemas, coll, body, true, &attrs, &refs)) {
    return ReleaseAndFail(*c, 400, "validation_error", e->field + ": " + e->message);
  }
  return Submit(c, [this, id = *hex, attrs = std::move(attrs), refs = std::move(refs), &coll](
                       WriteTxn& txn, Call& call) {
    std::optional<Record> live = LiveRecord(txn, call, id, coll);
    if (!live) return;
    Record r = std::move(*live);
    if (coll.lifecycle &&
        !ProjectCustomerStatus(r.status, r.last_op, r.kind == "instance").actions.edit) {
      call.result = MakeError(409, "action_not_allowed",
                              "edit is not allowed while the resource is " +
                                  ProjectCustomerStatus(r.status, r.last_op, false).status,
                              call.request_id);
      call.store_result = true;
      return;
    }
    for (const std::string& field : options.schemas->GrowOnly(coll.kind)) {
      auto now = r.attrs.find(field);
      if (!attrs.contains(field) || now == r.attrs.end() || !now->is_number() ||
          !attrs[field].is_number() || attrs[field] >= *now) {
        continue;
      }
      std::string wire = field;
      for (const FieldSpec& f : coll.fields) {
        if (f.attr == field) wire = f.wire;
      }
      call.result =
          MakeError(400, "validation_error",
                    wire + ": can only grow (currently " + now->dump() + ")", call.request_id);
      return;
    }
    if (auto err = CheckRefs(txn, call, refs, r.attrs.value("region", ""))) {
      call.result = std::move(*err);
      return;
    }
    for (const auto& [k, v] : attrs.items()) r.attrs[k] = v;
    Status st = txn.Update(r);
    if (!st.ok()) {
      call.result =
          MakeError(500, "internal_error", "the store failed; retry later", call.request_id);
      return;
    }
    call.result = Json(200, Wrap(coll, r));
    call.store_result = true;
  });
}

std::optional<Record> Api::Impl::LiveRecord(WriteTxn& txn, Call& call, const std::string& id,
                                            const Collection& coll) {
  auto got = txn.Get(call.project, id);
  if (!got.ok()) {
    call.result =
        MakeError(500, "internal_error", "the store failed; retry later", call.request_id);
    return std::nullopt;
  }
  if (!*got || (*got)->kind != coll.kind || (*got)->status == "deleted") {
    call.result = MakeError(404, "resource_not_found",
                            "no such resource " + call.route.id.substr(0, 80), call.request_id);
    call.store_result = true;
    return std::nullopt;
  }
  return std::move(**got);
}

void Api::Impl::HandleDelete(std::shared_ptr<Call> c, const json&) {
  if (std::optional<std::string> hex = TargetId(*c)) DeleteOrAct(std::move(c), *hex, "delete");
}

void Api::Impl::HandleAction(std::shared_ptr<Call> c, const json&) {
  if (std::optional<std::string> hex = TargetId(*c)) {
    const std::string action = c->route.action;
    DeleteOrAct(std::move(c), *hex, action);
  }
}

void Api::Impl::DeleteOrAct(std::shared_ptr<Call> c, const std::string& hex,
                            const std::string& action) {
  const Collection& coll = *c->route.collection;
  int64_t delay = options.provision_delay.count();
  Submit(c, [this, id = hex, action, delay, &coll](WriteTxn& txn, Call& call) {
    auto internal = [&] {
      call.result =
          MakeError(500, "internal_error", "the store failed; retry later", call.request_id);
      call.store_result = false;
    };
    std::optional<Record> live = LiveRecord(txn, call, id, coll);
    if (!live) return;
    Record r = std::move(*live);
    call.store_result = true;
    if (coll.lifecycle) {
      CustomerStatus cs = ProjectCustomerStatus(r.status, r.last_op, r.kind == "instance");
      bool allowed = action == "delete"  ? cs.actions.del
                     : action == "start" ? cs.actions.start
                     : action == "stop"  ? cs.actions.stop
                                         : cs.actions.reboot;
      if (!allowed) {
        call.result = MakeError(409, "action_not_allowed",
                                action + " is not allowed while the resource is " + cs.status,
                                call.request_id);
        return;
      }
    }
    if (action == "delete" && r.kind == "network") {
      auto users = txn.FindReferencing(call.project, "instance", "network", r.id);
      if (!users.ok()) return internal();
      if (!users->empty()) {
        call.result = MakeError(409, "resource_in_use",
                                "the network is used by " + std::to_string(users->size()) +
                                    " instance(s), e.g. inst_" + users->front().id +
                                    "; delete or move them first",
                                call.request_id);
        return;
      }
    }
    if (action == "delete" && r.kind == "instance") {
      // Volumes are detached and kept; firewalls forget the instance.
      auto vols = txn.FindReferencing(call.project, "volume", "instance", r.id);
      if (!vols.ok()) return internal();
      for (Record& v : *vols) {
        v.attrs["instance"] = nullptr;
        if (!txn.Update(v).ok()) return internal();
      }
      auto fws = txn.FindReferencing(call.project, "firewall", "instances", r.id);
      if (!fws.ok()) return internal();
      for (Record& f : *fws) {
        json kept = json::array();
        for (const auto& e : f.attrs["instances"]) {
          if (e != r.id) kept.push_back(e);
        }
        f.attrs["instances"] = kept;
        if (!txn.Update(f).ok()) return internal();
      }
    }
    if (!coll.lifecycle) {
      r.status = "deleted";
      r.last_op = "delete";
      if (!txn.Update(r).ok()) return internal();
      call.result = ApiResponse{};
      call.result.status = 204;
      return;
    }
    r.status = action == "delete"  ? "deleting"
               : action == "start" ? "starting"
               : action == "stop"  ? "stopping"
                                   : "rebooting";
    r.last_op = action;
    r.next_step_ms = NowMs() + delay;
    if (!txn.Update(r).ok()) return internal();
    call.result = Json(202, Wrap(coll, r));
  });
}

std::optional<ApiResponse> Api::Impl::CheckRefs(WriteTxn& txn, Call& c,
                                                const std::vector<RefCheck>& refs,
                                                const std::string& region) {
  for (const RefCheck& ref : refs) {
    auto got = txn.Get(c.project, ref.hex);
    if (!got.ok())
      return MakeError(500, "internal_error", "the store failed; retry later", c.request_id);
    const auto& rec = *got;
    if (!rec || rec->kind != ref.kind || rec->status == "deleted" || rec->status == "deleting") {
      return MakeError(400, "validation_error", ref.field + ": no such " + std::string(ref.kind),
                       c.request_id);
    }
    if (ref.same_region && rec->attrs.value("region", "") != region) {
      return MakeError(400, "validation_error",
                       ref.field + ": the " + std::string(ref.kind) + " is in region " +
                           rec->attrs.value("region", "") + ", not " + region,
                       c.request_id);
    }
  }
  return std::nullopt;
}

void Api::Impl::Submit(std::shared_ptr<Call> c, std::function<void(WriteTxn&, Call&)> body) {
  metrics->MutationSubmitted();
  store->Submit(
      [c, body = std::move(body)](WriteTxn& txn) {
        try {
          body(txn, *c);
        } catch (const std::exception& e) {
          spdlog::error("internal error: mutation of request {} threw: {}", c->request_id,
                        e.what());
          c->result =
              MakeError(500, "internal_error", "internal error, please report", c->request_id);
          return false;
        }
        // 400s (and failures) are not executed requests: nothing is kept.
        if (c->result.status == 400 || c->result.status >= 500) return false;
        if (!c->scope.empty() && c->store_result) {
          StoredResponse s;
          s.request_sha256 = c->request_sha;
          s.status = c->result.status;
          s.headers_json = HeadersToJson(c->result.headers);
          s.body = c->result.body;
          s.created_ms = NowMs();
          if (!txn.PutResponse(c->scope, s).ok()) {
            c->result =
                MakeError(500, "internal_error", "the store failed; retry later", c->request_id);
            return false;
          }
        }
        return true;
      },
      [this, c](const Status& st) {
        if (!c->scope.empty()) store->ReleaseKey(c->scope);
        metrics->MutationAnswered();
        if (!st.ok()) {
          return Fail(*c, 503, "service_unavailable", "the write was not committed; retry later");
        }
        if (c->result.status / 100 == 2) {
          for (const auto& s : c->transitions) metrics->CountTransition(s);
        }
        if (c->drop_after) {
          ApiResponse r;
          r.status = 0;  // committed, but nothing is sent
          r.drop = true;
          return Finish(*c, std::move(r));
        }
        Finish(*c, std::move(c->result));
      });
}

}  // namespace cairn::server
