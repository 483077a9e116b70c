// `cairn console` as users run it: the real binary, after a real apply
// against a real `cairn serve` where the state matters, on a stack never
// applied where it does not. Piped stdin (one result per line, --json,
// exit 1 when a line fails, every line evaluated), sensitive values masked,
// the state read without being created or locked, and the interactive
// prompt driven through a pseudo-terminal.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/state/sqlite_state_store.h"
#include "tests/cli/support/stack_env.h"
#include "tests/support/process.h"

namespace console_command_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;
using nlohmann::json;

namespace {

// A stack that needs no API: variables (one sensitive), a local, a network.
constexpr const char* kOfflineStack =
    "kind: variable\nname: region\ntype: string\ndefault: eu-central\n---\n"
    "kind: variable\nname: pw\ntype: string\nsensitive: true\ndefault: sekr1t-value-42\n---\n"
    "kind: local\nname: prefix\nvalue: app-${var.region}\n---\n"
    "kind: network\nname: app\nspec: {region: '${var.region}', cidr: 10.30.0.0/16}\n";

const std::map<std::string, std::string> kNoColor = {{"NO_COLOR", "1"}};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// `cairn ARGS` on a pseudo-terminal, as a user at a terminal runs it: the
// test reads what it prints and types lines when the prompt is there.
class PtySession {
 public:
  PtySession(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
    // Everything exec needs is built before fork: the child only calls
    // async-signal-safe functions.
    argv_.push_back(CairnBinary());
    argv_.insert(argv_.end(), args.begin(), args.end());
    for (char** e = environ; *e; ++e) {
      std::string entry = *e;
      std::string name = entry.substr(0, entry.find('='));
      if (!env.count(name)) env_.push_back(entry);
    }
    for (const auto& [k, v] : env) env_.push_back(k + "=" + v);
    std::vector<char*> argv, envp;
    for (auto& a : argv_) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env_) envp.push_back(e.data());
    envp.push_back(nullptr);
    struct winsize size = {};
    size.ws_row = 24;
    size.ws_col = 120;
    pid_ = forkpty(&fd_, nullptr, nullptr, &size);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
  }
  ~PtySession() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }

  // Reads until `needle` appears after byte `from` of the output; false on
  // timeout or end of output. Returns where it ends in `end`.
  bool WaitFor(const std::string& needle, size_t from, size_t* end = nullptr,
               std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      size_t at = out_.find(needle, from);
      if (at != std::string::npos) {
        if (end) *end = at + needle.size();
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      struct pollfd p = {fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) return false;  // EIO: the child closed the terminal
      out_.append(buf, static_cast<size_t>(n));
    }
  }
  void Type(const std::string& text) { REQUIRE(TryType(text)); }
  // False when the terminal is closed: the child has exited (or is exiting).
  bool TryType(const std::string& text) {
    return write(fd_, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  }
  // The exit code, or -1 when it did not exit within the timeout.
  int Wait(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      // Keep draining the terminal so that the child never blocks writing.
      struct pollfd p = {fd_, POLLIN, 0};
      if (poll(&p, 1, 50) > 0) {
        char buf[4096];
        ssize_t n = read(fd_, buf, sizeof buf);
        if (n > 0) out_.append(buf, static_cast<size_t>(n));
      }
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
    }
    return -1;
  }
  const std::string& output() const { return out_; }
  bool running() const { return pid_ != -1; }

 private:
  std::vector<std::string> argv_, env_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string out_;
};

}  // namespace

TEST_CASE("console, piped: after an apply, one result per line from the state") {
  StackEnv e;
  auto apply = e.Cairn({"apply", e.stack, "--auto-approve"});
  INFO(apply.out << apply.err);
  REQUIRE(apply.exit_code == 0);
  const std::string id = e.StateId("instance.web[0]");
  auto r = e.Cairn({"console", e.stack},
                   "instance.web[0].id\n"
                   "\n"
                   "network.app.cidr\n"
                   "length(instance.web)\n"
                   "[for i in instance.web : i.name]\n"
                   "instance.web[1].id == \"${instance.web[1].id}\"\n"
                   "{a = 1}\n");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(Lines(r.out) == std::vector<std::string>{"\"" + id + "\"", "\"10.30.0.0/16\"", "2",
                                                 "[\"web-0\", \"web-1\"]", "true", "{a = 1}"});

  // --json: one object per line, the value as JSON.
  auto j = e.Cairn({"console", e.stack, "--json"}, "instance.web[0].id\ninstance.web[*].name\n");
  INFO(j.err);
  CHECK(j.exit_code == 0);
  auto lines = Lines(j.out);
  REQUIRE(lines.size() == 2);
  CHECK(json::parse(lines[0]) ==
        json({{"value", id}, {"type", "string"}, {"sensitive", false}, {"known", true}}));
  CHECK(json::parse(lines[1])["value"] == json({"web-0", "web-1"}));
  CHECK(json::parse(lines[1])["type"] == "list");

  // Reading takes no lock: a holder does not keep the console out.
  auto store = cairn::SqliteStateStore::Open(e.stack + "/.cairn/state.db");
  REQUIRE(store.ok());
  auto lock = (*store)->Lock("apply", std::chrono::milliseconds(0));
  REQUIRE(lock.ok());
  auto locked = e.Cairn({"console", e.stack}, "network.app.region\n");
  CHECK(locked.exit_code == 0);
  CHECK(locked.out == "\"eu-central\"\n");
  REQUIRE((*store)->Unlock(lock->id).ok());
}

TEST_CASE("console, piped: a stack never applied reads as unknown and gets no state") {
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml", kOfflineStack);
  auto r = RunCairn({"console", stack, "--var", "region=us-east"}, kNoColor,
                    "var.region\nlocal.prefix\nnetwork.app.id\nnetwork.app\n"
                    "cidrsubnet(\"10.0.0.0/8\", 8, 1)\npath.root == \"" +
                        stack + "\"\n");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(Lines(r.out) == std::vector<std::string>{"\"us-east\"", "\"app-us-east\"",
                                                 "(known after apply)", "(known after apply)",
                                                 "\"10.1.0.0/16\"", "true"});
  CHECK_FALSE(std::filesystem::exists(stack + "/.cairn"));
  auto j = RunCairn({"console", stack, "--json"}, kNoColor, "network.app.id\n");
  CHECK(json::parse(j.out) ==
        json({{"value", nullptr}, {"type", nullptr}, {"sensitive", false}, {"known", false}}));
  CHECK_FALSE(std::filesystem::exists(stack + "/.cairn"));
}

TEST_CASE("console, piped: sensitive values print masked, in text and JSON") {
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml", kOfflineStack);
  auto r = RunCairn({"console", stack}, kNoColor,
                    "var.pw\n\"x-${var.pw}\"\n[var.region, var.pw]\nnonsensitive(var.pw)\n");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(Lines(r.out) == std::vector<std::string>{"(sensitive value)", "(sensitive value)",
                                                 "[\"eu-central\", (sensitive value)]",
                                                 "\"[REDACTED]\""});
  CHECK(r.out.find("sekr1t") == std::string::npos);
  auto j = RunCairn({"console", stack, "--json"}, kNoColor, "var.pw\n");
  CHECK(json::parse(j.out) ==
        json({{"value", nullptr}, {"type", "string"}, {"sensitive", true}, {"known", true}}));
}

TEST_CASE("console, piped: a failing line prints its diagnostic with a caret and exits 1") {
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml", kOfflineStack);
  auto r = RunCairn({"console", stack}, kNoColor, "upper(var.regoin)\nvar.region\n1 +\n");
  CHECK(r.exit_code == 1);
  // Every line is evaluated: the good one in between printed.
  CHECK(r.out == "\"eu-central\"\n");
  CHECK(r.err.find("<console>:1:7: error: reference to undeclared variable \"regoin\" "
                   "[unknown_variable]\n"
                   "    upper(var.regoin)\n"
                   "          ^~~~~~~~~~\n"
                   "  did you mean \"region\"?\n") != std::string::npos);
  CHECK(r.err.find("[invalid_expression]") != std::string::npos);

  auto j = RunCairn({"console", stack, "--json"}, kNoColor, "var.nope\nvar.region\n");
  CHECK(j.exit_code == 1);
  auto lines = Lines(j.out);
  REQUIRE(lines.size() == 2);
  json err = json::parse(lines[0]);
  CHECK(err["error"]["code"] == "unknown_variable");
  CHECK(err["error"]["file"] == "<console>");
  CHECK(err["error"]["column"] == 1);
  CHECK(err["errors"].size() == 1);
  CHECK(json::parse(lines[1])["value"] == "eu-central");
}

TEST_CASE("console: a stack that does not load prints its diagnostics and exits 1") {
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml", "kind: network\nname: app\nspec: {region: eu-central}\n");
  auto r = RunCairn({"console", stack}, kNoColor, "1 + 1\n");
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("[missing_field]") != std::string::npos);
}

TEST_CASE("console, on a terminal: a prompt, results, errors, and exit") {
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml", kOfflineStack);
  // HOME: no ~/.editrc of the machine's user changes the keys.
  PtySession s({"console", stack}, {{"TERM", "dumb"}, {"NO_COLOR", "1"}, {"HOME", dir.path()}});
  size_t at = 0;
  REQUIRE(s.WaitFor("> ", 0, &at));
  s.Type("local.prefix\n");
  INFO(s.output());
  REQUIRE(s.WaitFor("\"app-eu-central\"", at, &at));
  REQUIRE(s.WaitFor("> ", at, &at));
  s.Type("var.nope + 1\n");
  REQUIRE(s.WaitFor("[unknown_variable]", at, &at));
  REQUIRE(s.WaitFor("^~~~~~~~", at, &at));
  REQUIRE(s.WaitFor("> ", at, &at));
  s.Type("var.pw\n");
  REQUIRE(s.WaitFor("(sensitive value)", at, &at));
  REQUIRE(s.WaitFor("> ", at, &at));
  s.Type("exit\n");
  CHECK(s.Wait() == 0);
  CHECK(s.output().find("sekr1t") == std::string::npos);
}

TEST_CASE("console, on a terminal: Ctrl-D quits") {
  TempDir dir;
  const std::string stack = dir.path() + "/stack";
  WriteFile(stack + "/main.yaml", kOfflineStack);
  PtySession s({"console", stack}, {{"TERM", "dumb"}, {"NO_COLOR", "1"}, {"HOME", dir.path()}});
  size_t at = 0;
  REQUIRE(s.WaitFor("> ", 0, &at));
  s.Type("1 + 2\n");
  INFO(s.output());
  REQUIRE(s.WaitFor("3", at, &at));
  REQUIRE(s.WaitFor("> ", at, &at));
  // The line editor may set the terminal's mode for the next line after
  // printing its prompt, discarding input that came before: a Ctrl-D
  // typed in that moment is lost, so it is typed again until one lands.
  // One that landed may take the console longer to act on than a wait
  // here (a loaded machine): the terminal it closes on the way out then
  // refuses the next, and its exit is waited for.
  int status = -1;
  for (int attempt = 0; attempt < 10 && s.running(); ++attempt) {
    if (!s.TryType("\x04")) {
      status = s.Wait();
      break;
    }
    status = s.Wait(std::chrono::seconds(2));
  }
  CHECK(status == 0);
}

}  // namespace console_command_test
