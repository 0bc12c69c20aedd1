/*
 * http_error.c: the one table from an error's kind (src/common/fds_error.h)
 * to the HTTP status and Elasticsearch `error.type` the edge answers with.
 * Lower layers never name a status or a type; they name a kind, and where
 * they name none the FDS_E* code decides.  The statuses and types are
 * Elasticsearch 8's (ElasticsearchException subclasses and their
 * RestStatus).
 */
#include "http_error.h"
#include "response.h"

typedef struct kind_row {
    int status;
    const char *type;
} kind_row;

static const kind_row KIND_TABLE[FDS_KIND_COUNT_] = {
    [FDS_KIND_NONE] = {0, NULL},
    [FDS_KIND_INVALID_ARGUMENT] = {400, "illegal_argument_exception"},
    [FDS_KIND_PARSE] = {400, "parse_exception"},
    [FDS_KIND_QUERY_PARSE] = {400, "parsing_exception"},
    [FDS_KIND_CONTENT_PARSE] = {400, "x_content_parse_exception"},
    [FDS_KIND_NUMBER_FORMAT] = {400, "number_format_exception"},
    [FDS_KIND_MAPPING_PARSE] = {400, "mapper_parsing_exception"},
    [FDS_KIND_DOCUMENT_PARSE] = {400, "document_parsing_exception"},
    [FDS_KIND_VALIDATION] = {400, "action_request_validation_exception"},
    [FDS_KIND_QUERY_SHARD] = {400, "query_shard_exception"},
    [FDS_KIND_INVALID_INDEX_NAME] = {400, "invalid_index_name_exception"},
    [FDS_KIND_INDEX_NOT_FOUND] = {404, "index_not_found_exception"},
    [FDS_KIND_NOT_FOUND] = {404, "resource_not_found_exception"},
    [FDS_KIND_DOCUMENT_MISSING] = {404, "document_missing_exception"},
    [FDS_KIND_ALREADY_EXISTS] = {400, "resource_already_exists_exception"},
    [FDS_KIND_CONFLICT] = {409, "version_conflict_engine_exception"},
    [FDS_KIND_INDEX_CLOSED] = {400, "index_closed_exception"},
    [FDS_KIND_CORRUPT] = {500, "corrupt_index_exception"},
    [FDS_KIND_CODEC] = {500, "codec_exception"},
    [FDS_KIND_IO] = {500, "io_exception"},
    [FDS_KIND_ILLEGAL_STATE] = {500, "illegal_state_exception"},
    [FDS_KIND_INTERNAL] = {500, "exception"},
    [FDS_KIND_BIND] = {500, "bind_exception"},
    [FDS_KIND_CLUSTER_BLOCK] = {429, "cluster_block_exception"},
    [FDS_KIND_TOO_MANY_CLAUSES] = {400, "too_many_nested_clauses"},
    [FDS_KIND_STRICT_DYNAMIC] = {400, "strict_dynamic_mapping_exception"},
    [FDS_KIND_INVALID_ALIAS_NAME] = {400, "invalid_alias_name_exception"},
    [FDS_KIND_ALIASES_NOT_FOUND] = {404, "aliases_not_found_exception"},
    [FDS_KIND_TEMPLATE_MISSING] = {404, "index_template_missing_exception"},
    [FDS_KIND_SOURCE_MISSING] = {400, "document_source_missing_exception"},
    [FDS_KIND_TOO_MANY_BUCKETS] = {400, "too_many_buckets_exception"},
    [FDS_KIND_INDEX_BLOCK] = {403, "cluster_block_exception"},
    [FDS_KIND_QUERY_PHASE] = {500, "query_phase_execution_exception"},
};

static const kind_row *row_of(const fds_err *e)
{
    if (e->kind > FDS_KIND_NONE && e->kind < FDS_KIND_COUNT_)
        return &KIND_TABLE[e->kind];
    return NULL;
}

int fds__http_status(const fds_err *e)
{
    const kind_row *r = row_of(e);
    if (r)
        return r->status;
    switch (e->code) {
    case FDS_ENOTFOUND: return 404;
    case FDS_EINVAL: case FDS_EPARSE: case FDS_ECLOSED: case FDS_EEXIST:
        return 400;
    case FDS_ECONFLICT: return 409;
    case FDS_ETOOBIG: return 413;
    default: return 500;
    }
}

const char *fds__http_type(const fds_err *e)
{
    const kind_row *r = row_of(e);
    if (r)
        return r->type;
    switch (e->code) {
    case FDS_EPARSE: return "parse_exception";
    case FDS_EINVAL: return "illegal_argument_exception";
    case FDS_ENOTFOUND: return "resource_not_found_exception";
    default: return "exception";
    }
}

const char *fds__http_kind_type(int kind)
{
    if (kind > FDS_KIND_NONE && kind < FDS_KIND_COUNT_)
        return KIND_TABLE[kind].type;
    return "exception";
}
