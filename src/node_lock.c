/*
 * node_lock.c: one process per data directory.  DATA/node.lock is held
 * with flock(2) for the life of the process that owns the directory (the
 * server, or `fieldstore check-index` on a stopped node), as
 * Elasticsearch's NodeEnvironment holds node.lock; the lock goes with the
 * process, even on SIGKILL.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define FDS_LOCK_FILE "node.lock"

/* Hold an exclusive lock on DATA/node.lock for the life of the process, so
 * that a second server cannot open the same data directory (the lock goes
 * with the process, even on SIGKILL).  The file records the holder's pid
 * for the message a second server prints.  Returns 0, or 1 after printing
 * why. */
int fds_cli_lock_data_dir(const char *data)
{
    if (mkdir(data, 0755) && errno != EEXIST) {
        fprintf(stderr, "fieldstore: cannot create data directory [%s]: %s\n", data,
                strerror(errno));
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", data, FDS_LOCK_FILE);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "fieldstore: cannot open [%s]: %s\n", path, strerror(errno));
        return 1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        fprintf(stderr, "fieldstore: data directory %s is in use by pid %s\n", data,
                pid[0] ? pid : "(unknown)");
        close(fd);
        return 1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n)
        fprintf(stderr, "fieldstore: warning: cannot write pid to [%s]\n", path);
    return 0; /* fd stays open: the lock lasts as long as the process */
}
