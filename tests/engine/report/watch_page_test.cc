// The status page of `cairn watch` (engine/report/watch_page.h): what it
// shows of the status document, that every string is escaped, that nothing
// is fetched, and that a malformed document renders rather than crashes.
#include "engine/report/watch_page.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <regex>
#include <vector>

namespace watch_page_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The stack document of the contract, with its run.
Value Stack(const std::string& name, const std::string& status) {
  return Value{{"name", name},
               {"dir", "/srv/stacks/" + name},
               {"workspace", "default"},
               {"role", "active"},
               {"lease_holder", "alice@host pid 4242"},
               {"status", status},
               {"interval_seconds", 300},
               {"remediate", "none"},
               {"next_run_at", "2026-11-27T10:45:02Z"},
               {"last_run",
                {{"started_at", "2026-11-27T10:40:00Z"},
                 {"finished_at", "2026-11-27T10:40:01Z"},
                 {"duration_seconds", 0.214},
                 {"requests", 4},
                 {"error", ""}}},
               {"drift", {{"changed", 0}, {"deleted", 0}, {"failed", 0}, {"unmanaged", 0}}},
               {"checks", Value::array()},
               {"resources", Value::array()},
               {"unmanaged", Value::array()},
               {"remediation", nullptr}};
}

// The whole document (a vector, not a Value: `{stack}` as a Value would be
// the stack itself, not a list of one).
Value Document(const std::vector<Value>& stacks) {
  return Value{{"format_version", 1},
               {"generated_at", "2026-11-27T10:40:00Z"},
               {"watcher",
                {{"holder", "alice@host pid 4242"},
                 {"started_at", "2026-11-27T10:00:00Z"},
                 {"interval_seconds", 300},
                 {"remediate", false}}},
               {"stacks", Value(stacks)}};
}

Value Drifted() {
  Value web = Stack("web", "drifted");
  web["drift"] = {{"changed", 1}, {"deleted", 1}, {"failed", 0}, {"unmanaged", 1}};
  web["resources"] = Value::array(
      {{{"address", "network.app"},
        {"kind", "network"},
        {"id", "n-1"},
        {"status", "in_sync"},
        {"changes", Value::array()},
        {"reason", ""}},
       {{"address", "instance.web[0]"},
        {"kind", "instance"},
        {"id", "i-123"},
        {"status", "changed"},
        {"changes",
         {{{"path", "plan"}, {"recorded", "s-1vcpu-1gb"}, {"live", "s-2vcpu-4gb"}},
          {{"path", "tags"}, {"recorded", Value::array({"a"})}, {"live", {{"x", 1}}}}}},
        {"reason", ""}},
       {{"address", "instance.web[1]"},
        {"kind", "instance"},
        {"id", "i-124"},
        {"status", "deleted"},
        {"changes", Value::array()},
        {"reason", ""}}});
  web["checks"] = Value::array(
      {{{"name", "web_reachable"}, {"status", "failed"}, {"messages", {"web has no address"}}},
       {{"name", "dns"}, {"status", "passed"}, {"messages", Value::array()}}});
  web["unmanaged"] = Value::array({{{"kind", "instance"}, {"id", "i-999"}, {"name", "stray"}}});
  web["remediation"] = {{"at", "2026-11-27T10:40:01Z"},
                        {"result", "refused"},
                        {"reason", "the plan creates instance.extra"},
                        {"updated", 0}};
  return web;
}

// The row of stack `id` (its id fragment), whole.
std::string Row(const std::string& html, const std::string& id) {
  std::smatch m;
  if (!std::regex_search(html, m, std::regex("<tr id=\"stack-" + id + "\"[^>]*>.*?</tr>"))) {
    return "";
  }
  return m[0].str();
}

// The <details> section of stack `id`, whole.
std::string Section(const std::string& html, const std::string& id) {
  size_t from = html.find("<details id=\"details-" + id + "\"");
  if (from == std::string::npos) return "";
  size_t to = html.find("</details>", from);
  return html.substr(from, to - from);
}

}  // namespace

TEST_CASE("watch page: a header then a row and a section per stack") {
  std::string html = RenderWatchPage(Document({Drifted(), Stack("db", "ok")}), {});
  CHECK(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0) == 0);
  CHECK(Has(html, "<title>Cairn watch: 1 stack needs attention (of 2)</title>"));
  CHECK(html.size() > 10);
  CHECK(html.substr(html.size() - 8) == "</html>\n");
  // The header: who, since when, as of when.
  CHECK(Has(html, "<dt>watcher</dt><dd>alice@host pid 4242</dd>"));
  CHECK(Has(html, "<dd><time datetime=\"2026-11-27T10:00:00Z\">2026-11-27 10:00:00Z</time></dd>"));
  CHECK(Has(html,
            "<div id=\"generated-at\"><dt>generated</dt><dd><time "
            "datetime=\"2026-11-27T10:40:00Z\">"));
  CHECK(Has(html, "<p id=\"summary\">2 stacks: 1 ok, 1 drifted</p>"));

  std::string web = Row(html, "web");
  REQUIRE_FALSE(web.empty());
  CHECK(Has(web, "<a href=\"#details-web\">web</a>"));
  CHECK(Has(web, "<span class=\"status status-drifted\">drifted</span>"));
  CHECK(Has(web, "<time datetime=\"2026-11-27T10:40:01Z\">"));
  CHECK(Has(web, "<td class=\"num duration\">214 ms</td>"));
  CHECK(Has(web, "<td class=\"num requests\">4</td>"));
  CHECK(Has(web, "<td class=\"num drift-changed nonzero\">1</td>"));
  CHECK(Has(web, "<td class=\"num drift-deleted nonzero\">1</td>"));
  CHECK(Has(web, "<td class=\"num drift-failed\">0</td>"));
  CHECK(Has(web, "<td class=\"num drift-unmanaged nonzero\">1</td>"));
  CHECK(Has(web, "<td class=\"num failing-checks nonzero\">1 <span class=\"meta\">of 2</span>"));
  CHECK(Has(web, "<td class=\"next-run\"><time datetime=\"2026-11-27T10:45:02Z\">"));
  std::string db = Row(html, "db");
  CHECK(Has(db, "<span class=\"status status-ok\">ok</span>"));
  CHECK(Has(db, "<td class=\"num failing-checks\">0</td>"));

  // The drifted stack's section is open, the healthy one's closed.
  CHECK(Has(html, "<details id=\"details-web\" class=\"stack-details\" open>"));
  CHECK(Has(html, "<details id=\"details-db\" class=\"stack-details\">"));
  std::string section = Section(html, "web");
  CHECK(Has(section, "directory <code>/srv/stacks/web</code>"));
  // Each change as path: recorded -> live, values as compact JSON.
  CHECK(Has(section,
            "<li class=\"change\"><code>plan</code>: <span class=\"value recorded\">&quot;"
            "s-1vcpu-1gb&quot;</span> → <span class=\"value live\">&quot;s-2vcpu-4gb&quot;"
            "</span></li>"));
  CHECK(Has(section,
            "<code>tags</code>: <span class=\"value recorded\">[&quot;a&quot;]</span> → <span "
            "class=\"value live\">{&quot;x&quot;:1}</span>"));
  CHECK(Has(section,
            "<tr class=\"resource\" data-address=\"instance.web[0]\" data-status=\"changed\">"
            "<td><code>instance.web[0]</code></td><td>instance</td><td><code>i-123</code></td>"
            "<td><span class=\"rstatus rstatus-changed\">changed</span></td>"));
  CHECK(Has(section,
            "<span class=\"rstatus rstatus-deleted\">deleted</span></td><td>deleted "
            "outside Cairn</td>"));
  // What drifted comes before what is in sync, whatever the document's order.
  size_t deleted = section.find("data-address=\"instance.web[1]\"");
  size_t changed = section.find("data-address=\"instance.web[0]\"");
  size_t in_sync = section.find("data-address=\"network.app\"");
  REQUIRE(in_sync != std::string::npos);
  CHECK(deleted < changed);
  CHECK(changed < in_sync);
}

TEST_CASE("watch page: every string is HTML-escaped") {
  const std::string evil = "<script>alert('x')</script> & \"q\"";
  const std::string escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;";
  Value s = Drifted();
  s["name"] = evil;
  s["dir"] = evil;
  s["lease_holder"] = evil;
  s["status"] = evil;
  s["resources"][1]["address"] = evil;
  s["resources"][1]["id"] = evil;
  s["resources"][1]["changes"][0]["path"] = evil;
  s["resources"][1]["changes"][0]["live"] = evil;
  s["resources"][1]["reason"] = evil;
  s["checks"][0]["name"] = evil;
  s["checks"][0]["messages"] = {evil};
  s["unmanaged"][0]["name"] = evil;
  s["remediation"]["reason"] = evil;
  Value doc = Document({s});
  doc["watcher"]["holder"] = evil;
  doc["generated_at"] = evil;
  std::string html = RenderWatchPage(doc, {});
  CHECK_FALSE(Has(html, "<script"));
  CHECK_FALSE(Has(html, "alert('x')"));
  // name, dir, holder, status, address (text and attribute), id, path,
  // reason, check, message, unmanaged name, remediation reason, generated
  // (text and datetime), watcher holder; the lease holder and the badge are
  // counted in the row and the section.
  CHECK(Count(html, escaped) >= 15);
  // The id keeps only [A-Za-z0-9.-]: the row is found by its encoded name.
  const std::string id = "_3Cscript_3Ealert_28_27x_27_29_3C_2Fscript_3E_20_26_20_22q_22";
  CHECK(Has(html, "<tr id=\"stack-" + id + "\""));
  CHECK(Has(html, "<a href=\"#details-" + id + "\">" + escaped + "</a>"));
  // An unknown status is shown as it came, escaped, with the unknown class.
  CHECK(Has(html, "<span class=\"status status-unknown\">" + escaped + "</span>"));
  // The change's live value is JSON (quoted) and then escaped.
  CHECK(Has(html,
            "<span class=\"value live\">&quot;&lt;script&gt;alert(&#39;x&#39;)&lt;/"
            "script&gt; &amp; \\&quot;q\\&quot;&quot;</span>"));
}

TEST_CASE("watch page: every status has its badge") {
  const std::vector<std::pair<std::string, std::string>> statuses = {
      {"pending", "pending"}, {"ok", "ok"},
      {"drifted", "drifted"}, {"checks_failing", "checks failing"},
      {"error", "error"},     {"standby", "standby"}};
  // Stack "s-checks-failing" has status "checks_failing", and so on.
  auto name_of = [](std::string token) {
    std::replace(token.begin(), token.end(), '_', '-');
    return "s-" + token;
  };
  std::vector<Value> stacks;
  for (const auto& [token, label] : statuses) stacks.push_back(Stack(name_of(token), token));
  std::string html = RenderWatchPage(Document(stacks), {});
  for (const auto& [token, label] : statuses) {
    INFO(token);
    std::string badge = "<span class=\"status status-" + token + "\">" + label + "</span>";
    // In the row and in the section's summary.
    CHECK(Has(Row(html, name_of(token)), badge));
    CHECK(Has(Section(html, name_of(token)), badge));
    CHECK(Has(Row(html, name_of(token)), "data-status=\"" + token + "\""));
  }
  // The page's style gives each its colors.
  for (const auto& [token, label] : statuses) CHECK(Has(html, ".status-" + token));
  // Sections open where someone should look.
  for (const char* open : {"drifted", "checks_failing", "error"}) {
    CHECK(Has(html, "<details id=\"details-" + name_of(open) + "\" class=\"stack-details\" open>"));
  }
  for (const char* closed : {"pending", "ok", "standby"}) {
    CHECK(Has(html, "<details id=\"details-" + name_of(closed) + "\" class=\"stack-details\">"));
  }
  CHECK(Has(html, "<title>Cairn watch: 3 stacks need attention (of 6)</title>"));
  CHECK(Has(html,
            "<p id=\"summary\">6 stacks: 1 pending, 1 ok, 1 drifted, 1 checks failing, 1 "
            "error, 1 standby</p>"));

  // Resources, checks and remediations have theirs.
  Value s = Stack("r", "drifted");
  for (const char* st : {"in_sync", "changed", "deleted", "failed", "gone?"}) {
    s["resources"].push_back({{"address", std::string("a.") + st}, {"status", st}});
  }
  for (const char* st : {"passed", "failed", "unknown"}) {
    s["checks"].push_back({{"name", st}, {"status", st}});
  }
  s["remediation"] = {{"result", "applied"}, {"updated", 2}};
  html = RenderWatchPage(Document({s}), {});
  CHECK(Has(html, "<span class=\"rstatus rstatus-in_sync\">in sync</span>"));
  CHECK(Has(html, "<span class=\"rstatus rstatus-changed\">changed</span>"));
  CHECK(Has(html, "<span class=\"rstatus rstatus-deleted\">deleted</span>"));
  CHECK(Has(html, "<span class=\"rstatus rstatus-failed\">failed</span>"));
  CHECK(Has(html, "<span class=\"rstatus rstatus-unknown\">gone?</span>"));
  CHECK(Has(html, "<span class=\"check check-passed\">passed</span>"));
  CHECK(Has(html, "<span class=\"check check-failed\">failed</span>"));
  CHECK(Has(html, "<span class=\"check check-unknown\">unknown</span>"));
  CHECK(Has(html, "<span class=\"remediation remediation-applied\">applied</span>, 2 updated"));
}

TEST_CASE("watch page: a stack with no run yet") {
  Value s = Stack("fresh", "pending");
  s["last_run"] = nullptr;
  s["drift"] = Value::object();
  std::string html = RenderWatchPage(Document({s}), {});
  std::string row = Row(html, "fresh");
  CHECK(Has(row, "<td class=\"last-run\"><span class=\"empty\">not yet</span></td>"));
  CHECK(Has(row, "<td class=\"num duration\">—</td><td class=\"num requests\">—</td>"));
  CHECK(Has(row, "<td class=\"num drift-changed\">—</td>"));
  CHECK(Has(Section(html, "fresh"), "No run yet."));
  CHECK(Has(html, "<title>Cairn watch: 1 stack</title>"));
}

TEST_CASE("watch page: a failed run says why") {
  Value s = Stack("api", "error");
  s["last_run"]["error"] = "listing instances: 503 Service Unavailable";
  s["last_run"]["duration_seconds"] = 125;
  std::string html = RenderWatchPage(Document({s}), {});
  CHECK(Has(Row(html, "api"), "<span class=\"rstatus rstatus-failed\">failed</span>"));
  CHECK(Has(Row(html, "api"), "<td class=\"num duration\">2 min 5 s</td>"));
  CHECK(Has(Section(html, "api"),
            "<p class=\"run-error\">The last run failed: listing "
            "instances: 503 Service Unavailable</p>"));
}

TEST_CASE("watch page: durations read as milliseconds to hours") {
  const std::vector<std::pair<Value, std::string>> cases = {
      {0.0042, "4 ms"},     {0.214, "214 ms"},
      {3.25, "3.2 s"},      {60, "1 min"},
      {125, "2 min 5 s"},   {3599.4, "59 min 59 s"},
      {5400, "1 h 30 min"}, {7200, "2 h"},
      {1e300, "1e+300 s"},  {-1, "—"},
      {"fast", "—"}};
  for (const auto& [seconds, shown] : cases) {
    INFO(seconds.dump());
    Value s = Stack("web", "ok");
    s["last_run"]["duration_seconds"] = seconds;
    CHECK(Has(Row(RenderWatchPage(Document({s}), {}), "web"),
              "<td class=\"num duration\">" + shown + "</td>"));
  }
}

TEST_CASE("watch page: a standby stack names who holds it") {
  Value s = Stack("queue", "standby");
  s["role"] = "standby";
  s["lease_holder"] = "bob@other pid 17";
  s["next_run_at"] = "";
  s["last_run"] = nullptr;
  std::string html = RenderWatchPage(Document({s}), {});
  std::string row = Row(html, "queue");
  CHECK(Has(row,
            "<td class=\"role\">standby<br><span class=\"meta\">held by bob@other pid "
            "17</span></td>"));
  CHECK(Has(row, "<span class=\"status status-standby\">standby</span>"));
  CHECK(Has(row, "<td class=\"next-run\">—</td>"));
  CHECK(Has(html, "<details id=\"details-queue\" class=\"stack-details\">"));
  CHECK(Has(Section(html, "queue"), "lease held by <code>bob@other pid 17</code>"));
  // An active stack's row does not say who holds it: it is this watcher.
  CHECK_FALSE(Has(Row(RenderWatchPage(Document({Stack("web", "ok")}), {}), "web"), "held by"));
}

TEST_CASE("watch page: checks with their messages and unmanaged resources") {
  Value s = Drifted();
  s["checks"][0]["messages"] = {"web has no address", "dns has no record"};
  std::string section = Section(RenderWatchPage(Document({s}), {}), "web");
  CHECK(Has(section,
            "<tr class=\"check-row\" data-status=\"failed\"><td><code>web_reachable</code></td>"
            "<td><span class=\"check check-failed\">failed</span></td><td>web has no "
            "address<br>dns has no record</td></tr>"));
  CHECK(Has(section, "<tr class=\"check-row\" data-status=\"passed\"><td><code>dns</code>"));
  CHECK(Has(section, "<h3>Unmanaged</h3>"));
  CHECK(Has(section,
            "<tr class=\"unmanaged-row\"><td>instance</td><td><code>i-999</code></td>"
            "<td>stray</td></tr>"));
  CHECK(Has(section, "<h3>Last remediation</h3>"));
  CHECK(Has(section,
            "<span class=\"remediation remediation-refused\">refused</span> at <time "
            "datetime=\"2026-11-27T10:40:01Z\">2026-11-27 10:40:01Z</time>, 0 updated: "
            "the plan creates instance.extra"));
  // Without checks, unmanaged resources or a remediation: said, or left out.
  std::string quiet = Section(RenderWatchPage(Document({Stack("db", "ok")}), {}), "db");
  CHECK(Has(quiet, "No checks."));
  CHECK(Has(quiet, "No resources tracked."));
  CHECK_FALSE(Has(quiet, "Unmanaged"));
  CHECK_FALSE(Has(quiet, "Last remediation"));
}

TEST_CASE("watch page: the refresh interval is in the meta tag") {
  Value doc = Document({Stack("web", "ok")});
  CHECK(Has(RenderWatchPage(doc, {}), "<meta http-equiv=\"refresh\" content=\"10\">"));
  WatchPageOptions thirty;
  thirty.refresh_seconds = 30;
  std::string html = RenderWatchPage(doc, thirty);
  CHECK(Has(html, "<meta http-equiv=\"refresh\" content=\"30\">"));
  CHECK(Count(html, "http-equiv=\"refresh\"") == 1);
  CHECK(Has(html, "reloads every 30 s"));
  WatchPageOptions never;
  never.refresh_seconds = 0;
  html = RenderWatchPage(doc, never);
  CHECK_FALSE(Has(html, "http-equiv=\"refresh\""));
  CHECK_FALSE(Has(html, "reloads every"));
}

TEST_CASE("watch page: a malformed document renders what is there") {
  // Not an object at all.
  for (const Value& doc : {Value(), Value::array({1, 2}), Value("stacks"), Value(42)}) {
    std::string html;
    REQUIRE_NOTHROW(html = RenderWatchPage(doc, {}));
    CHECK(Has(html, "id=\"malformed\""));
    CHECK(Has(html, "No stacks are watched."));
    CHECK(Has(html, "</html>"));
  }
  // Stacks not an array.
  Value doc = Document({});
  doc["stacks"] = {{"web", 1}};
  doc["watcher"] = "alice";
  std::string html;
  REQUIRE_NOTHROW(html = RenderWatchPage(doc, {}));
  CHECK(Has(html, "<p id=\"summary\">0 stacks</p>"));
  CHECK(Has(html, "<dt>watcher</dt><dd>—</dd>"));

  // Members of the wrong type everywhere, entries that are not objects.
  Value s = Drifted();
  s["drift"] = "lots";
  s["last_run"] = "yesterday";
  s["checks"] = {{"name", "not a list"}};
  s["interval_seconds"] = "often";
  s["resources"] = Value::array(
      {Value::object(),  // a resource without fields
       Value(7),
       {{"address", 12}, {"status", Value::array()}, {"changes", "plan"}},
       {{"address", "a.b"},
        {"status", "changed"},
        {"changes", {Value("x"), {{"path", 3}}, {{"recorded", "\xff\xfe"}, {"live", nullptr}}}}}});
  s["unmanaged"] = {Value(), {{"kind", false}}};
  s["remediation"] = Value::array();
  Value numbered = Stack("n", "ok");
  numbered["name"] = 5;
  numbered["last_run"] = {{"duration_seconds", "fast"}, {"requests", -1.5}};
  numbered["checks"] = Value::array({{{"status", "failed"}, {"messages", {1, nullptr, "why"}}}});
  doc = Document({s, Value("not a stack"), Value(), numbered});
  doc["format_version"] = 2;
  REQUIRE_NOTHROW(html = RenderWatchPage(doc, {}));
  CHECK(Has(html, "id=\"format-version\""));
  CHECK(Has(html, "<p id=\"summary\">4 stacks: 1 ok, 1 drifted, 2 unknown</p>"));
  CHECK(Has(Row(html, "web"), "<td class=\"num drift-changed\">—</td>"));
  CHECK(Has(Row(html, "web"), "<span class=\"empty\">not yet</span>"));
  std::string section = Section(html, "web");
  CHECK(Has(section, "<span class=\"rstatus rstatus-unknown\">unknown</span>"));
  CHECK(Has(section, "<td><code>—</code></td><td>—</td><td><code>—</code></td>"));
  // Invalid UTF-8 in a value is replaced, not thrown about.
  CHECK(Has(section,
            "<span class=\"value recorded\">&quot;\xEF\xBF\xBD\xEF\xBF\xBD&quot;</span> "
            "→ <span class=\"value live\">null</span>"));
  CHECK(Has(section, "No checks."));
  CHECK_FALSE(Has(section, "Last remediation"));
  // Unnamed stacks get ids of their own, by position.
  CHECK(Has(html, "<tr id=\"stack-_n1\""));
  CHECK(Has(html, "<tr id=\"stack-_n2\""));
  CHECK(Has(html, "<tr id=\"stack-_n3\""));
  std::string n = Row(html, "_n3");
  CHECK(Has(n, "<td class=\"num duration\">—</td><td class=\"num requests\">-1.5</td>"));
  CHECK(Has(n, "<td class=\"num failing-checks nonzero\">1 <span class=\"meta\">of 1</span>"));
  CHECK(Has(Section(html, "_n3"), "<td>why</td>"));
  CHECK(html.substr(html.size() - 8) == "</html>\n");
}

TEST_CASE("watch page: two stacks of one name keep distinct ids") {
  std::string html = RenderWatchPage(Document({Stack("web", "ok"), Stack("web", "drifted")}), {});
  CHECK(Count(html, "<tr id=\"stack-web\"") == 1);
  CHECK(Count(html, "<tr id=\"stack-web_n1\"") == 1);
  CHECK(Count(html, "<details id=\"details-web\"") == 1);
  CHECK(Count(html, "<details id=\"details-web_n1\"") == 1);
}

TEST_CASE("watch page: nothing on it fetches anything") {
  Value s = Drifted();
  // Strings that look like URLs stay text.
  s["resources"][1]["changes"][0]["live"] = "https://example.com/x.png";
  s["unmanaged"][0]["name"] = "<img src=\"http://example.com/t.gif\">";
  std::string html = RenderWatchPage(Document({s, Stack("db", "ok")}), {});
  CHECK_FALSE(Has(html, "<script"));
  CHECK_FALSE(Has(html, "<link"));
  CHECK_FALSE(Has(html, "<img"));
  CHECK_FALSE(Has(html, "@import"));
  CHECK_FALSE(Has(html, "url("));
  // Every href stays on the page or beside it (the watcher's own
  // status.json and metrics): no scheme, no other host.
  std::regex attr("(src|href)\\s*=\\s*\"([^\"]*)\"");
  size_t hrefs = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), attr); it != std::sregex_iterator();
       ++it) {
    const std::string target = (*it)[2].str();
    INFO(target);
    CHECK_FALSE(Has(target, "http://"));
    CHECK_FALSE(Has(target, "https://"));
    CHECK(target.rfind("//", 0) == std::string::npos);
    CHECK_FALSE(Has(target, ":"));
    ++hrefs;
  }
  CHECK(hrefs == 4);  // two stacks' anchors, status.json, metrics
  // And the browser is told to fetch nothing should anything slip in.
  CHECK(Has(html,
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'"));
}

TEST_CASE("watch page: a token that reaches it is redacted") {
  Value s = Drifted();
  s["last_run"]["error"] = "401 for cairn_abcdefghijklmnopqrstuvwxyz0123";
  std::string html = RenderWatchPage(Document({s}), {});
  CHECK_FALSE(Has(html, "cairn_abcdefghijklmnopqrstuvwxyz0123"));
  CHECK(Has(html, "401 for [REDACTED]"));
}

}  // namespace watch_page_test
