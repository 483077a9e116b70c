// libFuzzer target: the saved-plan reader, as `cairn apply PLAN` uses it.
// The input is a plan file: ParseJson (base/value.h), then PlanFromJson
// (engine/plan/plan.h). A plan that reads is then
//   - written and read again: PlanToJson of the re-read plan must equal the
//     first PlanToJson (the format round-trips);
//   - rendered as text and Markdown, as plan and apply print it;
//   - applied, since a plan file is input to apply: made current against an
//     in-memory state (its lineage and serial are taken over, as a forged
//     file could do) and applied with a provider that checks what it is
//     asked to send as the real one does (answering_provider.h), at most
//     kMaxApplied changes, so that a plan whose changes depend on each other
//     in a cycle, on themselves or on nothing must end, not hang or crash.
// Nothing may crash, hang or leak; errors and diagnostics are fine.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/redact.h"
#include "base/value.h"
#include "engine/apply/apply.h"
#include "engine/manifest/expr.h"
#include "engine/plan/plan.h"
#include "engine/report/plan_report.h"
#include "engine/state/memory_state_store.h"
#include "tests/fuzz/answering_provider.h"

namespace {
constexpr size_t kMaxApplied = 24;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = cairn::ParseJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  auto plan = cairn::PlanFromJson(*parsed);
  if (!plan.ok()) return 0;

  cairn::Value written = cairn::PlanToJson(*plan);
  auto reread = cairn::PlanFromJson(written);
  if (!reread.ok()) {
    std::fprintf(stderr, "a written plan does not read back: %s\n",
                 reread.status().ToString().c_str());
    std::abort();
  }
  if (cairn::PlanToJson(*reread) != written) {
    std::fprintf(stderr, "a written plan reads back different:\n%s\n%s\n", written.dump().c_str(),
                 cairn::PlanToJson(*reread).dump().c_str());
    std::abort();
  }
  (void)plan->counts();
  (void)plan->has_changes();
  (void)cairn::RenderPlanText(*plan);
  (void)cairn::RenderPlanText(*plan, {.color = true});
  (void)cairn::RenderPlanMarkdown(*plan);

  if (plan->changes.size() <= kMaxApplied) {
    cairn::MemoryStateStore store;
    auto state = store.Load();
    if (!state.ok()) std::abort();
    (void)cairn::CheckPlanIsCurrent(*plan, *state);
    plan->lineage = state->lineage;
    plan->serial = state->serial;
    if (!cairn::CheckPlanIsCurrent(*plan, *state).ok()) {
      std::fprintf(stderr, "a plan with the state's lineage and serial is not current\n");
      std::abort();
    }
    cairn::fuzz::AnsweringProvider provider;
    cairn::ApplyOptions options;
    options.parallelism = 4;
    auto result = cairn::Apply(*plan, provider, store, options);
    (void)result;
  }
  // Sensitive values register with the redactor; forget them so the
  // registry does not grow over millions of inputs.
  cairn::ClearSecretsForTesting();
  return 0;
}
