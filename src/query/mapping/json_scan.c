/*
 * json_scan.c: a strict JSON walker over the raw bytes of a document.
 *
 * Why not cJSON: cJSON keeps numbers as doubles (9007199254740993 changes),
 * keeps both copies of a duplicate key and cuts strings at "\u0000"
 * (DESIGN.md section 10).  Indexing and validation need the original digits,
 * must refuse duplicate keys and invalid UTF-8, and must not allocate a tree
 * per document, so this walker reports each value with its dotted path and
 * its raw number text or unescaped string, in one pass, without a tree.
 *
 * The same walker checks request bodies (fds_json_check_body(): search,
 * settings, mappings, bulk action lines), which cJSON would otherwise take
 * with duplicate keys and invalid UTF-8; there errors are of kind
 * FDS_KIND_CONTENT_PARSE and worded as Elasticsearch's JSON parser words
 * them ("[1:44] Duplicate field 'includes'").
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query_int.h"

typedef struct kent {
    size_t off, len; /* into the key arena */
    size_t src_off;  /* where the key is in the document */
} kent;

typedef struct scanner {
    const uint8_t *s;
    size_t n, i;
    char path[FDS_FIELD_PATH_MAX];
    size_t plen;
    char *sbuf;
    size_t scap;
    char *ka;
    size_t klen, kcap;
    kent *kv;
    size_t nk, kvcap;
    int depth;
    bool body;      /* a request body: no paths, FDS_KIND_CONTENT_PARSE */
    int quiet;      /* > 0: inside a value the callback skipped */
    fds_jval_fn cb;
    void *arg;
    fds_err *err;
} scanner;

void fds__json_linecol(const uint8_t *src, size_t len, size_t off, int *line,
                       int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (src[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static int fail(scanner *sc, size_t off, const char *what)
{
    int l, c;
    fds__json_linecol(sc->s, sc->n, off, &l, &c);
    if (sc->body)
        return fds_err_setk(sc->err, FDS_EPARSE, FDS_KIND_CONTENT_PARSE,
                            "[%d:%d] %s", l, c, what);
    return fds_err_setk(sc->err, FDS_EPARSE, FDS_KIND_DOCUMENT_PARSE,
                        "[%d:%d] failed to parse: %s", l, c, what);
}

static void ws(scanner *sc)
{
    while (sc->i < sc->n) {
        uint8_t c = sc->s[sc->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        sc->i++;
    }
}

static int grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 256;
    while (nc < need)
        nc *= 2;
    char *nb = realloc(*buf, nc);
    if (!nb)
        return FDS_ENOMEM;
    *buf = nb;
    *cap = nc;
    return 0;
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_hex4(scanner *sc, uint32_t *v)
{
    if (sc->i + 4 > sc->n)
        return -1;
    uint32_t r = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(sc->s[sc->i + k]);
        if (h < 0)
            return -1;
        r = r << 4 | (uint32_t)h;
    }
    sc->i += 4;
    *v = r;
    return 0;
}

/* Parse a string at sc->i (on the quote) into (*buf + *blen). */
static int parse_string(scanner *sc, char **buf, size_t *cap, size_t *blen)
{
    size_t start = sc->i++;
    size_t o = *blen;
    for (;;) {
        if (sc->i >= sc->n)
            return fail(sc, start, "unterminated string");
        /* copy a run of plain bytes: eight at a time while none of them
         * is '"', '\\' or below 0x20 (the "has a zero byte" and "has a byte
         * less than n" tests of Anderson's Bit Twiddling Hacks; bytes of
         * 0x80 and above are plain here, checked as UTF-8 below) */
        size_t r = sc->i;
        const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
        while (sc->n - r >= 8) {
            uint64_t w, q, b;
            memcpy(&w, sc->s + r, 8);
            q = w ^ (ones * '"');
            b = w ^ (ones * '\\');
            if ((((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w)) &
                highs)
                break;
            r += 8;
        }
        while (r < sc->n && sc->s[r] != '"' && sc->s[r] != '\\' &&
               sc->s[r] >= 0x20)
            r++;
        if (r > sc->i) {
            if (!fds__utf8_valid(sc->s + sc->i, r - sc->i))
                return fail(sc, sc->i, "invalid UTF-8 in string");
            if (grow(buf, cap, o + (r - sc->i) + 8))
                return FDS_ENOMEM;
            memcpy(*buf + o, sc->s + sc->i, r - sc->i);
            o += r - sc->i;
            sc->i = r;
        }
        if (sc->i >= sc->n)
            return fail(sc, start, "unterminated string");
        uint8_t c = sc->s[sc->i];
        if (c == '"') {
            sc->i++;
            break;
        }
        if (c < 0x20)
            return fail(sc, sc->i, "control character in string");
        /* escape */
        sc->i++;
        if (sc->i >= sc->n)
            return fail(sc, start, "unterminated string");
        if (grow(buf, cap, o + 8))
            return FDS_ENOMEM;
        c = sc->s[sc->i++];
        char *b = *buf;
        switch (c) {
        case '"': b[o++] = '"'; break;
        case '\\': b[o++] = '\\'; break;
        case '/': b[o++] = '/'; break;
        case 'b': b[o++] = '\b'; break;
        case 'f': b[o++] = '\f'; break;
        case 'n': b[o++] = '\n'; break;
        case 'r': b[o++] = '\r'; break;
        case 't': b[o++] = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (read_hex4(sc, &cp))
                return fail(sc, sc->i, "bad \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (sc->i + 2 > sc->n || sc->s[sc->i] != '\\' ||
                    sc->s[sc->i + 1] != 'u')
                    return fail(sc, sc->i, "lone surrogate in \\u escape");
                sc->i += 2;
                if (read_hex4(sc, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                    return fail(sc, sc->i, "lone surrogate in \\u escape");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return fail(sc, sc->i, "lone surrogate in \\u escape");
            }
            if (cp < 0x80) {
                b[o++] = (char)cp;
            } else if (cp < 0x800) {
                b[o++] = (char)(0xC0 | cp >> 6);
                b[o++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                b[o++] = (char)(0xE0 | cp >> 12);
                b[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                b[o++] = (char)(0x80 | (cp & 0x3F));
            } else {
                b[o++] = (char)(0xF0 | cp >> 18);
                b[o++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                b[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                b[o++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default:
            return fail(sc, sc->i - 1, "bad escape in string");
        }
    }
    if (grow(buf, cap, o + 1))
        return FDS_ENOMEM;
    (*buf)[o] = 0;
    *blen = o;
    return 0;
}

static int parse_number(scanner *sc, size_t *end)
{
    size_t i = sc->i;
    const uint8_t *s = sc->s;
    if (i < sc->n && s[i] == '-')
        i++;
    if (i >= sc->n)
        return fail(sc, sc->i, "bad number");
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < sc->n && s[i] >= '0' && s[i] <= '9')
            i++;
    } else {
        return fail(sc, sc->i, "unexpected character");
    }
    if (i < sc->n && s[i] == '.') {
        i++;
        if (i >= sc->n || s[i] < '0' || s[i] > '9')
            return fail(sc, i, "bad number");
        while (i < sc->n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < sc->n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < sc->n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= sc->n || s[i] < '0' || s[i] > '9')
            return fail(sc, i, "bad number");
        while (i < sc->n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    *end = i;
    return 0;
}

static int emit_val(scanner *sc, int kind, const char *str, size_t len,
                    size_t off)
{
    if (sc->quiet)
        return 0;
    sc->path[sc->plen] = 0;
    fds_jval v = {kind, sc->path, sc->plen, str, len, off, false, false};
    return sc->cb ? sc->cb(sc->arg, &v, sc->err) : 0;
}

/* The start of an object or array reported: 0 to walk it as usual, 1 to
 * walk it quietly (FDS__JSCAN_SKIP), or the callback's error. */
static int emit_open(scanner *sc, int kind, size_t off)
{
    int rc = emit_val(sc, kind, NULL, 0, off);
    if (rc == FDS__JSCAN_SKIP) {
        sc->quiet++;
        return 1;
    }
    return rc;
}

static int key_cmp(const void *a, const void *b, void *ka)
{
    const kent *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp((char *)ka + x->off, (char *)ka + y->off, n);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* key_cmp(x, y) == 0, lengths first: most keys of an object differ in
 * length, which spares the call to memcmp. */
static inline bool key_eq(const kent *x, const kent *y, const char *ka)
{
    return x->len == y->len && memcmp(ka + x->off, ka + y->off, x->len) == 0;
}

static int check_dups(scanner *sc, size_t kstart)
{
    size_t cnt = sc->nk - kstart;
    kent *k = sc->kv + kstart;
    if (cnt < 2)
        return 0;
    if (cnt <= 32) {
        for (size_t a = 1; a < cnt; a++)
            for (size_t b = 0; b < a; b++)
                if (key_eq(&k[a], &k[b], sc->ka))
                    goto dup_at_a;
        return 0;
    dup_at_a:;
        size_t a = 1;
        for (; a < cnt; a++) {
            size_t b = 0;
            for (; b < a; b++)
                if (key_eq(&k[a], &k[b], sc->ka))
                    break;
            if (b < a)
                break;
        }
        char msg[200];
        snprintf(msg, sizeof msg, "Duplicate field '%.*s'",
                 (int)(k[a].len > 120 ? 120 : k[a].len), sc->ka + k[a].off);
        return fail(sc, k[a].src_off, msg);
    }
    qsort_r(k, cnt, sizeof *k, key_cmp, sc->ka);
    for (size_t a = 1; a < cnt; a++)
        if (key_cmp(&k[a], &k[a - 1], sc->ka) == 0) {
            char msg[200];
            snprintf(msg, sizeof msg, "Duplicate field '%.*s'",
                     (int)(k[a].len > 120 ? 120 : k[a].len), sc->ka + k[a].off);
            return fail(sc, k[a].src_off, msg);
        }
    return 0;
}

static int parse_value(scanner *sc);

/* One level deeper (an object or array): documents are bounded by
 * index.mapping.depth.limit, request bodies by FDS_BODY_DEPTH_MAX. */
static int enter(scanner *sc)
{
    if (sc->body) {
        if (++sc->depth > FDS_BODY_DEPTH_MAX) {
            char msg[80];
            snprintf(msg, sizeof msg, "JSON nesting depth exceeds the "
                     "maximum allowed [%d]", FDS_BODY_DEPTH_MAX);
            return fail(sc, sc->i, msg);
        }
        return 0;
    }
    if (++sc->depth > FDS_DOC_DEPTH_MAX)
        return fds_err_setk(sc->err, FDS_EPARSE, FDS_KIND_DOCUMENT_PARSE,
                            "Limit of mapping depth [%d] has been exceeded",
                            FDS_DOC_DEPTH_MAX);
    return 0;
}

static int parse_object(scanner *sc)
{
    size_t kstart = sc->nk, astart = sc->klen, pl = sc->plen;
    int rc = enter(sc);
    if (rc)
        return rc;
    sc->i++; /* { */
    ws(sc);
    if (sc->i < sc->n && sc->s[sc->i] == '}') {
        sc->i++;
        sc->depth--;
        return 0;
    }
    for (;;) {
        ws(sc);
        if (sc->i >= sc->n || sc->s[sc->i] != '"')
            return fail(sc, sc->i, "expected a field name");
        size_t koff = sc->i, klen = sc->klen;
        rc = parse_string(sc, &sc->ka, &sc->kcap, &klen);
        if (rc)
            return rc;
        size_t keylen = klen - sc->klen;
        if (keylen == 0 && !sc->body)
            return fail(sc, koff, "field name cannot be an empty string");
        if (sc->body) /* Jackson reports a duplicate just after its name */
            koff = sc->i;
        if (sc->nk == sc->kvcap) {
            size_t nc = sc->kvcap ? sc->kvcap * 2 : 64;
            kent *nv = realloc(sc->kv, nc * sizeof *nv);
            if (!nv)
                return FDS_ENOMEM;
            sc->kv = nv;
            sc->kvcap = nc;
        }
        sc->kv[sc->nk++] = (kent){sc->klen, keylen, koff};
        /* path += "." key */
        size_t need = pl + (pl ? 1 : 0) + keylen;
        if (sc->body)
            need = 0; /* no paths: a body's nesting is bounded, not its names */
        else if (need + 1 > sizeof sc->path)
            return fail(sc, koff, "field path too long");
        sc->plen = pl;
        if (!sc->body) {
            if (pl)
                sc->path[sc->plen++] = '.';
            memcpy(sc->path + sc->plen, sc->ka + sc->klen, keylen);
            sc->plen += keylen;
        }
        sc->klen = klen;
        ws(sc);
        if (sc->i >= sc->n || sc->s[sc->i] != ':')
            return fail(sc, sc->i, "expected ':'");
        sc->i++;
        rc = parse_value(sc);
        if (rc)
            return rc;
        sc->plen = pl;
        ws(sc);
        if (sc->i >= sc->n)
            return fail(sc, sc->i, "unexpected end of input in object");
        if (sc->s[sc->i] == ',') {
            sc->i++;
            continue;
        }
        if (sc->s[sc->i] == '}') {
            sc->i++;
            break;
        }
        return fail(sc, sc->i, "expected ',' or '}'");
    }
    rc = check_dups(sc, kstart);
    if (rc)
        return rc;
    sc->nk = kstart;
    sc->klen = astart;
    sc->depth--;
    return 0;
}

/* The elements of an array, sc->i at its '['. */
static int parse_array(scanner *sc)
{
    int rc = enter(sc);
    if (rc)
        return rc;
    sc->i++;
    ws(sc);
    if (sc->i < sc->n && sc->s[sc->i] == ']') {
        sc->i++;
        sc->depth--;
        return 0;
    }
    for (;;) {
        rc = parse_value(sc);
        if (rc)
            return rc;
        ws(sc);
        if (sc->i >= sc->n)
            return fail(sc, sc->i, "unexpected end of input in array");
        if (sc->s[sc->i] == ',') {
            sc->i++;
            continue;
        }
        if (sc->s[sc->i] == ']') {
            sc->i++;
            break;
        }
        return fail(sc, sc->i, "expected ',' or ']'");
    }
    sc->depth--;
    return 0;
}

static int parse_value(scanner *sc)
{
    ws(sc);
    if (sc->i >= sc->n)
        return fail(sc, sc->i, "unexpected end of input");
    uint8_t c = sc->s[sc->i];
    size_t off = sc->i;
    int rc;
    switch (c) {
    case '{': {
        int q = emit_open(sc, FDS_JV_OBJECT, off);
        if (q < 0)
            return q;
        rc = parse_object(sc);
        sc->quiet -= q;
        return rc;
    }
    case '[': {
        int q = emit_open(sc, FDS_JV_ARRAY, off);
        if (q < 0)
            return q;
        rc = parse_array(sc);
        sc->quiet -= q;
        return rc;
    }
    case '"': {
        size_t blen = 0;
        rc = parse_string(sc, &sc->sbuf, &sc->scap, &blen);
        if (rc)
            return rc;
        return emit_val(sc, FDS_JV_STRING, sc->sbuf, blen, off);
    }
    case 't':
        if (sc->i + 4 <= sc->n && memcmp(sc->s + sc->i, "true", 4) == 0) {
            sc->i += 4;
            return emit_val(sc, FDS_JV_TRUE, "true", 4, off);
        }
        return fail(sc, off, "unexpected character");
    case 'f':
        if (sc->i + 5 <= sc->n && memcmp(sc->s + sc->i, "false", 5) == 0) {
            sc->i += 5;
            return emit_val(sc, FDS_JV_FALSE, "false", 5, off);
        }
        return fail(sc, off, "unexpected character");
    case 'n':
        if (sc->i + 4 <= sc->n && memcmp(sc->s + sc->i, "null", 4) == 0) {
            sc->i += 4;
            return emit_val(sc, FDS_JV_NULL, "null", 4, off);
        }
        return fail(sc, off, "unexpected character");
    default: {
        size_t end = 0;
        rc = parse_number(sc, &end);
        if (rc)
            return rc;
        sc->i = end;
        return emit_val(sc, FDS_JV_NUMBER, (const char *)sc->s + off,
                        end - off, off);
    }
    }
}

/* One walk: a document (an object, paths, document kinds) or a request
 * body (any value, FDS_KIND_CONTENT_PARSE). */
static int scan(const uint8_t *src, size_t len, bool body, fds_jval_fn cb,
                void *arg, fds_err *err)
{
    scanner sc;
    memset(&sc, 0, sizeof sc);
    sc.s = src;
    sc.n = len;
    sc.body = body;
    sc.cb = cb;
    sc.arg = arg;
    sc.err = err;
    int rc = 0;
    ws(&sc);
    if (body) {
        if (sc.i < sc.n)
            rc = parse_value(&sc);
    } else if (sc.i >= sc.n) {
        rc = fds_err_setk(err, FDS_EPARSE, FDS_KIND_DOCUMENT_PARSE,
                          "failed to parse, document is empty");
    } else if (src[sc.i] != '{') {
        rc = fail(&sc, sc.i, "Malformed content, must start with an object");
    } else {
        rc = parse_object(&sc);
    }
    if (rc == 0) {
        ws(&sc);
        if (sc.i != sc.n)
            rc = fail(&sc, sc.i, body ? "unexpected content after the body"
                                      : "unexpected content after the "
                                        "document");
    }
    free(sc.sbuf);
    free(sc.ka);
    free(sc.kv);
    return rc;
}

int fds__json_scan(const uint8_t *src, size_t len, fds_jval_fn cb, void *arg,
                   fds_err *err)
{
    return scan(src, len, false, cb, arg, err);
}

int fds_json_check_body(const char *src, size_t len, fds_err *err)
{
    return scan((const uint8_t *)src, len, true, NULL, NULL, err);
}

static int nul_cb(void *arg, const fds_jval *v, fds_err *err)
{
    (void)err;
    if (v->kind == FDS_JV_STRING && memchr(v->str, 0, v->str_len))
        *(bool *)arg = true;
    return 0;
}

int fds_json_check_body_nul(const char *src, size_t len, bool *nul,
                            fds_err *err)
{
    *nul = false;
    int rc = scan((const uint8_t *)src, len, true, nul_cb, nul, err);
    if (rc)
        *nul = false;
    return rc;
}

int fds__json_scan_body(const char *src, size_t len, fds_jval_fn cb,
                        void *arg, fds_err *err)
{
    return scan((const uint8_t *)src, len, true, cb, arg, err);
}

typedef struct values_at {
    const char *path;
    size_t plen;
    cJSON *out;
} values_at;

static int values_at_cb(void *arg, const fds_jval *v, fds_err *err)
{
    (void)err;
    values_at *x = arg;
    if (v->path_len != x->plen || memcmp(v->path, x->path, x->plen))
        return 0;
    cJSON *e = NULL;
    if (v->kind == FDS_JV_STRING || v->kind == FDS_JV_NUMBER) {
        char *s = strndup(v->str, v->str_len); /* cut at a NUL, as cJSON */
        e = s ? cJSON_CreateString(s) : NULL;
        free(s);
    } else if (v->kind == FDS_JV_TRUE || v->kind == FDS_JV_FALSE) {
        e = cJSON_CreateBool(v->kind == FDS_JV_TRUE);
    } else {
        return 0; /* null, or an object or array starting */
    }
    if (!e || !cJSON_AddItemToArray(x->out, e)) {
        cJSON_Delete(e);
        return FDS_ENOMEM;
    }
    return 0;
}

int fds_json_values_at(const uint8_t *src, size_t len, const char *path,
                       cJSON *out)
{
    values_at x = {path, strlen(path), out};
    fds_err err;
    fds_err_clear(&err);
    return fds__json_scan(src, len, values_at_cb, &x, &err);
}
