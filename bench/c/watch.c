// Watches processes through pidfds and says when the last of them exited. Long-lived, driven by
// stdin, so that arming it costs no spawn inside a measurement:
//   "watch P1 P2 ..."  opens a pidfd on each, replies "armed K" (K still running), then polls
//                      until every one exited and replies "gone T" with T the CLOCK_MONOTONIC ns
//                      of the poll that saw the last exit.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  static char line[1 << 20];
  static struct pollfd fds[20000];
  while (fgets(line, sizeof line, stdin)) {
    if (strncmp(line, "watch", 5) != 0) {
      printf("error unknown command\n");
      continue;
    }
    int n = 0;
    for (char *tok = strtok(line + 5, " \n"); tok && n < 20000; tok = strtok(NULL, " \n")) {
      int fd = (int)syscall(SYS_pidfd_open, atoi(tok), 0);
      if (fd >= 0) fds[n++] = (struct pollfd){fd, POLLIN, 0};
    }
    printf("armed %d\n", n);
    int64_t last = now_ns();
    while (n > 0) {
      int r = poll(fds, (nfds_t)n, -1);
      if (r < 0) {
        if (errno == EINTR) continue;
        break;
      }
      last = now_ns();
      for (int i = 0; i < n;) {
        if (fds[i].revents) {
          close(fds[i].fd);
          fds[i] = fds[--n];
        } else {
          i++;
        }
      }
    }
    printf("gone %lld\n", (long long)last);
  }
  return 0;
}
