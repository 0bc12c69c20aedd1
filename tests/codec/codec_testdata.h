/*
 * codec_testdata.h: real documents for the codec tests, fuzz seeds, golden
 * generator and benchmark.
 *
 * Why: the codec must be exercised on the data it is built for (the real
 * nginx sample, datasets/nginx-zanbil-access-10k.log), as JSON documents
 * shaped like DESIGN.md §2.  The project's converter lives in datasets/; this
 * header carries a tiny local line -> JSON function so the codec can be
 * tested and measured on its own.  It keeps the fields of a combined-format
 * line plus derived ones (service_name, error_code, request_time,
 * upstream_response_time, request_id) with deterministic values; it is an
 * approximation of the converter, good for compression measurements, not a
 * reference for the JSON mapping.
 *
 * Header-only (static functions): include it in one .c file per program.
 */
#ifndef FDS_CODEC_TESTDATA_H
#define FDS_CODEC_TESTDATA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Documents laid end to end, with lengths. */
typedef struct td_docs {
    uint8_t *bytes;
    size_t len, cap;
    uint32_t *lens;
    size_t *offs; /* offs[i] = start of doc i; offs[n] = len */
    size_t n, ncap;
} td_docs;

static inline void td_push(td_docs *d, const void *p, size_t n)
{
    if (d->n + 2 > d->ncap) {
        d->ncap = d->ncap ? d->ncap * 2 : 1024;
        d->lens = realloc(d->lens, d->ncap * sizeof *d->lens);
        d->offs = realloc(d->offs, (d->ncap + 1) * sizeof *d->offs);
        if (!d->lens || !d->offs) abort();
    }
    if (d->len + n > d->cap) {
        d->cap = (d->len + n) * 2 + 4096;
        d->bytes = realloc(d->bytes, d->cap);
        if (!d->bytes) abort();
    }
    memcpy(d->bytes + d->len, p, n);
    d->offs[d->n] = d->len;
    d->lens[d->n++] = (uint32_t)n;
    d->len += n;
    d->offs[d->n] = d->len;
}

static inline void td_free(td_docs *d)
{
    free(d->bytes); free(d->lens); free(d->offs);
    memset(d, 0, sizeof *d);
}

static inline uint64_t td_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Append s[0,n) JSON-escaped to buf at *pos (buf large enough). */
static inline void td_esc(char *buf, size_t *pos, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') { buf[(*pos)++] = '\\'; buf[(*pos)++] = (char)c; }
        else if (c < 0x20) *pos += (size_t)sprintf(buf + *pos, "\\u%04x", c);
        else buf[(*pos)++] = (char)c;
    }
}

/* Find the next token: either "quoted" or up to a space. */
static inline int td_tok(const char **p, const char *end, const char **s, size_t *n)
{
    while (*p < end && **p == ' ') (*p)++;
    if (*p >= end) return -1;
    char close = **p == '"' ? '"' : **p == '[' ? ']' : ' ';
    if (close != ' ') (*p)++;
    *s = *p;
    while (*p < end && **p != close) (*p)++;
    *n = (size_t)(*p - *s);
    if (close != ' ' && *p < end) (*p)++;
    return 0;
}

static inline const char *td_month(const char *m)
{
    static const char *ms = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char *f = strstr(ms, m);
    static char out[12];
    int k = f ? (int)(f - ms) / 3 + 1 : 1;
    snprintf(out, sizeof out, "%02d", k);
    return out;
}

/* Convert one combined-format line to a JSON doc in out (>= 4*n+1024 bytes).
 * Returns the length, or 0 when the line does not parse. */
static inline size_t td_line_to_json(const char *line, size_t n, uint64_t seq,
                              char *out)
{
    const char *p = line, *end = line + n, *f[9];
    size_t fl[9];
    for (int i = 0; i < 9; i++)
        if (td_tok(&p, end, &f[i], &fl[i])) { if (i < 8) return 0; f[i] = "-"; fl[i] = 1; }
    /* f: 0 addr, 1 '-', 2 user, 3 time, 4 request, 5 status, 6 bytes, 7 ref, 8 ua, (xff) */
    const char *xff = "-"; size_t xffl = 1;
    { const char *s; size_t l; if (!td_tok(&p, end, &s, &l)) { xff = s; xffl = l; } }
    char tbuf[64] = "1970-01-01T00:00:00+00:00";
    if (fl[3] >= 26) { /* 22/Jan/2019:03:56:14 +0330 */
        char mon[4] = {f[3][3], f[3][4], f[3][5], 0};
        snprintf(tbuf, sizeof tbuf, "%.4s-%s-%.2sT%.8s%.3s:%.2s", f[3] + 7,
                 td_month(mon), f[3], f[3] + 12, f[3] + 21, f[3] + 24);
    }
    const char *m = f[4], *me = memchr(f[4], ' ', fl[4]);
    size_t ml = me ? (size_t)(me - m) : fl[4];
    const char *u = me ? me + 1 : f[4] + fl[4];
    const char *ue = memchr(u, ' ', (size_t)(f[4] + fl[4] - u));
    size_t ul = ue ? (size_t)(ue - u) : (size_t)(f[4] + fl[4] - u);
    const char *hv = ue ? ue + 1 : "";
    size_t hvl = ue ? (size_t)(f[4] + fl[4] - hv) : 0;
    const char *sv = u + (ul && u[0] == '/'); size_t svl = 0;
    while (svl < (size_t)(u + ul - sv) && sv[svl] != '/' && sv[svl] != '?') svl++;
    int status = atoi(f[5]);
    uint64_t h = td_mix(seq * 1000003u + (uint64_t)status);
    size_t o = 0;
    o += (size_t)sprintf(out + o, "{\"@timestamp\":\"%s\",\"remote_addr\":\"", tbuf);
    td_esc(out, &o, f[0], fl[0]);
    o += (size_t)sprintf(out + o, "\",\"remote_user\":\""); td_esc(out, &o, f[2], fl[2]);
    o += (size_t)sprintf(out + o, "\",\"method\":\""); td_esc(out, &o, m, ml);
    o += (size_t)sprintf(out + o, "\",\"url\":\""); td_esc(out, &o, u, ul);
    o += (size_t)sprintf(out + o, "\",\"http_version\":\""); td_esc(out, &o, hv, hvl);
    o += (size_t)sprintf(out + o, "\",\"status\":%d,\"body_bytes_sent\":%ld,\"referrer\":\"",
                         status, atol(f[6]));
    td_esc(out, &o, f[7], fl[7]);
    o += (size_t)sprintf(out + o, "\",\"user_agent\":\""); td_esc(out, &o, f[8], fl[8]);
    o += (size_t)sprintf(out + o, "\",\"x_forwarded_for\":\""); td_esc(out, &o, xff, xffl);
    o += (size_t)sprintf(out + o, "\",\"host\":\"www.zanbil.ir\",\"service_name\":\"");
    td_esc(out, &o, svl ? sv : "root", svl ? svl : 4);
    o += (size_t)sprintf(out + o,
                         "\",\"error_code\":\"%s%d\",\"request_time\":%.3f,"
                         "\"upstream_response_time\":%.3f,\"request_id\":\"%016llx%016llx\"}",
                         status >= 400 ? "E" : "-", status >= 400 ? status : 0,
                         (double)(h % 2000) / 1000.0, (double)(h % 1500) / 1000.0,
                         (unsigned long long)td_mix(h), (unsigned long long)td_mix(h + 1));
    if (status < 400) { /* error_code "-" below 400 */
        char *e = strstr(out, "\"error_code\":\"-0\"");
        if (e) { memmove(e + 15, e + 16, strlen(e + 16) + 1); o--; }
    }
    return o;
}

/* Load up to max_docs lines of `path`; as_json converts them, else the raw
 * lines (without newline) are the docs.  Returns 0 or -1. */
static inline int td_load(const char *path, int as_json, size_t max_docs, td_docs *d)
{
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char *line = NULL, *out = NULL;
    size_t lcap = 0, ocap = 0;
    ssize_t n;
    uint64_t seq = 0;
    while (d->n < max_docs && (n = getline(&line, &lcap, f)) > 0) {
        if (line[n - 1] == '\n') n--;
        if (!as_json) { td_push(d, line, (size_t)n); continue; }
        if (ocap < (size_t)n * 6 + 1024) {
            ocap = (size_t)n * 6 + 1024;
            out = realloc(out, ocap);
            if (!out) abort();
        }
        size_t o = td_line_to_json(line, (size_t)n, seq++, out);
        if (o) td_push(d, out, o);
    }
    free(line); free(out);
    fclose(f);
    return d->n ? 0 : -1;
}

/* One block from doc `first`: docs are added until the raw bytes reach
 * block_size or the block holds max_docs (DESIGN.md §3).  Returns the
 * index one past the block's last doc. */
static inline size_t td_cut(const td_docs *d, size_t first, size_t block_size,
                            size_t max_docs)
{
    size_t i = first, raw = 0;
    while (i < d->n && i - first < max_docs && raw < block_size)
        raw += d->lens[i++];
    return i;
}

#endif
