#include "engine/apply/apply_sender.h"

#include <stop_token>
#include <utility>

#include "engine/crash_point.h"

namespace cairn {

bool OutcomeUnknown(const Status& st) {
  switch (st.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kCancelled:
    case StatusCode::kInternal:
    case StatusCode::kIOError:
      return true;
    default:
      return false;
  }
}

std::chrono::seconds ApplySender::Timeout(Action op) const {
  return op == Action::kCreate   ? options_.create_timeout
         : op == Action::kUpdate ? options_.update_timeout
                                 : options_.delete_timeout;
}

SendOutcome ApplySender::Send(const PlannedChange& c, Action op, bool recovered,
                              const JournalEntry& entry, const PreparedMutation& prepared) const {
  SendOutcome out;
  std::stop_token none;  // in-flight operations always finish
  const char* sent_point = recovered ? "recover.sent" : "apply.sent";
  out.wait = WaitRequest{c.kind, "", WaitTarget::kReady, Timeout(op)};
  if (op == Action::kDelete) {
    out.how = "delete completed";
    auto resp = provider_.Delete({prepared, entry.idempotency_key}, none);
    CrashPoint(sent_point);
    out.status = resp.status;
    out.diagnostics = std::move(resp.diagnostics);
    if (!out.status.ok()) return out;
    out.already_gone = resp.already_gone;
    out.wait.id = c.remote_id;
    out.wait.target = WaitTarget::kDeleted;
    return out;
  }
  out.how = "re-sent with its original idempotency key";
  if (op == Action::kCreate && recovered) {
    out.sent = FindOwnCreate(c.kind, entry);
    if (out.sent) out.how = "found by name";
  }
  if (out.sent) {
    // Adopted: nothing sent.
  } else if (op == Action::kCreate) {
    auto resp = provider_.Create({prepared, entry.idempotency_key}, none);
    CrashPoint(sent_point);
    out.status = resp.status.ok() && !resp.resource
                     ? Status::Internal("the API answered without a resource")
                     : resp.status;
    out.diagnostics = std::move(resp.diagnostics);
    out.sent = std::move(resp.resource);
    if (out.sent) out.wait.just_created = out.sent;
    if (resp.replayed) out.how = "adopted the API's replayed response";
  } else {
    auto resp = provider_.Update({prepared, entry.idempotency_key}, none);
    CrashPoint(sent_point);
    out.status = resp.status;
    out.diagnostics = std::move(resp.diagnostics);
    out.sent = resp.resource ? resp.resource : RemoteResource{c.kind, c.remote_id, c.before};
  }
  if (out.status.ok()) out.wait.id = out.sent->id;
  return out;
}

// A damaged state file may journal any JSON as the body.
std::optional<RemoteResource> ApplySender::FindOwnCreate(const std::string& kind,
                                                         const JournalEntry& entry) const {
  if (!options_.find_by_name_kinds.count(kind)) return std::nullopt;
  auto parsed = ParseJson(entry.body);
  Value body = parsed.ok() ? std::move(*parsed) : Value();
  std::string name = StringMember(body, "name");
  if (name.empty()) return std::nullopt;
  auto found = provider_.FindByName(kind, name, std::stop_token());
  if (!found.status.ok()) return std::nullopt;
  return SoleResultOf(std::move(found.resources), body);
}

}  // namespace cairn
