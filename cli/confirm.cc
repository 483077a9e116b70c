#include "cli/confirm.h"

#include <poll.h>
#include <unistd.h>

#include <iostream>

namespace cairn::cli {

bool Confirm(const std::string& question, std::stop_token stop) {
  if (isatty(STDIN_FILENO) != 1) {
    std::cerr << "error: refusing to make changes without confirmation: standard input is "
                 "not a terminal. Review the plan and pass --auto-approve.\n";
    return false;
  }
  std::cout << "\n" << question << "\n  Only 'yes' will be accepted: " << std::flush;
  // Polled rather than a blocking read, so that Ctrl-C (a stop request from
  // the InterruptWatcher) cancels the prompt at once.
  std::string answer;
  for (;;) {
    if (stop.stop_requested()) {
      std::cout << "\nCancelled: nothing was changed.\n";
      return false;
    }
    pollfd pfd{STDIN_FILENO, POLLIN, 0};
    if (poll(&pfd, 1, 200) <= 0) continue;
    char c;
    ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n <= 0 || c == '\n') break;
    answer += c;
  }
  if (answer != "yes") {
    std::cout << "Cancelled: nothing was changed.\n";
    return false;
  }
  return true;
}

}  // namespace cairn::cli
