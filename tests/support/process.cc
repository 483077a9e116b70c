#include "tests/support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace cairn::testing {
namespace {

std::vector<std::string> MergedEnv(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : extra) {
    if (v.empty()) {
      env.erase(k);
    } else {
      env[k] = v;
    }
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void Check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string(what) + ": " + std::strerror(rc));
}

std::string DrainFd(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  return out;
}

}  // namespace

std::string CairnBinary() { return CAIRN_BINARY_PATH; }

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         const std::string& stdin_text, const std::optional<std::string>& cwd) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC)) {
    throw std::runtime_error("pipe failed");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  if (cwd) posix_spawn_file_actions_addchdir_np(&fa, cwd->c_str());
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = MergedEnv(env);
  auto cargs = CStrings(args);
  auto cenv = CStrings(envs);
  pid_t pid;
  Check(posix_spawn(&pid, args[0].c_str(), &fa, nullptr, cargs.data(), cenv.data()), "spawn");
  posix_spawn_file_actions_destroy(&fa);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);

  // Feed stdin and drain both outputs concurrently so no pipe fills up.
  std::thread writer([fd = in_pipe[1], &stdin_text] {
    size_t off = 0;
    signal(SIGPIPE, SIG_IGN);
    while (off < stdin_text.size()) {
      ssize_t n = write(fd, stdin_text.data() + off, stdin_text.size() - off);
      if (n <= 0) break;
      off += n;
    }
    close(fd);
  });
  std::string err_text;
  std::thread err_reader([&] { err_text = DrainFd(err_pipe[0]); });
  CommandResult result;
  result.out = DrainFd(out_pipe[0]);
  err_reader.join();
  writer.join();
  close(out_pipe[0]);
  close(err_pipe[0]);
  result.err = std::move(err_text);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

CommandResult RunCairn(const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env, const std::string& stdin_text,
                       const std::optional<std::string>& cwd) {
  std::vector<std::string> argv{CairnBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, env, stdin_text, cwd);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::map<std::string, std::string>& env) {
  char tmpl[] = "/tmp/cairn-child-stderr-XXXXXX";
  int err_fd = mkstemp(tmpl);
  if (err_fd < 0) throw std::runtime_error("mkstemp failed");
  stderr_path_ = tmpl;
  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC)) throw std::runtime_error("pipe failed");
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, devnull, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = MergedEnv(env);
  auto cargs = CStrings(args);
  auto cenv = CStrings(envs);
  Check(posix_spawn(&pid_, args[0].c_str(), &fa, nullptr, cargs.data(), cenv.data()), "spawn");
  posix_spawn_file_actions_destroy(&fa);
  close(out_pipe[1]);
  close(err_fd);
  close(devnull);
  out_fd_ = out_pipe[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (!stderr_path_.empty()) unlink(stderr_path_.c_str());
}

std::optional<std::string> ChildProcess::ReadLine(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd pfd{out_fd_, POLLIN, 0};
    int rc = poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return std::nullopt;
    char buf[4096];
    ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    buffer_.append(buf, n);
  }
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

int ChildProcess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ChildProcess::Stderr() const { return ReadFile(stderr_path_); }

TempDir::TempDir() {
  char tmpl[] = "/tmp/cairn-test-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void WriteFile(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace cairn::testing
