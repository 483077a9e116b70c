#include "tests/support/pg_database.h"

#include <cstdlib>
#include <mutex>
#include <pqxx/pqxx>
#include <stdexcept>

namespace cairn::testing {

std::string TestDatabaseUrl(const std::string& name) {
  const char* base = std::getenv("CAIRN_TEST_PG_URL");
  if (base == nullptr || *base == '\0') {
    throw std::runtime_error(
        "CAIRN_TEST_PG_URL is not set: run these tests through tests/engine/state/pg_harness.sh");
  }
  std::string url = base;
  std::string target = url.substr(0, url.rfind('/') + 1) + name;
  static std::mutex mu;  // two fixtures of one test may ask at once
  std::lock_guard<std::mutex> lock(mu);
  pqxx::connection c(url);
  pqxx::nontransaction t(c);
  if (t.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", name).empty()) {
    try {
      t.exec("CREATE DATABASE " + t.quote_name(name));
    } catch (const pqxx::sql_error& e) {
      if (e.sqlstate() != "42P04") throw;  // duplicate_database: made meanwhile elsewhere
    }
  }
  return target;
}

}  // namespace cairn::testing
