/*
 * fds_svg.h: a very small SVG writer for the A/B report's charts.
 *
 * Why it exists: the report must be readable without any plotting stack, so
 * loadgen writes its three charts (QPS per round, latency percentiles, QPS
 * per CPU%) itself as plain SVG 1.1: one grouped bar chart per file, a
 * linear y axis from 0 with "nice" tick steps (1, 2, 5 x 10^n), value labels
 * on the bars and a legend.
 */
#ifndef FDS_SVG_H
#define FDS_SVG_H

#include <stddef.h>

#define FDS_SVG_MAX_SERIES 8
#define FDS_SVG_MAX_GROUPS 64

typedef struct fds_svg_bars {
    const char *title;                       /* chart title */
    const char *y_label;                     /* y axis label with unit, e.g. "ms" */
    int ngroups;                             /* x categories, 1..FDS_SVG_MAX_GROUPS */
    const char *groups[FDS_SVG_MAX_GROUPS];  /* their labels */
    int nseries;                             /* bars per category, 1..FDS_SVG_MAX_SERIES */
    const char *series[FDS_SVG_MAX_SERIES];  /* legend labels */
    double values[FDS_SVG_MAX_SERIES][FDS_SVG_MAX_GROUPS]; /* >= 0; negative = missing */
} fds_svg_bars;

/* Write `chart` as an SVG document to `path`.  0, FDS_EINVAL for counts out
 * of range, or FDS_EIO if the file cannot be written. */
int fds_svg_write_bars(const char *path, const fds_svg_bars *chart);

#endif
