/*
 * router.h: from a request's path and method to its handler (router.c),
 * for the daemon (server.c) (internal to src/http).
 */
#ifndef FDS_HTTP_ROUTER_H
#define FDS_HTTP_ROUTER_H

#include <stdbool.h>

#include "request.h"
#include "response.h"

/* Answer `r` into `o`: the route that matches its path and method checks
 * its URL parameters and runs its handler; with none, Elasticsearch's
 * RestController answers (OPTIONS: 200 and Allow; other methods of the
 * path: 405; no such path: fds__route_no_handler). */
void fds__route(fds_req *r, fds_resp *o);
/* Does `r`'s route write documents or build segments (and so run on a
 * write thread rather than on the HTTP thread)?  False with no route. */
bool fds__route_writes(const fds_req *r);
/* Elasticsearch's answer for a path no endpoint takes: 400 and
 * {"error":"no handler found for uri [...] and method [...]"}. */
void fds__route_no_handler(fds_req *r, fds_resp *o);

#endif
