// `cairn test`: a stack's test files (docs/testing-stacks.md). Each
// `*.test.yaml` in the stack directory or its `tests/` is one scenario with
// a fresh state of its own, made of `kind: run` documents run in order:
//
//   kind: run
//   name: prod_has_three_nodes
//   command: apply                 # or plan (default apply)
//   variables: {env: prod}
//   assert:
//     - condition: ${length(instance.node) == 3}
//       error_message: prod runs three nodes
//   expect_failures: [var.env]     # validations, preconditions or checks this run expects
//
// and optionally `kind: override` documents (`target: data.network.shared`,
// `values: {...}`) that give a data source fixed values for the file, and
// one `kind: test` document of the file's settings:
//
//   kind: test
//   provision_delay: 2s    # the throwaway server's, for this file (default 0)
//
// This file holds what needs no API: reading the files, and deciding whether
// the diagnostics of a run show the failures it expects. The command
// (cli/cmd_test.cc) runs the plans and applies against a throwaway server.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/env.h"
#include "base/value.h"

namespace cairn {

struct TestAssert {
  std::string condition;      // "${...}" as written
  std::string error_message;  // shown when it is false
  SourceLocation location;
};

struct TestRun {
  std::string name;
  bool apply = true;  // command: apply (default) or plan
  std::map<std::string, Value> variables;
  std::vector<TestAssert> asserts;
  // "var.NAME" (a validation), "check.NAME", "output.NAME" (its
  // precondition), or a resource address (its precondition or postcondition).
  std::vector<std::string> expect_failures;
  SourceLocation location;  // the document's `name`
};

struct TestFile {
  std::string path;
  std::vector<TestRun> runs;
  // `kind: override` documents: "data.KIND.NAME" -> the values that data
  // source has in this file's runs, instead of what the API would return.
  std::map<std::string, Value> overrides;
  std::map<std::string, SourceLocation> override_locations;
  // `kind: test`: how long the throwaway server this file runs against
  // takes to provision a resource (none unless the file says).
  std::chrono::milliseconds provision_delay{0};
  SourceLocation settings_location;  // the `kind: test` document, if any
};

struct StackTests {
  std::vector<TestFile> files;
  std::vector<Diagnostic> diagnostics;
  SourceFiles sources;
  bool ok() const { return !HasErrors(diagnostics); }
};

// The test files of stack directory `dir`: `dir/*.test.yaml` and
// `dir/tests/*.test.yaml` (and .yml), in name order. Every problem in them
// is a diagnostic at file:line:col, all at once.
StackTests LoadStackTests(const std::string& dir, const Env& env);
// The same from texts (tests): file name -> content, in name order.
StackTests LoadStackTestsFromText(const std::map<std::string, std::string>& files);

// Whether `diagnostics` (a run's: loading, planning, applying) show each of
// `expected`, and which errors none of them accounts for.
struct ExpectedFailures {
  std::vector<std::string> missing;     // expected, not seen
  std::vector<std::string> unexpected;  // error summaries no expectation matches
  bool ok() const { return missing.empty() && unexpected.empty(); }
};
ExpectedFailures MatchExpectedFailures(const std::vector<std::string>& expected,
                                       const std::vector<Diagnostic>& diagnostics);

// The expression inside a condition written "${...}" (what `cairn console`
// evaluates), or nullopt when the text is not exactly one interpolation.
std::optional<std::string> ConditionExpression(const std::string& condition);

}  // namespace cairn
