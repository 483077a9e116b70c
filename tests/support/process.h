// Child processes for integration tests: run `cairn` (or anything) with
// arguments, environment and stdin, and capture its exit code and output; or
// start a long-running one (`cairn serve`), read its stdout line by line,
// signal it (SIGTERM, SIGKILL) and reap it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cairn::testing {

// Path of the cairn binary under test (set by CMake).
std::string CairnBinary();

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

// Runs argv[0] (a path) to completion. `env` entries are added to (and
// override) the current environment; an empty value unsets the variable.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         const std::string& stdin_text = "",
                         const std::optional<std::string>& cwd = std::nullopt);

// Shorthand: RunCommand with CairnBinary() prepended.
CommandResult RunCairn(const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env = {},
                       const std::string& stdin_text = "",
                       const std::optional<std::string>& cwd = std::nullopt);

// A running child whose stdout is a pipe the test reads; stderr is appended to
// a file the test can read with Stderr(). The destructor SIGKILLs and reaps.
class ChildProcess {
 public:
  explicit ChildProcess(const std::vector<std::string>& argv,
                        const std::map<std::string, std::string>& env = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The next stdout line (without newline), or nullopt on EOF or timeout.
  std::optional<std::string> ReadLine(std::chrono::milliseconds timeout);
  void Signal(int sig);
  // Waits for exit; returns the exit code, or -1 if it was signalled (or the
  // timeout passed, in which case it is SIGKILLed first).
  int Wait(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  bool running() const { return pid_ > 0; }
  std::string Stderr() const;

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
  std::string stderr_path_;
};

// A fresh temporary directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes `content` to `path`, creating parent directories.
void WriteFile(const std::string& path, const std::string& content);
std::string ReadFile(const std::string& path);

}  // namespace cairn::testing
