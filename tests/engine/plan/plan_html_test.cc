#include "engine/report/plan_html.h"

#include <catch2/catch.hpp>

#include "engine/report/html_escape.h"

namespace plan_html_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn;

TEST_CASE("plan html: values and addresses are escaped, sensitive values masked") {
  Plan plan;
  plan.stack = "/srv/<stack>";
  PlannedChange c;
  c.address = "instance.web";
  c.kind = "instance";
  c.action = Action::kUpdate;
  c.changes.push_back({"name", Value("old"), Value("<script>alert('x')</script> & more"), false});
  c.changes.push_back({"plan", Value("s-1"), Value("s3cr3t-plan"), false});
  plan.changes.push_back(c);
  plan.sensitive_values = {"s3cr3t-plan"};
  std::string html = RenderPlanHtml(plan);
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more") !=
        std::string::npos);
  CHECK(html.find("<title>Cairn plan: /srv/&lt;stack&gt;</title>") != std::string::npos);
  CHECK(html.find("s3cr3t-plan") == std::string::npos);
  CHECK(html.find("(sensitive)") != std::string::npos);
  CHECK(HtmlEscape("a\"b'c") == "a&quot;b&#39;c");
}

}  // namespace plan_html_test
