/*
 * highlight_tree.h: the parsed `highlight` of a search (Elasticsearch 8's
 * HighlightBuilder) -- the fields it resolved to against the mapping, each
 * with its fragment options, tags and highlight_query.  The DSL builds it
 * (dsl/dsl_highlight.c), the fetch phase reads it per hit
 * (fetch/highlight.c) and ast.c frees it, as it frees the rest of the
 * request.
 */
#ifndef FDS_HIGHLIGHT_TREE_H
#define FDS_HIGHLIGHT_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "ast/search_request.h"

/* Bounds of a request's highlight. */
#define FDS_HL_MAX_FRAGMENTS 100         /* number_of_fragments at most */
#define FDS_HL_MAX_FIELDS 256            /* fields a request highlights */

/* Fragment options (Elasticsearch's defaults in brackets). */
typedef struct fds_hl_frag_opts {
    const char *pre, *post;   /* ["<em>"], ["</em>"] */
    size_t fragment_size;     /* [100] bytes */
    int number_of_fragments;  /* [5]; 0 = the whole text */
    size_t no_match_size;     /* [0] */
    bool order_score;         /* order: score */
    bool html;                /* encoder: html */
    int scanner;              /* FDS_HL_SENTENCE [unified], _WORD, _CHARS */
} fds_hl_frag_opts;

enum { FDS_HL_SENTENCE, FDS_HL_WORD, FDS_HL_CHARS };

/* One field highlighted, with its options. */
typedef struct fds__hl_field {
    char *path;     /* the field highlighted (its name in the answer) */
    char *src_path; /* where its text is in _source (a multi-field's parent) */
    int ftype;
    fds_hl_frag_opts o;
    char *pre, *post; /* owned tags (o.pre/o.post point here) */
    bool require;     /* require_field_match */
    fds_query *hq;    /* highlight_query of the field (owned), or NULL */
} fds__hl_field;

struct fds_highlight {
    fds__hl_field *f;
    size_t nf;
    fds_query *hq; /* the top-level highlight_query (owned), or NULL */
    /* the mapping parsed against (may be NULL): a source is read as
     * indexing reads it, copy_to targets and null_values included and
     * disabled objects left out, as Elasticsearch's value fetchers read
     * a field's source paths */
    const fds_mapping *m;
};

typedef struct fds_highlight fds_highlight;

/* Free a parsed highlight, its fields and queries (NULL is a no-op). */
void fds_highlight_free(fds_highlight *h);

#endif
