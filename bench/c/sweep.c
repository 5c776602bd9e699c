/* The baseline for bench/sweep.mjs: a plain C sweep of one directory doing the same checks as
 * procpin's (lstat, kill, open O_NOFOLLOW, fstat, flock, the name re-checked against the locked
 * inode, unlinkat/rmdir), nothing more.
 * Usage: sweep DIR PREFIX. Prints "<removed> <kept> <nanoseconds>" for the loop alone. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long parse_pid(const char *name, const char *prefix, size_t plen) {
  if (strncmp(name, prefix, plen) != 0) return 0;
  const char *p = name + plen;
  if (*p < '1' || *p > '9') return 0;
  long pid = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    pid = pid * 10 + (*p - '0');
    if (pid > 0x7fffffff) return 0;
  }
  if (*p != '\0' && *p != '-' && *p != '.') return 0;
  return pid;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s DIR PREFIX\n", argv[0]);
    return 2;
  }
  const char *prefix = argv[2];
  size_t plen = strlen(prefix);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) return perror("open"), 1;
  DIR *d = fdopendir(dup(dirfd));
  if (!d) return perror("fdopendir"), 1;
  /* Names first, as procpin does: unlinking while readdir moves may skip names. */
  size_t n = 0, cap = 1024;
  char **names = malloc(cap * sizeof *names);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (parse_pid(de->d_name, prefix, plen) == 0) continue;
    if (n == cap) names = realloc(names, (cap *= 2) * sizeof *names);
    names[n++] = strdup(de->d_name);
  }
  closedir(d);
  uid_t euid = geteuid();
  long removed = 0, kept = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = names[i];
    long pid = parse_pid(name, prefix, plen);
    struct stat st, fst;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) goto keep;
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) goto keep;
    if (st.st_uid != euid) goto keep;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) goto keep;
    int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (S_ISDIR(st.st_mode) ? O_DIRECTORY : O_NONBLOCK);
    int fd = openat(dirfd, name, flags);
    if (fd < 0) goto keep;
    if (fstat(fd, &fst) != 0 || fst.st_ino != st.st_ino || fst.st_dev != st.st_dev ||
        flock(fd, LOCK_EX | LOCK_NB) != 0) {
      close(fd);
      goto keep;
    }
    /* The name still names the inode we hold locked (nobody replaced it meanwhile). */
    struct stat now;
    if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != st.st_ino ||
        now.st_dev != st.st_dev) {
      close(fd);
      goto keep;
    }
    if (unlinkat(dirfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0) {
      close(fd);
      goto keep;
    }
    close(fd);
    removed++;
    continue;
  keep:
    kept++;
  }
  close(dirfd);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long long ns = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
  printf("%ld %ld %lld\n", removed, kept, ns);
  return 0;
}
