// Test support: a PostgreSQL database of its own for a test, on the server
// that tests/engine/state/pg_harness.sh started (CAIRN_TEST_PG_URL).
#pragma once

#include <string>

namespace cairn::testing {

// The URL of database `name` on the harness's server, created if it does
// not exist yet (the same name gives the same database: a server restarted
// on it finds its data). Fails the test when CAIRN_TEST_PG_URL is unset.
std::string TestDatabaseUrl(const std::string& name);

}  // namespace cairn::testing
