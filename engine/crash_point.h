// Crash points: named places in the apply protocol where a test can make the
// process die with SIGKILL, to prove that the next run recovers with no
// duplicate and no orphan. Off unless the environment variable
// CAIRN_CRASH_AT=NAME:N is set, in which case the N-th time (1-based) the
// process reaches the crash point NAME, it kills itself. The variable is read
// once; a crash point costs one relaxed atomic load when off.
//
// Names used by engine/apply: apply.prepared, apply.journaled,
// apply.sent (the API answered, nothing recorded yet), apply.ready,
// apply.committed, recover.sent, recover.committed (the recovery points are
// reached by creates, updates and deletes alike).
#pragma once

namespace cairn {

void CrashPoint(const char* name);

}  // namespace cairn
