/*
 * handlers.h: every REST handler of src/http, as the route table
 * (router.c) calls them (internal to src/http).  A handler reads its
 * request and answers through `o`; it never sees the daemon.  Grouped by
 * the API area they answer, not by file.
 */
#ifndef FDS_HTTP_HANDLERS_H
#define FDS_HTTP_HANDLERS_H

#include <stdbool.h>

#include "request.h"
#include "response.h"

/* ---- node and cluster ------------------------------------------------------ */
void fds__h_root(fds_req *r, fds_resp *o);
void fds__h_cluster_health(fds_req *r, fds_resp *o);
void fds__h_allocation_explain(fds_req *r, fds_resp *o); /* allocation_explain.c */
void fds__h_cluster_settings_get(fds_req *r, fds_resp *o);
void fds__h_cluster_settings_put(fds_req *r, fds_resp *o);
void fds__h_nodes_stats(fds_req *r, fds_resp *o);
void fds__h_tasks_list(fds_req *r, fds_resp *o);
void fds__h_task_get(fds_req *r, fds_resp *o);
void fds__h_task_cancel(fds_req *r, fds_resp *o);

/* ---- index lifecycle, settings, mappings, blocks -------------------------- */
void fds__h_index_create(fds_req *r, fds_resp *o);
void fds__h_index_delete(fds_req *r, fds_resp *o);
void fds__h_index_get(fds_req *r, fds_resp *o);
void fds__h_open_close(fds_req *r, fds_resp *o, bool open);
void fds__h_settings_get(fds_req *r, fds_resp *o);
void fds__h_settings_put(fds_req *r, fds_resp *o);
void fds__h_mapping_get(fds_req *r, fds_resp *o);
void fds__h_mapping_put(fds_req *r, fds_resp *o);
void fds__h_field_mapping_get(fds_req *r, fds_resp *o);
void fds__h_index_block_put(fds_req *r, fds_resp *o);
void fds__h_refresh(fds_req *r, fds_resp *o);
void fds__h_flush(fds_req *r, fds_resp *o);
void fds__h_forcemerge(fds_req *r, fds_resp *o);
void fds__h_stats(fds_req *r, fds_resp *o);
void fds__h_disk_usage(fds_req *r, fds_resp *o); /* disk_usage.c */
enum { FDS_RESIZE_CLONE, FDS_RESIZE_SHRINK, FDS_RESIZE_SPLIT };
/* POST|PUT /{index}/_clone|_shrink|_split/{target}: `type` FDS_RESIZE_*. */
void fds__h_resize(fds_req *r, fds_resp *o, int type);

/* ---- aliases and templates ---------------------------------------------------- */
void fds__h_aliases_update(fds_req *r, fds_resp *o);
void fds__h_alias_put(fds_req *r, fds_resp *o);
void fds__h_alias_delete(fds_req *r, fds_resp *o);
void fds__h_alias_get(fds_req *r, fds_resp *o); /* and HEAD */
/* /_index_template, /_component_template and /_template (the kind from the
 * path's first segment). */
void fds__h_template_put(fds_req *r, fds_resp *o);
void fds__h_template_get(fds_req *r, fds_resp *o); /* and HEAD */
void fds__h_template_delete(fds_req *r, fds_resp *o);
void fds__h_simulate_index(fds_req *r, fds_resp *o);

/* ---- documents -------------------------------------------------------------- */
void fds__h_doc_put(fds_req *r, fds_resp *o, bool create_only);
void fds__h_doc_get(fds_req *r, fds_resp *o);
void fds__h_doc_delete(fds_req *r, fds_resp *o);
void fds__h_mget(fds_req *r, fds_resp *o);
void fds__h_update(fds_req *r, fds_resp *o);
void fds__h_bulk(fds_req *r, fds_resp *o);
void fds__h_reindex(fds_req *r, fds_resp *o);
/* POST /{index}/_delete_by_query (del) and /{index}/_update_by_query. */
void fds__h_by_query(fds_req *r, fds_resp *o, bool del);

/* ---- search ------------------------------------------------------------------ */
void fds__h_search(fds_req *r, fds_resp *o, bool count);
/* _msearch: NDJSON header and body lines, each pair a search. */
void fds__h_msearch(fds_req *r, fds_resp *o);
void fds__h_search_shards(fds_req *r, fds_resp *o);
/* _field_caps over an index expression. */
void fds__h_field_caps(fds_req *r, fds_resp *o);
void fds__h_resolve_index(fds_req *r, fds_resp *o); /* resolve_index.c */
void fds__h_nodes_info(fds_req *r, fds_resp *o);    /* nodes_info.c */
void fds__h_async_submit(fds_req *r, fds_resp *o);
void fds__h_async_get(fds_req *r, fds_resp *o);
void fds__h_async_status(fds_req *r, fds_resp *o);
void fds__h_async_delete(fds_req *r, fds_resp *o);
/* GET|POST /_search/scroll[/{id}], DELETE /_search/scroll[/{ids}],
 * POST /{index}/_pit, DELETE /_pit (search_ctx.c). */
void fds__h_scroll(fds_req *r, fds_resp *o);
void fds__h_scroll_clear(fds_req *r, fds_resp *o);
void fds__h_pit_open(fds_req *r, fds_resp *o);
void fds__h_pit_close(fds_req *r, fds_resp *o);

/* ---- _cat --------------------------------------------------------------------- */
void fds__h_cat_help(fds_req *r, fds_resp *o);
void fds__h_cat_indices(fds_req *r, fds_resp *o);
void fds__h_cat_segments(fds_req *r, fds_resp *o);
void fds__h_cat_shards(fds_req *r, fds_resp *o);
void fds__h_cat_nodes(fds_req *r, fds_resp *o);
void fds__h_cat_allocation(fds_req *r, fds_resp *o); /* disk_stats.c */
void fds__h_cat_count(fds_req *r, fds_resp *o);
void fds__h_cat_health(fds_req *r, fds_resp *o);
void fds__h_cat_aliases(fds_req *r, fds_resp *o);
void fds__h_cat_templates(fds_req *r, fds_resp *o);

#endif
