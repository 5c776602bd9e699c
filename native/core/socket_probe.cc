#include "socket_probe.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace procpin::sweep {

int ProbeSocket(int pathfd, const char** syscall_name) {
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d", pathfd);
  const int types[] = {SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM};
  for (int type : types) {
    int s = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0) {
      *syscall_name = "socket";
      return -errno;
    }
    int r;
    do {
      r = connect(s, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr);
    } while (r != 0 && errno == EINTR);
    int e = r == 0 ? 0 : errno;
    close(s);
    if (r == 0 || e == EAGAIN || e == EINPROGRESS) return 1;
    if (e == ECONNREFUSED) return 0;
    if (e == EPROTOTYPE) continue;
    *syscall_name = "connect";
    return -e;
  }
  *syscall_name = "connect";
  return -EPROTOTYPE;
}

}  // namespace procpin::sweep
