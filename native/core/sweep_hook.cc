#include "sweep_hook.h"

#include <atomic>

namespace procpin::sweep {

#ifdef PROCPIN_TEST_HOOKS
namespace {
std::atomic<Hook> g_hook{nullptr};
}  // namespace

void RunHook(int dirfd, const char* name, HookPoint point) {
  Hook h = g_hook.load(std::memory_order_relaxed);
  if (h != nullptr) h(dirfd, name, point);
}

void SetTestHook(Hook hook) { g_hook.store(hook, std::memory_order_relaxed); }
#endif

}  // namespace procpin::sweep
