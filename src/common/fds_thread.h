/*
 * fds_thread.h: the node's own threads, named and at a lower priority.
 */
#ifndef FDS_THREAD_H
#define FDS_THREAD_H

/*
 * The calling thread is named `name` (pthread_setname_np, at most 15
 * bytes: top -H, perf and /proc/PID/task/TID/comm show it) and runs at
 * nice `nice`, or at its own if that is higher already (setpriority on
 * its own tid: on Linux the nice value is per thread, and threads it
 * starts inherit it).  Errors are ignored: the thread then runs at the
 * priority it had.  Nice 10 weighs 110 against nice 0's 1024 (the
 * kernel's sched_prio_to_weight): such a thread takes what threads at
 * nice 0 leave of the CPU, and still about a tenth of what they want.
 */
void fds_thread_lower(const char *name, int nice);

#endif
