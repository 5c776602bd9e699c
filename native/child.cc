#include "glue.h"

namespace procpin {

void InitChild(Napi::Env, Napi::Object) {}

}  // namespace procpin
