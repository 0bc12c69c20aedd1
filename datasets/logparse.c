/*
 * logparse.c: one access-log line -> fds_logrec -> compact JSON document.
 *
 * The line grammar, the derivations and the JSON shape are documented in
 * logparse.h; this file keeps them in one place so that the converter, the
 * synthetic generator and the tests cannot drift apart.  Everything here is
 * plain byte scanning with no allocation: the converter spends most of its
 * time in fds_logparse_line() and fds__json_str(), both single passes.
 *
 * Determinism: the synthesized values use only integer hashing (splitmix64)
 * and IEEE-754 double +, -, *, / (no libm), so the same seed gives the same
 * bytes on every platform this builds on.
 */
#include "logparse.h"

#include "fds_text.h"
#include "fds_time.h"

#include <string.h>

/* ---------------------------------------------------------------- hashing */

#define FDS__GOLDEN 0x9e3779b97f4a7c15ull

/* The splitmix64 finalizer (a 64-bit bijective mixer). */
static uint64_t fds__mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t fds_logparse_splitmix64(uint64_t *state)
{
    *state += FDS__GOLDEN;
    return fds__mix64(*state);
}

/* Independent 64-bit value number `stream` for (seed, line_no). */
static uint64_t fds__hash(uint64_t seed, uint64_t line_no, uint64_t stream)
{
    uint64_t base = fds__mix64(seed + FDS__GOLDEN);
    return fds__mix64(base ^ fds__mix64(line_no * FDS__GOLDEN + stream));
}

/* ------------------------------------------------------------- date/time */

static int fds__is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static void fds__put2(char *p, unsigned v)
{
    p[0] = (char)('0' + v / 10 % 10);
    p[1] = (char)('0' + v % 10);
}

size_t fds_logparse_iso8601(int64_t epoch, int tz_offset_min, char *dst)
{
    int64_t local = epoch + (int64_t)tz_offset_min * 60;
    int64_t days = local >= 0 ? local / 86400 : -((-local + 86399) / 86400);
    int64_t secs = local - days * 86400;
    int64_t y;
    unsigned m, d;
    fds_civil_from_days(days, &y, &m, &d);
    if (y < 0) y = 0;
    if (y > 9999) y = 9999;
    fds__put2(dst, (unsigned)(y / 100));
    fds__put2(dst + 2, (unsigned)(y % 100));
    dst[4] = '-';
    fds__put2(dst + 5, m);
    dst[7] = '-';
    fds__put2(dst + 8, d);
    dst[10] = 'T';
    fds__put2(dst + 11, (unsigned)(secs / 3600));
    dst[13] = ':';
    fds__put2(dst + 14, (unsigned)(secs / 60 % 60));
    dst[16] = ':';
    fds__put2(dst + 17, (unsigned)(secs % 60));
    int off = tz_offset_min;
    dst[19] = off < 0 ? '-' : '+';
    if (off < 0) off = -off;
    fds__put2(dst + 20, (unsigned)(off / 60));
    dst[22] = ':';
    fds__put2(dst + 23, (unsigned)(off % 60));
    dst[FDS_LOGPARSE_TS_LEN] = '\0';
    return FDS_LOGPARSE_TS_LEN;
}

/* ---------------------------------------------------------------- parsing */

typedef struct fds__cur {
    const char *s;
    size_t len;
    size_t i;
    const char *why;
} fds__cur;

static int fds__fail(fds__cur *c, const char *why)
{
    if (!c->why) c->why = why;
    return -1;
}

static int fds__expect(fds__cur *c, char ch, const char *why)
{
    if (c->i >= c->len || c->s[c->i] != ch) return fds__fail(c, why);
    c->i++;
    return 0;
}

/* A run of non-space bytes, then one space. */
static int fds__token(fds__cur *c, fds_logslice *out, const char *what)
{
    size_t start = c->i;
    while (c->i < c->len && c->s[c->i] != ' ') c->i++;
    if (c->i == start) return fds__fail(c, what);
    out->ptr = c->s + start;
    out->len = c->i - start;
    return fds__expect(c, ' ', what);
}

/* "..." with backslash escapes skipped (kept verbatim in the slice). */
static int fds__quoted(fds__cur *c, fds_logslice *out, const char *missing,
                       const char *unterminated)
{
    if (fds__expect(c, '"', missing)) return -1;
    size_t start = c->i;
    for (;;) {
        if (c->i >= c->len) return fds__fail(c, unterminated);
        char ch = c->s[c->i];
        if (ch == '"') break;
        c->i += (ch == '\\' && c->i + 1 < c->len) ? 2 : 1;
    }
    out->ptr = c->s + start;
    out->len = c->i - start;
    c->i++; /* closing quote */
    return 0;
}

/* Exactly n digits -> *v. */
static int fds__digits(fds__cur *c, unsigned n, unsigned *v, const char *why)
{
    unsigned acc = 0;
    for (unsigned k = 0; k < n; k++) {
        if (c->i >= c->len || c->s[c->i] < '0' || c->s[c->i] > '9')
            return fds__fail(c, why);
        acc = acc * 10 + (unsigned)(c->s[c->i++] - '0');
    }
    *v = acc;
    return 0;
}

static const char fds__months[12][4] = {"Jan", "Feb", "Mar", "Apr",
                                         "May", "Jun", "Jul", "Aug",
                                         "Sep", "Oct", "Nov", "Dec"};

/* [DD/Mon/YYYY:HH:MM:SS +HHMM] */
static int fds__timestamp(fds__cur *c, fds_logrec *rec)
{
    unsigned day, year, hh, mm, ss, oh, om, mon = 0;
    if (fds__expect(c, '[', "missing '[' before timestamp")) return -1;
    if (fds__digits(c, 2, &day, "bad day in timestamp")) return -1;
    if (fds__expect(c, '/', "bad timestamp (expected '/')")) return -1;
    if (c->i + 3 > c->len) return fds__fail(c, "bad month in timestamp");
    for (mon = 0; mon < 12; mon++)
        if (memcmp(c->s + c->i, fds__months[mon], 3) == 0) break;
    if (mon == 12) return fds__fail(c, "bad month in timestamp");
    c->i += 3;
    mon += 1;
    if (fds__expect(c, '/', "bad timestamp (expected '/')")) return -1;
    if (fds__digits(c, 4, &year, "bad year in timestamp")) return -1;
    if (fds__expect(c, ':', "bad timestamp (expected ':')")) return -1;
    if (fds__digits(c, 2, &hh, "bad hour in timestamp")) return -1;
    if (fds__expect(c, ':', "bad timestamp (expected ':')")) return -1;
    if (fds__digits(c, 2, &mm, "bad minute in timestamp")) return -1;
    if (fds__expect(c, ':', "bad timestamp (expected ':')")) return -1;
    if (fds__digits(c, 2, &ss, "bad second in timestamp")) return -1;
    if (fds__expect(c, ' ', "bad timestamp (expected ' ' before offset)"))
        return -1;
    int sign = 0;
    if (c->i < c->len && c->s[c->i] == '+') sign = 1;
    if (c->i < c->len && c->s[c->i] == '-') sign = -1;
    if (!sign) return fds__fail(c, "bad UTC offset in timestamp");
    c->i++;
    if (fds__digits(c, 2, &oh, "bad UTC offset in timestamp")) return -1;
    if (fds__digits(c, 2, &om, "bad UTC offset in timestamp")) return -1;
    if (fds__expect(c, ']', "missing ']' after timestamp")) return -1;

    static const unsigned mdays[12] = {31, 28, 31, 30, 31, 30,
                                       31, 31, 30, 31, 30, 31};
    unsigned dim = mdays[mon - 1] + (mon == 2 && fds__is_leap(year));
    if (day < 1 || day > dim) return fds__fail(c, "day out of range in timestamp");
    if (hh > 23 || mm > 59 || ss > 60)
        return fds__fail(c, "time of day out of range in timestamp");
    if (oh > 23 || om > 59)
        return fds__fail(c, "UTC offset out of range in timestamp");
    rec->tz_offset_min = sign * (int)(oh * 60 + om);
    rec->epoch = fds_days_from_civil(year, mon, day) * 86400 +
                 (int64_t)(hh * 3600 + mm * 60 + ss) -
                 (int64_t)rec->tz_offset_min * 60;
    return 0;
}

static int fds__is_tchar(unsigned char ch)
{
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
        (ch >= '0' && ch <= '9'))
        return 1;
    return ch != 0 && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

static const char fds__dash[] = "-";

/* Split "METHOD TARGET [PROTOCOL]" (see logparse.h). */
static int fds__request(fds__cur *c, fds_logslice req, fds_logrec *rec)
{
    const fds_logslice dash = {fds__dash, 1};
    if (req.len == 0 || (req.len == 1 && req.ptr[0] == '-')) {
        rec->method = rec->url = rec->http_version = dash;
        return 0;
    }
    size_t sp1 = 0;
    while (sp1 < req.len && req.ptr[sp1] != ' ') sp1++;
    if (sp1 == req.len) return fds__fail(c, "request line has no target");
    if (sp1 == 0 || sp1 > FDS_LOGPARSE_METHOD_MAX)
        return fds__fail(c, "bad request method");
    for (size_t k = 0; k < sp1; k++)
        if (!fds__is_tchar((unsigned char)req.ptr[k]))
            return fds__fail(c, "bad request method");
    size_t sp2 = req.len;
    while (sp2 > sp1 + 1 && req.ptr[sp2 - 1] != ' ') sp2--;
    /* sp2 is one past the last space (or sp1+1 when there is only one). */
    const char *proto = req.ptr + sp2;
    size_t proto_len = req.len - sp2;
    rec->method.ptr = req.ptr;
    rec->method.len = sp1;
    if (sp2 > sp1 + 1 && proto_len >= 5 && memcmp(proto, "HTTP/", 5) == 0) {
        rec->url.ptr = req.ptr + sp1 + 1;
        rec->url.len = sp2 - 1 - (sp1 + 1);
        rec->http_version.ptr = proto;
        rec->http_version.len = proto_len;
    } else {
        rec->url.ptr = req.ptr + sp1 + 1;
        rec->url.len = req.len - (sp1 + 1);
        rec->http_version = dash;
    }
    if (rec->url.len == 0) return fds__fail(c, "empty request target");
    return 0;
}

int fds_logparse_line(const char *line, size_t len, fds_logrec *rec,
                      const char **why, size_t *col)
{
    fds__cur c = {line, len, 0, NULL};
    fds_logslice ident, request;
    memset(rec, 0, sizeof *rec);
    while (c.len > 0 && (line[c.len - 1] == '\r' || line[c.len - 1] == ' ' ||
                         line[c.len - 1] == '\t'))
        c.len--;

    if (c.len == 0) {
        fds__fail(&c, "empty line");
        goto fail;
    }
    if (fds__token(&c, &rec->remote_addr, "missing remote address") ||
        fds__token(&c, &ident, "missing ident field") ||
        fds__token(&c, &rec->remote_user, "missing remote user") ||
        fds__timestamp(&c, rec) ||
        fds__expect(&c, ' ', "missing space after timestamp") ||
        fds__quoted(&c, &request, "missing quoted request",
                    "unterminated request") ||
        fds__request(&c, request, rec) ||
        fds__expect(&c, ' ', "missing space after request"))
        goto fail;

    unsigned status;
    if (fds__digits(&c, 3, &status, "bad status (expected 3 digits)") ||
        fds__expect(&c, ' ', "bad status (expected 3 digits)"))
        goto fail;
    rec->status = (int)status;

    if (c.i < c.len && c.s[c.i] == '-') {
        rec->body_bytes_sent = 0;
        c.i++;
    } else {
        uint64_t v = 0;
        unsigned n = 0;
        while (c.i < c.len && c.s[c.i] >= '0' && c.s[c.i] <= '9') {
            if (++n > FDS_LOGPARSE_BYTES_DIGITS_MAX) {
                fds__fail(&c, "body_bytes_sent too large");
                goto fail;
            }
            v = v * 10 + (uint64_t)(c.s[c.i++] - '0');
        }
        if (n == 0) {
            fds__fail(&c, "bad body_bytes_sent");
            goto fail;
        }
        rec->body_bytes_sent = v;
    }
    if (fds__expect(&c, ' ', "bad body_bytes_sent") ||
        fds__quoted(&c, &rec->referrer, "missing quoted referrer",
                    "unterminated referrer") ||
        fds__expect(&c, ' ', "missing user agent") ||
        fds__quoted(&c, &rec->user_agent, "missing quoted user agent",
                    "unterminated user agent"))
        goto fail;

    if (c.i < c.len) {
        fds_logslice xff;
        if (fds__expect(&c, ' ', "unexpected text after user agent") ||
            fds__quoted(&c, &xff, "unexpected text after user agent",
                        "unterminated x_forwarded_for"))
            goto fail;
        if (c.i < c.len) {
            fds__fail(&c, "unexpected text after x_forwarded_for");
            goto fail;
        }
        if (!(xff.len == 1 && xff.ptr[0] == '-')) rec->x_forwarded_for = xff;
    }
    return 0;

fail:
    if (why) *why = c.why;
    if (col) *col = c.i;
    return FDS_EPARSE;
}

/* ------------------------------------------------------------ derivations */

static int fds__ieq(const char *a, size_t alen, const char *lit)
{
    size_t n = strlen(lit);
    if (alen != n) return 0;
    for (size_t k = 0; k < n; k++) {
        char ch = a[k];
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        if (ch != lit[k]) return 0;
    }
    return 1;
}

static const struct {
    const char *segment;
    const char *service;
} fds__services[] = {
    {"m", "mobile"},          {"image", "image"},
    {"images", "image"},      {"static", "static"},
    {"plugins", "static"},    {"filter", "search"},
    {"ajaxfilter", "search"}, {"browse", "search"},
    {"search", "search"},     {"product", "catalog"},
    {"comparison", "catalog"},{"discountlabel", "catalog"},
    {"event", "catalog"},     {"basket", "account"},
    {"customer", "account"},  {"login", "account"},
    {"logout", "account"},    {"register", "account"},
    {"order", "account"},     {"blog", "content"},
    {"article", "content"},   {"site", "site"},
    {"settings", "site"},     {"province", "site"},
    {"index", "site"},
};

const char *fds_logparse_service(const char *url, size_t len)
{
    size_t i = 0;
    /* Absolute form "scheme://authority/path": skip to the path. */
    for (size_t k = 0; k + 2 < len && k < 16; k++) {
        if (url[k] == '/' || url[k] == '?') break;
        if (url[k] == ':' && url[k + 1] == '/' && url[k + 2] == '/') {
            i = k + 3;
            while (i < len && url[i] != '/') i++;
            if (i == len) return "home";
            break;
        }
    }
    if (i >= len || url[i] != '/') return "other";
    i++;
    size_t start = i;
    int dot = 0;
    while (i < len && url[i] != '/' && url[i] != '?' && url[i] != '#' &&
           url[i] != ';') {
        if (url[i] == '.') dot = 1;
        i++;
    }
    size_t seg = i - start;
    if (seg == 0) return "home";
    for (size_t k = 0; k < sizeof fds__services / sizeof fds__services[0]; k++)
        if (fds__ieq(url + start, seg, fds__services[k].segment))
            return fds__services[k].service;
    return dot ? "static" : "other";
}

/* "http_NNN" for every status 400..999 not named below. */
static const char fds__http_codes[600][9] = {
#define FDS__C1(n) "http_" #n
#define FDS__C10(a) FDS__C1(a##0), FDS__C1(a##1), FDS__C1(a##2), FDS__C1(a##3), \
    FDS__C1(a##4), FDS__C1(a##5), FDS__C1(a##6), FDS__C1(a##7), FDS__C1(a##8), \
    FDS__C1(a##9)
#define FDS__C100(a) FDS__C10(a##0), FDS__C10(a##1), FDS__C10(a##2), \
    FDS__C10(a##3), FDS__C10(a##4), FDS__C10(a##5), FDS__C10(a##6), \
    FDS__C10(a##7), FDS__C10(a##8), FDS__C10(a##9)
    FDS__C100(4), FDS__C100(5), FDS__C100(6), FDS__C100(7), FDS__C100(8),
    FDS__C100(9)
#undef FDS__C100
#undef FDS__C10
#undef FDS__C1
};

const char *fds_logparse_error_code(int status)
{
    if (status < 400) return "-";
    switch (status) {
    case 400: return "bad_request";
    case 401: return "unauthorized";
    case 403: return "forbidden";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 408: return "request_timeout";
    case 413: return "payload_too_large";
    case 414: return "uri_too_long";
    case 429: return "too_many_requests";
    case 499: return "client_closed_request";
    case 500: return "internal_server_error";
    case 502: return "bad_gateway";
    case 503: return "service_unavailable";
    case 504: return "gateway_timeout";
    default: break;
    }
    if (status > 999) return "http_999";
    return fds__http_codes[status - 400];
}

/* exp(x) for |x| <= 40 with range reduction x = k ln2 + r and a Taylor
 * series on |r| <= ln2/2; relative error ~1e-15.  Uses only + - * /. */
static double fds__exp(double x)
{
    const double ln2 = 0.6931471805599453;
    if (x > 40) x = 40;
    if (x < -40) x = -40;
    double n = x / ln2;
    int k = (int)(n >= 0 ? n + 0.5 : n - 0.5);
    double r = x - k * ln2;
    double term = 1, sum = 1;
    for (int j = 1; j <= 16; j++) {
        term = term * r / j;
        sum += term;
    }
    for (; k > 0; k--) sum *= 2;
    for (; k < 0; k++) sum *= 0.5;
    return sum;
}

/* Approximately N(0,1): Irwin-Hall sum of 4 uniforms from 16-bit slices. */
static double fds__normal(uint64_t h)
{
    double s = 0;
    for (int k = 0; k < 4; k++) s += (double)((h >> (16 * k)) & 0xffff) / 65535.0;
    return (s - 2.0) * 1.7320508075688772; /* var(sum) = 4/12 */
}

static double fds__median_ms(const char *service, int status)
{
    if (status >= 500) return 250;
    if (status >= 300 && status < 400) return 4;
    if (status >= 400 && status != 499) return 15;
    double m;
    if (!strcmp(service, "static")) m = 1;
    else if (!strcmp(service, "image")) m = 6;
    else if (!strcmp(service, "search")) m = 120;
    else if (!strcmp(service, "home")) m = 80;
    else if (!strcmp(service, "catalog")) m = 70;
    else if (!strcmp(service, "mobile")) m = 60;
    else if (!strcmp(service, "account")) m = 90;
    else if (!strcmp(service, "content")) m = 40;
    else if (!strcmp(service, "site")) m = 10;
    else m = 30;
    return status == 499 ? 3 * m : m;
}

void fds_logparse_timing(const char *service_name, int status,
                         uint64_t body_bytes_sent, uint64_t seed,
                         uint64_t line_no, uint32_t *request_ms,
                         uint32_t *upstream_ms)
{
    double up = fds__median_ms(service_name, status) *
                fds__exp(0.6 * fds__normal(fds__hash(seed, line_no, 1)));
    double speed = 1000.0 * fds__exp(0.8 * fds__normal(fds__hash(seed, line_no, 2)));
    double transfer = (double)body_bytes_sent / speed;
    double req = up + transfer;
    double cap = FDS_LOGPARSE_TIME_MAX_MS;
    if (up > cap) up = cap;
    if (req > cap) req = cap;
    uint32_t u = (uint32_t)(up + 0.5), r = (uint32_t)(req + 0.5);
    if (r < u) r = u;
    *upstream_ms = u;
    *request_ms = r;
}

void fds_logparse_derive(fds_logrec *rec, const char *host, uint64_t seed,
                         uint64_t line_no)
{
    static const char hex[] = "0123456789abcdef";
    rec->host.ptr = host;
    rec->host.len = strlen(host);
    rec->service_name = fds_logparse_service(rec->url.ptr, rec->url.len);
    rec->error_code = fds_logparse_error_code(rec->status);
    fds_logparse_timing(rec->service_name, rec->status, rec->body_bytes_sent,
                        seed, line_no, &rec->request_time_ms,
                        &rec->upstream_response_time_ms);
    uint64_t h[2] = {fds__hash(seed, line_no, 3), fds__hash(seed, line_no, 4)};
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < 16; k++)
            rec->request_id[w * 16 + k] = hex[(h[w] >> (60 - 4 * k)) & 0xf];
    rec->request_id[FDS_LOGPARSE_REQUEST_ID_LEN] = '\0';
}

/* ------------------------------------------------------------------- JSON */

/* Fixed bytes of a document besides its strings: keys, punctuation, numbers
 * (at most 20 digits each), timestamp, request_id; generous. */
#define FDS__JSON_FIXED 512

size_t fds_logparse_json_bound(const fds_logrec *rec)
{
    size_t s = rec->remote_addr.len + rec->remote_user.len + rec->method.len +
               rec->url.len + rec->http_version.len + rec->referrer.len +
               rec->user_agent.len + rec->x_forwarded_for.len + rec->host.len;
    s += rec->service_name ? strlen(rec->service_name) : 0;
    s += rec->error_code ? strlen(rec->error_code) : 0;
    return FDS__JSON_FIXED + 6 * s;
}

typedef struct fds__out {
    char *p;
    char *end;
    int full;
} fds__out;

static void fds__lit(fds__out *o, const char *s, size_t n)
{
    if (o->full || (size_t)(o->end - o->p) < n) {
        o->full = 1;
        return;
    }
    memcpy(o->p, s, n);
    o->p += n;
}

#define FDS__LIT(o, s) fds__lit((o), (s), sizeof(s) - 1)

static void fds__str(fds__out *o, const char *s, size_t n)
{
    if (o->full) return;
    size_t w = fds_json_escape(s ? s : "", s ? n : 0, o->p,
                                        (size_t)(o->end - o->p));
    if (!w) o->full = 1;
    o->p += w;
}

static void fds__u64(fds__out *o, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[sizeof tmp - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    fds__lit(o, tmp + sizeof tmp - n, n);
}

static void fds__ms(fds__out *o, uint32_t ms)
{
    char frac[4] = {'.', (char)('0' + ms / 100 % 10), (char)('0' + ms / 10 % 10),
                    (char)('0' + ms % 10)};
    fds__u64(o, ms / 1000);
    fds__lit(o, frac, 4);
}

int fds_logparse_json(const fds_logrec *rec, char *dst, size_t cap,
                      size_t *out_len)
{
    fds__out o = {dst, dst + cap, 0};
    char ts[FDS_LOGPARSE_TS_LEN + 1];
    fds_logparse_iso8601(rec->epoch, rec->tz_offset_min, ts);
    const char *svc = rec->service_name ? rec->service_name : "other";
    const char *err = rec->error_code ? rec->error_code : "-";

    FDS__LIT(&o, "{\"@timestamp\":\"");
    fds__lit(&o, ts, FDS_LOGPARSE_TS_LEN);
    FDS__LIT(&o, "\",\"remote_addr\":");
    fds__str(&o, rec->remote_addr.ptr, rec->remote_addr.len);
    FDS__LIT(&o, ",\"remote_user\":");
    fds__str(&o, rec->remote_user.ptr, rec->remote_user.len);
    FDS__LIT(&o, ",\"method\":");
    fds__str(&o, rec->method.ptr, rec->method.len);
    FDS__LIT(&o, ",\"url\":");
    fds__str(&o, rec->url.ptr, rec->url.len);
    FDS__LIT(&o, ",\"http_version\":");
    fds__str(&o, rec->http_version.ptr, rec->http_version.len);
    FDS__LIT(&o, ",\"status\":");
    fds__u64(&o, (uint64_t)(rec->status < 0 ? 0 : rec->status));
    FDS__LIT(&o, ",\"body_bytes_sent\":");
    fds__u64(&o, rec->body_bytes_sent);
    FDS__LIT(&o, ",\"referrer\":");
    fds__str(&o, rec->referrer.ptr, rec->referrer.len);
    FDS__LIT(&o, ",\"user_agent\":");
    fds__str(&o, rec->user_agent.ptr, rec->user_agent.len);
    if (rec->x_forwarded_for.ptr) {
        FDS__LIT(&o, ",\"x_forwarded_for\":");
        fds__str(&o, rec->x_forwarded_for.ptr, rec->x_forwarded_for.len);
    }
    FDS__LIT(&o, ",\"host\":");
    fds__str(&o, rec->host.ptr, rec->host.len);
    FDS__LIT(&o, ",\"service_name\":");
    fds__str(&o, svc, strlen(svc));
    FDS__LIT(&o, ",\"error_code\":");
    fds__str(&o, err, strlen(err));
    FDS__LIT(&o, ",\"request_time\":");
    fds__ms(&o, rec->request_time_ms);
    FDS__LIT(&o, ",\"upstream_response_time\":");
    fds__ms(&o, rec->upstream_response_time_ms);
    FDS__LIT(&o, ",\"request_id\":\"");
    fds__lit(&o, rec->request_id, strnlen(rec->request_id,
                                          FDS_LOGPARSE_REQUEST_ID_LEN));
    FDS__LIT(&o, "\"}");
    if (o.full) return FDS_ERANGE;
    if (out_len) *out_len = (size_t)(o.p - dst);
    return 0;
}
