// spawn's arguments, unpacked from JavaScript into a spawn::Request for the syscall core
// (core/spawn), and the spawned child handed to Adopt. lib/child validates everything first;
// the checks here only keep direct misuse of the binding from crashing.
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "../core/spawn.h"
#include "../core/sys.h"
#include "../glue.h"
#include "state.h"

namespace procpin::child {

namespace {

bool StringArray(Napi::Env env, Napi::Value v, const char* what, std::vector<std::string>* out) {
  if (!v.IsArray()) {
    Napi::TypeError::New(env, std::string(what) + " must be an array").ThrowAsJavaScriptException();
    return false;
  }
  Napi::Array a = v.As<Napi::Array>();
  uint32_t n = a.Length();
  out->reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    Napi::Value e = a.Get(i);
    if (!e.IsString()) {
      Napi::TypeError::New(env, std::string(what) + " must hold strings")
          .ThrowAsJavaScriptException();
      return false;
    }
    out->push_back(e.As<Napi::String>().Utf8Value());
    if (out->back().find('\0') != std::string::npos) {
      Napi::TypeError::New(env, std::string(what) + " must not hold NUL bytes")
          .ThrowAsJavaScriptException();
      return false;
    }
  }
  return true;
}

// The environment as one string, its entries separated by NUL (lib/child joins them): one
// conversion instead of a call into V8 per variable, and one allocation. Its entries point into
// `block`, which keeps them alive; an empty string is no variable.
bool EnvBlock(Napi::Env env, Napi::Value v, std::string* block, std::vector<char*>* out) {
  if (!v.IsString()) {
    Napi::TypeError::New(env, "env must be a string").ThrowAsJavaScriptException();
    return false;
  }
  *block = v.As<Napi::String>().Utf8Value();
  if (!block->empty()) {
    out->push_back(block->data());
    for (size_t i = 0; i < block->size(); ++i) {
      if ((*block)[i] == '\0') out->push_back(block->data() + i + 1);
    }
  }
  out->push_back(nullptr);
  return true;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

const char* StageName(int stage) {
  switch (stage) {
    case spawn::kStageChdir:
      return "chdir";
    case spawn::kStageExecve:
      return "execve";
    case spawn::kStageSetpgid:
      return "setpgid";
    case spawn::kStageSetsid:
      return "setsid";
    case spawn::kStagePdeathsig:
      return "prctl";
    case spawn::kStageStdio:
      return "dup3";
    case spawn::kStageCloseFds:
      return "close_range";
    case spawn::kStageSignals:
      return "sigaction";
    case spawn::kStageSetgid:
      return "setgid";
    case spawn::kStageSetuid:
      return "setuid";
    case spawn::kStageNonblock:
      return "fcntl";
    case spawn::kStageCgroup:
      return "cgroup";
    default:
      return "spawn";
  }
}

// What spawn's arguments unpack to: the strings and arrays the Request points into, kept alive
// for the call.
struct SpawnArgs {
  std::vector<std::string> candidates, argv;
  std::string envblock;
  std::string cwd;
  bool has_cwd = false;
  std::vector<int> stdio;
  std::vector<const char*> cand;
  std::vector<char*> argvp, envp, sh_argv;
  spawn::Request req;
  int end_kill = -1;
};

// Fills `a` from (candidates, argv, env, cwd, stdio, group, pdeathsig, closeFds, onExit
// [, cgroupProcs[, creds[, endKill]]]). False with a JavaScript exception pending when an argument
// is bad.
bool Unpack(const Napi::CallbackInfo& info, SpawnArgs* a) {
  Napi::Env env = info.Env();
  // env is always a copy (lib/child/spawn-options.ts takes it from process.env): the CLONE_VM
  // child never reads the live environ, which a SHARE_ENV Worker may be reallocating meanwhile.
  // It comes as one string, the variables separated by NUL (see EnvBlock).
  if (info.Length() < 9 || !StringArray(env, info[0], "candidates", &a->candidates) ||
      !StringArray(env, info[1], "argv", &a->argv) ||
      !EnvBlock(env, info[2], &a->envblock, &a->envp)) {
    if (!env.IsExceptionPending()) {
      Napi::TypeError::New(env, "spawn takes 9 arguments").ThrowAsJavaScriptException();
    }
    return false;
  }
  a->has_cwd = info[3].IsString();
  if (a->has_cwd) {
    a->cwd = info[3].As<Napi::String>().Utf8Value();
    if (a->cwd.find('\0') != std::string::npos) {
      Napi::TypeError::New(env, "cwd must not hold NUL bytes").ThrowAsJavaScriptException();
      return false;
    }
  } else if (!info[3].IsNull()) {
    Napi::TypeError::New(env, "cwd must be a string or null").ThrowAsJavaScriptException();
    return false;
  }
  if (!info[4].IsArray()) {
    Napi::TypeError::New(env, "stdio must be an array").ThrowAsJavaScriptException();
    return false;
  }
  Napi::Array stdio_a = info[4].As<Napi::Array>();
  a->stdio.resize(stdio_a.Length());
  for (uint32_t i = 0; i < a->stdio.size(); ++i) {
    Napi::Value e = stdio_a.Get(i);
    double d = e.IsNumber() ? e.As<Napi::Number>().DoubleValue() : -1e18;
    if (!(d >= spawn::kStdioClose && d <= INT32_MAX) || d != static_cast<int>(d)) {
      Napi::TypeError::New(env, "stdio entries must be descriptors or kinds")
          .ThrowAsJavaScriptException();
      return false;
    }
    a->stdio[i] = static_cast<int>(d);
  }
  int32_t group, pdeathsig;
  if (!Int32Arg(info, 5, &group) || !Int32Arg(info, 6, &pdeathsig)) return false;
  if (!info[7].IsBoolean() || !info[8].IsFunction()) {
    Napi::TypeError::New(env, "closeFds must be a boolean and onExit a function")
        .ThrowAsJavaScriptException();
    return false;
  }
  int32_t cgroup_procs = -1;
  if (info.Length() > 9 && !info[9].IsUndefined() && !Int32Arg(info, 9, &cgroup_procs)) {
    return false;
  }
  if (group < spawn::kGroupNew || group > spawn::kGroupInherit || pdeathsig < 0 || pdeathsig > 64 ||
      cgroup_procs < -1) {
    Napi::RangeError::New(env, "bad group or signal").ThrowAsJavaScriptException();
    return false;
  }

  for (auto& c : a->candidates) a->cand.push_back(c.c_str());
  a->argvp = CStrings(a->argv);
  spawn::Request& req = a->req;
  req.candidates = a->cand.data();
  req.ncandidates = a->cand.size();
  req.argv = a->argvp.data();
  // ["/bin/sh", <candidate>, argv[1], ..., nullptr]
  static char kSh[] = "/bin/sh";
  a->sh_argv.reserve(a->argvp.size() + 1);
  a->sh_argv.push_back(kSh);
  a->sh_argv.push_back(nullptr);
  for (size_t i = 1; i < a->argvp.size(); ++i)
    a->sh_argv.push_back(a->argvp[i]);  // ends with nullptr
  if (a->argvp.size() <= 1) a->sh_argv.push_back(nullptr);
  req.sh_argv = a->sh_argv.data();
  req.envp = a->envp.data();
  req.cwd = a->has_cwd ? a->cwd.c_str() : nullptr;
  req.group = group;
  req.pdeathsig = pdeathsig;
  req.cgroup_procs = cgroup_procs;
  req.close_fds = info[7].As<Napi::Boolean>().Value();
  req.stdio = a->stdio.data();
  req.nstdio = static_cast<int>(a->stdio.size());
  if (info.Length() > 10 && !info[10].IsUndefined()) {
    Napi::Value u = info[10].IsArray() ? info[10].As<Napi::Array>().Get(0u) : Napi::Value();
    Napi::Value g = info[10].IsArray() ? info[10].As<Napi::Array>().Get(1u) : Napi::Value();
    if (u.IsEmpty() || g.IsEmpty() || !u.IsNumber() || !g.IsNumber()) {
      Napi::TypeError::New(env, "creds must be [uid, gid]").ThrowAsJavaScriptException();
      return false;
    }
    double ud = u.As<Napi::Number>().DoubleValue(), gd = g.As<Napi::Number>().DoubleValue();
    if (!(ud >= -1 && ud <= 4294967294.0 && ud == static_cast<long>(ud)) ||
        !(gd >= -1 && gd <= 4294967294.0 && gd == static_cast<long>(gd))) {
      Napi::RangeError::New(env, "bad uid or gid").ThrowAsJavaScriptException();
      return false;
    }
    req.uid = static_cast<long>(ud);
    req.gid = static_cast<long>(gd);
  }
  if (info.Length() > 11 && !info[11].IsUndefined()) {
    int32_t end_kill;
    if (!Int32Arg(info, 11, &end_kill)) return false;
    if (end_kill < -1 || end_kill > 1) {
      Napi::RangeError::New(env, "endKill must be -1, 0 or 1").ThrowAsJavaScriptException();
      return false;
    }
    a->end_kill = end_kill;
  }
  return true;
}

}  // namespace

// spawn(candidates, argv, env, cwd, stdio, group, pdeathsig, closeFds, onExit
//       [, cgroupProcs[, creds[, endKill]]])
//   -> { handle, pid, fds } or { errno, stage }
// cgroupProcs: a descriptor of a cgroup's cgroup.procs open for writing, or -1.
// creds: [uid, gid], -1 = unchanged.
// endKill: a process group's leader, armed in the end-kill table (1: with the group signal through
// its pidfd, 0: without); -1 = not a leader.
Napi::Value Spawn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* reg = static_cast<Registry*>(info.Data());
  SpawnArgs a;
  if (!Unpack(info, &a)) return Napi::Value();
  std::vector<int> parent_fds(a.stdio.size(), -1);
  spawn::Outcome out;
  out.parent_fds = parent_fds.data();
  int r = spawn::Spawn(a.req, &out);
  if (r < 0) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("errno", Napi::Number::New(env, r));
    o.Set("stage", Napi::String::New(env, StageName(out.stage)));
    return o;
  }
  // A leader (end_kill >= 0) is in the end-kill table before this returns: no JavaScript runs,
  // nor can a Worker's termination fall, between its start and its arming.
  Napi::Value h =
      Adopt(env, reg, out.pid, out.pidfd, Kind::kChild, info[8].As<Napi::Function>(), a.end_kill);
  if (h.IsEmpty() || h.IsNumber()) {  // not made (Adopt killed and reaped the child): no fds left
    for (int fd : parent_fds) {
      if (fd >= 0) close(fd);
    }
    return h;
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("handle", h);
  o.Set("pid", Napi::Number::New(env, out.pid));
  Napi::Array fds = Napi::Array::New(env, parent_fds.size());
  for (uint32_t i = 0; i < parent_fds.size(); ++i)
    fds.Set(i, Napi::Number::New(env, parent_fds[i]));
  o.Set("fds", fds);
  return o;
}

}  // namespace procpin::child
