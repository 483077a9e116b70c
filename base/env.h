// Env: the file system as the engine sees it. Every manifest, variable file
// and file() target is read, every stack or module directory walked, and
// every file a command writes (saved plans, reports, formatted manifests,
// generated manifests) written through one, so that the same code runs on
// the disk (PosixEnv) and on files held in memory (MemEnv: tests, and the
// fuzzers, which must never read the host's files or environment).
//
// An atomic write is composed, once, on this class from five primitives
// each Env implements (write, sync a file, rename, sync a directory,
// remove), so that an Env wrapping another sees every step: the tests'
// FaultInjectionEnv (tests/base/support/) crashes between any two of them
// and drops what was not synced, as a power loss would.
//
// Every file a command writes goes through WriteFileAtomically: a test
// (tests/base/file_writes_test.cc) fails on any other open-for-writing in
// the sources, so the rules below hold for all of them.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn {

// What a written file is given. The mode is set exactly (fchmod: the umask
// does not filter it); the owner and group are set only when given (fchown),
// which for another user's file takes privilege (root): without it the
// write fails and nothing is replaced.
struct FileAttributes {
  static constexpr uid_t kNoOwner = static_cast<uid_t>(-1);
  static constexpr gid_t kNoGroup = static_cast<gid_t>(-1);
  mode_t mode = 0600;
  uid_t owner = kNoOwner;
  gid_t group = kNoGroup;
};

// How Env::WriteFile treats a file already at the path.
enum class WriteMode {
  // Fail with AlreadyExists when anything is at the path, a symbolic link
  // (even one to nowhere) included: the file written is one this call
  // created, never one someone planted.
  kCreateNew,
  // Truncate a regular file there and write over it in place (not through a
  // symbolic link: that fails). Not crash-safe; for tests and the
  // fault-injecting Env's power loss.
  kTruncate,
};

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
  // the old file or the new one, never part of either: a temporary file
  // "PATH.tmp.<16 hex digits from a CSPRNG>" in the same directory created
  // (WriteFile, kCreateNew: mode 0600 until its content is written, then
  // `attributes`) and synced (SyncFile), renamed over `path` (RenameFile),
  // then the directory synced (SyncDir). The name cannot be guessed and a
  // file or link already there is never written through (another name is
  // drawn), so a link planted in a shared directory cannot redirect the
  // write. `path` itself is replaced, not followed: a symbolic link there
  // becomes the new regular file, and a hard link to the old file keeps the
  // old content (callers that must keep them resolve `path` first, as
  // `cairn fmt` does). A failure up to the rename leaves the old file
  // untouched and removes the temporary; a missing directory is such a
  // failure (MemEnv: one holding no file). A failure of the last step alone
  // is an IOError saying that `path` was replaced but may not survive a
  // power loss.
  Status WriteFileAtomically(const std::string& path, const std::string& content,
                             const FileAttributes& attributes = {}) const;
  // The environment variable `name`, or null when it is not set.
  virtual const char* GetEnv(const char* name) const = 0;

  // The steps of WriteFileAtomically. Code that writes a file someone will
  // read calls WriteFileAtomically; these are public so that one Env can
  // wrap another and tests can compose them. Each fails with an IOError
  // (NotFound for a file or directory that is not there) naming the path.
  //
  // Creates `path` (or, with kTruncate, truncates the regular file there)
  // and writes `content`, not synced: a crash may lose any of it. The file
  // gets `attributes` once the content is written. Errors: AlreadyExists
  // (kCreateNew, something is there), NotFound, IOError.
  virtual Status WriteFile(const std::string& path, const std::string& content,
                           const FileAttributes& attributes, WriteMode how) const = 0;
  // Makes the content of the file `path` durable (fsync). A symbolic link
  // there is not followed (an error).
  virtual Status SyncFile(const std::string& path) const = 0;
  // Renames the file `from` to `to`, replacing a file there in one step;
  // the new name is durable once the directory is synced.
  virtual Status RenameFile(const std::string& from, const std::string& to) const = 0;
  // Makes the names in directory `dir` durable: the files created, renamed
  // into or removed from it since its last sync (fsync of the directory).
  virtual Status SyncDir(const std::string& dir) const = 0;
  virtual Status RemoveFile(const std::string& path) const = 0;
};

// The real file system. Files are opened without blocking and checked on the
// open descriptor: a FIFO swapped in after a check cannot hang a read, and a
// file that grows or lies about its size still cannot exceed the limit.
// SyncFile opens the file again to fsync it (read-only, else write-only when
// that is all its mode allows); Linux reports a writeback error to that
// descriptor too. SyncDir of a directory this process cannot open (no read
// permission) does nothing and is not an error.
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
  // Only what SetEnv set: never the process's environment.
  const char* GetEnv(const char* name) const override;
  void SetEnv(const std::string& name, std::string value);

  // Attributes are not kept; syncing checks that the file or directory is
  // there.
  Status WriteFile(const std::string& path, const std::string& content,
                   const FileAttributes& attributes, WriteMode how) const override;
  Status SyncFile(const std::string& path) const override;
  Status RenameFile(const std::string& from, const std::string& to) const override;
  Status SyncDir(const std::string& dir) const override;
  Status RemoveFile(const std::string& path) const override;

 private:
  std::map<std::string, std::string> vars_;
  // mutable: a write through a const Env (the interface's methods are const,
  // as the disk behind PosixEnv is not part of the object).
  mutable std::map<std::string, std::string> files_;
};

}  // namespace cairn
