// Env: the file system as the engine sees it. Every manifest, variable file
// and file() target is read, every stack or module directory walked, and
// every file a command writes (saved plans, reports, formatted manifests,
// generated manifests) written through one, so that the same code runs on
// the disk (PosixEnv) and on files held in memory (MemEnv: tests, and the
// fuzzers, which must never read the host's files or environment).
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn {

class Env {
 public:
  virtual ~Env() = default;

  // The content of the regular file `path`, at most `limit` bytes. Errors:
  // NotFound (cannot open), InvalidArgument (not a regular file: its message
  // says what it is), FailedPrecondition (larger than `limit`), IOError.
  virtual Result<std::string> ReadFile(const std::string& path, size_t limit) const = 0;
  virtual bool IsDirectory(const std::string& path) const = 0;
  virtual bool Exists(const std::string& path) const = 0;
  // The regular files in `dir` (and below it when `recursive`) whose names
  // end in one of `extensions` (".yaml"), as lexically normal paths under
  // `dir`, sorted.
  virtual std::vector<std::string> ListFiles(const std::string& dir, bool recursive,
                                             const std::vector<std::string>& extensions) const = 0;
  // One spelling per file or directory, to tell whether two paths are the
  // same (symbolic links resolved on disk).
  virtual std::string Canonical(const std::string& path) const = 0;
  // Replaces `path` with `content` so that a crash or a power loss leaves
  // the old file or the new one, never part of either: on disk, a temporary
  // file in the same directory, written and synced, renamed over `path`,
  // then the directory synced. The file gets `mode` (a new file replaces the
  // old one). On failure nothing is left behind and the old file is
  // untouched; a missing directory is a failure (MemEnv: one holding no file).
  virtual Status WriteFileAtomically(const std::string& path, const std::string& content,
                                     mode_t mode = 0600) const = 0;
  // The environment variable `name`, or null when it is not set.
  virtual const char* GetEnv(const char* name) const = 0;
};

// The real file system. Files are opened without blocking and checked on the
// open descriptor: a FIFO swapped in after a check cannot hang a read, and a
// file that grows or lies about its size still cannot exceed the limit.
const Env& PosixEnv();

// Files held in memory, by lexically normal path; a directory exists when a
// file is below it. Relative and absolute paths are kept as given.
class MemEnv final : public Env {
 public:
  void AddFile(const std::string& path, std::string content);

  Result<std::string> ReadFile(const std::string& path, size_t limit) const override;
  bool IsDirectory(const std::string& path) const override;
  bool Exists(const std::string& path) const override;
  std::vector<std::string> ListFiles(const std::string& dir, bool recursive,
                                     const std::vector<std::string>& extensions) const override;
  std::string Canonical(const std::string& path) const override;
  Status WriteFileAtomically(const std::string& path, const std::string& content,
                             mode_t mode = 0600) const override;
  // Only what SetEnv set: never the process's environment.
  const char* GetEnv(const char* name) const override;
  void SetEnv(const std::string& name, std::string value);

 private:
  std::map<std::string, std::string> vars_;
  // mutable: a write through a const Env (the interface's methods are const,
  // as the disk behind PosixEnv is not part of the object).
  mutable std::map<std::string, std::string> files_;
};

}  // namespace cairn
