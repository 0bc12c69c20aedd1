/*
 * term_pat.c: prefix, wildcard and regexp patterns compiled to a Pike VM
 * program and matched over code points (term_pat.h has the syntax and the
 * bounds).
 *
 * A program is an array of instructions; SPLIT and JMP name absolute
 * targets.  The compiler emits a fragment for each part of the pattern
 * straight into the array: an operator that wraps a fragment inserts its
 * SPLIT before it (shifting the fragment's targets), and a counted
 * repetition {n,m} copies the fragment with its targets moved.  Every
 * instruction counts against the state bound before it is written.
 */
#include "index/term_pat.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

enum { OP_CHAR, OP_ANY, OP_CLASS, OP_SPLIT, OP_JMP, OP_MATCH, OP_FAIL };

typedef struct inst {
    uint8_t op;
    bool neg;        /* CLASS: [^...] */
    int32_t c;       /* CHAR: the code point (lower-cased when ci) */
    uint32_t x, y;   /* SPLIT: both targets; JMP: x; CLASS: ranges [x, x+y) */
} inst;

struct fds_term_pat {
    inst *prog;
    size_t n, cap, max;
    int32_t *rng;    /* class ranges, pairs (lo, hi) */
    size_t nrng, caprng;
    bool ci;
    char *lead;      /* literal bytes every match starts with */
    size_t lead_len;
};

/* ---- the compiler ----------------------------------------------------------- */

typedef struct pc {
    fds_term_pat *p;
    const int32_t *s; /* the pattern's code points */
    size_t n, i;
    unsigned flags;
    fds_err *err;
    const char *src;  /* the pattern as given, for messages */
    int depth;
} pc;

/* Deepest group nesting a regexp may have (the compiler recurses). */
#define REGEX_MAX_DEPTH 100

static int too_complex(pc *c)
{
    return fds_err_setk(c->err, FDS_ETOOBIG, FDS_KIND_QUERY_SHARD,
                        "Determinizing automaton of pattern [%.200s] would "
                        "result in more than %zu states.", c->src, c->p->max);
}

static int bad(pc *c, const char *what)
{
    return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_SHARD,
                        "invalid regexp [%.200s]: %s at position %zu", c->src,
                        what, c->i);
}

/* Room for k more instructions.  0, FDS_ETOOBIG, FDS_ENOMEM. */
static int room(pc *c, size_t k)
{
    fds_term_pat *p = c->p;
    if (p->n + k > p->max)
        return too_complex(c);
    if (p->n + k > p->cap) {
        size_t cap = p->cap ? p->cap : 16;
        while (cap < p->n + k)
            cap *= 2;
        inst *np = realloc(p->prog, cap * sizeof *np);
        if (!np)
            return fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                "out of memory");
        p->prog = np;
        p->cap = cap;
    }
    return 0;
}

static int emit(pc *c, inst in)
{
    int rc = room(c, 1);
    if (!rc)
        c->p->prog[c->p->n++] = in;
    return rc;
}

/* Open k slots at `at`, moving [at, n) and its targets up by k. */
static int insert_at(pc *c, size_t at, size_t k)
{
    int rc = room(c, k);
    if (rc)
        return rc;
    fds_term_pat *p = c->p;
    memmove(p->prog + at + k, p->prog + at, (p->n - at) * sizeof *p->prog);
    p->n += k;
    for (size_t i = at + k; i < p->n; i++) {
        inst *in = &p->prog[i];
        if (in->op == OP_SPLIT || in->op == OP_JMP) {
            if (in->x >= at)
                in->x += (uint32_t)k;
            if (in->op == OP_SPLIT && in->y >= at)
                in->y += (uint32_t)k;
        }
    }
    return 0;
}

/* Append a copy of frag[0..len) (targets relative to `base`). */
static int copy_frag(pc *c, const inst *frag, size_t len, size_t base)
{
    int rc = room(c, len);
    if (rc)
        return rc;
    fds_term_pat *p = c->p;
    uint32_t to = (uint32_t)p->n;
    for (size_t i = 0; i < len; i++) {
        inst in = frag[i];
        if (in.op == OP_SPLIT || in.op == OP_JMP) {
            in.x = in.x - (uint32_t)base + to;
            if (in.op == OP_SPLIT)
                in.y = in.y - (uint32_t)base + to;
        }
        p->prog[p->n++] = in;
    }
    return 0;
}

static int32_t fold(const fds_term_pat *p, int32_t c)
{
    return p->ci ? utf8proc_tolower(c) : c;
}

static int emit_char(pc *c, int32_t ch)
{
    return emit(c, (inst){.op = OP_CHAR, .c = fold(c->p, ch)});
}

/* `frag*` for the fragment starting at s. */
static int star(pc *c, size_t s)
{
    int rc = insert_at(c, s, 1);
    if (!rc)
        rc = emit(c, (inst){.op = OP_JMP, .x = (uint32_t)s});
    if (!rc)
        c->p->prog[s] = (inst){.op = OP_SPLIT, .x = (uint32_t)s + 1,
                               .y = (uint32_t)c->p->n};
    return rc;
}

static int quest(pc *c, size_t s)
{
    int rc = insert_at(c, s, 1);
    if (!rc)
        c->p->prog[s] = (inst){.op = OP_SPLIT, .x = (uint32_t)s + 1,
                               .y = (uint32_t)c->p->n};
    return rc;
}

static int any_string(pc *c)
{
    size_t s = c->p->n;
    int rc = emit(c, (inst){.op = OP_ANY});
    return rc ? rc : star(c, s);
}

static int add_range(pc *c, int32_t lo, int32_t hi)
{
    fds_term_pat *p = c->p;
    if (p->nrng + 2 > p->caprng) {
        size_t cap = p->caprng ? p->caprng * 2 : 16;
        int32_t *nr = realloc(p->rng, cap * sizeof *nr);
        if (!nr)
            return fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                                "out of memory");
        p->rng = nr;
        p->caprng = cap;
    }
    p->rng[p->nrng++] = lo;
    p->rng[p->nrng++] = hi;
    return 0;
}

/* The ranges of \d, \s, \w (Lucene's RegExp shorthand classes). */
static int shorthand(pc *c, int32_t k)
{
    int rc = 0;
    if (k == 'd')
        rc = add_range(c, '0', '9');
    else if (k == 's') {
        rc = add_range(c, ' ', ' ');
        if (!rc)
            rc = add_range(c, '\t', '\r');
    } else {
        rc = add_range(c, 'a', 'z');
        if (!rc)
            rc = add_range(c, 'A', 'Z');
        if (!rc)
            rc = add_range(c, '0', '9');
        if (!rc)
            rc = add_range(c, '_', '_');
    }
    return rc;
}

static bool is_shorthand(int32_t k)
{
    return k == 'd' || k == 's' || k == 'w' || k == 'D' || k == 'S' ||
           k == 'W';
}

/* [...] after its '['. */
static int char_class(pc *c)
{
    bool neg = false;
    if (c->i < c->n && c->s[c->i] == '^') {
        neg = true;
        c->i++;
    }
    uint32_t first = (uint32_t)c->p->nrng;
    int rc = 0;
    bool any = false;
    while (!rc) {
        if (c->i >= c->n)
            return bad(c, "expected ']'");
        int32_t a = c->s[c->i++];
        if (a == ']' && any)
            break;
        any = true;
        if (a == '\\') {
            if (c->i >= c->n)
                return bad(c, "expected a character after '\\'");
            a = c->s[c->i++];
            if (is_shorthand(a)) {
                if (a < 'a')
                    return bad(c, "a negated shorthand class inside [] is "
                                  "not supported");
                rc = shorthand(c, a);
                continue;
            }
        }
        int32_t b = a;
        if (c->i + 1 < c->n && c->s[c->i] == '-' && c->s[c->i + 1] != ']') {
            c->i++;
            b = c->s[c->i++];
            if (b == '\\') {
                if (c->i >= c->n)
                    return bad(c, "expected a character after '\\'");
                b = c->s[c->i++];
            }
            if (b < a)
                return bad(c, "invalid character class range");
        }
        rc = add_range(c, a, b);
    }
    if (rc)
        return rc;
    return emit(c, (inst){.op = OP_CLASS, .neg = neg, .x = first,
                          .y = (uint32_t)c->p->nrng - first});
}

static int parse_union(pc *c);

static bool flag(const pc *c, unsigned f) { return (c->flags & f) != 0; }

static int atom(pc *c)
{
    int32_t ch = c->s[c->i++];
    switch (ch) {
    case '.':
        return emit(c, (inst){.op = OP_ANY});
    case '[':
        return char_class(c);
    case '(': {
        if (c->i < c->n && c->s[c->i] == ')') {
            c->i++;
            return 0; /* the empty string */
        }
        if (++c->depth > REGEX_MAX_DEPTH)
            return bad(c, "groups nested too deep");
        int rc = parse_union(c);
        c->depth--;
        if (rc)
            return rc;
        if (c->i >= c->n || c->s[c->i] != ')')
            return bad(c, "expected ')'");
        c->i++;
        return 0;
    }
    case '"': {
        int rc = 0;
        while (!rc && c->i < c->n && c->s[c->i] != '"')
            rc = emit_char(c, c->s[c->i++]);
        if (!rc && c->i >= c->n)
            return bad(c, "expected '\"'");
        c->i++;
        return rc;
    }
    case '\\': {
        if (c->i >= c->n)
            return bad(c, "expected a character after '\\'");
        int32_t k = c->s[c->i++];
        if (!is_shorthand(k))
            return emit_char(c, k);
        uint32_t first = (uint32_t)c->p->nrng;
        int32_t lower = k | 0x20;
        int rc = shorthand(c, lower);
        return rc ? rc : emit(c, (inst){.op = OP_CLASS, .neg = k != lower,
                                        .x = first,
                                        .y = (uint32_t)c->p->nrng - first});
    }
    case '*': case '+': case '?': case '{':
        c->i--;
        return bad(c, "an operator with nothing to repeat");
    case ')':
        c->i--;
        return bad(c, "unbalanced ')'");
    default:
        break;
    }
    if (ch == '#' && flag(c, FDS_RE_EMPTY))
        return emit(c, (inst){.op = OP_FAIL});
    if (ch == '@' && flag(c, FDS_RE_ANYSTRING))
        return any_string(c);
    if ((ch == '~' && flag(c, FDS_RE_COMPLEMENT)) ||
        (ch == '<' && flag(c, FDS_RE_INTERVAL))) {
        c->i--;
        return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_SHARD,
                            "the [%s] operator of regexp [%.200s] is not "
                            "supported; escape it or leave it out of "
                            "[flags]", ch == '~' ? "COMPLEMENT" : "INTERVAL",
                            c->src);
    }
    return emit_char(c, ch);
}

/* A decimal number of a {n,m} repetition. */
static int rep_num(pc *c, long *out)
{
    long v = 0;
    size_t start = c->i;
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
        v = v * 10 + (c->s[c->i++] - '0');
        if (v > (long)FDS_REGEX_MAX_STATES)
            return too_complex(c);
    }
    if (c->i == start)
        return bad(c, "expected a number in {}");
    *out = v;
    return 0;
}

/* {n}, {n,}, {n,m} applied to the fragment from s. */
static int counted(pc *c, size_t s)
{
    long lo, hi;
    int rc = rep_num(c, &lo);
    if (rc)
        return rc;
    hi = lo;
    if (c->i < c->n && c->s[c->i] == ',') {
        c->i++;
        hi = -1;
        if (c->i < c->n && c->s[c->i] != '}' && (rc = rep_num(c, &hi)))
            return rc;
    }
    if (c->i >= c->n || c->s[c->i] != '}')
        return bad(c, "expected '}'");
    c->i++;
    if (hi >= 0 && hi < lo)
        return bad(c, "{n,m} with m < n");
    fds_term_pat *p = c->p;
    size_t len = p->n - s;
    size_t copies = (size_t)(hi < 0 ? lo + 1 : hi);
    if (copies * (len + 2) + p->n > p->max)
        return too_complex(c);
    inst *frag = malloc((len ? len : 1) * sizeof *frag);
    if (!frag)
        return fds_err_setk(c->err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                            "out of memory");
    memcpy(frag, p->prog + s, len * sizeof *frag);
    p->n = s;
    for (long k = 0; !rc && k < lo; k++)
        rc = copy_frag(c, frag, len, s);
    if (!rc && hi < 0) {
        size_t at = p->n;
        rc = copy_frag(c, frag, len, s);
        if (!rc)
            rc = star(c, at);
    }
    for (long k = lo; !rc && hi >= 0 && k < hi; k++) {
        size_t at = p->n;
        rc = copy_frag(c, frag, len, s);
        if (!rc)
            rc = quest(c, at);
    }
    free(frag);
    return rc;
}

static int repeat(pc *c)
{
    size_t s = c->p->n;
    int rc = atom(c);
    while (!rc && c->i < c->n) {
        int32_t ch = c->s[c->i];
        if (ch == '*') {
            c->i++;
            rc = star(c, s);
        } else if (ch == '+') {
            c->i++;
            rc = emit(c, (inst){.op = OP_SPLIT, .x = (uint32_t)s,
                                .y = (uint32_t)c->p->n + 1});
        } else if (ch == '?') {
            c->i++;
            rc = quest(c, s);
        } else if (ch == '{') {
            c->i++;
            rc = counted(c, s);
        } else {
            break;
        }
    }
    return rc;
}

static int parse_concat(pc *c)
{
    int rc = 0;
    while (!rc && c->i < c->n && c->s[c->i] != '|' && c->s[c->i] != ')') {
        if (c->s[c->i] == '&' && flag(c, FDS_RE_INTERSECTION))
            return fds_err_setk(c->err, FDS_EPARSE, FDS_KIND_QUERY_SHARD,
                                "the [INTERSECTION] operator of regexp "
                                "[%.200s] is not supported; escape it or "
                                "leave it out of [flags]", c->src);
        rc = repeat(c);
    }
    return rc;
}

static int parse_union(pc *c)
{
    size_t s = c->p->n;
    int rc = parse_concat(c);
    if (rc || c->i >= c->n || c->s[c->i] != '|')
        return rc;
    c->i++;
    if ((rc = insert_at(c, s, 1)))
        return rc;
    size_t j = c->p->n;
    if ((rc = emit(c, (inst){.op = OP_JMP})))
        return rc;
    c->p->prog[s] = (inst){.op = OP_SPLIT, .x = (uint32_t)s + 1,
                           .y = (uint32_t)c->p->n};
    rc = parse_union(c);
    if (!rc)
        c->p->prog[j].x = (uint32_t)c->p->n;
    return rc;
}

int fds__code_points(const char *s, size_t n, int32_t **out, size_t *m)
{
    int32_t *cp = malloc((n ? n : 1) * sizeof *cp);
    if (!cp)
        return FDS_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t ch;
        utf8proc_ssize_t w = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
                                              (utf8proc_ssize_t)(n - i), &ch);
        if (w <= 0) {
            free(cp);
            return FDS_EPARSE;
        }
        cp[k++] = ch;
        i += (size_t)w;
    }
    *out = cp;
    *m = k;
    return 0;
}

/* fds__code_points with the error detail of a pattern. */
static int code_points(const char *s, size_t n, int32_t **out, size_t *m,
                       fds_err *err)
{
    int rc = fds__code_points(s, n, out, m);
    if (rc == FDS_ENOMEM)
        return fds_err_setk(err, rc, FDS_KIND_INTERNAL, "out of memory");
    if (rc)
        return fds_err_setk(err, rc, FDS_KIND_QUERY_SHARD,
                            "the pattern is not valid UTF-8");
    return 0;
}

/* The literal bytes a case-sensitive prefix or wildcard starts with. */
static size_t lead_bytes(int kind, const char *p, size_t n)
{
    if (kind == FDS_PAT_PREFIX)
        return n;
    if (kind != FDS_PAT_WILDCARD)
        return 0;
    size_t k = 0;
    while (k < n && p[k] != '*' && p[k] != '?' && p[k] != '\\')
        k++;
    return k;
}

int fds__term_pat_new(int kind, const char *p, size_t n, bool ci,
                      unsigned flags, int max_states, fds_term_pat **out,
                      fds_err *err)
{
    *out = NULL;
    fds_term_pat *tp = calloc(1, sizeof *tp);
    int32_t *cp = NULL;
    size_t m = 0;
    int rc = tp ? code_points(p, n, &cp, &m, err)
                : fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL,
                               "out of memory");
    if (rc) {
        free(tp);
        return rc;
    }
    tp->ci = ci;
    tp->max = max_states > 0 ? (size_t)max_states : FDS_REGEX_MAX_STATES;
    if (kind == FDS_PAT_PREFIX && tp->max < m + 4)
        tp->max = m + 4; /* a prefix is linear, and runs on its range only */
    char *src = malloc(n + 1);
    if (!src) {
        rc = fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    } else {
        memcpy(src, p, n);
        src[n] = 0;
    }
    pc c = {.p = tp, .s = cp, .n = m, .flags = flags, .err = err, .src = src};
    if (!rc && kind == FDS_PAT_REGEXP) {
        rc = parse_union(&c);
        if (!rc && c.i < m)
            rc = bad(&c, "unbalanced ')'");
    } else if (!rc) {
        for (size_t i = 0; !rc && i < m; i++) {
            int32_t ch = cp[i];
            if (kind == FDS_PAT_WILDCARD && ch == '*')
                rc = any_string(&c);
            else if (kind == FDS_PAT_WILDCARD && ch == '?')
                rc = emit(&c, (inst){.op = OP_ANY});
            else if (kind == FDS_PAT_WILDCARD && ch == '\\' && i + 1 < m)
                rc = emit_char(&c, cp[++i]);
            else
                rc = emit_char(&c, ch);
        }
        if (!rc && kind == FDS_PAT_PREFIX)
            rc = any_string(&c);
    }
    if (!rc)
        rc = emit(&c, (inst){.op = OP_MATCH});
    size_t ll = ci ? 0 : lead_bytes(kind, p, n);
    if (!rc && ll && !(tp->lead = malloc(ll)))
        rc = fds_err_setk(err, FDS_ENOMEM, FDS_KIND_INTERNAL, "out of memory");
    if (!rc && ll) {
        memcpy(tp->lead, p, ll);
        tp->lead_len = ll;
    }
    free(cp);
    free(src);
    if (rc) {
        fds__term_pat_free(tp);
        return rc;
    }
    *out = tp;
    return 0;
}

void fds__term_pat_free(fds_term_pat *p)
{
    if (!p)
        return;
    free(p->prog);
    free(p->rng);
    free(p->lead);
    free(p);
}

const char *fds__term_pat_lead(const fds_term_pat *p, size_t *len)
{
    *len = p->lead_len;
    return p->lead;
}

/* ---- the VM ------------------------------------------------------------------ */

static bool in_class(const fds_term_pat *p, const inst *in, int32_t ch)
{
    bool hit = false;
    int32_t alt[3] = {ch, p->ci ? utf8proc_tolower(ch) : ch,
                      p->ci ? utf8proc_toupper(ch) : ch};
    for (uint32_t r = in->x; !hit && r < in->x + in->y; r += 2)
        for (int k = 0; k < 3 && !hit; k++)
            hit = alt[k] >= p->rng[r] && alt[k] <= p->rng[r + 1];
    return hit != in->neg;
}

typedef struct tlist {
    uint32_t *pc;
    size_t n;
} tlist;

/* Add thread `start` and everything reachable by SPLIT/JMP to l (mark[]
 * = gen means already in l; stack of p->n entries). */
static void add_thread(const fds_term_pat *p, tlist *l, uint32_t start,
                       uint32_t *mark, uint32_t gen, uint32_t *stack)
{
    size_t sp = 0;
    stack[sp++] = start;
    while (sp) {
        uint32_t i = stack[--sp];
        if (mark[i] == gen)
            continue;
        mark[i] = gen;
        const inst *in = &p->prog[i];
        if (in->op == OP_JMP) {
            stack[sp++] = in->x;
        } else if (in->op == OP_SPLIT) {
            stack[sp++] = in->y;
            stack[sp++] = in->x;
        } else {
            l->pc[l->n++] = i;
        }
    }
}

/* Programs up to this size run on stack buffers. */
#define VM_STACK_PROG 256u

bool fds__term_pat_match(const fds_term_pat *p, const char *s, size_t n)
{
    if (p->lead_len && (n < p->lead_len || memcmp(s, p->lead, p->lead_len)))
        return false;
    size_t np = p->n;
    uint32_t sbuf[6 * VM_STACK_PROG];
    uint32_t *buf = np <= VM_STACK_PROG ? sbuf : malloc(6 * np * sizeof *buf);
    if (!buf)
        return false;
    /* two thread lists, the marks, and a stack for every pushed target:
     * each instruction is expanded once per step and pushes at most two,
     * so 2 * np + 1 */
    tlist cl = {buf, 0}, nl = {buf + np, 0};
    uint32_t *mark = buf + 2 * np, *stack = buf + 3 * np;
    memset(mark, 0, np * sizeof *mark);
    uint32_t gen = 1;
    add_thread(p, &cl, 0, mark, gen, stack);
    bool matched = false;
    for (size_t i = 0;; ) {
        if (i >= n) {
            for (size_t k = 0; k < cl.n && !matched; k++)
                matched = p->prog[cl.pc[k]].op == OP_MATCH;
            break;
        }
        utf8proc_int32_t ch;
        utf8proc_ssize_t w = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
                                              (utf8proc_ssize_t)(n - i), &ch);
        if (w <= 0) {
            ch = 0xFFFD;
            w = 1;
        }
        i += (size_t)w;
        int32_t f = p->ci ? utf8proc_tolower(ch) : ch;
        gen++;
        nl.n = 0;
        for (size_t k = 0; k < cl.n; k++) {
            const inst *in = &p->prog[cl.pc[k]];
            bool step = (in->op == OP_CHAR && in->c == f) || in->op == OP_ANY ||
                        (in->op == OP_CLASS && in_class(p, in, ch));
            if (step)
                add_thread(p, &nl, cl.pc[k] + 1, mark, gen, stack);
        }
        tlist t = cl;
        cl = nl;
        nl = t;
        if (!cl.n)
            break;
    }
    if (buf != sbuf)
        free(buf);
    return matched;
}
