// cairn test: a stack's test files run against a throwaway control plane
// (engine/operations/stack_tests.h, docs/testing-stacks.md).
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "base/env.h"
#include "base/redact.h"
#include "cli/engine_session.h"
#include "engine/apply/apply.h"
#include "engine/expr/value.h"
#include "engine/manifest/loader.h"
#include "engine/operations/console.h"
#include "engine/operations/operations.h"
#include "engine/operations/stack_tests.h"
#include "engine/report/junit.h"
#include "server/server.h"
#include "server/token.h"

namespace cairn::cli {
namespace {

namespace fs = std::filesystem;

struct TestFlags {
  std::string dir = ".";
  std::string filter;
  std::string junit;
  bool json = false;
  bool endpoint_from_env = false;
};

struct RunOutcome {
  std::string file, name;
  SourceLocation location;
  bool passed = false;
  bool skipped = false;
  std::vector<std::string> reasons;
};

// The API the tests run against: a `cairn serve` of their own, in this
// process, on a free loopback port, with a fresh data directory and no
// provisioning delay, gone when the tests end; or, with
// --endpoint-from-env, CAIRN_ENDPOINT.
class TestApi {
 public:
  bool Start(bool from_env) {
    if (from_env) {
      const char* e = std::getenv("CAIRN_ENDPOINT");
      const char* t = std::getenv("CAIRN_TOKEN");
      if (!e || !*e || !t || !*t) {
        std::cerr << "error: --endpoint-from-env needs CAIRN_ENDPOINT and CAIRN_TOKEN\n";
        return false;
      }
      endpoint_ = e;
      token_ = t;
      std::cerr << "warning: testing against " << Redact(endpoint_)
                << " (CAIRN_ENDPOINT), not a throwaway server: the tests create and destroy "
                   "real resources there\n";
      return true;
    }
    char dir[] = "/tmp/cairn-test-XXXXXX";
    if (!mkdtemp(dir)) {
      std::cerr << "error: cannot create a temporary directory for the test server\n";
      return false;
    }
    dir_ = dir;
    token_ = server::GenerateToken();
    RegisterSecret(token_);
    server::ServerOptions opt;
    opt.host = "127.0.0.1";
    opt.port = 0;
    opt.data_dir = dir_ + "/serve";
    opt.provision_delay = std::chrono::milliseconds(0);
    opt.tokens = {{"test", server::Sha256Hex(token_)}};
    server_ = std::make_unique<server::Server>(opt);
    if (Status st = server_->Start(); !st.ok()) {
      std::cerr << "error: cannot start the test server: " << st.message() << "\n";
      return false;
    }
    endpoint_ = "http://" + server_->BoundAddress();
    return true;
  }
  ~TestApi() {
    if (server_) {
      server_->Shutdown();
      server_->Wait();
    }
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  const std::string& endpoint() const { return endpoint_; }
  const std::string& token() const { return token_; }
  // A fresh directory for one test file's state.
  std::string StateDir(size_t file) {
    if (dir_.empty()) {
      char dir[] = "/tmp/cairn-test-XXXXXX";
      if (!mkdtemp(dir)) return "";
      dir_ = dir;
    }
    std::string d = dir_ + "/state-" + std::to_string(file);
    std::error_code ec;
    fs::create_directories(d, ec);
    return d;
  }

 private:
  std::string dir_, endpoint_, token_;
  std::unique_ptr<server::Server> server_;
};

std::unique_ptr<EngineSession> OpenFor(const TestFlags& f, const GlobalOptions& global,
                                       LoadResult& load, const std::string& state_dir,
                                       const TestApi& api) {
  SessionOptions so;
  so.preloaded = &load;
  so.state_dir = state_dir;
  so.endpoint = api.endpoint();
  so.token = api.token();
  StackFlags stack;
  stack.paths = {f.dir};
  return EngineSession::Open(stack, global, so);
}

LoadResult LoadFor(const TestFlags& f, const TestRun& run) {
  LoadOptions lo;
  lo.paths = {f.dir};
  lo.plan_vars = run.variables;
  return LoadStack(lo);
}

void Errors(const std::vector<Diagnostic>& diags, std::vector<std::string>& reasons) {
  for (const Diagnostic& d : diags) {
    if (d.is_error()) {
      reasons.push_back((d.location.file.empty()
                             ? ""
                             : d.location.file + ":" + std::to_string(d.location.line) + ": ") +
                        d.summary + " [" + d.code + "]");
    }
  }
}

RunOutcome RunOne(const TestFlags& f, const GlobalOptions& global, const TestFile& file,
                  const TestRun& run, const std::string& state_dir, const TestApi& api) {
  RunOutcome o{"", run.name, run.location};
  std::vector<Diagnostic> seen;
  LoadResult load = LoadFor(f, run);
  seen = load.diagnostics;
  std::unique_ptr<EngineSession> session;
  if (load.ok()) {
    load.diagnostics.clear();  // kept in `seen`; not printed again
    session = OpenFor(f, global, load, state_dir, api);
    if (!session) {
      o.reasons.push_back("the stack could not be opened (above)");
      return o;
    }
    auto state = session->LoadState();
    if (!state) {
      o.reasons.push_back("the state could not be read (above)");
      return o;
    }
    PlanOptions po;
    po.data = file.overrides;  // given, not read
    for (const auto& [name, at] : file.override_locations) {
      const std::string target = name;  // a structured binding cannot be captured (clang)
      const auto& data = session->config().data;
      if (std::none_of(data.begin(), data.end(),
                       [&](const DataConfig& d) { return d.Address() == target; })) {
        o.reasons.push_back(at.file + ":" + std::to_string(at.line) + ": the override's target " +
                            target + " is no data source of the stack");
      }
    }
    if (!o.reasons.empty()) return o;
    PlanResult pr =
        PlanStack(session->config(), *state, &session->provider(), session->kinds(), po);
    seen.insert(seen.end(), pr.diagnostics.begin(), pr.diagnostics.end());
    if (pr.ok() && run.apply) {
      ApplyOptions ao = session->apply_options(0);
      ApplyResult ar = Apply(pr.plan, session->provider(), session->store(), ao);
      seen.insert(seen.end(), ar.diagnostics.begin(), ar.diagnostics.end());
    }
  }
  if (!run.expect_failures.empty()) {
    ExpectedFailures m = MatchExpectedFailures(run.expect_failures, seen);
    for (const std::string& e : m.missing)
      o.reasons.push_back("expected " + e + " to fail; it did not");
    for (const std::string& u : m.unexpected) o.reasons.push_back("unexpected error: " + u);
    o.passed = m.ok();
    return o;
  }
  Errors(seen, o.reasons);
  if (!o.reasons.empty()) return o;
  auto state = session->LoadState();
  if (!state) {
    o.reasons.push_back("the state could not be read (above)");
    return o;
  }
  StackConsole console(session->config(), *state, session->load().registry.get(), {});
  for (const TestAssert& a : run.asserts) {
    const std::string where = a.location.file + ":" + std::to_string(a.location.line) + ": ";
    ConsoleResult r = console.Eval(*ConditionExpression(a.condition));
    if (!r.ok()) {
      o.reasons.push_back(where +
                          "the condition cannot be evaluated: " + r.diagnostics.front().summary);
    } else if (!r.value.WhollyKnown()) {
      o.reasons.push_back(where + "the condition reads values not known yet" +
                          (run.apply ? "" : " (a plan run knows only what the state holds)"));
    } else if (!r.value.is_bool()) {
      o.reasons.push_back(where + "a condition must be true or false");
    } else if (!r.value.as_bool()) {
      o.reasons.push_back(where + a.error_message);
    }
  }
  o.passed = o.reasons.empty();
  return o;
}

// Destroys what a file's runs left in its state, in reverse dependency
// order; "" when nothing is left, else what is.
std::string DestroyLeftovers(const TestFlags& f, const GlobalOptions& global, const TestFile& file,
                             const std::string& state_dir, const TestApi& api) {
  TestRun last;
  if (!file.runs.empty()) last = file.runs.back();
  LoadResult load = LoadFor(f, last);
  if (!load.ok()) load = LoadFor(f, TestRun{});
  load.diagnostics.clear();
  auto session = OpenFor(f, global, load, state_dir, api);
  if (!session) return "the stack could not be opened to destroy what the tests made";
  auto state = session->LoadState();
  if (!state) return "the state could not be read";
  if (state->resources.empty()) return "";
  PlanOptions po;
  po.destroy = true;
  PlanResult pr = PlanStack(session->config(), *state, &session->provider(), session->kinds(), po);
  if (pr.ok()) {
    ApplyOptions ao = session->apply_options(0);
    (void)Apply(pr.plan, session->provider(), session->store(), ao);
  }
  auto after = session->LoadState();
  if (!after || after->resources.empty()) return "";
  std::string left;
  for (const auto& [addr, rs] : after->resources) left += (left.empty() ? "" : ", ") + addr;
  return "could not destroy everything it made; left: " + left;
}

int RunTests(const TestFlags& f, const GlobalOptions& global) {
  StackTests tests = LoadStackTests(f.dir, PosixEnv());
  if (!tests.diagnostics.empty()) {
    std::cerr << RenderDiagnostics(tests.diagnostics, tests.sources,
                                   {.color = UseColor(global, STDERR_FILENO)});
  }
  if (!tests.ok()) {
    std::cerr << "error: the test files above do not load; no test was run\n";
    return 1;
  }
  if (tests.files.empty()) {
    std::cerr << "error: no test files (*.test.yaml) in " << f.dir << " or " << f.dir << "/tests\n";
    return 1;
  }
  TestApi api;
  if (!api.Start(f.endpoint_from_env)) return 1;
  std::vector<RunOutcome> outcomes;
  std::vector<JUnitSuite> suites;
  bool all = true;
  for (size_t i = 0; i < tests.files.size(); ++i) {
    const TestFile& file = tests.files[i];
    const std::string state_dir = api.StateDir(i);
    JUnitSuite suite{file.path, {}};
    bool failed_before = false;
    for (const TestRun& run : file.runs) {
      if (!f.filter.empty() && run.name != f.filter) continue;
      RunOutcome o;
      if (failed_before) {
        o = RunOutcome{file.path, run.name, run.location,
                       false,     true,     {"skipped: an earlier run of this file failed"}};
      } else {
        o = RunOne(f, global, file, run, state_dir, api);
        o.file = file.path;
      }
      failed_before = failed_before || !o.passed;
      all = all && (o.passed || o.skipped);
      if (!f.json) {
        std::cout << (o.passed    ? "  pass  "
                      : o.skipped ? "  skip  "
                                  : "  FAIL  ")
                  << file.path << ": " << run.name << "\n";
        for (const std::string& r : o.reasons) std::cout << "        " << Redact(r) << "\n";
      }
      std::string text;
      for (const std::string& r : o.reasons) text += r + "\n";
      suite.cases.push_back({run.name, file.path, 0, !o.passed && !o.skipped, o.skipped,
                             o.reasons.empty() ? "" : o.reasons.front(), text});
      outcomes.push_back(std::move(o));
    }
    // Whatever the runs made goes, even after a failure.
    if (std::string left = DestroyLeftovers(f, global, file, state_dir, api); !left.empty()) {
      all = false;
      std::cout << "  FAIL  " << file.path << ": " << left << "\n";
      suite.cases.push_back({"destroy", file.path, 0, true, false, left, left});
    }
    suites.push_back(std::move(suite));
  }
  size_t passed = 0, failed = 0, skipped = 0;
  Value json = Value::array();
  for (const RunOutcome& o : outcomes) {
    passed += o.passed;
    skipped += o.skipped;
    failed += !o.passed && !o.skipped;
    json.push_back({{"file", o.file},
                    {"run", o.name},
                    {"status", o.passed    ? "pass"
                               : o.skipped ? "skip"
                                           : "fail"},
                    {"reasons", o.reasons}});
  }
  if (!f.junit.empty()) {
    if (Status st =
            PosixEnv().WriteFileAtomically(f.junit, Redact(RenderJUnitXml(suites)), {.mode = 0644});
        !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return 1;
    }
  }
  if (f.json) {
    std::cout << Redact(Value({{"runs", json},
                               {"passed", passed},
                               {"failed", failed},
                               {"skipped", skipped},
                               {"ok", all}})
                            .dump(2))
              << "\n";
  } else {
    std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped.\n";
  }
  return all ? 0 : 1;
}

std::function<int()> SetupTest(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<TestFlags>();
  sub.add_option("DIR", f->dir, "The stack directory (default: .)");
  sub.add_option("--filter", f->filter, "Run only the runs of this name")->type_name("NAME");
  sub.add_option("--junit-xml", f->junit,
                 "Also write the results as JUnit XML to FILE (a test suite per file, a test "
                 "case per run)")
      ->type_name("FILE");
  sub.add_flag("--json", f->json, "Print the results as JSON");
  sub.add_flag("--endpoint-from-env", f->endpoint_from_env,
               "Run against CAIRN_ENDPOINT with CAIRN_TOKEN instead of a throwaway server "
               "(real resources are created and destroyed there)");
  sub.footer(
      "Test files are *.test.yaml in DIR and DIR/tests, each a scenario of `kind: run`\n"
      "documents run in order on a fresh state of its own; at the end of a file,\n"
      "everything it applied is destroyed, even after a failure. By default the tests\n"
      "run against a throwaway `cairn serve` started for them (no provisioning delay),\n"
      "never against a real endpoint by accident. Exit 0 when every run passes.\n\n"
      "Examples:\n"
      "  cairn test examples/testing\n"
      "  cairn test . --filter prod_has_three_nodes --junit-xml tests.xml");
  return [f, &global] { return RunTests(*f, global); };
}

}  // namespace

CAIRN_COMMAND("test", "Run the stack's tests against a throwaway control plane", 57, SetupTest);

}  // namespace cairn::cli
