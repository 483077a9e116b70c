// Escaping text for HTML and XML, shared by the pages and documents the
// reports write: `cairn plan --html` (plan_html.h), the status page of
// `cairn watch` (watch_page.h) and the JUnit XML (junit.h). Every string
// that comes from a manifest, the state, the API or the user goes through it
// before it lands in markup.
#pragma once

#include <string>

namespace cairn {

// Text with &, <, >, " and ' escaped for HTML or XML content and
// attributes. With `xml_controls`, the control characters XML 1.0 cannot
// hold (all below 0x20 but tab, newline and return) become U+FFFD.
std::string HtmlEscape(const std::string& text, bool xml_controls = false);

}  // namespace cairn
