/*
 * nodes_info.c: `GET /_nodes`, `/_nodes/{node_id}`, `/_nodes/{metrics}` and
 * `/_nodes/{node_id}/{metrics}` (Elasticsearch's nodes info API), which
 * Kibana polls before it starts and every few seconds after
 * (core's elasticsearch/version_check/ensure_es_version.ts:
 * `nodes.info` with filter_path nodes.*.version, nodes.*.http.publish_address,
 * nodes.*.ip, node_id _all and metric _none in 8.x), to check that every
 * node runs a version it supports.
 *
 * The one node answers with its name, address, version and build, its
 * roles, and the metric sections it has: `http` (the address the request
 * reached it on, from the connection's socket), `os` (name, arch,
 * processors) and `process` (its pid).  A node filter that names another
 * node selects none ({"nodes": {}}), as Elasticsearch's does; a metric
 * Elasticsearch has and this node does not keep (jvm, thread_pool, ...)
 * is a 400 naming it.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cJSON.h>

#include "handlers.h"
#include "node.h"
#include "request.h"
#include "response.h"

/* Room for "[addr]:port" of an IPv6 address. */
#define ADDR_TEXT_MAX (INET6_ADDRSTRLEN + 8)

/* Elasticsearch's node info metrics; the first three are kept here. */
static const char *const INFO_METRICS[] = {
    "http", "os", "process", "settings", "jvm", "thread_pool", "transport",
    "plugins", "ingest", "aggregations", "indices", "remote_cluster_server",
    NULL};
#define INFO_METRICS_KEPT 3

static bool is_metric(const char *m, size_t n)
{
    for (size_t i = 0; INFO_METRICS[i]; i++)
        if (strlen(INFO_METRICS[i]) == n && !memcmp(INFO_METRICS[i], m, n))
            return true;
    return (n == 4 && !memcmp(m, "_all", 4)) || (n == 5 && !memcmp(m, "_none", 5));
}

/* Is the whole comma list made of metric names (Elasticsearch's
 * RestNodesInfoAction reads /_nodes/{x} as metrics then)? */
static bool all_metrics(const char *list)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (!is_metric(p, n))
            return false;
        p += n + (p[n] == ',');
    }
    return *list != 0;
}

/* Does the node filter `ids` (NULL: all) take this node? */
static bool takes_node(const char *ids)
{
    if (!ids)
        return true;
    for (const char *p = ids; *p;) {
        size_t n = strcspn(p, ",");
        static const char *const ME[] = {"_all", "_local", "_master", "*",
                                         FDS__NODE_ID, FDS__NODE_NAME, NULL};
        for (size_t i = 0; ME[i]; i++)
            if (strlen(ME[i]) == n && !memcmp(ME[i], p, n))
                return true;
        p += n + (p[n] == ',');
    }
    return false;
}

/* Does `list` (NULL: all) ask for metric `m`? */
static bool wants(const char *list, const char *m)
{
    if (!list)
        return true;
    size_t ml = strlen(m);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if ((n == ml && !memcmp(p, m, n)) || (n == 4 && !memcmp(p, "_all", 4)))
            return true;
        p += n + (p[n] == ',');
    }
    return false;
}

/* The local address the request came in on as ip and "ip:port". */
static void local_addr(fds_req *r, char *ip, size_t ipcap, char *addr)
{
    snprintf(ip, ipcap, "127.0.0.1");
    snprintf(addr, ADDR_TEXT_MAX, "127.0.0.1:%d", 9200);
    const union MHD_ConnectionInfo *ci =
        r->conn ? MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD)
                : NULL;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (!ci || getsockname(ci->connect_fd, (struct sockaddr *)&ss, &sl))
        return;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a->sin_addr, ip, (socklen_t)ipcap);
        snprintf(addr, ADDR_TEXT_MAX, "%s:%u", ip, ntohs(a->sin_port));
    } else if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, (socklen_t)ipcap);
        snprintf(addr, ADDR_TEXT_MAX, "[%s]:%u", ip, ntohs(a->sin6_port));
    }
}

void fds__h_nodes_info(fds_req *r, fds_resp *o)
{
    static const char *const PARAMS[] = {"timeout", "flat_settings", NULL};
    if (!fds__req_check_params(r, o, PARAMS))
        return;
    /* /_nodes, /_nodes/{ids or metrics}, /_nodes/{ids}/{metrics} */
    const char *ids = NULL, *metrics = NULL;
    if (r->nseg == 2) {
        if (all_metrics(r->seg[1]))
            metrics = r->seg[1];
        else
            ids = r->seg[1];
    } else if (r->nseg == 3) {
        ids = r->seg[1];
        metrics = r->seg[2];
    }
    for (const char *p = metrics ? metrics : ""; *p;) {
        size_t n = strcspn(p, ",");
        if (!is_metric(p, n))
            return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                    "request [%s] contains unrecognized metric: [%.*s]",
                                    r->url, (int)n, p);
        for (size_t i = INFO_METRICS_KEPT; INFO_METRICS[i]; i++)
            if (strlen(INFO_METRICS[i]) == n && !memcmp(INFO_METRICS[i], p, n))
                return fds__resp_errorf(o, 400, "illegal_argument_exception",
                                        "node info metric [%.*s] is not kept by "
                                        "this node: only [http], [os] and "
                                        "[process] are", (int)n, p);
        p += n + (p[n] == ',');
    }
    if (metrics && !strcmp(metrics, "_none"))
        metrics = ""; /* the node alone, no section */
    bool me = takes_node(ids);
    char ip[INET6_ADDRSTRLEN], addr[ADDR_TEXT_MAX];
    local_addr(r, ip, sizeof ip, addr);
    cJSON *j = cJSON_CreateObject();
    cJSON *nn = cJSON_AddObjectToObject(j, "_nodes");
    cJSON_AddNumberToObject(nn, "total", me);
    cJSON_AddNumberToObject(nn, "successful", me);
    cJSON_AddNumberToObject(nn, "failed", 0);
    cJSON_AddStringToObject(j, "cluster_name", FDS__CLUSTER_NAME);
    cJSON *nodes = cJSON_AddObjectToObject(j, "nodes");
    cJSON *n = me ? cJSON_AddObjectToObject(nodes, FDS__NODE_ID) : NULL;
    if (n) {
        cJSON_AddStringToObject(n, "name", FDS__NODE_NAME);
        cJSON_AddStringToObject(n, "transport_address", addr);
        cJSON_AddStringToObject(n, "host", ip);
        cJSON_AddStringToObject(n, "ip", ip);
        cJSON_AddStringToObject(n, "version", FDS__ES_VERSION);
        cJSON_AddStringToObject(n, "build_flavor", "default");
        cJSON_AddStringToObject(n, "build_type", "tar");
        cJSON_AddStringToObject(n, "build_hash", FDS__NODE_NAME);
        cJSON *roles = cJSON_AddArrayToObject(n, "roles");
        static const char *const ROLES[] = {"data", "ingest", "master"};
        for (size_t i = 0; roles && i < sizeof ROLES / sizeof *ROLES; i++)
            cJSON_AddItemToArray(roles, cJSON_CreateString(ROLES[i]));
        cJSON_AddObjectToObject(n, "attributes");
    }
    if (n && wants(metrics, "http")) {
        cJSON *h = cJSON_AddObjectToObject(n, "http");
        cJSON *b = cJSON_AddArrayToObject(h, "bound_address");
        cJSON_AddItemToArray(b, cJSON_CreateString(addr));
        cJSON_AddStringToObject(h, "publish_address", addr);
    }
    if (n && wants(metrics, "os")) {
        struct utsname u;
        bool un = uname(&u) == 0;
        cJSON *os = cJSON_AddObjectToObject(n, "os");
        cJSON_AddStringToObject(os, "name", un ? u.sysname : "Linux");
        cJSON_AddStringToObject(os, "arch", un ? u.machine : "");
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        cJSON_AddNumberToObject(os, "available_processors", cpus > 0 ? (double)cpus : 1);
        cJSON_AddNumberToObject(os, "allocated_processors", cpus > 0 ? (double)cpus : 1);
    }
    if (n && wants(metrics, "process")) {
        cJSON *p = cJSON_AddObjectToObject(n, "process");
        cJSON_AddNumberToObject(p, "id", (double)getpid());
        cJSON_AddBoolToObject(p, "mlockall", false);
    }
    fds__resp_json(o, 200, j);
}
