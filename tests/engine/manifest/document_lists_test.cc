// The document lists alone: documents of every kind read and classified by
// the documents stage, enlisted in the stack and in module scopes built by
// hand, one of them unused.
#include "engine/manifest/document_lists.h"

#include <catch2/catch.hpp>

#include "tests/engine/manifest/support/stage_docs.h"

namespace document_lists_test {

using namespace cairn;
using cairn::testing::StageDocs;

const char* kEveryKind =
    "kind: network\nname: n\n---\n"
    "kind: variable\nname: v\n---\n"
    "kind: local\nname: l\nvalue: 1\n---\n"
    "kind: module\nname: m\nsource: ./m\n---\n"
    "kind: output\nname: o\nvalue: 1\n---\n"
    "kind: check\nname: c\nassert: []\n---\n"
    "kind: data\nname: d\ntype: stack\n---\n"
    "kind: instance\nname: i\n";

TEST_CASE("document lists: each document by its kind and its scope") {
  StageDocs d(kEveryKind);
  ModuleScopes scopes(1);
  scopes.push_back(ChildScope(scopes, 0, "app", {}, "/app", 3));
  DocumentLists lists;
  for (size_t i = 0; i < d.parsed.docs.size(); ++i) {
    d.parsed.docs[i].scope = i % 2;  // alternately the stack's and the module's
    EnlistDocument(i, d.parsed.docs[i], *d.registry, lists, scopes);
  }
  CHECK(lists.resources == std::vector<size_t>{0, 7});
  CHECK(lists.outputs == std::vector<size_t>{4});
  CHECK(lists.checks == std::vector<size_t>{5});
  CHECK(lists.data == std::vector<size_t>{6});
  CHECK(lists.providers.empty());
  CHECK(scopes[1].variable_docs == std::vector<size_t>{1});
  CHECK(scopes[0].local_docs == std::vector<size_t>{2});
  CHECK(scopes[1].module_docs == std::vector<size_t>{3});
  CHECK(scopes[0].variable_docs.empty());
}

TEST_CASE("document lists: nothing of an unused scope") {
  StageDocs d(kEveryKind);
  ModuleScopes scopes(1);
  scopes.push_back(ChildScope(scopes, 0, "app", {}, "/app", 3));
  scopes[1].unused = true;
  DocumentLists lists;
  for (size_t i = 0; i < d.parsed.docs.size(); ++i) {
    d.parsed.docs[i].scope = 1;
    EnlistDocument(i, d.parsed.docs[i], *d.registry, lists, scopes);
  }
  CHECK(lists.resources.empty());
  CHECK(lists.outputs.empty());
  CHECK(scopes[1].variable_docs.empty());
  CHECK(scopes[1].local_docs.empty());
  CHECK(scopes[1].module_docs.empty());
}

}  // namespace document_lists_test
