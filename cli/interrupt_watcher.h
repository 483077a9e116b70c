// InterruptWatcher: Ctrl-C (and SIGTERM) as a stop request for the
// commands that change things (apply, destroy, refresh-only), which pass its
// token to the engine.
#pragma once

#include <stop_token>
#include <thread>

namespace cairn::cli {

// SIGINT/SIGTERM -> a stop request: no new operations start, running ones
// finish and are recorded. A dedicated thread reads the signals from a
// signalfd, so no handler runs at all; destruction wakes it through an
// eventfd, so a command ends as soon as its work does. One per process;
// destroyed at command end.
class InterruptWatcher {
 public:
  InterruptWatcher();
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;
  std::stop_token token() const { return source_.get_token(); }

 private:
  void StartWatching();  // the thread reading signal_fd_ until wake_fd_

  std::stop_source source_;
  int signal_fd_ = -1;
  int wake_fd_ = -1;
  std::jthread thread_;
};

}  // namespace cairn::cli
