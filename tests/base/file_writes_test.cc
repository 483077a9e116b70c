// Every file Cairn writes goes through Env::WriteFileAtomically (base/env.h),
// so that none is half-written after a crash and none is written through a
// link planted beside it. This test reads the sources and fails on any other
// way of opening a file for writing outside base/env.cc: an ofstream or
// fstream, fopen with a writing mode, an open() with a writing or creating
// flag. What legitimately remains is listed below, each with why and how
// many such lines the file holds, so a new one in the same file fails too.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace file_writes_test {  // one namespace per test file: see tests/CMakeLists.txt

namespace {

namespace fs = std::filesystem;

// The folders that make the cairn binary (and its benchmarks); tests/ write
// their fixtures as they like.
const char* const kSourceDirs[] = {"base", "cli", "engine", "providers", "server", "bench"};

// File (relative to the source root) -> the number of write sites it holds.
const std::map<std::string, int> kAllowed = {
    // The one writer: WriteFile's open (its flags on two lines) and
    // SyncFile's reopen of a file it may only write to.
    {"base/env.cc", 3},
    // Creates the empty SQLite state database 0600 before SQLite opens it
    // (its content is SQLite's, written with SQLite's own journal); and the
    // watch lease file beside it (`cairn watch`), opened to be flock()ed,
    // holding only its holder's name, which nothing needs to survive a crash.
    {"engine/state/sqlite_state_store.cc", 2},
    // The server's LOCK file (opened to be flock()ed, never written) and its
    // empty database, created 0600 before SQLite opens it, as the state's.
    {"server/sqlite_api_store.cc", 2},
    // The benchmark writes its generated stack into its own temporary
    // directory; it is not part of cairn.
    {"bench/manifest_load.cc", 1},
};

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `line` holds `word` not as part of a longer identifier.
bool HasWord(const std::string& line, const std::string& word) {
  for (size_t at = line.find(word); at != std::string::npos; at = line.find(word, at + 1)) {
    const bool start = at == 0 || !IsIdentChar(line[at - 1]);
    const size_t end = at + word.size();
    if (start && (end == line.size() || !IsIdentChar(line[end]))) return true;
  }
  return false;
}

// Whether the fopen call starting in `text` at `at` opens for writing: its
// last string literal before the end of the statement (the mode) holds w,
// a or +.
bool FopenWrites(const std::string& text, size_t at) {
  const size_t end = text.find(';', at);
  const std::string call = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
  const size_t close = call.rfind('"');
  if (close == std::string::npos || close == 0) return true;  // a mode we cannot read: flagged
  const size_t open = call.rfind('"', close - 1);
  if (open == std::string::npos) return true;
  return call.substr(open + 1, close - open - 1).find_first_of("wa+") != std::string::npos;
}

// The lines of `text` (1-based) that open a file for writing, comments left
// out.
std::vector<int> WriteSites(const std::string& text) {
  std::vector<int> sites;
  std::istringstream in(text);
  std::string line;
  size_t offset = 0;
  for (int n = 1; std::getline(in, line); ++n, offset += line.size() + 1) {
    const size_t comment = line.find("//");
    const std::string code = line.substr(0, comment);
    if (code.find("#include") != std::string::npos) continue;
    bool writes = HasWord(code, "ofstream") || HasWord(code, "fstream") ||
                  HasWord(code, "basic_ofstream") || HasWord(code, "creat") ||
                  HasWord(code, "mkstemp") || HasWord(code, "copy_file");
    for (const char* flag : {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"})
      writes = writes || HasWord(code, flag);
    for (size_t at = code.find("fopen"); !writes && at != std::string::npos;
         at = code.find("fopen", at + 1)) {
      const bool word = (at == 0 || !IsIdentChar(code[at - 1])) &&
                        (at + 5 == code.size() || !IsIdentChar(code[at + 5]));
      if (word) writes = FopenWrites(text, offset + at);
    }
    if (writes) sites.push_back(n);
  }
  return sites;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

TEST_CASE("the write-site scanner finds each way of opening a file for writing") {
  CHECK(WriteSites("std::ofstream out(path);\n") == std::vector<int>{1});
  CHECK(WriteSites("  std::ofstream(p) << text;  // a comment\n") == std::vector<int>{1});
  CHECK(WriteSites("std::fstream f(p, std::ios::out);\n") == std::vector<int>{1});
  CHECK(WriteSites("FILE* f = std::fopen(p.c_str(), \"w\");\n") == std::vector<int>{1});
  CHECK(WriteSites("FILE* f = fopen((a + \"/x\").c_str(),\n    \"ab\");\n") == std::vector<int>{1});
  CHECK(WriteSites("int fd = ::open(p, O_WRONLY | O_CREAT, 0644);\n") == std::vector<int>{1});
  CHECK(WriteSites("int fd = open(p,\n  O_RDWR);\n") == std::vector<int>{2});
  CHECK(WriteSites("int fd = ::creat(p, 0644);\n") == std::vector<int>{1});
  CHECK(WriteSites("fs::copy_file(a, b);\n") == std::vector<int>{1});
  // Reads, comments and look-alike names are not write sites.
  CHECK(WriteSites("std::ifstream in(path);\n"
                   "FILE* f = std::fopen(\"/proc/self/stat\", \"r\");\n"
                   "int fd = ::open(p, O_RDONLY | O_CLOEXEC);\n"
                   "// std::ofstream out(path) would be wrong here\n"
                   "int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;\n"
                   "std::string ofstream_name, recreate;\n"
                   "#include <fstream>\n")
            .empty());
}

TEST_CASE("every file cairn writes goes through Env::WriteFileAtomically") {
  const fs::path root = CAIRN_SOURCE_DIR;
  std::map<std::string, int> found;
  std::string report;
  for (const char* dir : kSourceDirs) {
    REQUIRE(fs::is_directory(root / dir));
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      const std::string rel = entry.path().lexically_relative(root).generic_string();
      for (int line : WriteSites(Read(entry.path()))) {
        ++found[rel];
        report += rel + ":" + std::to_string(line) + "\n";
      }
    }
  }
  // Any file not listed, or a listed file with more (or fewer) sites than
  // its entry says: write through Env::WriteFileAtomically (base/env.h), or add the file above with
  // the reason it cannot.
  INFO("write sites found:\n" << report);
  CHECK(found == kAllowed);
}

}  // namespace file_writes_test
