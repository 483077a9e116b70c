#include "engine/apply/apply_waits.h"

namespace cairn {

void WaitHandOff::Settle(size_t node, WaitResponse response) {
  --pending_;
  settled_.emplace_back(node, std::move(response));
}

std::pair<size_t, WaitResponse> WaitHandOff::TakeSettled() {
  std::pair<size_t, WaitResponse> first = std::move(settled_.front());
  settled_.pop_front();
  return first;
}

}  // namespace cairn
