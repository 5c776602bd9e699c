// Shared helpers for the node-addon-api glue. The glue converts arguments, calls the syscall
// core and hands results back; it never builds an Error for a syscall failure. A failed call
// returns the negative errno as a number and lib/errors.ts turns it into a Node-shaped Error,
// in one place, with the stack starting at the caller. The TypeScript layer validates every
// argument first; the checks here only keep direct misuse of the binding from crashing.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>
#include <unordered_map>

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

inline bool Int32Arg(const Napi::CallbackInfo& info, size_t i, int32_t* out) {
  double d;
  if (!NumberArg(info, i, &d)) return false;
  if (!(d >= INT32_MIN && d <= INT32_MAX) || d != static_cast<double>(static_cast<int32_t>(d))) {
    Napi::RangeError::New(info.Env(), "argument " + std::to_string(i) + " must be an int32")
        .ThrowAsJavaScriptException();
    return false;
  }
  *out = static_cast<int32_t>(d);
  return true;
}

inline bool Uint32Arg(const Napi::CallbackInfo& info, size_t i, uint32_t* out) {
  double d;
  if (!NumberArg(info, i, &d)) return false;
  if (!(d >= 0 && d <= UINT32_MAX) || d != static_cast<double>(static_cast<uint32_t>(d))) {
    Napi::RangeError::New(info.Env(), "argument " + std::to_string(i) + " must be a uint32")
        .ThrowAsJavaScriptException();
    return false;
  }
  *out = static_cast<uint32_t>(d);
  return true;
}

inline Napi::Value Result(Napi::Env env, int r) { return Napi::Number::New(env, r); }

// Registration functions, one per glue file.
void InitPrimitives(Napi::Env env, Napi::Object exports);
void InitFlockWait(Napi::Env env, Napi::Object exports);
void InitChild(Napi::Env env, Napi::Object exports);
void InitSweep(Napi::Env env, Napi::Object exports);
void InitTty(Napi::Env env, Napi::Object exports);
void InitScan(Napi::Env env, Napi::Object exports);
void InitEndKill(Napi::Env env, Napi::Object exports);

}  // namespace procpin
