// Glue for SPEC Layer 3a: the advisory scan of a process group's members (core/scan.h), run on
// libuv's threadpool, its zombie memory held by JavaScript as a tagged external.
#include "core/scan.h"

#include <string>

#include "glue.h"
#include "promise_worker.h"

namespace procpin {

namespace {

// [count or -errno, first live member found or 0]
Napi::Array Pair(Napi::Env env, int result, pid_t first) {
  Napi::Array a = Napi::Array::New(env, 2);
  a.Set(uint32_t{0}, Napi::Number::New(env, result));
  a.Set(uint32_t{1}, Napi::Number::New(env, first));
  return a;
}

using MemoryHandle = Napi::External<scan::ZombieMemory>;

// Marks the handles made by createScanMemory, so that no other external is taken for one.
constexpr napi_type_tag kMemoryTag = {0x70726f6370696e2dULL, 0x7363616e6d656d31ULL};

// The optional ZombieMemory argument, taken for this scan (null when absent or in use).
bool MemoryArg(const Napi::CallbackInfo& info, size_t i, MemoryHandle* handle,
               scan::ZombieMemory** out) {
  *out = nullptr;
  if (i >= info.Length() || info[i].IsUndefined()) return true;
  if (!info[i].IsExternal() || !info[i].As<MemoryHandle>().CheckTypeTag(&kMemoryTag)) {
    Napi::TypeError::New(info.Env(), "argument " + std::to_string(i) + " must be a scan memory")
        .ThrowAsJavaScriptException();
    return false;
  }
  *handle = info[i].As<MemoryHandle>();
  scan::ZombieMemory* m = handle->Data();
  bool idle = false;
  if (m->busy.compare_exchange_strong(idle, true)) *out = m;
  return true;
}

// (pgid, limit, memory?): a scan's arguments, the memory taken for it (null when absent or busy).
struct ScanArgs {
  int32_t pgid = 0, limit = 0;
  MemoryHandle handle;
  scan::ZombieMemory* memory = nullptr;
};

bool ReadScanArgs(const Napi::CallbackInfo& info, ScanArgs* a) {
  return Int32Arg(info, 0, &a->pgid) && Int32Arg(info, 1, &a->limit) &&
         MemoryArg(info, 2, &a->handle, &a->memory);
}

struct ScanResult {
  int count = 0;  // or -errno
  pid_t first = 0;
};

class ScanWorker : public PromiseWorker<ScanResult> {
 public:
  ScanWorker(Napi::Env env, pid_t pgid, int limit, MemoryHandle handle, scan::ZombieMemory* memory)
      : PromiseWorker(env, "procpin:group-scan"), pgid_(pgid), limit_(limit), memory_(memory) {
    // Keeps the memory alive until the scan is done.
    if (memory_ != nullptr) handle_ = Napi::Persistent(handle);
  }
  ~ScanWorker() override {
    if (memory_ != nullptr) memory_->busy.store(false);
  }

 private:
  ScanResult Compute() override {
    ScanResult r;
    r.count = scan::CountMembers(pgid_, limit_, &r.first, memory_);
    return r;
  }
  Napi::Value Convert(Napi::Env env, ScanResult& r) override { return Pair(env, r.count, r.first); }

  pid_t pgid_;
  int limit_;
  scan::ZombieMemory* memory_;
  Napi::Reference<MemoryHandle> handle_;
};

#ifdef PROCPIN_TEST_HOOKS
// scanGroupSync(pgid, limit, memory?) -> [count | -errno, first live member | 0], on the calling
// thread (tests and measurement: a full scan takes milliseconds). The test build only.
Napi::Value ScanGroupSync(const Napi::CallbackInfo& info) {
  ScanArgs a;
  if (!ReadScanArgs(info, &a)) return Napi::Value();
  pid_t first = 0;
  int r = scan::CountMembers(a.pgid, a.limit, &first, a.memory);
  if (a.memory != nullptr) a.memory->busy.store(false);
  return Pair(info.Env(), r, first);
}

// scanTestHook(errno?, statOnly?): with an errno (non-zero), every scan and member look fails with
// it; with statOnly, liveness is read from /proc/PID/stat alone. No arguments: scans are real.
// The test build only.
Napi::Value ScanTestHook(const Napi::CallbackInfo& info) {
  int32_t e = 0;
  if (info.Length() > 0 && !info[0].IsUndefined() && !Int32Arg(info, 0, &e)) return Napi::Value();
  scan::SetTestHook(e < 0 ? -e : e, BoolArg(info, 1));
  return info.Env().Undefined();
}
#endif

// createScanMemory() -> the zombie memory of one group's successive scans.
// Raw calls: node-addon-api's External::New gives an External without env when the creation
// fails (as it does in a stopping environment), and TypeTag on that is a fatal error.
Napi::Value CreateScanMemory(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  auto* m = new scan::ZombieMemory();
  napi_value handle = nullptr;
  auto finalize = [](napi_env, void* data, void*) {
    delete static_cast<scan::ZombieMemory*>(data);
  };
  if (napi_create_external(env, m, finalize, nullptr, &handle) != napi_ok || handle == nullptr) {
    delete m;
    return CouldNotMake(info.Env(), "a scan memory");
  }
  // From here the external owns the memory (its finalizer frees it).
  if (napi_type_tag_object(env, handle, &kMemoryTag) != napi_ok) {
    return CouldNotMake(info.Env(), "a scan memory");
  }
  return Napi::Value(env, handle);
}

// scanGroup(pgid, limit, memory?) -> Promise<[count | -errno, first live member | 0]>
Napi::Value ScanGroup(const Napi::CallbackInfo& info) {
  ScanArgs a;
  if (!ReadScanArgs(info, &a)) return Napi::Value();
  return PromiseWorker<ScanResult>::Start<ScanWorker>(info.Env(), a.pgid, a.limit, a.handle,
                                                      a.memory);
}

// groupMemberLive(pgid, pid) -> 1 | 0 | -errno: one pid's getpgid and, on a match, whether it has
// exited. Microseconds: safe on the event loop.
Napi::Value GroupMemberLive(const Napi::CallbackInfo& info) {
  int32_t pgid, pid;
  if (!Int32Arg(info, 0, &pgid) || !Int32Arg(info, 1, &pid)) return Napi::Value();
  return Result(info.Env(), scan::IsMember(pgid, pid));
}

}  // namespace

void InitScan(Napi::Env env, Napi::Object exports) {
  SetFunctions(env, exports,
               {{"createScanMemory", CreateScanMemory},
                {"scanGroup", ScanGroup},
                {"groupMemberLive", GroupMemberLive},
                PROCPIN_TEST_ONLY("scanGroupSync", ScanGroupSync),
                PROCPIN_TEST_ONLY("scanTestHook", ScanTestHook)});
}

}  // namespace procpin
