// cairn show: the state as a readable document, or a saved plan as the plan
// text, so that a reviewer can read what an apply job will run.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "base/redact.h"
#include "cli/engine_session.h"
#include "cli/saved_plan_file.h"
#include "engine/address.h"
#include "engine/report/plan_report.h"

namespace cairn::cli {
namespace {

struct ShowFlags {
  StackFlags stack;
  bool json = false;
};

// A saved plan, as `cairn plan` printed it (or as `cairn plan --json`
// does: no variables, sensitive outputs masked).
int ShowPlan(const Plan& saved, const std::string& path, bool json, const GlobalOptions& global) {
  Plan shown = saved;
  // Masked wherever they appear, as `cairn plan` masks them.
  for (const std::string& secret : shown.sensitive_values) RegisterSecret(secret);
  PrepareForReading(shown);
  if (json) {
    std::cout << Redact(PlanToJson(shown).dump(2)) << "\n";
    return 0;
  }
  std::cout << "Saved plan " << path << ", made in " << shown.stack << " against state serial "
            << shown.serial << (shown.destroy ? " (a destroy)" : "") << ":\n\n"
            << RenderPlanText(shown, {.color = UseColor(global, STDOUT_FILENO)});
  return 0;
}

int ShowState(const ShowFlags& f, const GlobalOptions& global) {
  // The whole stack is loaded: its sensitive variables say what to mask.
  auto session = EngineSession::Open(f.stack, global, {.needs_api = false, .create_state = false});
  if (!session) return 1;
  if (!session->has_state()) {
    std::cerr << "note: the stack in " << session->stack_root()
              << " has no state yet (nothing was applied or imported)\n";
    if (f.json) std::cout << "{}\n";
    return 0;
  }
  auto state = session->LoadState();
  if (!state) return 1;
  const std::vector<std::string> secrets = session->config().SensitiveStrings();
  std::vector<const ResourceState*> sorted;
  for (const auto& [addr, rs] : state->resources) sorted.push_back(&rs);
  std::sort(sorted.begin(), sorted.end(), [](const ResourceState* a, const ResourceState* b) {
    return AddressTextLess(a->address, b->address);
  });
  auto output_value = [&](const std::string& name, const Value& v) {
    return state->sensitive_outputs.count(name) ? Value("(sensitive)") : MaskSensitive(v, secrets);
  };
  if (f.json) {
    Value resources = Value::array();
    for (const ResourceState* rs : sorted) {
      Value j = {{"address", rs->address},
                 {"kind", rs->kind},
                 {"id", rs->id},
                 {"attributes", MaskSensitive(rs->attributes, secrets)},
                 {"depends_on", rs->depends_on}};
      if (!rs->tainted.empty()) j["tainted"] = rs->tainted;
      resources.push_back(std::move(j));
    }
    Value outputs = Value::object();
    for (const auto& [name, v] : state->outputs) {
      outputs[name] = {{"value", output_value(name, v)},
                       {"sensitive", state->sensitive_outputs.count(name) > 0}};
    }
    std::cout << Redact(Value({{"lineage", state->lineage},
                               {"serial", state->serial},
                               {"resources", resources},
                               {"outputs", outputs}})
                            .dump(2))
              << "\n";
    return 0;
  }
  std::string out = "State of " + session->stack_root() + ": serial " +
                    std::to_string(state->serial) + ", " + std::to_string(sorted.size()) +
                    (sorted.size() == 1 ? " resource" : " resources") + ".\n";
  for (const ResourceState* rs : sorted) {
    out += "\n# " + rs->address + " (" + rs->kind + ", id " + rs->id + ")\n";
    if (!rs->tainted.empty()) out += "  tainted: " + rs->tainted + "\n";
    if (!rs->depends_on.empty()) {
      out += "  depends on:";
      for (const std::string& d : rs->depends_on) out += " " + d;
      out += "\n";
    }
    size_t width = 0;
    for (const auto& [k, v] : rs->attributes.items()) width = std::max(width, k.size());
    for (const auto& [k, v] : rs->attributes.items()) {
      out += "  " + k + std::string(width - k.size(), ' ') + " = " + RenderValue(v, secrets) + "\n";
    }
  }
  if (!state->outputs.empty()) {
    out += "\nOutputs:\n";
    size_t width = 0;
    for (const auto& [name, v] : state->outputs) width = std::max(width, name.size());
    for (const auto& [name, v] : state->outputs) {
      out += "  " + name + std::string(width - name.size(), ' ') + " = " +
             (state->sensitive_outputs.count(name) ? "(sensitive)" : RenderValue(v, secrets)) +
             "\n";
    }
  }
  std::cout << Redact(out);
  return 0;
}

std::function<int()> SetupShow(CLI::App& sub, const GlobalOptions& global) {
  auto f = std::make_shared<ShowFlags>();
  AddStackFlags(sub, f->stack, /*multiple_paths=*/false);
  sub.add_flag("--json", f->json, "Print it as JSON (a plan as `cairn plan --json` prints one)");
  sub.footer(
      "Given a saved plan (cairn plan --out FILE), prints it as `cairn plan` did: what\n"
      "`cairn apply FILE` will do, for a reviewer to read. Given a stack directory (or\n"
      "nothing: the current one), prints its state: every resource with its recorded\n"
      "attributes, and the outputs. Values of sensitive variables and sensitive outputs\n"
      "are shown as (sensitive); `cairn output NAME --show-sensitive` prints one. Reads\n"
      "only: no API call, no lock.\n\n"
      "Examples:\n"
      "  cairn show                         # the state of the stack here\n"
      "  cairn show examples/web --json\n"
      "  cairn plan --out ci.plan && cairn show ci.plan");
  return [f, &global]() {
    if (f->stack.paths.size() == 1) {
      std::string error;
      std::optional<Plan> saved = ReadSavedPlan(f->stack.paths[0], error);
      if (!error.empty()) {
        std::cerr << "error: " << error << "\n";
        return 1;
      }
      if (saved) return ShowPlan(*saved, f->stack.paths[0], f->json, global);
    }
    return ShowState(*f, global);
  };
}

}  // namespace

CAIRN_COMMAND("show", "Show the state, or a saved plan, for reading", 56, SetupShow);

}  // namespace cairn::cli
