#include "base/env.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string_view>

namespace cairn {
namespace {

namespace fs = std::filesystem;

std::string Normal(const std::string& path) {
  std::string out = fs::path(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out.empty() ? "." : out;
}

bool HasExtension(const std::string& path, const std::vector<std::string>& extensions) {
  const std::string ext = fs::path(path).extension().string();
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

// Sorted as paths, component by component (as a directory listing reads).
void SortAsPaths(std::vector<std::string>& paths) {
  std::sort(paths.begin(), paths.end(),
            [](const std::string& a, const std::string& b) { return fs::path(a) < fs::path(b); });
}

Status TooLarge(size_t limit) {
  return Status::FailedPrecondition("larger than the limit of " + std::to_string(limit) + " bytes");
}

class Posix final : public Env {
 public:
  Result<std::string> ReadFile(const std::string& path, size_t limit) const override {
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return Status::NotFound(std::strerror(errno));
    struct FdCloser {
      int fd;
      ~FdCloser() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Status::IOError(std::strerror(errno));
    if (!S_ISREG(st.st_mode)) {
      const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                         : S_ISFIFO(st.st_mode) ? "a FIFO"
                         : S_ISCHR(st.st_mode)  ? "a character device"
                         : S_ISBLK(st.st_mode)  ? "a block device"
                         : S_ISSOCK(st.st_mode) ? "a socket"
                                                : "not a regular file";
      return Status::InvalidArgument(what);
    }
    if (static_cast<uint64_t>(st.st_size) > limit) return TooLarge(limit);
    std::string out;
    out.resize(std::min<size_t>(static_cast<size_t>(st.st_size), limit) + 1);
    size_t got = 0;
    while (true) {
      if (got == out.size()) {
        if (out.size() > limit) return TooLarge(limit);
        out.resize(std::min(out.size() * 2, limit + 1));
      }
      ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::IOError(std::strerror(errno));
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    if (got > limit) return TooLarge(limit);
    out.resize(got);
    return out;
  }

  bool IsDirectory(const std::string& path) const override {
    std::error_code ec;
    return fs::is_directory(path, ec);
  }

  bool Exists(const std::string& path) const override {
    std::error_code ec;
    return fs::exists(path, ec);
  }

  std::vector<std::string> ListFiles(const std::string& dir, bool recursive,
                                     const std::vector<std::string>& extensions) const override {
    std::error_code ec;
    std::vector<std::string> found;
    auto add = [&](const fs::directory_entry& entry) {
      if (HasExtension(entry.path().string(), extensions) && entry.is_regular_file(ec))
        found.push_back(entry.path().lexically_normal().string());
    };
    if (recursive) {
      for (auto it = fs::recursive_directory_iterator(
               dir, fs::directory_options::skip_permission_denied, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        add(*it);
      }
    } else {
      for (const auto& entry : fs::directory_iterator(dir, ec)) add(entry);
    }
    SortAsPaths(found);
    return found;
  }

  std::string Canonical(const std::string& path) const override {
    std::error_code ec;
    return fs::weakly_canonical(path, ec).string();
  }

  const char* GetEnv(const char* name) const override { return ::getenv(name); }

  Status WriteFile(const std::string& path, const std::string& content,
                   const FileAttributes& attributes, WriteMode how) const override {
    // O_NOFOLLOW: never through a symbolic link; O_EXCL: never a file that
    // was there. Created 0600 whatever `attributes` says, so that no one
    // else can open it before it holds what it should.
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY |
                      (how == WriteMode::kCreateNew ? O_EXCL : O_TRUNC);
    int fd = ::open(path.c_str(), flags, 0600);
    if (fd < 0) {
      if (errno == EEXIST) return Status::AlreadyExists("cannot create " + path + ": it exists");
      if (errno == ELOOP) return Status::IOError("cannot write " + path + ": a symbolic link");
      return FromErrno({"cannot write ", path});
    }
    struct FdCloser {
      int fd;
      ~FdCloser() { ::close(fd); }
    } closer{fd};
    size_t off = 0;
    while (off < content.size()) {
      ssize_t n = ::write(fd, content.data() + off, content.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        return Status::IOError("cannot write " + path + ": " + std::strerror(err));
      }
      off += static_cast<size_t>(n);
    }
    // The owner first: fchown clears the set-user-ID and set-group-ID bits,
    // which the mode then sets again if asked.
    const bool owner = attributes.owner != FileAttributes::kNoOwner;
    const bool group = attributes.group != FileAttributes::kNoGroup;
    if (owner || group) {
      // Built before the call: FromErrno must see fchown's errno.
      std::string whom = owner ? " to uid " + std::to_string(attributes.owner) : "";
      if (group) whom += (owner ? " and gid " : " to gid ") + std::to_string(attributes.group);
      if (::fchown(fd, attributes.owner, attributes.group) != 0)
        return FromErrno({"cannot give ", path, whom});
    }
    if (::fchmod(fd, attributes.mode & 07777) != 0) return FromErrno({"cannot chmod ", path});
    return Status::Ok();
  }

  Status SyncFile(const std::string& path) const override {
    // Not through a link, and not blocking on a FIFO swapped in.
    const int flags = O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK;
    int fd = ::open(path.c_str(), O_RDONLY | flags);
    if (fd < 0 && errno == EACCES) fd = ::open(path.c_str(), O_WRONLY | flags);
    if (fd < 0) return FromErrno({"cannot sync ", path});
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) return Status::IOError("cannot sync " + path + ": " + std::strerror(err));
    return Status::Ok();
  }

  Status RenameFile(const std::string& from, const std::string& to) const override {
    if (::rename(from.c_str(), to.c_str()) != 0)
      return FromErrno({"cannot rename ", from, " to ", to});
    return Status::Ok();
  }

  Status SyncDir(const std::string& dir) const override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno == EACCES) return Status::Ok();  // cannot be synced (see env.h)
    if (fd < 0) return FromErrno({"cannot sync the directory ", dir});
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0)
      return Status::IOError("cannot sync the directory " + dir + ": " + std::strerror(err));
    return Status::Ok();
  }

  Status RemoveFile(const std::string& path) const override {
    if (::unlink(path.c_str()) != 0) return FromErrno({"cannot remove ", path});
    return Status::Ok();
  }

 private:
  // "WHAT: strerror(errno)", NotFound when errno says the path is not there.
  // errno is read before the message is built (building it may change it).
  static Status FromErrno(std::initializer_list<std::string_view> what) {
    const int err = errno;
    std::string message;
    for (std::string_view part : what) message += part;
    message += ": ";
    message += std::strerror(err);
    return err == ENOENT ? Status::NotFound(message) : Status::IOError(message);
  }
};

// 16 hex digits from OpenSSL's CSPRNG: a temporary name no one can plant a
// link at in advance (a PID or a counter can be guessed).
Result<std::string> UnguessableSuffix() {
  unsigned char bytes[8];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    return Status::Internal("internal error: OpenSSL RAND_bytes failed, please report");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace

Status Env::WriteFileAtomically(const std::string& path, const std::string& content,
                                const FileAttributes& attributes) const {
  // A name that is taken (by chance, or by someone who planted a file or a
  // link there) is left alone and another drawn; 16 taken in a row is no
  // chance.
  constexpr int kAttempts = 16;
  std::string tmp;
  Status st;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto suffix = UnguessableSuffix();
    if (!suffix.ok()) return suffix.status();
    tmp = path + ".tmp." + *suffix;
    st = WriteFile(tmp, content, attributes, WriteMode::kCreateNew);
    if (st.code() != StatusCode::kAlreadyExists) break;
  }
  if (st.code() == StatusCode::kAlreadyExists)
    return Status::IOError("cannot write " + path + ": " + std::to_string(kAttempts) +
                           " temporary names beside it were taken");
  if (st.ok()) st = SyncFile(tmp);
  if (st.ok()) st = RenameFile(tmp, path);
  if (!st.ok()) {
    (void)RemoveFile(tmp);  // if it was created; its own error would hide the first
    return st;
  }
  // The rename is durable once the directory is.
  const std::string dir = fs::path(path).parent_path().string();
  st = SyncDir(dir.empty() ? "." : dir);
  if (!st.ok())
    return Status::IOError(path +
                           " was replaced but may not survive a power loss: " + st.message());
  return Status::Ok();
}

const Env& PosixEnv() {
  static const Posix env;
  return env;
}

void MemEnv::AddFile(const std::string& path, std::string content) {
  files_[Normal(path)] = std::move(content);
}

Result<std::string> MemEnv::ReadFile(const std::string& path, size_t limit) const {
  auto it = files_.find(Normal(path));
  if (it == files_.end()) {
    if (IsDirectory(path)) return Status::InvalidArgument("a directory");
    return Status::NotFound(std::strerror(ENOENT));
  }
  if (it->second.size() > limit) return TooLarge(limit);
  return it->second;
}

bool MemEnv::IsDirectory(const std::string& path) const {
  const std::string dir = Normal(path);
  if (dir == ".") return !files_.empty();
  const std::string prefix = dir == "/" ? dir : dir + "/";
  auto it = files_.lower_bound(prefix);
  return it != files_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

bool MemEnv::Exists(const std::string& path) const {
  return files_.count(Normal(path)) > 0 || IsDirectory(path);
}

std::vector<std::string> MemEnv::ListFiles(const std::string& dir, bool recursive,
                                           const std::vector<std::string>& extensions) const {
  const std::string base = Normal(dir);
  std::vector<std::string> out;
  for (const auto& [path, content] : files_) {
    std::string rest;
    if (base == ".") {
      if (path.front() == '/') continue;
      rest = path;
    } else {
      const std::string prefix = base == "/" ? base : base + "/";
      if (path.compare(0, prefix.size(), prefix) != 0) continue;
      rest = path.substr(prefix.size());
    }
    if (!recursive && rest.find('/') != std::string::npos) continue;
    if (HasExtension(path, extensions)) out.push_back(path);
  }
  SortAsPaths(out);
  return out;
}

std::string MemEnv::Canonical(const std::string& path) const { return Normal(path); }

Status MemEnv::WriteFile(const std::string& path, const std::string& content, const FileAttributes&,
                         WriteMode how) const {
  if (IsDirectory(path)) return Status::IOError("cannot write " + path + ": a directory");
  if (how == WriteMode::kCreateNew && files_.count(Normal(path)) > 0)
    return Status::AlreadyExists("cannot create " + path + ": it exists");
  const std::string parent = fs::path(Normal(path)).parent_path().string();
  if (!parent.empty() && parent != "/" && !IsDirectory(parent))
    return Status::NotFound("cannot write " + path + ": no directory " + parent);
  files_[Normal(path)] = content;
  return Status::Ok();
}

Status MemEnv::SyncFile(const std::string& path) const {
  if (files_.count(Normal(path)) == 0)
    return Status::NotFound("cannot sync " + path + ": " + std::strerror(ENOENT));
  return Status::Ok();
}

Status MemEnv::RenameFile(const std::string& from, const std::string& to) const {
  auto it = files_.find(Normal(from));
  if (it == files_.end())
    return Status::NotFound("cannot rename " + from + " to " + to + ": " + std::strerror(ENOENT));
  if (IsDirectory(to))
    return Status::IOError("cannot rename " + from + " to " + to + ": " + std::strerror(EISDIR));
  const std::string parent = fs::path(Normal(to)).parent_path().string();
  if (!parent.empty() && parent != "/" && !IsDirectory(parent))
    return Status::NotFound("cannot rename " + from + " to " + to + ": no directory " + parent);
  std::string content = std::move(it->second);
  files_.erase(it);
  files_[Normal(to)] = std::move(content);
  return Status::Ok();
}

Status MemEnv::SyncDir(const std::string& dir) const {
  if (Normal(dir) != "/" && !IsDirectory(dir))
    return Status::NotFound("cannot sync the directory " + dir + ": " + std::strerror(ENOENT));
  return Status::Ok();
}

Status MemEnv::RemoveFile(const std::string& path) const {
  if (files_.erase(Normal(path)) == 0)
    return Status::NotFound("cannot remove " + path + ": " + std::strerror(ENOENT));
  return Status::Ok();
}

}  // namespace cairn

namespace cairn {

const char* MemEnv::GetEnv(const char* name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second.c_str();
}

void MemEnv::SetEnv(const std::string& name, std::string value) { vars_[name] = std::move(value); }

}  // namespace cairn
