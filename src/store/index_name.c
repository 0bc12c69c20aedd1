/*
 * index_name.c: the names and uuids of indices: Elasticsearch's naming
 * rules for an index or an alias (MetadataCreateIndexService.
 * validateIndexOrAliasName), whether a name is taken by an index, an alias
 * or a running resize, and a new index's uuid.  Shared by index creation,
 * aliases and resizes.
 */
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wctype.h>

#include "fds_text.h"
#include "store_int.h"

/* A new index uuid as Elasticsearch's UUIDs.randomBase64UUID makes it:
 * 16 random bytes with the RFC 4122 version-4 and variant bits set, in
 * base64url without padding -- 22 characters, safe as a directory name. */
void fds__make_uuid(char out[33])
{
    uint8_t b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, b, sizeof b) != (ssize_t)sizeof b) {
        uint64_t t = (uint64_t)fds__now_ms() ^ (uint64_t)getpid() << 40;
        for (int i = 0; i < 16; i++)
            b[i] = (uint8_t)((t = t * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    }
    if (fd >= 0)
        close(fd);
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t w = 0;
    for (int i = 0; i < 16; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < 16 ? (uint32_t)b[i + 1] << 8 : 0) |
                     (i + 2 < 16 ? b[i + 2] : 0);
        int chars = i + 2 < 16 ? 4 : i + 1 < 16 ? 3 : 2;
        for (int k = 0; k < chars; k++)
            out[w++] = abc[(v >> (18 - 6 * k)) & 63];
    }
    out[w] = 0;
}

/* Whether the UTF-8 text s[0..n) has a character that lower-cases to another
 * (Elasticsearch's `!index.toLowerCase(Locale.ROOT).equals(index)`): 'É' and
 * 'Σ' as much as 'A'.  The case tables are glibc's C.UTF-8 (Unicode's simple
 * lower-case mappings); without that locale, ASCII and Latin-1 only. */
static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_locale_load(void)
{
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static bool has_upper(const char *s, size_t n)
{
    pthread_once(&utf8_once, utf8_locale_load);
    locale_t utf8 = utf8_locale;
    for (size_t i = 0; i < n;) {
        const uint8_t *u = (const uint8_t *)s + i;
        size_t k = fds_utf8_seq_len(u, n - i);
        if (!k)
            return false; /* not UTF-8: refused elsewhere */
        wint_t c = k == 1 ? u[0]
                 : k == 2 ? (wint_t)(u[0] & 0x1f) << 6 | (u[1] & 0x3f)
                 : k == 3 ? (wint_t)(u[0] & 0x0f) << 12 | (wint_t)(u[1] & 0x3f) << 6 |
                                (u[2] & 0x3f)
                          : (wint_t)(u[0] & 0x07) << 18 | (wint_t)(u[1] & 0x3f) << 12 |
                                (wint_t)(u[2] & 0x3f) << 6 | (u[3] & 0x3f);
        if (utf8 ? towlower_l(c, utf8) != c
                 : (c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7))
            return true;
        i += k;
    }
    return false;
}

int fds__check_name(const char *name, const char *what, int kind,
                    fds_err *err)
{
    size_t n = strlen(name);
    const char *why = NULL;
    char too_long[64];
    snprintf(too_long, sizeof too_long, "%s name is too long, (> %d)", what,
             FDS_INDEX_NAME_MAX);
    if (n == 0)
        why = "must not be empty";
    else if (n > FDS_INDEX_NAME_MAX)
        why = too_long;
    else if (name[0] == '_' || name[0] == '-' || name[0] == '+')
        why = "must not start with '_', '-', or '+'";
    else if (!strcmp(name, ".") || !strcmp(name, ".."))
        why = "must not be '.' or '..'";
    else
        for (const char *p = name; *p && !why; p++) {
            if (strchr("\\/*?\"<>| ,#:", *p))
                why = "must not contain the following characters [ , \", *, "
                      "\\, <, |, ,, >, /, ?, #, :]";
        }
    if (!why && has_upper(name, n))
        why = "must be lowercase";
    if (why)
        return fds_err_setk(err, FDS_EINVAL, kind, "Invalid %s name [%s], %s",
                            what, name, why);
    return 0;
}

int fds__name_taken(fds_store *s, const char *name, fds_err *err)
{
    for (size_t i = 0; i < s->naliases; i++)
        if (!strcmp(s->aliases[i].alias, name))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_INDEX_NAME,
                                "Invalid index name [%s], already exists as "
                                "alias", name);
    for (size_t i = 0; i < s->nindices; i++)
        if (!strcmp(s->indices[i]->name, name))
            return fds_err_setk(err, FDS_EEXIST, FDS_KIND_ALREADY_EXISTS,
                                "index [%s/%s] already exists", name,
                                s->indices[i]->uuid);
    for (size_t i = 0; i < s->nresizing; i++)
        if (!strcmp(s->resizing[i].name, name))
            return fds_err_setk(err, FDS_EEXIST, FDS_KIND_ALREADY_EXISTS,
                                "index [%s/%s] already exists", name,
                                s->resizing[i].uuid);
    return 0;
}
