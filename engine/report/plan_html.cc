#include "engine/report/plan_html.h"

#include <algorithm>
#include <map>

#include "base/redact.h"
#include "engine/report/html_escape.h"
#include "engine/report/plan_report.h"

namespace cairn {

namespace {

// The action as the report names it, and its color.
struct Look {
  std::string name;
  const char* color;
};

Look LookOf(const PlannedChange& c) {
  switch (c.action) {
    case Action::kCreate:
      return {"create", "#2e7d32"};
    case Action::kUpdate:
      return {"update", "#b26a00"};
    case Action::kReplace:
      return {"replace", "#8e24aa"};
    case Action::kDelete:
      return {"delete", "#c62828"};
    case Action::kNoOp:
      break;
  }
  return c.moved_from.empty() ? Look{"no-op", "#9e9e9e"} : Look{"move", "#1565c0"};
}

// The graph, left to right: a resource one column right of the deepest of
// its dependencies; edges from a dependency to what depends on it.
std::string GraphSvg(const Plan& plan) {
  std::map<std::string, const PlannedChange*> by_address;
  for (const auto& c : plan.changes) by_address[c.address] = &c;
  auto deps_of = [&](const PlannedChange& c) -> const std::vector<std::string>& {
    return c.action == Action::kDelete ? c.prior_depends_on : c.depends_on;
  };
  std::map<std::string, int> column;
  // Relaxed until stable; the graph is acyclic, so this ends within
  // (number of resources) rounds, the bound kept against a malformed plan.
  for (size_t round = 0; round <= plan.changes.size(); ++round) {
    bool changed = false;
    for (const auto& c : plan.changes) {
      int col = 0;
      for (const auto& d : deps_of(c)) {
        if (by_address.count(d)) col = std::max(col, column[d] + 1);
      }
      if (column[c.address] != col) {
        column[c.address] = col;
        changed = true;
      }
    }
    if (!changed) break;
  }
  constexpr int kW = 220, kH = 34, kGapX = 60, kGapY = 14, kPad = 10;
  std::map<int, int> rows;  // column -> resources placed in it
  std::map<std::string, std::pair<int, int>> at;
  int width = 0, height = 0;
  for (const auto& c : plan.changes) {
    int col = column[c.address];
    int row = rows[col]++;
    int x = kPad + col * (kW + kGapX), y = kPad + row * (kH + kGapY);
    at[c.address] = {x, y};
    width = std::max(width, x + kW + kPad);
    height = std::max(height, y + kH + kPad);
  }
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"graph-svg\" width=\"" +
                    std::to_string(width) + "\" height=\"" + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"dependency graph\">\n"
                    "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
                    "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0L10,5L0,"
                    "10z\" fill=\"#555\"/></marker></defs>\n";
  for (const auto& c : plan.changes) {
    for (const auto& d : deps_of(c)) {
      auto from = at.find(d);
      if (from == at.end()) continue;
      auto [x2, y2] = at[c.address];
      svg += "<line class=\"edge\" x1=\"" + std::to_string(from->second.first + kW) + "\" y1=\"" +
             std::to_string(from->second.second + kH / 2) + "\" x2=\"" + std::to_string(x2) +
             "\" y2=\"" + std::to_string(y2 + kH / 2) +
             "\" stroke=\"#555\" marker-end=\"url(#arrow)\"><title>" +
             HtmlEscape(c.address + " depends on " + d) + "</title></line>\n";
    }
  }
  for (const auto& c : plan.changes) {
    Look look = LookOf(c);
    auto [x, y] = at[c.address];
    std::string label = c.address.size() > 30 ? c.address.substr(0, 29) + "…" : c.address;
    svg += "<g class=\"node\" data-address=\"" + HtmlEscape(c.address) + "\" data-action=\"" +
           look.name + "\"><title>" + HtmlEscape(c.address + ": " + look.name) +
           "</title><rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) +
           "\" width=\"" + std::to_string(kW) + "\" height=\"" + std::to_string(kH) +
           "\" rx=\"5\" fill=\"#fff\" stroke=\"" + look.color +
           "\" stroke-width=\"2\"/><text x=\"" + std::to_string(x + 8) + "\" y=\"" +
           std::to_string(y + 22) + "\" fill=\"" + look.color + "\">" + HtmlEscape(label) +
           "</text></g>\n";
  }
  return svg + "</svg>";
}

}  // namespace

std::string RenderPlanHtml(const Plan& plan, const std::vector<PolicyResult>& policies) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>Cairn plan" +
      (plan.stack.empty() ? std::string() : ": " + HtmlEscape(plan.stack)) +
      "</title>\n<style>\n"
      "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\n"
      "code,td.value{font-family:ui-monospace,monospace}\n"
      "table{border-collapse:collapse;margin:1em 0}\n"
      "th,td{border:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}\n"
      "tr.create td.action{color:#2e7d32}tr.update td.action{color:#b26a00}\n"
      "tr.replace td.action{color:#8e24aa}tr.delete td.action{color:#c62828}\n"
      "tr.move td.action{color:#1565c0}tr.forget td.action{color:#546e7a}\n"
      "tr.import td.action{color:#00838f}\n"
      "svg text{font:13px ui-monospace,monospace}\n"
      "</style>\n</head>\n<body>\n<h1>Cairn plan</h1>\n";
  if (!plan.stack.empty()) h += "<p>Stack <code>" + HtmlEscape(plan.stack) + "</code></p>\n";
  h += "<p id=\"summary\">" + HtmlEscape(PlanSummaryLine(plan)) + "</p>\n";

  h += "<h2>Changes</h2>\n<table id=\"changes\">\n<tr><th>action</th><th>address</th>"
       "<th>details</th></tr>\n";
  for (const auto& f : plan.forgets) {
    h += "<tr class=\"forget\" data-address=\"" + HtmlEscape(f.address) +
         "\"><td class=\"action\">forget</td><td><code>" + HtmlEscape(f.address) +
         "</code></td><td>will no longer be managed" +
         (f.remote_id.empty() ? "" : " (id <code>" + HtmlEscape(f.remote_id) + "</code>)") +
         "</td></tr>\n";
  }
  for (const auto& im : plan.imports) {
    h += "<tr class=\"import\" data-address=\"" + HtmlEscape(im.address) +
         "\"><td class=\"action\">import</td><td><code>" + HtmlEscape(im.address) +
         "</code></td><td>will be imported (id <code>" + HtmlEscape(im.remote_id) +
         "</code>)</td></tr>\n";
  }
  for (const auto& c : plan.changes) {
    Look look = LookOf(c);
    if (look.name == "no-op") continue;
    std::string details;
    if (!c.moved_from.empty())
      details += "moved from <code>" + HtmlEscape(c.moved_from) + "</code>";
    if (!c.replace_reason.empty()) {
      details += (details.empty() ? "" : "<br>") + HtmlEscape(c.replace_reason);
    }
    if (!c.note.empty()) details += (details.empty() ? "" : "<br>") + HtmlEscape(c.note);
    if (!c.changes.empty()) {
      details += "<table class=\"diff\"><tr><th>field</th>" +
                 std::string(c.action == Action::kCreate ? "" : "<th>before</th>") +
                 "<th>after</th></tr>";
      for (const auto& d : c.changes) {
        details += "<tr><td><code>" + HtmlEscape(d.field) + "</code>" +
                   (d.forces_replacement ? " (forces replacement)" : "") + "</td>";
        if (c.action != Action::kCreate) {
          details += "<td class=\"value\">" +
                     HtmlEscape(RenderValue(d.before, plan.sensitive_values)) + "</td>";
        }
        details += "<td class=\"value\">" +
                   HtmlEscape(RenderValue(d.after, plan.sensitive_values)) + "</td></tr>";
      }
      details += "</table>";
    }
    h += "<tr class=\"" + look.name + "\" data-address=\"" + HtmlEscape(c.address) +
         "\"><td class=\"action\">" + look.name + "</td><td><code>" + HtmlEscape(c.address) +
         "</code></td><td>" + details + "</td></tr>\n";
  }
  h += "</table>\n";

  if (!plan.check_results.empty()) {
    h += "<h2>Checks</h2>\n<table id=\"checks\">\n<tr><th>check</th><th>result</th></tr>\n";
    for (const CheckResult& r : plan.check_results) {
      std::string result = CheckStatusName(r.status);
      for (const std::string& m : r.messages) result += "<br>" + HtmlEscape(m);
      h += "<tr class=\"check-" + std::string(CheckStatusName(r.status)) + "\"><td><code>" +
           HtmlEscape(r.name) + "</code></td><td>" + result + "</td></tr>\n";
    }
    h += "</table>\n";
  }

  if (!policies.empty()) {
    h += "<h2>Policies</h2>\n<table id=\"policies\">\n<tr><th>policy</th><th>resource</th>"
         "<th>result</th></tr>\n";
    for (const PolicyResult& r : policies) {
      const std::string status = PolicyStatusName(r.status);
      std::string result = status + " (" + EnforcementName(r.enforcement) + ")";
      if (r.status != PolicyResult::Status::kPassed) result += "<br>" + HtmlEscape(r.message);
      h += "<tr class=\"policy-" + status + "\"><td><code>" + HtmlEscape(r.policy) +
           "</code></td><td><code>" + HtmlEscape(r.address) + "</code></td><td>" + result +
           "</td></tr>\n";
    }
    h += "</table>\n";
  }

  if (!plan.output_changes.empty()) {
    h += "<h2>Outputs</h2>\n<table id=\"outputs\">\n<tr><th>output</th><th>change</th></tr>\n";
    for (const auto& o : plan.output_changes) {
      auto shown = [&](const Value& v) {
        return HtmlEscape(o.sensitive ? std::string("(sensitive)")
                                      : RenderValue(v, plan.sensitive_values));
      };
      std::string change = o.action == Action::kCreate   ? "added: " + shown(o.after)
                           : o.action == Action::kDelete ? std::string("removed")
                                                         : shown(o.before) + " → " + shown(o.after);
      h += "<tr><td><code>" + HtmlEscape(o.name) + "</code></td><td class=\"value\">" + change +
           "</td></tr>\n";
    }
    h += "</table>\n";
  }
  h += "<h2>Graph</h2>\n<p>Each resource after its dependencies, colored by what the apply "
       "does to it.</p>\n" +
       GraphSvg(plan) + "\n</body>\n</html>\n";
  return Redact(h);
}

}  // namespace cairn
