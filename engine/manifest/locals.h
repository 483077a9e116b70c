// Locals, a stage of loading a stack: the `kind: local` documents of each
// scope (modules.h), declared once per scope (duplicate_local) and each
// evaluated once, the first time it is read, then shared. A read of one
// that does not exist is unknown_local (with "did you mean"), one that
// comes back to a local being evaluated is a dependency_cycle naming the
// whole path, a local without a value missing_field.
//
// Evaluating a value is not this stage's: a local may read variables,
// resources and other locals, so the loader's evaluator is called back
// (Locals::Evaluator), and may call Get again, for the locals it reads.
// Every local of every scope is evaluated in the end (EvaluateAll), read or
// not, so that a mistake in one is reported even when nothing uses it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/manifest/documents.h"
#include "engine/manifest/evaluate.h"
#include "engine/manifest/module_scopes.h"

namespace cairn {

// What the evaluator made of a local's value.
struct LocalEvaluation {
  bool ok = false;  // false: it reported an error, the local has no value
  Value value;      // in expression form
  // What makes it sensitive: (JSON pointer, where the mark came from), as
  // evaluate.h's Evaluated::sensitive for each string.
  std::vector<std::pair<std::string, std::string>> sensitive;
};

// A `kind: local` document and its value.
struct DeclaredLocal {
  size_t doc = 0;  // index in the loader's documents
  enum State { kDeclared, kEvaluating, kDone, kFailed } state = kDeclared;
  LocalValue value;  // kDone: the value, its sensitive marks on it
  std::vector<std::pair<std::string, std::string>> sensitive;
};

class Locals {
 public:
  // Evaluates `doc`'s `value` (a local document that has one).
  using Evaluator = std::function<LocalEvaluation(const ManifestDocument& doc)>;

  // `docs` and `scopes` are the loader's, read as they grow; diagnostics go
  // to `diags`.
  Locals(const std::vector<ManifestDocument>& docs, const ModuleScopes& scopes,
         std::vector<Diagnostic>& diags, Evaluator evaluate)
      : docs_(docs), scopes_(scopes), diags_(diags), evaluate_(std::move(evaluate)) {}

  // ${local.NAME} read in scope `s` at `at`: nullopt when it has no value
  // (reported: undeclared, a cycle, or an error in its value).
  std::optional<LocalValue> Get(size_t s, const std::string& name, const SourceLocation& at);

  // Evaluates every local of scope `s` that was not read yet.
  void EvaluateAll(size_t s);

  // The locals of scope `s`, declared if they were not yet.
  const std::map<std::string, DeclaredLocal>& Of(size_t s);

  // Local `name` of scope `s`; null when it is not declared, or the scope's
  // locals never were.
  const DeclaredLocal* Find(size_t s, const std::string& name) const;

 private:
  std::map<std::string, DeclaredLocal>& Declare(size_t s);

  const std::vector<ManifestDocument>& docs_;
  const ModuleScopes& scopes_;
  std::vector<Diagnostic>& diags_;
  Evaluator evaluate_;
  std::map<size_t, std::map<std::string, DeclaredLocal>> by_scope_;  // declared scopes
  std::vector<std::string> path_;                                    // locals being evaluated
};

}  // namespace cairn
