#include "tests/base/support/fault_injection_env.h"

#include <filesystem>

namespace cairn::testing {
namespace {

constexpr size_t kReadLimit = size_t{1} << 30;

std::string ParentOf(const std::string& key) {
  std::string dir = std::filesystem::path(key).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace

Result<std::string> FaultInjectionEnv::ReadFile(const std::string& path, size_t limit) const {
  return base_.ReadFile(path, limit);
}
bool FaultInjectionEnv::IsDirectory(const std::string& path) const {
  return base_.IsDirectory(path);
}
bool FaultInjectionEnv::Exists(const std::string& path) const { return base_.Exists(path); }
std::vector<std::string> FaultInjectionEnv::ListFiles(
    const std::string& dir, bool recursive, const std::vector<std::string>& extensions) const {
  return base_.ListFiles(dir, recursive, extensions);
}
std::string FaultInjectionEnv::Canonical(const std::string& path) const {
  return base_.Canonical(path);
}
const char* FaultInjectionEnv::GetEnv(const char* name) const { return base_.GetEnv(name); }

Status FaultInjectionEnv::WriteFile(const std::string& path, const std::string& content,
                                    const FileAttributes& attributes, WriteMode how) const {
  const bool create = how == WriteMode::kCreateNew;
  if (Status st = Step((create ? "write " : "truncate ") + path); !st.ok()) return st;
  Name& name = Touch(path);
  const Status st = base_.WriteFile(path, content, attributes, how);
  // kCreateNew refused a file there: nothing changed.
  if (st.code() == StatusCode::kAlreadyExists) return st;
  // A write that failed may still have created or truncated the file.
  if (!st.ok() && !base_.ReadFile(path, kReadLimit).ok()) return st;
  if (name.now) {
    // Truncated in place: what was synced is gone, the new data not yet there.
    inodes_[*name.now].durable.clear();
  } else {
    inodes_.push_back(Inode{"", attributes.mode});
    name.now = inodes_.size() - 1;
  }
  return st;
}

Status FaultInjectionEnv::SyncFile(const std::string& path) const {
  if (Status st = Step("sync " + path); !st.ok()) return st;
  Name& name = Touch(path);
  if (Status st = base_.SyncFile(path); !st.ok()) return st;
  if (!name.now) return Status::Internal("FaultInjectionEnv: synced " + path + ", not known");
  auto content = base_.ReadFile(path, kReadLimit);
  if (!content.ok()) return content.status();
  inodes_[*name.now].durable = *content;
  return Status::Ok();
}

Status FaultInjectionEnv::RenameFile(const std::string& from, const std::string& to) const {
  if (Status st = Step("rename " + from + " " + to); !st.ok()) return st;
  Name& source = Touch(from);
  Name& target = Touch(to);
  if (Status st = base_.RenameFile(from, to); !st.ok()) return st;
  if (&source != &target) {
    target.now = source.now;
    source.now.reset();
  }
  return Status::Ok();
}

Status FaultInjectionEnv::SyncDir(const std::string& dir) const {
  if (Status st = Step("syncdir " + dir); !st.ok()) return st;
  if (Status st = base_.SyncDir(dir); !st.ok()) return st;
  const std::string key = Key(dir);
  for (auto& [path, name] : names_)
    if (ParentOf(path) == key) name.durable = name.now;
  return Status::Ok();
}

Status FaultInjectionEnv::RemoveFile(const std::string& path) const {
  if (Status st = Step("remove " + path); !st.ok()) return st;
  Name& name = Touch(path);
  if (Status st = base_.RemoveFile(path); !st.ok()) return st;
  name.now.reset();
  return Status::Ok();
}

void FaultInjectionEnv::CrashAfter(int n) {
  fault_in_ = n;
  fault_crashes_ = true;
}

void FaultInjectionEnv::FailAfter(int n) {
  fault_in_ = n;
  fault_crashes_ = false;
}

Status FaultInjectionEnv::DropUnsyncedData() {
  // Files back first, then names gone: in a MemEnv a directory exists only
  // while a file is in it.
  for (const auto& [path, name] : names_) {
    if (!name.durable) continue;
    const Inode& inode = inodes_[*name.durable];
    if (name.now == name.durable) {
      auto content = base_.ReadFile(path, kReadLimit);
      if (content.ok() && *content == inode.durable) continue;
    }
    if (Status st =
            base_.WriteFile(path, inode.durable, {.mode = inode.mode}, WriteMode::kTruncate);
        !st.ok())
      return st;
  }
  for (const auto& [path, name] : names_) {
    if (name.durable || !name.now) continue;
    if (Status st = base_.RemoveFile(path); !st.ok()) return st;
  }
  inodes_.clear();
  names_.clear();
  fault_in_ = -1;
  down_ = false;
  return Status::Ok();
}

Status FaultInjectionEnv::Step(std::string call) const {
  if (down_) return Status::IOError("injected crash: " + call + " after the process died");
  if (fault_in_ == 0) {
    fault_in_ = -1;
    down_ = fault_crashes_;
    return Status::IOError("injected " + std::string(down_ ? "crash: " : "fault: ") + call);
  }
  if (fault_in_ > 0) --fault_in_;
  calls_.push_back(std::move(call));
  return Status::Ok();
}

std::string FaultInjectionEnv::Key(const std::string& path) const {
  std::string key = base_.Canonical(path);
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

FaultInjectionEnv::Name& FaultInjectionEnv::Touch(const std::string& path) const {
  const std::string key = Key(path);
  auto it = names_.find(key);
  if (it != names_.end()) return it->second;
  Name name;
  if (auto content = base_.ReadFile(key, kReadLimit); content.ok()) {
    inodes_.push_back(Inode{*content, 0600});
    name.now = name.durable = inodes_.size() - 1;
  }
  return names_.emplace(key, name).first->second;
}

}  // namespace cairn::testing
