// FaultInjectionEnv: an Env over another (a MemEnv, or the disk) that knows
// what a power loss would keep, after LevelDB's FaultInjectionTestEnv. Reads
// pass through; the write primitives pass through too, and are recorded:
//  - a file's content is durable once SyncFile of it returned; a new file, or
//    one truncated and rewritten in place by WriteFile (kTruncate), has no
//    durable content until then
//    (if its name survives a crash, it is left empty, as ext4 can leave it);
//  - a name (a file created, renamed or removed) is durable once SyncDir of
//    its directory returned;
//  - what was in the Env below before this one first touched it is durable.
// DropUnsyncedData() is the power loss: the files below go back to the
// durable picture. CrashAfter and FailAfter make primitives fail, to stop a
// writer at any step or to test its error paths. Each injected failure does
// nothing below and returns an IOError. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"

namespace cairn::testing {

class FaultInjectionEnv final : public Env {
 public:
  // `base` must outlive this Env.
  explicit FaultInjectionEnv(const Env& base) : base_(base) {}

  Result<std::string> ReadFile(const std::string& path, size_t limit) const override;
  bool IsDirectory(const std::string& path) const override;
  bool Exists(const std::string& path) const override;
  std::vector<std::string> ListFiles(const std::string& dir, bool recursive,
                                     const std::vector<std::string>& extensions) const override;
  std::string Canonical(const std::string& path) const override;
  const char* GetEnv(const char* name) const override;

  Status WriteFile(const std::string& path, const std::string& content,
                   const FileAttributes& attributes, WriteMode how) const override;
  Status SyncFile(const std::string& path) const override;
  Status RenameFile(const std::string& from, const std::string& to) const override;
  Status SyncDir(const std::string& dir) const override;
  Status RemoveFile(const std::string& path) const override;

  // The next `n` primitives go through; every one after fails: the process
  // died there (call DropUnsyncedData to see what the disk kept).
  void CrashAfter(int n);
  // The next `n` primitives go through, the one after fails, and the rest go
  // through again: an I/O error the writer must handle.
  void FailAfter(int n);
  // A power loss and a restart: every file this Env touched back to its
  // durable name and content (a file that had been there before gets mode
  // 0600 if it has to be rewritten), and no fault pending. What follows is
  // durable as it stands.
  Status DropUnsyncedData();

  // Each primitive that went through to the Env below, in order, as
  // "write PATH" (kCreateNew; "truncate PATH" for kTruncate), "sync PATH",
  // "rename FROM TO", "syncdir DIR", "remove PATH".
  const std::vector<std::string>& calls() const { return calls_; }

 private:
  // A file's data apart from its names: what a sync made durable.
  struct Inode {
    std::string durable;
    mode_t mode = 0600;
  };
  // What a path names now, and what it would name after a power loss.
  struct Name {
    std::optional<size_t> now, durable;  // indexes into inodes_
  };

  // Fails when a fault is due; else records `call`.
  Status Step(std::string call) const;
  // The entry of `path` (canonical), made from the Env below when new.
  std::string Key(const std::string& path) const;
  Name& Touch(const std::string& path) const;

  const Env& base_;
  mutable std::vector<Inode> inodes_;
  mutable std::map<std::string, Name> names_;  // by Key()
  mutable std::vector<std::string> calls_;
  mutable int fault_in_ = -1;  // primitives to let through before the fault
  bool fault_crashes_ = false;
  mutable bool down_ = false;
};

}  // namespace cairn::testing
