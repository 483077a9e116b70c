// A SQLite VFS for machine-crash tests, after SQLite's own crash tests and
// LevelDB's fault-injecting Env: it passes everything to the default VFS
// and, each time SQLite syncs a file, keeps a copy of what the file then
// holds ("FILE.synced", written atomically). RestoreSyncedFiles() then makes
// a directory look as it would after a power loss: every file back to its
// last synced content, a file never synced gone (with the shared-memory
// index, which SQLite rebuilds). Used in a child process that is then
// killed: the kill stops the process, the restore drops the page cache.
#pragma once

#include <string>

namespace cairn::testing {

// Registers the VFS as the process's default (every sqlite3_open after it
// uses it). Call once, before opening anything, in the process to crash.
void InstallCrashVfs();

// In `dir`: each file with a ".synced" copy gets that content back; each
// SQLite file without one ("*.db", "*-wal", "*-journal", "*-shm") is
// removed.
void RestoreSyncedFiles(const std::string& dir);

}  // namespace cairn::testing
