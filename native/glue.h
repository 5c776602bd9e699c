// Shared helpers for the node-addon-api glue. The glue converts arguments, calls the syscall
// core and hands results back; it never builds an Error for a syscall failure. A failed call
// returns the negative errno as a number and lib/errors.ts turns it into a Node-shaped Error,
// in one place, with the stack starting at the caller. The TypeScript layer validates every
// argument first; the checks here only keep direct misuse of the binding from crashing.
#pragma once

#include <napi.h>
#include <signal.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

namespace procpin {

// Per-environment state (main thread and each Worker have their own).
struct FlockRegistry;
struct AddonData {
  std::unordered_map<std::string, Napi::FunctionReference> ctors;
  FlockRegistry* flock = nullptr;  // owned by flock_wait.cc's cleanup hook
};

inline AddonData* GetAddonData(Napi::Env env) { return env.GetInstanceData<AddonData>(); }

// Throws a TypeError and returns false when argument i is not a number.
inline bool NumberArg(const Napi::CallbackInfo& info, size_t i, double* out) {
  if (i >= info.Length() || !info[i].IsNumber()) {
    Napi::TypeError::New(info.Env(), "argument " + std::to_string(i) + " must be a number")
        .ThrowAsJavaScriptException();
    return false;
  }
  *out = info[i].As<Napi::Number>().DoubleValue();
  return true;
}

// Throws a RangeError and returns false when argument i is a number but not an integer of type
// T (`type` names it in the message).
template <typename T>
inline bool IntegerArg(const Napi::CallbackInfo& info, size_t i, T* out, const char* type) {
  double d;
  if (!NumberArg(info, i, &d)) return false;
  if (!(d >= std::numeric_limits<T>::min() && d <= std::numeric_limits<T>::max()) ||
      d != static_cast<double>(static_cast<T>(d))) {
    Napi::RangeError::New(info.Env(), "argument " + std::to_string(i) + " must be " + type)
        .ThrowAsJavaScriptException();
    return false;
  }
  *out = static_cast<T>(d);
  return true;
}

inline bool Int32Arg(const Napi::CallbackInfo& info, size_t i, int32_t* out) {
  return IntegerArg(info, i, out, "an int32");
}

inline bool Uint32Arg(const Napi::CallbackInfo& info, size_t i, uint32_t* out) {
  return IntegerArg(info, i, out, "a uint32");
}

// exports[name] = a function named `name` that runs cb.
inline void SetFunction(Napi::Env env, Napi::Object exports, const char* name,
                        Napi::Function::Callback cb) {
  exports.Set(name, Napi::Function::New(env, cb, name));
}

// One export of a glue file: its name and its function.
struct Export {
  const char* name;
  Napi::Function::Callback cb;
};

// A test-only export: itself in the test build (PROCPIN_TEST_HOOKS, build-test/); in the production
// build an empty entry that SetFunctions leaves out, so that neither the function nor its name is
// in that binary.
#ifdef PROCPIN_TEST_HOOKS
#define PROCPIN_TEST_ONLY(name, fn) \
  { name, fn }
#else
#define PROCPIN_TEST_ONLY(name, fn) \
  { nullptr, nullptr }
#endif

// exports[name] = fn for each entry of the list, in order (an entry without a function, a
// test-only one in the production build, is left out): a glue file's Init names its exports once.
inline void SetFunctions(Napi::Env env, Napi::Object exports, std::initializer_list<Export> list) {
  for (const Export& e : list) {
    if (e.cb != nullptr) SetFunction(env, exports, e.name, e.cb);
  }
}

inline Napi::Value Result(Napi::Env env, int r) { return Napi::Number::New(env, r); }

template <typename... A, size_t... I>
inline Napi::Value CallWithInts(const Napi::CallbackInfo& info, int (*f)(A...),
                                std::index_sequence<I...>) {
  int32_t v[sizeof...(A) + 1] = {};
  for (size_t i = 0; i < sizeof...(A); ++i) {
    if (!Int32Arg(info, i, &v[i])) return Napi::Value();
  }
  return Result(info.Env(), f(v[I]...));
}

template <typename... A>
constexpr size_t IntArity(int (*)(A...)) {
  return sizeof...(A);
}

// The binding of a core call that takes ints and returns an int (its result or -errno): reads
// arguments 0 to n-1 as int32 (the first that is not one throws, as Int32Arg does), calls F with
// them and returns its result. For example {"flock", IntCall<sys::FlockOnce>}.
template <auto F>
Napi::Value IntCall(const Napi::CallbackInfo& info) {
  return CallWithInts(info, F, std::make_index_sequence<IntArity(F)>());
}

// A waitid siginfo_t as JavaScript gets it, { pid, uid, code, status }: the one builder of that
// object (lib/waitinfo.ts names the code and the signal), for the waitid export and a child's
// peek and reap alike.
inline Napi::Value RawInfo(Napi::Env env, const siginfo_t& si) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("pid", Napi::Number::New(env, si.si_pid));
  o.Set("uid", Napi::Number::New(env, si.si_uid));
  o.Set("code", Napi::Number::New(env, si.si_code));
  o.Set("status", Napi::Number::New(env, si.si_status));
  return o;
}

// While an environment stops (a Worker's terminate() was called, its JavaScript still runs until
// V8 notices), every Node-API call that could run JavaScript fails and leaves its out-parameter
// unwritten. node-addon-api then hands back values that must not be used: a Deferred's promise
// is an uninitialized napi_value (returned to V8, it crashes the process), and the result of a
// failed coercion or creation has no env (any method on it is a fatal error). The glue uses the
// helpers below, or raw calls whose status it checks, so that it reads only what a call wrote.

// Argument i as a boolean: true only for `true`. No coercion (that would run JavaScript).
inline bool BoolArg(const Napi::CallbackInfo& info, size_t i) {
  if (i >= info.Length()) return false;
  bool b = false;
  return napi_get_value_bool(info.Env(), info[i], &b) == napi_ok && b;
}

// What a binding returns when it could not make `what` (a call failed, its result unwritten):
// the pending exception, or else an Error (which a stopping environment swallows: nothing can be
// thrown there).
inline Napi::Value CouldNotMake(Napi::Env env, const char* what) {
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && !pending) {
    Napi::Error::New(env, std::string("could not create ") + what).ThrowAsJavaScriptException();
  }
  return Napi::Value();
}

// A promise and the means to settle it. When it could not be made, ok() is false: the binding
// returns CouldNotMake(env, "a promise") and queues no work; settling does nothing.
class Deferred {
 public:
  explicit Deferred(Napi::Env env) : env_(env) {
    if (napi_create_promise(env_, &deferred_, &promise_) != napi_ok) {
      deferred_ = nullptr;
      promise_ = nullptr;
    }
  }
  Deferred(const Deferred&) = delete;
  Deferred& operator=(const Deferred&) = delete;

  bool ok() const { return deferred_ != nullptr && promise_ != nullptr; }
  Napi::Value Promise() const { return ok() ? Napi::Value(env_, promise_) : Napi::Value(); }
  void Resolve(napi_value v) { Settle(v, napi_resolve_deferred); }
  void Reject(napi_value v) { Settle(v, napi_reject_deferred); }

 private:
  void Settle(napi_value v, napi_status (*settle)(napi_env, napi_deferred, napi_value)) {
    if (deferred_ == nullptr || v == nullptr) return;
    // Success frees the deferred; after a failure (the environment stops) it goes with the
    // environment. Either way it is not settled twice.
    settle(env_, deferred_, v);
    deferred_ = nullptr;
  }

  napi_env env_;
  napi_deferred deferred_ = nullptr;
  napi_value promise_ = nullptr;
};

// Registration functions, one per glue file.
void InitPrimitives(Napi::Env env, Napi::Object exports);
void InitFlockWait(Napi::Env env, Napi::Object exports);
void InitChild(Napi::Env env, Napi::Object exports);
void InitSweep(Napi::Env env, Napi::Object exports);
void InitTty(Napi::Env env, Napi::Object exports);
void InitScan(Napi::Env env, Napi::Object exports);
void InitEndKill(Napi::Env env, Napi::Object exports);
void InitHeldFd(Napi::Env env, Napi::Object exports);

}  // namespace procpin
