#include "glue.h"

namespace procpin {

void InitSweep(Napi::Env, Napi::Object) {}

}  // namespace procpin
