// Steps the ApiStore tests of both backends take alike (SQLite and
// PostgreSQL): a mutation submitted and awaited, and a walk of every page.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "server/api_store.h"

namespace cairn::server::testing {

// Submits `m` and waits for its completion.
inline Status RunMutation(ApiStore& store, ApiStore::Mutation m) {
  std::promise<Status> done;
  store.Submit(std::move(m), [&](const Status& st) { done.set_value(st); });
  return done.get_future().get();
}

// The ids of every page of the instances of project "p", `limit` a page,
// each page after the last one's seq.
inline std::vector<std::string> WalkInstances(ApiStore& store, int limit) {
  std::vector<std::string> ids;
  int64_t after = 0;
  for (;;) {
    auto page = store.List("p", "instance", after, limit);
    REQUIRE(page.ok());
    for (const Record& r : *page) {
      CHECK(r.seq > after);
      after = r.seq;
      ids.push_back(r.id);
    }
    if (static_cast<int>(page->size()) < limit) return ids;
  }
}

}  // namespace cairn::server::testing
