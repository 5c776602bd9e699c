// Glue for the command line's terminal job control (core/tty.h): the foreground process group
// and the terminal's modes, the modes crossing as an opaque Buffer.
#include "core/tty.h"

#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "glue.h"

namespace procpin {

namespace {

// Returns the terminal's modes as an opaque Buffer (a struct termios), or the negative errno.
Napi::Value TtyGetAttr(const Napi::CallbackInfo& info) {
  int32_t fd;
  if (!Int32Arg(info, 0, &fd)) return Napi::Value();
  struct termios t;
  memset(&t, 0, sizeof t);
  int r = tty::GetAttr(fd, &t);
  if (r < 0) return Result(info.Env(), r);
  return Napi::Buffer<uint8_t>::Copy(info.Env(), reinterpret_cast<const uint8_t*>(&t), sizeof t);
}

Napi::Value TtySetAttr(const Napi::CallbackInfo& info) {
  int32_t fd;
  if (!Int32Arg(info, 0, &fd)) return Napi::Value();
  if (info.Length() < 2 || !info[1].IsBuffer() ||
      info[1].As<Napi::Buffer<uint8_t>>().Length() != sizeof(struct termios)) {
    Napi::TypeError::New(info.Env(), "argument 1 must be a Buffer from ttyGetAttr")
        .ThrowAsJavaScriptException();
    return Napi::Value();
  }
  struct termios t;
  memcpy(&t, info[1].As<Napi::Buffer<uint8_t>>().Data(), sizeof t);
  return Result(info.Env(), tty::SetAttr(fd, &t));
}

Napi::Value GetPgrp(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), getpgrp());
}

}  // namespace

void InitTty(Napi::Env env, Napi::Object exports) {
  SetFunctions(env, exports,
               {{"ttyGetForeground", IntCall<tty::GetForeground>},
                {"ttySetForeground", IntCall<tty::SetForeground>},
                {"ttyGetAttr", TtyGetAttr},
                {"ttySetAttr", TtySetAttr},
                {"getpgrp", GetPgrp}});
}

}  // namespace procpin
