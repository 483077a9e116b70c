#include "cli/interrupt_watcher.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <iostream>

namespace cairn::cli {
namespace {

sigset_t InterruptSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

InterruptWatcher::InterruptWatcher() {
  sigset_t set = InterruptSignals();
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC);
  if (signal_fd_ < 0 || wake_fd_ < 0) {
    // Without them the signals keep their default action: Ctrl-C ends the
    // process, and the journal lets the next apply finish the job.
    std::cerr << "warning: cannot watch for Ctrl-C (" << std::strerror(errno)
              << "); an interrupt will stop at once\n";
    return;
  }
  // Blocked here, inherited by every thread started after: they stay pending
  // for the signalfd, and no thread is interrupted by them.
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  try {
    StartWatching();
  } catch (...) {  // no thread: leave the signals as they were
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    close(signal_fd_);
    close(wake_fd_);
    throw;
  }
}

void InterruptWatcher::StartWatching() {
  thread_ = std::jthread([this] {
    pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    for (;;) {
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents != 0) return;  // the command is over
      signalfd_siginfo info;
      if ((fds[0].revents & POLLIN) != 0 && read(signal_fd_, &info, sizeof info) == sizeof info) {
        std::cerr << "\nInterrupt received: no new operations will start; waiting for the ones "
                     "in flight to finish and be recorded.\n";
        source_.request_stop();
        return;
      }
    }
  });
}

InterruptWatcher::~InterruptWatcher() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
    thread_.join();
    sigset_t set = InterruptSignals();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  }
  if (signal_fd_ >= 0) close(signal_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

}  // namespace cairn::cli
