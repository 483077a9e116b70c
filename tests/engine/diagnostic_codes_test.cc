// Every diagnostic code the sources use is documented: docs/manifests.md,
// "Diagnostic codes". This test reads the sources of the binary's
// libraries and finds the codes where diagnostics are made (a `code = "x"`
// assignment, `{Severity::kError, "x", ...}`, the code argument of
// Error/Warn/AddError/AddWarning/MakeDiagnostic/fail), then fails naming any
// code the document's table does not list.
#include <catch2/catch.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace diagnostic_codes_test {  // one namespace per test file: see tests/CMakeLists.txt

namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool IsCodeText(const std::string& s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The code-like string literals of text[from, ...) up to the end of the
// expression it starts (a ',' ';' or closing bracket at depth 0), outside
// nested parentheses (`contains("type") ? "wrong_type" : ...` gives only
// wrong_type). `end` is set to where it stopped.
std::vector<std::string> LiteralsOfExpression(const std::string& text, size_t from, size_t& end,
                                              bool whole_statement = false) {
  std::vector<std::string> out;
  int depth = 0;
  size_t i = from;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      size_t close = i + 1;
      while (close < text.size() && text[close] != '"') close += text[close] == '\\' ? 2 : 1;
      std::string lit = text.substr(i + 1, close - i - 1);
      if (depth == 0 && IsCodeText(lit)) out.push_back(lit);
      i = close;
      continue;
    }
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') {
      if (depth == 0) break;
      --depth;
    }
    if (depth == 0 && (c == ';' || (c == ',' && !whole_statement))) break;
  }
  end = i;
  return out;
}

// The codes `text` (a C++ source) makes diagnostics with.
std::set<std::string> CodesIn(const std::string& text) {
  std::set<std::string> codes;
  auto add = [&](const std::vector<std::string>& found) {
    codes.insert(found.begin(), found.end());
  };
  size_t end = 0;
  // `code = "x"`, `d.code = "x"`, `last_code = "x"`: every literal of the statement.
  for (size_t at = text.find("code"); at != std::string::npos; at = text.find("code", at + 1)) {
    size_t after = at + 4;
    if (after < text.size() && IsIdent(text[after])) continue;
    while (after < text.size() && text[after] == ' ') ++after;
    if (after + 1 >= text.size() || text[after] != '=' || text[after + 1] == '=') continue;
    add(LiteralsOfExpression(text, after + 1, end, /*whole_statement=*/true));
  }
  // {Severity::kError, "x", ...}
  for (const char* sev : {"Severity::kError,", "Severity::kWarning,", "Severity::kNote,"}) {
    for (size_t at = text.find(sev); at != std::string::npos; at = text.find(sev, at + 1)) {
      add(LiteralsOfExpression(text, at + std::string(sev).size(), end));
    }
  }
  // Error("x", ...), AddError(out, "x", ...), fail(d, "x", ...): the first
  // argument holding a literal among the first two.
  for (const char* call :
       {"Error(", "Warn(", "AddError(", "AddWarning(", "MakeDiagnostic(", "fail("}) {
    const std::string name(call);
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
      if (at > 0 && (IsIdent(text[at - 1]) || text[at - 1] == '.')) continue;
      size_t from = at + name.size();
      for (int arg = 0; arg < 2 && from < text.size(); ++arg) {
        std::vector<std::string> found = LiteralsOfExpression(text, from, end);
        if (!found.empty()) {
          add(found);
          break;
        }
        if (end >= text.size() || text[end] != ',') break;
        from = end + 1;
      }
    }
  }
  return codes;
}

// The codes listed in the table of `## Diagnostic codes` in docs/manifests.md.
std::set<std::string> DocumentedCodes(const std::string& doc) {
  std::set<std::string> codes;
  size_t start = doc.find("\n## Diagnostic codes");
  if (start == std::string::npos) return codes;
  size_t stop = doc.find("\n## ", start + 1);
  std::istringstream in(
      doc.substr(start, stop == std::string::npos ? std::string::npos : stop - start));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::string first = line.substr(0, line.find(" |", 2));
    for (size_t a = first.find('`'); a != std::string::npos; a = first.find('`', a + 1)) {
      size_t b = first.find('`', a + 1);
      if (b == std::string::npos) break;
      codes.insert(first.substr(a + 1, b - a - 1));
      a = b;
    }
  }
  return codes;
}

}  // namespace

TEST_CASE("the code scanner finds the codes where diagnostics are made") {
  std::set<std::string> found = CodesIn(
      "d.code = \"unreachable\";\n"
      "code = op == Action::kCreate ? \"create_failed\"\n    : \"delete_failed\";\n"
      "last_code = \"network_error\";\n"
      "diags.push_back({Severity::kError,\n    \"refresh_failed\", \"could not list\"});\n"
      "Error(doc.value.contains(\"type\") ? \"wrong_type\" : \"missing_field\", \"a thing\");\n"
      "AddError(out, \"cannot_shrink\", summary);\n"
      "fail(d, \"data_not_found\", d.Address() + \": none\");\n"
      "MakeDiagnostic(last.empty() ? \"deadline_exceeded\" : last, summary);\n"
      "if (x.code == \"not_a_definition\") {}\n"
      "ErrorAnswer(\"not_a_code\", path);\n"
      "std::string name = \"ignore_changes\";\n");
  CHECK(found == std::set<std::string>{"unreachable", "create_failed", "delete_failed",
                                       "network_error", "refresh_failed", "wrong_type",
                                       "missing_field", "cannot_shrink", "data_not_found",
                                       "deadline_exceeded"});
  CHECK(DocumentedCodes("# x\n## Diagnostic codes\n\n| code | meaning |\n|---|---|\n"
                        "| `a_b` | x |\n| `c`, `d_e` | `not_this` |\n## Next\n| `f` | g |\n") ==
        std::set<std::string>{"a_b", "c", "d_e"});
}

TEST_CASE("every diagnostic code used in the sources is in docs/manifests.md") {
  const fs::path root = CAIRN_SOURCE_DIR;
  const std::set<std::string> documented = DocumentedCodes(Read(root / "docs/manifests.md"));
  REQUIRE(documented.size() > 50);
  std::string missing;
  size_t seen = 0;
  for (const char* dir : {"base", "engine", "providers", "cli"}) {
    REQUIRE(fs::is_directory(root / dir));
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      for (const std::string& code : CodesIn(Read(entry.path()))) {
        ++seen;
        // A prefix ("http_" + the status) is documented with its placeholder.
        bool listed = documented.count(code) > 0;
        if (!listed && code.back() == '_') {
          auto it = documented.lower_bound(code);
          listed = it != documented.end() && it->rfind(code, 0) == 0;
        }
        if (!listed) {
          missing += code + " (" + entry.path().lexically_relative(root).generic_string() + ")\n";
        }
      }
    }
  }
  CHECK(seen > 100);
  INFO("used in the sources, not in docs/manifests.md \"Diagnostic codes\":\n" << missing);
  CHECK(missing.empty());
}

}  // namespace diagnostic_codes_test
