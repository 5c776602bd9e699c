// The JavaScript wrapper of a ChildState (see state.h): what lib/binding.ts calls
// NativeChildHandle. Methods return 0 / info / null, or a negative errno; they never throw for a
// syscall failure. The group methods (signalGroup, inGroup, armEndKill) are in leader.cc.
#pragma once

#include <napi.h>

#include "state.h"

namespace procpin::child {

class ChildHandle : public Napi::ObjectWrap<ChildHandle> {
 public:
  static Napi::Function Define(Napi::Env env, Registry* reg);

  explicit ChildHandle(const Napi::CallbackInfo& info);
  // Garbage-collected: the descriptor and the zombie must not outlive us.
  ~ChildHandle() override;

  void Detach() { state_ = nullptr; }

 private:
  Napi::Value Pidfd(const Napi::CallbackInfo& info);
  Napi::Value Poll(const Napi::CallbackInfo& info);
  Napi::Value Reap(const Napi::CallbackInfo& info);
  Napi::Value Kill(const Napi::CallbackInfo& info);
  Napi::Value KillAndReap(const Napi::CallbackInfo& info);
  Napi::Value HasExited(const Napi::CallbackInfo& info);
  Napi::Value Ref(const Napi::CallbackInfo& info);
  Napi::Value Unref(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  // leader.cc
  Napi::Value SignalGroup(const Napi::CallbackInfo& info);
  Napi::Value InGroup(const Napi::CallbackInfo& info);
  Napi::Value ArmEndKill(const Napi::CallbackInfo& info);

  ChildState* state_ = nullptr;
};

}  // namespace procpin::child
