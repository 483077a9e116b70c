// KindWire: how one resource kind travels over HTTP, parsed from the
// `x-cairn` object of schemas/<kind>.schema.json. The infra provider knows
// nothing about any kind beyond this: routes, envelope, id field, pagination
// shape, the manifest-name <-> wire-name map of every field, which fields
// refer to other resources, and when the kind counts as ready.
//
// The descriptor shape (instance shown; preview kinds have "api": "preview",
// "envelope": null, "id_field": "id", "pagination": "next_cursor" and no
// "ready"):
//
//   "x-cairn": {
//     "kind": "instance",
//     "references": {"network": "network", "ssh_keys": "ssh_key"},
//     "wire": {
//       "api": "control-plane", "collection": "/api/v1/compute",
//       "envelope": "instance", "id_field": "publicId", "pagination": "next",
//       "fields": {"region": {"request": "region", "response": "regionKey"},
//                  "status": {"response": "customerStatus.status"}, ...},
//       "ready": {"status": "running", "timeout_seconds": 600}
//     }
//   }
//
// Wire names may be dotted paths ("customerStatus.status"): they address
// nested objects. A field without "request" is computed: never sent.
//
// Values of KindWire are immutable once parsed and safe to share.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/value.h"

namespace cairn {

enum class PaginationShape {
  kNextCursor,  // {data, pagination: {next_cursor, has_more}}
  kNext,        // {data, pagination: {limit, next}}
};

struct WireField {
  std::string name;                     // manifest (snake_case) name
  std::optional<std::string> request;   // wire name in request bodies; none: computed
  std::optional<std::string> response;  // wire path in responses; none: write-only
  bool reference = false;               // holds the id(s) of other resources
};

struct KindWire {
  std::string kind;
  std::string api;                      // "control-plane" or "preview"
  std::string collection;               // "/api/v1/compute"; no trailing slash
  std::optional<std::string> envelope;  // single-resource responses wrapped in this key
  std::string id_field;                 // wire name of the id in responses
  PaginationShape pagination = PaginationShape::kNextCursor;
  std::map<std::string, WireField> fields;  // by manifest name
  std::set<std::string> immutable;          // x-cairn.immutable: never in an update
  std::optional<std::string> ready_status;  // value of attribute "status" when ready
  std::chrono::seconds ready_timeout{600};
  // Responses carry customerStatus (some field maps from "customerStatus.*"):
  // its action flags gate updates and deletes, its failed state ends waits.
  bool has_customer_status = false;
};

// Parses one x-cairn object. InvalidArgument naming the offending key when
// the descriptor is malformed (missing collection, unknown pagination...).
Result<KindWire> ParseKindWire(const Value& x_cairn);

// Reads every `*.schema.json` in `dir` and returns its `x-cairn` object keyed
// by `x-cairn.kind`. Files without `x-cairn` are skipped; unreadable or
// malformed JSON, a descriptor ParseKindWire refuses, or two files claiming
// the same kind is an error naming the file.
Result<std::map<std::string, Value>> LoadKindDescriptors(const std::string& dir);

// The value at a dotted `path` in `obj`, or nullptr when any step is missing.
const Value* FindPath(const Value& obj, const std::string& path);
// Sets the value at a dotted `path`, creating intermediate objects.
void SetPath(Value& obj, const std::string& path, Value v);

// The id a response object (already unwrapped) carries: its id_field's
// value when that is a non-empty string, else null.
const std::string* ResponseId(const KindWire& wire, const Value& wire_object);

// A response object (already unwrapped from its envelope) in manifest names:
// every field with a response path that is present is copied; references
// are mapped through CanonicalId (providers/infra/canonical_id.h); "id" is the
// id_field's value. InvalidArgument when the id is missing or not a string.
struct MappedResource {
  std::string id;
  Value attributes = Value::object();
};
Result<MappedResource> MapResponse(const KindWire& wire, const Value& wire_object);

// A request body from a spec in manifest names: each field renamed to its
// request name. Computed fields (no request name) are dropped. A name the
// kind does not have is InvalidArgument.
Result<Value> MapRequest(const KindWire& wire, const Value& spec);

}  // namespace cairn
