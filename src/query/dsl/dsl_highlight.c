/*
 * dsl_highlight.c: the search body's `highlight` (and a top_hits') parsed
 * against the mapping into the tree of ast/highlight_tree.h -- the fields
 * a name or pattern resolves to, each with the global options then its
 * own, and the highlight_query parsed as a query.  fetch/highlight.c
 * renders it per hit.
 *
 * The options and their defaults are Elasticsearch 8's
 * (HighlightBuilder, AbstractHighlighterBuilder): pre_tags ["<em>"],
 * post_tags ["</em>"], fragment_size 100, number_of_fragments 5,
 * no_match_size 0, order none, encoder default, require_field_match true,
 * boundary_scanner sentence for the unified highlighter.  The unified
 * highlighter formats with one tag pair (the first), so several pre_tags
 * are accepted and only the first used; tags_schema styled is
 * `<em class="hlt">`.  type fvh is refused: it needs term vectors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ast/highlight_tree.h"
#include "dsl/dsl_parse_int.h"
#include "fds_text.h"

static const char STYLED_PRE[] = "<em class=\"hlt\">";

/* The first string of a tag array (or a string) into *out (malloc'd). */
static int parse_tags(fds__dsl_ctx *c, const cJSON *v, const char *k,
                      char **out)
{
    const cJSON *s = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, 0) : v;
    if (!cJSON_IsString(s))
        return fds__dsl_err(c->err, "[highlight] [%s] must be an array of "
                                    "strings", k);
    char *d = fds__dsl_dupn(s->valuestring, strlen(s->valuestring));
    if (!d)
        return FDS_ENOMEM;
    free(*out);
    *out = d;
    return 0;
}

static int parse_int_opt(fds__dsl_ctx *c, const cJSON *v, const char *k,
                         long lo, long hi, long *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi)
        return fds__dsl_err(c->err, "[highlight] [%s] must be a number from "
                                    "%ld to %ld", k, lo, hi);
    *out = (long)v->valuedouble;
    return 0;
}

/* One option k = v into f (global or per field).  `top`: the body of
 * highlight itself (fields, highlight_query handled by the caller). */
static int parse_opt(fds__dsl_ctx *c, const char *k, const cJSON *v,
                     fds__hl_field *f, fds_query **hq)
{
    long x = 0; /* set by parse_int_opt when it returns 0 */
    int rc = 0;
    if (!strcmp(k, "pre_tags")) {
        rc = parse_tags(c, v, k, &f->pre);
    } else if (!strcmp(k, "post_tags")) {
        rc = parse_tags(c, v, k, &f->post);
    } else if (!strcmp(k, "tags_schema")) {
        if (!cJSON_IsString(v) || (strcmp(v->valuestring, "styled") &&
                                   strcmp(v->valuestring, "default")))
            return fds__dsl_err(c->err, "Unknown tag schema [%s]",
                                cJSON_IsString(v) ? v->valuestring : "?");
        if (!strcmp(v->valuestring, "styled")) {
            free(f->pre);
            f->pre = fds__dsl_dupn(STYLED_PRE, strlen(STYLED_PRE));
            if (!f->pre)
                return FDS_ENOMEM;
        }
    } else if (!strcmp(k, "fragment_size")) {
        if (!(rc = parse_int_opt(c, v, k, 1, 2147483647L, &x)))
            f->o.fragment_size = (size_t)x;
    } else if (!strcmp(k, "number_of_fragments")) {
        if (!(rc = parse_int_opt(c, v, k, 0, 2147483647L, &x)))
            f->o.number_of_fragments = x > FDS_HL_MAX_FRAGMENTS
                                           ? FDS_HL_MAX_FRAGMENTS : (int)x;
    } else if (!strcmp(k, "no_match_size")) {
        if (!(rc = parse_int_opt(c, v, k, 0, 2147483647L, &x)))
            f->o.no_match_size = (size_t)x;
    } else if (!strcmp(k, "type")) {
        if (cJSON_IsString(v) && !strcmp(v->valuestring, "fvh"))
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "the field highlighter [fvh] needs term "
                                "vectors with positions and offsets, which "
                                "fieldstore does not index");
        if (!cJSON_IsString(v) || (strcmp(v->valuestring, "unified") &&
                                   strcmp(v->valuestring, "plain")))
            return fds_err_setk(c->err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "unknown highlighter type [%s]",
                                cJSON_IsString(v) ? v->valuestring : "?");
    } else if (!strcmp(k, "require_field_match")) {
        if (!cJSON_IsBool(v))
            return fds__dsl_err(c->err, "[highlight] [%s] must be a boolean",
                                k);
        f->require = cJSON_IsTrue(v);
    } else if (!strcmp(k, "order")) {
        if (!cJSON_IsString(v) || (strcmp(v->valuestring, "score") &&
                                   strcmp(v->valuestring, "none")))
            return fds__dsl_err(c->err, "[highlight] unknown order [%s]",
                                cJSON_IsString(v) ? v->valuestring : "?");
        f->o.order_score = !strcmp(v->valuestring, "score");
    } else if (!strcmp(k, "encoder")) {
        if (!cJSON_IsString(v) || (strcmp(v->valuestring, "html") &&
                                   strcmp(v->valuestring, "default")))
            return fds__dsl_err(c->err, "[highlight] unknown encoder [%s]",
                                cJSON_IsString(v) ? v->valuestring : "?");
        f->o.html = !strcmp(v->valuestring, "html");
    } else if (!strcmp(k, "boundary_scanner")) {
        const char *s = cJSON_IsString(v) ? v->valuestring : "";
        if (!strcasecmp(s, "sentence"))
            f->o.scanner = FDS_HL_SENTENCE;
        else if (!strcasecmp(s, "word"))
            f->o.scanner = FDS_HL_WORD;
        else if (!strcasecmp(s, "chars"))
            f->o.scanner = FDS_HL_CHARS;
        else
            return fds__dsl_err(c->err, "[highlight] unknown "
                                        "boundary_scanner [%s]", s);
    } else if (!strcmp(k, "highlight_query")) {
        fds__query_free(*hq);
        *hq = fds__dsl_query(c, v);
        if (!*hq)
            return FDS_EPARSE;
    } else if (!strcmp(k, "boundary_chars") ||
               !strcmp(k, "boundary_max_scan") ||
               !strcmp(k, "boundary_scanner_locale") ||
               !strcmp(k, "fragmenter") || !strcmp(k, "fragment_offset") ||
               !strcmp(k, "phrase_limit") || !strcmp(k, "force_source") ||
               !strcmp(k, "max_analyzed_offset") ||
               !strcmp(k, "highlight_filter") || !strcmp(k, "matched_fields")) {
        return 0; /* accepted; no effect here */
    } else {
        return fds__dsl_err(c->err, "[highlight] unknown field [%s]", k);
    }
    return rc;
}

/* Copy the global options g into a field entry for `path`. */
static int field_new(const fds__hl_field *g, const char *path, int ftype,
                     const char *src_path, fds__hl_field *out)
{
    *out = *g;
    out->hq = NULL;
    out->path = fds__dsl_dupn(path, strlen(path));
    out->src_path = fds__dsl_dupn(src_path, strlen(src_path));
    out->pre = fds__dsl_dupn(g->pre, strlen(g->pre));
    out->post = fds__dsl_dupn(g->post, strlen(g->post));
    out->ftype = ftype;
    if (!out->path || !out->src_path || !out->pre || !out->post)
        return FDS_ENOMEM;
    return 0;
}

/* Where a field's text is in _source: its own path, or for a multi-field
 * (`url.keyword`) its parent's when the parent is a text or keyword
 * field. */
static void source_path(fds__dsl_ctx *c, const char *path, char *out,
                        size_t cap)
{
    snprintf(out, cap, "%s", path);
    const char *dot = strrchr(path, '.');
    fds_field_info fi;
    if (dot && c->m && !fds_mapping_field(c->m, path, (size_t)(dot - path), &fi) &&
        (fi.type == FDS_FT_TEXT || fi.type == FDS_FT_KEYWORD))
        snprintf(out, cap, "%.*s", (int)(dot - path), path);
}

/* The fields a `fields` key `name` (a name or a pattern) resolves to,
 * each with options g then `opts` (an object, may be empty). */
static int add_fields(fds__dsl_ctx *c, fds_highlight *h, const fds__hl_field *g,
                      const char *name, const cJSON *opts)
{
    static const int types[] = {FDS_FT_TEXT, FDS_FT_KEYWORD};
    int rc = 0;
    for (size_t t = 0; !rc && c->m && t < 2; t++) {
        char **paths = NULL;
        size_t np = 0;
        rc = fds_mapping_fields_of_type(c->m, types[t], &paths, &np);
        for (size_t i = 0; i < np; i++) {
            bool hit = strchr(name, '*') ? fds_glob_match(name, paths[i],
                                                          strlen(paths[i]))
                                         : !strcmp(name, paths[i]);
            bool dup = false;
            for (size_t k = 0; hit && k < h->nf; k++)
                dup |= !strcmp(h->f[k].path, paths[i]);
            if (!rc && hit && !dup) {
                if (h->nf >= FDS_HL_MAX_FIELDS) {
                    rc = fds_err_setk(c->err, FDS_ETOOBIG,
                                      FDS_KIND_INVALID_ARGUMENT,
                                      "[highlight] more than %d fields",
                                      FDS_HL_MAX_FIELDS);
                } else {
                    fds__hl_field *nf = realloc(h->f, (h->nf + 1) * sizeof *nf);
                    if (!nf) {
                        rc = FDS_ENOMEM;
                    } else {
                        h->f = nf;
                        char sp[FDS_FIELD_PATH_MAX];
                        source_path(c, paths[i], sp, sizeof sp);
                        fds__hl_field *f = &h->f[h->nf++];
                        rc = field_new(g, paths[i], types[t], sp, f);
                        const cJSON *it;
                        cJSON_ArrayForEach(it, opts) {
                            if (!rc)
                                rc = parse_opt(c, it->string, it, f, &f->hq);
                        }
                        f->o.pre = f->pre;
                        f->o.post = f->post;
                    }
                }
            }
            free(paths[i]);
        }
        free(paths);
    }
    return rc;
}

int fds__dsl_highlight(fds__dsl_ctx *c, const cJSON *j, fds_highlight **out)
{
    if (!cJSON_IsObject(j))
        return fds__dsl_err(c->err, "[highlight] expected an object, found "
                                    "[%s]", fds__dsl_jtype(j));
    fds_highlight *h = calloc(1, sizeof *h);
    if (!h)
        return FDS_ENOMEM;
    h->m = c->m;
    fds__hl_field g;
    memset(&g, 0, sizeof g);
    g.o.fragment_size = 100;
    g.o.number_of_fragments = 5;
    g.require = true;
    g.pre = fds__dsl_dupn("<em>", 4);
    g.post = fds__dsl_dupn("</em>", 5);
    int rc = g.pre && g.post ? 0 : FDS_ENOMEM;
    const cJSON *fields = NULL, *it;
    cJSON_ArrayForEach(it, j) {
        if (rc)
            break;
        if (!strcmp(it->string, "fields"))
            fields = it;
        else
            rc = parse_opt(c, it->string, it, &g, &h->hq);
    }
    if (!rc && fields) {
        if (cJSON_IsObject(fields)) {
            cJSON_ArrayForEach(it, fields) {
                if (rc)
                    break;
                if (!cJSON_IsObject(it))
                    rc = fds__dsl_err(c->err, "[highlight] field [%s] options "
                                              "must be an object", it->string);
                else
                    rc = add_fields(c, h, &g, it->string, it);
            }
        } else if (cJSON_IsArray(fields)) {
            /* [{"name": {...}}, ...]: the ordered form */
            cJSON_ArrayForEach(it, fields) {
                if (rc)
                    break;
                if (!cJSON_IsObject(it) || !it->child ||
                    !cJSON_IsObject(it->child))
                    rc = fds__dsl_err(c->err, "[highlight] [fields] entries "
                                              "must be objects");
                else
                    rc = add_fields(c, h, &g, it->child->string, it->child);
            }
        } else {
            rc = fds__dsl_err(c->err, "[highlight] [fields] must be an object");
        }
    }
    free(g.pre);
    free(g.post);
    if (rc == FDS_ENOMEM)
        fds_err_setk(c->err, rc, FDS_KIND_INTERNAL, "out of memory");
    if (rc) {
        fds_highlight_free(h);
        return rc;
    }
    fds_highlight_free(*out);
    *out = h;
    return 0;
}
