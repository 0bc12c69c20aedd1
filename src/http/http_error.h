/*
 * http_error.h: the HTTP status and Elasticsearch `error.type` of an
 * fds_err, from the one table in http_error.c (internal to src/http).
 */
#ifndef FDS_HTTP_ERROR_H
#define FDS_HTTP_ERROR_H

#include "fds_error.h"

/* The HTTP status and Elasticsearch `error.type` of an error: from its
 * kind (else its code). */
int fds__http_status(const fds_err *e);
const char *fds__http_type(const fds_err *e);
/* The Elasticsearch `type` of an fds_err_kind (an error's cause_kind);
 * "exception" for none or an unknown kind. */
const char *fds__http_kind_type(int kind);

#endif
