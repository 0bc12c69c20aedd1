/*
 * fds_thread.c: see fds_thread.h.
 */
#include "fds_thread.h"

#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

void fds_thread_lower(const char *name, int nice)
{
    pthread_setname_np(pthread_self(), name);
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int cur = getpriority(PRIO_PROCESS, tid);
    if (!errno && cur < nice)
        (void)setpriority(PRIO_PROCESS, tid, nice);
}
