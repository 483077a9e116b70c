// Variables, a stage of loading a stack: what a `kind: variable` document
// declares, and the value each variable takes from its sources. Values in,
// values and diagnostics out: the loader reads the documents and the
// variable files; nothing here touches a file or the process environment.
//
// Precedence, lowest first: the declared default, CAIRN_VAR_<name>, each
// --var-file in order, --var name=value, then a saved plan's values (for
// `cairn apply FILE`). docs/manifests.md documents every diagnostic code.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/value.h"

namespace cairn {

// The types a variable may declare.
extern const std::vector<std::string> kVariableTypes;

// "a string", "a number", ..., "any value".
std::string VariableTypeNoun(const std::string& type);
bool TypeMatches(const Value& v, const std::string& type);

// Text given for a variable (--var, CAIRN_VAR_) as a value of `type`:
// strings as they are, numbers and booleans as YAML writes them, lists and
// maps as YAML (flow or block); nullopt when it is not one.
std::optional<Value> ParseVariableText(const std::string& text, const std::string& type);

struct VariableDecl {
  std::string name;
  std::string type = "any";
  bool sensitive = false;
  // `ephemeral: true`: its value is kept in no state, plan file or report,
  // and may be used only where nothing keeps it (a write-only field, the
  // provider, a local, a module's input, a condition). Implies sensitive.
  bool ephemeral = false;
  // The default. Null (not nullopt) when a default is given but the
  // declaration's type is invalid or the default is not of it (reported),
  // so that a missing value is not reported as well.
  std::optional<Value> value;
  SourceLocation location;          // its name, where "has no value" points
  SourceLocation default_location;  // its default's value, when it has one
};

// Where each key of a variable document is, for its diagnostics.
using KeyLocator = std::function<SourceLocation(const std::string& key)>;

// The declaration `doc` (a variable document's value) makes; its problems
// (a type that is not one of kVariableTypes, a default of another type, a
// `sensitive` or `description` of the wrong type) go to `diags`.
VariableDecl ParseVariableDecl(const std::string& name, const Value& doc, const KeyLocator& at,
                               std::vector<Diagnostic>& diags);

// A `name: value` of a --var-file, as read.
struct VariableFileEntry {
  std::string name;
  Value value;
  SourceLocation name_location, value_location;
};

struct VariableSources {
  // CAIRN_VAR_<name>; null: none set.
  std::function<const char*(const char*)> getenv;
  std::vector<VariableFileEntry> file_entries;  // every --var-file's, in order
  std::map<std::string, std::string> vars;      // --var name=value
  std::map<std::string, Value> plan_vars;       // a saved plan's
  // Only settings are loaded: a variable without a value is an error only
  // where it is used, so none is reported here.
  bool settings_only = false;
};

// Where a variable's value came from, for a diagnostic about the value (a
// failed validation): "--var env", "CAIRN_VAR_env", "the --var-file
// prod.yaml", "its default", "a saved plan", with the place to point at (the
// --var-file line, the default; else the variable's name).
struct ValueOrigin {
  std::string what;
  SourceLocation location;
};

struct VariableValues {
  std::map<std::string, Value> values;         // every variable that has one
  std::map<std::string, ValueOrigin> origins;  // of each value
  std::vector<std::string> sensitive;          // of those, the sensitive ones
  // Every string any source gives a sensitive variable, the value it takes
  // or not (one of the wrong type, one a later source overrides): for the
  // redactor, since a diagnostic may point at where it is written.
  std::vector<std::string> secrets;
  std::vector<Diagnostic> diagnostics;
};

VariableValues ResolveVariableValues(const std::map<std::string, VariableDecl>& decls,
                                     const VariableSources& sources);

}  // namespace cairn
