// Terminal job control for the command line, the syscall core: which process group owns the
// terminal's foreground, handing it over, and saving and restoring the terminal's modes. Node has
// no tcsetpgrp; a program that runs a job on the user's terminal needs it to behave as a shell
// does. Every function returns 0 (or its result) or -errno; none blocks (the glue calls them on
// the event loop).
#pragma once

#include <termios.h>

namespace procpin::tty {

// The terminal's foreground process group; -ENOTTY when fd is not this process's controlling
// terminal.
int GetForeground(int fd);
// tcsetpgrp, with SIGTTOU blocked in the calling thread meanwhile (a background caller would
// otherwise be stopped by it). 0 or -errno.
int SetForeground(int fd, int pgid);
int GetAttr(int fd, struct termios* out);
// tcsetattr(TCSANOW), SIGTTOU blocked as for SetForeground. 0 or -errno.
int SetAttr(int fd, const struct termios* in);

}  // namespace procpin::tty
