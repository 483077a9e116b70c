#include "tests/engine/support/crash_vfs.h"

#include <sqlite3.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace cairn::testing {
namespace {

namespace fs = std::filesystem;

sqlite3_vfs* real_vfs = nullptr;

struct CrashFile {
  sqlite3_file base;  // must be first: SQLite sees this
  std::string* path;  // null for files without a name (temporary)
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The copy is the durable image: written to a temporary name, then renamed,
// so that a kill during the copy leaves the previous image.
// A temporary name per thread: two connections may sync one file at once.
// No exception may leave this function: it runs inside SQLite's C callbacks.
void KeepImage(const std::string& path) {
  const std::string tmp = path + ".synced.tmp." +
                          std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << Slurp(path);
  }
  std::error_code ec;
  fs::rename(tmp, path + ".synced", ec);
}

CrashFile* Self(sqlite3_file* f) { return reinterpret_cast<CrashFile*>(f); }

int Close(sqlite3_file* f) {
  int rc =
      Self(f)->real()->pMethods ? Self(f)->real()->pMethods->xClose(Self(f)->real()) : SQLITE_OK;
  delete Self(f)->path;
  return rc;
}
int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  return Self(f)->real()->pMethods->xRead(Self(f)->real(), buf, n, off);
}
int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  return Self(f)->real()->pMethods->xWrite(Self(f)->real(), buf, n, off);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Self(f)->real()->pMethods->xTruncate(Self(f)->real(), size);
}
int Sync(sqlite3_file* f, int flags) {
  int rc = Self(f)->real()->pMethods->xSync(Self(f)->real(), flags);
  if (rc == SQLITE_OK && Self(f)->path) KeepImage(*Self(f)->path);
  return rc;
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Self(f)->real()->pMethods->xFileSize(Self(f)->real(), size);
}
int Lock(sqlite3_file* f, int level) {
  return Self(f)->real()->pMethods->xLock(Self(f)->real(), level);
}
int Unlock(sqlite3_file* f, int level) {
  return Self(f)->real()->pMethods->xUnlock(Self(f)->real(), level);
}
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Self(f)->real()->pMethods->xCheckReservedLock(Self(f)->real(), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Self(f)->real()->pMethods->xFileControl(Self(f)->real(), op, arg);
}
int SectorSize(sqlite3_file* f) { return Self(f)->real()->pMethods->xSectorSize(Self(f)->real()); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Self(f)->real()->pMethods->xDeviceCharacteristics(Self(f)->real());
}
int ShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return Self(f)->real()->pMethods->xShmMap(Self(f)->real(), page, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Self(f)->real()->pMethods->xShmLock(Self(f)->real(), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Self(f)->real()->pMethods->xShmBarrier(Self(f)->real()); }
int ShmUnmap(sqlite3_file* f, int del) {
  return Self(f)->real()->pMethods->xShmUnmap(Self(f)->real(), del);
}

const sqlite3_io_methods kMethods = {2,
                                     Close,
                                     Read,
                                     Write,
                                     Truncate,
                                     Sync,
                                     FileSize,
                                     Lock,
                                     Unlock,
                                     CheckReservedLock,
                                     FileControl,
                                     SectorSize,
                                     DeviceCharacteristics,
                                     ShmMap,
                                     ShmLock,
                                     ShmBarrier,
                                     ShmUnmap,
                                     nullptr,
                                     nullptr};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  CrashFile* file = Self(f);
  file->path = nullptr;
  file->base.pMethods = nullptr;
  std::memset(file->real(), 0, real_vfs->szOsFile);
  int rc = real_vfs->xOpen(real_vfs, name, file->real(), flags, out_flags);
  if (rc != SQLITE_OK) return rc;
  if (name) {
    file->path = new std::string(name);
    // What was on disk before this process opened it is durable.
    std::error_code ec;
    if (!fs::exists(*file->path + ".synced", ec) && fs::file_size(*file->path, ec) > 0 && !ec)
      KeepImage(*file->path);
  }
  file->base.pMethods = &kMethods;
  return SQLITE_OK;
}

int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  std::error_code ec;
  fs::remove(std::string(name) + ".synced", ec);
  return real_vfs->xDelete(real_vfs, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return real_vfs->xAccess(real_vfs, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return real_vfs->xFullPathname(real_vfs, name, n, out);
}
int Randomness(sqlite3_vfs*, int n, char* out) { return real_vfs->xRandomness(real_vfs, n, out); }
int Sleep(sqlite3_vfs*, int us) { return real_vfs->xSleep(real_vfs, us); }
int CurrentTime(sqlite3_vfs*, double* out) { return real_vfs->xCurrentTime(real_vfs, out); }
int GetLastError(sqlite3_vfs*, int n, char* out) {
  return real_vfs->xGetLastError(real_vfs, n, out);
}
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

}  // namespace

void InstallCrashVfs() {
  static sqlite3_vfs vfs;
  real_vfs = sqlite3_vfs_find(nullptr);
  vfs = {};
  vfs.iVersion = 2;
  vfs.szOsFile = static_cast<int>(sizeof(CrashFile)) + real_vfs->szOsFile;
  vfs.mxPathname = real_vfs->mxPathname;
  vfs.zName = "cairn-crash";
  vfs.xOpen = Open;
  vfs.xDelete = Delete;
  vfs.xAccess = Access;
  vfs.xFullPathname = FullPathname;
  vfs.xRandomness = Randomness;
  vfs.xSleep = Sleep;
  vfs.xCurrentTime = CurrentTime;
  vfs.xGetLastError = GetLastError;
  vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  sqlite3_vfs_register(&vfs, /*makeDflt=*/1);
}

void RestoreSyncedFiles(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  for (const fs::path& p : files) {
    const std::string name = p.string();
    const bool sqlite_file = p.extension() == ".db" || name.ends_with("-wal") ||
                             name.ends_with("-journal") || name.ends_with("-shm");
    if (!sqlite_file) continue;
    if (name.ends_with("-shm") || !fs::exists(name + ".synced")) {
      fs::remove(p);
      continue;
    }
    std::ofstream(name, std::ios::binary | std::ios::trunc) << Slurp(name + ".synced");
  }
}

}  // namespace cairn::testing
