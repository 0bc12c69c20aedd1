/*
 * auth.c: HTTP basic authentication against a users file, the way
 * Elasticsearch's file realm does it (`config/users`: `name:hash` lines).
 *
 * Hashes are crypt(3) strings, checked with libxcrypt's crypt_r(); make one
 * with `mkpasswd -m sha-512` (Debian package whois; it also hashes an empty
 * password, which `openssl passwd -6` cannot).  An empty password is a
 * password like any other (`curl -u 'admin:'`).
 *
 * SHA-512 crypt costs milliseconds by design (5000 rounds), too much for
 * every request of a keep-alive client, so the last password that verified
 * for each user is remembered (in this process's memory only, like
 * Elasticsearch's realm cache) and compared in constant time.
 */
#include <crypt.h>
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"

#define FDS_USERS_LINE_MAX 4096 /* longest line of a users file */

typedef struct fds__user {
    char *name;
    char *hash;
    char *cached; /* last password that verified, or NULL */
} fds__user;

struct fds__users {
    fds__user *v;
    size_t n;
    pthread_mutex_t mu;
};

void fds__users_free(fds__users *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++) {
        free(u->v[i].name);
        free(u->v[i].hash);
        free(u->v[i].cached);
    }
    free(u->v);
    pthread_mutex_destroy(&u->mu);
    free(u);
}

/* crypt_r of `pw` with `setting`, into a malloc'd copy (NULL on failure or
 * on libxcrypt's "*" failure tokens). */
static char *hash_of(const char *pw, const char *setting)
{
    struct crypt_data *cd = calloc(1, sizeof *cd);
    if (!cd)
        return NULL;
    const char *h = crypt_r(pw, setting, cd);
    char *out = h && h[0] != '*' ? strdup(h) : NULL;
    free(cd);
    return out;
}

static bool same(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = la != lb;
    for (size_t i = 0; i < la && i < lb; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

static int bad_line(fds_err *err, const char *path, unsigned line, const char *why)
{
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                       "users file [%s] line %u: %s", path, line, why);
}

int fds__users_load(const char *path, fds__users **out, fds_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fds_err_setk(err, FDS_EIO, FDS_KIND_IO,
                           "cannot read users file [%s]: %s", path, strerror(errno));
    fds__users *u = calloc(1, sizeof *u);
    if (!u) {
        fclose(f);
        return FDS_ENOMEM;
    }
    pthread_mutex_init(&u->mu, NULL);
    char line[FDS_USERS_LINE_MAX];
    unsigned no = 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        no++;
        size_t l = strlen(line);
        if (l && line[l - 1] != '\n' && !feof(f)) {
            rc = bad_line(err, path, no, "line too long");
            break;
        }
        while (l && (line[l - 1] == '\n' || line[l - 1] == '\r'))
            line[--l] = 0;
        if (!l || line[0] == '#')
            continue;
        char *colon = strchr(line, ':');
        if (!colon || colon == line) {
            rc = bad_line(err, path, no, "expected name:hash");
            break;
        }
        *colon = 0;
        const char *hash = colon + 1;
        if (strpbrk(line, " \t") || hash[0] != '$' || strpbrk(hash, " \t")) {
            rc = bad_line(err, path, no,
                          "expected name:hash with a crypt(3) hash "
                          "(make one with: mkpasswd -m sha-512)");
            break;
        }
        char *probe = hash_of("", hash);
        if (!probe || strncmp(probe, hash, 3)) {
            free(probe);
            rc = bad_line(err, path, no, "the hash is not one crypt(3) understands");
            break;
        }
        free(probe);
        for (size_t i = 0; i < u->n; i++)
            if (!strcmp(u->v[i].name, line)) {
                rc = bad_line(err, path, no, "user listed twice");
                break;
            }
        if (rc)
            break;
        fds__user *v = realloc(u->v, (u->n + 1) * sizeof *v);
        if (!v) {
            rc = FDS_ENOMEM;
            break;
        }
        u->v = v;
        v[u->n] = (fds__user){strdup(line), strdup(hash), NULL};
        if (!v[u->n].name || !v[u->n].hash)
            rc = FDS_ENOMEM;
        u->n++;
    }
    fclose(f);
    if (!rc && !u->n)
        rc = bad_line(err, path, no, "no users");
    if (rc) {
        fds__users_free(u);
        return rc;
    }
    *out = u;
    return 0;
}

int fds__users_check(fds__users *u, struct MHD_Connection *conn, char *who,
                     size_t who_cap)
{
    char *pass = NULL;
    char *name = MHD_basic_auth_get_username_password(conn, &pass);
    snprintf(who, who_cap, "%s", name ? name : "");
    if (!name || !pass) {
        MHD_free(name);
        MHD_free(pass);
        return 0;
    }
    int ok = -1;
    for (size_t i = 0; i < u->n; i++) {
        fds__user *v = &u->v[i];
        if (strcmp(v->name, name))
            continue;
        pthread_mutex_lock(&u->mu);
        bool hit = v->cached && same(v->cached, pass);
        pthread_mutex_unlock(&u->mu);
        if (hit) {
            ok = 1;
            break;
        }
        char *h = hash_of(pass, v->hash);
        if (h && same(h, v->hash)) {
            ok = 1;
            char *c = strdup(pass);
            pthread_mutex_lock(&u->mu);
            free(v->cached);
            v->cached = c;
            pthread_mutex_unlock(&u->mu);
        }
        free(h);
        break;
    }
    MHD_free(name);
    MHD_free(pass);
    return ok;
}
