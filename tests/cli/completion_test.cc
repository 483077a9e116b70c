// `cairn completion` and `cairn man`: the scripts and pages users install,
// exercised as a shell runs them (bash's programmable completion, called the
// way bash calls it) and checked against `cairn --help`, whose command list
// is written separately from the generators.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/support/process.h"

namespace completion_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

// The command names `cairn --help` (or `cairn state --help`) lists under
// "Subcommands:".
std::set<std::string> HelpCommands(const std::vector<std::string>& args) {
  auto r = RunCairn(args);
  REQUIRE(r.exit_code == 0);
  std::set<std::string> out;
  std::istringstream in(r.out);
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_section = true;
      continue;
    }
    if (!in_section) continue;
    if (line.empty() || line[0] != ' ') break;
    std::istringstream words(line);
    std::string name;
    words >> name;
    out.insert(name);
  }
  return out;
}

// What bash offers for `words` (the last is the word being completed), with
// the script of `cairn completion bash` loaded, in `cwd`.
std::vector<std::string> Complete(const std::string& script, const std::vector<std::string>& words,
                                  const std::string& cwd) {
  std::string array;
  for (const auto& w : words) array += " '" + w + "'";
  std::string program = "source '" + script + "'\nCOMP_WORDS=(" + array +
                        ")\nCOMP_CWORD=" + std::to_string(words.size() - 1) +
                        "\n_cairn\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n";
  auto r = RunCommand({"/bin/bash", "-c", program}, {}, "", cwd);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("cairn completion bash: commands, subcommands, options and files, as bash offers them") {
  TempDir dir;
  auto gen = RunCairn({"completion", "bash"});
  REQUIRE(gen.exit_code == 0);
  const std::string script = dir.path() + "/cairn.bash";
  WriteFile(script, gen.out);
  WriteFile(dir.path() + "/vars.yaml", "a: 1\n");

  // Every command of `cairn --help`, and only commands, at the first word.
  const std::set<std::string> commands = HelpCommands({"--help"});
  REQUIRE(commands.count("plan") == 1);
  auto first = Complete(script, {"cairn", ""}, dir.path());
  for (const auto& c : commands) CHECK(Has(first, c));
  CHECK(Has(Complete(script, {"cairn", "st"}, dir.path()), "state"));
  CHECK_FALSE(Has(Complete(script, {"cairn", "st"}, dir.path()), "plan"));

  // A nested command's subcommands.
  auto state = Complete(script, {"cairn", "state", ""}, dir.path());
  for (const auto& c : HelpCommands({"state", "--help"})) CHECK(Has(state, c));
  CHECK_FALSE(Has(state, "validate"));

  // A command's own options and the global ones; values are files.
  CHECK(Complete(script, {"cairn", "plan", "--ta"}, dir.path()) ==
        std::vector<std::string>{"--target", "--target-file"});
  CHECK(Has(Complete(script, {"cairn", "apply", "--no-c"}, dir.path()), "--no-color"));
  CHECK_FALSE(Has(Complete(script, {"cairn", "validate", "--"}, dir.path()), "--listen"));
  CHECK(Has(Complete(script, {"cairn", "serve", "--"}, dir.path()), "--listen"));
  CHECK(Complete(script, {"cairn", "plan", "--var-file", "va"}, dir.path()) ==
        std::vector<std::string>{"vars.yaml"});
  // Options before the command do not hide it.
  CHECK(Has(Complete(script, {"cairn", "--no-color", "state", "s"}, dir.path()), "show"));
}

TEST_CASE("cairn completion zsh and fish name every command, and a bad shell is refused") {
  const std::set<std::string> commands = HelpCommands({"--help"});
  auto zsh = RunCairn({"completion", "zsh"});
  REQUIRE(zsh.exit_code == 0);
  CHECK(zsh.out.rfind("#compdef cairn\n", 0) == 0);
  CHECK(zsh.out.find("bashcompinit") != std::string::npos);
  auto fish = RunCairn({"completion", "fish"});
  REQUIRE(fish.exit_code == 0);
  for (const auto& c : commands) {
    INFO(c);
    CHECK(fish.out.find("__fish_use_subcommand' -a '" + c + "'") != std::string::npos);
  }
  CHECK(fish.out.find("__fish_seen_subcommand_from plan' -l target -r -F") != std::string::npos);
  auto bad = RunCairn({"completion", "tcsh"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("tcsh") != std::string::npos);
}

TEST_CASE("cairn man writes a page per command, from the text of --help") {
  TempDir dir;
  auto r = RunCairn({"man", "--dir", dir.path() + "/man"});
  REQUIRE(r.exit_code == 0);
  std::set<std::string> pages;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/man")) {
    pages.insert(e.path().filename().string());
  }
  CHECK(pages.count("cairn.1") == 1);
  for (const auto& c : HelpCommands({"--help"})) CHECK(pages.count("cairn-" + c + ".1") == 1);
  for (const auto& c : HelpCommands({"state", "--help"})) {
    CHECK(pages.count("cairn-state-" + c + ".1") == 1);
  }
  std::ifstream in(dir.path() + "/man/cairn-plan.1");
  std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(page.rfind(".TH CAIRN-PLAN 1", 0) == 0);
  // The option's --help text, with roff's escaped hyphens.
  auto help = RunCairn({"plan", "--help"});
  REQUIRE(help.out.find("Save the plan to FILE") != std::string::npos);
  CHECK(page.find(".B \\-\\-out \\fIVALUE\\fR\nSave the plan to FILE") != std::string::npos);
  CHECK(page.find(".SH EXAMPLES") != std::string::npos);

  CHECK(RunCairn({"man"}).exit_code == 1);  // --dir is required
}

}  // namespace completion_test
