/*
 * term_dict.c: where a run of a field's term dictionary starts -- the first
 * ordinal whose term is at or after a key.  The dictionary is sorted by
 * bytes, so every prefix is a range of ordinals: the walks of fuzzy,
 * prefix/wildcard/regexp and match_phrase_prefix all start here.
 */
#include <string.h>

#include "exec/search_int.h"

uint32_t fds__ord_lower_bound(const fds_sfield *f, const char *key, size_t n)
{
    uint32_t lo = 0, hi = f->nterms;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, tl;
        const char *t = fds__sidx_term_str(f, mid, &tl);
        int c = memcmp(t, key, tl < n ? tl : n);
        if (c < 0 || (c == 0 && tl < n))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
