/*
 * corrupt.c: an index failed by damage met at run time, and the texts
 * that name its files.
 *
 * Why: the server opens a segment after checking its .fdt tail and its
 * whole .tim, but a stored-fields block is checked only when it is read
 * (a search's fetch, a get, a merge).  A block or postings block that
 * fails its check then fails the whole index, as Elasticsearch fails a
 * shard on a CorruptIndexException (IndexShard.failShard), not only the
 * request that met it: health red, every request answered
 * corrupt_index_exception with the damaged file's name.  So that a
 * restart does not bring the index back green until the block is read
 * again, the reason is kept in a marker file, which start-up reads
 * (store.c) and `fieldstore check-index --exorcise` removes (check.c).
 *
 * On disk: DATA/indices/<uuid>/corrupted (FDS__CORRUPT_MARKER), the reason
 * as one line of text; Elasticsearch's `corrupted_<uuid>` file in a
 * shard's index folder plays the same part (Store.markStoreCorrupted).
 *
 * Every reason shown to a client names files relative to the data
 * directory (fds__err_relative), never by the server's absolute path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_int.h"

/* Remove every "<dir>/" from the NUL-terminated text t, in place. */
static void strip_dir(char *t, const char *dir, size_t dl)
{
    char *w = t;
    for (const char *p = t; *p;) {
        if (!strncmp(p, dir, dl) && p[dl] == '/') {
            p += dl + 1;
            continue;
        }
        *w++ = *p++;
    }
    *w = 0;
}

void fds__err_relative(const fds_store *s, fds_err *err)
{
    if (!err || !s->dir)
        return;
    size_t dl = strlen(s->dir);
    while (dl > 1 && s->dir[dl - 1] == '/')
        dl--; /* "--data /x/" names files "/x/indices/..." */
    if (!dl)
        return;
    strip_dir(err->reason, s->dir, dl);
    strip_dir(err->cause, s->dir, dl);
}

/* ---- the marker ---------------------------------------------------------- */

static char *marker_path(const fds_index *ix)
{
    size_t n = strlen(ix->dir) + sizeof FDS__CORRUPT_MARKER + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", ix->dir, FDS__CORRUPT_MARKER);
    return p;
}

/* Write the marker of ix holding `why` (fsync'd, then the folder), so a
 * crash right after still finds it.  Errors are logged: the index is
 * failed in memory either way. */
static void marker_write(fds_index *ix, const char *why)
{
    char *p = marker_path(ix);
    int fd = p ? open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    size_t n = strlen(why);
    bool ok = fd >= 0 && write(fd, why, n) == (ssize_t)n &&
              write(fd, "\n", 1) == 1 && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    int dfd = ok ? open(ix->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd >= 0) {
        ok = fsync(dfd) == 0;
        close(dfd);
    }
    if (!ok)
        fprintf(stderr, "fieldstore: [%s] cannot write the corruption marker "
                        "(the index stays failed until the next start): %s\n",
                ix->name, strerror(errno));
    free(p);
}

char *fds__corrupt_marker_read(const fds_index *ix)
{
    char *p = marker_path(ix);
    FILE *f = p ? fopen(p, "re") : NULL;
    free(p);
    if (!f)
        return NULL;
    char line[FDS_ERR_REASON_MAX];
    if (!fgets(line, sizeof line, f))
        line[0] = 0;
    fclose(f);
    line[strcspn(line, "\n")] = 0;
    return strdup(line);
}

void fds_index_fail_corrupt(fds_index *ix, fds_err *cause)
{
    fds__err_relative(ix->st, cause);
    fds__index_corrupted(ix, cause);
}

void fds__index_corrupted(fds_index *ix, const fds_err *cause)
{
    fds_err e = *cause;
    fds__err_relative(ix->st, &e);
    char *why = strdup(e.reason[0] ? e.reason : fds_strerror(e.code));
    char *none = NULL;
    if (!why || !atomic_compare_exchange_strong(&ix->failure, &none, why)) {
        free(why); /* failed before: the first reason stays */
        return;
    }
    fprintf(stderr, "fieldstore: index [%s] failed: %s (run `fieldstore "
                    "check-index` on the stopped node to repair it)\n",
            ix->name, why);
    marker_write(ix, why);
}


int fds__corrupt_marker_remove(const fds_index *ix)
{
    char *p = marker_path(ix);
    int rc = !p || (unlink(p) && errno != ENOENT) ? -1 : 0;
    free(p);
    return rc;
}
