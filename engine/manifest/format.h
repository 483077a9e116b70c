// `cairn fmt`: the canonical layout of a manifest file, comments kept.
//
// Line by line: two spaces per nesting level (a block sequence under a key
// one level in, even when written at the key's indentation), one space after
// a mapping key's colon, no trailing
// whitespace, no blank lines at the start or end of the file or of a
// document, at most one blank line in a row, LF line endings and a final
// newline. Block scalars (`|`, `>`) move with their key and keep their
// content byte for byte. The result is parsed again and compared with the
// original, node for node: a file whose meaning the layout would change
// (or that is not valid YAML) is an error and is left as it is.
//
// Before anything else, the text gets the checks `cairn validate` makes of
// it (engine/manifest/yaml_value.h): NUL bytes, bytes that are not UTF-8, a
// syntax error, and a document over the bounds on depth and on what aliases
// expand to, without which the node-for-node comparison could take
// exponential time (an alias bomb).
#pragma once

#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/status.h"

namespace cairn {

// `text` (the content of manifest `file`) in the canonical layout. Text
// refused by the checks above is InvalidArgument, with their diagnostics
// (file:line:col) appended to `diags`; a layout that cannot be made
// canonical without changing the meaning is FailedPrecondition.
Result<std::string> FormatManifest(const std::string& text, const std::string& file,
                                   std::vector<Diagnostic>& diags);

// The same, the first diagnostic (if any) in the status message.
Result<std::string> FormatManifest(const std::string& text);

}  // namespace cairn
