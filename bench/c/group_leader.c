// A process-group leader with N sleeping members, for the group-cleanup benchmark.
//   group_leader N stay|exit
// Forks N members (each waits in pause() with stdio closed), prints "pids P1 P2 ..." and
// "ready" on stdout, then waits for ever (stay), or exits as soon as a byte (or EOF) arrives on
// stdin, orphaning them (exit).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int n = atoi(argv[1]);
  int stay = strcmp(argv[2], "stay") == 0;
  printf("pids");
  for (int i = 0; i < n; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 3;
    }
    if (pid == 0) {
      close(0);
      close(1);
      close(2);
      for (;;) pause();
    }
    printf(" %d", (int)pid);
  }
  printf("\nready\n");
  fflush(stdout);
  if (!stay) {
    char c;
    (void)!read(0, &c, 1);
    _exit(0);
  }
  for (;;) pause();
}
