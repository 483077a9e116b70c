// cairn test: a stack's test files run against a throwaway control plane
// (engine/operations/stack_tests.h, docs/testing-stacks.md).
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "base/env.h"
#include "base/mutex.h"
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
  int parallelism = 1;
};

struct RunOutcome {
  std::string file, name;
  SourceLocation location;
  bool passed = false;
  bool skipped = false;
  std::vector<std::string> reasons;
};

// An API the runs of a file go to.
struct TestApi {
  std::string endpoint, token;
};

// A `cairn serve` of a test file's own, in this process, on a free loopback
// port, with a fresh data directory and the file's provisioning delay (none
// by default); stopped when the file is done.
class ThrowawayServer {
 public:
  Status Start(const std::string& data_dir, std::chrono::milliseconds provision_delay) {
    api_.token = server::GenerateToken();
    RegisterSecret(api_.token);
    server::ServerOptions opt;
    opt.host = "127.0.0.1";
    opt.port = 0;
    opt.data_dir = data_dir;
    opt.provision_delay = provision_delay;
    opt.tokens = {{"test", server::Sha256Hex(api_.token)}};
    server_ = std::make_unique<server::Server>(opt);
    if (Status st = server_->Start(); !st.ok()) {
      server_.reset();
      return st;
    }
    api_.endpoint = "http://" + server_->BoundAddress();
    return Status::Ok();
  }
  ~ThrowawayServer() {
    if (server_) {
      server_->Shutdown();
      server_->Wait();
    }
  }
  const TestApi& api() const { return api_; }

 private:
  TestApi api_;
  std::unique_ptr<server::Server> server_;
};

// The temporary directory of one `cairn test`: each file's state and its
// server's data; removed at the end.
class ScratchDir {
 public:
  bool Make() {
    char dir[] = "/tmp/cairn-test-XXXXXX";
    if (!mkdtemp(dir)) return false;
    path_ = dir;
    return true;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  // A fresh directory for file `i`'s `what` ("state", "serve").
  std::string For(const std::string& what, size_t i) const {
    std::string d = path_ + "/" + what + "-" + std::to_string(i);
    std::error_code ec;
    fs::create_directories(d, ec);
    return d;
  }

 private:
  std::string path_;
};

// --json: one JSON object a line, as things happen, whichever file's thread
// reports them.
class Events {
 public:
  explicit Events(bool on) : on_(on) {}
  void Emit(Value event) {
    if (!on_) return;
    const std::string line = Redact(event.dump()) + "\n";
    MutexLock lock(mu_);
    std::cout << line << std::flush;
  }

 private:
  const bool on_;
  Mutex mu_;
};

const char* StatusText(const RunOutcome& o) {
  return o.passed ? "pass" : o.skipped ? "skip" : "fail";
}

std::unique_ptr<EngineSession> OpenFor(const TestFlags& f, const GlobalOptions& global,
                                       LoadResult& load, const std::string& state_dir,
                                       const TestApi& api) {
  SessionOptions so;
  so.preloaded = &load;
  so.state_dir = state_dir;
  so.endpoint = api.endpoint;
  so.token = api.token;
  StackFlags stack;
  stack.paths = {f.dir};
  stack.workspace = "default";  // as LoadFor loaded it: runs use a state of their own
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
  std::vector<std::string> why;
  Errors(pr.diagnostics, why);
  if (pr.ok()) {
    ApplyOptions ao = session->apply_options(0);
    Errors(Apply(pr.plan, session->provider(), session->store(), ao).diagnostics, why);
  }
  auto after = session->LoadState();
  if (!after || after->resources.empty()) return "";
  std::string left;
  for (const auto& [addr, rs] : after->resources) left += (left.empty() ? "" : ", ") + addr;
  return "could not destroy everything it made; left: " + left +
         (why.empty() ? "" : " (" + why.front() + ")");
}

// What a file's runs came to.
struct FileReport {
  std::vector<RunOutcome> outcomes;
  JUnitSuite suite;
  std::string text;  // its lines of the text report
  bool ok = true;
};

FileReport RunFile(const TestFlags& f, const GlobalOptions& global, const TestFile& file,
                   size_t index, const ScratchDir& scratch, const std::optional<TestApi>& env_api,
                   Events& events) {
  FileReport report;
  report.suite = JUnitSuite{file.path, {}};
  events.Emit({{"type", "file_start"}, {"file", file.path}});
  auto fail_file = [&](const std::string& why) {
    report.ok = false;
    report.text += "  FAIL  " + file.path + ": " + why + "\n";
    report.suite.cases.push_back({"setup", file.path, 0, true, false, why, why});
    events.Emit({{"type", "file"}, {"file", file.path}, {"status", "fail"}, {"reasons", {why}}});
  };
  ThrowawayServer server;
  TestApi api;
  if (env_api) {
    api = *env_api;
  } else if (Status st = server.Start(scratch.For("serve", index), file.provision_delay);
             !st.ok()) {
    fail_file("cannot start the test server: " + st.message());
    return report;
  } else {
    api = server.api();
  }
  const std::string state_dir = scratch.For("state", index);
  bool failed_before = false;
  for (const TestRun& run : file.runs) {
    if (!f.filter.empty() && run.name != f.filter) continue;
    RunOutcome o;
    if (failed_before) {
      o = RunOutcome{file.path, run.name, run.location,
                     false,     true,     {"skipped: an earlier run of this file failed"}};
    } else {
      events.Emit({{"type", "run_start"}, {"file", file.path}, {"run", run.name}});
      o = RunOne(f, global, file, run, state_dir, api);
      o.file = file.path;
    }
    failed_before = failed_before || !o.passed;
    report.ok = report.ok && (o.passed || o.skipped);
    report.text += std::string("  ") +
                   (o.passed    ? "pass"
                    : o.skipped ? "skip"
                                : "FAIL") +
                   "  " + file.path + ": " + run.name + "\n";
    std::string all;
    for (const std::string& r : o.reasons) {
      report.text += "        " + r + "\n";
      all += r + "\n";
    }
    events.Emit({{"type", "run"},
                 {"file", file.path},
                 {"run", run.name},
                 {"line", run.location.line},
                 {"status", StatusText(o)},
                 {"reasons", o.reasons}});
    report.suite.cases.push_back({run.name, file.path, 0, !o.passed && !o.skipped, o.skipped,
                                  o.reasons.empty() ? "" : o.reasons.front(), all});
    report.outcomes.push_back(std::move(o));
  }
  // Whatever the runs made goes, even after a failure.
  const std::string left = DestroyLeftovers(f, global, file, state_dir, api);
  if (!left.empty()) {
    report.ok = false;
    report.text += "  FAIL  " + file.path + ": " + left + "\n";
    report.suite.cases.push_back({"destroy", file.path, 0, true, false, left, left});
  }
  Value done = {{"type", "file"}, {"file", file.path}, {"status", report.ok ? "pass" : "fail"}};
  if (!left.empty()) done["destroy"] = left;
  events.Emit(std::move(done));
  return report;
}

int RunTests(const TestFlags& f, const GlobalOptions& global) {
  if (f.parallelism < 1) {
    std::cerr << "error: --parallelism must be at least 1\n";
    return 1;
  }
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
  std::optional<TestApi> env_api;
  if (f.endpoint_from_env) {
    const char* e = std::getenv("CAIRN_ENDPOINT");
    const char* t = std::getenv("CAIRN_TOKEN");
    if (!e || !*e || !t || !*t) {
      std::cerr << "error: --endpoint-from-env needs CAIRN_ENDPOINT and CAIRN_TOKEN\n";
      return 1;
    }
    env_api = TestApi{e, t};
    std::cerr << "warning: testing against " << Redact(env_api->endpoint)
              << " (CAIRN_ENDPOINT), not a throwaway server: the tests create and destroy "
                 "real resources there\n";
    for (const TestFile& file : tests.files) {
      if (file.provision_delay.count() > 0) {
        std::cerr << "note: " << file.path
                  << ": provision_delay applies to the throwaway server only\n";
      }
    }
  }
  ScratchDir scratch;
  if (!scratch.Make()) {
    std::cerr << "error: cannot create a temporary directory for the tests\n";
    return 1;
  }
  Events events(f.json);
  events.Emit({{"type", "start"},
               {"files", tests.files.size()},
               {"parallelism", f.parallelism},
               {"endpoint", env_api ? env_api->endpoint : std::string("throwaway")}});
  // Files run on up to --parallelism threads, each against a server (and
  // a state) of its own; a file's text lines are printed together when it
  // is done, so files never interleave.
  std::vector<FileReport> reports(tests.files.size());
  std::atomic<size_t> next{0};
  Mutex print_mu;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < tests.files.size();) {
      reports[i] = RunFile(f, global, tests.files[i], i, scratch, env_api, events);
      if (!f.json) {
        const std::string text = Redact(reports[i].text);
        MutexLock lock(print_mu);
        std::cout << text << std::flush;
      }
    }
  };
  {
    const size_t threads = std::min<size_t>(f.parallelism, tests.files.size());
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
  }
  size_t passed = 0, failed = 0, skipped = 0;
  bool all = true;
  std::vector<JUnitSuite> suites;
  for (FileReport& r : reports) {
    all = all && r.ok;
    for (const RunOutcome& o : r.outcomes) {
      passed += o.passed;
      skipped += o.skipped;
      failed += !o.passed && !o.skipped;
    }
    suites.push_back(std::move(r.suite));
  }
  if (!f.junit.empty()) {
    if (Status st =
            PosixEnv().WriteFileAtomically(f.junit, Redact(RenderJUnitXml(suites)), {.mode = 0644});
        !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return 1;
    }
  }
  events.Emit({{"type", "summary"},
               {"passed", passed},
               {"failed", failed},
               {"skipped", skipped},
               {"ok", all}});
  if (!f.json) {
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
  sub.add_flag("--json", f->json,
               "Print events as JSON lines (start, file_start, run_start, run, file, summary) "
               "instead of text");
  sub.add_option("--parallelism", f->parallelism,
                 "Run up to N test files at once, each against a server of its own (default 1)")
      ->type_name("N");
  sub.add_flag("--endpoint-from-env", f->endpoint_from_env,
               "Run against CAIRN_ENDPOINT with CAIRN_TOKEN instead of a throwaway server "
               "(real resources are created and destroyed there)");
  sub.footer(
      "Test files are *.test.yaml in DIR and DIR/tests, each a scenario of `kind: run`\n"
      "documents run in order on a fresh state of its own; at the end of a file,\n"
      "everything it applied is destroyed, even after a failure. By default the tests\n"
      "run against a throwaway `cairn serve` started for each file (no provisioning\n"
      "delay unless the file's `kind: test` document sets provision_delay), never\n"
      "against a real endpoint by accident. Exit 0 when every run passes.\n\n"
      "Examples:\n"
      "  cairn test examples/testing\n"
      "  cairn test . --filter prod_has_three_nodes --junit-xml tests.xml\n"
      "  cairn test . --parallelism 4 --json > events.jsonl");
  return [f, &global] { return RunTests(*f, global); };
}

}  // namespace

CAIRN_COMMAND("test", "Run the stack's tests against a throwaway control plane", 58, SetupTest);

}  // namespace cairn::cli
