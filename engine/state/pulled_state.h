// The pulled state: what `cairn state pull` prints and `cairn state push`
// reads back, a whole state as one JSON text.
//
// FORMAT, format_version 1:
//   {"format_version": 1,
//    "lineage": "<uuid>", "serial": N,  -- the state pulled, and when
//    "sequence": N,                     -- last journal sequence number used (absent before
//                                          it was added: 0)
//    "resources": [{"address", "kind", "id", "attributes": {...},
//                   "depends_on": [addresses], "schema_version": N,
//                   "tainted": "why" (only when tainted)}],   -- in address order
//    "outputs": {"name": value},
//    "sensitive_outputs": ["name"]}     -- those declared sensitive (absent in a file
//                                          pulled before it was added: all of them)
// Printed exactly as recorded, never redacted: it is the user's own state and
// a backup must restore it. It holds what the state file holds, sensitive
// values included, and no credential (tokens are never in the state).
//
// Reading checks the shape only (each resource has its fields, of their
// types); whether the state makes sense as a whole (kinds, ids, depends_on)
// is CheckState's (engine/operations/state_check.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "engine/state/state_store.h"

namespace cairn {

inline constexpr int kPulledStateFormat = 1;

// `state` in the format above, indented, with a final newline.
std::string PulledStateText(const StateSnapshot& state);

struct PulledState {
  StateSnapshot state;
  // Where each resource's address is written in the text (`file`, line and
  // column of the string), so that a problem with it can point there.
  std::map<std::string, SourceLocation> locations;
  // Shape problems (code invalid_state), each resource's its own: located
  // at the resource's address when it has one, else at the file.
  std::vector<Diagnostic> diagnostics;
  bool ok() const { return !HasErrors(diagnostics); }
};

// Reads `text` (from `file`, for the diagnostics' locations). A text that is
// not a pulled state at all (not JSON, another format_version, no lineage)
// is one diagnostic; otherwise every resource is read and each problem
// reported.
PulledState ParsePulledState(const std::string& text, const std::string& file);

}  // namespace cairn
