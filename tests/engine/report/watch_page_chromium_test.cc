// The status page of `cairn watch` (engine/report/watch_page.h), opened as
// an operator would: rendered by headless Chromium (Debian's package,
// installed by scripts/test.sh), the DOM it built checked (a row and a
// badge per stack, the sections open where something drifted, each drifted
// field), and Chromium's network log read for every request the page made:
// none. A control page that does fetch shows the log would have told.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/report/watch_page.h"
#include "tests/support/process.h"

namespace watch_page_chromium_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;
using namespace cairn::testing;

namespace {

std::string Chromium() {
  for (const char* dir : {"/usr/bin/", "/usr/local/bin/"}) {
    std::string path = std::string(dir) + "chromium";
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

struct Rendered {
  std::string dom;                   // after Chromium loaded and laid it out
  std::vector<std::string> fetches;  // every URL the page itself asked for
};

// Opens `html` (written to DIR/NAME.html) in headless Chromium with a
// network log. Chromium's own background requests (updates, time) are
// turned off where flags allow and told apart where not: a request made on
// behalf of a file:// page carries that page's isolation key.
Rendered Render(const std::string& html, const TempDir& dir, const std::string& name) {
  const std::string chromium = Chromium();
  INFO("chromium is installed by scripts/test.sh (Debian's package)");
  REQUIRE_FALSE(chromium.empty());
  const std::string page = dir.path() + "/" + name + ".html";
  const std::string netlog = dir.path() + "/" + name + ".netlog.json";
  WriteFile(page, html);
  auto r =
      RunCommand({chromium, "--headless", "--no-sandbox", "--disable-gpu",
                  "--user-data-dir=" + dir.path() + "/profile-" + name,
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--no-first-run", "--log-net-log=" + netlog, "--dump-dom", "file://" + page});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  Rendered out;
  out.dom = r.out;
  Value log = Value::parse(ReadFile(netlog), nullptr, /*allow_exceptions=*/false);
  INFO("Chromium's network log " << netlog);
  REQUIRE(log.is_object());
  const Value& types = log["constants"]["logEventTypes"];
  REQUIRE(types.contains("URL_REQUEST_START_JOB"));
  const Value start_job = types["URL_REQUEST_START_JOB"];
  for (const Value& event : log["events"]) {
    if (event.value("type", Value()) != start_job) continue;
    const Value& params = event.value("params", Value::object());
    const std::string key = StringMember(params, "network_isolation_key");
    if (key.find("file://") != std::string::npos || StringMember(params, "initiator") == "null") {
      out.fetches.push_back(StringMember(params, "url"));
    }
  }
  return out;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// `html` from `from` up to the next `until`.
std::string Slice(const std::string& html, const std::string& from, const std::string& until) {
  size_t at = html.find(from);
  if (at == std::string::npos) return "";
  size_t end = html.find(until, at);
  return html.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// A watcher of two stacks: web drifted (an instance's plan changed, another
// instance deleted, a check failing, a stray instance, a refused
// remediation), db in order.
Value Status() {
  Value web = Value::parse(R"({
    "name": "web", "dir": "/srv/stacks/web", "workspace": "default", "role": "active",
    "lease_holder": "alice@host pid 4242", "status": "drifted", "interval_seconds": 300,
    "remediate": "none", "next_run_at": "2026-11-27T10:45:02Z",
    "last_run": {"started_at": "2026-11-27T10:40:00Z", "finished_at": "2026-11-27T10:40:00Z",
                 "duration_seconds": 0.214, "requests": 4, "error": ""},
    "drift": {"changed": 1, "deleted": 1, "failed": 0, "unmanaged": 1},
    "checks": [{"name": "web_reachable", "status": "failed", "messages": ["web has no address"]},
               {"name": "dns_resolves", "status": "passed", "messages": []}],
    "resources": [
      {"address": "network.app", "kind": "network", "id": "n-1", "status": "in_sync",
       "changes": [], "reason": ""},
      {"address": "instance.web[0]", "kind": "instance", "id": "i-123", "status": "changed",
       "changes": [{"path": "plan", "recorded": "s-1vcpu-1gb", "live": "s-2vcpu-4gb"}],
       "reason": ""},
      {"address": "instance.web[1]", "kind": "instance", "id": "i-124", "status": "deleted",
       "changes": [], "reason": ""}],
    "unmanaged": [{"kind": "instance", "id": "i-999",
                   "name": "<img src=\"http://127.0.0.1:9/name.png\">"}],
    "remediation": {"at": "2026-11-27T10:40:01Z", "result": "refused",
                    "reason": "the plan creates instance.web[1]", "updated": 0}})");
  Value db = Value::parse(R"({
    "name": "db", "dir": "/srv/stacks/db", "workspace": "prod", "role": "active",
    "lease_holder": "alice@host pid 4242", "status": "ok", "interval_seconds": 60,
    "remediate": "drift-only", "next_run_at": "2026-11-27T10:41:00Z",
    "last_run": {"started_at": "2026-11-27T10:39:58Z", "finished_at": "2026-11-27T10:40:01Z",
                 "duration_seconds": 3.2, "requests": 2, "error": ""},
    "drift": {"changed": 0, "deleted": 0, "failed": 0, "unmanaged": 0},
    "checks": [], "unmanaged": [], "remediation": null,
    "resources": [{"address": "volume.data", "kind": "volume", "id": "v-1",
                   "status": "in_sync", "changes": [], "reason": ""}]})");
  return Value{{"format_version", 1},
               {"generated_at", "2026-11-27T10:40:02Z"},
               {"watcher",
                {{"holder", "alice@host pid 4242"},
                 {"started_at", "2026-11-27T10:00:00Z"},
                 {"interval_seconds", 300},
                 {"remediate", false}}},
               {"stacks", Value::array({web, db})}};
}

}  // namespace

TEST_CASE("watch page: Chromium renders a row and a section per stack and fetches nothing") {
  TempDir dir;
  const std::string html = RenderWatchPage(Status(), {});
  Rendered page = Render(html, dir, "status");
  const std::string& dom = page.dom;
  INFO(dom);

  CHECK(Has(dom, "<title>Cairn watch: 1 stack needs attention (of 2)</title>"));
  CHECK(Has(dom, "<meta http-equiv=\"refresh\" content=\"10\">"));
  CHECK(Has(dom, "<dt>watcher</dt><dd>alice@host pid 4242</dd>"));
  CHECK(Has(dom, "<p id=\"summary\">2 stacks: 1 ok, 1 drifted</p>"));

  // The table: a row per stack, its badge saying its status.
  CHECK(Count(dom, "<tr id=\"stack-") == 2);
  std::string web = Slice(dom, "<tr id=\"stack-web\"", "</tr>");
  CHECK(Has(web, "<span class=\"status status-drifted\">drifted</span>"));
  CHECK(Has(web, "<td class=\"num duration\">214 ms</td><td class=\"num requests\">4</td>"));
  CHECK(Has(web,
            "<td class=\"num drift-changed nonzero\">1</td>"
            "<td class=\"num drift-deleted nonzero\">1</td>"));
  CHECK(Has(web, "<td class=\"num failing-checks nonzero\">1 <span class=\"meta\">of 2</span>"));
  std::string db = Slice(dom, "<tr id=\"stack-db\"", "</tr>");
  CHECK(Has(db, "<span class=\"status status-ok\">ok</span>"));
  CHECK(Has(db, "<td class=\"num duration\">3.2 s</td><td class=\"num requests\">2</td>"));

  // The sections: the drifted one open, with each resource, the changed
  // field recorded -> live, the deleted one, the failing check.
  CHECK(Count(dom, "<details ") == 2);
  std::string web_section = Slice(dom, "<details id=\"details-web\"", "</details>");
  CHECK(web_section.rfind("<details id=\"details-web\" class=\"stack-details\" open=\"\">", 0) ==
        0);
  CHECK(Has(web_section,
            "<tr class=\"resource\" data-address=\"instance.web[0]\" "
            "data-status=\"changed\">"));
  CHECK(Has(web_section,
            "<li class=\"change\"><code>plan</code>: <span class=\"value "
            "recorded\">\"s-1vcpu-1gb\"</span> → <span class=\"value live\">"
            "\"s-2vcpu-4gb\"</span></li>"));
  CHECK(Has(web_section,
            "<tr class=\"resource\" data-address=\"instance.web[1]\" "
            "data-status=\"deleted\">"));
  CHECK(Has(web_section,
            "<tr class=\"resource\" data-address=\"network.app\" "
            "data-status=\"in_sync\">"));
  CHECK(Has(web_section,
            "<tr class=\"check-row\" data-status=\"failed\"><td><code>web_reachable"
            "</code></td><td><span class=\"check check-failed\">failed</span></td>"
            "<td>web has no address</td></tr>"));
  CHECK(Has(web_section, "<span class=\"remediation remediation-refused\">refused</span>"));
  // The stray instance's name is text on the page, not an image.
  CHECK(Has(web_section, "<td>&lt;img src=\"http://127.0.0.1:9/name.png\"&gt;</td>"));
  std::string db_section = Slice(dom, "<details id=\"details-db\"", "</details>");
  CHECK(db_section.rfind("<details id=\"details-db\" class=\"stack-details\">", 0) == 0);
  CHECK(Has(db_section, "data-address=\"volume.data\""));

  // Nothing fetched, and nothing in the DOM that could.
  CHECK(page.fetches.empty());
  for (const char* tag : {"<script", "<img", "<link", "<iframe", "<object", "<embed"}) {
    CHECK_FALSE(Has(dom, tag));
  }
}

TEST_CASE("watch page: the network log sees a page that fetches and the page's policy stops it") {
  TempDir dir;
  const std::string html = RenderWatchPage(Status(), {});
  const std::string csp = "<meta http-equiv=\"Content-Security-Policy\"";
  const std::string leak = "<img src=\"http://127.0.0.1:9/leak.png\" alt=\"\">";
  size_t main_at = html.find("<main>");
  REQUIRE(main_at != std::string::npos);
  std::string leaking = html;
  leaking.insert(main_at + 6, leak);

  // Markup that fetches, on a page without the policy: the log has it (and
  // only it: the stray instance's name stays text, escaped).
  std::string no_policy = leaking;
  size_t at = no_policy.find(csp);
  REQUIRE(at != std::string::npos);
  no_policy.erase(at, no_policy.find('>', at) + 1 - at);
  Rendered control = Render(no_policy, dir, "control");
  CHECK(control.fetches == std::vector<std::string>{"http://127.0.0.1:9/leak.png"});

  // The same markup under the page's policy: refused, nothing fetched.
  Rendered guarded = Render(leaking, dir, "guarded");
  CHECK(Has(guarded.dom, "<img src=\"http://127.0.0.1:9/leak.png\""));
  CHECK(guarded.fetches.empty());
}

}  // namespace watch_page_chromium_test
