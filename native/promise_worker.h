// The one base of the addon's promise-returning work on libuv's threadpool (the sweep, a held
// entry's removal, a claim's create, the group scan).
#pragma once

#include <memory>
#include <utility>

#include "glue.h"

namespace procpin {

// PromiseWorker<T>: a unit of blocking but bounded work that computes a T off the event loop and
// settles a promise with it. A subclass gives two functions, and nothing else of the
// AsyncWorker machinery:
//
//   T Compute()                          the work; on a pool thread. No Node-API call, no
//                                        JavaScript value: only what the constructor copied in.
//   Napi::Value Convert(Napi::Env, T&)   the promise's value; on the event loop, in a handle
//                                        scope. An empty Value leaves the promise unsettled
//                                        (a creation failed: the environment is ending).
//
// The call order, for a worker made by Start():
//   1. Start(), on the event loop: the constructor runs, then the promise is made. When it
//      cannot be (a Worker's environment is stopping) the worker is deleted unqueued and Start
//      returns CouldNotMake(env, "a promise"): no work runs, nothing is settled. Otherwise the
//      work is queued and the promise returned.
//   2. Compute(), on a pool thread, once. Its T is kept for step 3.
//   3. Then on the event loop, once: Convert() and the promise is resolved with its value; or,
//      had the work been cancelled (the environment ending before it started), nothing.
//      (OnError rejects with the error, should a subclass ever SetError; none does.)
//   4. node-addon-api deletes the worker on the event loop right after step 3, cancelled or not
//      (a subclass's destructor releases what it held for the work there).
// The promise is settled at most once (Deferred clears itself on the first settle), never after
// its environment is gone, and never with a value that a failed call left unwritten: Convert()
// checks what can fail in an ending environment (glue.h) and returns an empty Value then.
template <typename T>
class PromiseWorker : public Napi::AsyncWorker {
 public:
  // Makes a W (a subclass) with `args`, queues it and returns its promise (step 1 above).
  template <typename W, typename... Args>
  static Napi::Value Start(Napi::Env env, Args&&... args) {
    auto w = std::make_unique<W>(env, std::forward<Args>(args)...);
    PromiseWorker& base = *w;
    if (!base.deferred_.ok()) return CouldNotMake(env, "a promise");
    Napi::Value p = base.deferred_.Promise();
    w.release()->Queue();  // node-addon-api deletes it after step 3
    return p;
  }

 protected:
  PromiseWorker(Napi::Env env, const char* resource_name)
      : Napi::AsyncWorker(env, resource_name), deferred_(env) {}

  virtual T Compute() = 0;
  virtual Napi::Value Convert(Napi::Env env, T& result) = 0;

 private:
  void Execute() final { result_ = Compute(); }
  void OnOK() final {
    Napi::Value v = Convert(Env(), result_);
    if (!v.IsEmpty()) deferred_.Resolve(v);
  }
  void OnError(const Napi::Error& err) final { deferred_.Reject(err.Value()); }

  Deferred deferred_;
  T result_{};
};

}  // namespace procpin
