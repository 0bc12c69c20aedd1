/*
 * tdigest.c: t-digest as Elasticsearch 8's HybridDigest (see tdigest.h for
 * the algorithm and its sources).
 *
 * A digest is in one of two phases.  Exact: `vals` holds every value (a
 * value of weight w is kept w times, as SortingDigest does; the phase ends
 * before a weight could make that large), sorted lazily.  Merging: `md` is
 * a MergingDigest -- sorted centroids (mean[], weight[], `last` of them)
 * plus a buffer of unmerged points (tmean[], tweight[], `tused` of them);
 * when the buffer is full, buffer and centroids are sorted together and
 * swept once, each point joining the current centroid while the K_2 size
 * limit allows.  The sweep runs backwards every other time
 * (useAlternatingSort), always at the working compression 2 x compression.
 * Merging a digest into another adds the source's centroids to the
 * destination's buffer as weighted points (AbstractTDigest.add).
 */
#include "aggs/tdigest.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fds_error.h"

/* HybridDigest: switch to MergingDigest at round(compression) x this. */
#define TD_SORTING_PER_COMPRESSION 20
/* MergingDigest: compression below this is raised to it. */
#define TD_MIN_COMPRESSION 10.0
/* MergingDigest: centroid slots beyond the compression (weight-limit fudge). */
#define TD_SIZE_FUDGE 10.0
/* MergingDigest: buffered points per centroid slot (bufferSize = 5 size). */
#define TD_BUFFER_FACTOR 5
/* ScaleFunction.K_2's Z(compression, n) = 4 ln(n / compression) + 24. */
#define TD_K2_LOG_FACTOR 4.0
#define TD_K2_OFFSET 24.0

typedef struct td_merging {
    double c;           /* working compression while collecting */
    unsigned merge_count;
    double *mean, *weight;
    size_t cap, last;   /* slots / centroids in use */
    double total;       /* weight of the centroids */
    double *tmean, *tweight;
    size_t tcap, tused;
    double unmerged;    /* weight of the buffered points */
    size_t *order;      /* sort permutation, tcap entries */
    /* sort_order's scratch (keys, permutation), grown to the largest sweep
     * and kept: one allocation per digest, not per sweep */
    uint64_t *rkey;
    size_t *rtmp, rcap;
    double min, max;
} td_merging;

struct fds_tdigest {
    double compression;
    uint64_t max_sorting;   /* values kept before switching */
    uint64_t count;
    double min, max;
    /* exact phase */
    double *vals;
    size_t nvals, capvals;
    int sorted;
    /* merging phase (NULL before) */
    td_merging *md;
};

/* ---- shared helpers ---------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sort.stableSort: order[] by values[order[i]], ties by index. */
static int cmp_order(const void *a, const void *b, void *arg)
{
    const double *v = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (v[i] != v[j])
        return v[i] < v[j] ? -1 : 1;
    return (i > j) - (i < j);
}

/* AbstractTDigest.weightedAverage: clamped to [min(x1,x2), max(x1,x2)]. */
static double weighted_average(double x1, double w1, double x2, double w2)
{
    if (x1 > x2) {
        double t = x1; x1 = x2; x2 = t;
        t = w1; w1 = w2; w2 = t;
    }
    double x = (x1 * w1 + x2 * w2) / (w1 + w2);
    return fmax(x1, fmin(x, x2));
}

static void reverse_doubles(double *a, size_t n)
{
    for (size_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
        double t = a[i]; a[i] = a[j]; a[j] = t;
    }
}

static int grow_doubles(double **a, size_t n)
{
    double *p = realloc(*a, n * sizeof **a);
    if (!p)
        return FDS_ENOMEM;
    *a = p;
    return 0;
}

/* ---- MergingDigest ----------------------------------------------------- */

static void md_free(td_merging *d)
{
    if (!d)
        return;
    free(d->mean);
    free(d->weight);
    free(d->tmean);
    free(d->tweight);
    free(d->order);
    free(d->rkey);
    free(d->rtmp);
    free(d);
}

/* The array sizes of MergingDigest(compression), computed as Java does. */
static td_merging *md_new(double compression)
{
    td_merging *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    if (compression < TD_MIN_COMPRESSION)
        compression = TD_MIN_COMPRESSION;
    long size = (long)(compression + TD_SIZE_FUDGE);
    long buffer = TD_BUFFER_FACTOR * size;
    long scale = buffer / size - 1; /* integer division, as in Java */
    if (scale < 1)
        scale = 1;
    d->c = sqrt((double)scale) * compression;
    if ((double)size < d->c + TD_SIZE_FUDGE)
        size = (long)ceil(d->c + TD_SIZE_FUDGE);
    if (buffer <= 2 * size)
        buffer = 2 * size;
    /* Output slots for a whole sweep (buffer + centroids), so a sweep can
     * never run out of room whatever the size limit allows. */
    d->cap = (size_t)(size + buffer);
    d->tcap = (size_t)buffer;
    d->mean = malloc(d->cap * sizeof *d->mean);
    d->weight = malloc(d->cap * sizeof *d->weight);
    d->tmean = malloc(d->tcap * sizeof *d->tmean);
    d->tweight = malloc(d->tcap * sizeof *d->tweight);
    d->order = malloc(d->tcap * sizeof *d->order);
    d->min = INFINITY;
    d->max = -INFINITY;
    if (!d->mean || !d->weight || !d->tmean || !d->tweight || !d->order) {
        md_free(d);
        return NULL;
    }
    return d;
}

static td_merging *md_clone(const td_merging *s)
{
    td_merging *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    *d = *s;
    d->rkey = NULL; /* scratch: the clone grows its own */
    d->rtmp = NULL;
    d->rcap = 0;
    d->mean = malloc(s->cap * sizeof *d->mean);
    d->weight = malloc(s->cap * sizeof *d->weight);
    d->tmean = malloc(s->tcap * sizeof *d->tmean);
    d->tweight = malloc(s->tcap * sizeof *d->tweight);
    d->order = malloc(s->tcap * sizeof *d->order);
    if (!d->mean || !d->weight || !d->tmean || !d->tweight || !d->order) {
        md_free(d);
        return NULL;
    }
    memcpy(d->mean, s->mean, s->last * sizeof *d->mean);
    memcpy(d->weight, s->weight, s->last * sizeof *d->weight);
    memcpy(d->tmean, s->tmean, s->tused * sizeof *d->tmean);
    memcpy(d->tweight, s->tweight, s->tused * sizeof *d->tweight);
    return d;
}

/* K_2 with the weight limit: the most weight a centroid at q may hold is
 * n q (1 - q) / normalizer (ScaleFunction.K_2.max / normalizer). */
/* A double's bits as an unsigned key in the doubles' order (-0 as +0:
 * they compare equal, so their ties go by index too). */
static inline uint64_t order_key(double x)
{
    uint64_t u;
    if (x == 0)
        x = 0; /* +0 */
    memcpy(&u, &x, sizeof u);
    return u >> 63 ? ~u : u | (1ull << 63);
}

/* Radix passes of RADIX_BITS over the 64-bit keys. */
#define RADIX_BITS 8u
#define RADIX_BUCKETS (1u << RADIX_BITS)

/*
 * order[0..n) = 0..n sorted by v[] with ties by index, as
 * Sort.stableSort orders them, where the first nb values are in any order
 * and v[nb..n) ascend already (the centroids): the first nb by an LSD
 * radix sort of their order_key (stable, so ties stay in index order;
 * a pass whose byte all keys share is skipped), then merged with the
 * rest, a tie taking the lower index first.  The scratch is d's (grown
 * here).  False on out of memory, or when v[nb..n) do not ascend after
 * all (order untouched).
 */
static bool sort_order(td_merging *d, const double *v, size_t nb, size_t n,
                       size_t *order)
{
    for (size_t j = nb + 1; j < n; j++)
        if (v[j - 1] > v[j]) /* a rounding put a mean past the next */
            return false;
    if (d->rcap < n + 1) {
        uint64_t *rk = realloc(d->rkey, 2 * (n + 1) * sizeof *rk);
        if (rk)
            d->rkey = rk;
        size_t *rt = rk ? realloc(d->rtmp, (n + 1) * sizeof *rt) : NULL;
        if (!rt)
            return false;
        d->rtmp = rt;
        d->rcap = n + 1;
    }
    uint64_t *key = d->rkey, *k2 = key + nb;
    size_t *tmp = d->rtmp;
    size_t *a = order, *b = tmp;
    for (size_t i = 0; i < nb; i++) {
        a[i] = i;
        key[i] = order_key(v[i]);
    }
    /* every pass's counts in one read of the keys */
    size_t cnt[64 / RADIX_BITS][RADIX_BUCKETS];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < nb; i++)
        for (unsigned p = 0; p < 64 / RADIX_BITS; p++)
            cnt[p][(key[i] >> (p * RADIX_BITS)) & (RADIX_BUCKETS - 1)]++;
    for (unsigned p = 0; p < 64 / RADIX_BITS; p++) {
        unsigned sh = p * RADIX_BITS;
        size_t *c = cnt[p];
        if (!nb || c[(key[0] >> sh) & (RADIX_BUCKETS - 1)] == nb)
            continue; /* one byte for all: the pass changes nothing */
        size_t pos = 0;
        for (unsigned d = 0; d < RADIX_BUCKETS; d++) {
            size_t x = c[d];
            c[d] = pos;
            pos += x;
        }
        for (size_t i = 0; i < nb; i++) {
            size_t at = c[(key[i] >> sh) & (RADIX_BUCKETS - 1)]++;
            b[at] = a[i];
            k2[at] = key[i];
        }
        size_t *t = a;
        a = b;
        b = t;
        uint64_t *tk = key;
        key = k2;
        k2 = tk;
    }
    /* merge a[0..nb) with nb..n into b, then into order */
    size_t i = 0, j = nb, o = 0;
    while (i < nb && j < n)
        b[o++] = v[a[i]] <= v[j] ? a[i++] : j++;
    while (i < nb)
        b[o++] = a[i++];
    while (j < n)
        b[o++] = j++;
    if (b != order) /* an odd count of passes merged into order itself */
        memcpy(order, b, n * sizeof *order);
    return true;
}

static double k2_normalizer(double compression, double n)
{
    return compression / (TD_K2_LOG_FACTOR * log(n / compression) + TD_K2_OFFSET);
}

/*
 * MergingDigest.merge: sweep `in_count` incoming points plus the current
 * centroids into new centroids.  in_mean/in_weight/order have room for
 * in_count + d->last entries and d->cap >= that (callers ensure).
 */
static void md_sweep(td_merging *d, double *in_mean, double *in_weight, size_t in_count,
                     size_t *order, double unmerged, int backwards, double compression)
{
    memcpy(in_mean + in_count, d->mean, d->last * sizeof *in_mean);
    memcpy(in_weight + in_count, d->weight, d->last * sizeof *in_weight);
    size_t nb = in_count;
    in_count += d->last;
    if (!sort_order(d, in_mean, nb, in_count, order)) { /* the general sort */
        for (size_t i = 0; i < in_count; i++)
            order[i] = i;
        qsort_r(order, in_count, sizeof *order, cmp_order, in_mean);
    }
    d->total += unmerged;
    if (backwards) {
        for (size_t i = 0, j = in_count - 1; i < j; i++, j--) {
            size_t t = order[i]; order[i] = order[j]; order[j] = t;
        }
    }
    size_t last = 0;
    d->mean[0] = in_mean[order[0]];
    d->weight[0] = in_weight[order[0]];
    double so_far = 0;
    double normalizer = k2_normalizer(compression, d->total);
    for (size_t i = 1; i < in_count; i++) {
        size_t ix = order[i];
        double proposed = d->weight[last] + in_weight[ix];
        double q0 = so_far / d->total;
        double q2 = (so_far + proposed) / d->total;
        double limit = d->total * fmin(q0 * (1 - q0) / normalizer, q2 * (1 - q2) / normalizer);
        /* The first two and the last points always start a centroid. */
        int add = proposed <= limit && i != 1 && i != in_count - 1;
        if (add) {
            d->weight[last] += in_weight[ix];
            d->mean[last] += (in_mean[ix] - d->mean[last]) * in_weight[ix] / d->weight[last];
        } else {
            so_far += d->weight[last];
            last++;
            d->mean[last] = in_mean[ix];
            d->weight[last] = in_weight[ix];
        }
    }
    d->last = last + 1;
    if (backwards) {
        reverse_doubles(d->mean, d->last);
        reverse_doubles(d->weight, d->last);
    }
    if (d->total > 0) {
        d->min = fmin(d->min, d->mean[0]);
        d->max = fmax(d->max, d->mean[d->last - 1]);
    }
}

/*
 * Room for a sweep of n entries in the buffer, the permutation and the
 * output.  MergingDigest's sizes always suffice while centroids stay within
 * what K_2 allows; this only guards against overrunning otherwise.
 */
static int md_room(td_merging *d, size_t n)
{
    if (d->tcap < n) {
        size_t *o;
        if (grow_doubles(&d->tmean, n) || grow_doubles(&d->tweight, n) ||
            !(o = realloc(d->order, n * sizeof *o)))
            return FDS_ENOMEM;
        d->order = o;
        d->tcap = n;
    }
    if (d->cap < n) {
        if (grow_doubles(&d->mean, n) || grow_doubles(&d->weight, n))
            return FDS_ENOMEM;
        d->cap = n;
    }
    return 0;
}

/* MergingDigest.mergeNewValues(compression). */
static int md_flush(td_merging *d, double compression)
{
    if (d->total == 0 && d->unmerged == 0)
        return 0;
    if (d->unmerged > 0) {
        int rc = md_room(d, d->tused + d->last);
        if (rc)
            return rc;
        md_sweep(d, d->tmean, d->tweight, d->tused, d->order, d->unmerged,
                 d->merge_count % 2 == 1, compression);
        d->merge_count++;
        d->tused = 0;
        d->unmerged = 0;
    }
    return 0;
}

static int md_add(td_merging *d, double x, double w)
{
    int rc;
    if (d->tused + d->last + 1 >= d->tcap && (rc = md_flush(d, d->c)))
        return rc;
    if (d->tused + d->last + 1 >= d->tcap && (rc = md_room(d, 2 * (d->last + 1))))
        return rc;
    d->tmean[d->tused] = x;
    d->tweight[d->tused] = w;
    d->tused++;
    d->unmerged += w;
    d->min = fmin(d->min, x);
    d->max = fmax(d->max, x);
    return 0;
}

/* MergingDigest.quantile, after merging the buffer. */
static double md_quantile(td_merging *d, double q)
{
    if (md_flush(d, d->c))
        return NAN;
    size_t n = d->last;
    const double *mean = d->mean, *weight = d->weight;
    double total = d->total;
    if (n == 0)
        return NAN;
    if (n == 1)
        return mean[0];
    double index = q * (total - 1);
    if (index < 0)
        return d->min;
    if (index >= total)
        return d->max;
    double so_far = weight[0] == 1 ? 0 : weight[0] / 2;
    /* A singleton at min: interpolate between the first two centroids. */
    if (weight[0] == 1 && index <= weight[0])
        return d->min + index * (mean[1] - d->min);
    /* One sample of the first centroid is at min. */
    if (weight[0] > 1 && index < so_far)
        return d->min + (index - 1) / (so_far - 1) * (mean[0] - d->min);
    /* Likewise one sample of the last centroid is at max. */
    if (weight[n - 1] > 1 && total - index <= weight[n - 1] / 2)
        return d->max - (total - index - 1) / (weight[n - 1] / 2 - 1) * (d->max - mean[n - 1]);
    for (size_t i = 0; i + 1 < n; i++) {
        double dw = (weight[i] + weight[i + 1]) / 2;
        if (so_far + dw > index) {
            double z1 = index - so_far;
            double z2 = so_far + dw - index;
            return weighted_average(mean[i], z2, mean[i + 1], z1);
        }
        so_far += dw;
    }
    /* Past the last centroid's centre: towards max (as MergingDigest). */
    double z1 = index - total - weight[n - 1] / 2.0;
    double z2 = weight[n - 1] / 2 - z1;
    return weighted_average(mean[n - 1], z1, d->max, z2);
}

/* MergingDigest.cdf, after merging the buffer. */
static double md_cdf(td_merging *d, double x)
{
    if (md_flush(d, d->c))
        return NAN;
    size_t n = d->last;
    const double *mean = d->mean, *weight = d->weight;
    double total = d->total, min = d->min, max = d->max;
    if (n == 0)
        return NAN;
    if (n == 1) {
        if (x < min)
            return 0;
        if (x > max)
            return 1;
        if (x - min <= max - min)
            return 0.5;
        return (x - min) / (max - min);
    }
    if (x < min)
        return 0;
    if (x > max)
        return 1;
    if (x < mean[0]) {
        if (mean[0] - min > 0) {
            if (x == min)
                return 0.5 / total;
            return (1 + (x - min) / (mean[0] - min) * (weight[0] / 2 - 1)) / total;
        }
        return 0;
    }
    if (x > mean[n - 1]) {
        if (max - mean[n - 1] > 0) {
            if (x == max)
                return 1 - 0.5 / total;
            double dq = (1 + (max - x) / (max - mean[n - 1]) * (weight[n - 1] / 2 - 1)) / total;
            return 1 - dq;
        }
        return 1;
    }
    double so_far = 0;
    for (size_t it = 0; it + 1 < n; it++) {
        if (mean[it] == x) {
            /* Centroids exactly at x count as one, half their weight in. */
            double dw = 0;
            while (it < n && mean[it] == x)
                dw += weight[it++];
            return (so_far + dw / 2) / total;
        }
        if (mean[it] <= x && x < mean[it + 1]) {
            if (mean[it + 1] - mean[it] > 0) {
                /* A singleton's weight sits at its point: not spread. */
                double left_ex = 0, right_ex = 0;
                if (weight[it] == 1) {
                    if (weight[it + 1] == 1)
                        return (so_far + 1) / total;
                    left_ex = 0.5;
                } else if (weight[it + 1] == 1) {
                    right_ex = 0.5;
                }
                double dw = (weight[it] + weight[it + 1]) / 2;
                double dw_no = dw - left_ex - right_ex;
                double base = so_far + weight[it] / 2 + left_ex;
                return (base + dw_no * (x - mean[it]) / (mean[it + 1] - mean[it])) / total;
            }
            return (so_far + (weight[it] + weight[it + 1]) / 2) / total;
        }
        so_far += weight[it];
    }
    /* x == mean[n - 1] */
    return 1 - 0.5 / total;
}

/* ---- HybridDigest ------------------------------------------------------ */

fds_tdigest *fds_tdigest_create(double compression)
{
    if (!(compression > 0 && compression <= FDS_TDIGEST_MAX_COMPRESSION))
        return NULL;
    fds_tdigest *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->compression = compression;
    t->max_sorting = (uint64_t)floor(compression + 0.5) * TD_SORTING_PER_COMPRESSION;
    t->min = INFINITY;
    t->max = -INFINITY;
    t->sorted = 1;
    return t;
}

void fds_tdigest_free(fds_tdigest *t)
{
    if (!t)
        return;
    md_free(t->md);
    free(t->vals);
    free(t);
}

/* v[0..n) sorted ascending, stably (equal values keep their order: -0.0
 * and 0.0 stay where they were), by a bottom-up merge sort through tmp
 * (n doubles) after insertion-sorting runs of 16 -- what glibc's qsort
 * gives, its merge sort being stable, without a call per comparison.  A
 * NaN (no order) leaves the work to qsort and cmp_double, as before. */
static void sort_doubles(double *v, size_t n)
{
    enum { RUN = 16 };
    for (size_t i = 0; i < n; i++)
        if (isnan(v[i])) {
            qsort(v, n, sizeof *v, cmp_double);
            return;
        }
    double *tmp = n > RUN ? malloc(n * sizeof *tmp) : NULL;
    if (n > RUN && !tmp) {
        qsort(v, n, sizeof *v, cmp_double);
        return;
    }
    for (size_t a = 0; a < n; a += RUN) {
        size_t b = a + RUN < n ? a + RUN : n;
        for (size_t i = a + 1; i < b; i++) {
            double x = v[i];
            size_t j = i;
            for (; j > a && v[j - 1] > x; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
    }
    double *src = v, *dst = tmp;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t a = 0; a < n; a += 2 * w) {
            size_t m = a + w < n ? a + w : n, b = a + 2 * w < n ? a + 2 * w : n;
            size_t i = a, j = m, k = a;
            while (i < m && j < b)
                dst[k++] = src[j] < src[i] ? src[j++] : src[i++];
            while (i < m)
                dst[k++] = src[i++];
            while (j < b)
                dst[k++] = src[j++];
        }
        double *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
    free(tmp);
}

static void sort_values(fds_tdigest *t)
{
    if (!t->sorted) {
        sort_doubles(t->vals, t->nvals);
        t->sorted = 1;
    }
}

/* HybridDigest's switch: replay the kept values into a MergingDigest. */
static int switch_to_merging(fds_tdigest *t)
{
    td_merging *md = md_new(t->compression);
    if (!md)
        return FDS_ENOMEM;
    sort_values(t);
    for (size_t i = 0; i < t->nvals; i++) {
        if (md_add(md, t->vals[i], 1)) {
            md_free(md);
            return FDS_ENOMEM;
        }
    }
    t->md = md;
    free(t->vals);
    t->vals = NULL;
    t->nvals = t->capvals = 0;
    return 0;
}

static int reserve_values(fds_tdigest *t, uint64_t more)
{
    if (t->nvals + more <= t->capvals)
        return 0;
    size_t cap = t->capvals ? t->capvals : 64;
    while (cap < t->nvals + more)
        cap *= 2;
    if (grow_doubles(&t->vals, cap))
        return FDS_ENOMEM;
    t->capvals = cap;
    return 0;
}

/* SortingDigest.add(x, w): w copies of x (w < max_sorting here). */
static int sorting_add(fds_tdigest *t, double x, uint64_t w)
{
    int rc = reserve_values(t, w);
    if (rc)
        return rc;
    if (t->nvals && t->vals[t->nvals - 1] > x)
        t->sorted = 0;
    for (uint64_t i = 0; i < w; i++)
        t->vals[t->nvals++] = x;
    return 0;
}

int fds_tdigest_add(fds_tdigest *t, double x, uint64_t weight)
{
    if (!isfinite(x) || weight == 0)
        return FDS_EINVAL;
    int rc;
    /* (count < max_sorting while values are kept: no overflow.) */
    if (!t->md && weight >= t->max_sorting - t->count && (rc = switch_to_merging(t)))
        return rc;
    rc = t->md ? md_add(t->md, x, (double)weight) : sorting_add(t, x, weight);
    if (rc)
        return rc;
    t->count += weight;
    t->min = fmin(t->min, x);
    t->max = fmax(t->max, x);
    return 0;
}

int fds_tdigest_merge(fds_tdigest *dst, const fds_tdigest *src)
{
    if (!dst || !src)
        return FDS_EINVAL;
    if (src->count == 0)
        return 0;
    /* HybridDigest.reserve: switch first if the sum is past the limit. */
    int rc;
    if (!dst->md && src->count >= dst->max_sorting - dst->count && (rc = switch_to_merging(dst)))
        return rc;
    /* AbstractTDigest.add(other): each of the source's centroids -- its
     * kept values, or its centroids after merging its buffer (on a copy,
     * src is const) -- is added to dst as one weighted point. */
    td_merging *tmp = NULL;
    const double *m, *w = NULL;
    size_t count;
    if (src->md && src->md->unmerged > 0) {
        if (!(tmp = md_clone(src->md)))
            return FDS_ENOMEM;
        if (md_flush(tmp, tmp->c)) {
            md_free(tmp);
            return FDS_ENOMEM;
        }
    }
    if (src->md) {
        const td_merging *s = tmp ? tmp : src->md;
        m = s->mean;
        w = s->weight;
        count = s->last;
    } else {
        m = src->vals;
        count = src->nvals;
    }
    rc = 0;
    if (!dst->md)
        rc = reserve_values(dst, src->count);
    for (size_t i = 0; !rc && i < count; i++) {
        double wi = w ? w[i] : 1;
        rc = dst->md ? md_add(dst->md, m[i], wi) : sorting_add(dst, m[i], (uint64_t)wi);
    }
    md_free(tmp);
    if (rc)
        return rc;
    dst->count += src->count;
    dst->min = fmin(dst->min, src->min);
    dst->max = fmax(dst->max, src->max);
    if (dst->md) {
        dst->md->min = fmin(dst->md->min, src->min);
        dst->md->max = fmax(dst->md->max, src->max);
    }
    return 0;
}

uint64_t fds_tdigest_count(const fds_tdigest *t) { return t->count; }

double fds_tdigest_min(const fds_tdigest *t) { return t->count ? t->min : NAN; }
double fds_tdigest_max(const fds_tdigest *t) { return t->count ? t->max : NAN; }

int fds_tdigest_is_exact(const fds_tdigest *t) { return t->md == NULL; }

uint64_t fds_tdigest_centroids(fds_tdigest *t)
{
    if (!t->md)
        return t->nvals;
    (void)md_flush(t->md, t->md->c); /* on ENOMEM: the merged part */
    return t->md->last;
}

/* Dist.quantile over the sorted kept values. */
static double sorted_quantile(const double *v, size_t n, double q)
{
    double index = q * (double)(n - 1);
    size_t lo = (size_t)floor(index), hi = lo + 1;
    double frac = index - (double)lo;
    if (index <= 0) {
        lo = hi = 0;
        frac = 0;
    }
    if (index >= (double)(n - 1)) {
        lo = hi = n - 1;
        frac = 0;
    }
    return v[lo] + frac * (v[hi] - v[lo]);
}

/* Dist.cdf over the sorted kept values. */
static double sorted_cdf(const double *v, size_t n, double x)
{
    if (x < v[0])
        return 0;
    double below = 0.5;
    size_t equal = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i] > x) {
            if (equal > 0)
                return (below + 0.5 * (double)equal) / (double)n;
            double f = (x - v[i - 1]) / (v[i] - v[i - 1]);
            return (below + f) / (double)n;
        }
        if (v[i] < x)
            below++;
        else
            equal++;
    }
    return ((double)n - 0.5 * (double)equal) / (double)n;
}

double fds_tdigest_quantile(fds_tdigest *t, double q)
{
    if (t->count == 0 || !(q >= 0 && q <= 1))
        return NAN;
    if (t->md)
        return md_quantile(t->md, q);
    sort_values(t);
    return sorted_quantile(t->vals, t->nvals, q);
}

double fds_tdigest_cdf(fds_tdigest *t, double x)
{
    if (t->count == 0 || !isfinite(x))
        return NAN;
    if (t->md)
        return md_cdf(t->md, x);
    sort_values(t);
    return sorted_cdf(t->vals, t->nvals, x);
}
