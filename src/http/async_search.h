/*
 * async_search.h: the async search service's start and stop, for the
 * daemon (internal to src/http; its handlers are in handlers.h).
 * Searches run on a thread of their own, their answers kept in memory
 * for keep_alive.
 */
#ifndef FDS_HTTP_ASYNC_SEARCH_H
#define FDS_HTTP_ASYNC_SEARCH_H

/* Start/stop with the server: 0 or FDS_ENOMEM; stopping waits for the
 * running searches and frees every stored answer. */
int fds__async_start(void);
void fds__async_stop(void);

#endif
