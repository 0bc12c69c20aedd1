/*
 * fds_sysstat.h: CPU and load readings from Linux /proc, and the controlled
 * background CPU load of `--background`.
 *
 * Why it exists: "QPS per CPU%" is only meaningful if the CPU is measured the
 * way everyone else measures it.  Conventions (as top(1) and Elasticsearch's
 * process.cpu.percent): a process's CPU% is (utime + stime) ticks over the
 * interval, divided by the interval, times 100 -- so 100% = one core fully
 * busy and a 2-core machine tops out at 200%.  System CPU% uses the same
 * scale: (total - idle - iowait) jiffies of the "cpu" line of /proc/stat over
 * total jiffies, times 100 times the number of CPUs.
 *
 * Sources: proc(5): /proc/<pid>/stat fields 14 (utime) and 15 (stime) in
 * clock ticks (sysconf(_SC_CLK_TCK)), field 5 (pgrp); /proc/stat "cpu" line;
 * /proc/loadavg.
 */
#ifndef FDS_SYSSTAT_H
#define FDS_SYSSTAT_H

#include <stdint.h>
#include <sys/types.h>

/* CPU time of one process, user + system, in seconds.  FDS_ENOTFOUND if the
 * process does not exist, FDS_EPARSE if its stat line is unreadable. */
int fds_sysstat_proc_cpu(pid_t pid, double *seconds);

/* CPU time, in seconds, of every live process whose process group is `pgid`
 * (a background load and all its workers).  Sets *nproc to how many were
 * found.  0 on success, FDS_EIO if /proc cannot be listed. */
int fds_sysstat_pgrp_cpu(pid_t pgid, double *seconds, int *nproc);

/* Machine-wide CPU counters from /proc/stat, in seconds summed over CPUs:
 * busy = user+nice+system+irq+softirq+steal, total = busy+idle+iowait. */
typedef struct fds_sysstat_cpu {
    double busy;
    double total;
} fds_sysstat_cpu;
int fds_sysstat_system_cpu(fds_sysstat_cpu *out);

/* System CPU% between two readings on the "100% = one core" scale. */
double fds_sysstat_system_percent(const fds_sysstat_cpu *a, const fds_sysstat_cpu *b);

/* The three load averages of /proc/loadavg; FDS_EIO if unreadable. */
int fds_sysstat_loadavg(double out[3]);

/* Number of online CPUs (>= 1). */
int fds_sysstat_ncpu(void);

/*
 * Background CPU load.  `spec` is "cpu=N,load=P" (N workers, each busy P%
 * of the time, 0 < P <= 100) optionally with ",tool=builtin" to skip
 * stress-ng.  Starts `stress-ng --cpu N --cpu-load P --timeout T` in a new
 * process group when stress-ng is on PATH (and still running 100 ms later),
 * else N forked burner processes that alternate busy/sleep in 10 ms periods.
 * stress-ng's own output goes to /dev/null.  `seconds` bounds the load's life
 * (it is also stopped by fds_sysstat_bg_stop()).  Returns a handle or NULL
 * with a sentence in `msg`.
 */
typedef struct fds_sysstat_bg fds_sysstat_bg;
fds_sysstat_bg *fds_sysstat_bg_start(const char *spec, double seconds, char *msg, size_t msglen);

/* CPU seconds taken so far by the load (all its processes). */
double fds_sysstat_bg_cpu(fds_sysstat_bg *bg);

/* "stress-ng" or "builtin"; requested workers and load percent. */
const char *fds_sysstat_bg_tool(const fds_sysstat_bg *bg);
int fds_sysstat_bg_workers(const fds_sysstat_bg *bg);
int fds_sysstat_bg_load(const fds_sysstat_bg *bg);

/* Stop the load (SIGTERM to its process group, then reap) and free; NULL ok. */
void fds_sysstat_bg_stop(fds_sysstat_bg *bg);

#endif
