// `cairn plan --html FILE`, opened as a reviewer would: rendered by headless
// Chromium (Debian's package, installed by scripts/test.sh), and the
// rendered page's DOM checked: the summary, a row per change with its
// attribute diff, a graph node per resource and an edge per dependency,
// sensitive values masked, and nothing fetched from anywhere.
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/server/serve_fixture.h"
#include "tests/support/process.h"

namespace plan_html_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

constexpr const char* kKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g t@cairn";

std::string Stack(const std::string& plan) {
  return std::string(
             "kind: variable\nname: secret_suffix\ntype: string\nsensitive: true\n"
             "default: hunter2-s3cr3t\n---\n"
             "kind: ssh_key\nname: deploy\nspec: {public_key: \"") +
         kKey +
         "\"}\n---\n"
         "kind: network\nname: app\nspec: {region: eu-central, cidr: 10.30.0.0/16}\n---\n"
         "kind: instance\nname: web\ncount: 2\n"
         "spec:\n  name: web-${count.index}-${var.secret_suffix}\n  region: eu-central\n"
         "  plan: " +
         plan +
         "\n  image: debian-12\n  network: ${network.app.id}\n"
         "  ssh_keys: [\"${ssh_key.deploy.id}\"]\n";
}

std::string Chromium() {
  for (const char* dir : {"/usr/bin/", "/usr/local/bin/"}) {
    std::string path = std::string(dir) + "chromium";
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// The page's DOM after Chromium has loaded and laid it out.
std::string RenderedDom(const std::string& html_file, const std::string& profile_dir) {
  const std::string chromium = Chromium();
  INFO("chromium is installed by scripts/test.sh (Debian's package)");
  REQUIRE_FALSE(chromium.empty());
  auto r = RunCommand({chromium, "--headless", "--no-sandbox", "--disable-gpu",
                       "--user-data-dir=" + profile_dir, "--dump-dom", "file://" + html_file});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("plan --html writes a self-contained page that Chromium renders with every change") {
  ServeFixture server;
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml", Stack("s-1vcpu-1gb"));
  std::map<std::string, std::string> env = {
      {"CAIRN_ENDPOINT", server.base()}, {"CAIRN_TOKEN", kDevToken}, {"NO_COLOR", "1"}};
  REQUIRE(RunCairn({"apply", stack, "--auto-approve"}, env).exit_code == 0);
  // One update (plan), nothing else: and the page says so.
  WriteFile(stack + "/main.yaml", Stack("s-2vcpu-4gb"));
  const std::string page = dir.path() + "/plan.html";
  auto plan = RunCairn({"plan", stack, "--html", page}, env);
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  std::ifstream in(page);
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(html.empty());

  // Self-contained: no script, and nothing that would fetch (the only url()
  // is the SVG's own arrow marker).
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(Count(html, "url(") == Count(html, "url(#arrow)"));
  CHECK(html.find("hunter2-s3cr3t") == std::string::npos);

  std::string dom = RenderedDom(page, dir.path() + "/chromium-profile");
  CHECK(
      dom.find("<p id=\"summary\">Plan: 0 to add, 2 to change, 0 to replace, 0 to destroy.</p>") !=
      std::string::npos);
  // A row per change, with the field's before and after (the sensitive
  // part of the name masked, not the plan).
  std::smatch row;
  REQUIRE(
      std::regex_search(dom, row,
                        std::regex("<tr class=\"update\" data-address=\"instance\\.web\\[1\\]\">"
                                   "(.*?)</tr>\\s*(<tr class=|</tbody>)")));
  CHECK(row[1].str().find("\"s-1vcpu-1gb\"") != std::string::npos);
  CHECK(row[1].str().find("\"s-2vcpu-4gb\"") != std::string::npos);
  CHECK(Count(dom, "<tr class=\"update\"") == 2);
  CHECK(dom.find("hunter2-s3cr3t") == std::string::npos);
  // The graph: a node per resource (4), colored by action, and an edge per
  // dependency (each instance on the network and the key: 4).
  CHECK(Count(dom, "<g class=\"node\"") == 4);
  CHECK(Count(dom, "data-action=\"update\"") == 2);
  CHECK(Count(dom, "data-action=\"no-op\"") == 2);
  CHECK(Count(dom, "<line class=\"edge\"") == 4);
  CHECK(dom.find("instance.web[0] depends on network.app") != std::string::npos);

  // The file is written whole or not at all: an unwritable path fails the
  // command and leaves nothing behind.
  auto bad = RunCairn({"plan", stack, "--html", dir.path() + "/missing/dir/plan.html"}, env);
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("cannot write") != std::string::npos);
}

}  // namespace plan_html_test
