/*
 * auth.h: HTTP basic authentication against a users file (internal to
 * src/http).
 */
#ifndef FDS_HTTP_AUTH_H
#define FDS_HTTP_AUTH_H

#include <stddef.h>
#include <microhttpd.h>

#include "fds_error.h"

typedef struct fds__users fds__users;
/* Load a users file: one `name:hash` a line, `hash` a crypt(3) string such
 * as `mkpasswd -m sha-512` prints; blank lines and lines starting with `#`
 * are skipped.  Returns 0, FDS_EIO (cannot read), FDS_EINVAL (a bad line:
 * the reason names the file and line number). */
int fds__users_load(const char *path, fds__users **out, fds_err *err);
void fds__users_free(fds__users *u);
/* Check the request's basic-auth credentials (Authorization header).
 * Returns 1 (good), 0 (none or unusable: *who = ""), -1 (wrong name or
 * password: *who = the name given, truncated to who_cap). */
int fds__users_check(fds__users *u, struct MHD_Connection *conn, char *who,
                     size_t who_cap);

#endif
