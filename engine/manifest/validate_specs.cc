#include "engine/manifest/validate_specs.h"

#include <algorithm>
#include <thread>

#include "base/private_key.h"
#include "base/schema/schema_registry.h"
#include "engine/manifest/key_material.h"
#include "engine/manifest/locate.h"

namespace cairn {
namespace {

// Key material that arrived through a variable (files and manifests are
// checked as text when read).
void ScanValueForKeys(const Value& v, const std::string& file, const YamlNode& base,
                      const std::string& pointer, std::vector<Diagnostic>& out) {
  if (v.is_string()) {
    if (FindPrivateKey(v.get_ref<const std::string&>()).found()) {
      AddError(out, "private_key_material", "private key material in a value",
               Locate(file, base, pointer, false),
               "it came from a variable or a for_each value; only public keys belong in a "
               "stack, and the key is not shown");
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      ScanValueForKeys(v[i], file, base, pointer + "/" + std::to_string(i), out);
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      ScanValueForKeys(*it, file, base, pointer + "/" + PointerToken(it.key()), out);
  }
}

void ValidateOne(const ResourceConfig& rc, const SpecSource& src, const SchemaRegistry& registry,
                 std::vector<Diagnostic>& out) {
  const std::string file(src.file);
  auto locate = [&](const std::string& pointer, bool at_key) {
    if (pointer.empty() && src.spec == src.document) return src.document_at;
    if (pointer.empty()) return KeyLoc(file, src.document, "spec");
    return Locate(file, src.spec, pointer, at_key);
  };
  for (auto& d : registry.Validate(rc.kind, rc.spec, locate)) out.push_back(std::move(d));
  // A file refused for holding a key was reported once already.
  if (MayHoldKey(rc.spec) && !src.keyed_file) ScanValueForKeys(rc.spec, file, src.spec, "", out);
}

}  // namespace

std::vector<Diagnostic> ValidateSpecs(const std::vector<ResourceConfig>& resources,
                                      const std::vector<SpecSource>& sources,
                                      const SchemaRegistry& registry) {
  // Schema validation is independent per resource and read-only, so large
  // stacks validate on several threads.
  const size_t n = resources.size();
  size_t threads =
      n < 512 ? 1 : std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 8);
  std::vector<std::vector<Diagnostic>> found(threads);
  auto work = [&](size_t t) {
    for (size_t i = t; i < n; i += threads)
      ValidateOne(resources[i], sources[i], registry, found[t]);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
  std::vector<Diagnostic> out;
  for (auto& list : found) {
    for (auto& d : list) out.push_back(std::move(d));
  }
  return out;
}

}  // namespace cairn
