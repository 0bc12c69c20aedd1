/*
 * synthgrow.h: synthetic access-log documents whose vocabularies grow as a
 * real log's do (Heaps' law), made from a real sample.  synthlogs' default
 * generator; see synthgrow.c for the model and docs/datasets.md for figures.
 *
 * Why it exists: resampling a 10,000-line sample caps every vocabulary at the
 * sample's (7,047 URLs, 605 addresses): at 1M documents each URL repeats ~140
 * times, which no real log does.  In a real log the distinct count D(n) of a
 * field after n lines follows D(n) ~= K n^beta (Heaps' law; in the bundled
 * sample beta is 0.92 for url, 0.78 remote_addr, 0.74 user_agent, 0.77
 * referrer).  This module fits K and beta per field on the sample and makes
 * document n introduce a new value with the probability dD/dn, so the
 * generated counts follow the sample's curve beyond its size.
 *
 * Determinism: integer arithmetic only (splitmix64 hashing, fixed-point log2
 * and exp2); the same sample, seed and document number give the same bytes
 * on every machine.  Document n depends only on documents 1..n, so a shorter
 * run is a byte prefix of a longer one.
 *
 * Threading: a generator is used by one thread at a time.
 */
#ifndef FDS_SYNTHGROW_H
#define FDS_SYNTHGROW_H

#include <stddef.h>
#include <stdint.h>

#include "logparse.h"

/* The fields whose vocabularies grow, in the order of fds_synthgrow_law(). */
enum {
    FDS_SYNTHGROW_URL,
    FDS_SYNTHGROW_ADDR,       /* remote_addr */
    FDS_SYNTHGROW_AGENT,      /* user_agent */
    FDS_SYNTHGROW_REFERRER,
    FDS_SYNTHGROW_FIELDS
};

typedef struct fds_synthgrow fds_synthgrow;

/*
 * Build a generator from `nrec` parsed sample records (in log order; their
 * slices must stay valid until fds_synthgrow_free) and `seed`.  Fits the law
 * of each field on the sample's own prefixes (lines N/10, N/5, N/2, N).
 * Returns 0 and sets *out, FDS_EINVAL when nrec is 0 or above UINT32_MAX,
 * FDS_ENOMEM.
 */
int fds_synthgrow_create(const fds_logrec *recs, size_t nrec, uint64_t seed,
                         fds_synthgrow **out);

/* Free a generator; NULL is a no-op. */
void fds_synthgrow_free(fds_synthgrow *g);

/*
 * The fitted law of `field` (FDS_SYNTHGROW_*): beta and K in Q24 fixed point
 * (value * 2^24), i.e. D(n) ~= K n^beta.  For reports and tests.
 */
void fds_synthgrow_law(const fds_synthgrow *g, int field, int64_t *beta_q24,
                       int64_t *k_q24);

/*
 * Fill the parsed members of `rec` for document `n`: every member that
 * fds_logparse_line sets, except epoch and tz_offset_min (the caller's
 * clock).  Documents must be asked for in order n = 1, 2, 3, ... (each new
 * value is checked against the ones made before it).  String slices point
 * into the sample or into buffers of `g`, valid until the next call.
 * Returns 0, FDS_EINVAL when n is not the next number, FDS_ENOMEM.
 */
int fds_synthgrow_doc(fds_synthgrow *g, uint64_t n, fds_logrec *rec);

#endif
