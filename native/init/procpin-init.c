// procpin-init: what holds a `contain: 'pidns'` group. procpin starts this program (its direct
// child, "the outer") in place of the command; the outer starts the namespace's init ("the
// inner", pid 1 of a new pid namespace, with a new mount namespace and, when unprivileged, a new
// user namespace), which mounts the namespace's own /proc and runs the command as its child.
//
//   supervisor ── outer (supervisor's namespace) ── inner (pid 1) ── command ── ...
//
// Why two: a namespace's init ignores every signal it has no handler for, also one it sends
// itself, so pid 1 cannot die by the command's signal; the outer can, and so reports the
// command's exact status (exit code, or death by the same signal) to the supervisor.
//
// Lifetime: the outer has the supervisor's parent-death signal (SIGKILL, set before its exec);
// the inner has SIGKILL as parent-death signal with the outer as parent, re-checked through a
// pipe whose end the outer holds (getppid() reads 0 across the namespace boundary). When the
// inner dies the kernel SIGKILLs every process of the namespace: setsid, setpgid and
// double-forked daemons included.
//
// Signals: SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP, SIGTTIN
// and SIGTTOU sent to the outer (by the supervisor) go to the inner, which sends them to every
// process of the namespace (kill(-1)). Signals the kernel itself sends (a terminal's ^C or ^Z, a
// background read's SIGTTIN, which reach the whole process group anyway) are not sent a second
// time, and never stop the outer: a stop of the command is passed from the inner to the outer,
// which then stops the same way, so that the supervisor sees its child stopped exactly when a
// plain group's leader would be (a terminal's job control relies on it), and continues it
// with SIGCONT, which is passed on. (Stopped by the terminal itself, the outer could stop while
// it still held the spawn's error stream, which the supervisor reads to its end.)
//
// The group's final SIGKILL is asked for with SIGRTMAX (not sent as SIGKILL to the outer, whose
// death would then be reported in place of the command's): the inner SIGKILLs every process of
// the namespace, reaps them all and reports the command's status, which the outer mirrors. The
// outer's parent-death signal, and procpin's SIGKILL when the outer does not answer, stay the
// backstop.
//
// When the command exits, the inner reaps every orphan; while other processes remain it sends
// them the group's killSignal (and SIGCONT) and waits up to the grace, then exits, and the kernel
// kills what is left.
//
// Arguments (all decimal):
//   procpin-init ERRFD STATUSFD KILLSIG GRACE_MS NCAND CANDIDATE... ARGV0 ARG...
// ERRFD is a stream whose peer procpin reads until end of file: a failure before the command's
// execve is written there as "STAGE ERRNO\n" (stage: userns, mount, clone, exec, setup), and
// before that "mntns FD\n", the outer's descriptor of the namespace's mount namespace (see
// main); a successful execve closes the last copy of it. STATUSFD, held by the outer alone, gets
// the command's raw wait status ("STATUS\n") just before the outer mirrors it: a core dump, which
// the outer does not repeat (it would write a core file of its own), is read there. The environment
// is the command's.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "outer.h"

extern char** environ;

static const int kForwarded[] = {SIGTERM,  SIGINT,  SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
                                 SIGWINCH, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU};
#define NFORWARDED (sizeof kForwarded / sizeof kForwarded[0])

static int g_errfd = -1;
static int g_statfd = -1;
static int g_killsig = SIGTERM;
static long g_grace = 5000;
static int g_ncand = 0;
static char** g_cand = NULL;
static char** g_argv = NULL;
static int g_life[2] = {-1, -1};    // outer holds [1]; the inner polls [0] for POLLHUP
static int g_status[2] = {-1, -1};  // the inner writes the command's stops and status to [1]
static int g_sigfd = -1;            // the outer's signalfd of the forwarded set
static uid_t g_uid;
static gid_t g_gid;
static int g_userns = 0;
#ifdef PROCPIN_TEST_HOOKS
static int g_hook[2] = {-1, -1};  // PROCPIN_INIT_TEST_STOP=inner: the inner waits on [0]
#endif

static void report(const char* stage, int err) {
  if (g_errfd < 0) return;
  char buf[64];
  int n = snprintf(buf, sizeof buf, "%s %d\n", stage, err);
  if (n > 0) {
    ssize_t w = write(g_errfd, buf, (size_t)n);
    (void)w;
  }
}

static _Noreturn void fail(const char* stage, int err, int code) {
  report(stage, err);
  _exit(code);
}

static int write_file(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t len = strlen(text);
  ssize_t w = write(fd, text, len);
  int e = w < 0 ? errno : (w == (ssize_t)len ? 0 : EIO);
  close(fd);
  return -e;
}

static void forwarded_set(sigset_t* set) {
  sigemptyset(set);
  for (size_t i = 0; i < NFORWARDED; ++i) sigaddset(set, kForwarded[i]);
  sigaddset(set, SIGCHLD);
  sigaddset(set, SIGRTMAX);
}

// The argv of `/bin/sh CANDIDATE ARG...` for a candidate that is not an executable (ENOEXEC),
// made before the command's clone: the clone shares our memory until its execve.
static char** g_sh_argv = NULL;
static _Noreturn void exec_command(void);

static void make_sh_argv(void) {
  int argc = 0;
  while (g_argv[argc] != NULL) ++argc;
  g_sh_argv = calloc((size_t)argc + 2, sizeof *g_sh_argv);
  if (g_sh_argv == NULL) return;
  g_sh_argv[0] = (char*)"/bin/sh";
  for (int i = 1; i < argc; ++i) g_sh_argv[i + 1] = g_argv[i];
}

// The command, in the inner's child (CLONE_VM | CLONE_VFORK: the inner waits until its execve
// or its exit): default dispositions (we only blocked), an empty mask, the execvp rules over the
// candidates procpin computed. Its descriptor table is its own.
static int command_main(void* arg) {
  (void)arg;
  close(g_life[0]);
  close(g_status[1]);
  exec_command();
}

static _Noreturn void exec_command(void) {
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, NULL);
  int eacces = 0, last = ENOENT;
  for (int k = 0; k < g_ncand; ++k) {
    execve(g_cand[k], g_argv, environ);
    int e = errno;
    if (e == ENOEXEC) {
      char** sh = g_sh_argv;
      if (sh == NULL) fail("exec", ENOMEM, 127);
      sh[1] = g_cand[k];
      execve("/bin/sh", sh, environ);
      fail("exec", errno, 127);
    }
    if (e == EACCES) {
      eacces = 1;
    } else if (e == ENOENT || e == ENOTDIR || e == ESTALE || e == ENODEV || e == ETIMEDOUT) {
      last = e;
    } else {
      fail("exec", e, e == ENOENT ? 127 : 126);
    }
  }
  int e = eacces ? EACCES : last;
  fail("exec", e, e == ENOENT ? 127 : 126);
}

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

// Pid 1 of the namespace.
static int inner_main(void* arg) {
  (void)arg;
  close(g_statfd);
  close(g_sigfd);
  close(g_life[1]);
  close(g_status[0]);
#ifdef PROCPIN_TEST_HOOKS
  if (g_hook[0] >= 0) {
    char c;
    ssize_t r = read(g_hook[0], &c, 1);
    (void)r;
    close(g_hook[0]);
    close(g_hook[1]);
  }
#endif
  // Dies with the outer; the outer may have died before the prctl: its end of the pipe is then
  // closed (getppid() would read 0 either way, the parent being outside the namespace).
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) fail("setup", errno, 125);
  struct pollfd p = {g_life[0], POLLIN, 0};
  if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLIN))) _exit(125);

  if (g_userns) {
    // The uid and gid the command would have had, mapped onto themselves: one line of our own
    // ids needs no privilege.
    char map[64];
    int r = write_file("/proc/self/setgroups", "deny");
    if (r < 0 && r != -ENOENT) fail("userns", -r, 125);
    snprintf(map, sizeof map, "%u %u 1", (unsigned)g_uid, (unsigned)g_uid);
    if ((r = write_file("/proc/self/uid_map", map)) < 0) fail("userns", -r, 125);
    snprintf(map, sizeof map, "%u %u 1", (unsigned)g_gid, (unsigned)g_gid);
    if ((r = write_file("/proc/self/gid_map", map)) < 0) fail("userns", -r, 125);
  }
  // The namespace's own /proc, in our own mount namespace: nothing propagates back to the
  // supervisor's mounts.
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) fail("mount", errno, 125);
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
    fail("mount", errno, 125);
  }

  make_sh_argv();
  static char cmd_stack[64 * 1024] __attribute__((aligned(16)));
  pid_t cmd =
      clone(command_main, cmd_stack + sizeof cmd_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
  if (cmd < 0) fail("clone", errno, 125);
  close(g_errfd);
  g_errfd = -1;

  sigset_t set;
  forwarded_set(&set);
  int have_status = 0, status = 0, killall = 0;
  long deadline = -1;
  for (;;) {
    // Reap everything that exited: the command and any orphan re-parented to us. A stop of the
    // command is passed to the outer, which stops the same way (see outer_loop).
    for (;;) {
      int st;
      pid_t w = waitpid(-1, &st, WNOHANG | WUNTRACED);
      if (w > 0 && WIFSTOPPED(st)) {
        if (w == cmd) {
          int stop = -WSTOPSIG(st);
          ssize_t n = write(g_status[1], &stop, sizeof stop);
          (void)n;
        }
        continue;
      }
      if (w > 0) {
        if (w == cmd) {
          have_status = 1;
          status = st;
          // Whatever else still runs gets killSignal and the grace, then dies with us.
          if (!killall) deadline = now_ms() + g_grace;
          kill(-1, g_killsig);
          if (g_killsig != SIGKILL && g_killsig != SIGCONT) kill(-1, SIGCONT);
        }
        continue;
      }
      if (w < 0 && errno == ECHILD && have_status) {
        ssize_t n = write(g_status[1], &status, sizeof status);
        (void)n;
        _exit(0);
      }
      break;
    }
    siginfo_t si;
    int sig;
    if (deadline >= 0) {
      long left = deadline - now_ms();
      if (left <= 0) break;
      struct timespec ts = {left / 1000, (left % 1000) * 1000000L};
      sig = sigtimedwait(&set, &si, &ts);
      if (sig < 0 && errno == EAGAIN) break;
    } else {
      sig = sigwaitinfo(&set, &si);
    }
    if (sig <= 0 || sig == SIGCHLD) continue;
    if (sig == SIGRTMAX) {
      // The group's final SIGKILL: everything else dies now; the reaps above report the
      // command's status and exit once nothing is left.
      kill(-1, SIGKILL);
      deadline = -1;
      g_killsig = SIGKILL;
      killall = 1;
      continue;
    }
    if (si.si_code != SI_KERNEL) kill(-1, sig);
  }
  // The grace ran out: our exit makes the kernel SIGKILL the rest.
  ssize_t n = write(g_status[1], &status, sizeof status);
  (void)n;
  _exit(0);
}

static int parse_int(const char* s, long lo, long hi, long* out) {
  char* end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static _Noreturn void usage(void) {
  fprintf(stderr, "procpin-init: started by procpin only (contain: 'pidns')\n");
  exit(2);
}

int main(int argc, char** argv) {
  long v;
  if (argc < 7) usage();
  if (parse_int(argv[1], 3, 1 << 20, &v) < 0) usage();
  g_errfd = (int)v;
  if (fcntl(g_errfd, F_SETFD, FD_CLOEXEC) < 0) usage();
  if (parse_int(argv[2], 3, 1 << 20, &v) < 0 || v == g_errfd) usage();
  g_statfd = (int)v;
  if (fcntl(g_statfd, F_SETFD, FD_CLOEXEC) < 0) usage();
  if (parse_int(argv[3], 1, 64, &v) < 0) usage();
  g_killsig = (int)v;
  if (parse_int(argv[4], 0, 0x7fffffff, &v) < 0) usage();
  g_grace = v;
  if (parse_int(argv[5], 1, argc - 7, &v) < 0) usage();
  g_ncand = (int)v;
  g_cand = argv + 6;
  g_argv = argv + 6 + g_ncand;
  if (g_argv[0] == NULL) usage();

  sigset_t set;
  forwarded_set(&set);
  sigprocmask(SIG_BLOCK, &set, NULL);

  if (pipe2(g_life, O_CLOEXEC) < 0 || pipe2(g_status, O_CLOEXEC) < 0) fail("setup", errno, 125);
  g_sigfd = signalfd(-1, &set, SFD_CLOEXEC);
  if (g_sigfd < 0) fail("setup", errno, 125);
#ifdef PROCPIN_TEST_HOOKS
  const char* stop_inner = getenv("PROCPIN_INIT_TEST_STOP");
  if (stop_inner != NULL && strcmp(stop_inner, "inner") == 0 && pipe2(g_hook, O_CLOEXEC) < 0) {
    fail("setup", errno, 125);
  }
#endif
  g_uid = geteuid();
  g_gid = getegid();
  int flags = CLONE_NEWPID | CLONE_NEWNS | SIGCHLD;
  // Unprivileged CLONE_NEWPID alone is EPERM: a user namespace of our own makes us privileged
  // over the new pid and mount namespaces.
  g_userns = g_uid != 0;
  static char stack[64 * 1024] __attribute__((aligned(16)));
  pid_t inner =
      clone(inner_main, stack + sizeof stack, flags | (g_userns ? CLONE_NEWUSER : 0), NULL);
  if (inner < 0 && errno == EPERM && !g_userns) {
    g_userns = 1;
    inner = clone(inner_main, stack + sizeof stack, flags | CLONE_NEWUSER, NULL);
  }
  if (inner < 0) fail(g_userns ? "userns" : "clone", errno, 125);
#ifdef PROCPIN_TEST_HOOKS
  // The test build only: someone else stops the inner (or the outer) before the command runs,
  // while the spawn's error stream is still open. The inner waits for the stop to be sent.
  if (g_hook[1] >= 0) {
    kill(inner, SIGSTOP);
    ssize_t w = write(g_hook[1], "", 1);
    (void)w;
    close(g_hook[0]);
    close(g_hook[1]);
  }
#endif
  // The namespace's mount namespace, held open: procpin opens it through /proc/OUTER/fd and
  // closes its copy off its event loop once the group has ended, so that the namespace's
  // teardown (its mounts' release waits for an RCU grace period) is not paid by the inner's
  // exit, which the command's status waits for.
  char path[48];
  snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)inner);
  int mntns = open(path, O_RDONLY | O_CLOEXEC);
  if (mntns >= 0) report("mntns", mntns);
#ifdef PROCPIN_TEST_HOOKS
  const char* stop = getenv("PROCPIN_INIT_TEST_STOP");
  if (stop != NULL && strcmp(stop, "outer") == 0) kill(getpid(), SIGSTOP);
#endif
  close(g_life[0]);
  close(g_status[1]);
  close(g_errfd);
  g_errfd = -1;

  outer_loop(inner, g_sigfd, g_status[0], g_statfd);
}
