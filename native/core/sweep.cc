// The sweep of one directory: the candidates among its names, each then decided on its own
// (sweep_candidate.cc). See sweep.h for the contract.
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <utility>

#include "proc.h"
#include "sweep_candidate.h"
#include "sweep_fs.h"

namespace procpin::sweep {

const char* const kOutcomeNames[static_cast<int>(Outcome::kCount)] = {
    "removed",          "alive",    "locked", "listening", "not-owner", "symlink",
    "unsupported-type", "replaced", "mount",  "error",     "vanished",
};

int32_t ParseCandidate(std::string_view name, std::string_view prefix) {
  if (prefix.empty() || name.size() <= prefix.size()) return 0;
  if (name.compare(0, prefix.size(), prefix) != 0) return 0;
  size_t i = prefix.size();
  if (name[i] < '1' || name[i] > '9') return 0;  // no sign, no leading zero, not 0
  int64_t pid = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
    pid = pid * 10 + (name[i] - '0');
    if (pid > INT32_MAX) return 0;
  }
  if (i < name.size() && name[i] != '-' && name[i] != '.') return 0;
  return static_cast<int32_t>(pid);
}

void SweepDirectory(const char* dir, const Options& opts, Report* report) {
  Context ctx;
  ctx.opts = &opts;
  ctx.euid = geteuid();
  ctx.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (ctx.dirfd < 0) {
    report->err = errno;
    report->syscall = "open";
    return;
  }
  Stat dst;
  int r = StatFd(ctx.dirfd, &dst);
  if (r < 0) {
    report->err = -r;
    report->syscall = "fstat";
    close(ctx.dirfd);
    return;
  }
  ctx.dir_dev = dst.dev;

  // All names first, then the work: unlinking while a getdents cursor moves may skip names.
  DirBuf buf;
  r = ReadDir(ctx.dirfd, &buf, [&](const char* nm, unsigned char) {
    int32_t pid = ParseCandidate(nm, opts.prefix);
    if (pid > 0) {
      Entry e;
      e.name = nm;
      e.pid = pid;
      report->entries.push_back(std::move(e));
    }
  });
  if (r < 0) {
    report->err = -r;
    report->syscall = "scandir";
    report->entries.clear();
    close(ctx.dirfd);
    return;
  }

  // Without /proc, or with another namespace's: liveness from the kernel only.
  ctx.procfd = proc::OpenProc();
  if (ctx.procfd < 0) ctx.procfd = -1;
  for (Entry& e : report->entries) SweepOne(ctx, &e);
  if (ctx.procfd >= 0) close(ctx.procfd);
  close(ctx.dirfd);
}

}  // namespace procpin::sweep
