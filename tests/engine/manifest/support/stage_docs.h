// What the tests of one loader stage start from: the documents of a YAML
// text (file m.yaml), parsed and classified by the documents stage, and an
// evaluator that takes each value as written. Also CheckAt, for a
// diagnostic's code and place.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "base/schema/schema_registry.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/settings.h"

namespace cairn::testing {

struct StageDocs {
  std::shared_ptr<const SchemaRegistry> registry = *SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
  SourceFiles sources;
  Documents parsed;
  std::vector<const ManifestDocument*> docs;
  std::vector<Diagnostic> diags;
  std::vector<std::string> evaluated;  // "key in where", as AsWritten was asked

  explicit StageDocs(const std::string& yaml) {
    parsed = ParseDocuments({{"m.yaml", yaml}}, sources);
    REQUIRE(parsed.diagnostics.empty());
    for (auto& doc : parsed.docs) {
      REQUIRE(ClassifyDocument(doc, *registry, DocumentKinds(*registry), diags));
      docs.push_back(&doc);
    }
    REQUIRE(diags.empty());
  }

  // Returns a setting's value as written; one holding "${" is reported
  // (eval_error, at line 99) and null, as the evaluator reports what it
  // cannot evaluate.
  EvalSetting AsWritten() {
    return [this](const ManifestDocument& doc, const std::string& key, const char* where) {
      evaluated.push_back(key + " in " + where);
      const Value& v = doc.value[key];
      if (v.is_string() && v.get<std::string>().find("${") != std::string::npos) {
        AddError(diags, "eval_error", "cannot evaluate", {doc.file, 99, 1, 1});
        return Value();
      }
      return v;
    };
  }
};

inline void CheckAt(const Diagnostic& d, const std::string& code, int line, int column) {
  INFO(d.code << " " << d.summary << " at " << d.location.line << ":" << d.location.column);
  CHECK(d.code == code);
  CHECK(d.location.file == "m.yaml");
  CHECK(d.location.line == line);
  CHECK(d.location.column == column);
}

}  // namespace cairn::testing
