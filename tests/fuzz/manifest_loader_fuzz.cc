// libFuzzer target: the manifest loader on arbitrary bytes. The input is one
// manifest file; a line "#--- vars" splits off a variable file given as
// --var-file text, and each line "#--- file PATH" starts another file (a
// module's manifest, a file() target) at PATH under the stack directory.
// All of them live in a MemEnv: nothing is read from the host. Every loaded
// spec and output then goes through ResolveReferences. Nothing may crash,
// hang or leak; diagnostics are fine.
//
// Built only with clang and CAIRN_FUZZ=ON (tests/fuzz/CMakeLists.txt);
// tests/fuzz/run_fuzz.sh runs it for a bounded time from ctest. Every crash
// it finds is saved under tests/fuzz/regressions/ and replayed by that run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/env.h"
#include "base/redact.h"
#include "base/schema/schema_registry.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/loader.h"

namespace {

const std::shared_ptr<const cairn::SchemaRegistry>& Registry() {
  static auto reg = [] {
    auto r = cairn::SchemaRegistry::Embedded();
    if (!r.ok()) abort();
    return *r;
  }();
  return reg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = "/nonexistent-cairn-fuzz";
  std::string input(reinterpret_cast<const char*>(data), size);
  cairn::MemEnv env;
  std::string vars;
  if (size_t split = input.find("\n#--- vars\n"); split != std::string::npos) {
    vars = input.substr(split + 11);
    input.resize(split);
  }
  // "#--- file PATH" sections, last first, each cut off the end.
  for (size_t at; (at = input.rfind("\n#--- file ")) != std::string::npos;) {
    std::string section = input.substr(at + 11);
    input.resize(at);
    size_t eol = section.find('\n');
    std::string path = section.substr(0, eol);
    env.AddFile(dir + "/" + path, eol == std::string::npos ? "" : section.substr(eol + 1));
  }
  cairn::LoadOptions options;
  options.registry = Registry();
  options.env = &env;
  // The limit's own bound is tested elsewhere (tests/engine/manifest); a
  // stack just under the default (a million instances) takes minutes under
  // ASan, which the fuzzer would report as a hang.
  options.max_instances = 2000;
  options.getenv = [](const char* name) -> const char* {
    if (name[0] == 'N') return "3";
    if (name[0] == 'S') return "eu-central";
    return nullptr;
  };
  options.vars = {{"size", "10"}};
  if (!vars.empty()) {
    env.AddFile(dir + "/vars.yaml", vars);
    options.var_files = {dir + "/vars.yaml"};
  }
  auto result = cairn::LoadStackFromText({{dir + "/stack.yaml", input}}, options, dir);
  cairn::AttributeLookup lookup = [](const cairn::ResourceAddress& a,
                                     const std::string& attr) -> std::optional<cairn::Value> {
    if (attr == "id") return cairn::Value(a.ToString());
    if (attr == "ipv4") return cairn::UnknownValue();
    return std::nullopt;
  };
  for (const auto& r : result.config.resources) (void)cairn::ResolveReferences(r.spec, lookup);
  for (const auto& o : result.config.outputs) (void)cairn::ResolveReferences(o.value, lookup);
  cairn::SourceFiles& sources = result.sources;
  (void)cairn::RenderDiagnostics(result.diagnostics, sources);
  // Sensitive variables register their values with the redactor; forget
  // them so the registry does not grow over millions of inputs.
  cairn::ClearSecretsForTesting();
  return 0;
}
