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
#pragma once

#include <string>

#include "base/status.h"

namespace cairn {

Result<std::string> FormatManifest(const std::string& text);

}  // namespace cairn
