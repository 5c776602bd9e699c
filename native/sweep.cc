// Glue for SPEC Layer 3b. A sweep of one directory runs on libuv's threadpool (an AsyncWorker):
// its work is bounded by the directory's size, never a wait on another process, so it cannot
// hold a pool thread for long. The result crosses back as parallel arrays (one entry per
// candidate) that lib/sweep/sweep.ts turns into the SweepReport.
#include "core/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <functional>
#include <mutex>
#include <string>

#include "glue.h"
#include "promise_worker.h"

namespace procpin {

namespace {

constexpr uint32_t kDryRun = 1;
constexpr uint32_t kLockAuthority = 2;

bool StringArg(const Napi::CallbackInfo& info, size_t i, std::string* out) {
  if (i >= info.Length() || !info[i].IsString()) {
    Napi::TypeError::New(info.Env(), "argument " + std::to_string(i) + " must be a string")
        .ThrowAsJavaScriptException();
    return false;
  }
  *out = info[i].As<Napi::String>().Utf8Value();
  if (out->find('\0') != std::string::npos) {
    Napi::TypeError::New(info.Env(), "argument " + std::to_string(i) + " contains a NUL byte")
        .ThrowAsJavaScriptException();
    return false;
  }
  return true;
}

// A single entry's name: not empty, no '/', not "." or "..".
bool IsEntryName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..";
}

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF):
// exactly the byte strings that a JavaScript string gives back unchanged.
bool IsUtf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  for (size_t i = 0; i < n;) {
    unsigned c = p[i];
    size_t len;
    unsigned min;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      len = 2, min = 0x80, c &= 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, min = 0x800, c &= 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, min = 0x10000, c &= 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return false;
      c = (c << 6) | (p[i + k] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return false;
    i += len;
  }
  return true;
}

// A name as JavaScript gets it: a string when that is exact, else a Buffer of its very bytes
// (a name that is not UTF-8 would come out with U+FFFD in place of its bytes).
Napi::Value Name(Napi::Env env, const std::string& name) {
  if (IsUtf8(name)) return Napi::String::New(env, name);
  return Napi::Buffer<char>::Copy(env, name.data(), name.size());
}

class SweepWorker : public PromiseWorker<sweep::Report> {
 public:
  SweepWorker(Napi::Env env, std::string dir, sweep::Options opts)
      : PromiseWorker(env, "procpin:sweep"), dir_(std::move(dir)), opts_(std::move(opts)) {}

 private:
  sweep::Report Compute() override {
    sweep::Report report;
    sweep::SweepDirectory(dir_.c_str(), opts_, &report);
    return report;
  }

  // { errno, syscall, names: (string | Buffer)[], pids: Int32Array, outcomes: Uint8Array,
  //   errnos: Int32Array, syscalls: (string | undefined)[] }
  Napi::Value Convert(Napi::Env env, sweep::Report& report) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("errno", Napi::Number::New(env, -report.err));
    if (report.syscall != nullptr) o.Set("syscall", Napi::String::New(env, report.syscall));
    size_t n = report.entries.size();
    Napi::Array names = Napi::Array::New(env, n);
    Napi::Int32Array pids = Napi::Int32Array::New(env, n);
    Napi::Uint8Array outcomes = Napi::Uint8Array::New(env, n);
    Napi::Int32Array errnos = Napi::Int32Array::New(env, n);
    Napi::Array syscalls = Napi::Array::New(env);
    // A terminating environment (a Worker's terminate()) makes any call fail: nothing is
    // dereferenced that a failed call left empty, and nothing is left to resolve then.
    if (n > 0 &&
        (pids.Data() == nullptr || outcomes.Data() == nullptr || errnos.Data() == nullptr)) {
      return Napi::Value();
    }
    for (size_t i = 0; i < n; ++i) {
      const sweep::Entry& e = report.entries[i];
      names.Set(static_cast<uint32_t>(i), Name(env, e.name));
      pids[i] = e.pid;
      outcomes[i] = static_cast<uint8_t>(e.outcome);
      errnos[i] = -e.err;
      if (e.syscall != nullptr) {
        syscalls.Set(static_cast<uint32_t>(i), Napi::String::New(env, e.syscall));
      }
    }
    o.Set("names", names);
    o.Set("pids", pids);
    o.Set("outcomes", outcomes);
    o.Set("errnos", errnos);
    o.Set("syscalls", syscalls);
    return o;
  }

  std::string dir_;
  sweep::Options opts_;
};

// sweepDirectory(dir, prefix, flags) -> Promise<raw report>
Napi::Value SweepDirectory(const Napi::CallbackInfo& info) {
  std::string dir;
  sweep::Options opts;
  uint32_t flags;
  if (!StringArg(info, 0, &dir) || !StringArg(info, 1, &opts.prefix) ||
      !Uint32Arg(info, 2, &flags)) {
    return Napi::Value();
  }
  if (opts.prefix.empty() || opts.prefix.find('/') != std::string::npos) {
    Napi::TypeError::New(info.Env(), "argument 1 must be a non-empty name")
        .ThrowAsJavaScriptException();
    return Napi::Value();
  }
  opts.dry_run = (flags & kDryRun) != 0;
  opts.authority = (flags & kLockAuthority) != 0 ? sweep::Authority::kLock : sweep::Authority::kPid;
  return PromiseWorker<sweep::Report>::Start<SweepWorker>(info.Env(), std::move(dir),
                                                          std::move(opts));
}

// 0 or -errno, and the call that failed: a removal's or a create's result.
struct HeldResult {
  int result = 0;
  const char* syscall = nullptr;
};

// fd (>= 0, or 0 for a removal), or [-errno, syscall] (`fallback` when the core named none).
Napi::Value HeldValue(Napi::Env env, const HeldResult& r, const char* fallback) {
  if (r.result >= 0) return Napi::Number::New(env, r.result);
  Napi::Array a = Napi::Array::New(env, 2);
  a.Set(0u, Napi::Number::New(env, r.result));
  a.Set(1u, Napi::String::New(env, r.syscall != nullptr ? r.syscall : fallback));
  return a;
}

// One removal or one create in the pool: `run` is the core call, `fallback` names the syscall
// when the core named none.
class HeldWorker : public PromiseWorker<HeldResult> {
 public:
  HeldWorker(Napi::Env env, const char* resource, const char* fallback,
             std::function<HeldResult()> run)
      : PromiseWorker(env, resource), fallback_(fallback), run_(std::move(run)) {}

 private:
  HeldResult Compute() override { return run_(); }

  Napi::Value Convert(Napi::Env env, HeldResult& r) override {
    return HeldValue(env, r, fallback_);
  }

  const char* fallback_;
  std::function<HeldResult()> run_;
};

// removeHeld(dir, name, fd, closeAfter) -> Promise<0 | [-errno, syscall]>. The caller keeps fd
// open (and its lock held) until the promise settles; with closeAfter the fd is closed here,
// after the unlink, whatever the outcome (for descriptors the addon opened: Node's fs, which
// tracks the descriptors it opened in a Worker, never saw them).
Napi::Value RemoveHeld(const Napi::CallbackInfo& info) {
  std::string dir, name;
  int32_t fd;
  if (!StringArg(info, 0, &dir) || !StringArg(info, 1, &name) || !Int32Arg(info, 2, &fd)) {
    return Napi::Value();
  }
  if (!IsEntryName(name) || fd < 0) {
    Napi::TypeError::New(info.Env(), "bad name or fd").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  bool close_after = info.Length() > 3 && BoolArg(info, 3);
  return PromiseWorker<HeldResult>::Start<HeldWorker>(
      info.Env(), "procpin:sweep", "unlink",
      [dir = std::move(dir), name = std::move(name), fd, close_after] {
        HeldResult r;
        r.result = sweep::RemoveHeld(dir.c_str(), name.c_str(), fd, &r.syscall);
        // Only after the unlink: closing drops the lock.
        if (close_after) close(fd);
        return r;
      });
}

// createLocked(dir, name, directory, mode) -> Promise<fd | [-errno, syscall]>. The fd is
// O_CLOEXEC and holds LOCK_EX; the caller owns it.
Napi::Value CreateLocked(const Napi::CallbackInfo& info) {
  std::string dir, name;
  uint32_t mode;
  if (!StringArg(info, 0, &dir) || !StringArg(info, 1, &name) || !Uint32Arg(info, 3, &mode)) {
    return Napi::Value();
  }
  if (!IsEntryName(name) || mode > 07777) {
    Napi::TypeError::New(info.Env(), "bad name or mode").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  bool directory = BoolArg(info, 2);
  return PromiseWorker<HeldResult>::Start<HeldWorker>(
      info.Env(), "procpin:claim", "open",
      [dir = std::move(dir), name = std::move(name), directory, mode] {
        HeldResult r;
        r.result = sweep::CreateLocked(dir.c_str(), name.c_str(), directory, mode, &r.syscall);
        return r;
      });
}

#ifdef PROCPIN_TEST_HOOKS
// Test injection (the test build only): at hook point `point`, the first entry whose name
// starts with `name` is renamed to its name + ".orig" and a symlink to `target` takes its name,
// as a racing process would do at the worst moment. The hook fires once. sweepTestHook() with no
// arguments removes it.
std::mutex g_hook_mu;
int g_hook_point = 0;
std::string g_hook_name, g_hook_target;

void SwapHook(int dirfd, const char* name, sweep::HookPoint point) {
  std::lock_guard<std::mutex> g(g_hook_mu);
  if (static_cast<int>(point) != g_hook_point) return;
  if (strncmp(name, g_hook_name.c_str(), g_hook_name.size()) != 0) return;
  g_hook_point = 0;
  std::string moved = std::string(name) + ".orig";
  if (renameat(dirfd, name, dirfd, moved.c_str()) != 0) return;
  if (symlinkat(g_hook_target.c_str(), dirfd, name) != 0) return;
}

Napi::Value SweepTestHook(const Napi::CallbackInfo& info) {
  if (info.Length() == 0) {
    sweep::SetTestHook(nullptr);
    std::lock_guard<std::mutex> g(g_hook_mu);
    g_hook_point = 0;
    return info.Env().Undefined();
  }
  int32_t point;
  std::string name, target;
  if (!Int32Arg(info, 0, &point) || !StringArg(info, 1, &name) || !StringArg(info, 2, &target)) {
    return Napi::Value();
  }
  {
    std::lock_guard<std::mutex> g(g_hook_mu);
    g_hook_point = point;
    g_hook_name = name;
    g_hook_target = target;
  }
  sweep::SetTestHook(SwapHook);
  return info.Env().Undefined();
}
#endif

}  // namespace

void InitSweep(Napi::Env env, Napi::Object exports) {
  SetFunctions(env, exports,
               {{"sweepDirectory", SweepDirectory},
                {"createLocked", CreateLocked},
                {"removeHeld", RemoveHeld},
                PROCPIN_TEST_ONLY("sweepTestHook", SweepTestHook)});
  Napi::Array reasons = Napi::Array::New(env);
  for (int i = 0; i < static_cast<int>(sweep::Outcome::kCount); ++i) {
    reasons.Set(static_cast<uint32_t>(i), Napi::String::New(env, sweep::kOutcomeNames[i]));
  }
  exports.Set("sweepOutcomes", reasons);
  Napi::Object flags = Napi::Object::New(env);
  flags.Set("DRY_RUN", Napi::Number::New(env, kDryRun));
  flags.Set("LOCK_AUTHORITY", Napi::Number::New(env, kLockAuthority));
  exports.Set("sweepFlags", flags);
}

}  // namespace procpin
