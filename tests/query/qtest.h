/*
 * qtest.h: helpers shared by the query tests -- ASSERT macros, a small
 * nginx combined-log line -> JSON document converter (the tests' own, kept
 * independent of datasets/), and loading the real sample.
 */
#ifndef FDS_QTEST_H
#define FDS_QTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int qt_failures __attribute__((unused));

#define ASSERT(c)                                                            \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__,       \
                    __LINE__, #c);                                           \
            qt_failures++;                                                   \
        }                                                                    \
    } while (0)
#define ASSERT_EQ_U(a, b)                                                    \
    do {                                                                     \
        unsigned long long _a = (a), _b = (b);                               \
        if (_a != _b) {                                                      \
            fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n",      \
                    __FILE__, __LINE__, #a, _a, #b, _b);                     \
            qt_failures++;                                                   \
        }                                                                    \
    } while (0)
#define ASSERT_STR(a, b)                                                     \
    do {                                                                     \
        const char *_a = (a), *_b = (b);                                     \
        if (!_a || strcmp(_a, _b)) {                                         \
            fprintf(stderr, "%s:%d: got \"%s\", expected \"%s\"\n",          \
                    __FILE__, __LINE__, _a ? _a : "(null)", _b);             \
            qt_failures++;                                                   \
        }                                                                    \
    } while (0)

static void qt_json_str(char **o, const char *s, size_t n)
{
    char *p = *o;
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = (char)c;
        } else if (c < 0x20) {
            p += sprintf(p, "\\u%04x", c);
        } else {
            *p++ = (char)c;
        }
    }
    *p++ = '"';
    *o = p;
}

static int qt_month(const char *m)
{
    static const char *ms = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char *f = strstr(ms, m);
    return f ? (int)(f - ms) / 3 + 1 : 0;
}

/* Convert one combined-format line into a JSON object in `out` (cap >= 4 *
 * strlen(line) + 512).  Returns the length, or 0 if the line is not in
 * combined format. */
static size_t qt_nginx_to_json(const char *line, char *out, unsigned seq)
{
    char ip[64], user[64], ts[64], req[8192], ref[8192], ua[8192];
    int status;
    long long bytes;
    const char *p = line;
    if (sscanf(p, "%63s - %63s [%63[^]]]", ip, user, ts) != 3)
        return 0;
    p = strchr(p, '"');
    if (!p)
        return 0;
    const char *q = strstr(p + 1, "\" ");
    if (!q || (size_t)(q - p - 1) >= sizeof req)
        return 0;
    memcpy(req, p + 1, (size_t)(q - p - 1));
    req[q - p - 1] = 0;
    if (sscanf(q + 2, "%d %lld", &status, &bytes) != 2)
        return 0;
    p = strchr(q + 2, '"');
    if (!p)
        return 0;
    q = strstr(p + 1, "\" \"");
    if (!q)
        return 0;
    memcpy(ref, p + 1, (size_t)(q - p - 1));
    ref[q - p - 1] = 0;
    p = q + 2;
    q = strstr(p + 1, "\" \"");
    if (!q)
        q = strrchr(p + 1, '"');
    if (!q)
        return 0;
    memcpy(ua, p + 1, (size_t)(q - p - 1));
    ua[q - p - 1] = 0;
    char method[64] = "", url[8192] = "", proto[64] = "";
    const char *sp1 = strchr(req, ' ');
    if (sp1) {
        const char *sp2 = strrchr(req, ' ');
        snprintf(method, sizeof method, "%.*s", (int)(sp1 - req), req);
        if (sp2 > sp1) {
            snprintf(url, sizeof url, "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
            snprintf(proto, sizeof proto, "%s", sp2 + 1);
        } else {
            snprintf(url, sizeof url, "%s", sp1 + 1);
        }
    } else {
        snprintf(url, sizeof url, "%s", req);
    }
    int d, y, hh, mi, ss, off;
    char mon[4];
    if (sscanf(ts, "%d/%3s/%d:%d:%d:%d %d", &d, mon, &y, &hh, &mi, &ss, &off) != 7)
        return 0;
    char *o = out;
    o += sprintf(o, "{\"@timestamp\":\"%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d\"",
                 y, qt_month(mon), d, hh, mi, ss, off < 0 ? '-' : '+',
                 abs(off) / 100, abs(off) % 100);
    o += sprintf(o, ",\"remote_addr\":");
    qt_json_str(&o, ip, strlen(ip));
    o += sprintf(o, ",\"method\":");
    qt_json_str(&o, method, strlen(method));
    o += sprintf(o, ",\"url\":");
    qt_json_str(&o, url, strlen(url));
    o += sprintf(o, ",\"http_version\":");
    qt_json_str(&o, proto, strlen(proto));
    o += sprintf(o, ",\"status\":%d,\"body_bytes_sent\":%lld", status, bytes);
    o += sprintf(o, ",\"referrer\":");
    qt_json_str(&o, ref, strlen(ref));
    o += sprintf(o, ",\"user_agent\":");
    qt_json_str(&o, ua, strlen(ua));
    o += sprintf(o, ",\"request_time\":%u.%03u", (seq * 7919u) % 3, (seq * 104729u) % 1000);
    o += sprintf(o, "}");
    return (size_t)(o - out);
}

typedef struct qt_docs {
    char **json;
    size_t *len;
    size_t n;
} qt_docs;

__attribute__((unused)) static int qt_load(const char *path, qt_docs *d, size_t max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    static char line[65536];
    size_t cap = 1024;
    d->json = malloc(cap * sizeof *d->json);
    d->len = malloc(cap * sizeof *d->len);
    d->n = 0;
    while (d->n < max && fgets(line, sizeof line, f)) {
        size_t ll = strlen(line);
        char *buf = malloc(4 * ll + 512);
        size_t n = qt_nginx_to_json(line, buf, (unsigned)d->n);
        if (!n) {
            fprintf(stderr, "unparsed line %zu\n", d->n + 1);
            free(buf);
            continue;
        }
        if (d->n == cap) {
            cap *= 2;
            d->json = realloc(d->json, cap * sizeof *d->json);
            d->len = realloc(d->len, cap * sizeof *d->len);
        }
        d->json[d->n] = buf;
        d->len[d->n++] = n;
    }
    fclose(f);
    return 0;
}

#endif
