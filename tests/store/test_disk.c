/*
 * test_disk.c: the disk watermark settings (src/store/disk.h) parsed and
 * checked as Elasticsearch 8's DiskThresholdSettings does: percentages,
 * ratios and byte sizes, the max_headroom defaults that apply only to a
 * default watermark, one kind for all three, their order, the shortest
 * cluster.info.update.interval, and the free-space threshold each gives on
 * a small and a large disk.
 */
#include <stdint.h>
#include <string.h>

#include "disk.h"
#include "fds_test.h"

#define GB (1024.0 * 1024 * 1024)

/* Parse with values[k] = v for the given (k, v) pairs, others default. */
static int parse2(int k1, const char *v1, int k2, const char *v2,
                  fds_disk_settings *d, fds_err *e)
{
    const char *v[FDS_DISK_NSETTINGS] = {0};
    if (k1 >= 0)
        v[k1] = v1;
    if (k2 >= 0)
        v[k2] = v2;
    fds_err_clear(e);
    return fds_disk_settings_parse(v, d, e);
}

static void refused(int k1, const char *v1, int k2, const char *v2,
                    const char *reason)
{
    fds_disk_settings d;
    fds_err e;
    ASSERT_EQ(parse2(k1, v1, k2, v2, &d, &e), FDS_EINVAL);
    ASSERT_EQ(e.kind, FDS_KIND_INVALID_ARGUMENT);
    ASSERTF(!strcmp(e.reason, reason), "[%s] != [%s]", e.reason, reason);
}

static void test_defaults(void)
{
    fds_disk_settings d;
    fds_err e;
    REQUIRE_EQ(parse2(-1, NULL, -1, NULL, &d, &e), 0);
    ASSERT(d.enabled);
    ASSERT(!d.low.absolute && d.low.percent == 85 && d.high.percent == 90 &&
           d.flood.percent == 95);
    ASSERT_EQ(d.low.headroom, (int64_t)(200 * GB));
    ASSERT_EQ(d.flood.headroom, (int64_t)(100 * GB));
    ASSERT_EQ(d.interval_ms, 30000);
    /* 60 MiB: 5% of it; 10 TB: the 100GB headroom */
    ASSERT_EQ(fds_disk_free_threshold(&d.flood, 60u << 20), 3145728u);
    ASSERT_EQ(fds_disk_free_threshold(&d.flood, 10000 * (uint64_t)GB),
              (uint64_t)(100 * GB));
    ASSERT_EQ(fds_disk_setting_of("cluster.routing.allocation.disk.watermark.low"),
              FDS_DISK_LOW);
    ASSERT_EQ(fds_disk_setting_of("cluster.routing.allocation.disk.watermark"), -1);
}

static void test_forms(void)
{
    fds_disk_settings d;
    fds_err e;
    /* a ratio; a given watermark has no headroom by default */
    REQUIRE_EQ(parse2(FDS_DISK_LOW, "0.5", -1, NULL, &d, &e), 0);
    ASSERT(!d.low.absolute && d.low.percent == 50 && d.low.headroom == -1);
    ASSERT_EQ(d.high.headroom, (int64_t)(150 * GB));
    ASSERT_EQ(fds_disk_free_threshold(&d.low, 1000), 500u);
    /* an explicit headroom caps the free space asked */
    REQUIRE_EQ(parse2(FDS_DISK_FLOOD, "99%", FDS_DISK_FLOOD_HEADROOM, "1mb", &d, &e), 0);
    ASSERT_EQ(fds_disk_free_threshold(&d.flood, 1000u << 20), 1u << 20);
    /* time values */
    REQUIRE_EQ(parse2(FDS_DISK_UPDATE_INTERVAL, "2m", -1, NULL, &d, &e), 0);
    ASSERT_EQ(d.interval_ms, 120000);
    REQUIRE_EQ(parse2(FDS_DISK_THRESHOLD_ENABLED, "false", -1, NULL, &d, &e), 0);
    ASSERT(!d.enabled);
    /* bytes, all three, in order (more free asked at low) */
    const char *v[FDS_DISK_NSETTINGS] = {0};
    v[FDS_DISK_LOW] = "3GB";
    v[FDS_DISK_HIGH] = "2gb";
    v[FDS_DISK_FLOOD] = "1024mb";
    fds_err_clear(&e);
    REQUIRE_EQ(fds_disk_settings_parse(v, &d, &e), 0);
    ASSERT(d.flood.absolute && d.flood.bytes == (uint64_t)GB);
    ASSERT_EQ(fds_disk_free_threshold(&d.low, 1), (uint64_t)(3 * GB));
    /* "0" is zero bytes, as RelativeByteSizeValue reads it */
    v[FDS_DISK_FLOOD] = "0";
    REQUIRE_EQ(fds_disk_settings_parse(v, &d, &e), 0);
    ASSERT(d.flood.absolute && d.flood.bytes == 0);
}

static void test_refused(void)
{
    refused(FDS_DISK_LOW, "abc", -1, NULL,
            "unable to parse [cluster.routing.allocation.disk.watermark.low=abc] "
            "as either percentage or bytes");
    refused(FDS_DISK_HIGH, "101%", -1, NULL,
            "unable to parse [cluster.routing.allocation.disk.watermark.high=101%] "
            "as either percentage or bytes");
    refused(FDS_DISK_HIGH, "1.5", -1, NULL,
            "unable to parse [cluster.routing.allocation.disk.watermark.high=1.5] "
            "as either percentage or bytes");
    refused(FDS_DISK_LOW, "-5%", -1, NULL,
            "unable to parse [cluster.routing.allocation.disk.watermark.low=-5%] "
            "as either percentage or bytes");
    refused(FDS_DISK_LOW, "91%", -1, NULL,
            "low disk watermark [91%] more than high disk watermark [90%]");
    refused(FDS_DISK_FLOOD, "0.9", FDS_DISK_HIGH, "0.95",
            "high disk watermark [0.95] more than flood stage disk watermark [0.9]");
    refused(FDS_DISK_LOW, "10gb", -1, NULL,
            "unable to consistently parse [cluster.routing.allocation.disk.watermark."
            "low=10gb], [cluster.routing.allocation.disk.watermark.high=90%], and "
            "[cluster.routing.allocation.disk.watermark.flood_stage=95%] as "
            "percentage or bytes");
    refused(FDS_DISK_LOW_HEADROOM, "1gb", FDS_DISK_HIGH_HEADROOM, "2gb",
            "high disk max headroom [2gb] more than low disk max headroom [1gb]");
    refused(FDS_DISK_FLOOD_HEADROOM, "lots", -1, NULL,
            "failed to parse value [lots] for setting "
            "[cluster.routing.allocation.disk.watermark.flood_stage.max_headroom]");
    refused(FDS_DISK_UPDATE_INTERVAL, "9s", -1, NULL,
            "failed to parse value [9s] for setting [cluster.info.update.interval], "
            "must be >= [10s]");
    refused(FDS_DISK_UPDATE_INTERVAL, "10 s", -1, NULL,
            "failed to parse value [10 s] for setting [cluster.info.update.interval]");
    refused(FDS_DISK_THRESHOLD_ENABLED, "1", -1, NULL,
            "Failed to parse value [1] as only [true] or [false] are allowed.");
    const char *v[FDS_DISK_NSETTINGS] = {0};
    v[FDS_DISK_LOW] = "1gb";
    v[FDS_DISK_HIGH] = "2gb";
    v[FDS_DISK_FLOOD] = "500mb";
    fds_disk_settings d;
    fds_err e;
    fds_err_clear(&e);
    ASSERT_EQ(fds_disk_settings_parse(v, &d, &e), FDS_EINVAL);
    ASSERT(!strcmp(e.reason, "low disk watermark [1gb] less than high disk "
                             "watermark [2gb]"));
    v[FDS_DISK_LOW] = "3gb";
    v[FDS_DISK_FLOOD_HEADROOM] = "1gb";
    fds_err_clear(&e);
    ASSERT_EQ(fds_disk_settings_parse(v, &d, &e), FDS_EINVAL);
    ASSERT(strstr(e.reason, "is not permitted when the flood stage disk "
                            "watermark is an absolute byte value") != NULL);
}

int main(void)
{
    RUN(test_defaults);
    RUN(test_forms);
    RUN(test_refused);
    TEST_DONE();
}
