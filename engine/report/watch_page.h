// The status page of `cairn watch --listen ADDR` (served at `/`): one
// self-contained HTML page rendered from the status document the watcher
// also serves as `/status.json` (its shape: docs/watch.md). It shows who
// the watcher is, a table with a row per stack (role, status, last run,
// requests, drift counts, failing checks, next run) and per stack a
// `<details>` section with its resources and their drifted fields, its
// checks, its unmanaged resources and its last remediation.
//
// Invariants: the page fetches nothing (inline CSS, no script, no image,
// font or stylesheet by URL, and a Content-Security-Policy that forbids any
// fetch should something slip in); every string of the document is
// HTML-escaped; the page reloads itself with `<meta http-equiv="refresh">`.
// The document is read defensively: a missing or wrongly typed member is
// shown as absent, never a crash, so the page renders whatever is there.
//
// Stable hooks for tests and user stylesheets: the stack row is
// `<tr id="stack-NAME">`, its section `<details id="details-NAME">` (NAME
// with every byte outside [A-Za-z0-9.-] written as _XX, so ids stay unique
// and plain), the badges `class="status status-STATUS"` (stacks),
// `class="rstatus rstatus-STATUS"` (resources), `class="check
// check-STATUS"` and `class="remediation remediation-RESULT"`.
#pragma once

#include <string>

#include "base/value.h"

namespace cairn {

struct WatchPageOptions {
  // The page reloads itself after this many seconds; 0 or less: never.
  int refresh_seconds = 10;
};

// The whole page, `<!DOCTYPE html>` to `</html>`, passed through the
// redactor (base/redact.h) like every report.
std::string RenderWatchPage(const Value& status, const WatchPageOptions& options);

}  // namespace cairn
