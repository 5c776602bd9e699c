// procpin-init's outer once the setup is done (see procpin-init.c for the whole design): it
// passes the supervisor's signals on to the inner, mirrors the command's stops, and ends as the
// command did once the inner is gone.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "outer.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

// The command's status, as the outer's own: the same exit code, or death by the same signal
// (without a core file of ours).
static _Noreturn void mirror(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    kill(getpid(), sig);
    _exit(128 + sig);
  }
  _exit(125);
}

// The command's status to STATUSFD, then as the outer's own.
static _Noreturn void report_and_mirror(int statfd, int status) {
  char buf[24];
  int len = snprintf(buf, sizeof buf, "%d\n", status);
  if (len > 0) {
    ssize_t w = write(statfd, buf, (size_t)len);
    (void)w;
  }
  mirror(status);
}

// The outer stops as the command did (the terminal's SIGTSTP, SIGTTIN or SIGTTOU, which the outer
// itself has blocked, or a stop sent to the command), so that the supervisor sees its child
// stopped as it would see a plain group's leader, and continues it (SIGCONT, passed on) the same
// way. The signal is blocked for the signalfd: unblocked for this one delivery, whose default
// action stops us here until a SIGCONT.
static void stop_like(int sig) {
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  kill(getpid(), sig);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  sigprocmask(SIG_BLOCK, &one, NULL);
}

// One word from the inner: a stop of the command (negative: the signal), or its raw status.
static void on_word(int word, int* status, int* have_status) {
  if (word < 0) {
    stop_like(-word);
  } else {
    *status = word;
    *have_status = 1;
  }
}

// The outer after the setup: passes the supervisor's signals to the inner, mirrors the command's
// stops, and ends as the command did once the inner is gone.
_Noreturn void outer_loop(pid_t inner, int sigfd, int wordfd, int statfd) {
  int status = 0, have_status = 0;
  struct pollfd pf[2] = {{sigfd, POLLIN, 0}, {wordfd, POLLIN, 0}};
  for (;;) {
    if (poll(pf, 2, -1) < 0) continue;
    if (pf[1].revents) {
      int word;
      ssize_t n = read(wordfd, &word, sizeof word);
      if (n == (ssize_t)sizeof word) {
        on_word(word, &status, &have_status);
      } else if (n == 0) {
        pf[1].fd = -1;  // the inner is gone: its status (if any) was read
      }
    }
    if (!(pf[0].revents & POLLIN)) continue;
    struct signalfd_siginfo si;
    if (read(sigfd, &si, sizeof si) != (ssize_t)sizeof si) continue;
    int sig = (int)si.ssi_signo;
    if (sig == SIGCHLD) {
      int st;
      pid_t w = waitpid(inner, &st, WNOHANG);
      if (w != inner) continue;
      // Everything the inner wrote is in the pipe, and no one else holds its write end.
      if (pf[1].fd >= 0) {
        int word;
        while (read(wordfd, &word, sizeof word) == (ssize_t)sizeof word) {
          if (word >= 0) on_word(word, &status, &have_status);
        }
      }
      if (have_status) report_and_mirror(statfd, status);
      // The inner died without a word (killed from outside): say so the same way.
      mirror(st);
    }
    if (si.ssi_code != SI_KERNEL) kill(inner, sig);
  }
}
