// Module entry. Node-API modules are context-aware: each environment (the main thread, every
// Worker) gets its own AddonData, freed when that environment is torn down.
#include "glue.h"

namespace procpin {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData<AddonData>(new AddonData());
  InitPrimitives(env, exports);
  InitFlockWait(env, exports);
  InitChild(env, exports);
  InitSweep(env, exports);
  InitTty(env, exports);
  InitScan(env, exports);
  InitEndKill(env, exports);
  InitHeldFd(env, exports);
  return exports;
}

}  // namespace procpin

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
  return procpin::Init(env, exports);
}

NODE_API_MODULE(NODE_GYP_MODULE_NAME, InitModule)
