// The floors the Node contenders are measured against: a long-lived C process that, on each
// command read from stdin, spawns one child and reports one figure on stdout. Being long-lived,
// it can be interleaved with the Node contenders of the same run (A B A B ...).
//
//   floor MIB          hold MIB mebibytes (allocated and touched) for the whole run
//   posix_spawn FILE   posix_spawn + waitpid;                      replies elapsed ns
//   clone FILE         clone(VM|VFORK|PIDFD) + poll + waitid;      replies elapsed ns
//   exitlat FILE OUT D clone FILE OUT D, poll the pidfd, read the child's CLOCK_MONOTONIC stamp
//                      from OUT; replies (poll woke) - (stamp) in ns
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct exec_args {
  char **argv;
  sigset_t *mask;
};

// Runs in the CLONE_VM child on its own stack: only async-signal-safe calls before execve.
static int child_exec(void *p) {
  struct exec_args *a = p;
  sigprocmask(SIG_SETMASK, a->mask, NULL);
  execve(a->argv[0], a->argv, environ);
  _exit(127);
}

static char *stack_top;

// clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD) as procpin's spawn does; returns the pidfd.
static int clone_spawn(char **argv, pid_t *pid_out) {
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);
  struct exec_args a = {argv, &old};
  int pidfd = -1;
  pid_t pid = clone(child_exec, stack_top, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &a, &pidfd);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (pid < 0) return -1;
  *pid_out = pid;
  return pidfd;
}

static void reap_pidfd(int pidfd) {
  siginfo_t si;
  while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 && errno == EINTR) {
  }
  close(pidfd);
}

static void wait_readable(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  while (poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
}

/* Starts argv by clone_spawn and waits until its pidfd is readable (it exited): the pidfd, or -1
 * (the error printed). */
static int clone_and_wait(char **argv) {
  pid_t pid;
  int pidfd = clone_spawn(argv, &pid);
  if (pidfd < 0) {
    printf("error %s\n", strerror(errno));
    return -1;
  }
  wait_readable(pidfd);
  return pidfd;
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
  if (mib) {
    size_t len = mib << 20;
    char *mem = malloc(len);
    if (!mem) return 2;
    memset(mem, 1, len);  // touch every page: the page tables are what a fork would copy
  }
  size_t stack_len = 64 * 1024;
  char *stack = mmap(NULL, stack_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return 2;
  stack_top = stack + stack_len;
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");

  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    char *words[8];
    int n = 0;
    for (char *tok = strtok(line, " \n"); tok && n < 7; tok = strtok(NULL, " \n")) words[n++] = tok;
    words[n] = NULL;
    if (n < 2) {
      printf("error usage\n");
      continue;
    }
    if (strcmp(words[0], "posix_spawn") == 0) {
      char *cargv[] = {words[1], NULL};
      int64_t t0 = now_ns();
      pid_t pid;
      int rc = posix_spawn(&pid, words[1], NULL, NULL, cargv, environ);
      if (rc) {
        printf("error %s\n", strerror(rc));
        continue;
      }
      int st;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      printf("%lld\n", (long long)(now_ns() - t0));
    } else if (strcmp(words[0], "clone") == 0) {
      char *cargv[] = {words[1], NULL};
      int64_t t0 = now_ns();
      int pidfd = clone_and_wait(cargv);
      if (pidfd < 0) continue;
      reap_pidfd(pidfd);
      printf("%lld\n", (long long)(now_ns() - t0));
    } else if (strcmp(words[0], "exitlat") == 0 && n >= 4) {
      char *cargv[] = {words[1], words[2], words[3], NULL};
      int pidfd = clone_and_wait(cargv);
      if (pidfd < 0) continue;
      int64_t woke = now_ns();
      reap_pidfd(pidfd);
      char buf[64] = {0};
      int fd = open(words[2], O_RDONLY | O_CLOEXEC);
      ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
      if (fd >= 0) close(fd);
      if (got <= 0) {
        printf("error no stamp\n");
        continue;
      }
      printf("%lld\n", (long long)(woke - strtoll(buf, NULL, 10)));
    } else {
      printf("error unknown command\n");
    }
  }
  return 0;
}
