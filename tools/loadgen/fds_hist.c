/*
 * fds_hist.c: the log-bucketed histogram described in fds_hist.h.
 */
#include "fds_hist.h"

#include <stdlib.h>
#include <string.h>

struct fds_hist {
    uint64_t count;
    uint64_t min;
    uint64_t max;
    long double sum;
    uint64_t buckets[FDS_HIST_NBUCKETS];
};

fds_hist *fds_hist_create(void)
{
    fds_hist *h = calloc(1, sizeof *h);
    if (h)
        h->min = UINT64_MAX;
    return h;
}

void fds_hist_free(fds_hist *h)
{
    free(h);
}

void fds_hist_reset(fds_hist *h)
{
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

uint32_t fds_hist_index(uint64_t v)
{
    if (v > FDS_HIST_MAX_VALUE)
        v = FDS_HIST_MAX_VALUE;
    if (v < FDS_HIST_SUB_BUCKETS)
        return (uint32_t)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= 11 */
    unsigned shift = e - FDS_HIST_SUB_BITS;
    uint64_t sub = (v >> shift) - (UINT64_C(1) << FDS_HIST_SUB_BITS);
    return FDS_HIST_SUB_BUCKETS + (e - (FDS_HIST_SUB_BITS + 1)) * (1u << FDS_HIST_SUB_BITS) +
           (uint32_t)sub;
}

void fds_hist_bucket_range(uint32_t idx, uint64_t *lo, uint64_t *hi)
{
    if (idx < FDS_HIST_SUB_BUCKETS) {
        *lo = *hi = idx;
        return;
    }
    uint32_t rel = idx - FDS_HIST_SUB_BUCKETS;
    unsigned e = FDS_HIST_SUB_BITS + 1 + rel / (1u << FDS_HIST_SUB_BITS);
    uint64_t sub = rel % (1u << FDS_HIST_SUB_BITS) + (UINT64_C(1) << FDS_HIST_SUB_BITS);
    unsigned shift = e - FDS_HIST_SUB_BITS;
    *lo = sub << shift;
    *hi = ((sub + 1) << shift) - 1;
}

void fds_hist_record(fds_hist *h, uint64_t v)
{
    h->buckets[fds_hist_index(v)]++;
    h->count++;
    h->sum += (long double)v;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

void fds_hist_merge(fds_hist *dst, const fds_hist *src)
{
    if (src->count == 0)
        return;
    for (uint32_t i = 0; i < FDS_HIST_NBUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t fds_hist_count(const fds_hist *h)
{
    return h->count;
}

uint64_t fds_hist_min(const fds_hist *h)
{
    return h->count ? h->min : 0;
}

uint64_t fds_hist_max(const fds_hist *h)
{
    return h->max;
}

double fds_hist_mean(const fds_hist *h)
{
    return h->count ? (double)(h->sum / (long double)h->count) : 0.0;
}

double fds_hist_percentile(const fds_hist *h, double p)
{
    if (h->count == 0)
        return 0.0;
    if (p >= 100.0)
        return (double)h->max;
    if (p < 0.0)
        p = 0.0;
    /* nearest rank: the ceil(p/100 * n)-th smallest value, at least the 1st */
    long double want = (long double)p / 100.0L * (long double)h->count;
    uint64_t rank = (uint64_t)want;
    if ((long double)rank < want)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < FDS_HIST_NBUCKETS; i++) {
        seen += h->buckets[i];
        if (seen >= rank) {
            uint64_t lo, hi;
            fds_hist_bucket_range(i, &lo, &hi);
            double mid = ((double)lo + (double)hi) / 2.0;
            if (mid < (double)h->min)
                mid = (double)h->min;
            if (mid > (double)h->max)
                mid = (double)h->max;
            return mid;
        }
    }
    return (double)h->max;
}
