#include "engine/operations/saved_plan.h"

#include <filesystem>
#include <set>

#include "base/digest.h"
#include "base/env.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;

std::string BackendText(const BackendConfig& b) {
  std::string out = b.type;
  if (b.type == "postgres") {
    out += " (name " + (b.stack_name.empty() ? std::string("unset") : b.stack_name) + ", URL in $" +
           b.url_env + ")";
  } else {
    out += " (" + (b.path.empty() ? std::string(".cairn/state.db") : b.path) + ")";
  }
  return out;
}

bool SameBackend(const BackendConfig& a, const BackendConfig& b) {
  return a.type == b.type && a.path == b.path && a.url_env == b.url_env &&
         a.stack_name == b.stack_name;
}

// "a.yaml changed, b.yaml added, c.yaml removed", at most five names.
std::string DigestDifferences(const std::map<std::string, std::string>& planned,
                              const std::map<std::string, std::string>& found) {
  std::vector<std::string> what;
  for (const auto& [file, digest] : planned) {
    auto it = found.find(file);
    if (it == found.end()) {
      what.push_back(file + " removed");
    } else if (it->second != digest) {
      what.push_back(file + " changed");
    }
  }
  for (const auto& [file, digest] : found) {
    if (!planned.count(file)) what.push_back(file + " added");
  }
  std::string out;
  for (size_t i = 0; i < what.size() && i < 5; ++i) out += (i ? ", " : "") + what[i];
  if (what.size() > 5) out += " and " + std::to_string(what.size() - 5) + " more";
  return out;
}

// One directory tried for a saved plan: loaded, and why it is not the
// plan's stack ("" when it is; "does not load" when it does not).
struct Candidate {
  LoadResult load;
  std::string mismatch;
  std::string ephemeral_missing;  // why it does not load, when that is all
};

Candidate TryDirectory(const Plan& plan, const std::string& dir, LoadOptions options,
                       const Env& env) {
  options.paths = {dir};
  Candidate c;
  c.load = LoadStack(options);
  if (!c.load.ok()) {
    // The plan's stack, but an ephemeral variable, which no plan keeps,
    // was not given again.
    for (const Diagnostic& d : c.load.diagnostics) {
      for (const std::string& name : plan.ephemeral_variables) {
        if (d.code == "missing_variable" && d.summary == "variable \"" + name + "\" has no value") {
          c.ephemeral_missing = "the plan was made with ephemeral variable \"" + name +
                                "\", whose value no plan keeps: give it again (CAIRN_VAR_" + name +
                                " or --var " + name + "=VALUE)";
        }
      }
    }
    c.mismatch = "its manifests do not load (see 'cairn validate " + dir + "')";
    return c;
  }
  c.mismatch = SavedPlanMismatch(plan, c.load.config, env);
  return c;
}

}  // namespace

Result<std::map<std::string, std::string>> ManifestDigests(const StackConfig& config,
                                                           const Env& env) {
  std::set<std::string> files(config.files.begin(), config.files.end());
  auto add = [&](const SourceLocation& at) {
    if (!at.file.empty()) files.insert(at.file);
  };
  for (const auto& r : config.resources) add(r.location);
  for (const auto& o : config.outputs) add(o.location);
  for (const auto& d : config.data) add(d.location);
  for (const auto& m : config.moved) add(m.location);
  const fs::path root = env.Canonical(config.root.empty() ? "." : config.root);
  std::map<std::string, std::string> out;
  for (const std::string& file : files) {
    auto text = env.ReadFile(file, kMaxManifestFileBytes);
    if (!text.ok()) return text.status();
    std::string relative = fs::path(env.Canonical(file)).lexically_relative(root).string();
    out[relative.empty() ? file : relative] = "sha256:" + Sha256Hex(*text);
  }
  return out;
}

Status CheckPlanCanBeSaved(const std::vector<JournalEntry>& pending) {
  if (pending.empty()) return Status::Ok();
  return Status::FailedPrecondition(
      "not saving the plan: " + std::to_string(pending.size()) +
      " operation(s) of an interrupted apply are unfinished, and 'cairn apply' completes them "
      "before anything else, after which this plan would be of a state that no longer is. Run "
      "'cairn apply' first (it finishes them, then shows its own plan), then plan again");
}

Status PrepareSavedPlan(Plan& plan, const StackConfig& config, bool recursive,
                        const std::vector<JournalEntry>& pending, const Env& env) {
  CAIRN_RETURN_IF_ERROR(CheckPlanCanBeSaved(pending));
  auto digests = ManifestDigests(config, env);
  if (!digests.ok()) {
    return Status(digests.status().code(),
                  "cannot read the manifests to save the plan: " + digests.status().message());
  }
  plan.saved = true;
  // Ephemeral variables by name only: apply is given them again.
  plan.variables = config.variables;
  plan.sensitive_variables.clear();
  for (const std::string& name : config.ephemeral_variables) plan.variables.erase(name);
  for (const std::string& name : config.sensitive_variables) {
    if (plan.variables.count(name)) plan.sensitive_variables.push_back(name);
  }
  plan.ephemeral_variables = config.ephemeral_variables;
  plan.backend = config.backend;
  plan.workspace = config.workspace;
  plan.manifests = std::move(*digests);
  plan.recursive = recursive;
  return Status::Ok();
}

Status FillWriteOnly(Plan& plan, const StackConfig& config) {
  for (PlannedChange& c : plan.changes) {
    if (c.write_only.empty()) continue;
    const ResourceConfig* rc = config.Find(c.parsed_address);
    for (auto& [field, value] : c.write_only.items()) {
      if (!rc || !rc->spec.is_object() || !rc->spec.contains(field)) {
        return Status::FailedPrecondition(c.address + ": the plan sends write-only field " + field +
                                          ", which the manifests no longer set");
      }
      value = rc->spec.at(field);
    }
  }
  return Status::Ok();
}

std::string SavedPlanMismatch(const Plan& plan, const StackConfig& config, const Env& env) {
  if (!SameBackend(plan.backend, config.backend)) {
    return "its state is another one: its backend is " + BackendText(config.backend) +
           ", the plan's " + BackendText(plan.backend);
  }
  auto found = ManifestDigests(config, env);
  if (!found.ok()) return "its manifests cannot be read: " + found.status().message();
  if (*found != plan.manifests) {
    return "its manifests differ from those planned: " + DigestDifferences(plan.manifests, *found);
  }
  return "";
}

SavedPlanStack LoadSavedPlanStack(const Plan& plan, const std::optional<std::string>& dir,
                                  LoadOptions options) {
  const Env& env = options.env ? *options.env : PosixEnv();
  options.plan_vars = plan.variables;
  options.recursive = plan.recursive;
  SavedPlanStack out;
  const std::string redo = "; plan again there ('cairn plan --out')";
  if (dir) {
    Candidate c = TryDirectory(plan, *dir, options, env);
    out.dir = *dir;
    out.load = std::move(c.load);
    if (!c.ephemeral_missing.empty()) {
      out.error = c.ephemeral_missing;
    } else if (!out.load.ok()) {
      out.error = *dir + " does not load";
    } else if (!c.mismatch.empty()) {
      out.error = *dir + " is not the stack the plan was made for: " + c.mismatch + redo;
    }
    return out;
  }
  // The current directory first (a checkout moved, as CI jobs do), then the
  // directory the plan was made in (the plan applied from elsewhere).
  std::vector<std::string> why;
  const bool here_is_origin =
      !plan.stack.empty() && env.Canonical(".") == env.Canonical(plan.stack);
  if (!env.ListFiles(".", plan.recursive, {".yaml", ".yml"}).empty()) {
    Candidate c = TryDirectory(plan, ".", options, env);
    if (!c.ephemeral_missing.empty()) {
      out.error = c.ephemeral_missing;
      return out;
    }
    if (c.mismatch.empty()) {
      out.dir = ".";
      out.load = std::move(c.load);
      return out;
    }
    why.push_back("the current directory" +
                  (here_is_origin ? std::string(" (where it was made)") : std::string()) + ": " +
                  c.mismatch);
  } else {
    why.push_back("the current directory holds no manifests");
  }
  if (!plan.stack.empty() && !here_is_origin) {
    if (env.IsDirectory(plan.stack)) {
      Candidate c = TryDirectory(plan, plan.stack, options, env);
      if (!c.ephemeral_missing.empty()) {
        out.error = c.ephemeral_missing;
        return out;
      }
      if (c.mismatch.empty()) {
        out.dir = plan.stack;
        out.load = std::move(c.load);
        return out;
      }
      why.push_back(plan.stack + ", where it was made: " + c.mismatch);
    } else {
      why.push_back(plan.stack + ", where it was made, is gone");
    }
  }
  out.error = "no directory holds the stack the plan was made for (";
  for (size_t i = 0; i < why.size(); ++i) out.error += (i ? "; " : "") + why[i];
  out.error += "): give its directory, 'cairn apply PLAN DIR'";
  return out;
}

}  // namespace cairn
