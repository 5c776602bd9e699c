// procpin-init's outer after the setup (native/init/outer.c).
#ifndef PROCPIN_INIT_OUTER_H
#define PROCPIN_INIT_OUTER_H

#include <sys/types.h>

// Reads the forwarded signals from SIGFD (a signalfd of the forwarded set, which is blocked) and
// passes each the kernel did not send itself to INNER; reads the inner's words from WORDFD (a
// stop of the command as -signal, or its raw wait status) and stops as the command did; once the
// inner is reaped, writes the command's raw status to STATFD and ends the same way (the same exit
// code, or death by the same signal without a core file of ours).
_Noreturn void outer_loop(pid_t inner, int sigfd, int wordfd, int statfd);

#endif
