// DiscardAtExit: what a command holds when it returns, left to the end of
// the process instead of freed. A loaded stack, a state or a plan of
// 100,000 resources is millions of small blocks: freeing them one by one
// took up to a second of `cairn plan` (docs/benchmarks.md), and the
// process was about to end anyway, its memory going back to the system
// at once.
//
// Only for values whose destruction does nothing but free memory (no file,
// lock or connection to close), and only where the process ends next: a
// command run once, never `cairn watch` or `cairn test`, which plan again
// and again in one process. Built with a sanitizer (CAIRN_SANITIZED) the
// value is destroyed as usual, so that leak checks see all the rest.
#pragma once

#include <type_traits>
#include <utility>

namespace cairn {

template <class T>
void DiscardAtExit(T&& value) {
  using Held = std::remove_cvref_t<T>;
#if defined(CAIRN_SANITIZED)
  [[maybe_unused]] Held destroyed_now(std::forward<T>(value));
#else
  new Held(std::forward<T>(value));  // never deleted, on purpose
#endif
}

}  // namespace cairn
