// Hash functions. The examples are Terraform's documentation of each
// function (developer.hashicorp.com/terraform/language/functions/NAME), and
// for uuidv5 also OpenTofu's (website/docs/language/functions/uuidv5.mdx,
// whose names differ), then Cairn's own cases.
#include <catch2/catch.hpp>

#include "tests/engine/expr/expr_harness.h"

namespace cairn::expr {
namespace functions_hash_test {  // one namespace per test file: see tests/CMakeLists.txt
namespace {

using testing::Run;
using testing::Show;
using testing::TableScope;

TEST_CASE("functions: hash, Terraform's documented examples", "[expr][functions]") {
  struct {
    const char* in;
    const char* out;
  } cases[] = {
      {R"~(base64sha256("hello world"))~", R"~("uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=")~"},
      {R"~(base64sha512("hello world"))~",
       R"~("MJ7MSJwS1utMxA9QyQLytNDtd+5RGnx6m808qG1M2G+YndNbxf9JlnDaNCVbRbDP2DDoH2Bdz33FVC6TrpzXbw==")~"},
      {R"~(md5("hello world"))~", R"~("5eb63bbbe01eeed093cb22bb8f5acdc3")~"},
      {R"~(sha1("hello world"))~", R"~("2aae6c35c94fcfb415dbe95f408b9ce91ee846ed")~"},
      {R"~(sha256("hello world"))~",
       R"~("b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9")~"},
      {R"~(sha512("hello world"))~",
       R"~("309ecc489c12d6eb4cc40f50c902f2b4d0ed77ee511a7c7a9bcd3ca86d4cd86f989dd35bc5ff499670da34255b45b0cfd830e81f605dcf7dc5542e93ae9cd76f")~"},
      {R"~(uuidv5("dns", "www.terraform.io"))~", R"~("a5008fae-b28c-5ba5-96cd-82b4c53552d6")~"},
      {R"~(uuidv5("url", "https://www.terraform.io/"))~",
       R"~("9db6f67c-dd95-5ea0-aa5b-e70e5c5f7cf5")~"},
      {R"~(uuidv5("oid", "1.3.6.1.4"))~", R"~("af9d40a5-7a36-5c07-b23a-851cd99fbfa5")~"},
      {R"~(uuidv5("x500", "CN=Example,C=GB"))~", R"~("84e09961-4aa4-57f8-95b7-03edb1073253")~"},
      {R"~(uuidv5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.terraform.io"))~",
       R"~("a5008fae-b28c-5ba5-96cd-82b4c53552d6")~"},
      {R"~(uuidv5("743ac3c0-3bf7-4a5b-9e6c-59360447c757", "LIBS:diskfont.library"))~",
       R"~("ede1a974-df7e-5f17-84b9-76208818b2c8")~"},
      // OpenTofu's examples.
      {R"~(uuidv5("dns", "www.opentofu.org"))~", R"~("df1e675d-b743-5f6c-9952-6311d0f141df")~"},
      {R"~(uuidv5("url", "https://www.opentofu.org/"))~",
       R"~("ace93eea-1a2c-5eed-b41b-718be15d2e50")~"},
      // Cairn's own: other spellings of a namespace UUID, errors, UTF-8.
      {R"~(uuidv5("{6BA7B810-9DAD-11D1-80B4-00C04FD430C8}", "www.terraform.io"))~",
       R"~("a5008fae-b28c-5ba5-96cd-82b4c53552d6")~"},
      {R"~(uuidv5("urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.terraform.io"))~",
       R"~("a5008fae-b28c-5ba5-96cd-82b4c53552d6")~"},
      {R"~(uuidv5("6ba7b8109dad11d180b400c04fd430c8", "www.terraform.io"))~",
       R"~("a5008fae-b28c-5ba5-96cd-82b4c53552d6")~"},
      {R"~(uuidv5("DNS", "x"))~",
       "error: invalid_function_argument: uuidv5(): the namespace must be \"dns\", \"url\", "
       "\"oid\", \"x500\" or a UUID, not \"DNS\""},
      {R"~(uuidv5("6ba7b810-9dad-11d1-80b4-00c04fd430cz", "x"))~",
       "error: invalid_function_argument: uuidv5(): the namespace must be \"dns\", \"url\", "
       "\"oid\", \"x500\" or a UUID, not \"6ba7b810-9dad-11d1-80b4-00c04fd430cz\""},
      {R"~(md5(""))~", R"~("d41d8cd98f00b204e9800998ecf8427e")~"},
      {R"~(sha1("é"))~", R"~("bf15be717ac1b080b4f1c456692825891ff5073d")~"},
      {R"~(md5(12))~", R"~("c20ad4d76fe97759aa27a0c99bff6710")~"},
      {R"~(sha256([1]))~",
       "error: invalid_function_argument: sha256(): the first argument must be a string, not a "
       "list"},
  };
  for (const auto& c : cases) {
    INFO(c.in);
    CHECK(Show(c.in) == c.out);
  }
}

TEST_CASE("functions: hash, unknown and sensitive arguments, and the caret", "[expr][functions]") {
  TableScope s;
  s.vars["u"] = Value::Unknown();
  s.vars["pw"] = Value::String("hello world").MarkedSensitive("var.pw");
  CHECK(Run("sha256(var.u)", s).value.is_unknown());
  CHECK(Run("uuidv5(\"dns\", var.u)", s).value.is_unknown());
  CHECK(Show("md5(var.pw)", s) == "sensitive(\"5eb63bbbe01eeed093cb22bb8f5acdc3\")");
  auto o = Run("uuidv5(\"nope\", \"x\")");
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0].begin == 7);
  CHECK(o.errors[0].end == 13);
}

}  // namespace
}  // namespace functions_hash_test
}  // namespace cairn::expr
