// Network functions. The examples are Terraform's documentation of each
// function (developer.hashicorp.com/terraform/language/functions/NAME; the
// same examples are in OpenTofu's website/docs/language/functions/NAME.mdx),
// then Cairn's own cases: the errors Terraform reports (with its messages),
// IPv6 arithmetic across all 128 bits, and parsing.
#include <catch2/catch.hpp>

#include "tests/engine/expr/expr_harness.h"

namespace cairn::expr {
namespace functions_network_test {  // one namespace per test file: see tests/CMakeLists.txt
namespace {

using testing::Run;
using testing::Show;
using testing::TableScope;

struct Case {
  const char* in;
  const char* out;
};

void CheckAll(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    INFO(c.in);
    CHECK(Show(c.in) == c.out);
  }
}

TEST_CASE("functions: network, Terraform's documented examples", "[expr][functions]") {
  CheckAll({
      {R"~(cidrhost("10.12.112.0/20", 16))~", R"~("10.12.112.16")~"},
      {R"~(cidrhost("10.12.112.0/20", 268))~", R"~("10.12.113.12")~"},
      {R"~(cidrhost("fd00:fd12:3456:7890:00a2::/72", 34))~", R"~("fd00:fd12:3456:7890::22")~"},
      {R"~(cidrhost("10.1.2.240/28", 1))~", R"~("10.1.2.241")~"},
      {R"~(cidrhost("10.1.2.240/28", 14))~", R"~("10.1.2.254")~"},
      {R"~(cidrnetmask("172.16.0.0/12"))~", R"~("255.240.0.0")~"},
      {R"~(cidrsubnet("172.16.0.0/12", 4, 2))~", R"~("172.18.0.0/16")~"},
      {R"~(cidrsubnet("10.1.2.0/24", 4, 15))~", R"~("10.1.2.240/28")~"},
      {R"~(cidrsubnet("fd00:fd12:3456:7890::/56", 16, 162))~",
       R"~("fd00:fd12:3456:7800:a200::/72")~"},
      {R"~(cidrsubnets("10.1.0.0/16", 4, 4, 8, 4))~",
       R"~(["10.1.0.0/20", "10.1.16.0/20", "10.1.32.0/24", "10.1.48.0/20"])~"},
      {R"~(cidrsubnets("fd00:fd12:3456:7890::/56", 16, 16, 16, 32))~",
       R"~(["fd00:fd12:3456:7800::/72", "fd00:fd12:3456:7800:100::/72", )~"
       R"~("fd00:fd12:3456:7800:200::/72", "fd00:fd12:3456:7800:300::/88"])~"},
      {R"~([for cidr_block in cidrsubnets("10.0.0.0/8", 8, 8, 8, 8) : )~"
       R"~(cidrsubnets(cidr_block, 4, 4)])~",
       R"~([["10.0.0.0/20", "10.0.16.0/20"], ["10.1.0.0/20", "10.1.16.0/20"], )~"
       R"~(["10.2.0.0/20", "10.2.16.0/20"], ["10.3.0.0/20", "10.3.16.0/20"]])~"},
  });
}

TEST_CASE("functions: network, errors where Terraform errors", "[expr][functions]") {
  CheckAll({
      // Host numbers: negative ones count back from the last address.
      {R"~(cidrhost("192.168.1.0/24", 5))~", R"~("192.168.1.5")~"},
      {R"~(cidrhost("192.168.1.0/24", -5))~", R"~("192.168.1.251")~"},
      {R"~(cidrhost("192.168.1.0/24", -256))~", R"~("192.168.1.0")~"},
      {R"~(cidrhost("192.168.1.0/30", 255))~",
       "error: invalid_function_argument: cidrhost(): prefix of 30 does not accommodate a host "
       "numbered 255"},
      {R"~(cidrhost("192.168.1.0/30", -255))~",
       "error: invalid_function_argument: cidrhost(): prefix of 30 does not accommodate a host "
       "numbered -255"},
      {R"~(cidrhost("010.001.0.0/24", 6))~", R"~("10.1.0.6")~"},
      {R"~(cidrhost("not-a-cidr", 6))~",
       "error: invalid_function_argument: cidrhost(): \"not-a-cidr\" is not a CIDR prefix: write "
       "an IPv4 or IPv6 address, \"/\" and a prefix length (\"10.0.0.0/16\")"},
      {R"~(cidrhost("10.256.0.0/8", 6))~",
       "error: invalid_function_argument: cidrhost(): \"10.256.0.0/8\" is not a CIDR prefix: "
       "write an IPv4 or IPv6 address, \"/\" and a prefix length (\"10.0.0.0/16\")"},
      {R"~(cidrhost("10.0.0.0/8", 1.5))~",
       "error: invalid_function_argument: cidrhost(): the second argument must be a whole "
       "number, not 1.5"},
      {R"~(cidrhost("::/0", -1))~", R"~("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")~"},
      {R"~(cidrhost("2001:db8::/32", 9223372036854775807))~",
       R"~("2001:db8::7fff:ffff:ffff:ffff")~"},
      {R"~(cidrhost("10.0.0.0/32", 0))~", R"~("10.0.0.0")~"},
      {R"~(cidrhost("10.0.0.0/32", 1))~",
       "error: invalid_function_argument: cidrhost(): prefix of 32 does not accommodate a host "
       "numbered 1"},
      // Netmasks.
      {R"~(cidrnetmask("192.168.1.0/24"))~", R"~("255.255.255.0")~"},
      {R"~(cidrnetmask("192.168.1.0/32"))~", R"~("255.255.255.255")~"},
      {R"~(cidrnetmask("0.0.0.0/0"))~", R"~("0.0.0.0")~"},
      {R"~(cidrnetmask("010.001.0.0/24"))~", R"~("255.255.255.0")~"},
      {R"~(cidrnetmask("1::/64"))~",
       "error: invalid_function_argument: cidrnetmask(): IPv6 addresses cannot have a netmask: "
       "1::/64"},
      // Subnets.
      {R"~(cidrsubnet("192.168.2.0/20", 4, 6))~", R"~("192.168.6.0/24")~"},
      {R"~(cidrsubnet("fe80::/48", 16, 6))~", R"~("fe80:0:0:6::/64")~"},
      {R"~(cidrsubnet("fe80::/48", 33, 6))~", R"~("fe80::3:0:0:0/81")~"},
      {R"~(cidrsubnet("010.001.0.0/24", 4, 1))~", R"~("10.1.0.16/28")~"},
      {R"~(cidrsubnet("10.0.0.0/8", 0, 0))~", R"~("10.0.0.0/8")~"},
      {R"~(cidrsubnet("::/0", 128, 1))~", R"~("::1/128")~"},
      {R"~(cidrsubnet("192.168.0.0/30", 4, 6))~",
       "error: invalid_function_argument: cidrsubnet(): insufficient address space to extend "
       "prefix of 30 by 4"},
      {R"~(cidrsubnet("192.168.0.0/168", 2, 16))~",
       "error: invalid_function_argument: cidrsubnet(): \"192.168.0.0/168\" is not a CIDR "
       "prefix: write an IPv4 or IPv6 address, \"/\" and a prefix length (\"10.0.0.0/16\")"},
      {R"~(cidrsubnet("10.0.0.0/8", 2, 4))~",
       "error: invalid_function_argument: cidrsubnet(): prefix extension of 2 does not "
       "accommodate a subnet numbered 4"},
      {R"~(cidrsubnet("10.0.0.0/8", 2, -1))~",
       "error: invalid_function_argument: cidrsubnet(): prefix extension of 2 does not "
       "accommodate a subnet numbered -1"},
      {R"~(cidrsubnet("10.0.0.0/8", -1, 0))~",
       "error: invalid_function_argument: cidrsubnet(): newbits must not be negative, not -1"},
      // Several subnets.
      {R"~(cidrsubnets("10.0.0.0/21", 3, 3, 3, 4, 4, 4, 7, 7, 7))~",
       R"~(["10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/25", "10.0.3.128/25", )~"
       R"~("10.0.4.0/25", "10.0.4.128/28", "10.0.4.144/28", "10.0.4.160/28"])~"},
      {R"~(cidrsubnets("010.0.0.0/21", 3))~", R"~(["10.0.0.0/24"])~"},
      {R"~(cidrsubnets("10.0.0.0/8"))~", "[]"},
      {R"~(cidrsubnets("10.0.0.0/8", 8, 4))~", R"~(["10.0.0.0/16", "10.16.0.0/12"])~"},
      {R"~(cidrsubnets("0.0.0.0/0", 1, 1))~", R"~(["0.0.0.0/1", "128.0.0.0/1"])~"},
      {R"~(cidrsubnets("::/0", 1, 1))~", R"~(["::/1", "8000::/1"])~"},
      {R"~(cidrsubnets("10.0.0.0/30", 1, 3))~",
       "error: invalid_function_argument: cidrsubnets(): would extend prefix to 33 bits, which "
       "is too long for an IPv4 address"},
      {R"~(cidrsubnets("10.0.0.0/8", 1, 1, 1))~",
       "error: invalid_function_argument: cidrsubnets(): not enough remaining address space for "
       "a subnet with a prefix of 9 bits after 10.128.0.0/9"},
      {R"~(cidrsubnets("0.0.0.0/0", 1, 1, 1))~",
       "error: invalid_function_argument: cidrsubnets(): not enough remaining address space for "
       "a subnet with a prefix of 1 bits after 128.0.0.0/1"},
      {R"~(cidrsubnets("10.0.0.0/8", 1, 0))~",
       "error: invalid_function_argument: cidrsubnets(): must extend prefix by at least one bit"},
      {R"~(cidrsubnets("10.0.0.0/8", 1, -1))~",
       "error: invalid_function_argument: cidrsubnets(): must extend prefix by at least one bit"},
      {R"~(cidrsubnets("fe80::/48", 1, 33))~",
       "error: invalid_function_argument: cidrsubnets(): may not extend prefix by more than 32 "
       "bits"},
  });
}

TEST_CASE("functions: network, addresses are parsed and written canonically", "[expr][functions]") {
  CheckAll({
      {R"~(cidrhost("10.1.2.3/8", 0))~", R"~("10.0.0.0")~"},
      {R"~(cidrhost("2001:DB8:0:0:1:0:0:1/128", 0))~", R"~("2001:db8::1:0:0:1")~"},
      {R"~(cidrhost("2001:db8:0:1:1:1:1:1/128", 0))~", R"~("2001:db8:0:1:1:1:1:1")~"},
      {R"~(cidrhost("::ffff:10.0.0.1/128", 0))~", R"~("::ffff:a00:1")~"},
      {R"~(cidrhost("1:0:0:2::3/128", 0))~", R"~("1:0:0:2::3")~"},
      {R"~(cidrhost("1:0:0:2:0:0:3:4/128", 0))~", R"~("1::2:0:0:3:4")~"},
      {R"~(cidrhost("::/128", 0))~", R"~("::")~"},
      {R"~(cidrhost("1::/16", 1))~", R"~("1::1")~"},
  });
  for (const char* bad : {"10.0.0/8", "10.0.0.0.0/8", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/",
                          "/8", "1:2:3:4:5:6:7:8:9/64", "1::2::3/64", "1:/64", "12345::/64",
                          "fe80::1%eth0/64", "10.0.0.0 /8", "::ffff:10.0.0/96"}) {
    INFO(bad);
    CHECK(Show(std::string("cidrhost(\"") + bad + "\", 0)")
              .rfind("error: invalid_function_argument: cidrhost(): \"", 0) == 0);
  }
}

TEST_CASE("functions: network, unknown and sensitive arguments, and the caret",
          "[expr][functions]") {
  TableScope s;
  s.vars["u"] = Value::Unknown();
  s.vars["net"] = Value::String("10.0.0.0/16").MarkedSensitive("var.net");
  CHECK(Run("cidrsubnet(var.u, 8, 1)", s).value.is_unknown());
  CHECK(Run("cidrsubnets(\"10.0.0.0/8\", 4, var.u)", s).value.is_unknown());
  CHECK(Show("cidrsubnet(var.net, 8, 1)", s) == "sensitive(\"10.0.1.0/24\")");
  auto o = Run("cidrsubnets(\"10.0.0.0/8\", 4, 0)");
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0].code == "invalid_function_argument");
  CHECK(o.errors[0].begin == 29);
  CHECK(o.errors[0].end == 30);
}

}  // namespace
}  // namespace functions_network_test
}  // namespace cairn::expr
