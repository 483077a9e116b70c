// Confirm: the yes/no question a command asks before it changes anything
// (apply, destroy, refresh-only, force-unlock of a live holder's lock).
#pragma once

#include <stop_token>
#include <string>

namespace cairn::cli {

// Asks "Do you want to perform these actions?" on a TTY; refuses without one.
// A stop request (Ctrl-C) cancels the prompt.
bool Confirm(const std::string& question, std::stop_token stop);

}  // namespace cairn::cli
