/*
 * advise_input.c: the documents `fieldstore advise` measures, read from the
 * user's file.
 *
 * The kind is decided by content, on the first non-empty line: a line
 * starting with '{' means NDJSON (one document per line; when that line is
 * a _bulk action such as {"index":{...}}, every action line is skipped and
 * the line after it is the document); anything else is an nginx/Apache
 * combined access log, each line converted by fds_logparse with
 * nginx2json's defaults (host www.zanbil.ir, seed 1, line number = the
 * line's 1-based number), so the documents are byte for byte those
 * `nginx2json FILE` gives.  A line that gives no document (an unparsable
 * log line, an NDJSON line that is not a JSON object) is counted and
 * skipped.
 *
 * The sample is FDS_ADVISE_SAMPLE_CHUNKS runs of consecutive documents,
 * each of up to sample_bytes / chunks bytes, starting at evenly spaced
 * offsets of the file (a log's vocabulary grows: its first megabytes are
 * not its last), so a file whose documents fit in sample_bytes is taken
 * whole.  Every line is read (line numbers stay exact); lines outside the
 * runs are only counted, and the input's document count is extrapolated
 * with the sample's documents per line.  A file of unknown size (a pipe)
 * gives its first sample_bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "advise.h"
#include "logparse.h"

/* nginx2json's default --seed (datasets/nginx2json.c). */
#define ADV_LOG_SEED 1u

static int docs_push(fds__adv_docs *d, const void *p, size_t n)
{
    if (d->n + 2 > d->ncap) {
        size_t nc = d->ncap ? d->ncap * 2 : 1024;
        uint32_t *l = realloc(d->lens, nc * sizeof *l);
        if (!l) return FDS_ENOMEM;
        d->lens = l;
        size_t *o = realloc(d->offs, (nc + 1) * sizeof *o);
        if (!o) return FDS_ENOMEM;
        d->offs = o;
        d->ncap = nc;
    }
    if (d->len + n > d->cap) {
        size_t nc = (d->len + n) * 2 + 4096;
        uint8_t *b = realloc(d->bytes, nc);
        if (!b) return FDS_ENOMEM;
        d->bytes = b;
        d->cap = nc;
    }
    if (n) memcpy(d->bytes + d->len, p, n);
    d->offs[d->n] = d->len;
    d->lens[d->n++] = (uint32_t)n;
    d->len += n;
    d->offs[d->n] = d->len;
    return 0;
}

void fds__adv_input_free(fds__adv_input *in)
{
    free(in->docs.bytes);
    free(in->docs.lens);
    free(in->docs.offs);
    memset(in, 0, sizeof *in);
}

static int fail(char *why, size_t cap, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return rc;
}

/* True when obj is a _bulk action line: one member named index, create,
 * update or delete whose value is an object. */
static bool bulk_action(const cJSON *obj)
{
    const cJSON *m = obj->child;
    if (!m || m->next || !cJSON_IsObject(m) || !m->string) return false;
    return !strcmp(m->string, "index") || !strcmp(m->string, "create") ||
           !strcmp(m->string, "update") || !strcmp(m->string, "delete");
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return false;
    return true;
}

int fds__adv_read(const char *path, size_t sample_bytes, fds__adv_input *in,
                  char *why, size_t why_cap)
{
    memset(in, 0, sizeof *in);
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(why, why_cap, FDS_EIO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st)) memset(&st, 0, sizeof st); /* size unknown: one run */
    if (S_ISDIR(st.st_mode)) {
        fclose(f);
        return fail(why, why_cap, FDS_EIO, "cannot read %s: it is a directory", path);
    }
    in->file_bytes = (uint64_t)st.st_size;
    char *line = NULL, *json = NULL;
    size_t lcap = 0, jcap = 0;
    ssize_t n;
    uint64_t line_no = 0, rest_lines = 0, first_bad = 0, offset = 0;
    size_t chunks = S_ISREG(st.st_mode) && st.st_size > 0 ? FDS_ADVISE_SAMPLE_CHUNKS : 1;
    size_t chunk = 0, chunk_quota = sample_bytes / chunks, chunk_start_len = 0;
    char first_why[128] = "";
    bool sampling = true, after_action = false;
    int rc = 0;
    while ((n = getline(&line, &lcap, f)) >= 0) {
        line_no++;
        uint64_t at = offset;
        offset += (uint64_t)n;
        size_t len = (size_t)n;
        /* the next run starts at its offset */
        if (!sampling && chunk + 1 < chunks &&
            at >= (uint64_t)st.st_size / chunks * (chunk + 1)) {
            chunk++;
            chunk_start_len = in->docs.len;
            sampling = true;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
        if (blank(line, len)) continue;
        if (!in->kind) {
            size_t i = 0;
            while (line[i] == ' ' || line[i] == '\t') i++;
            in->kind = line[i] == '{' ? FDS_ADV_NDJSON : FDS_ADV_LOG;
        }
        if (!sampling) {
            rest_lines++;
            continue;
        }
        if (in->kind == FDS_ADV_LOG) {
            in->lines_read++;
            fds_logrec rec;
            const char *r = NULL;
            size_t col = 0;
            size_t need = 0, out = 0;
            if (fds_logparse_line(line, len, &rec, &r, &col)) {
                if (!in->unparsable++) {
                    first_bad = line_no;
                    snprintf(first_why, sizeof first_why, "%s (byte %zu)",
                             r ? r : "unparsable", col + 1);
                }
                continue;
            }
            fds_logparse_derive(&rec, FDS_LOGPARSE_HOST_DEFAULT, ADV_LOG_SEED, line_no);
            need = fds_logparse_json_bound(&rec);
            if (need > jcap) {
                char *nj = realloc(json, need);
                if (!nj) { rc = FDS_ENOMEM; break; }
                json = nj;
                jcap = need;
            }
            if (fds_logparse_json(&rec, json, jcap, &out)) {
                in->unparsable++;
                continue;
            }
            if ((rc = docs_push(&in->docs, json, out))) break;
        } else {
            cJSON *v = cJSON_ParseWithLength(line, len);
            bool obj = v && cJSON_IsObject(v);
            if (obj && !after_action && bulk_action(v)) {
                /* an action line: the next line is its document (none for
                 * delete, which the next action line shows) */
                in->kind = FDS_ADV_BULK;
                after_action = strcmp(v->child->string, "delete") != 0;
                cJSON_Delete(v);
                continue;
            }
            after_action = false;
            cJSON_Delete(v);
            in->lines_read++;
            if (!obj) {
                if (!in->unparsable++) {
                    first_bad = line_no;
                    snprintf(first_why, sizeof first_why, "not a JSON object");
                }
                continue;
            }
            if ((rc = docs_push(&in->docs, line, len))) break;
        }
        in->last_sampled_line = line_no;
        if (in->docs.len - chunk_start_len >= chunk_quota) sampling = false;
    }
    bool rerr = ferror(f);
    fclose(f);
    free(line);
    free(json);
    if (rc) {
        fds__adv_input_free(in);
        return fail(why, why_cap, rc, "out of memory reading %s", path);
    }
    if (rerr) {
        fds__adv_input_free(in);
        return fail(why, why_cap, FDS_EIO, "read error on %s", path);
    }
    if (!in->kind) {
        fds__adv_input_free(in);
        return fail(why, why_cap, FDS_EINVAL, "%s is empty (no non-blank line)", path);
    }
    if (!in->docs.n) {
        uint64_t lines = in->lines_read;
        const char *as = in->kind == FDS_ADV_LOG
                             ? "an nginx/Apache combined log line"
                             : "a JSON object";
        fds__adv_input_free(in);
        return fail(why, why_cap, FDS_EINVAL,
                    "no document in %s: none of its %llu lines parsed as %s "
                    "(first: line %llu: %s)",
                    path, (unsigned long long)lines, as,
                    (unsigned long long)first_bad, first_why);
    }
    /* bulk: a document per action; rest_lines counts both */
    double per_line = (double)in->docs.n / (double)in->lines_read;
    if (in->kind == FDS_ADV_BULK) rest_lines /= 2;
    in->estimated = rest_lines > 0;
    in->docs_total = in->docs.n + (uint64_t)((double)rest_lines * per_line + 0.5);
    return 0;
}
