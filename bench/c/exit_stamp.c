// A child that sleeps DELAY ms (so its parent is idle by then), records CLOCK_MONOTONIC into
// OUT, and exits at once: the exit-notification benchmark measures from that stamp.
//   exit_stamp OUT DELAY_MS
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return 3;
  long ms = strtol(argv[2], NULL, 10);
  struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&d, NULL);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  char buf[32];
  int len = snprintf(buf, sizeof buf, "%lld", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
  if (write(fd, buf, (size_t)len) != len) return 4;
  _exit(0);
}
