/*
 * synthgrow.c: documents whose vocabularies grow by the sample's Heaps' law.
 *
 * The model, per field (url, referrer, client address; the agent rides on
 * the client): document n is one of
 *   NEW   a new value made from a template (a sample line drawn uniformly),
 *   ORIG  the template line's own value, as logged,
 *   COPY  the value of document j, j uniform in [1, n-1].
 * Copying a uniformly drawn earlier document picks each value in proportion
 * to its count so far ("rich get richer": H. A. Simon, "On a class of skew
 * distribution functions", Biometrika 1955), which gives the heavy-tailed
 * frequencies of a real log: a few values very frequent, most seen once.
 * The document a value comes from is its root; a copy follows j's own copy
 * back to it (about ln n steps, each divides the index by e on average), so
 * only a byte of kinds is kept per document and a copied value is rebuilt
 * from its root's number.
 *
 * How often NEW: the law D(n) = K n^beta is fitted on the sample's prefixes
 * (least squares of log2 D over log2 n at lines N/10, N/5, N/2, N; the
 * bundled sample gives beta 0.92 url, 0.78 remote_addr, 0.74 user_agent,
 * 0.77 referrer).  Document n is NEW with probability
 *     P(n) = dD/dn / m + (D(n) - seen) / tau(n),        clamped to [0, 1],
 * where m is the share of sample lines whose value can be renewed (a NEW
 * document that draws "/settings/logo" or referrer "-" takes it as ORIG),
 * "seen" the distinct values written so far, and tau(n) = n/16: the second
 * term pulls the count back to the law (values that came out equal to an
 * earlier one, sample values that ORIG documents brought in).  Else it is
 * ORIG with probability min(1/4, N/(4n)), so the first documents, like the
 * sample, are spread over many values (the sample's head keeps its share:
 * crawlers, the logo, the home page), and COPY otherwise.  D(n) is read from
 * per-1/64-octave tables with a linear step inside; all of it is integer
 * fixed point.
 *
 * Templates are drawn uniformly for NEW and ORIG alike and a copy takes its
 * root's template too, so in expectation every document's template is
 * uniform over the sample's lines: the status, method, service and
 * bot/browser mix stay the sample's.  The url's template line also gives
 * method, http_version, status and body_bytes_sent; the client's gives
 * remote_user and x_forwarded_for.
 *
 * What a NEW value looks like:
 *   - url: digit runs renewed (ids, filter ids such as b41, page numbers such
 *     as p53; 4+ digit ids may gain a digit), image sizes "200x200" kept, and
 *     each run of percent-encoded non-ASCII bytes (a Persian word, e.g.
 *     %D8%B3%D8%B4%D9%88%D8%A7%D8%B1) replaced with probability 1/2 by another
 *     word seen in the sample's URLs and referrers, encoded as there.
 *   - referrer: the same renewal after "scheme://host"; "-" and bare search
 *     engine addresses stay as they are.
 *   - remote_addr: a public IPv4 address that keeps the template's /16 (1/4)
 *     or /8 (1/4) or is drawn anew (1/2).
 *   - user_agent: a NEW client gets a new agent with probability
 *     P_agent(n) / P_addr(n) (so new agents arrive at the agent law's rate):
 *     its template's agent with version numbers renewed, each with
 *     probability 1/2 (Chrome/71.0.3578.98 -> Chrome/64.0.3912.41;
 *     "Mozilla/5.0" and numbers glued to letters, such as Win64, kept);
 *     otherwise, and for an ORIG client, the template line's agent.
 *   A NEW value equal to one written before is made again from the next key
 *   (up to FDS__SG_ATTEMPTS times); roots that needed a retry keep the
 *   attempt number in a small map so copies rebuild the same bytes.
 *
 * Memory: 1 byte per document (kinds), ~16 bytes per distinct value (the
 * seen-sets), the retry map: 131 MB peak RSS at 10M documents.  Documents
 * are numbered below 2^57 (the tables' range).
 */
#include "synthgrow.h"

#include "distinct.h"

#include <stdlib.h>
#include <string.h>

/* Named limits and constants. */
#define FDS__SG_Q 24                 /* fractional bits of log2 values, beta */
#define FDS__SG_ONE ((int64_t)1 << FDS__SG_Q)
#define FDS__SG_STEP_BITS 6          /* tables step by 1/64 octave of n */
#define FDS__SG_EXP_MAX 56           /* tables cover n < 2^57 */
#define FDS__SG_BUCKETS ((FDS__SG_EXP_MAX + 1) << FDS__SG_STEP_BITS)
#define FDS__SG_P_ONE ((uint64_t)1 << 32) /* probability 1 in thresholds */
#define FDS__SG_T_FRAC 8             /* fractional bits of law counts */
#define FDS__SG_RELAX_DIV 16         /* tau(n) = n / 16 documents */
#define FDS__SG_RELAX_MIN 16
#define FDS__SG_DIFF_MAX ((int64_t)1 << 36) /* |law - seen| clamp, Q8 */
#define FDS__SG_ATTEMPTS 8           /* tries to make a value not seen before */
#define FDS__SG_FIT_MIN 20           /* sample lines needed to fit a law */
#define FDS__SG_IP_TRIES 64          /* draws to find a public IPv4 address */
#define FDS__SG_GOLDEN 0x9e3779b97f4a7c15ull

/* Kinds of a document's value, 2 bits per field in kinds[] (field f at bit
 * 2f).  SG_RETRIED is a NEW value that needed a retry (its attempt is in the
 * retry map; only those roots look there).  The agent's slot is set on
 * client roots only: SG_NEW or SG_RETRIED for a new agent, else the
 * template's (read as ORIG). */
enum { SG_COPY, SG_NEW, SG_ORIG, SG_RETRIED };

/* Random streams (each field has its own). */
enum { SG_FRESH, SG_PICK, SG_TEMPLATE, SG_MAKE, SG_STREAMS };

/* Growable output buffer of one field. */
typedef struct fds__sg_buf {
    char *p;
    size_t len, cap;
    int oom;
} fds__sg_buf;

/* Roots that needed a retry: slot = root << 3 | attempt, 0 = empty. */
typedef struct fds__sg_retry {
    uint64_t *slot;
    size_t cap, n;
} fds__sg_retry;

struct fds_synthgrow {
    const fds_logrec *recs;
    uint32_t nrec;
    uint64_t next;                               /* next document number */
    uint64_t base[FDS_SYNTHGROW_FIELDS][SG_STREAMS]; /* per-stream hash keys */
    int64_t beta[FDS_SYNTHGROW_FIELDS], log2k[FDS_SYNTHGROW_FIELDS]; /* Q24 */
    /* Per 1/64-octave bucket b of n, at its lower bound: D(n) (Q8), dD/dn
     * (Q32) and dD/dn / m (Q32, capped at 1). */
    uint64_t law[FDS_SYNTHGROW_FIELDS][FDS__SG_BUCKETS];
    uint64_t slope[FDS_SYNTHGROW_FIELDS][FDS__SG_BUCKETS];
    uint64_t rate[FDS_SYNTHGROW_FIELDS][FDS__SG_BUCKETS];
    uint8_t *renewable;                          /* per line, bit per field */
    fds_logslice *words;                         /* Persian words, encoded */
    size_t nwords;
    uint8_t *kinds;                              /* per document */
    size_t kinds_cap;
    fds__distinct seen[FDS_SYNTHGROW_FIELDS];
    fds__sg_retry retry[FDS_SYNTHGROW_FIELDS];
    fds__sg_buf out[FDS_SYNTHGROW_FIELDS];
};

/* ------------------------------------------------------ fixed-point math */

/* log2(v) in Q24 for v >= 1 (bit-by-bit: square the mantissa, each
 * overflow past 2 is a 1 bit).  Exact to ~2^-24. */
static int64_t fds__sg_log2(uint64_t v)
{
    int e = 63 - __builtin_clzll(v);
    uint64_t m = e >= 28 ? v >> (e - 28) : v << (28 - e); /* Q28 in [1,2) */
    int64_t r = (int64_t)e << FDS__SG_Q;
    for (int k = 1; k <= FDS__SG_Q; k++) {
        m = (m * m) >> 28;
        if (m >= (2ull << 28)) {
            m >>= 1;
            r += (int64_t)1 << (FDS__SG_Q - k);
        }
    }
    return r;
}

static uint64_t fds__sg_isqrt(uint64_t x)
{
    uint64_t r = 0, bit = 1ull << 62;
    while (bit > x) bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

/* 2^y for y in Q24, as a fixed-point value with `frac` fractional bits,
 * saturated at 2^62.  2^f for the fraction is the product of 2^(2^-k) over
 * its 1 bits, those roots taken by integer square roots. */
static uint64_t fds__sg_exp2(int64_t y, int frac)
{
    int64_t ip = y >= 0 ? y >> FDS__SG_Q : -((-y + FDS__SG_ONE - 1) >> FDS__SG_Q);
    uint64_t f = (uint64_t)(y - ip * FDS__SG_ONE); /* [0, 2^24) */
    uint64_t root = 2ull << 30, r = 1ull << 30;   /* Q30: 2^(2^-k), result */
    for (int k = 1; k <= FDS__SG_Q; k++) {
        root = fds__sg_isqrt(root << 30);
        if (f >> (FDS__SG_Q - k) & 1) r = (r * root) >> 30;
    }
    int64_t sh = ip + frac - 30; /* r < 2^31 */
    if (sh > 31) return 1ull << 62;
    if (sh <= -63) return 0;
    return sh >= 0 ? r << sh : r >> -sh;
}

/* a * b for Q24 values of either sign (no shift of a negative number). */
static int64_t fds__sg_mul(int64_t a, int64_t b)
{
    int neg = (a < 0) != (b < 0);
    uint64_t ua = (uint64_t)(a < 0 ? -a : a), ub = (uint64_t)(b < 0 ? -b : b);
    int64_t m = (int64_t)((ua * ub) >> FDS__SG_Q);
    return neg ? -m : m;
}

/* log2 of the lower bound of bucket b (exponent b>>6, mantissa b&63). */
static int64_t fds__sg_bucket_log2(int b)
{
    int e = b >> FDS__SG_STEP_BITS, m = b & 63;
    if (e < FDS__SG_STEP_BITS) return fds__sg_log2((uint64_t)(64 + m) >> (6 - e));
    return ((int64_t)(e - 6) << FDS__SG_Q) + fds__sg_log2((uint64_t)(64 + m));
}

/* The lower bound of bucket b (exponent <= FDS__SG_EXP_MAX). */
static uint64_t fds__sg_bucket_low(int b)
{
    int e = b >> FDS__SG_STEP_BITS, m = b & 63;
    return e < FDS__SG_STEP_BITS ? (uint64_t)(64 + m) >> (6 - e)
                                 : (uint64_t)(64 + m) << (e - 6);
}

static int fds__sg_bucket(uint64_t n)
{
    int e = 63 - __builtin_clzll(n);
    if (e > FDS__SG_EXP_MAX) return FDS__SG_BUCKETS - 1;
    uint64_t m = e >= 6 ? (n >> (e - 6)) & 63 : (n << (6 - e)) & 63;
    return e * 64 + (int)m;
}

/* ------------------------------------------------- hashing and the kinds */

static uint64_t fds__sg_hash(const fds_synthgrow *g, int f, int kind, uint64_t n)
{
    return fds__distinct_mix(g->base[f][kind] ^ n);
}

/* Field f's kind of document j (<= the documents made so far). */
static int fds__sg_kind(const fds_synthgrow *g, int f, uint64_t j)
{
    return g->kinds[j - 1] >> (2 * f) & 3;
}

/* Uniform j in [1, n-1] (n >= 2): the document a COPY copies. */
static uint64_t fds__sg_pick(const fds_synthgrow *g, int f, uint64_t n)
{
    return 1 + fds__sg_hash(g, f, SG_PICK, n) % (n - 1);
}

/* The root (NEW or ORIG document) of document j's value of field f. */
static uint64_t fds__sg_root(const fds_synthgrow *g, int f, uint64_t j)
{
    while (fds__sg_kind(g, f, j) == SG_COPY) j = fds__sg_pick(g, f, j);
    return j;
}

/* The template line of a root (the agent's is its client's). */
static uint32_t fds__sg_template(const fds_synthgrow *g, int f, uint64_t root)
{
    if (f == FDS_SYNTHGROW_AGENT) f = FDS_SYNTHGROW_ADDR;
    return (uint32_t)(fds__sg_hash(g, f, SG_TEMPLATE, root) % g->nrec);
}

/* P(NEW) of field f at document n, times 2^32: the law's rate over the
 * renewable share plus (law - seen) / tau, clamped to [0, 2^32]. */
static uint64_t fds__sg_threshold(const fds_synthgrow *g, int f, uint64_t n)
{
    int b = fds__sg_bucket(n);
    uint64_t low = fds__sg_bucket_low(b);
    uint64_t law = g->law[f][b] + ((g->slope[f][b] * (n - low)) >> (32 - FDS__SG_T_FRAC));
    int64_t diff = (int64_t)law - (int64_t)(g->seen[f].n << FDS__SG_T_FRAC);
    if (diff > FDS__SG_DIFF_MAX) diff = FDS__SG_DIFF_MAX;
    if (diff < -FDS__SG_DIFF_MAX) diff = -FDS__SG_DIFF_MAX;
    uint64_t tau = n / FDS__SG_RELAX_DIV;
    if (tau < FDS__SG_RELAX_MIN) tau = FDS__SG_RELAX_MIN;
    int64_t t = (int64_t)g->rate[f][b] +
                diff * ((int64_t)1 << (32 - FDS__SG_T_FRAC)) / (int64_t)tau;
    return t < 0 ? 0 : (uint64_t)t > FDS__SG_P_ONE ? FDS__SG_P_ONE : (uint64_t)t;
}

/* P(ORIG | not NEW) at document n, times 2^32: min(1/4, N / 4n). */
static uint64_t fds__sg_orig(const fds_synthgrow *g, uint64_t n)
{
    return n <= g->nrec ? FDS__SG_P_ONE / 4 : ((uint64_t)g->nrec << 30) / n;
}

/* Decide field f's kind for document n (NEW with threshold thr). */
static int fds__sg_decide(const fds_synthgrow *g, int f, uint64_t n, uint64_t thr)
{
    uint64_t u = fds__sg_hash(g, f, SG_FRESH, n);
    if ((u >> 32) < thr) return SG_NEW;
    if (n == 1 || (u & 0xffffffffu) < fds__sg_orig(g, n)) return SG_ORIG;
    return SG_COPY;
}

/* ------------------------------------------------------------ retry map */

static int fds__sg_retry_get(const fds__sg_retry *m, uint64_t root)
{
    if (!m->n) return 0;
    size_t mask = m->cap - 1, i = (size_t)fds__distinct_mix(root) & mask;
    while (m->slot[i]) {
        if (m->slot[i] >> 3 == root) return (int)(m->slot[i] & 7);
        i = (i + 1) & mask;
    }
    return 0;
}

static int fds__sg_retry_put(fds__sg_retry *m, uint64_t root, int attempt)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : FDS__DISTINCT_CAP0;
        uint64_t *ns = calloc(ncap, sizeof *ns);
        if (!ns) return FDS_ENOMEM;
        for (size_t k = 0; k < m->cap; k++) {
            if (!m->slot[k]) continue;
            size_t i = (size_t)fds__distinct_mix(m->slot[k] >> 3) & (ncap - 1);
            while (ns[i]) i = (i + 1) & (ncap - 1);
            ns[i] = m->slot[k];
        }
        free(m->slot);
        m->slot = ns;
        m->cap = ncap;
    }
    size_t i = (size_t)fds__distinct_mix(root) & (m->cap - 1);
    while (m->slot[i]) i = (i + 1) & (m->cap - 1);
    m->slot[i] = root << 3 | (uint64_t)attempt;
    m->n++;
    return 0;
}

/* ---------------------------------------------------------- value makers */

static void fds__sg_put(fds__sg_buf *b, const char *s, size_t n)
{
    if (n == 0) return;
    if (b->len + n > b->cap) {
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap < b->len + n) ncap *= 2;
        char *np = realloc(b->p, ncap);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void fds__sg_putc(fds__sg_buf *b, char c) { fds__sg_put(b, &c, 1); }

static uint64_t fds__sg_next(uint64_t *st)
{
    *st += FDS__SG_GOLDEN;
    return fds__distinct_mix(*st);
}

static int fds__sg_digit(char c) { return c >= '0' && c <= '9'; }
static int fds__sg_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static int fds__sg_hex(char c)
{
    return fds__sg_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int fds__sg_hexval(char c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* Length of the run of percent-escaped non-ASCII bytes at s[k..len), 0 if
 * none ("%D8%B3..." is one Persian word; "%20" is not part of a word). */
static size_t fds__sg_word(const char *s, size_t k, size_t len)
{
    size_t j = k;
    while (j + 2 < len && s[j] == '%' && fds__sg_hex(s[j + 1]) &&
           fds__sg_hex(s[j + 2]) && fds__sg_hexval(s[j + 1]) >= 8)
        j += 3;
    return j - k;
}

/* Offset where a URL's path starts: after "scheme://host" if present. */
static size_t fds__sg_path_start(const char *s, size_t len)
{
    size_t k = 0;
    if (len >= 7 && !memcmp(s, "http://", 7)) k = 7;
    else if (len >= 8 && !memcmp(s, "https://", 8)) k = 8;
    else return 0;
    while (k < len && s[k] != '/') k++;
    return k;
}

/* Whether the digit run s[k..j) of a URL is renewed: not an image size
 * ("200x200": a run beside an 'x' that touches another digit). */
static int fds__sg_url_run(const char *s, size_t k, size_t j, size_t len)
{
    if (k >= 2 && s[k - 1] == 'x' && fds__sg_digit(s[k - 2])) return 0;
    if (j + 1 < len && s[j] == 'x' && fds__sg_digit(s[j + 1])) return 0;
    return 1;
}

/* How a digit run s[k..j) of an agent is renewed: 0 kept (a name such as
 * Win64 or Build/MMB29P, a 0 minor, a 5+ digit date such as Gecko/20100101),
 * 1 a major version right after '/' (Chrome/71: moved by -3..+3), 2 a later
 * component of a dotted or underscored version (3578 in 71.0.3578.98, 2 in
 * iOS 10_3_2: new digits of the same length). */
enum { SG_AGENT_KEEP, SG_AGENT_MAJOR, SG_AGENT_MINOR };
static int fds__sg_agent_run(const char *s, size_t k, size_t j)
{
    if (k > 0 && fds__sg_alpha(s[k - 1])) return SG_AGENT_KEEP;
    if (k >= 2 && (s[k - 1] == '.' || s[k - 1] == '_') && fds__sg_digit(s[k - 2]))
        return j - k >= 2 || s[k] != '0' ? SG_AGENT_MINOR : SG_AGENT_KEEP;
    if (k > 0 && s[k - 1] == '/' && j - k <= 4) return SG_AGENT_MAJOR;
    return SG_AGENT_KEEP;
}

/* Write major version s[0..d) (d <= 4) moved by -3..+3 (not 0), >= 1. */
static void fds__sg_major(fds__sg_buf *b, const char *s, size_t d, uint64_t *st)
{
    unsigned v = 0;
    for (size_t k = 0; k < d; k++) v = v * 10 + (unsigned)(s[k] - '0');
    int delta = (int)(fds__sg_next(st) % 6) - 3; /* -3..2 */
    if (delta >= 0) delta++;                      /* -3..-1, 1..3 */
    int nv = (int)v + delta;
    if (nv < 1) nv = (int)v - delta;
    char tmp[8];
    size_t n = 0;
    do tmp[n++] = (char)('0' + nv % 10); while ((nv /= 10) > 0);
    while (n) fds__sg_putc(b, tmp[--n]);
}

#define FDS__SG_AGENT_KEEP "Mozilla/5.0"

/* A new run of digits in place of s[0..d): same length (4+ digit ids may
 * gain one digit when `widen`), no new leading zero. */
static void fds__sg_renew(fds__sg_buf *b, const char *s, size_t d, int widen,
                          uint64_t *st)
{
    size_t nd = d;
    if (widen && d >= 4 && (fds__sg_next(st) & 1)) nd = d + 1;
    for (size_t k = 0; k < nd; k++) {
        uint64_t r = fds__sg_next(st);
        char c = (k == 0 && s[0] != '0') ? (char)('1' + r % 9) : (char)('0' + r % 10);
        fds__sg_putc(b, c);
    }
}

/* A renewed URL (or referrer) from template s[0..len).  Returns whether
 * anything in s can be renewed; with b NULL nothing is written. */
static int fds__sg_make_url(const fds_synthgrow *g, fds__sg_buf *b,
                            const char *s, size_t len, uint64_t key)
{
    uint64_t st = key;
    int can = 0;
    size_t k = fds__sg_path_start(s, len);
    if (b) fds__sg_put(b, s, k);
    while (k < len) {
        size_t w = fds__sg_word(s, k, len);
        if (w) {
            can |= g->nwords > 1;
            uint64_t r = b ? fds__sg_next(&st) : 0;
            if (b && g->nwords > 1 && (r & 1)) {
                const fds_logslice *nw = &g->words[(r >> 1) % g->nwords];
                fds__sg_put(b, nw->ptr, nw->len);
            } else if (b) {
                fds__sg_put(b, s + k, w);
            }
            k += w;
        } else if ((s[k] == '%' || s[k] == '\\') && k + 3 <= len) {
            size_t n = s[k] == '%' ? 3 : (s[k + 1] == 'x' && k + 4 <= len ? 4 : 2);
            if (b) fds__sg_put(b, s + k, n);
            k += n;
        } else if (fds__sg_digit(s[k])) {
            size_t j = k;
            while (j < len && fds__sg_digit(s[j])) j++;
            int renew = fds__sg_url_run(s, k, j, len);
            can |= renew;
            if (b && renew) fds__sg_renew(b, s + k, j - k, 1, &st);
            else if (b) fds__sg_put(b, s + k, j - k);
            k = j;
        } else {
            if (b) fds__sg_putc(b, s[k]);
            k++;
        }
    }
    return can;
}

/* A user agent with version numbers renewed, each with probability 1/2
 * (see fds__sg_agent_run; "Mozilla/5.0" kept).  Returns whether s has a
 * renewable number; with b NULL writes nothing. */
static int fds__sg_make_agent(fds__sg_buf *b, const char *s, size_t len,
                              uint64_t key)
{
    uint64_t st = key;
    int can = 0;
    size_t k = 0, keep = strlen(FDS__SG_AGENT_KEEP);
    if (len >= keep && !memcmp(s, FDS__SG_AGENT_KEEP, keep)) k = keep;
    if (b) fds__sg_put(b, s, k);
    while (k < len) {
        if (s[k] == '\\' && k + 4 <= len && s[k + 1] == 'x') {
            if (b) fds__sg_put(b, s + k, 4);
            k += 4;
        } else if (fds__sg_digit(s[k])) {
            size_t j = k;
            while (j < len && fds__sg_digit(s[j])) j++;
            int how = fds__sg_agent_run(s, k, j);
            can |= how != SG_AGENT_KEEP;
            if (!b) {
            } else if (how == SG_AGENT_KEEP || !(fds__sg_next(&st) & 1)) {
                fds__sg_put(b, s + k, j - k);
            } else if (how == SG_AGENT_MAJOR) {
                fds__sg_major(b, s + k, j - k, &st);
            } else {
                fds__sg_renew(b, s + k, j - k, 0, &st);
            }
            k = j;
        } else {
            if (b) fds__sg_putc(b, s[k]);
            k++;
        }
    }
    return can;
}

/* Parse a dotted IPv4 address into o[4]; returns 0 or -1. */
static int fds__sg_ipv4(const char *s, size_t len, unsigned o[4])
{
    size_t k = 0;
    for (int i = 0; i < 4; i++) {
        unsigned v = 0;
        size_t d = 0;
        while (k < len && fds__sg_digit(s[k]) && d < 3) v = v * 10 + (unsigned)(s[k++] - '0'), d++;
        if (!d || v > 255) return -1;
        o[i] = v;
        if (i < 3 && (k >= len || s[k++] != '.')) return -1;
    }
    return k == len ? 0 : -1;
}

/* Public unicast (not RFC 1918/6598/3927 private, loopback, multicast,
 * reserved, network or broadcast host). */
static int fds__sg_public(const unsigned o[4])
{
    unsigned a = o[0], b = o[1];
    if (a == 0 || a == 10 || a == 127 || a >= 224) return 0;
    if (a == 100 && (b & 0xc0) == 64) return 0;
    if ((a == 169 && b == 254) || (a == 172 && (b & 0xf0) == 16)) return 0;
    if ((a == 192 && b == 168) || (a == 198 && (b == 18 || b == 19))) return 0;
    return o[3] != 0 && o[3] != 255;
}

/* A new client address from template s: keeps its /16 (1/4) or /8 (1/4),
 * or none. */
static void fds__sg_make_addr(fds__sg_buf *b, const char *s, size_t len,
                              uint64_t key)
{
    uint64_t st = key;
    unsigned t[4], o[4];
    int keep = 0;
    if (fds__sg_ipv4(s, len, t) == 0) {
        uint64_t r = fds__sg_next(&st) & 3;
        keep = r == 0 ? 2 : r == 1 ? 1 : 0;
    }
    for (int tries = 0; tries < FDS__SG_IP_TRIES; tries++) {
        if (tries == FDS__SG_IP_TRIES / 2) keep = 0;
        uint64_t r = fds__sg_next(&st);
        for (int i = 0; i < 4; i++) o[i] = i < keep ? t[i] : (unsigned)(r >> (8 * i)) & 255;
        if (fds__sg_public(o)) break;
    }
    char tmp[16];
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        unsigned v = o[i];
        if (i) tmp[n++] = '.';
        if (v >= 100) tmp[n++] = (char)('0' + v / 100);
        if (v >= 10) tmp[n++] = (char)('0' + v / 10 % 10);
        tmp[n++] = (char)('0' + v % 10);
    }
    fds__sg_put(b, tmp, n);
}

/* The template value of field f in record r. */
static fds_logslice fds__sg_field(const fds_logrec *r, int f)
{
    switch (f) {
    case FDS_SYNTHGROW_URL: return r->url;
    case FDS_SYNTHGROW_ADDR: return r->remote_addr;
    case FDS_SYNTHGROW_AGENT: return r->user_agent;
    default: return r->referrer;
    }
}

/* Build field f's NEW value of `root` with retry `attempt` into g->out[f]. */
static fds_logslice fds__sg_build(fds_synthgrow *g, int f, uint64_t root,
                                  int attempt)
{
    fds_logslice src = fds__sg_field(&g->recs[fds__sg_template(g, f, root)], f);
    fds__sg_buf *b = &g->out[f];
    b->len = 0;
    uint64_t key = fds__distinct_mix(fds__sg_hash(g, f, SG_MAKE, root) +
                                     (uint64_t)attempt);
    if (f == FDS_SYNTHGROW_ADDR) fds__sg_make_addr(b, src.ptr, src.len, key);
    else if (f == FDS_SYNTHGROW_AGENT) fds__sg_make_agent(b, src.ptr, src.len, key);
    else fds__sg_make_url(g, b, src.ptr, src.len, key);
    return (fds_logslice){b->p, b->len};
}

/* Field f's value of document n whose root is `root`, of kind `kind` (in
 * the agent's slot for the agent).  At root == n the value is written for
 * the first time: a NEW value is made unlike every earlier value if it can
 * be (a retry turns the root's kind to SG_RETRIED), and counted. */
static int fds__sg_value(fds_synthgrow *g, int f, uint64_t root, int kind,
                         uint64_t n, fds_logslice *v)
{
    if (kind != SG_NEW && kind != SG_RETRIED) {
        *v = fds__sg_field(&g->recs[fds__sg_template(g, f, root)], f);
        if (root != n) return 0;
        return fds__distinct_add(&g->seen[f], fds__distinct_hash(v->ptr, v->len)) < 0
                   ? FDS_ENOMEM : 0;
    }
    if (root != n) {
        int attempt = kind == SG_RETRIED ? fds__sg_retry_get(&g->retry[f], root) : 0;
        *v = fds__sg_build(g, f, root, attempt);
        return g->out[f].oom ? FDS_ENOMEM : 0;
    }
    for (int a = 0; a < FDS__SG_ATTEMPTS; a++) {
        *v = fds__sg_build(g, f, root, a);
        if (g->out[f].oom) return FDS_ENOMEM;
        int added = fds__distinct_add(&g->seen[f], fds__distinct_hash(v->ptr, v->len));
        if (added < 0) return FDS_ENOMEM;
        if (added || a == FDS__SG_ATTEMPTS - 1) {
            if (a == 0) return 0;
            g->kinds[n - 1] |= (uint8_t)(SG_RETRIED << (2 * f));
            return fds__sg_retry_put(&g->retry[f], root, a);
        }
    }
    return 0;
}

/* ------------------------------------------------------------ the fit */

/* Fit D(n) = K n^beta on the sample prefixes and fill the tables. */
static int fds__sg_fit(fds_synthgrow *g)
{
    static const unsigned tenths[4] = {1, 2, 5, 10};
    uint64_t pts[FDS_SYNTHGROW_FIELDS][4] = {{0}};
    uint64_t at[4];
    for (int k = 0; k < 4; k++) at[k] = (uint64_t)g->nrec * tenths[k] / 10;
    fds__distinct d[FDS_SYNTHGROW_FIELDS] = {{0}};
    int rc = 0;
    for (uint32_t i = 0; i < g->nrec && !rc; i++) {
        for (int f = 0; f < FDS_SYNTHGROW_FIELDS; f++) {
            fds_logslice s = fds__sg_field(&g->recs[i], f);
            if (fds__distinct_add(&d[f], fds__distinct_hash(s.ptr, s.len)) < 0)
                rc = FDS_ENOMEM;
            for (int k = 0; k < 4; k++)
                if (i + 1 == at[k]) pts[f][k] = d[f].n;
        }
    }
    for (int f = 0; f < FDS_SYNTHGROW_FIELDS; f++) fds__distinct_free(&d[f]);
    if (rc) return rc;

    for (int f = 0; f < FDS_SYNTHGROW_FIELDS; f++) {
        int64_t beta = FDS__SG_ONE, log2k = 0;
        if (g->nrec >= FDS__SG_FIT_MIN) {
            int64_t x[4], y[4], mx = 0, my = 0, cov = 0, var = 0;
            for (int k = 0; k < 4; k++) {
                x[k] = fds__sg_log2(at[k]);
                y[k] = fds__sg_log2(pts[f][k] ? pts[f][k] : 1);
                mx += x[k];
                my += y[k];
            }
            mx /= 4;
            my /= 4;
            for (int k = 0; k < 4; k++) {
                cov += (x[k] - mx) * (y[k] - my);
                var += (x[k] - mx) * (x[k] - mx);
            }
            if (var >> FDS__SG_Q) beta = cov / (var >> FDS__SG_Q);
            if (beta < FDS__SG_ONE / 20) beta = FDS__SG_ONE / 20;
            if (beta > FDS__SG_ONE) beta = FDS__SG_ONE;
            log2k = my - fds__sg_mul(beta, mx);
        }
        g->beta[f] = beta;
        g->log2k[f] = log2k;
        uint64_t renewable = 0;
        for (uint32_t i = 0; i < g->nrec; i++) renewable += g->renewable[i] >> f & 1;
        /* log2 dD/dn = log2(beta K) + (beta - 1) log2 n; rate = that / m */
        int64_t c = fds__sg_log2((uint64_t)beta) - ((int64_t)FDS__SG_Q << FDS__SG_Q) + log2k;
        int64_t m = fds__sg_log2(renewable ? renewable : 1) - fds__sg_log2(g->nrec);
        for (int b = 0; b < FDS__SG_BUCKETS; b++) {
            int64_t lx = fds__sg_bucket_log2(b);
            int64_t ls = c + fds__sg_mul(beta - FDS__SG_ONE, lx);
            uint64_t r = renewable ? fds__sg_exp2(ls - m, 32) : 0;
            g->law[f][b] = fds__sg_exp2(log2k + fds__sg_mul(beta, lx), FDS__SG_T_FRAC);
            g->slope[f][b] = fds__sg_exp2(ls, 32);
            g->rate[f][b] = r > FDS__SG_P_ONE ? FDS__SG_P_ONE : r;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ public API */

/* Collect the distinct Persian words of the sample's URLs and referrers. */
static int fds__sg_words(fds_synthgrow *g)
{
    fds__distinct d = {0};
    size_t cap = 0;
    int rc = 0;
    for (uint32_t i = 0; i < g->nrec && !rc; i++) {
        for (int f = 0; f < 2 && !rc; f++) {
            fds_logslice s = f ? g->recs[i].referrer : g->recs[i].url;
            for (size_t k = 0; k < s.len && !rc;) {
                size_t w = fds__sg_word(s.ptr, k, s.len);
                if (!w) {
                    k++;
                    continue;
                }
                int added = fds__distinct_add(&d, fds__distinct_hash(s.ptr + k, w));
                if (added < 0) rc = FDS_ENOMEM;
                if (added > 0) {
                    if (g->nwords == cap) {
                        cap = cap ? cap * 2 : 256;
                        fds_logslice *nw = realloc(g->words, cap * sizeof *nw);
                        if (!nw) {
                            rc = FDS_ENOMEM;
                            break;
                        }
                        g->words = nw;
                    }
                    g->words[g->nwords++] = (fds_logslice){s.ptr + k, w};
                }
                k += w;
            }
        }
    }
    fds__distinct_free(&d);
    return rc;
}

int fds_synthgrow_create(const fds_logrec *recs, size_t nrec, uint64_t seed,
                         fds_synthgrow **out)
{
    *out = NULL;
    if (nrec == 0 || nrec > UINT32_MAX) return FDS_EINVAL;
    fds_synthgrow *g = calloc(1, sizeof *g);
    if (!g) return FDS_ENOMEM;
    g->recs = recs;
    g->nrec = (uint32_t)nrec;
    g->next = 1;
    for (int f = 0; f < FDS_SYNTHGROW_FIELDS; f++)
        for (int k = 0; k < SG_STREAMS; k++)
            g->base[f][k] = fds__distinct_mix(
                seed ^ fds__distinct_mix((uint64_t)(f * SG_STREAMS + k + 1) * FDS__SG_GOLDEN));
    int rc = fds__sg_words(g);
    g->renewable = rc ? NULL : malloc(nrec);
    if (!rc && !g->renewable) rc = FDS_ENOMEM;
    for (size_t i = 0; !rc && i < nrec; i++) {
        const fds_logrec *r = &recs[i];
        g->renewable[i] =
            (uint8_t)(fds__sg_make_url(g, NULL, r->url.ptr, r->url.len, 0) << FDS_SYNTHGROW_URL |
                      1 << FDS_SYNTHGROW_ADDR |
                      fds__sg_make_agent(NULL, r->user_agent.ptr, r->user_agent.len, 0)
                          << FDS_SYNTHGROW_AGENT |
                      fds__sg_make_url(g, NULL, r->referrer.ptr, r->referrer.len, 0)
                          << FDS_SYNTHGROW_REFERRER);
    }
    if (!rc) rc = fds__sg_fit(g);
    if (rc) {
        fds_synthgrow_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

void fds_synthgrow_free(fds_synthgrow *g)
{
    if (!g) return;
    for (int f = 0; f < FDS_SYNTHGROW_FIELDS; f++) {
        fds__distinct_free(&g->seen[f]);
        free(g->retry[f].slot);
        free(g->out[f].p);
    }
    free(g->kinds);
    free(g->renewable);
    free(g->words);
    free(g);
}

void fds_synthgrow_law(const fds_synthgrow *g, int field, int64_t *beta_q24,
                       int64_t *k_q24)
{
    *beta_q24 = g->beta[field];
    *k_q24 = (int64_t)fds__sg_exp2(g->log2k[field], FDS__SG_Q);
}

/* Decide and record the kinds of document n; returns the roots. */
static void fds__sg_kinds(fds_synthgrow *g, uint64_t n, uint64_t root[3])
{
    static const int fields[3] = {FDS_SYNTHGROW_URL, FDS_SYNTHGROW_REFERRER,
                                  FDS_SYNTHGROW_ADDR};
    uint8_t kinds = 0;
    for (int k = 0; k < 3; k++) {
        int f = fields[k];
        uint64_t thr = fds__sg_threshold(g, f, n);
        int kind = fds__sg_decide(g, f, n, thr);
        if (kind == SG_NEW && !(g->renewable[fds__sg_template(g, f, n)] >> f & 1))
            kind = SG_ORIG;
        root[k] = kind == SG_COPY ? fds__sg_root(g, f, fds__sg_pick(g, f, n)) : n;
        kinds |= (uint8_t)(kind << (2 * f));
        if (f == FDS_SYNTHGROW_ADDR && kind == SG_NEW) {
            /* a new agent with P_agent / P_addr, if the agent is renewable */
            uint64_t ta = fds__sg_threshold(g, FDS_SYNTHGROW_AGENT, n);
            uint64_t u = fds__sg_hash(g, FDS_SYNTHGROW_AGENT, SG_FRESH, n) >> 33;
            if (u * thr < ta << 31 &&
                (g->renewable[fds__sg_template(g, f, n)] >> FDS_SYNTHGROW_AGENT & 1))
                kinds |= SG_NEW << (2 * FDS_SYNTHGROW_AGENT);
        }
    }
    g->kinds[n - 1] = kinds;
}

int fds_synthgrow_doc(fds_synthgrow *g, uint64_t n, fds_logrec *rec)
{
    if (n != g->next) return FDS_EINVAL;
    if (n > g->kinds_cap) {
        size_t ncap = g->kinds_cap ? g->kinds_cap * 2 : 1 << 16;
        uint8_t *nk = realloc(g->kinds, ncap);
        if (!nk) return FDS_ENOMEM;
        g->kinds = nk;
        g->kinds_cap = ncap;
    }
    g->next++;
    uint64_t root[3];
    fds__sg_kinds(g, n, root);
    uint64_t ru = root[0], rr = root[1], rc = root[2];
    const fds_logrec *req = &g->recs[fds__sg_template(g, FDS_SYNTHGROW_URL, ru)];
    const fds_logrec *cli = &g->recs[fds__sg_template(g, FDS_SYNTHGROW_ADDR, rc)];
    *rec = *req;
    rec->remote_user = cli->remote_user;
    rec->x_forwarded_for = cli->x_forwarded_for;
    static const int order[FDS_SYNTHGROW_FIELDS] = {
        FDS_SYNTHGROW_URL, FDS_SYNTHGROW_REFERRER, FDS_SYNTHGROW_ADDR,
        FDS_SYNTHGROW_AGENT};
    const uint64_t roots[FDS_SYNTHGROW_FIELDS] = {ru, rr, rc, rc};
    fds_logslice *dst[FDS_SYNTHGROW_FIELDS] = {&rec->url, &rec->referrer,
                                               &rec->remote_addr, &rec->user_agent};
    int err = 0;
    for (int k = 0; k < FDS_SYNTHGROW_FIELDS && !err; k++)
        err = fds__sg_value(g, order[k], roots[k], fds__sg_kind(g, order[k], roots[k]),
                            n, dst[k]);
    return err;
}
