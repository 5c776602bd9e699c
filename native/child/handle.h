// The JavaScript wrapper of a ChildState (see state.h): what lib/binding.ts calls
// NativeChildHandle. Methods return 0 / info / null, or a negative errno; they never throw for a
// syscall failure. The group methods (signalGroup, inGroup) are in leader.cc.
#pragma once

#include <napi.h>

#include "state.h"

namespace procpin::child {

// The methods JavaScript calls, each named once as X(member, "name"), in the order the class
// defines them; signalGroup and inGroup are in leader.cc.
#define PROCPIN_CHILD_HANDLE_METHODS(X) \
  X(Pidfd, "pidfd")                     \
  X(Poll, "poll")                       \
  X(Reap, "reap")                       \
  X(Kill, "kill")                       \
  X(HasExited, "hasExited")             \
  X(Ref, "ref")                         \
  X(Unref, "unref")                     \
  X(Close, "close")                     \
  X(SignalGroup, "signalGroup")         \
  X(InGroup, "inGroup")                 \
  X(KillAndReap, "killAndReap")

class ChildHandle : public Napi::ObjectWrap<ChildHandle> {
 public:
  static Napi::Function Define(Napi::Env env, Registry* reg);

  explicit ChildHandle(const Napi::CallbackInfo& info);
  // Garbage-collected: the descriptor and the zombie must not outlive us.
  ~ChildHandle() override;

  void Detach() { state_ = nullptr; }

 private:
#define PROCPIN_DECLARE_METHOD(member, name) Napi::Value member(const Napi::CallbackInfo& info);
  PROCPIN_CHILD_HANDLE_METHODS(PROCPIN_DECLARE_METHOD)
#undef PROCPIN_DECLARE_METHOD

  ChildState* state_ = nullptr;
};

}  // namespace procpin::child
