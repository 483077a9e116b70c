// libFuzzer target: the manifest loader on arbitrary bytes. The input is one
// manifest file; a line "#--- vars" splits off a variable file given as
// --var-file text. Every loaded spec and output then goes through
// ResolveReferences. Nothing may crash, hang or leak; diagnostics are fine.
//
// Built only with clang and CAIRN_FUZZ=ON (tests/fuzz/CMakeLists.txt);
// tests/fuzz/run_fuzz.sh runs it for a bounded time from ctest. Every crash
// it finds is saved under tests/fuzz/regressions/ and replayed by that run.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "base/redact.h"
#include "base/schema/schema_registry.h"
#include "engine/manifest/expr.h"
#include "engine/manifest/loader.h"

namespace {

const std::shared_ptr<const cairn::SchemaRegistry>& Registry() {
  static auto reg = [] {
    auto r = cairn::SchemaRegistry::Load(CAIRN_SOURCE_SCHEMA_DIR);
    if (!r.ok()) abort();
    return *r;
  }();
  return reg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  std::string manifest = input, vars;
  if (size_t split = input.find("\n#--- vars\n"); split != std::string::npos) {
    manifest = input.substr(0, split);
    vars = input.substr(split + 11);
  }
  cairn::LoadOptions options;
  options.registry = Registry();
  options.getenv = [](const char* name) -> const char* {
    if (name[0] == 'N') return "3";
    if (name[0] == 'S') return "eu-central";
    return nullptr;
  };
  options.vars = {{"size", "10"}};
  std::string var_file;
  if (!vars.empty()) {
    var_file = "/tmp/cairn-fuzz-vars-" + std::to_string(getpid()) + ".yaml";
    std::ofstream(var_file, std::ios::binary) << vars;
    options.var_files = {var_file};
  }
  // A directory that does not exist, so file() reads nothing from the host.
  auto result =
      cairn::LoadStackFromText({{"/nonexistent-cairn-fuzz/stack.yaml", manifest}}, options);
  if (!var_file.empty()) std::remove(var_file.c_str());
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
