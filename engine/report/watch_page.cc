#include "engine/report/watch_page.h"

#include <cstddef>
#include <cstdio>
#include <set>
#include <string_view>
#include <vector>

#include "base/redact.h"
#include "engine/report/html_escape.h"

namespace cairn {
// A named namespace around the file-local helpers: the unity build puts this
// file beside the other reports, whose helpers must not meet these.
namespace watch_page {
namespace {

// Reading the document: never throws, whatever it holds.

const Value& Member(const Value& v, const char* key) {
  static const Value kAbsent;
  if (!v.is_object()) return kAbsent;
  auto it = v.find(key);
  return it == v.end() ? kAbsent : *it;
}

const Value& ArrayMember(const Value& v, const char* key) {
  static const Value kEmpty = Value::array();
  const Value& m = Member(v, key);
  return m.is_array() ? m : kEmpty;
}

std::string Text(const Value& v, const char* key) { return StringMember(v, key); }

// Escaped text, or a dash where the member is missing or empty.
std::string TextOrDash(const Value& v, const char* key) {
  std::string s = Text(v, key);
  return s.empty() ? "—" : HtmlEscape(s);
}

// A count as a number, or a dash where it is not one.
std::string CountText(const Value& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v.get<double>());
    return buf;
  }
  return "—";
}

bool IsPositive(const Value& v) { return v.is_number() && v.get<double>() > 0; }

// 0.214 -> "214 ms", 3.5 -> "3.5 s", 125 -> "2 min 5 s", 300 -> "5 min",
// 5400 -> "1 h 30 min".
std::string DurationText(const Value& v) {
  if (!v.is_number()) return "—";
  double s = v.get<double>();
  char buf[48];
  if (s < 0) {
    return "—";
  } else if (s < 1) {
    std::snprintf(buf, sizeof buf, "%.0f ms", s * 1000);
  } else if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else if (s < 3600) {
    long whole = static_cast<long>(s + 0.5);
    if (whole % 60 == 0) {
      std::snprintf(buf, sizeof buf, "%ld min", whole / 60);
    } else {
      std::snprintf(buf, sizeof buf, "%ld min %ld s", whole / 60, whole % 60);
    }
  } else if (s < 1e9) {  // beyond, a long would not hold it everywhere
    long minutes = static_cast<long>(s / 60 + 0.5);
    if (minutes % 60 == 0) {
      std::snprintf(buf, sizeof buf, "%ld h", minutes / 60);
    } else {
      std::snprintf(buf, sizeof buf, "%ld h %ld min", minutes / 60, minutes % 60);
    }
  } else {
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  }
  return buf;
}

// An RFC 3339 time as <time>, the 'T' shown as a space for reading.
std::string TimeHtml(const std::string& rfc3339) {
  if (rfc3339.empty()) return "—";
  std::string shown = rfc3339;
  if (shown.size() > 10 && shown[10] == 'T') shown[10] = ' ';
  return "<time datetime=\"" + HtmlEscape(rfc3339) + "\">" + HtmlEscape(shown) + "</time>";
}

// A JSON value of a change, compact, as the API would send it.
std::string CompactJson(const Value& v) {
  return v.dump(-1, ' ', false, Value::error_handler_t::replace);
}

// `name` as an id fragment: [A-Za-z0-9.-] kept, every other byte _XX. The
// mapping is one to one, so distinct names keep distinct ids.
std::string IdFragment(std::string_view name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '.' ||
        c == '-') {
      out += c;
    } else {
      out += '_';
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    }
  }
  return out;
}

// The statuses the contract names, with how the page says them; anything
// else is shown as it came, with the class of "unknown".
struct StatusLook {
  const char* token;
  const char* label;
};

constexpr StatusLook kStackStatuses[] = {
    {"pending", "pending"}, {"ok", "ok"},
    {"drifted", "drifted"}, {"checks_failing", "checks failing"},
    {"error", "error"},     {"standby", "standby"},
};
constexpr StatusLook kResourceStatuses[] = {
    {"in_sync", "in sync"}, {"changed", "changed"}, {"deleted", "deleted"}, {"failed", "failed"}};
constexpr StatusLook kCheckStatuses[] = {
    {"passed", "passed"}, {"failed", "failed"}, {"unknown", "unknown"}};
constexpr StatusLook kRemediationResults[] = {
    {"applied", "applied"}, {"refused", "refused"}, {"failed", "failed"}};

// `<span class="BASE BASE-TOKEN">label</span>`.
template <size_t N>
std::string Badge(const char* base, const std::string& status, const StatusLook (&known)[N]) {
  for (const StatusLook& look : known) {
    if (status == look.token) {
      return std::string("<span class=\"") + base + " " + base + "-" + look.token + "\">" +
             look.label + "</span>";
    }
  }
  return std::string("<span class=\"") + base + " " + base + "-unknown\">" +
         (status.empty() ? std::string("unknown") : HtmlEscape(status)) + "</span>";
}

std::string StackBadge(const std::string& status) {
  return Badge("status", status, kStackStatuses);
}

int FailingChecks(const Value& stack) {
  int n = 0;
  for (const Value& c : ArrayMember(stack, "checks")) n += Text(c, "status") == "failed";
  return n;
}

// Where a stack's status is one a person should look at: its section opens.
bool NeedsAttention(const std::string& status) {
  return status != "ok" && status != "standby" && status != "pending";
}

const char* kStyle =
    ":root{color-scheme:light}\n"
    "body{font-family:system-ui,-apple-system,\"Segoe UI\",sans-serif;margin:0;color:#1f2328;"
    "background:#f6f8fa;line-height:1.45}\n"
    "header{background:#24292f;color:#fff;padding:1em 2em}\n"
    "header h1{margin:0 0 .3em;font-size:1.4em}\n"
    "header dl{display:flex;flex-wrap:wrap;gap:.2em 2em;margin:0}\n"
    "header dt{color:#d0d7de;font-size:.85em}header dd{margin:0}\n"
    "header dl div{display:flex;flex-direction:column}\n"
    "main{padding:1em 2em 2em}\n"
    "h2{font-size:1.15em;margin:1.5em 0 .5em}h3{font-size:1em;margin:1em 0 .4em}\n"
    "code,.value{font-family:ui-monospace,\"SFMono-Regular\",Menlo,Consolas,monospace;"
    "font-size:.9em}\n"
    "table{border-collapse:collapse;background:#fff;margin:.3em 0 1em}\n"
    "th,td{border:1px solid #d0d7de;padding:.35em .6em;text-align:left;vertical-align:top}\n"
    "thead th{background:#eaeef2;font-weight:600}\n"
    "caption{text-align:left;caption-side:top}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.nonzero{font-weight:700;color:#953800}\n"
    ".value{overflow-wrap:anywhere}\n"
    ".status,.rstatus,.check,.remediation{display:inline-block;padding:.05em .55em;"
    "border-radius:1em;font-size:.85em;font-weight:600;white-space:nowrap;border:1px solid}\n"
    ".status-ok,.rstatus-in_sync,.check-passed,.remediation-applied{background:#dafbe1;"
    "color:#116329;border-color:#4ac26b}\n"
    ".status-drifted,.rstatus-changed{background:#fff8c5;color:#7d4e00;border-color:#d4a72c}\n"
    ".status-checks_failing,.rstatus-deleted,.check-failed,.remediation-refused{"
    "background:#ffebe9;color:#a40e26;border-color:#ff8182}\n"
    ".status-error,.rstatus-failed,.remediation-failed{background:#a40e26;color:#fff;"
    "border-color:#a40e26}\n"
    ".status-pending,.status-unknown,.rstatus-unknown,.check-unknown,.remediation-unknown{"
    "background:#eaeef2;color:#424a53;border-color:#afb8c1}\n"
    ".status-standby{background:#ddf4ff;color:#0a3069;border-color:#54aeff}\n"
    "details{background:#fff;border:1px solid #d0d7de;border-radius:6px;margin:.8em 0;"
    "padding:.3em 1em}\n"
    "details[open]{padding-bottom:1em}\n"
    "summary{cursor:pointer;font-weight:600;padding:.4em 0}\n"
    "summary .status{margin-left:.6em}\n"
    ".meta{color:#57606a;font-size:.9em;margin:.2em 0 .6em}\n"
    ".run-error{background:#ffebe9;border-left:4px solid #a40e26;padding:.4em .8em}\n"
    "ul.changes{margin:0;padding-left:1.1em}\n"
    ".empty{color:#57606a;font-style:italic}\n"
    "a{color:#0550ae}\n"
    "footer{color:#57606a;font-size:.85em;padding:0 2em 2em}\n";

class PageWriter {
 public:
  PageWriter(const Value& status, const WatchPageOptions& options)
      : status_(status), options_(options) {}

  std::string Render() {
    const Value& stacks = ArrayMember(status_, "stacks");
    // Ids first: every stack's, unique even if two share a name.
    std::set<std::string> taken;
    for (size_t i = 0; i < stacks.size(); ++i) {
      std::string name = Text(stacks[i], "name");
      std::string id = name.empty() ? "_n" + std::to_string(i) : IdFragment(name);
      if (!taken.insert(id).second) {
        id += "_n" + std::to_string(i);
        taken.insert(id);
      }
      ids_.push_back(id);
    }
    Head(stacks);
    Header();
    out_ += "<main>\n";
    Summary(stacks);
    StackTable(stacks);
    for (size_t i = 0; i < stacks.size(); ++i) StackSection(stacks[i], ids_[i]);
    out_ += "</main>\n";
    Footer();
    out_ += "</body>\n</html>\n";
    return std::move(out_);
  }

 private:
  void Head(const Value& stacks) {
    int attention = 0;
    for (const Value& s : stacks) attention += NeedsAttention(Text(s, "status"));
    std::string title = "Cairn watch: ";
    if (stacks.empty()) {
      title += "no stacks";
    } else if (attention > 0) {
      title += attention == 1 ? std::string("1 stack needs attention")
                              : std::to_string(attention) + " stacks need attention";
      if (static_cast<size_t>(attention) < stacks.size()) {
        title += " (of " + std::to_string(stacks.size()) + ")";
      }
    } else {
      title += std::to_string(stacks.size()) + (stacks.size() == 1 ? " stack" : " stacks");
    }
    out_ +=
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        // Nothing may be fetched, not even by markup that slipped through.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">\n";
    if (options_.refresh_seconds > 0) {
      out_ += "<meta http-equiv=\"refresh\" content=\"" + std::to_string(options_.refresh_seconds) +
              "\">\n";
    }
    out_ += "<title>" + title + "</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n";
  }

  void Header() {
    const Value& watcher = Member(status_, "watcher");
    out_ += "<header>\n<h1>Cairn watch</h1>\n<dl id=\"watcher\">\n";
    auto item = [&](const char* id, const char* term, const std::string& html) {
      out_ +=
          std::string("<div id=\"") + id + "\"><dt>" + term + "</dt><dd>" + html + "</dd></div>\n";
    };
    item("watcher-holder", "watcher", TextOrDash(watcher, "holder"));
    item("watcher-started", "started", TimeHtml(Text(watcher, "started_at")));
    item("generated-at", "generated", TimeHtml(Text(status_, "generated_at")));
    const Value& interval = Member(watcher, "interval_seconds");
    if (interval.is_number()) item("watcher-interval", "interval", DurationText(interval));
    const Value& remediate = Member(watcher, "remediate");
    if (remediate.is_boolean()) {
      item("watcher-remediate", "remediation", remediate.get<bool>() ? "on" : "off");
    }
    out_ += "</dl>\n</header>\n";
  }

  void Summary(const Value& stacks) {
    if (!status_.is_object()) {
      out_ +=
          "<p class=\"run-error\" id=\"malformed\">The status document is not a JSON "
          "object; nothing to show.</p>\n";
    }
    const Value& version = Member(status_, "format_version");
    if (version.is_number() && version != 1) {
      out_ += "<p class=\"run-error\" id=\"format-version\">Status document format " +
              CountText(version) + ": this page knows format 1 and shows what it can.</p>\n";
    }
    // "2 stacks: 1 ok, 1 drifted", the counts in the contract's order.
    std::string line = std::to_string(stacks.size()) + (stacks.size() == 1 ? " stack" : " stacks");
    std::vector<std::string> parts;
    std::vector<std::string> order;
    for (const StatusLook& look : kStackStatuses) order.push_back(look.token);
    for (const std::string& token : order) {
      int n = 0;
      for (const Value& s : stacks) n += Text(s, "status") == token;
      if (n > 0) parts.push_back(std::to_string(n) + " " + StatusLabel(token));
    }
    int other = 0;
    for (const Value& s : stacks) {
      std::string st = Text(s, "status");
      bool known = false;
      for (const std::string& token : order) known = known || st == token;
      other += !known;
    }
    if (other > 0) parts.push_back(std::to_string(other) + " unknown");
    for (size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? ": " : ", ") + parts[i];
    out_ += "<p id=\"summary\">" + line + "</p>\n";
  }

  static std::string StatusLabel(const std::string& token) {
    for (const StatusLook& look : kStackStatuses) {
      if (token == look.token) return look.label;
    }
    return token;
  }

  void StackTable(const Value& stacks) {
    if (stacks.empty()) {
      out_ += "<p class=\"empty\" id=\"no-stacks\">No stacks are watched.</p>\n";
      return;
    }
    out_ +=
        "<table id=\"stacks\">\n<caption class=\"meta\">Every watched stack, its latest run "
        "and what it found.</caption>\n<thead>\n"
        "<tr><th scope=\"col\" rowspan=\"2\">stack</th><th scope=\"col\" rowspan=\"2\">role</th>"
        "<th scope=\"col\" rowspan=\"2\">status</th><th scope=\"col\" rowspan=\"2\">last run</th>"
        "<th scope=\"col\" rowspan=\"2\">duration</th><th scope=\"col\" rowspan=\"2\">requests</th>"
        "<th scope=\"colgroup\" colspan=\"4\">drift</th>"
        "<th scope=\"col\" rowspan=\"2\">failing checks</th>"
        "<th scope=\"col\" rowspan=\"2\">next run</th></tr>\n"
        "<tr><th scope=\"col\">changed</th><th scope=\"col\">deleted</th>"
        "<th scope=\"col\">failed</th><th scope=\"col\">unmanaged</th></tr>\n</thead>\n<tbody>\n";
    for (size_t i = 0; i < stacks.size(); ++i) StackRow(stacks[i], ids_[i]);
    out_ += "</tbody>\n</table>\n";
  }

  void StackRow(const Value& stack, const std::string& id) {
    const std::string name = Text(stack, "name");
    const std::string status = Text(stack, "status");
    const std::string role = Text(stack, "role");
    const Value& run = Member(stack, "last_run");
    const Value& drift = Member(stack, "drift");

    std::string row =
        "<tr id=\"stack-" + id + "\" class=\"stack\" data-status=\"" + HtmlEscape(status) + "\">";
    row += "<th scope=\"row\"><a href=\"#details-" + id + "\">" +
           (name.empty() ? std::string("(unnamed)") : HtmlEscape(name)) + "</a></th>";
    std::string role_html = role.empty() ? "—" : HtmlEscape(role);
    const std::string holder = Text(stack, "lease_holder");
    if (role == "standby" && !holder.empty()) {
      role_html += "<br><span class=\"meta\">held by " + HtmlEscape(holder) + "</span>";
    }
    row += "<td class=\"role\">" + role_html + "</td>";
    row += "<td>" + StackBadge(status) + "</td>";
    if (run.is_object()) {
      std::string when = Text(run, "finished_at");
      if (when.empty()) when = Text(run, "started_at");
      std::string cell = TimeHtml(when);
      if (!Text(run, "error").empty())
        cell += " <span class=\"rstatus rstatus-failed\">failed</span>";
      row += "<td class=\"last-run\">" + cell + "</td>";
      row +=
          "<td class=\"num duration\">" + DurationText(Member(run, "duration_seconds")) + "</td>";
      row += "<td class=\"num requests\">" + CountText(Member(run, "requests")) + "</td>";
    } else {
      row +=
          "<td class=\"last-run\"><span class=\"empty\">not yet</span></td>"
          "<td class=\"num duration\">—</td><td class=\"num requests\">—</td>";
    }
    for (const char* kind : {"changed", "deleted", "failed", "unmanaged"}) {
      const Value& n = Member(drift, kind);
      row += std::string("<td class=\"num drift-") + kind + (IsPositive(n) ? " nonzero" : "") +
             "\">" + CountText(n) + "</td>";
    }
    int failing = FailingChecks(stack);
    size_t checks = ArrayMember(stack, "checks").size();
    row += std::string("<td class=\"num failing-checks") + (failing > 0 ? " nonzero" : "") + "\">" +
           std::to_string(failing) +
           (checks > 0 ? " <span class=\"meta\">of " + std::to_string(checks) + "</span>" : "") +
           "</td>";
    row += "<td class=\"next-run\">" + TimeHtml(Text(stack, "next_run_at")) + "</td>";
    out_ += row + "</tr>\n";
  }

  void StackSection(const Value& stack, const std::string& id) {
    const std::string name = Text(stack, "name");
    const std::string status = Text(stack, "status");
    out_ += "<details id=\"details-" + id + "\" class=\"stack-details\"" +
            (NeedsAttention(status) ? " open" : "") + ">\n<summary>" +
            (name.empty() ? std::string("(unnamed)") : HtmlEscape(name)) + StackBadge(status) +
            "</summary>\n";

    std::vector<std::string> meta;
    auto add = [&](const char* label, const std::string& text) {
      if (!text.empty())
        meta.push_back(std::string(label) + " <code>" + HtmlEscape(text) + "</code>");
    };
    add("directory", Text(stack, "dir"));
    add("workspace", Text(stack, "workspace"));
    add("role", Text(stack, "role"));
    add("lease held by", Text(stack, "lease_holder"));
    const Value& interval = Member(stack, "interval_seconds");
    if (interval.is_number()) meta.push_back("every " + DurationText(interval));
    add("remediation", Text(stack, "remediate"));
    if (!meta.empty()) {
      out_ += "<p class=\"meta\">";
      for (size_t i = 0; i < meta.size(); ++i) out_ += (i == 0 ? "" : " · ") + meta[i];
      out_ += "</p>\n";
    }
    const Value& run = Member(stack, "last_run");
    const std::string error = Text(run, "error");
    if (!error.empty()) {
      out_ += "<p class=\"run-error\">The last run failed: " + HtmlEscape(error) + "</p>\n";
    } else if (!run.is_object()) {
      out_ += "<p class=\"meta\">No run yet.</p>\n";
    }
    Resources(stack);
    Checks(stack);
    Unmanaged(stack);
    Remediation(stack);
    out_ += "</details>\n";
  }

  void Resources(const Value& stack) {
    const Value& resources = ArrayMember(stack, "resources");
    out_ += "<h3>Resources</h3>\n";
    if (resources.empty()) {
      out_ += "<p class=\"empty\">No resources tracked.</p>\n";
      return;
    }
    // What drifted first, in the document's order within each group: a
    // stack of a hundred resources in sync should not hide its one change.
    std::vector<const Value*> ordered;
    for (const char* first : {"failed", "deleted", "changed"}) {
      for (const Value& r : resources) {
        if (Text(r, "status") == first) ordered.push_back(&r);
      }
    }
    for (const Value& r : resources) {
      std::string st = Text(r, "status");
      if (st != "failed" && st != "deleted" && st != "changed") ordered.push_back(&r);
    }
    out_ +=
        "<table class=\"resources\">\n<thead><tr><th scope=\"col\">address</th>"
        "<th scope=\"col\">kind</th><th scope=\"col\">id</th><th scope=\"col\">status</th>"
        "<th scope=\"col\">drift</th></tr></thead>\n<tbody>\n";
    for (const Value* r : ordered) {
      const std::string st = Text(*r, "status");
      std::string details;
      const Value& changes = ArrayMember(*r, "changes");
      if (!changes.empty()) {
        details += "<ul class=\"changes\">";
        for (const Value& c : changes) {
          details += "<li class=\"change\"><code>" + HtmlEscape(Text(c, "path")) +
                     "</code>: <span class=\"value recorded\">" +
                     HtmlEscape(CompactJson(Member(c, "recorded"))) +
                     "</span> → <span class=\"value live\">" +
                     HtmlEscape(CompactJson(Member(c, "live"))) + "</span></li>";
        }
        details += "</ul>";
      }
      if (st == "deleted" && changes.empty()) details += "deleted outside Cairn";
      const std::string reason = Text(*r, "reason");
      if (!reason.empty()) {
        details += (details.empty() ? "" : "<br>") + HtmlEscape(reason);
      }
      out_ += "<tr class=\"resource\" data-address=\"" + HtmlEscape(Text(*r, "address")) +
              "\" data-status=\"" + HtmlEscape(st) + "\"><td><code>" + TextOrDash(*r, "address") +
              "</code></td><td>" + TextOrDash(*r, "kind") + "</td><td><code>" +
              TextOrDash(*r, "id") + "</code></td><td>" + Badge("rstatus", st, kResourceStatuses) +
              "</td><td>" + details + "</td></tr>\n";
    }
    out_ += "</tbody>\n</table>\n";
  }

  void Checks(const Value& stack) {
    const Value& checks = ArrayMember(stack, "checks");
    out_ += "<h3>Checks</h3>\n";
    if (checks.empty()) {
      out_ += "<p class=\"empty\">No checks.</p>\n";
      return;
    }
    out_ +=
        "<table class=\"checks\">\n<thead><tr><th scope=\"col\">check</th>"
        "<th scope=\"col\">result</th><th scope=\"col\">messages</th></tr></thead>\n<tbody>\n";
    for (const Value& c : checks) {
      std::string messages;
      for (const Value& m : ArrayMember(c, "messages")) {
        if (!m.is_string()) continue;
        messages += (messages.empty() ? "" : "<br>") + HtmlEscape(m.get<std::string>());
      }
      const std::string st = Text(c, "status");
      out_ += "<tr class=\"check-row\" data-status=\"" + HtmlEscape(st) + "\"><td><code>" +
              TextOrDash(c, "name") + "</code></td><td>" + Badge("check", st, kCheckStatuses) +
              "</td><td>" + messages + "</td></tr>\n";
    }
    out_ += "</tbody>\n</table>\n";
  }

  void Unmanaged(const Value& stack) {
    const Value& unmanaged = ArrayMember(stack, "unmanaged");
    if (unmanaged.empty()) return;  // only where the watch is scoped to find them
    out_ +=
        "<h3>Unmanaged</h3>\n<p class=\"meta\">Live resources of the managed kinds that the "
        "state does not track.</p>\n<table class=\"unmanaged\">\n<thead><tr>"
        "<th scope=\"col\">kind</th><th scope=\"col\">id</th><th scope=\"col\">name</th></tr>"
        "</thead>\n<tbody>\n";
    for (const Value& u : unmanaged) {
      out_ += "<tr class=\"unmanaged-row\"><td>" + TextOrDash(u, "kind") + "</td><td><code>" +
              TextOrDash(u, "id") + "</code></td><td>" + TextOrDash(u, "name") + "</td></tr>\n";
    }
    out_ += "</tbody>\n</table>\n";
  }

  void Remediation(const Value& stack) {
    const Value& r = Member(stack, "remediation");
    if (!r.is_object()) return;
    std::string line = Badge("remediation", Text(r, "result"), kRemediationResults);
    const std::string at = Text(r, "at");
    if (!at.empty()) line += " at " + TimeHtml(at);
    const Value& updated = Member(r, "updated");
    if (updated.is_number()) line += ", " + CountText(updated) + " updated";
    const std::string reason = Text(r, "reason");
    if (!reason.empty()) line += ": " + HtmlEscape(reason);
    out_ += "<h3>Last remediation</h3>\n<p class=\"remediation-line\">" + line + "</p>\n";
  }

  void Footer() {
    out_ += "<footer><p>";
    if (options_.refresh_seconds > 0) {
      out_ += "This page reloads every " + std::to_string(options_.refresh_seconds) + " s. ";
    }
    out_ +=
        "The same status as JSON: <a href=\"status.json\">status.json</a>; metrics: "
        "<a href=\"metrics\">metrics</a>.</p></footer>\n";
  }

  const Value& status_;
  const WatchPageOptions& options_;
  std::vector<std::string> ids_;
  std::string out_;
};

}  // namespace
}  // namespace watch_page

std::string RenderWatchPage(const Value& status, const WatchPageOptions& options) {
  return Redact(watch_page::PageWriter(status, options).Render());
}

}  // namespace cairn
