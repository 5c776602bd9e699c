// Glue for SPEC Layer 1: each function converts its arguments, makes one call into the syscall
// core and returns the result, or the negative errno for lib/errors.ts to shape.
#include <errno.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/proc.h"
#include "core/sys.h"
#include "glue.h"

namespace procpin {

namespace {

Napi::Value PidfdOpen(const Napi::CallbackInfo& info) {
  int32_t pid;
  uint32_t flags;
  if (!Int32Arg(info, 0, &pid) || !Uint32Arg(info, 1, &flags)) return Napi::Value();
  return Result(info.Env(), sys::PidfdOpen(pid, flags));
}

Napi::Value PidfdSendSignal(const Napi::CallbackInfo& info) {
  int32_t fd, sig;
  uint32_t flags;
  if (!Int32Arg(info, 0, &fd) || !Int32Arg(info, 1, &sig) || !Uint32Arg(info, 2, &flags)) {
    return Napi::Value();
  }
  return Result(info.Env(), sys::PidfdSendSignal(fd, sig, flags));
}

// Returns { pid, uid, code, status } (code and status raw), null when WNOHANG found nothing, or
// the negative errno.
Napi::Value Waitid(const Napi::CallbackInfo& info) {
  // id and options as the kernel reads them: an int (P_ALL ignores it, P_PID and P_PGID
  // answer EINVAL for a negative one) and an unsigned set of bits (__WCLONE is bit 31).
  int32_t idtype;
  uint32_t id, options;
  if (!Int32Arg(info, 0, &idtype) || !Uint32Arg(info, 1, &id) || !Uint32Arg(info, 2, &options)) {
    return Napi::Value();
  }
  Napi::Env env = info.Env();
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int r = sys::WaitidOnce(idtype, id, &si, static_cast<int>(options));
  if (r < 0) return Result(env, r);
  if (si.si_pid == 0) return env.Null();
  return RawInfo(env, si);
}

// closeRange(first, last, flags); the test build also has closeRangeLoop, the fallback loop alone
// (so that tests can compare it with the syscall).
Napi::Value CloseRangeImpl(const Napi::CallbackInfo& info, bool loop) {
  uint32_t first, last, flags;
  if (!Uint32Arg(info, 0, &first) || !Uint32Arg(info, 1, &last) || !Uint32Arg(info, 2, &flags)) {
    return Napi::Value();
  }
  // CLOSE_RANGE_UNSHARE would give the calling JavaScript thread a descriptor table that
  // libuv's threads do not share (lib/primitives.ts refuses it first; this keeps the binding
  // itself from doing it).
  if (flags & sys::kCloseRangeUnshare) return Result(info.Env(), -EINVAL);
  return Result(info.Env(), loop ? sys::CloseRangeLoop(first, last, flags)
                                 : sys::CloseRange(first, last, flags));
}

Napi::Value CloseRange(const Napi::CallbackInfo& info) { return CloseRangeImpl(info, false); }
#ifdef PROCPIN_TEST_HOOKS
Napi::Value CloseRangeLoop(const Napi::CallbackInfo& info) { return CloseRangeImpl(info, true); }
#endif

Napi::Value SetChildSubreaper(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsBoolean()) {
    Napi::TypeError::New(info.Env(), "argument 0 must be a boolean").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  return Result(info.Env(), sys::SetChildSubreaper(info[0].As<Napi::Boolean>().Value()));
}

Napi::Value HasPidfdGroupSignal(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), sys::HasPidfdGroupSignal());
}

// procStat(pid) -> [state, ppid, pgid, session, startTime] from /proc/PID/stat, or -errno
// (-ESRCH: no such process; -EXDEV: /proc is another pid namespace's; -EBADMSG: unparseable).
// Microseconds: safe on the event loop.
Napi::Value ProcStat(const Napi::CallbackInfo& info) {
  int32_t pid;
  if (!Int32Arg(info, 0, &pid)) return Napi::Value();
  Napi::Env env = info.Env();
  if (pid <= 0) return Result(env, -EINVAL);
  int procfd = proc::OpenProc();
  if (procfd < 0) return Result(env, procfd);
  proc::Stat st;
  int r = proc::ReadStat(procfd, pid, &st);
  close(procfd);
  if (r < 0) return Result(env, r);
  Napi::Array a = Napi::Array::New(env, 5);
  a.Set(0u, Napi::String::New(env, &st.state, 1));
  a.Set(1u, Napi::Number::New(env, st.ppid));
  a.Set(2u, Napi::Number::New(env, st.pgid));
  a.Set(3u, Napi::Number::New(env, st.session));
  a.Set(4u, Napi::Number::New(env, static_cast<double>(st.start_time)));
  return a;
}

// strerror(3) text for an errno, for the names and messages libuv's table lacks.
Napi::Value Strerror(const Napi::CallbackInfo& info) {
  int32_t e;
  if (!Int32Arg(info, 0, &e)) return Napi::Value();
  char buf[256];
  // Negated in 64 bits: -INT32_MIN does not fit an int. Anything out of errno's range gets
  // glibc's "Unknown error N".
  int64_t mag = e < 0 ? -static_cast<int64_t>(e) : e;
  const char* s = strerror_r(mag > 4095 ? 4096 : static_cast<int>(mag), buf, sizeof buf);
  return Napi::String::New(info.Env(), s);
}

Napi::Object Constants(Napi::Env env) {
  Napi::Object c = Napi::Object::New(env);
  auto set = [&](const char* name, double v) { c.Set(name, Napi::Number::New(env, v)); };
  set("P_ALL", P_ALL);
  set("P_PID", P_PID);
  set("P_PGID", P_PGID);
  set("P_PIDFD", sys::kPIdfd);
  set("WEXITED", WEXITED);
  set("WSTOPPED", WSTOPPED);
  set("WCONTINUED", WCONTINUED);
  set("WNOHANG", WNOHANG);
  set("WNOWAIT", WNOWAIT);
  set("__WNOTHREAD", 0x20000000);
  set("__WALL", 0x40000000);
  set("__WCLONE", 0x80000000u);
  set("CLD_EXITED", CLD_EXITED);
  set("CLD_KILLED", CLD_KILLED);
  set("CLD_DUMPED", CLD_DUMPED);
  set("CLD_TRAPPED", CLD_TRAPPED);
  set("CLD_STOPPED", CLD_STOPPED);
  set("CLD_CONTINUED", CLD_CONTINUED);
  set("PIDFD_NONBLOCK", sys::kPidfdNonblock);
  set("PIDFD_SIGNAL_THREAD", sys::kPidfdSignalThread);
  set("PIDFD_SIGNAL_THREAD_GROUP", sys::kPidfdSignalThreadGroup);
  set("PIDFD_SIGNAL_PROCESS_GROUP", sys::kPidfdSignalProcessGroup);
  set("PIDFD_SELF_THREAD", sys::kPidfdSelfThread);
  set("PIDFD_SELF_THREAD_GROUP", sys::kPidfdSelfThreadGroup);
  set("CLOSE_RANGE_UNSHARE", sys::kCloseRangeUnshare);
  set("CLOSE_RANGE_CLOEXEC", sys::kCloseRangeCloexec);
  set("LOCK_SH", LOCK_SH);
  set("LOCK_EX", LOCK_EX);
  set("LOCK_UN", LOCK_UN);
  set("LOCK_NB", LOCK_NB);
  return c;
}

}  // namespace

void InitPrimitives(Napi::Env env, Napi::Object exports) {
  SetFunctions(env, exports,
               {{"pidfdOpen", PidfdOpen},
                {"pidfdSendSignal", PidfdSendSignal},
                {"waitid", Waitid},
                {"closeRange", CloseRange},
                PROCPIN_TEST_ONLY("closeRangeLoop", CloseRangeLoop),
                {"flock", IntCall<sys::FlockOnce>},
                {"closeFd", IntCall<sys::CloseFd>},
                {"setPdeathsig", IntCall<sys::SetPdeathsig>},
                {"getPdeathsig", IntCall<sys::GetPdeathsig>},
                {"setChildSubreaper", SetChildSubreaper},
                {"getChildSubreaper", IntCall<sys::GetChildSubreaper>},
                {"sigchldIgnored", IntCall<sys::SigchldIgnored>},
                {"hasPidfdGroupSignal", HasPidfdGroupSignal},
                {"procStat", ProcStat},
                {"strerror", Strerror}});
  exports.Set("constants", Constants(env));
}

}  // namespace procpin
