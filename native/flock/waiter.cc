#include "waiter.h"

#include <errno.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace procpin::flock {

std::mutex g_pending_mu;
std::vector<Waiter*> g_pending;

bool PendingOn(int fd) {
  for (Waiter* w : g_pending) {
    std::lock_guard<std::mutex> wg(w->mu);
    if (w->fd >= 0 && SameDescription(fd, w->fd)) return true;
  }
  return false;
}

void RemovePending(Waiter* w) {
  std::lock_guard<std::mutex> g(g_pending_mu);
  g_pending.erase(std::remove(g_pending.begin(), g_pending.end(), w), g_pending.end());
}

void WaitThread(void* arg) {
  Job job = *static_cast<Job*>(arg);
  delete static_cast<Job*>(arg);
  Waiter* w = job.waiter;
  // Created with every signal blocked; let only the wake signal in. (sigprocmask acts on the
  // calling thread on Linux.)
  sigset_t wake;
  sigemptyset(&wake);
  if (w->blocking) sigaddset(&wake, w->wake_sig);
  if (w->blocking) sigprocmask(SIG_UNBLOCK, &wake, nullptr);
  {
    std::lock_guard<std::mutex> g(w->mu);
    w->tid = static_cast<pid_t>(syscall(SYS_gettid));
  }
  int r;
  for (;;) {
    int fd;
    {
      std::lock_guard<std::mutex> g(w->mu);
      if (w->cancelled) {
        r = -ECANCELED;
        break;
      }
      fd = w->fd;  // stays open until this thread sets `finished`
    }
    if (w->blocking) {
      r = sys::FlockOnce(fd, w->op);
      if (r == -EINTR) continue;
      break;
    }
    r = sys::FlockOnce(fd, w->op | LOCK_NB);
    if (r != -EWOULDBLOCK && r != -EINTR) break;
    SleepMicros(2000);
  }
  {
    std::lock_guard<std::mutex> g(w->mu);
    if (r == 0 && w->cancelled) {
      // Taken just as the caller gave up: give it back.
      w->ReleaseFd(true);
      r = -ECANCELED;
    } else if (r != 0) {
      w->ReleaseFd(false);
    }
    w->result = r;
    w->finished = true;
  }
  Mailbox* m = job.mailbox;
  {
    std::lock_guard<std::mutex> g(m->mu);
    if (m->open) {
      m->done.push_back(job.id);
      uv_async_send(m->async);
    }
  }
  m->Unref();
  w->Unref();
}

}  // namespace procpin::flock
