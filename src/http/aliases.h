/*
 * aliases.h: alias name matching and an index's aliases as JSON, for the
 * handlers beyond the alias endpoints (internal to src/http; aliases.c).
 */
#ifndef FDS_HTTP_ALIASES_H
#define FDS_HTTP_ALIASES_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "store.h"

/* Does the comma list `pats` (wildcards, `_all`; NULL: everything) name
 * `s`? */
bool fds__names_match(const char *pats, const char *s);
/* {alias: {...}} of index `index`, as GET /{index} shows it (caller owns). */
cJSON *fds__index_aliases_json(fds_store *st, const char *index);

#endif
