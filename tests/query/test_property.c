/*
 * test_property: random queries over the real nginx sample, split into
 * several segments with deleted docs, compared against a brute-force
 * evaluator written here independently of src/query (its own BM25, its own
 * norm quantization, its own matching, sorting and counting; only the
 * tokenizer is shared, and it has its own unit tests).
 *
 * Checks per query: total hits and relation, every returned hit's score
 * against the brute-force score (relative tolerance 1e-4), top-k
 * completeness (every doc scoring clearly above the k-th score is returned),
 * exact ids for field sorts, search_after pages, the same page with
 * bit-identical scores whether hits are counted or not (track_total_hits
 * true, false, a number), and how many postings were scored of those the
 * terms had (MaxScore skips most of them); with a fourth argument
 * `sliced`, every MaxScore pass runs as two slices on two threads; with
 * `wide`, the sample three times over (ids apart) in a segment of ~26,000
 * docs with deletes, so that MaxScore's windows widen past 4096 docs
 * (their bitset's later summary words, the lone essential term's list).
 * Whole-url queries, some with
 * frequent words repeated (merged into boosted clauses, the heaviest of the
 * query, as the percent-encoded bytes of non-ASCII urls are).
 */
#include <cJSON.h>
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "mapping/analysis.h"
#include "search_render.h"
#include "qtest.h"
#include "query.h"

#define NSEG 4
#define NQUERIES 400

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? (uint32_t)(rng % n) : 0;
}

/* ---- the brute-force side's view of a doc ------------------------------- */

enum { F_URL, F_UA, F_REF, F_METHOD, NTEXT };
static const char *text_field[NTEXT] = {"url", "user_agent", "referrer", "method"};

typedef struct tok {
    char *t;
    size_t n;
} tok;

typedef struct bdoc {
    char id[32];
    tok *toks[NTEXT];
    size_t ntok[NTEXT];
    char *kw[NTEXT]; /* .keyword values (the raw strings) */
    long long status, bytes, ts;
    double rtime;
    int seg;
    uint32_t sdoc;
    int live;
} bdoc;

static bdoc *bd;
static size_t nd;

static int collect(void *arg, const char *t, size_t n)
{
    bdoc *d = ((void **)arg)[0];
    int f = *(int *)((void **)arg)[1];
    d->toks[f] = realloc(d->toks[f], (d->ntok[f] + 1) * sizeof(tok));
    d->toks[f][d->ntok[f]].t = strndup(t, n);
    d->toks[f][d->ntok[f]].n = n;
    d->ntok[f]++;
    return 0;
}

static long long parse_ts(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int oh, om;
    char sign;
    sscanf(s, "%d-%d-%dT%d:%d:%d%c%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &sign, &oh, &om);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    long long t = (long long)timegm(&tm);
    long long off = (oh * 60 + om) * 60;
    t -= sign == '-' ? -off : off;
    return t * 1000;
}

/* Lucene SmallFloat.intToByte4 / byte4ToInt, written out independently. */
static int bf_norm_len(int len)
{
    /* quantize: lengths < 24 exact; above, keep 4 significant bits of
     * (len - 24) (the top one implicit) */
    if (len < 24)
        return len;
    long v = len - 24;
    int bits = 0;
    while ((1L << bits) <= v)
        bits++;
    if (bits < 4)
        return len;
    int shift = bits - 4;
    long top = v >> shift; /* 8..15 */
    return (int)(24 + (top << shift));
}

/* ---- field statistics over all segments (deleted docs included) -------- */

static double bf_idf(double N, double n)
{
    return log(1.0 + (N - n + 0.5) / (n + 0.5));
}

static size_t tf_of(const bdoc *d, int f, const char *t, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < d->ntok[f]; i++)
        if (d->toks[f][i].n == n && !memcmp(d->toks[f][i].t, t, n))
            c++;
    return c;
}

/* collection statistics, memoized per (field, term) */
typedef struct stat_ent {
    int f;
    char *t;
    double N, df, sum;
} stat_ent;
static stat_ent *stats;
static size_t nstats;

static const stat_ent *text_stats(int f, const char *t, size_t n)
{
    for (size_t i = 0; i < nstats; i++)
        if (stats[i].f == f && strlen(stats[i].t) == n && !memcmp(stats[i].t, t, n))
            return &stats[i];
    double N = 0, df = 0, sum = 0;
    for (size_t i = 0; i < nd; i++) {
        if (bd[i].ntok[f] == 0)
            continue;
        N++;
        sum += (double)bd[i].ntok[f];
        if (tf_of(&bd[i], f, t, n))
            df++;
    }
    stats = realloc(stats, (nstats + 1) * sizeof *stats);
    stats[nstats] = (stat_ent){f, strndup(t, n), N, df, sum};
    return &stats[nstats++];
}

/* BM25 of term t in doc d with doc freq `df` (< 0: the term's own). */
static double text_score_df(int f, const char *t, size_t n, const bdoc *d,
                            double boost, double df_over)
{
    const stat_ent *st = text_stats(f, t, n);
    double N = st->N, df = df_over >= 0 ? df_over : st->df, sum = st->sum;
    double tf = (double)tf_of(d, f, t, n);
    if (tf == 0)
        return 0;
    double avgdl = sum / N;
    double dl = bf_norm_len((int)d->ntok[f]);
    /* Elasticsearch's LegacyBM25Similarity: the (k1 + 1) numerator */
    return boost * 2.2 * bf_idf(N, df) * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl));
}

static double text_score(int f, const char *t, size_t n, const bdoc *d,
                         double boost)
{
    return text_score_df(f, t, n, d, boost, -1);
}

static double kw_score(int f, const char *v, const bdoc *d)
{
    if (!d->kw[f] || strcmp(d->kw[f], v))
        return 0;
    const stat_ent *st = NULL;
    for (size_t i = 0; i < nstats && !st; i++)
        if (stats[i].f == 100 + f && !strcmp(stats[i].t, v))
            st = &stats[i];
    if (!st) {
        double N = 0, df = 0;
        for (size_t i = 0; i < nd; i++) {
            if (!bd[i].kw[f])
                continue;
            N++;
            if (!strcmp(bd[i].kw[f], v))
                df++;
        }
        stats = realloc(stats, (nstats + 1) * sizeof *stats);
        stats[nstats] = (stat_ent){100 + f, strdup(v), N, df, 0};
        st = &stats[nstats++];
    }
    double N = st->N, df = st->df;
    /* no norms: dl = 1; single-valued: avgdl = 1 */
    return 2.2 * bf_idf(N, df) * 1.0 / (1.0 + 1.2 * (1 - 0.75 + 0.75 * 1.0 / 1.0));
}

/* ---- random queries ------------------------------------------------------ */

enum { Q_MATCH, Q_KW, Q_NUM, Q_RANGE, Q_BOOL, Q_ALL, Q_EXISTS, Q_PREFIX, Q_WILD,
       Q_REGEXP, Q_CONST, Q_DISMAX, Q_BOOSTING, Q_FUZZY, Q_MM };

#define FZ_SEL_MAX 8
/* Tokens of a match text the brute force scores (a whole url of the
 * sample has up to a few hundred). */
#define QTOK_MAX 512

typedef struct bq {
    int type;
    int field;        /* text field index, or numeric: 0 status 1 bytes 2 ts */
    char text[256];
    int op_and, msm;  /* msm 0 = none */
    long long lo, hi;
    int has_lo, has_hi, lo_incl, hi_incl;
    tok qtok[QTOK_MAX]; /* analyzed match text, every token */
    char ere[300];    /* Q_REGEXP: the same pattern in POSIX ERE, anchored */
    double boost;     /* Q_CONST: boost; Q_DISMAX: tie; Q_BOOSTING: negative_boost */
    /* Q_FUZZY: options, and the expansion the brute force computed */
    int fz_edits, fz_prefix, fz_max, fz_transp;
    tok fz_sel[FZ_SEL_MAX];
    double fz_boost[FZ_SEL_MAX], fz_df;
    int fz_nsel;
    int mm_most;      /* Q_MM: most_fields (else best_fields, tie in boost) */
    size_t nqtok;
    struct bq *must[3], *should[3], *filter[3], *not[3];
    int nmust, nshould, nfilter, nnot;
} bq;

static const char *num_field[3] = {"status", "body_bytes_sent", "@timestamp"};

static long long num_of(const bdoc *d, int f)
{
    return f == 0 ? d->status : f == 1 ? d->bytes : d->ts;
}

static void random_words(int f, char *out, size_t cap, int nw)
{
    out[0] = 0;
    size_t o = 0;
    for (int w = 0; w < nw; w++) {
        const bdoc *d = &bd[rnd((uint32_t)nd)];
        if (!d->ntok[f])
            continue;
        const tok *t = &d->toks[f][rnd((uint32_t)d->ntok[f])];
        if (o + t->n + 2 >= cap)
            break;
        if (o)
            out[o++] = ' ';
        memcpy(out + o, t->t, t->n);
        o += t->n;
        out[o] = 0;
    }
    if (!o)
        snprintf(out, cap, "get");
}

/* The leading run of bytes of s both regexp syntaxes read as literals. */
static size_t plain_run(const char *s, size_t max)
{
    size_t k = 0;
    while (k < max && s[k] && ((s[k] >= 'a' && s[k] <= 'z') ||
                               (s[k] >= '0' && s[k] <= '9') || s[k] == '/'))
        k++;
    return k;
}

/* Wildcard match, written here independently (recursive; short strings). */
static int bf_wild(const char *p, const char *s)
{
    if (!*p)
        return !*s;
    if (*p == '*')
        return bf_wild(p + 1, s) || (*s && bf_wild(p, s + 1));
    if (!*s)
        return 0;
    if (*p == '?') { /* one code point */
        size_t w = 1;
        while ((s[w] & 0xC0) == 0x80)
            w++;
        return bf_wild(p + 1, s + w);
    }
    return *p == *s && bf_wild(p + 1, s + 1);
}

/* Code points of s (ASCII and UTF-8), written out here. */
static size_t bf_cps(const char *s, size_t n, int *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; k++) {
        unsigned char b = (unsigned char)s[i];
        int w = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        int v = b;
        for (int j = 1; j < w && i + (size_t)j < n; j++)
            v = v * 64 + ((unsigned char)s[i + (size_t)j] & 0x3F);
        out[k] = v;
        i += (size_t)w;
    }
    return k;
}

/* Restricted Damerau-Levenshtein (optimal string alignment), full table. */
static int bf_osa(const char *a, size_t an, const char *b, size_t bn, int transp)
{
    int x[300], y[300];
    if (an > 256 || bn > 256)
        return 99;
    size_t n = bf_cps(a, an, x), m = bf_cps(b, bn, y);
    static int d[300][300];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int v = d[i - 1][j - 1] + (x[i - 1] != y[j - 1]);
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (transp && i > 1 && j > 1 && x[i - 1] == y[j - 2] &&
                x[i - 2] == y[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

/* The brute force's expansion of a fuzzy query on text field q->field:
 * every distinct token within the edits sharing the prefix, boosted
 * 1 - ed / min(lengths), the best fz_max, the largest doc freq. */
static void bf_fuzzy_expand(bq *q)
{
    int qc[300];
    size_t qn = bf_cps(q->text, strlen(q->text), qc);
    int edits = q->fz_edits >= 0 ? q->fz_edits : qn < 3 ? 0 : qn < 6 ? 1 : 2;
    size_t pre = (size_t)q->fz_prefix;
    if (edits == 0 || pre >= qn) {
        q->fz_sel[0].t = strdup(q->text);
        q->fz_sel[0].n = strlen(q->text);
        q->fz_boost[0] = 1;
        q->fz_nsel = 1;
        q->fz_df = -1; /* the term's own */
        return;
    }
    size_t pb = 0; /* bytes of the prefix */
    for (size_t i = 0; i < pre; i++)
        pb += qc[i] < 0x80 ? 1 : qc[i] < 0x800 ? 2 : qc[i] < 0x10000 ? 3 : 4;
    tok cand[4096];
    double cb[4096];
    size_t nc = 0;
    for (size_t i = 0; i < nd; i++)
        for (size_t k = 0; k < bd[i].ntok[q->field]; k++) {
            const tok *t = &bd[i].toks[q->field][k];
            if (t->n < pb || memcmp(t->t, q->text, pb))
                continue;
            int seen = 0;
            for (size_t j = 0; j < nc && !seen; j++)
                seen = cand[j].n == t->n && !memcmp(cand[j].t, t->t, t->n);
            if (seen || nc == 4096)
                continue;
            int ed = bf_osa(q->text, strlen(q->text), t->t, t->n, q->fz_transp);
            if (ed > edits)
                continue;
            int tc[300];
            size_t tn = bf_cps(t->t, t->n, tc);
            cand[nc] = *t;
            cb[nc++] = 1.0 - (double)(float)ed / (double)(tn < qn ? tn : qn);
        }
    /* best boost first, then smaller term: selection by repeated maximum */
    q->fz_nsel = 0;
    q->fz_df = 0;
    int used[4096] = {0};
    while (q->fz_nsel < q->fz_max && q->fz_nsel < FZ_SEL_MAX) {
        size_t best = nc;
        for (size_t j = 0; j < nc; j++) {
            if (used[j])
                continue;
            if (best == nc || (float)cb[j] > (float)cb[best])
                best = j;
            else if ((float)cb[j] == (float)cb[best]) {
                size_t m = cand[j].n < cand[best].n ? cand[j].n : cand[best].n;
                int c = memcmp(cand[j].t, cand[best].t, m);
                if (c < 0 || (c == 0 && cand[j].n < cand[best].n))
                    best = j;
            }
        }
        if (best == nc)
            break;
        used[best] = 1;
        q->fz_sel[q->fz_nsel].t = strndup(cand[best].t, cand[best].n);
        q->fz_sel[q->fz_nsel].n = cand[best].n;
        q->fz_boost[q->fz_nsel++] = (float)cb[best];
        double df = text_stats(q->field, cand[best].t, cand[best].n)->df;
        if (df > q->fz_df)
            q->fz_df = df;
    }
}

static void bq_free(bq *q);

/* Set: gen(0) makes a multi_match (the queries after the main run, so that
 * the main run's random queries stay those of earlier versions). */
static int gen_mm;
/* Set: gen(0) makes a match on url of a doc's whole url, nothing added
 * (the exact-value seed: docs holding the text as their url score alike) */
static int gen_exact;

static bq *gen(int depth)
{
    bq *q = calloc(1, sizeof *q);
    static const int leaf[] = {Q_MATCH, Q_KW, Q_NUM, Q_RANGE, Q_ALL, Q_EXISTS,
                               Q_PREFIX, Q_WILD, Q_REGEXP, Q_FUZZY};
    static const int compound[] = {Q_BOOL, Q_BOOL, Q_CONST, Q_DISMAX, Q_BOOSTING};
    int r = (int)rnd(10);
    r = depth < 0 ? Q_MATCH
        : depth == 0 && gen_mm ? Q_MM
        : depth == 0 && gen_exact ? Q_MATCH
        : depth > 1 || r < 6 ? leaf[rnd(10)] : compound[rnd(5)];
    q->type = r;
    switch (r) {
    case Q_FUZZY: {
        q->field = rnd(2) ? F_URL : F_UA;
        const bdoc *d = &bd[rnd((uint32_t)nd)];
        if (!d->ntok[q->field]) {
            snprintf(q->text, sizeof q->text, "mozila");
        } else {
            const tok *t = &d->toks[q->field][rnd((uint32_t)d->ntok[q->field])];
            size_t n = t->n < 64 ? t->n : 64;
            memcpy(q->text, t->t, n);
            q->text[n] = 0;
            int how = (int)rnd(5), at = n ? (int)rnd((uint32_t)n) : 0;
            if (how == 0 && n > 1) /* delete */
                memmove(q->text + at, q->text + at + 1, n - (size_t)at);
            else if (how == 1 && (q->text[at] & 0x80) == 0) /* replace */
                q->text[at] = (char)('a' + rnd(26));
            else if (how == 2 && at + 1 < (int)n && !((q->text[at] | q->text[at + 1]) & 0x80)) {
                char c = q->text[at]; /* transpose */
                q->text[at] = q->text[at + 1];
                q->text[at + 1] = c;
            }
        }
        q->fz_edits = rnd(3) == 0 ? -1 : (int)rnd(3);
        q->fz_prefix = (int)rnd(3);
        q->fz_max = 1 + (int)rnd(FZ_SEL_MAX);
        q->fz_transp = rnd(4) != 0;
        bf_fuzzy_expand(q);
        break;
    }
    case Q_PREFIX:
    case Q_WILD:
    case Q_REGEXP: {
        const bdoc *d = &bd[rnd((uint32_t)nd)];
        const char *u = d->kw[F_URL] ? d->kw[F_URL] : "/";
        size_t n = strlen(u) < 40 ? strlen(u) : 40;
        if (r == Q_PREFIX) {
            n = 1 + rnd((uint32_t)(n < 8 ? n : 8));
            memcpy(q->text, u, n);
        } else if (r == Q_WILD) {
            size_t o = 0;
            for (size_t i = 0; i < n && o + 2 < sizeof q->text; i++) {
                if (u[i] == '\\' || u[i] == '*')
                    break;
                int k = (int)rnd(10);
                if (k == 0) {
                    q->text[o++] = '*';
                    i += rnd(4);
                } else {
                    q->text[o++] = k == 1 ? '?' : u[i];
                }
            }
            if (rnd(2) && o + 1 < sizeof q->text)
                q->text[o++] = '*';
            q->text[o] = 0;
        } else {
            /* a literal run then one of a few operators, in both syntaxes */
            size_t k = plain_run(u, 1 + rnd(10));
            static const char *tail[][2] = {
                {".*", ".*"}, {"[a-z0-9]*.*", "[a-z0-9]*.*"}, {"(.*)?", "(.*)?"},
                {".+", ".+"}, {"(image|product|filter).*", "(image|product|filter).*"},
                {"", ""}, {".{0,3}", ".{0,3}"}, {"[^/]*/.*", "[^/]*/.*"}};
            int t = (int)rnd(8);
            snprintf(q->text, sizeof q->text, "%.*s%s", (int)k, u, tail[t][0]);
            snprintf(q->ere, sizeof q->ere, "^%.*s%s$", (int)k, u, tail[t][1]);
        }
        q->field = rnd(4) == 0 ? F_METHOD : F_URL;
        if (q->field == F_METHOD && r != Q_REGEXP)
            snprintf(q->text, sizeof q->text, "%s", r == Q_PREFIX ? "P" : "?E*");
        else if (q->field == F_METHOD)
            snprintf(q->ere, sizeof q->ere, "^(%s)$",
                     strcpy(q->text, "GET|HEAD"));
        break;
    }
    case Q_CONST:
        q->boost = 0.5 + rnd(4);
        q->nmust = 1;
        q->must[0] = gen(depth + 1);
        break;
    case Q_DISMAX:
        q->boost = rnd(3) * 0.5; /* tie_breaker 0, 0.5, 1 */
        q->nmust = 1 + rnd(3);
        for (int i = 0; i < q->nmust; i++)
            q->must[i] = gen(depth + 1);
        break;
    case Q_MM: {
        /* multi_match: one match's text and options over 1..3 text
         * fields, each child the same match on its field */
        q->boost = rnd(3) * 0.5; /* tie_breaker 0, 0.5, 1 */
        q->mm_most = rnd(2);
        bq *m = gen(-1);
        int f0 = (int)rnd(NTEXT);
        q->nmust = 1 + rnd(3);
        for (int i = 0; i < q->nmust; i++) {
            q->must[i] = calloc(1, sizeof *m);
            *q->must[i] = *m;
            q->must[i]->field = (f0 + i) % NTEXT;
            for (size_t k = 0; k < m->nqtok; k++)
                q->must[i]->qtok[k].t = strndup(m->qtok[k].t, m->qtok[k].n);
        }
        bq_free(m);
        break;
    }
    case Q_BOOSTING:
        q->boost = rnd(2) ? 0.25 : 2.0;
        q->nmust = 2;
        q->must[0] = gen(depth + 1);
        q->must[1] = gen(depth + 1);
        break;
    case Q_MATCH:
        q->field = depth == 0 && gen_exact ? F_URL : rnd(NTEXT);
        if (q->field == F_METHOD) {
            static const char *m[] = {"GET", "HEAD", "POST", "get post"};
            snprintf(q->text, sizeof q->text, "%s", m[rnd(4)]);
        } else {
            const bdoc *d = &bd[rnd((uint32_t)nd)];
            bool exact = depth == 0 && gen_exact;
            if (q->field == F_URL && d->kw[F_URL] && depth >= 0 &&
                (exact || rnd(4) == 0)) {
                /* a whole url: tens of terms, several in most docs */
                int o = snprintf(q->text, sizeof q->text, "%s", d->kw[F_URL]);
                if (!exact && rnd(2) && o > 0 && (size_t)o < sizeof q->text) {
                    /* plus frequent words said again and again: merged into
                     * one boosted clause each, the heaviest of the query */
                    char extra[64];
                    random_words(F_URL, extra, sizeof extra, 1 + (int)rnd(2));
                    for (int r = 0, n = 2 + (int)rnd(4); r < n; r++) {
                        int k = snprintf(q->text + o, sizeof q->text - (size_t)o,
                                         " %s", extra);
                        if (k < 0 || (size_t)(o + k) >= sizeof q->text)
                            break;
                        o += k;
                    }
                }
            } else
                random_words(q->field, q->text, sizeof q->text,
                             rnd(4) == 0 && depth >= 0 ? 4 + (int)rnd(27)
                                                       : 1 + (int)rnd(3));
        }
        {
            bdoc tmp;
            memset(&tmp, 0, sizeof tmp);
            int f0 = 0;
            void *arg[2] = {&tmp, &f0};
            fds_analyze(q->text, strlen(q->text), collect, arg);
            if (tmp.ntok[0] > QTOK_MAX) { /* the brute force must see all */
                fprintf(stderr, "match text of %zu tokens: raise QTOK_MAX\n",
                        tmp.ntok[0]);
                exit(1);
            }
            for (size_t i = 0; i < tmp.ntok[0]; i++)
                q->qtok[q->nqtok++] = tmp.toks[0][i];
            free(tmp.toks[0]);
        }
        q->op_and = rnd(5) == 0;
        q->msm = !q->op_and && rnd(4) == 0
                     ? 1 + (int)rnd(rnd(2) ? 2 : (uint32_t)q->nqtok + 1)
                     : 0;
        break;
    case Q_KW: {
        q->field = rnd(2) ? F_METHOD : F_URL;
        const bdoc *d = &bd[rnd((uint32_t)nd)];
        snprintf(q->text, sizeof q->text, "%s", d->kw[q->field] ? d->kw[q->field] : "x");
        break;
    }
    case Q_NUM: {
        q->field = 0;
        static const int st[] = {200, 404, 304, 301, 500, 302};
        q->lo = q->hi = st[rnd(6)];
        break;
    }
    case Q_RANGE: {
        q->field = rnd(3);
        const bdoc *a = &bd[rnd((uint32_t)nd)], *b = &bd[rnd((uint32_t)nd)];
        long long x = num_of(a, q->field), y = num_of(b, q->field);
        if (x > y) {
            long long t = x;
            x = y;
            y = t;
        }
        if (q->field == 2 && rnd(3) == 0) /* a dashboard's short window */
            y = x + 60000ll * (1 + rnd(15));
        q->lo = x;
        q->hi = y;
        q->has_lo = rnd(4) != 0;
        q->has_hi = rnd(4) != 0;
        q->lo_incl = rnd(2);
        q->hi_incl = rnd(2);
        break;
    }
    case Q_BOOL:
        q->nmust = rnd(3);
        q->nshould = rnd(3);
        q->nfilter = rnd(2);
        q->nnot = rnd(2);
        for (int i = 0; i < q->nmust; i++) q->must[i] = gen(depth + 1);
        for (int i = 0; i < q->nshould; i++) q->should[i] = gen(depth + 1);
        for (int i = 0; i < q->nfilter; i++) q->filter[i] = gen(depth + 1);
        for (int i = 0; i < q->nnot; i++) q->not[i] = gen(depth + 1);
        q->msm = q->nshould && rnd(3) == 0 ? 1 + rnd(q->nshould) : 0;
        break;
    case Q_EXISTS:
        q->field = rnd(2);
        break;
    default:
        break;
    }
    return q;
}

static void bq_free(bq *q)
{
    if (!q)
        return;
    for (int i = 0; i < q->nmust; i++) bq_free(q->must[i]);
    for (int i = 0; i < q->nshould; i++) bq_free(q->should[i]);
    for (int i = 0; i < q->nfilter; i++) bq_free(q->filter[i]);
    for (int i = 0; i < q->nnot; i++) bq_free(q->not[i]);
    for (size_t i = 0; i < q->nqtok; i++) free(q->qtok[i].t);
    for (int i = 0; i < q->fz_nsel; i++) free(q->fz_sel[i].t);
    free(q);
}

static cJSON *to_json(const bq *q)
{
    cJSON *o = cJSON_CreateObject();
    switch (q->type) {
    case Q_MATCH: {
        cJSON *m = cJSON_AddObjectToObject(o, "match");
        cJSON *f = cJSON_AddObjectToObject(m, text_field[q->field]);
        cJSON_AddStringToObject(f, "query", q->text);
        if (q->op_and)
            cJSON_AddStringToObject(f, "operator", "and");
        if (q->msm)
            cJSON_AddNumberToObject(f, "minimum_should_match", q->msm);
        break;
    }
    case Q_KW: {
        char name[64];
        snprintf(name, sizeof name, "%s.keyword", text_field[q->field]);
        cJSON *t = cJSON_AddObjectToObject(o, "term");
        cJSON_AddStringToObject(t, name, q->text);
        break;
    }
    case Q_NUM: {
        cJSON *t = cJSON_AddObjectToObject(o, rnd(2) ? "term" : "match");
        cJSON_AddNumberToObject(t, "status", (double)q->lo);
        break;
    }
    case Q_RANGE: {
        cJSON *r = cJSON_AddObjectToObject(o, "range");
        cJSON *f = cJSON_AddObjectToObject(r, num_field[q->field]);
        if (q->has_lo)
            cJSON_AddNumberToObject(f, q->lo_incl ? "gte" : "gt", (double)q->lo);
        if (q->has_hi)
            cJSON_AddNumberToObject(f, q->hi_incl ? "lte" : "lt", (double)q->hi);
        break;
    }
    case Q_BOOL: {
        cJSON *b = cJSON_AddObjectToObject(o, "bool");
        struct { const char *n; bq *const *l; int c; } ls[4] = {
            {"must", q->must, q->nmust}, {"should", q->should, q->nshould},
            {"filter", q->filter, q->nfilter}, {"must_not", q->not, q->nnot}};
        for (int k = 0; k < 4; k++) {
            if (!ls[k].c)
                continue;
            cJSON *a = cJSON_AddArrayToObject(b, ls[k].n);
            for (int i = 0; i < ls[k].c; i++)
                cJSON_AddItemToArray(a, to_json(ls[k].l[i]));
        }
        if (q->msm)
            cJSON_AddNumberToObject(b, "minimum_should_match", q->msm);
        break;
    }
    case Q_ALL:
        cJSON_AddObjectToObject(o, "match_all");
        break;
    case Q_PREFIX:
    case Q_WILD:
    case Q_REGEXP: {
        char name[64];
        snprintf(name, sizeof name, "%s.keyword", text_field[q->field]);
        cJSON *t = cJSON_AddObjectToObject(o, q->type == Q_PREFIX ? "prefix"
                                              : q->type == Q_WILD ? "wildcard"
                                                                  : "regexp");
        cJSON_AddStringToObject(t, name, q->text);
        break;
    }
    case Q_FUZZY: {
        cJSON *t = cJSON_AddObjectToObject(o, "fuzzy");
        cJSON *f = cJSON_AddObjectToObject(t, text_field[q->field]);
        cJSON_AddStringToObject(f, "value", q->text);
        if (q->fz_edits >= 0)
            cJSON_AddNumberToObject(f, "fuzziness", q->fz_edits);
        else
            cJSON_AddStringToObject(f, "fuzziness", "AUTO");
        cJSON_AddNumberToObject(f, "prefix_length", q->fz_prefix);
        cJSON_AddNumberToObject(f, "max_expansions", q->fz_max);
        cJSON_AddBoolToObject(f, "transpositions", q->fz_transp);
        break;
    }
    case Q_CONST: {
        cJSON *c = cJSON_AddObjectToObject(o, "constant_score");
        cJSON_AddItemToObject(c, "filter", to_json(q->must[0]));
        cJSON_AddNumberToObject(c, "boost", q->boost);
        break;
    }
    case Q_DISMAX: {
        cJSON *c = cJSON_AddObjectToObject(o, "dis_max");
        cJSON *a = cJSON_AddArrayToObject(c, "queries");
        for (int i = 0; i < q->nmust; i++)
            cJSON_AddItemToArray(a, to_json(q->must[i]));
        cJSON_AddNumberToObject(c, "tie_breaker", q->boost);
        break;
    }
    case Q_MM: {
        const bq *m = q->must[0];
        cJSON *c = cJSON_AddObjectToObject(o, "multi_match");
        cJSON_AddStringToObject(c, "query", m->text);
        cJSON *a = cJSON_AddArrayToObject(c, "fields");
        for (int i = 0; i < q->nmust; i++)
            cJSON_AddItemToArray(a, cJSON_CreateString(text_field[q->must[i]->field]));
        cJSON_AddStringToObject(c, "type", q->mm_most ? "most_fields" : "best_fields");
        if (!q->mm_most)
            cJSON_AddNumberToObject(c, "tie_breaker", q->boost);
        if (m->op_and)
            cJSON_AddStringToObject(c, "operator", "AND");
        if (m->msm)
            cJSON_AddNumberToObject(c, "minimum_should_match", m->msm);
        break;
    }
    case Q_BOOSTING: {
        cJSON *c = cJSON_AddObjectToObject(o, "boosting");
        cJSON_AddItemToObject(c, "positive", to_json(q->must[0]));
        cJSON_AddItemToObject(c, "negative", to_json(q->must[1]));
        cJSON_AddNumberToObject(c, "negative_boost", q->boost);
        break;
    }
    case Q_EXISTS: {
        cJSON *e = cJSON_AddObjectToObject(o, "exists");
        cJSON_AddStringToObject(e, "field", q->field ? "user_agent" : "url");
        break;
    }
    }
    return o;
}

/* Returns 1 and the score if doc d matches q. */
static int bf_eval(const bq *q, const bdoc *d, double *score)
{
    double x0;
    *score = 0;
    switch (q->type) {
    case Q_MATCH: {
        size_t matched = 0, n = q->nqtok;
        double s = 0;
        for (size_t i = 0; i < n; i++) {
            if (tf_of(d, q->field, q->qtok[i].t, q->qtok[i].n)) {
                matched++;
                s += text_score(q->field, q->qtok[i].t, q->qtok[i].n, d, 1.0);
            }
        }
        if (n == 0)
            return 0;
        int ok = q->op_and ? matched == n
                 : q->msm ? matched >= (size_t)q->msm && matched > 0
                 : matched > 0;
        *score = s;
        return ok;
    }
    case Q_KW:
        if (!d->kw[q->field] || strcmp(d->kw[q->field], q->text))
            return 0;
        *score = kw_score(q->field, q->text, d);
        return 1;
    case Q_NUM:
        *score = 1;
        return d->status == q->lo;
    case Q_RANGE: {
        long long v = num_of(d, q->field);
        int ok = (!q->has_lo || (q->lo_incl ? v >= q->lo : v > q->lo)) &&
                 (!q->has_hi || (q->hi_incl ? v <= q->hi : v < q->hi));
        *score = 1;
        return ok;
    }
    case Q_ALL:
        *score = 1;
        return 1;
    case Q_PREFIX:
    case Q_WILD:
    case Q_REGEXP: {
        const char *v = d->kw[q->field];
        *score = 1;
        if (!v)
            return 0;
        if (q->type == Q_PREFIX)
            return !strncmp(v, q->text, strlen(q->text));
        if (q->type == Q_WILD)
            return bf_wild(q->text, v);
        regex_t re;
        if (regcomp(&re, q->ere, REG_EXTENDED | REG_NOSUB))
            return 0;
        int m = regexec(&re, v, 0, NULL, 0) == 0;
        regfree(&re);
        return m;
    }
    case Q_FUZZY: {
        int any = 0;
        for (int i = 0; i < q->fz_nsel; i++)
            if (tf_of(d, q->field, q->fz_sel[i].t, q->fz_sel[i].n)) {
                any = 1;
                *score += text_score_df(q->field, q->fz_sel[i].t, q->fz_sel[i].n,
                                        d, q->fz_boost[i], q->fz_df);
            }
        return any;
    }
    case Q_CONST:
        *score = q->boost;
        return bf_eval(q->must[0], d, &x0);
    case Q_MM:
    case Q_DISMAX: {
        double best = 0, sum = 0, x;
        int any = 0;
        for (int i = 0; i < q->nmust; i++)
            if (bf_eval(q->must[i], d, &x)) {
                any = 1;
                sum += x;
                best = x > best ? x : best;
            }
        *score = q->type == Q_MM && q->mm_most ? sum
                                               : best + q->boost * (sum - best);
        return any;
    }
    case Q_BOOSTING: {
        double x;
        if (!bf_eval(q->must[0], d, score))
            return 0;
        if (bf_eval(q->must[1], d, &x))
            *score *= q->boost;
        return 1;
    }
    case Q_EXISTS:
        *score = 1;
        return 1; /* every doc of the sample has url and user_agent */
    case Q_BOOL: {
        double s = 0, x;
        if (!q->nmust && !q->nshould && !q->nfilter && !q->nnot) {
            *score = 1; /* Elasticsearch rewrites bool {} to match_all */
            return 1;
        }
        for (int i = 0; i < q->nmust; i++) {
            if (!bf_eval(q->must[i], d, &x))
                return 0;
            s += x;
        }
        for (int i = 0; i < q->nfilter; i++)
            if (!bf_eval(q->filter[i], d, &x))
                return 0;
        for (int i = 0; i < q->nnot; i++)
            if (bf_eval(q->not[i], d, &x))
                return 0;
        int cnt = 0;
        for (int i = 0; i < q->nshould; i++)
            if (bf_eval(q->should[i], d, &x)) {
                cnt++;
                s += x;
            }
        int msm = q->msm ? q->msm : (q->nshould && !q->nmust && !q->nfilter) ? 1 : 0;
        if (cnt < msm)
            return 0;
        *score = s;
        return 1;
    }
    }
    return 0;
}

/* ---- the engine side ---------------------------------------------------- */

static fds_mapping *mapping;
static fds_sidx *sidx[NSEG];
static fds_search_segment segs[NSEG];
static uint8_t *live[NSEG];
static uint64_t wand_scored, wand_total;

static fds_search_result run(const char *body, fds_search_request **rq)
{
    fds_err err;
    fds_err_clear(&err);
    fds_search_result res;
    memset(&res, 0, sizeof res);
    if (fds_search_parse(body, strlen(body), mapping, 0, rq, &err)) {
        fprintf(stderr, "parse failed: %s\n  %s\n", err.reason, body);
        fds_test_failures++;
        *rq = NULL;
        return res;
    }
    if (fds_search_execute(*rq, segs, NSEG, &res, &err)) {
        fprintf(stderr, "execute failed: %s\n", err.reason);
        fds_test_failures++;
    }
    return res;
}

static const bdoc *hit_doc(const fds_hit *h)
{
    size_t l;
    const char *id = fds_sidx_doc_id(sidx[h->seg], h->doc, &l);
    int k = atoi(id + 4);
    return &bd[k];
}

typedef struct cand {
    size_t i;
    double s;
    long long key;
} cand;

static int by_score(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->s != y->s)
        return x->s > y->s ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int sort_desc;
static int by_key(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->key != y->key)
        return (x->key < y->key ? -1 : 1) * (sort_desc ? -1 : 1);
    return x->i < y->i ? -1 : x->i > y->i;
}

/* search_after from the last of the first `nhits` sorted hits gives the
 * rest of the brute-force order c[0..nc) (sorted on num_field[sortf]). */
static void check_search_after(int qi, const char *text, int sortf, int desc,
                               const cand *c, size_t nc, size_t nhits)
{
    long long last = c[nhits - 1].key;
    static char sa[65536];
    cJSON *tmp = cJSON_Parse(text);
    char *qs = cJSON_PrintUnformatted(cJSON_GetObjectItem(tmp, "query"));
    snprintf(sa, sizeof sa,
             "{\"query\":%s,\"size\":5,\"sort\":[{\"%s\":\"%s\"}],"
             "\"search_after\":[%lld]}",
             qs, num_field[sortf], desc ? "desc" : "asc", last);
    free(qs);
    cJSON_Delete(tmp);
    fds_search_request *r2;
    fds_search_result res2 = run(sa, &r2);
    size_t k = 0;
    while (k < nc && (desc ? c[k].key >= last : c[k].key <= last))
        k++;
    for (size_t i = 0; r2 && i < res2.nhits; i++) {
        if (k + i >= nc || hit_doc(&res2.hits[i]) != &bd[c[k + i].i]) {
            fprintf(stderr, "q%d search_after hit %zu differs\n", qi, i);
            fds_test_failures++;
            break;
        }
    }
    if (r2)
        ASSERT_EQ_U(res2.nhits, nc - k < 5 ? nc - k : 5);
    fds_search_result_free(&res2);
    fds_search_request_free(r2);
}

/* A request of `text` reading every hit in pages of `size`: from 0,
 * nothing counted; ranked by score, every page goes document at a time
 * (search_after +infinity on the first, as a scroll's does).  NULL when it
 * does not parse. */
/* Pages of a cursor check: about this many, of at least 3 hits (the test's
 * run time grows with their count: each page runs the whole query). */
#define CURSOR_PAGES 12
static fds_search_request *cursor_req(const char *text, uint32_t size)
{
    fds_err err;
    fds_err_clear(&err);
    fds_search_request *rq;
    if (fds_search_parse(text, strlen(text), mapping, 0, &rq, &err))
        return NULL;
    rq->from = 0;
    rq->size = size;
    rq->max_window = UINT32_MAX;
    rq->track_total = FDS_TRACK_TOTAL_NONE;
    if (rq->nsort == 0) {
        rq->nafter = 1;
        rq->after[0] = (fds_after_val){.num = INFINITY};
    }
    return rq;
}

/* Paging after a cursor -- the last hit's sort values (or score) with its
 * (seg, doc) as the tie-break, as a scroll pages -- gives every hit of the
 * one-page search of `text` once, in its order. */
static void check_cursor_paging(int qi, const char *text, size_t nc)
{
    fds_err err;
    fds_err_clear(&err);
    fds_search_request *all = cursor_req(text, (uint32_t)(nc ? nc : 1));
    fds_search_request *pg = cursor_req(text, (uint32_t)(nc / CURSOR_PAGES + 3));
    fds_search_result ref = {0};
    if (!all || !pg || fds_search_execute(all, segs, NSEG, &ref, &err)) {
        fds_test_failures++;
        goto out;
    }
    size_t k = 0;
    for (;;) {
        fds_search_result r;
        if (fds_search_execute(pg, segs, NSEG, &r, &err)) {
            fds_test_failures++;
            break;
        }
        for (size_t i = 0; i < r.nhits; i++, k++)
            if (k >= ref.nhits || r.hits[i].seg != ref.hits[k].seg ||
                r.hits[i].doc != ref.hits[k].doc) {
                fprintf(stderr, "q%d cursor paging: hit %zu differs\n", qi, k);
                fds_test_failures++;
                fds_search_result_free(&r);
                goto out;
            }
        if (!r.nhits) {
            fds_search_result_free(&r);
            break;
        }
        const fds_hit *h = &r.hits[r.nhits - 1];
        for (unsigned q = 0; q < pg->nafter; q++)
            free(pg->after[q].str);
        pg->nafter = pg->nsort ? pg->nsort : 1;
        for (unsigned q = 0; q < pg->nafter; q++) {
            bool kw = pg->nsort && pg->sort[q].ftype == FDS_FT_KEYWORD &&
                      pg->sort[q].kind == FDS_SORT_FIELD;
            bool none = pg->nsort && (kw ? !h->sort_str[q] : isnan(h->sort_num[q]));
            pg->after[q] = (fds_after_val){
                .is_null = none, .num = pg->nsort ? h->sort_num[q] : (double)h->score,
                .lnum = pg->nsort ? h->sort_long[q] : 0,
                .str = kw && !none ? strndup(h->sort_str[q], h->sort_str_len[q]) : NULL,
                .str_len = kw && !none ? h->sort_str_len[q] : 0};
        }
        pg->after_tie = true;
        pg->after_seg = h->seg;
        pg->after_doc = h->doc;
        fds_search_result_free(&r);
    }
    ASSERT_EQ_U(k, ref.nhits);
out:
    fds_search_result_free(&ref);
    fds_search_request_free(all);
    fds_search_request_free(pg);
}

/* The total of `body` parsed for _count (for_count 1) or as a search;
 * UINT64_MAX when it fails. */
static uint64_t count_of(const char *body, int for_count, size_t *nhits)
{
    fds_err err;
    fds_err_clear(&err);
    fds_search_request *rq;
    if (fds_search_parse(body, strlen(body), mapping, for_count, &rq, &err)) {
        fprintf(stderr, "parse failed: %s\n  %s\n", err.reason, body);
        return UINT64_MAX;
    }
    fds_search_result res;
    uint64_t total = UINT64_MAX;
    if (fds_search_execute(rq, segs, NSEG, &res, &err) == 0) {
        total = res.total;
        *nhits = res.nhits;
        fds_search_result_free(&res);
    }
    fds_search_request_free(rq);
    return total;
}

/* Counting without a page: _count and size 0 (with and without an exact
 * total) give the brute-force count of `q` (nc matches). */
static void check_count_only(int qi, const bq *q, size_t nc)
{
    cJSON *qj = to_json(q);
    char *qs = cJSON_PrintUnformatted(qj);
    cJSON_Delete(qj);
    static char b[3][65536];
    snprintf(b[0], sizeof b[0], "{\"query\":%s}", qs);
    snprintf(b[1], sizeof b[1], "{\"query\":%s,\"size\":0,"
             "\"track_total_hits\":true}", qs);
    snprintf(b[2], sizeof b[2], "{\"query\":%s,\"size\":0}", qs);
    free(qs);
    for (int k = 0; k < 3; k++) {
        size_t nhits = 0;
        uint64_t got = count_of(b[k], k == 0, &nhits);
        uint64_t want = k == 2 && nc > 10000 ? 10000 : nc;
        if (got != want || nhits) {
            fprintf(stderr, "q%d count-only %d: total %llu (%zu hits), brute "
                    "force %zu\n  %s\n", qi, k, (unsigned long long)got, nhits,
                    nc, b[k]);
            fds_test_failures++;
        }
    }
}

/* A page ranked by score does not depend on how far hits are counted:
 * track_total_hits true (every hit scored by the counting pass) and false
 * (pruning from the first doc) give the same hits with bit-identical
 * scores as `res`; so does `"min_score": 0`, which no score is below and
 * which takes the doc-at-a-time path, none of the pruning (the exhaustive
 * BM25: a disjunction's scores must equal it to the last bit), and each
 * hit's explanation there has the hit's score as its value. */
static bool sliced; /* MaxScore in two slices: also compare with one */

static void check_same_hits(int qi, const bq *q, int size, int from,
                            const fds_search_result *res)
{
    for (int k = 0; k < (sliced ? 4 : 3); k++) {
        cJSON *body = cJSON_CreateObject();
        cJSON_AddItemToObject(body, "query", to_json(q));
        cJSON_AddNumberToObject(body, "size", size);
        cJSON_AddNumberToObject(body, "from", from);
        if (k < 2)
            cJSON_AddBoolToObject(body, "track_total_hits", k == 0);
        if (k == 2) {
            cJSON_AddNumberToObject(body, "min_score", 0);
            cJSON_AddTrueToObject(body, "explain");
        }
        char *text = cJSON_PrintUnformatted(body);
        cJSON_Delete(body);
        fds_search_request *rq;
        if (k == 3)
            fds_search_set_slice_min(UINT64_MAX);
        fds_search_result o = run(text, &rq);
        if (k == 3)
            fds_search_set_slice_min(0);
        bool same = rq && o.nhits == res->nhits;
        for (size_t i = 0; same && i < o.nhits; i++)
            same = o.hits[i].seg == res->hits[i].seg &&
                   o.hits[i].doc == res->hits[i].doc &&
                   !memcmp(&o.hits[i].score, &res->hits[i].score,
                           sizeof o.hits[i].score);
        /* and an explanation's value is the score, to the bit */
        for (size_t i = 0; same && k == 2 && i < o.nhits; i++)
            if (!o.explain || !o.explain[i] ||
                memcmp(&o.explain[i]->value, &o.hits[i].score,
                       sizeof o.hits[i].score)) {
                fprintf(stderr, "q%d hit %zu: explanation %.9g, score %.9g\n",
                        qi, i, o.explain && o.explain[i]
                                   ? o.explain[i]->value : -1.0,
                        o.hits[i].score);
                same = false;
            }
        if (!same) {
            fprintf(stderr, "q%d hits differ %s\n", qi,
                    k == 0 ? "with track_total_hits true"
                    : k == 1 ? "with track_total_hits false"
                    : k == 2 ? "with min_score 0 (doc at a time) and explain"
                             : "in one slice");
            fds_test_failures++;
        }
        fds_search_result_free(&o);
        fds_search_request_free(rq);
        free(text);
    }
}

static int check_query(int qi)
{
    bq *q = gen(0);
    int fails0 = fds_test_failures;
    int size = (int)rnd(25), from = rnd(4) == 0 ? (int)rnd(20) : 0;
    int sortf = rnd(4) == 0 ? (int)rnd(3) : -1; /* numeric field sort */
    int desc = rnd(2);
    int tt = rnd(5); /* 0 default, 1 true, 2 false, 3 = 50, 4 = 1..300 */
    int tt_n = tt == 3 ? 50 : 1 + (int)rnd(300);
    cJSON *body = cJSON_CreateObject();
    cJSON_AddItemToObject(body, "query", to_json(q));
    cJSON_AddNumberToObject(body, "size", size);
    cJSON_AddNumberToObject(body, "from", from);
    if (tt == 1) cJSON_AddTrueToObject(body, "track_total_hits");
    if (tt == 2) cJSON_AddFalseToObject(body, "track_total_hits");
    if (tt >= 3) cJSON_AddNumberToObject(body, "track_total_hits", tt_n);
    if (sortf >= 0) {
        cJSON *s = cJSON_AddArrayToObject(body, "sort");
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, num_field[sortf], desc ? "desc" : "asc");
        cJSON_AddItemToArray(s, o);
    }
    char *text = cJSON_PrintUnformatted(body);
    cJSON_Delete(body);

    /* brute force */
    cand *c = malloc(nd * sizeof *c);
    size_t nc = 0;
    for (size_t i = 0; i < nd; i++) {
        if (!bd[i].live)
            continue;
        double s;
        if (bf_eval(q, &bd[i], &s)) {
            c[nc].i = i;
            c[nc].s = s;
            c[nc].key = sortf >= 0 ? num_of(&bd[i], sortf) : 0;
            nc++;
        }
    }
    sort_desc = desc;
    qsort(c, nc, sizeof *c, sortf >= 0 ? by_key : by_score);

    check_count_only(qi, q, nc);
    fds_search_request *rq;
    fds_search_result res = run(text, &rq);
    if (!rq)
        goto out;
    /* totals */
    uint64_t limit = tt == 1 ? UINT64_MAX : tt >= 3 ? (uint64_t)tt_n : 10000;
    if (tt != 2) {
        uint64_t want = nc > limit ? limit : nc;
        if (res.total != want || res.total_is_lower_bound != (nc > limit)) {
            fprintf(stderr, "q%d total %llu%s, brute force %zu\n", qi,
                    (unsigned long long)res.total,
                    res.total_is_lower_bound ? "+" : "", nc);
            fds_test_failures++;
        }
    }
    size_t want_hits = nc > (size_t)from ? nc - from : 0;
    if (want_hits > (size_t)size)
        want_hits = size;
    ASSERT_EQ_U(res.nhits, want_hits);
    if (sortf >= 0) {
        for (size_t i = 0; i < res.nhits && i < want_hits; i++) {
            const bdoc *d = hit_doc(&res.hits[i]);
            if (d != &bd[c[from + i].i]) {
                fprintf(stderr, "q%d sorted hit %zu: %s, expected %s\n", qi, i,
                        d->id, bd[c[from + i].i].id);
                fds_test_failures++;
                break;
            }
            ASSERT(res.hits[i].nsort == 1 &&
                   (long long)res.hits[i].sort_num[0] == c[from + i].key);
        }
        /* search_after from the last hit gives the rest */
        if (res.nhits && from == 0)
            check_search_after(qi, text, sortf, desc, c, nc, res.nhits);
    } else {
        /* scores: every hit's score is its brute-force score; order desc */
        for (size_t i = 0; i < res.nhits; i++) {
            const bdoc *d = hit_doc(&res.hits[i]);
            double s;
            int m = bf_eval(q, d, &s);
            if (!m || !d->live || fabs(s - res.hits[i].score) > 1e-4 * fmax(1, s)) {
                fprintf(stderr, "q%d hit %s score %.6f, brute force %.6f (match %d live %d)\n",
                        qi, d->id, res.hits[i].score, s, m, d->live);
                fds_test_failures++;
                break;
            }
            if (i && res.hits[i].score > res.hits[i - 1].score + 1e-6) {
                fprintf(stderr, "q%d hits not in score order\n", qi);
                fds_test_failures++;
            }
        }
        /* completeness: the k-th score matches, nobody clearly better is
         * missing from the page */
        if (want_hits && res.nhits) { /* (none: counted a failure above) */
            double kth = c[from + want_hits - 1].s;
            double got = res.hits[res.nhits - 1].score;
            if (fabs(kth - got) > 1e-4 * fmax(1, kth)) {
                fprintf(stderr, "q%d last score %.6f, brute force %.6f\n", qi,
                        got, kth);
                fds_test_failures++;
            }
            if (from == 0)
                for (size_t j = 0; j < nc && c[j].s > kth + 1e-3; j++) {
                    int found = 0;
                    for (size_t i = 0; i < res.nhits; i++)
                        found |= hit_doc(&res.hits[i]) == &bd[c[j].i];
                    if (!found) {
                        fprintf(stderr, "q%d missing %s (%.6f)\n", qi,
                                bd[c[j].i].id, c[j].s);
                        fds_test_failures++;
                        break;
                    }
                }
        }
        wand_scored += res.postings_scored;
        wand_total += res.postings_total;
        check_same_hits(qi, q, size, from, &res);
    }
    if (qi % 4 == 0) /* every hit once, in order, page after page */
        check_cursor_paging(qi, text, nc);
out:
    if (fds_test_failures != fails0)
        fprintf(stderr, "  query %d: %s\n", qi, text);
    fds_search_result_free(&res);
    fds_search_request_free(rq);
    free(text);
    free(c);
    bq_free(q);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "datasets/nginx-zanbil-access-10k.log";
    int nq = argc > 2 ? atoi(argv[2]) : NQUERIES;
    if (argc > 3)
        rng = strtoull(argv[3], NULL, 0) | 1;
    if (argc > 4 && !strcmp(argv[4], "sliced")) {
        sliced = true;
        fds_search_set_slice_min(0); /* every MaxScore pass on two threads */
    }
    bool wide = argc > 4 && !strcmp(argv[4], "wide");
    qt_docs docs;
    if (qt_load(path, &docs, 100000)) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    if (wide) { /* the sample three times over, in doc order */
        size_t n0 = docs.n;
        docs.json = realloc(docs.json, 3 * n0 * sizeof *docs.json);
        docs.len = realloc(docs.len, 3 * n0 * sizeof *docs.len);
        ASSERT(docs.json && docs.len);
        for (size_t i = n0; i < 3 * n0; i++) {
            docs.len[i] = docs.len[i % n0];
            docs.json[i] = malloc(docs.len[i] + 1);
            ASSERT(docs.json[i] != NULL);
            memcpy(docs.json[i], docs.json[i % n0], docs.len[i] + 1);
        }
        docs.n = 3 * n0;
    }
    nd = docs.n;
    bd = calloc(nd, sizeof *bd);
    for (size_t i = 0; i < nd; i++) {
        bdoc *d = &bd[i];
        snprintf(d->id, sizeof d->id, "doc-%zu", i);
        cJSON *j = cJSON_ParseWithLength(docs.json[i], docs.len[i]);
        for (int f = 0; f < NTEXT; f++) {
            const char *v = cJSON_GetObjectItem(j, text_field[f])->valuestring;
            void *arg[2] = {d, &f};
            fds_analyze(v, strlen(v), collect, arg);
            if (strlen(v) <= 256) /* keyword ignore_above (ASCII sample) */
                d->kw[f] = strdup(v);
        }
        d->status = (long long)cJSON_GetObjectItem(j, "status")->valuedouble;
        d->bytes = (long long)cJSON_GetObjectItem(j, "body_bytes_sent")->valuedouble;
        d->ts = parse_ts(cJSON_GetObjectItem(j, "@timestamp")->valuestring);
        cJSON_Delete(j);
    }
    /* segments of uneven sizes, ~5% deleted */
    mapping = fds_mapping_create();
    size_t cut[NSEG + 1] = {0, nd / 7, nd / 2, nd * 4 / 5, nd};
    if (wide) { /* one large segment with deletes, and three small ones */
        size_t c[NSEG + 1] = {0, nd / 8, nd / 8 + 100, nd / 8 + 200, nd};
        memcpy(cut, c, sizeof cut);
    }
    char dir[] = "/tmp/fds-qprop-XXXXXX";
    ASSERT(mkdtemp(dir) != NULL);
    for (int s = 0; s < NSEG; s++) {
        fds_sidx_writer *w = fds_sidx_writer_create(mapping);
        uint32_t n = (uint32_t)(cut[s + 1] - cut[s]);
        live[s] = calloc((n + 7) / 8, 1);
        for (uint32_t k = 0; k < n; k++) {
            size_t i = cut[s] + k;
            fds_err err;
            fds_err_clear(&err);
            if (fds_sidx_writer_add(w, k, bd[i].id, strlen(bd[i].id),
                                    (const uint8_t *)docs.json[i], docs.len[i],
                                    &err)) {
                fprintf(stderr, "add: %s\n", err.reason);
                fds_test_failures++;
            }
            bd[i].seg = s;
            bd[i].sdoc = k;
            bd[i].live = s == 0 || rnd(20) != 0; /* segment 0 has no deletes */
            if (bd[i].live)
                live[s][k / 8] |= (uint8_t)(1u << (k % 8));
        }
        char p[256];
        snprintf(p, sizeof p, "%s/s%d.sidx", dir, s);
        fds_err err;
        fds_err_clear(&err);
        ASSERT(fds_sidx_writer_write(w, p, &err) == 0);
        fds_sidx_writer_free(w);
        ASSERT(fds_sidx_open(p, &sidx[s], &err) == 0);
        unlink(p);
        segs[s].sidx = sidx[s];
        segs[s].live = s == 0 ? NULL : live[s];
        segs[s].deleted = 0;
        for (uint32_t k = 0; segs[s].live && k < n; k++)
            segs[s].deleted += !((live[s][k / 8] >> (k % 8)) & 1);
    }
    rmdir(dir);
    for (int qi = 0; qi < nq && fds_test_failures < 20; qi++)
        check_query(qi);
    gen_mm = 1; /* multi_match against its brute-force dis_max / bool */
    for (int qi = nq; qi < nq + nq / 4 && fds_test_failures < 20; qi++)
        check_query(qi);
    gen_mm = 0;
    gen_exact = 1; /* whole urls, as the value they are */
    for (int qi = nq + nq / 4; qi < nq + nq / 2 && fds_test_failures < 20; qi++)
        check_query(qi);
    printf("%d queries; postings scored %llu of %llu (%.1f%%)\n", nq,
           (unsigned long long)wand_scored, (unsigned long long)wand_total,
           wand_total ? 100.0 * (double)wand_scored / (double)wand_total : 0);
    for (int s = 0; s < NSEG; s++) {
        fds_sidx_close(sidx[s]);
        free(live[s]);
    }
    fds_mapping_free(mapping);
    for (size_t i = 0; i < nd; i++) {
        for (int f = 0; f < NTEXT; f++) {
            for (size_t k = 0; k < bd[i].ntok[f]; k++)
                free(bd[i].toks[f][k].t);
            free(bd[i].toks[f]);
            free(bd[i].kw[f]);
        }
        free(docs.json[i]);
    }
    free(bd);
    free(docs.json);
    free(docs.len);
    for (size_t i = 0; i < nstats; i++)
        free(stats[i].t);
    free(stats);
    if (fds_test_failures)
        fprintf(stderr, "%d failure(s)\n", fds_test_failures);
    return fds_test_failures ? 1 : 0;
}
