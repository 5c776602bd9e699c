// Whether anybody listens on a Unix socket a sweep candidate names, asked without resolving its
// name again.
#pragma once

namespace procpin::sweep {

// A non-blocking connect to the socket open as `pathfd` (an O_PATH descriptor), through
// /proc/self/fd so that the name is not resolved again. 1: a listener (connected, or the backlog
// is full); 0: refused (nobody is bound); -errno otherwise. The socket type is not known from
// the inode, so stream, seqpacket and datagram are tried in turn (EPROTOTYPE: wrong type).
int ProbeSocket(int pathfd, const char** syscall_name);

}  // namespace procpin::sweep
