// SchemaRegistry: the resource kinds Cairn knows and everything about them,
// from schemas/<kind>.schema.json (JSON Schema draft-07 plus a top-level
// "x-cairn" object), compiled into the binary (embedded_schemas.h). The
// engine holds no per-kind field list in C++: the kinds are the files
// present, and a kind's fields, formats, computed attributes, immutable
// fields, reference targets and wire mapping all come from its file.
//
// "x-cairn" shape (docs/manifests.md describes it in full):
//   kind        the kind name, equal to the file name's stem
//   computed    attribute -> JSON Schema of an attribute the API computes
//   immutable   spec fields whose change forces replacement
//   write_only  (optional) spec fields sent on create, never returned nor kept
//   references  spec field -> kind it refers to (a string or list of strings)
//   id_alias    (optional) the prefix of the ids' second spelling, "inst_"
//   wire        api, collection, envelope, id_field, pagination, fields
//               {field: {request, response}}, ready {status, timeout_seconds}
//
// Invariants: each schema file is parsed once, by Load() or FromDocuments(); a
// loaded registry is immutable and its const methods are thread-safe.
// Validation goes through valijson; the custom formats of
// base/schema/formats.h are checked after. The engine and `cairn serve` both
// use Embedded(), so `cairn validate` and the server refuse the same values.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/diagnostic.h"
#include "base/schema/formats.h"
#include "base/status.h"
#include "base/value.h"

namespace cairn {

// One way a spec breaks its kind's schema.
struct SchemaViolation {
  // JSON pointer (RFC 6901) into the spec: "" is the spec itself,
  // "/rules/0/port" a nested field.
  std::string pointer;
  // True when the offence is the key named by the pointer's last segment
  // (an unknown field) rather than its value.
  bool at_key = false;
  // unknown_field, missing_field, wrong_type, invalid_value, invalid_format,
  // out_of_range or schema_violation.
  std::string code;
  std::string summary;
  std::string detail;
  // What is wrong, phrased to follow the offending field's path ("must be at
  // most 64 characters long", "unknown field", "missing required field
  // \"port\""; for a format, the most precise reason known). The server's
  // messages are "<wire field path>: <predicate>".
  std::string predicate;
};

// How Validate treats strings holding "${": in a manifest they are
// expressions known only later, so their type, value and format are not
// checked; in an API request body they are plain text and checked like any.
enum class Expressions { kDeferred, kPlainText };

// Maps a violation's pointer to the source position of the offending node.
using PointerLocator = std::function<SourceLocation(const std::string& pointer, bool at_key)>;

class SchemaRegistry {
 public:
  // The schemas compiled into the binary (embedded_schemas.h): what the
  // engine and `cairn serve` use. Parsed once, on first use, and shared; it
  // fails only when a file of schemas/ is malformed, which the tests catch
  // before any such binary ships.
  static Result<std::shared_ptr<const SchemaRegistry>> Embedded();
  // Reads every *.schema.json in `dir`: for tests and tools that check other
  // schemas than the built-in ones. Fails (InvalidArgument, IOError,
  // NotFound) naming the file when one is unreadable or malformed.
  static Result<std::shared_ptr<const SchemaRegistry>> Load(const std::string& dir);
  // The same from texts already in memory: (file name such as
  // "instance.schema.json", its text) pairs. `origin` (a directory or
  // "embedded") prefixes file names in errors and is what dir() returns.
  static Result<std::shared_ptr<const SchemaRegistry>> FromDocuments(
      const std::vector<std::pair<std::string, std::string>>& files, const std::string& origin);

  ~SchemaRegistry();
  SchemaRegistry(const SchemaRegistry&) = delete;
  SchemaRegistry& operator=(const SchemaRegistry&) = delete;

  const std::string& dir() const { return dir_; }
  // Sorted kind names.
  const std::vector<std::string>& kinds() const { return kinds_; }
  bool HasKind(std::string_view kind) const;

  // Accessors below require HasKind(kind); an unknown kind yields empty values.
  // The whole schema document as read.
  const Value& Document(std::string_view kind) const;
  // The schema's "description".
  std::string Description(std::string_view kind) const;
  // Spec field names ("properties"), sorted.
  const std::vector<std::string>& Fields(std::string_view kind) const;
  const std::vector<std::string>& RequiredFields(std::string_view kind) const;
  // x-cairn.computed: attribute -> schema object.
  const Value& Computed(std::string_view kind) const;
  std::vector<std::string> ComputedNames(std::string_view kind) const;
  const std::vector<std::string>& Immutable(std::string_view kind) const;
  // Numeric fields an update may raise but never lower (x-cairn.grow_only,
  // optional): a volume's size_gb.
  const std::vector<std::string>& GrowOnly(std::string_view kind) const;
  // Fields the API takes on create and never returns (x-cairn.write_only,
  // optional): an instance's user_data. Cairn keeps their values in no
  // state, plan file or report; they may hold ephemeral values.
  const std::vector<std::string>& WriteOnly(std::string_view kind) const;
  // The prefix another spelling of this kind's ids starts with
  // (x-cairn.id_alias, base/identifiers.h): `inst_<32 hex>` for an instance
  // whose id is that UUID. Empty when the kind has one spelling.
  const std::string& IdAlias(std::string_view kind) const;
  // x-cairn.references: spec field -> kind.
  const std::map<std::string, std::string>& References(std::string_view kind) const;
  // x-cairn.wire as read.
  const Value& Wire(std::string_view kind) const;
  // Every name `${kind.name.attr}` may use: spec fields and computed attributes, sorted.
  const std::vector<std::string>& Attributes(std::string_view kind) const;
  bool HasAttribute(std::string_view kind, std::string_view attr) const;
  bool IsComputed(std::string_view kind, std::string_view attr) const;

  // Validates a spec (manifest field names). Values that are still `${...}`
  // expressions are not type- or format-checked: they are known later.
  // Violations come in document order of the schema checks, deduplicated.
  std::vector<SchemaViolation> Validate(std::string_view kind, const Value& spec,
                                        Expressions expressions = Expressions::kDeferred) const;
  // The same, as error Diagnostics positioned by `locate`.
  std::vector<Diagnostic> Validate(std::string_view kind, const Value& spec,
                                   const PointerLocator& locate) const;

 private:
  struct KindInfo;
  SchemaRegistry() = default;
  const KindInfo* Find(std::string_view kind) const;

  std::string dir_;
  std::vector<std::string> kinds_;
  std::map<std::string, std::unique_ptr<KindInfo>, std::less<>> info_;
};

// "rules[0].port" for "/rules/0/port"; "" for "".
std::string PointerToFieldPath(const std::string& pointer);

// The FormatLimits a property's schema sets beside its "format":
// "x-cairn-prefix-length": {"minimum": N, "maximum": M} for "cidr".
FormatLimits FormatLimitsOf(const Value& property_schema);

}  // namespace cairn
