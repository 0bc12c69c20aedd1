/*
 * fds_lgworkint.h: the parts the workloads of fds_lgwork.h share (the match
 * workload in fds_lgwork.c, the dashboard workload in fds_lgdash.c): the
 * seeded generator, appending a request message of a class, the search that
 * samples the index, and a growable list of strings.  Internal to loadgen.
 */
#ifndef FDS_LGWORKINT_H
#define FDS_LGWORKINT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "fds_lgwork.h"

#define FDS_LGWORK_SAMPLE_TIMEOUT_MS 30000

/* The next value of splitmix64 (Steele, Lea, Flood 2014) from state *s. */
uint64_t fds__lgwork_rand(uint64_t *s);

/* A uniform double in [0, 1) from the top 53 bits of fds__lgwork_rand. */
double fds__lgwork_unit(uint64_t *s);

/* Append the complete message `method` `path` (with `body` as JSON, or none
 * when NULL) of class `cls` to w; *cap is the capacity of w's arrays.
 * 0 or FDS_ENOMEM. */
int fds__lgwork_add(fds_lgwork *w, size_t *cap, const char *host, const char *method,
                    const char *path, const char *body, unsigned char cls);

/* POST `body` to `path` and parse the 200 answer into *root (caller
 * deletes).  `what` names the step in messages.  0, or an FDS_E* code
 * with a sentence in `msg`. */
int fds__lgwork_search(const fds_httpc_target *t, const char *path, const char *body,
                       const char *what, cJSON **root, char *msg, size_t msglen);

/* A growable list of owned strings. */
typedef struct fds__vlist {
    char **v;
    size_t n, cap;
} fds__vlist;

/* Append a copy of s[0..len).  0 or FDS_ENOMEM. */
int fds__vl_add(fds__vlist *l, const char *s, size_t len);
void fds__vl_free(fds__vlist *l);

/* Every value of the nf fields `names` in the hits' _source into vals[f]
 * (numbers as their decimal text, booleans as true/false), and for `url`
 * also its alphanumeric tokens into urltok[f] (urltok may be NULL).
 * 0 or FDS_ENOMEM. */
int fds__lgwork_collect(const cJSON *hits, char *const *names, int nf, fds__vlist *vals,
                        fds__vlist *urltok);

/* The share of each class among w's messages into w->class_share. */
void fds__lgwork_shares(fds_lgwork *w);

#endif
