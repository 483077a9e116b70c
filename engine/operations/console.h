// StackConsole: what `cairn console` evaluates. An expression a user types,
// evaluated against a loaded stack and its recorded state by the one
// evaluator of the language (engine/expr), in a scope that says what names
// mean at the console:
//   var.NAME        the stack's variable values (defaults, CAIRN_VAR_,
//                   --var-file, --var), a sensitive one marked so;
//   local.NAME      the stack's locals; one that waits for a resource is
//                   evaluated here from its residual, its references read
//                   from the state; a sensitive one marked so;
//   KIND.NAME, KIND.NAME[KEY], KIND.NAME[KEY].ATTR
//                   how it expands comes from the manifests (count: a list,
//                   for_each: a map, neither: one object), its values from
//                   the state; an instance the state does not record (a
//                   stack never applied, an instance added since) is
//                   unknown, and so is every attribute of it;
//   data.KIND.NAME.ATTR
//                   declared data sources, unknown: the console never calls
//                   the API;
//   module.NAME.OUTPUT
//                   unknown: a StackConfig keeps a module's outputs only
//                   where the stack uses them, substituted in place;
//   path.module, path.root  the stack directory; env.NAME; every function,
//                   the file functions reading relative to the stack
//                   directory (bounded, and refusing key material, as at
//                   load).
// Misspelt names, undeclared resources, attributes a kind does not have,
// indexes that do not fit how a resource expands are errors with "did you
// mean", at the sub-expression, as the loader reports them.
//
// Sensitive values: the variables and locals declared or built sensitive;
// a string of the state that holds a sensitive variable's value, as plans
// mask them (the state itself keeps no marks). The result keeps its marks:
// ConsoleText and ConsoleJson never show a sensitive part.
//
// Nothing is written and nothing is sent: the state is a snapshot the
// caller read.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"
#include "engine/expr/value.h"
#include "engine/manifest/config.h"
#include "engine/state/state_store.h"

namespace cairn {

class Env;
class SchemaRegistry;
struct ConsoleIndex;  // what StackConsole looks names up in (console.cc)

// The file name console diagnostics are located in: each expression is
// line 1 of it, its columns the bytes of the text typed.
inline constexpr char kConsoleFile[] = "<console>";

struct ConsoleOptions {
  // Where file(), templatefile() and fileexists() read; null: PosixEnv().
  const Env* env = nullptr;
  // ${env.NAME}; null: the Env's environment.
  std::function<const char*(const char*)> getenv;
};

struct ConsoleResult {
  expr::Value value;                    // meaningful when ok()
  std::vector<Diagnostic> diagnostics;  // errors, located in kConsoleFile
  bool ok() const { return !HasErrors(diagnostics); }
};

class StackConsole {
 public:
  // `config` (loaded without errors), `state` and `registry` (null: no
  // attribute checks) must outlive the console.
  StackConsole(const StackConfig& config, const StateSnapshot& state,
               const SchemaRegistry* registry, ConsoleOptions options = {});
  ~StackConsole();
  StackConsole(const StackConsole&) = delete;
  StackConsole& operator=(const StackConsole&) = delete;

  // Evaluates one expression (the whole of `text`, without "${" "}").
  // Thread-compatible: const, but not for concurrent calls.
  ConsoleResult Eval(std::string_view text) const;

 private:
  std::unique_ptr<ConsoleIndex> index_;
};

// One expression against a stack: a StackConsole made for one call.
ConsoleResult ConsoleEval(std::string_view text, const StackConfig& config,
                          const StateSnapshot& state, const SchemaRegistry* registry,
                          const ConsoleOptions& options = {});

// A result on one line, as Terraform's console shows it: HCL syntax
// (strings quoted, `["a", "b"]`, `{a = 1}`, `toset([...])`), unknown parts as
// "(known after apply)", sensitive ones as "(sensitive value)".
std::string ConsoleText(const expr::Value& v);

// A result as `cairn console --json` prints it:
//   {"value": V, "type": T, "sensitive": S, "known": K}
// V the value as JSON with every sensitive or unknown part null (so the
// whole of it null when it is sensitive or unknown itself); T its type
// (string, number, bool, list, set, map, null), null when unknown; S whether
// any part is sensitive; K whether it is known all the way down.
Value ConsoleJson(const expr::Value& v);

}  // namespace cairn
