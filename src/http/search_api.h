/*
 * search_api.h: the URL parameters a search takes, for the handlers that
 * take a search's parameters too (internal to src/http; search_api.c).
 */
#ifndef FDS_HTTP_SEARCH_API_H
#define FDS_HTTP_SEARCH_API_H

/* The URL parameters a search takes besides the common ones, "scroll"
 * first, NULL-terminated. */
extern const char *const *const fds__search_url_params;

#endif
