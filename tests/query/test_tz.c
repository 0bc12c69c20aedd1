/*
 * test_tz.c: named time zones (src/query/time/tz.c) and date math in them,
 * against instants worked out by hand from the zones' published rules:
 * Europe/Paris (CET +01:00, CEST +02:00 from the last Sunday of March
 * 01:00Z to the last Sunday of October 01:00Z), America/New_York (EST
 * -05:00, EDT -04:00 from the second Sunday of March 07:00Z to the first
 * Sunday of November 06:00Z) and Asia/Tehran (+03:30 all year since Iran
 * dropped daylight saving time in 2022).
 */
#include <stdio.h>
#include <string.h>

#include "time/datemath.h"
#include "fds_test.h"

#define H 3600000LL

static fds_tz zone(const char *id)
{
    fds_tz tz;
    if (fds__tz_parse(id, strlen(id), &tz)) {
        fprintf(stderr, "zone %s refused\n", id);
        fds_test_failures++;
    }
    return tz;
}

static void test_parse(void)
{
    fds_tz tz;
    ASSERT(fds__tz_parse("+03:30", 6, &tz) == 0 && !tz.id[0] &&
           tz.fixed_ms == 3 * H + H / 2);
    ASSERT(fds__tz_parse("UTC", 3, &tz) == 0 && !tz.id[0] && tz.fixed_ms == 0);
    ASSERT(fds__tz_parse("Asia/Tehran", 11, &tz) == 0 && !strcmp(tz.id, "Asia/Tehran"));
    ASSERT(fds__tz_parse("Mars/Olympus_Mons", 17, &tz) != 0);
    ASSERT(fds__tz_parse("Europe/Paris ", 13, &tz) != 0);
    ASSERT(fds__tz_parse("", 0, &tz) != 0);
}

static void test_offsets(void)
{
    fds_tz paris = zone("Europe/Paris"), ny = zone("America/New_York"),
           tehran = zone("Asia/Tehran");
    /* 2026-01-15T12:00Z and 2026-07-15T12:00Z */
    ASSERT(fds__tz_offset(&paris, 1768478400000LL) == 1 * H);
    ASSERT(fds__tz_offset(&paris, 1784116800000LL) == 2 * H);
    ASSERT(fds__tz_offset(&ny, 1768478400000LL) == -5 * H);
    ASSERT(fds__tz_offset(&ny, 1784116800000LL) == -4 * H);
    ASSERT(fds__tz_offset(&tehran, 1768478400000LL) == 3 * H + H / 2);
    ASSERT(fds__tz_offset(&tehran, 1784116800000LL) == 3 * H + H / 2);
    /* Tehran still kept DST in 2019: 2019-06-01T12:00Z was +04:30 */
    ASSERT(fds__tz_offset(&tehran, 1559390400000LL) == 4 * H + H / 2);
    /* the switch itself: 2026-03-29T01:00Z in Paris */
    ASSERT(fds__tz_offset(&paris, 1774746000000LL - 1) == 1 * H);
    ASSERT(fds__tz_offset(&paris, 1774746000000LL) == 2 * H);
}

/* Every hour of 2026 in Paris, forwards then backwards (the per-thread
 * span cache must not carry an offset over a transition): +02:00 exactly
 * in [2026-03-29T01:00Z, 2026-10-25T01:00Z), and each instant's local
 * time reads back to it (the overlap's second hour reads as the first). */
static void test_sweep(void)
{
    fds_tz paris = zone("Europe/Paris");
    const int64_t y0 = 1767225600000LL, summer = 1774746000000LL,
                  winter = 1792890000000LL; /* 2026-01-01Z and the changes */
    int bad = 0;
    for (int dir = 0; dir < 2; dir++)
        for (int64_t k = 0; k < 365 * 24; k++) {
            int64_t u = y0 + (dir ? 365 * 24 - 1 - k : k) * H + 17 * 60000;
            int64_t want = u >= summer && u < winter ? 2 * H : H;
            int64_t off = fds__tz_offset(&paris, u);
            int64_t back = fds__tz_to_utc(&paris, u + off, false);
            bool second = u >= winter && u < winter + H; /* 02:xx+01:00 */
            if (off != want || back != (second ? u - H : u))
                bad++;
        }
    ASSERT(bad == 0);
}

static void test_local(void)
{
    fds_tz paris = zone("Europe/Paris"), ny = zone("America/New_York"),
           tehran = zone("Asia/Tehran");
    /* gap: Paris 2026-03-29 02:30 does not exist; java.time moves it on by
     * the gap, to 03:30+02:00 = 01:30Z */
    ASSERT(fds__tz_to_utc(&paris, 1774751400000LL, false) == 1774747800000LL);
    ASSERT(!fds__tz_local_exists(&paris, 1774751400000LL));
    /* overlap: Paris 2026-10-25 02:30 happens twice; the earlier offset
     * (+02:00) gives 00:30Z, the later one 01:30Z */
    ASSERT(fds__tz_to_utc(&paris, 1792895400000LL, false) == 1792888200000LL);
    ASSERT(fds__tz_to_utc(&paris, 1792895400000LL, true) == 1792891800000LL);
    ASSERT(fds__tz_local_exists(&paris, 1792895400000LL));
    /* Tehran 2026-06-01 12:00 is 08:30Z */
    ASSERT(fds__tz_to_utc(&tehran, 1780315200000LL, false) == 1780302600000LL);
    /* New York 2026-03-08 02:30 (gap) is 03:30 EDT = 07:30Z; 2026-11-01
     * 01:30 (overlap) is first EDT = 05:30Z */
    ASSERT(fds__tz_to_utc(&ny, 1772937000000LL, false) == 1772955000000LL);
    ASSERT(fds__tz_to_utc(&ny, 1793496600000LL, false) == 1793511000000LL);
    int64_t t = 0;
    ASSERT(fds__tz_prev_transition(&paris, 1792929600000LL, &t) && t == 1792890000000LL);
    fds_tz fixed = {.fixed_ms = 2 * H};
    ASSERT(!fds__tz_prev_transition(&fixed, 1792929600000LL, &t));
}

static void test_math(void)
{
    fds_tz paris = zone("Europe/Paris"), tehran = zone("Asia/Tehran");
    static const struct {
        const char *s;
        bool up;
        int64_t want;
    } cases[] = {
        /* 2026-03-29 has 23 hours in Paris: 00:00+01:00 to 00:00+02:00 */
        {"2026-03-29T12:00:00||/d", false, 1774738800000LL},
        {"2026-03-29T12:00:00||/d", true, 1774821600000LL - 1},
        /* October 2026 runs from 00:00+02:00 to 00:00+01:00 */
        {"2026-10-25T12:00:00||/M", false, 1790805600000LL},
        {"2026-10-25T12:00:00||/M", true, 1793487600000LL - 1},
        /* a day added across the change keeps the wall time: 12:00+01 on
         * the 28th plus 1d is 12:00+02 on the 29th */
        {"2026-03-28T12:00:00||+1d", false, 1774785600000LL - 2 * H},
        /* a date without an offset, read in the zone, and a round up
         * without math */
        {"2026-03-29T02:30:00", false, 1774747800000LL},
        {"2026-10-25", true, 1792969200000LL - 1},
        {"2026-10-25T12:00:00Z||/d", false, 1792879200000LL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t got = 0;
        int rc = fds__date_math(cases[i].s, strlen(cases[i].s), NULL, &paris,
                                cases[i].up, 0, &got);
        if (rc || got != cases[i].want) {
            fprintf(stderr, "Europe/Paris %s%s: rc %d, %lld, want %lld\n", cases[i].s,
                    cases[i].up ? " (up)" : "", rc, (long long)got,
                    (long long)cases[i].want);
            fds_test_failures++;
        }
    }
    /* the real sample's bound: 2019-01-22T04:00:00 in Tehran (+03:30 in
     * January) is 00:30Z */
    int64_t v = 0;
    ASSERT(fds__date_math("2019-01-22T04:00:00", 19, NULL, &tehran, false, 0, &v) == 0 &&
           v == 1548117000000LL);
    /* index names: {now/d{yyyy.MM.dd|Europe/Paris}} at 2026-03-28T23:30Z
     * is the 29th in Paris */
    char name[64];
    ASSERT(fds_date_math_index_name("logs-{now/d{yyyy.MM.dd|Europe/Paris}}", 37,
                                    1774740600000LL, name, sizeof name) == 0 &&
           !strcmp(name, "logs-2026.03.29"));
}

int main(void)
{
    test_parse();
    test_offsets();
    test_local();
    test_sweep();
    test_math();
    TEST_DONE();
}
