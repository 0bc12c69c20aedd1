/*
 * node.h: who the one node says it is in its answers -- the Elasticsearch
 * version it answers as, its id and its name (internal to src/http).
 */
#ifndef FDS_HTTP_NODE_H
#define FDS_HTTP_NODE_H

/* The Elasticsearch version the node answers as (GET /, Warning headers) */
#define FDS__ES_VERSION "8.11.0"
#define FDS__NODE_ID "fds-node-0" /* the one node's id in stats and profiles */
#define FDS__NODE_NAME "fieldstore-0" /* and its name */
#define FDS__CLUSTER_NAME "fieldstore" /* its cluster's name */

#endif
