// A process-group leader with N sleeping members, for the group-cleanup benchmark.
//   group_leader N stay|exit|orphans
// Members wait in pause() with stdio closed. The leader prints "pids P1 P2 ..." and "ready" on
// stdout, then:
//   stay     waits for ever (members are its children);
//   exit     exits as soon as a byte (or EOF) arrives on stdin, orphaning its members;
//   orphans  waits for ever, but the members were forked by an intermediate child that exited
//            at once: they are orphans in the leader's group from the start, and no walk of
//            the leader's descendants finds them.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void fork_members(int n) {
  printf("pids");
  for (int i = 0; i < n; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      exit(3);
    }
    if (pid == 0) {
      close(0);
      close(1);
      close(2);
      for (;;) pause();
    }
    printf(" %d", (int)pid);
  }
  printf("\n");
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int n = atoi(argv[1]);
  const char *mode = argv[2];
  if (strcmp(mode, "orphans") == 0) {
    fflush(stdout);
    pid_t mid = fork();
    if (mid < 0) return 3;
    if (mid == 0) {
      fork_members(n);
      _exit(0);
    }
    int st;
    waitpid(mid, &st, 0);
  } else {
    fork_members(n);
  }
  printf("ready\n");
  fflush(stdout);
  if (strcmp(mode, "exit") == 0) {
    char c;
    (void)!read(0, &c, 1);
    _exit(0);
  }
  for (;;) pause();
}
