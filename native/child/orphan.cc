// The process-wide reaper of children whose environment is gone (a terminated Worker's): after
// the Worker is gone nobody else would ever reap them. One thread for the whole process, made on
// first use, all signals blocked; it polls the children's pidfds (or, without them, looks on a
// 50 ms timer) and reaps each as it exits.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mutex>
#include <thread>
#include <vector>

#include "state.h"

namespace procpin::child {

namespace {

class Orphanage {
 public:
  static Orphanage& Get() {
    static Orphanage* instance = new Orphanage();  // never destroyed: the thread may outlive exit
    return *instance;
  }

  // Takes ownership of pidfd (may be -1).
  void Adopt(pid_t pid, int pidfd) {
    std::lock_guard<std::mutex> g(mu_);
    items_.push_back({pid, pidfd});
    if (!started_) {
      if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) < 0) wake_[0] = wake_[1] = -1;
      started_ = true;
      std::thread([this] { Run(); }).detach();
    } else if (wake_[1] >= 0) {
      char c = 1;
      ssize_t w = write(wake_[1], &c, 1);
      (void)w;
    }
  }

 private:
  struct Item {
    pid_t pid;
    int pidfd;
    bool idle_readable = false;  // polled readable with nothing to reap (traced): use the timer
  };

  // Reaps what has exited and drops what is not ours any more; fills `fds` with what to poll.
  // Returns whether a child needs the timer.
  bool Sweep(std::vector<pollfd>* fds) {
    bool need_timer = false;
    std::lock_guard<std::mutex> g(mu_);
    for (size_t i = 0; i < items_.size();) {
      siginfo_t si;
      int r = WaitChild(items_[i].pidfd, items_[i].pid, &si, WEXITED | WNOHANG);
      if (r < 0 || si.si_pid != 0) {  // reaped, or not ours to reap any more
        if (items_[i].pidfd >= 0) close(items_[i].pidfd);
        items_[i] = items_.back();
        items_.pop_back();
        continue;
      }
      if (items_[i].pidfd >= 0 && !items_[i].idle_readable) {
        fds->push_back({items_[i].pidfd, POLLIN, 0});
      } else {
        need_timer = true;
      }
      ++i;
    }
    return need_timer;
  }

  // A pidfd that polls readable stays readable: one whose child cannot be reaped yet (a tracer
  // has not waited) is looked at on the timer from now on, not polled in a spin.
  void MarkIdle(const std::vector<pollfd>& fds) {
    std::lock_guard<std::mutex> g(mu_);
    for (const pollfd& p : fds) {
      if (!(p.revents & (POLLIN | POLLHUP))) continue;
      for (Item& it : items_) {
        if (it.pidfd != p.fd) continue;
        siginfo_t si;
        if (WaitChild(it.pidfd, it.pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0) {
          it.idle_readable = true;
        }
      }
    }
  }

  void Run() {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);  // this thread only, on Linux
    std::vector<pollfd> fds;
    for (;;) {
      fds.clear();
      bool need_timer = Sweep(&fds);
      if (wake_[0] >= 0) fds.push_back({wake_[0], POLLIN, 0});
      int r = poll(fds.data(), fds.size(), need_timer || wake_[0] < 0 ? 50 : -1);
      if (r > 0 && wake_[0] >= 0 && (fds.back().revents & POLLIN)) {
        char buf[64];
        while (read(wake_[0], buf, sizeof buf) > 0) {
        }
      }
      if (r > 0) MarkIdle(fds);
    }
  }

  std::mutex mu_;
  std::vector<Item> items_;
  int wake_[2] = {-1, -1};
  bool started_ = false;
};

}  // namespace

void AdoptOrphan(pid_t pid, int pidfd) { Orphanage::Get().Adopt(pid, pidfd); }

}  // namespace procpin::child
