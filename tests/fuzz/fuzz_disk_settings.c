/*
 * fuzz_disk_settings: fuzz target for the disk watermark settings parser
 * (src/store/disk.c, fds_disk_settings_parse).  The input is split at '\n'
 * into up to FDS_DISK_NSETTINGS values, setting k taking line k (an empty
 * line: the default).  Must never crash or read out of bounds, and
 *   - it answers 0 or FDS_EINVAL, with a reason on FDS_EINVAL;
 *   - an accepted set gives thresholds in order (fds_disk_thresholds: low
 *     asks for at least as much free space as high, high as flood, flood
 *     its own), on disks of 1 MiB to 1 PiB alike, and
 *     the update interval is at least FDS_DISK_UPDATE_INTERVAL_MIN_MS.
 * Seeds: corpus/fuzz_disk_settings (make_corpus.py).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "disk.h"
#define FDS_FUZZ_MAX_INPUT 1024
#define FDS_FUZZ_BYTES 0, '\n', '%', '.', '-', 'b', 'g', 'B', 's', '0', '9'
#include "fuzz_driver.h"

#define VALUE_MAX 128

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char vals[FDS_DISK_NSETTINGS][VALUE_MAX];
    const char *v[FDS_DISK_NSETTINGS] = {0};
    size_t at = 0;
    for (int k = 0; k < FDS_DISK_NSETTINGS && at <= size; k++) {
        size_t end = at;
        while (end < size && data[end] != '\n')
            end++;
        size_t n = end - at < VALUE_MAX - 1 ? end - at : VALUE_MAX - 1;
        memcpy(vals[k], data + at, n);
        vals[k][n] = 0;
        if (n && strlen(vals[k]) == n)
            v[k] = vals[k];
        at = end + 1;
    }
    fds_disk_settings d;
    fds_err e;
    fds_err_clear(&e);
    int rc = fds_disk_settings_parse(v, &d, &e);
    if (rc) {
        if (rc != FDS_EINVAL || !e.reason[0])
            abort();
        return 0;
    }
    if (d.interval_ms < FDS_DISK_UPDATE_INTERVAL_MIN_MS)
        abort();
    for (uint64_t total = 1u << 20; total && total <= (1ull << 50); total <<= 7) {
        uint64_t thr[3];
        fds_disk_thresholds(&d, total, thr);
        if (thr[0] < thr[1] || thr[1] < thr[2] ||
            thr[2] != fds_disk_free_threshold(&d.flood, total))
            abort();
    }
    return 0;
}
