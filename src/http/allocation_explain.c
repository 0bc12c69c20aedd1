/*
 * allocation_explain.c: GET|POST _cluster/allocation/explain, why a shard
 * copy is where it is, in Elasticsearch 8's shape
 * (ClusterAllocationExplanation / AllocateUnassignedDecision).
 *
 * One node holds every primary; a replica can never be assigned (a second
 * copy may not share the node: the `same_shard` decider), and a primary of
 * a failed index (a damaged segment, fds_index_failure) is unassigned with
 * ALLOCATION_FAILED and can_allocate `no_valid_shard_copy`, as
 * Elasticsearch explains a primary whose only copy is corrupt.  Without a
 * body the first unassigned copy is explained (a failed primary before a
 * replica), with Elasticsearch's note; with none, its 400.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "admin_int.h"
#include "handlers.h"
#include "http_error.h"
#include "node.h"

/* Elasticsearch 8's texts (ClusterAllocationExplanation,
 * TransportClusterAllocationExplainAction, Explanations.Allocation). */
#define NOTE_NO_SHARD                                                          \
    "No shard was specified in the explain API request, so this response "    \
    "explains a randomly chosen unassigned shard. There may be other "        \
    "unassigned shards in this cluster which cannot be assigned for "         \
    "different reasons. It may not be possible to assign this shard until "   \
    "one of the other shards is assigned correctly. To explain the "          \
    "allocation of other shards (whether assigned or unassigned) you must "   \
    "specify the target shard in the request to this API."
#define NONE_UNASSIGNED                                                        \
    "No shard was specified in the request which means the response should "  \
    "explain a randomly-chosen unassigned shard, but there are no unassigned " \
    "shards in this cluster. To explain the allocation of an assigned shard " \
    "you must specify the target shard in the request."
#define ALL_COPIES_INVALID                                                     \
    "Elasticsearch can't allocate this shard because all the copies of its "  \
    "data in the cluster are stale or corrupt. Elasticsearch will allocate "  \
    "this shard when a node containing a good copy of its data joins the "    \
    "cluster. If no such node is available, restore this index from a "       \
    "recent snapshot."
#define ALLOCATION_NOT_ALLOWED                                                 \
    "Elasticsearch isn't allowed to allocate this shard to any of the nodes " \
    "in the cluster. Choose a node to which you expect this shard to be "     \
    "allocated, find this node in the node-by-node explanation, and address " \
    "the reasons which prevent Elasticsearch from allocating this shard "     \
    "there."
#define REBALANCE_NONE                                                         \
    "Elasticsearch cannot rebalance this shard to another node since there "  \
    "is no node to which allocation is permitted which would improve the "    \
    "cluster balance. If you expect this shard to be rebalanced to another "  \
    "node, find this node in the node-by-node explanation and address the "   \
    "reasons which prevent Elasticsearch from rebalancing this shard there."

/* The one node as the explanation names it. */
static cJSON *node_json(void)
{
    cJSON *n = cJSON_CreateObject();
    cJSON_AddStringToObject(n, "id", FDS__NODE_ID);
    cJSON_AddStringToObject(n, "name", FDS__NODE_NAME);
    cJSON_AddStringToObject(n, "transport_address", "127.0.0.1:9300");
    return n;
}

/* One node's decision with one decider's NO. */
static cJSON *node_decision(const char *decider, const char *why)
{
    cJSON *a = cJSON_CreateArray(), *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "node_id", FDS__NODE_ID);
    cJSON_AddStringToObject(d, "node_name", FDS__NODE_NAME);
    cJSON_AddStringToObject(d, "transport_address", "127.0.0.1:9300");
    cJSON_AddStringToObject(d, "node_decision", "no");
    cJSON *ds = cJSON_AddArrayToObject(d, "deciders"), *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "decider", decider);
    cJSON_AddStringToObject(x, "decision", "NO");
    cJSON_AddStringToObject(x, "explanation", why);
    cJSON_AddItemToArray(ds, x);
    cJSON_AddItemToArray(a, d);
    return a;
}

/* The explanation of copy (shard, primary) of ix. */
static cJSON *explain(fds_index *ix, unsigned shard, bool primary, bool picked)
{
    cJSON *j = cJSON_CreateObject();
    if (picked)
        cJSON_AddStringToObject(j, "note", NOTE_NO_SHARD);
    cJSON_AddStringToObject(j, "index", fds_index_name(ix));
    cJSON_AddNumberToObject(j, "shard", shard);
    cJSON_AddBoolToObject(j, "primary", primary);
    const char *failure = fds_index_failure(ix);
    if (primary && !failure) {
        cJSON_AddStringToObject(j, "current_state", "started");
        cJSON *n = node_json();
        cJSON_AddNumberToObject(n, "weight_ranking", 1);
        cJSON_AddItemToObject(j, "current_node", n);
        cJSON_AddStringToObject(j, "can_remain_on_current_node", "yes");
        cJSON_AddStringToObject(j, "can_rebalance_cluster", "yes");
        cJSON_AddStringToObject(j, "can_rebalance_to_other_node", "no");
        cJSON_AddStringToObject(j, "rebalance_explanation", REBALANCE_NONE);
        return j;
    }
    cJSON_AddStringToObject(j, "current_state", "unassigned");
    cJSON *u = cJSON_AddObjectToObject(j, "unassigned_info");
    char buf[FDS_ERR_REASON_MAX + 256];
    if (primary) {
        cJSON_AddStringToObject(u, "reason", "ALLOCATION_FAILED");
        cJSON_AddNumberToObject(u, "failed_allocation_attempts", 1);
        snprintf(buf, sizeof buf, "failed shard on node [%s]: shard failure, "
                 "reason [corrupt index], failure corrupt_index_exception: %s; "
                 "repair: stop the node and run `fieldstore check-index --data "
                 "DIR %s --exorcise`", FDS__NODE_ID, failure, fds_index_name(ix));
        cJSON_AddStringToObject(u, "details", buf);
        cJSON_AddStringToObject(u, "last_allocation_status", "no_valid_shard_copy");
        cJSON_AddStringToObject(j, "can_allocate", "no_valid_shard_copy");
        cJSON_AddStringToObject(j, "allocate_explanation", ALL_COPIES_INVALID);
        cJSON *ds = cJSON_AddArrayToObject(j, "node_allocation_decisions");
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "node_id", FDS__NODE_ID);
        cJSON_AddStringToObject(d, "node_name", FDS__NODE_NAME);
        cJSON_AddStringToObject(d, "transport_address", "127.0.0.1:9300");
        cJSON_AddStringToObject(d, "node_decision", "no");
        cJSON *st = cJSON_AddObjectToObject(d, "store");
        cJSON_AddBoolToObject(st, "in_sync", 1);
        cJSON *ex = cJSON_AddObjectToObject(st, "store_exception");
        cJSON_AddStringToObject(ex, "type", "corrupt_index_exception");
        cJSON_AddStringToObject(ex, "reason", failure);
        cJSON_AddItemToArray(ds, d);
        return j;
    }
    cJSON_AddStringToObject(u, "reason", "INDEX_CREATED");
    cJSON_AddStringToObject(u, "last_allocation_status", "no_attempt");
    cJSON_AddStringToObject(j, "can_allocate", "no");
    cJSON_AddStringToObject(j, "allocate_explanation", ALLOCATION_NOT_ALLOWED);
    if (failure)
        cJSON_AddItemToObject(j, "node_allocation_decisions",
                              node_decision("replica_after_primary_active",
                                            "primary shard for this replica "
                                            "is not yet active"));
    else {
        snprintf(buf, sizeof buf, "a copy of this shard is already allocated "
                 "to this node [[%s][%u], node[%s], [P], s[STARTED]]",
                 fds_index_name(ix), shard, FDS__NODE_ID);
        cJSON_AddItemToObject(j, "node_allocation_decisions",
                              node_decision("same_shard", buf));
    }
    return j;
}

/* The first unassigned copy of the node's indices: a failed index's
 * primary before any replica.  0 with *ix (a reference), or -1. */
static int first_unassigned(fds_store *st, fds_index **out, bool *primary)
{
    char **names = NULL;
    size_t n = 0;
    *out = NULL;
    if (fds_store_list_indices(st, &names, &n))
        return -1;
    fds_index *replica = NULL;
    for (size_t i = 0; i < n; i++) {
        fds_index *ix = NULL;
        if (!*out && !fds_store_get_index(st, names[i], &ix, NULL)) {
            fds_index_settings set;
            fds_index_get_settings(ix, &set);
            if (fds_index_failure(ix))
                *out = ix, ix = NULL;
            else if (set.number_of_replicas && !replica)
                replica = ix, ix = NULL;
            fds_index_release(ix);
        }
        free(names[i]);
    }
    free(names);
    *primary = *out != NULL;
    if (*out)
        fds_index_release(replica);
    else
        *out = replica;
    return *out ? 0 : -1;
}

void fds__h_allocation_explain(fds_req *r, fds_resp *o)
{
    static const char *const params[] = {NULL};
    if (!fds__req_check_params(r, o, params))
        return;
    cJSON *b = r->body_len ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
    if (r->body_len && !cJSON_IsObject(b)) {
        cJSON_Delete(b);
        return fds__resp_errorf(o, 400, "parse_exception",
                               "request body must be a JSON object");
    }
    const cJSON *jx = cJSON_GetObjectItemCaseSensitive(b, "index");
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(b, "shard");
    const cJSON *jp = cJSON_GetObjectItemCaseSensitive(b, "primary");
    const cJSON *it;
    cJSON_ArrayForEach(it, b) {
        if (strcmp(it->string, "index") && strcmp(it->string, "shard") &&
            strcmp(it->string, "primary")) { /* current_node: one node */
            fds__resp_errorf(o, 400, "x_content_parse_exception",
                             "[cluster/allocation/explain] unknown field [%s]",
                             it->string);
            cJSON_Delete(b);
            return;
        }
    }
    fds_index *ix = NULL;
    bool primary = true, picked = !jx && !js && !jp;
    unsigned shard = 0;
    if (picked) {
        cJSON_Delete(b);
        if (first_unassigned(r->store, &ix, &primary))
            return fds__resp_errorf(o, 400, "illegal_argument_exception", "%s",
                                   NONE_UNASSIGNED);
    } else {
        const char *miss = !cJSON_IsString(jx) ? "index"
                           : !cJSON_IsNumber(js) || js->valuedouble < 0 ? "shard"
                           : !cJSON_IsBool(jp) ? "primary" : NULL;
        if (miss) {
            cJSON_Delete(b);
            return fds__resp_errorf(o, 400, "action_request_validation_exception",
                                   "Validation Failed: 1: %s must be specified;",
                                   miss);
        }
        fds_err e;
        fds_err_clear(&e);
        primary = cJSON_IsTrue(jp);
        double sv = js->valuedouble;
        int rc = fds_store_get_index(r->store, jx->valuestring, &ix, &e);
        cJSON_Delete(b);
        if (rc)
            return fds__resp_error(o, &e);
        fds_index_settings set;
        fds_index_get_settings(ix, &set);
        if (sv >= fds_index_nshards(ix) || (!primary && !set.number_of_replicas)) {
            fds__resp_errorf(o, 400, "illegal_argument_exception",
                             "unable to find any shards to explain [index [%s], "
                             "shard [%.0f], primary [%s]] in the routing table",
                             fds_index_name(ix), sv, primary ? "true" : "false");
            fds_index_release(ix);
            return;
        }
        shard = (unsigned)sv;
    }
    cJSON *j = explain(ix, shard, primary, picked);
    fds_index_release(ix);
    fds__resp_json(o, 200, j);
}
