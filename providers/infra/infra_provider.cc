#include "providers/infra/infra_provider.h"

#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <random>

#include "base/redact.h"
#include "providers/infra/canonical_id.h"
#include "providers/infra/kind_watcher.h"

namespace cairn {

struct InfraProvider::Outcome {
  Status status;  // OK: `response` is a final HTTP answer (any status), or `found`
  HttpResponse response;
  std::optional<RemoteResource> found;  // from `before_resend`: no answer to use
  int attempts = 0;
  std::vector<Diagnostic> diagnostics;  // set when status is not OK
};

namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// The learnt first poll after a create may shrink to nothing: on an API
// whose creates are ready by the time their answer arrives, the look goes at
// once.
constexpr microseconds kShortestFirstPoll{0};

// A draw in [0, 1) for jitter.
double UnitRandom() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

std::string NewRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[40];
  std::snprintf(buf, sizeof buf, "req_%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

bool IsSuccess(int status) { return status >= 200 && status < 300; }

// The {"error": {code, message, request_id}} of an error answer, redacted.
struct ApiError {
  std::string code;
  std::string message;
  std::string request_id;
};

ApiError ParseError(const HttpResponse& resp) {
  ApiError e;
  auto parsed = ParseJson(resp.body);
  Value body = parsed.ok() ? std::move(*parsed) : Value();
  if (body.is_object()) {
    auto err = body.find("error");
    if (err != body.end() && err->is_object()) {
      e.code = err->value("code", "");
      // Ids in the form the state records them (a 409 names `inst_<hex>`
      // where the state and `cairn state list` say the UUID).
      e.message = CanonicalIdsIn(Redact(err->value("message", "")));
      e.request_id = Redact(err->value("request_id", ""));
    }
  }
  if (e.code.empty()) e.code = "http_" + std::to_string(resp.status);
  if (e.message.empty()) e.message = "HTTP " + std::to_string(resp.status);
  if (e.request_id.empty()) e.request_id = Redact(resp.Header("x-request-id"));
  return e;
}

std::optional<std::chrono::seconds> ParseRetryAfter(const std::string& value) {
  int64_t seconds = 0;
  const char* end = value.data() + value.size();
  auto [p, ec] = std::from_chars(value.data(), end, seconds);
  if (ec != std::errc() || p != end || seconds <= 0) return std::nullopt;
  return std::chrono::seconds(std::min<int64_t>(seconds, 24 * 3600));
}

StatusCode CodeForHttp(int status) {
  switch (status) {
    case 400:
    case 413:
    case 415:
    case 422:
      return StatusCode::kInvalidArgument;
    case 404:
      return StatusCode::kNotFound;
    case 409:
      return StatusCode::kConflict;
    default:
      return StatusCode::kFailedPrecondition;
  }
}

Diagnostic MakeDiagnostic(std::string code, std::string summary, std::string detail = "") {
  Diagnostic d;
  d.code = std::move(code);
  d.summary = Redact(summary);
  d.detail = Redact(detail);
  return d;
}

// A final error answer as a Status plus a Diagnostic carrying the server's code.
Status ErrorAnswer(const std::string& what, const std::string& method, const std::string& path,
                   const HttpResponse& resp, std::vector<Diagnostic>* diags) {
  ApiError e = ParseError(resp);
  std::string detail = "HTTP " + std::to_string(resp.status) + " from " + method + " " + path;
  if (!e.request_id.empty()) detail += " (request id " + e.request_id + ")";
  if (resp.status == 401) {
    // Every call would be refused alike: one summary, whatever the call
    // (an API-wide failure, engine/provider/provider.h), said once.
    const std::string summary = "the API refused the token: " + e.message;
    diags->push_back(MakeDiagnostic(
        "unauthorized", summary,
        detail + "; check the token (CAIRN_TOKEN, or the variable the provider document's "
                 "token_env names)"));
    return Status(StatusCode::kFailedPrecondition, Redact(summary));
  }
  diags->push_back(MakeDiagnostic(e.code, what + ": " + e.message, detail));
  return Status(CodeForHttp(resp.status), Redact(what + ": " + e.code + ": " + e.message));
}

}  // namespace

bool ValueHasPrivateKey(const Value& v) {
  if (v.is_string())
    return ContainsPrivateKeyMaterial(std::string_view(v.get_ref<const std::string&>()));
  if (v.is_structured()) {
    for (const auto& [key, item] : v.items()) {
      if (ContainsPrivateKeyMaterial(std::string_view(key)) || ValueHasPrivateKey(item))
        return true;
    }
  }
  return false;
}

InfraProvider::InfraProvider(Options options, const std::map<std::string, Value>& kinds,
                             HttpTransport& transport, Clock& clock)
    : options_(std::move(options)),
      transport_(transport),
      clock_(clock),
      ready_estimate_(options_.first_look_initial, kShortestFirstPoll, options_.poll_backoff.max) {
  while (!options_.endpoint.empty() && options_.endpoint.back() == '/') {
    options_.endpoint.pop_back();
  }
  RegisterSecret(options_.token);
  for (const auto& [kind, descriptor] : kinds) {
    auto parsed = ParseKindWire(descriptor);
    if (!parsed.ok()) {
      broken_.emplace(kind, parsed.status());
      if (descriptor_status_.ok()) descriptor_status_ = parsed.status();
      continue;
    }
    if (parsed->kind != kind) {
      Status st = Status::InvalidArgument("x-cairn descriptor registered as \"" + kind +
                                          "\" describes kind \"" + parsed->kind + "\"");
      broken_.emplace(kind, st);
      if (descriptor_status_.ok()) descriptor_status_ = st;
      continue;
    }
    wires_.emplace(kind, std::move(parsed).value());
  }
}

const KindWire* InfraProvider::wire(const std::string& kind) const {
  auto it = wires_.find(kind);
  return it == wires_.end() ? nullptr : &it->second;
}

Result<const KindWire*> InfraProvider::Lookup(const std::string& kind) const {
  if (auto it = wires_.find(kind); it != wires_.end()) return &it->second;
  if (auto it = broken_.find(kind); it != broken_.end()) return it->second;
  return Status::InvalidArgument("the infra provider has no kind \"" + kind + "\"");
}

Clock::time_point InfraProvider::DeadlineFromNow(std::chrono::seconds d) const {
  return clock_.Now() + d;
}

InfraProvider::Outcome InfraProvider::Exchange(
    const std::string& method, const std::string& path, const std::string& body,
    const std::string& idempotency_key, Clock::time_point deadline, std::stop_token stop,
    const std::function<Result<std::optional<RemoteResource>>()>& before_resend) {
  Outcome out;
  std::string last_problem;
  std::string last_code;
  bool outcome_unknown = false;  // an attempt may have taken effect: stays set
  int unreachable = 0;           // attempts that could not connect
  for (int retry = 0;; ++retry) {
    if (stop.stop_requested()) {
      out.status = Status::Cancelled(method + " " + path + " cancelled");
      return out;
    }
    if (outcome_unknown && before_resend) {
      Result<std::optional<RemoteResource>> found = before_resend();
      if (!found.ok()) {
        // Sending again could make a second one: stop, outcome unknown.
        std::string summary = method + " " + path + " failed (" + last_problem +
                              ") and whether it took effect cannot be checked";
        out.status = Status::Unavailable(Redact(summary + ": " + found.status().message()));
        out.diagnostics.push_back(MakeDiagnostic(last_code, summary, found.status().message()));
        return out;
      }
      if (*found) {
        out.found = std::move(*found);
        return out;
      }
    }
    HttpRequest req;
    req.method = method;
    req.url = options_.endpoint + path;
    req.body = body;
    req.connect_timeout = options_.connect_timeout;
    auto remaining = std::chrono::duration_cast<milliseconds>(deadline - clock_.Now());
    req.timeout = std::clamp(remaining, milliseconds(1), options_.request_timeout);
    const std::string request_id = NewRequestId();
    req.headers = {{"Authorization", "Bearer " + options_.token},
                   {"Accept", "application/json"},
                   {"User-Agent", options_.user_agent},
                   {"X-Request-ID", request_id}};
    if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
    if (!idempotency_key.empty()) req.headers.emplace_back("Idempotency-Key", idempotency_key);

    const auto started = clock_.Now();
    Result<HttpResponse> answer = transport_.Send(req, stop);
    const auto latency = std::chrono::duration_cast<milliseconds>(clock_.Now() - started).count();
    ++out.attempts;

    std::optional<std::chrono::seconds> retry_after;
    // A connection refused is retried quietly: it gives up after a few
    // attempts with one diagnostic, which a warning per call would only repeat.
    bool quiet = false;
    if (!answer.ok()) {
      spdlog::debug("infra: {} {} -> {} in {} ms (request {}, attempt {})", method, path,
                    StatusCodeName(answer.status().code()), latency, request_id, out.attempts);
      if (answer.status().code() == StatusCode::kCancelled || stop.stop_requested()) {
        out.status = Status::Cancelled(method + " " + path + " cancelled");
        return out;
      }
      last_code = "network_error";
      last_problem = Redact(answer.status().message());
      if (answer.status().code() == StatusCode::kFailedPrecondition) {
        // The server's certificate is not trusted: the same next time.
        std::string summary = "the API at " + options_.endpoint +
                              " presented a TLS certificate that cannot be verified";
        std::string hint =
            "if its certificate comes from a private CA, point CAIRN_CA_BUNDLE (or ca_bundle in "
            "the provider document) at that CA's PEM certificate; check that the endpoint's "
            "host name is one the certificate names";
        out.status = outcome_unknown
                         ? Status::Unavailable(Redact(summary + ": " + last_problem))
                         : Status::FailedPrecondition(Redact(summary + ": " + last_problem));
        out.diagnostics.push_back(
            MakeDiagnostic("tls_untrusted", summary, last_problem + "; " + hint));
        return out;
      }
      quiet = answer.status().code() == StatusCode::kUnreachable;
      if (answer.status().code() != StatusCode::kUnreachable) {
        outcome_unknown = true;
      } else if (++unreachable >= options_.max_unreachable_attempts) {
        std::string summary = "cannot reach the API at " + options_.endpoint + " (" +
                              std::to_string(unreachable) + " attempts)";
        std::string hint =
            "check CAIRN_ENDPOINT (or the provider document's endpoint) and that the server runs";
        // Nothing of this call was sent, unless an earlier attempt was.
        out.status = outcome_unknown ? Status::Unavailable(Redact(summary + ": " + last_problem))
                                     : Status::Unreachable(Redact(summary + ": " + last_problem));
        out.diagnostics.push_back(
            MakeDiagnostic("unreachable", summary, last_problem + "; " + hint));
        return out;
      }
    } else {
      const HttpResponse& resp = *answer;
      spdlog::debug("infra: {} {} -> {} in {} ms (request {}, attempt {})", method, path,
                    resp.status, latency, request_id, out.attempts);
      bool retryable = false;
      if (resp.status == 429) {
        retryable = true;
        retry_after = ParseRetryAfter(resp.Header("retry-after"));
      } else if (resp.status >= 500 && resp.status <= 599) {
        retryable = true;
        outcome_unknown = true;
      } else if (resp.status == 409) {
        retryable = ParseError(resp).code == "idempotency_key_in_use";
      }
      if (!retryable) {
        out.response = std::move(answer).value();
        return out;
      }
      ApiError e = ParseError(resp);
      last_code = e.code;
      last_problem = "HTTP " + std::to_string(resp.status) + " " + e.code + ": " + e.message;
    }

    milliseconds delay = BackoffDelay(options_.retry_backoff, retry, UnitRandom(), retry_after);
    if (retry % 5 == 0 && !quiet && clock_.Now() + delay <= deadline) {
      // Users see why a command is slow; every fifth retry is enough.
      spdlog::warn("{} {}: {}; retrying in {} ms (attempt {})", method, path, last_problem,
                   delay.count(), out.attempts);
    }
    if (clock_.Now() + delay > deadline) {
      std::string summary = method + " " + path + " still failing after " +
                            std::to_string(out.attempts) + " attempt(s), deadline reached";
      out.status = Status::DeadlineExceeded(Redact(summary + "; last: " + last_problem));
      out.diagnostics.push_back(MakeDiagnostic(last_code.empty() ? "deadline_exceeded" : last_code,
                                               summary, "last failure: " + last_problem));
      return out;
    }
    if (!clock_.SleepFor(delay, stop)) {
      out.status = Status::Cancelled(method + " " + path + " cancelled");
      return out;
    }
  }
}

Result<Value> InfraProvider::Unwrap(const KindWire& wire, const HttpResponse& resp) const {
  auto body = ParseJson(resp.body);
  if (!body.ok() || !body->is_object()) {
    return Status::Internal(wire.kind + " response is not a JSON object" +
                            (body.ok() ? "" : " (" + body.status().message() + ")"));
  }
  if (!wire.envelope) return body;
  auto it = body->find(*wire.envelope);
  if (it == body->end() || !it->is_object()) {
    return Status::Internal(wire.kind + " response lacks its \"" + *wire.envelope + "\" envelope");
  }
  return std::move(*it);  // body is dropped: no deep copy
}

Result<RemoteResource> InfraProvider::ToResource(const KindWire& wire,
                                                 const HttpResponse& resp) const {
  auto obj = Unwrap(wire, resp);
  if (!obj.ok()) return obj.status();
  auto mapped = MapResponse(wire, *obj);
  if (!mapped.ok()) return Status::Internal(mapped.status().message());
  return RemoteResource{wire.kind, mapped->id, std::move(mapped->attributes)};
}

Result<std::optional<Value>> InfraProvider::Fetch(const KindWire& wire, const std::string& id,
                                                  Clock::time_point deadline, std::stop_token stop,
                                                  std::vector<Diagnostic>* diags) {
  if (!IsSafePathId(id)) {
    return Status::InvalidArgument(wire.kind + " id \"" + Redact(id) + "\" is not a valid id");
  }
  const std::string path = wire.collection + "/" + id;
  Outcome o = Exchange("GET", path, "", "", deadline, stop);
  if (!o.status.ok()) {
    diags->insert(diags->end(), o.diagnostics.begin(), o.diagnostics.end());
    return o.status;
  }
  if (o.response.status == 404) return std::optional<Value>();
  if (!IsSuccess(o.response.status)) {
    return ErrorAnswer("read " + wire.kind + " " + id, "GET", path, o.response, diags);
  }
  auto obj = Unwrap(wire, o.response);
  if (!obj.ok()) return obj.status();
  RememberActions(wire, *obj);
  return std::optional<Value>(std::move(obj).value());
}

ReadResponse InfraProvider::Read(const ReadRequest& req, std::stop_token stop) {
  ReadResponse out;
  auto wire = Lookup(req.kind);
  if (!wire.ok()) {
    out.status = wire.status();
    return out;
  }
  auto obj = Fetch(**wire, req.id,
                   DeadlineFromNow(std::min(options_.read_deadline, options_.operation_deadline)),
                   stop, &out.diagnostics);
  if (!obj.ok()) {
    out.status = obj.status();
    return out;
  }
  if (!obj->has_value()) return out;
  auto mapped = MapResponse(**wire, **obj);
  if (!mapped.ok()) {
    out.status = Status::Internal(mapped.status().message());
    return out;
  }
  out.resource = RemoteResource{req.kind, mapped->id, std::move(mapped->attributes)};
  return out;
}

ListResponse InfraProvider::List(const ListRequest& req, std::stop_token stop) {
  ListResponse out;
  auto found = Lookup(req.kind);
  if (!found.ok()) {
    out.status = found.status();
    return out;
  }
  const KindWire& wire = **found;
  const auto deadline =
      DeadlineFromNow(std::min(options_.read_deadline, options_.operation_deadline));
  // Each object mapped as its page is read, the page then dropped: the
  // objects as the API shows them were 290 MB of a plan of 100,000.
  out.status =
      ListEach(wire, deadline, stop, &out.requests, &out.diagnostics, [&](Value&& obj) -> Status {
        auto mapped = MapResponse(wire, obj);
        if (!mapped.ok()) {
          return Status::Internal("list of " + wire.kind + ": " + mapped.status().message());
        }
        out.resources.push_back(
            RemoteResource{wire.kind, mapped->id, std::move(mapped->attributes)});
        return Status::Ok();
      });
  if (!out.status.ok()) out.resources.clear();
  return out;
}

Result<std::vector<Value>> InfraProvider::ListRaw(const KindWire& wire, Clock::time_point deadline,
                                                  std::stop_token stop, int* requests,
                                                  std::vector<Diagnostic>* diags) {
  std::vector<Value> out;
  Status listed = ListEach(wire, deadline, stop, requests, diags, [&](Value&& obj) {
    out.push_back(std::move(obj));
    return Status::Ok();
  });
  if (!listed.ok()) return listed;
  return out;
}

Status InfraProvider::ListEach(const KindWire& wire, Clock::time_point deadline,
                               std::stop_token stop, int* requests, std::vector<Diagnostic>* diags,
                               const std::function<Status(Value&&)>& each) {
  const std::string first = wire.collection + "?limit=" + std::to_string(options_.page_limit);
  std::string path = first;
  std::set<std::string> seen;  // paths requested: a repeated one would loop forever
  for (;;) {
    if (!seen.insert(path).second) {
      return Status::Internal("list of " + wire.kind + " repeats page " + path);
    }
    Outcome o = Exchange("GET", path, "", "", deadline, stop);
    ++*requests;
    if (!o.status.ok()) {
      diags->insert(diags->end(), o.diagnostics.begin(), o.diagnostics.end());
      return o.status;
    }
    if (!IsSuccess(o.response.status)) {
      return ErrorAnswer("list " + wire.kind, "GET", path, o.response, diags);
    }
    auto parsed = ParseJson(o.response.body);
    Value page = parsed.ok() ? std::move(*parsed) : Value();
    auto data = page.is_object() ? page.find("data") : page.end();
    if (!page.is_object() || data == page.end() || !data->is_array()) {
      return Status::Internal("list of " + wire.kind + " answered without a data array");
    }
    for (auto& item : *data) {
      // Tolerate enveloped items although lists carry bare objects.
      Value obj = wire.envelope && item.is_object() && item.contains(*wire.envelope) &&
                          !item.contains(wire.id_field)
                      ? std::move(item.at(*wire.envelope))
                      : std::move(item);
      RememberActions(wire, obj);
      if (Status taken = each(std::move(obj)); !taken.ok()) return taken;
    }

    // Where the next page is, if anywhere.
    const Value* pagination = FindPath(page, "pagination");
    std::string cursor;
    if (pagination != nullptr && pagination->is_object()) {
      if (wire.pagination == PaginationShape::kNextCursor) {
        const Value* more = FindPath(*pagination, "has_more");
        const Value* next = FindPath(*pagination, "next_cursor");
        bool has_more = more != nullptr && more->is_boolean() && more->get<bool>();
        if (has_more && next != nullptr && next->is_string()) cursor = next->get<std::string>();
      } else {
        const Value* next = FindPath(*pagination, "next");
        if (next != nullptr && next->is_string()) cursor = next->get<std::string>();
      }
    }
    if (cursor.empty()) return Status::Ok();
    if (cursor.front() == '/') {
      path = cursor;  // a link on the same origin
    } else if (cursor.rfind(options_.endpoint + "/", 0) == 0) {
      path = cursor.substr(options_.endpoint.size());
    } else if (cursor.rfind("http://", 0) == 0 || cursor.rfind("https://", 0) == 0) {
      // Never send the token to another origin.
      return Status::Internal("list of " + wire.kind + " links to another origin");
    } else {
      char* escaped = curl_easy_escape(nullptr, cursor.c_str(), static_cast<int>(cursor.size()));
      if (escaped == nullptr) return Status::Internal("cannot escape a list cursor");
      path = first + "&cursor=" + escaped;
      curl_free(escaped);
    }
  }
}

Result<PreparedMutation> InfraProvider::Prepare(const PrepareRequest& req) {
  auto found = Lookup(req.kind);
  if (!found.ok()) return found.status();
  const KindWire& wire = **found;
  PreparedMutation m;
  m.kind = req.kind;
  m.action = req.action;
  const std::string what = std::string(ActionName(req.action)) + " " + req.kind;

  if (req.action != Action::kDelete) {
    // Before anything else: private keys never go further than this.
    if (ValueHasPrivateKey(req.spec)) {
      return Status::InvalidArgument(
          what + ": the spec contains private key material; only public keys may be sent");
    }
    if (!req.spec.is_object()) return Status::InvalidArgument(what + ": spec must be an object");
    for (const auto& [name, v] : req.spec.items()) {
      auto f = wire.fields.find(name);
      if (f == wire.fields.end()) {
        return Status::InvalidArgument(what + ": the kind has no field \"" + name + "\"");
      }
      if (!f->second.request) continue;  // computed: dropped, never sent
      if (ContainsUnknown(v)) {
        return Status::InvalidArgument(what + ": field \"" + name +
                                       "\" is not known until apply; resolve it first");
      }
      if (req.action == Action::kUpdate && wire.immutable.count(name)) {
        return Status::InvalidArgument(what + ": field \"" + name +
                                       "\" cannot change in place (it forces replacement)");
      }
    }
    auto body = MapRequest(wire, req.spec);
    if (!body.ok()) return body.status();
    if (req.action == Action::kUpdate && body->empty()) {
      return Status::InvalidArgument(what + ": nothing to update");
    }
    m.body = body->dump();
  }

  if (req.action == Action::kCreate) {
    m.method = "POST";
    m.path = wire.collection;
    return m;
  }
  if (!IsSafePathId(req.id)) {
    return Status::InvalidArgument(what + ": \"" + Redact(req.id) + "\" is not a valid id");
  }
  m.id = req.id;
  m.method = req.action == Action::kUpdate ? "PATCH" : "DELETE";
  m.path = wire.collection + "/" + req.id;
  return m;
}

Status InfraProvider::CheckMutation(const PreparedMutation& m, Action action,
                                    const std::string& key) const {
  const std::string what = std::string(ActionName(action)) + " " + m.kind;
  auto found = Lookup(m.kind);
  if (!found.ok()) return found.status();
  const KindWire& wire = **found;
  if (m.action != action) {
    return Status::InvalidArgument(what + ": the prepared mutation is a " + ActionName(m.action));
  }
  if (key.empty()) return Status::InvalidArgument(what + ": no Idempotency-Key");
  const char* method = action == Action::kCreate   ? "POST"
                       : action == Action::kUpdate ? "PATCH"
                                                   : "DELETE";
  std::string path = wire.collection;
  if (action != Action::kCreate) {
    if (!IsSafePathId(m.id)) return Status::InvalidArgument(what + ": invalid id");
    path += "/" + m.id;
  }
  if (m.method != method || m.path != path) {
    return Status::InvalidArgument(what + ": the prepared request is not " + method + " " + path);
  }
  if (action == Action::kDelete && !m.body.empty()) {
    return Status::InvalidArgument(what + ": a delete has no body");
  }
  if (ContainsPrivateKeyMaterial(std::string_view(m.body))) {
    return Status::InvalidArgument(what +
                                   ": the body contains private key material; refusing to send");
  }
  return Status::Ok();
}

void InfraProvider::RememberActions(const KindWire& wire, const Value& obj) {
  if (!options_.remember_actions || !wire.has_customer_status || !obj.is_object()) return;
  const Value* actions = FindPath(obj, "customerStatus.actions");
  const Value* id = FindPath(obj, wire.id_field);
  if (actions == nullptr || !actions->is_object() || id == nullptr || !id->is_string()) return;
  const Clock::time_point now = clock_.Now();
  MutexLock lock(seen_mu_);
  if (now - seen_pruned_at_ > kSeenFresh) {
    std::erase_if(seen_, [&](const auto& e) { return now - e.second.at > kSeenFresh; });
    seen_pruned_at_ = now;
  }
  seen_[CanonicalId(id->get<std::string>())] = {now, *actions};
}

std::optional<bool> InfraProvider::OfferedRecently(const std::string& id, const char* flag) {
  MutexLock lock(seen_mu_);
  auto it = seen_.find(CanonicalId(id));
  if (it == seen_.end() || clock_.Now() - it->second.at > kSeenFresh) return std::nullopt;
  auto offered = it->second.actions.find(flag);
  if (offered == it->second.actions.end() || !offered->is_boolean()) return std::nullopt;
  return offered->get<bool>();
}

Status InfraProvider::AwaitAction(const KindWire& wire, const std::string& id, const char* flag,
                                  Clock::time_point deadline, std::stop_token stop, bool* gone,
                                  std::vector<Diagnostic>* diags) {
  *gone = false;
  // Seen offered a moment ago: the server's answer decides (a 409 comes
  // back here through SendGated, and then the resource is read).
  if (OfferedRecently(id, flag) == true) return Status::Ok();
  for (int attempt = 0;; ++attempt) {
    auto obj = Fetch(wire, id, deadline, stop, diags);
    if (!obj.ok()) return obj.status();
    if (!obj->has_value()) {
      *gone = true;
      return Status::Ok();
    }
    const Value* offered = FindPath(**obj, std::string("customerStatus.actions.") + flag);
    if (offered == nullptr || !offered->is_boolean() || offered->get<bool>()) return Status::Ok();

    milliseconds delay = BackoffDelay(options_.poll_backoff, attempt, UnitRandom());
    if (clock_.Now() + delay > deadline) {
      const Value* status = FindPath(**obj, "customerStatus.status");
      const Value* reason = FindPath(**obj, "customerStatus.reasonCode");
      const Value* guidance = FindPath(**obj, "customerStatus.guidance");
      std::string summary = wire.kind + " " + id + ": \"" + flag + "\" is still not offered";
      if (status != nullptr && status->is_string()) {
        summary += " (status " + status->get<std::string>();
        if (reason != nullptr && reason->is_string()) summary += ", " + reason->get<std::string>();
        summary += ")";
      }
      diags->push_back(MakeDiagnostic(
          "action_not_allowed", summary,
          guidance != nullptr && guidance->is_string() ? guidance->get<std::string>() : ""));
      return Status::DeadlineExceeded(Redact(summary));
    }
    if (!clock_.SleepFor(delay, stop))
      return Status::Cancelled(wire.kind + " " + id + " cancelled");
  }
}

InfraProvider::Outcome InfraProvider::SendGated(const KindWire& wire, const PreparedMutation& m,
                                                const std::string& key, const char* flag,
                                                Clock::time_point deadline, std::stop_token stop,
                                                bool* gone) {
  *gone = false;
  for (int attempt = 0;; ++attempt) {
    Outcome o;
    if (wire.has_customer_status) {
      o.status = AwaitAction(wire, m.id, flag, deadline, stop, gone, &o.diagnostics);
      if (!o.status.ok() || *gone) return o;
    }
    o = Exchange(m.method, m.path, m.body, key, deadline, stop);
    {
      // What was seen is stale now: the mutation changes it, or the server
      // refused it on grounds the cache did not show.
      MutexLock lock(seen_mu_);
      seen_.erase(CanonicalId(m.id));
    }
    if (!o.status.ok() || !wire.has_customer_status || o.response.status != 409 ||
        ParseError(o.response).code != "action_not_allowed") {
      return o;
    }
    milliseconds delay = BackoffDelay(options_.poll_backoff, attempt, UnitRandom());
    if (clock_.Now() + delay > deadline) return o;  // the 409 is the answer
    if (!clock_.SleepFor(delay, stop)) {
      o.status = Status::Cancelled(m.method + " " + m.path + " cancelled");
      return o;
    }
  }
}

CreateResponse InfraProvider::Create(const CreateRequest& req, std::stop_token stop) {
  CreateResponse out;
  const PreparedMutation& m = req.mutation;
  out.status = CheckMutation(m, Action::kCreate, req.idempotency_key);
  if (!out.status.ok()) return out;
  const KindWire& wire = **Lookup(m.kind);
  std::function<Result<std::optional<RemoteResource>>()> before_resend;
  if (wire.api == "preview") {
    // That API cannot deduplicate creates (spec 4.3 rule 6): an attempt that
    // failed may still have made the resource, so look before sending again.
    auto parsed = ParseJson(m.body);
    Value body = parsed.ok() ? std::move(*parsed) : Value();
    std::string name = StringMember(body, "name");  // a journaled body may hold anything
    before_resend = [&, body, name]() -> Result<std::optional<RemoteResource>> {
      if (name.empty()) return Status::FailedPrecondition("the request names no resource");
      ListResponse listed = FindByName(m.kind, name, stop);
      if (!listed.status.ok()) return listed.status;
      return SoleResultOf(std::move(listed.resources), body);
    };
  }
  Outcome o = Exchange(m.method, m.path, m.body, req.idempotency_key,
                       DeadlineFromNow(options_.operation_deadline), stop, before_resend);
  if (!o.status.ok()) {
    out.status = o.status;
    out.diagnostics = std::move(o.diagnostics);
    return out;
  }
  if (o.found) {
    spdlog::info("create {} {}: an attempt that failed had made it, found by name; not sent again",
                 m.kind, o.found->id);
    out.resource = std::move(o.found);
    out.found_by_name = true;
    return out;
  }
  if (!IsSuccess(o.response.status)) {
    out.status = ErrorAnswer("create " + m.kind, m.method, m.path, o.response, &out.diagnostics);
    return out;
  }
  out.replayed = o.response.Header("idempotent-replayed") == "true";
  auto resource = ToResource(wire, o.response);
  if (!resource.ok()) {
    out.status = resource.status();
    return out;
  }
  out.resource = std::move(resource).value();
  return out;
}

UpdateResponse InfraProvider::Update(const UpdateRequest& req, std::stop_token stop) {
  UpdateResponse out;
  const PreparedMutation& m = req.mutation;
  out.status = CheckMutation(m, Action::kUpdate, req.idempotency_key);
  if (!out.status.ok()) return out;
  const KindWire& wire = **Lookup(m.kind);
  const auto deadline = DeadlineFromNow(options_.operation_deadline);
  const std::string what = "update " + m.kind + " " + m.id;
  bool gone = false;
  Outcome o = SendGated(wire, m, req.idempotency_key, "edit", deadline, stop, &gone);
  if (!o.status.ok()) {
    out.status = o.status;
    out.diagnostics = std::move(o.diagnostics);
    return out;
  }
  if (gone) {
    out.diagnostics.push_back(MakeDiagnostic("resource_not_found", what + ": it does not exist"));
    out.status = Status::NotFound(what + ": it does not exist");
    return out;
  }
  if (!IsSuccess(o.response.status)) {
    out.status = ErrorAnswer(what, m.method, m.path, o.response, &out.diagnostics);
    return out;
  }
  out.replayed = o.response.Header("idempotent-replayed") == "true";
  // The update is done; an answer we cannot map only costs the echo.
  auto resource = ToResource(wire, o.response);
  if (resource.ok()) out.resource = std::move(resource).value();
  return out;
}

DeleteResponse InfraProvider::Delete(const DeleteRequest& req, std::stop_token stop) {
  DeleteResponse out;
  const PreparedMutation& m = req.mutation;
  out.status = CheckMutation(m, Action::kDelete, req.idempotency_key);
  if (!out.status.ok()) return out;
  const KindWire& wire = **Lookup(m.kind);
  const auto deadline = DeadlineFromNow(options_.operation_deadline);
  bool gone = false;
  Outcome o = SendGated(wire, m, req.idempotency_key, "delete", deadline, stop, &gone);
  if (!o.status.ok()) {
    out.status = o.status;
    out.diagnostics = std::move(o.diagnostics);
    return out;
  }
  if (gone) {
    out.already_gone = true;
    return out;
  }
  if (o.response.status == 404) {
    out.already_gone = true;
    return out;
  }
  if (!IsSuccess(o.response.status)) {
    out.status = ErrorAnswer("delete " + m.kind + " " + m.id, m.method, m.path, o.response,
                             &out.diagnostics);
  }
  return out;
}

bool InfraProvider::Settle(const KindWire& wire, const WaitRequest& req, const Value& obj,
                           WaitResponse* out) const {
  const bool for_ready = req.target == WaitTarget::kReady;
  const std::string what = wire.kind + " " + req.id;
  auto mapped = MapResponse(wire, obj);
  if (!mapped.ok()) {
    out->status = Status::Internal(mapped.status().message());
    return true;
  }
  out->resource = RemoteResource{wire.kind, mapped->id, std::move(mapped->attributes)};
  const Value* customer = FindPath(obj, "customerStatus.status");
  std::string customer_status =
      customer != nullptr && customer->is_string() ? customer->get<std::string>() : "";
  const Value& attrs = out->resource->attributes;
  auto status_it = attrs.find("status");
  std::string status =
      status_it != attrs.end() && status_it->is_string() ? status_it->get<std::string>() : "";
  if (!for_ready) {
    if (customer_status != "deleted") return false;
    out->resource.reset();
    return true;
  }
  if (!wire.ready_status || status == *wire.ready_status) return true;
  if (customer_status == "failed" || status == "failed") {
    const Value* reason = FindPath(obj, "customerStatus.reasonCode");
    const Value* guidance = FindPath(obj, "customerStatus.guidance");
    std::string code =
        reason != nullptr && reason->is_string() ? reason->get<std::string>() : "resource_failed";
    std::string summary = what + " failed: " + code;
    out->diagnostics.push_back(MakeDiagnostic(
        code, summary,
        guidance != nullptr && guidance->is_string() ? guidance->get<std::string>() : ""));
    out->status = Status::FailedPrecondition(Redact(summary));
    out->failed_reason = Redact(code);
    return true;
  }
  return false;
}

void InfraProvider::SettleGone(const KindWire& wire, const WaitRequest& req,
                               WaitResponse* out) const {
  out->resource.reset();
  if (req.target == WaitTarget::kDeleted) return;
  const std::string what = wire.kind + " " + req.id;
  std::string summary =
      what + (req.just_created ? " disappeared while waiting for it" : " does not exist");
  out->diagnostics.push_back(MakeDiagnostic("resource_not_found", summary));
  out->status = Status::NotFound(summary);
}

WaitResponse InfraProvider::Wait(const WaitRequest& req, std::stop_token stop) {
  // The watcher answers; this thread only sleeps until it has.
  struct Shared {
    Mutex mu;
    CondVar cv;
    std::optional<WaitResponse> response GUARDED_BY(mu);
  };
  auto shared = std::make_shared<Shared>();
  Watch(req, [shared](WaitResponse r) {
    MutexLock lock(shared->mu);
    shared->response = std::move(r);
    shared->cv.NotifyAll();
  });
  MutexLock lock(shared->mu);
  if (!shared->cv.Wait(shared->mu, stop,
                       [&]() REQUIRES(shared->mu) { return shared->response.has_value(); })) {
    WaitResponse out;
    out.status = Status::Cancelled("waiting for " + req.kind + " " + req.id + " cancelled");
    return out;  // the watcher's answer, when it comes, goes to `shared` alone
  }
  return std::move(*shared->response);
}

void InfraProvider::Watch(const WaitRequest& req, std::function<void(WaitResponse)> done) {
  auto found = Lookup(req.kind);
  if (!found.ok()) {
    WaitResponse out;
    out.status = found.status();
    return done(std::move(out));
  }
  KindWatcher* watcher;
  {
    MutexLock lock(watchers_mu_);
    auto& slot = watchers_[req.kind];
    if (!slot) slot = std::make_unique<KindWatcher>(*this, **found);
    watcher = slot.get();
  }
  watcher->Add(req, std::move(done));
}

int InfraProvider::watcher_requests() const {
  MutexLock lock(watchers_mu_);
  int n = 0;
  for (const auto& [kind, w] : watchers_) n += w->requests();
  return n;
}

InfraProvider::~InfraProvider() {
  MutexLock lock(watchers_mu_);
  watchers_.clear();  // each stops its thread
}

}  // namespace cairn
