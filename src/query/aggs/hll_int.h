/*
 * hll_int.h: the empirical tables of HyperLogLog++ (hll_bias.c), shared by
 * hll.c only.  Index = precision - FDS_HLL_MIN_PRECISION (0..14).
 */
#ifndef FDS_HLL_INT_H
#define FDS_HLL_INT_H

#include <stddef.h>
#include <stdint.h>

#define FDS__HLL_PRECISIONS 15

/*
 * Raw HLL estimates and their measured bias at the same points, from the
 * appendix of Heule, Nunkesser, Hall (2013), as Elasticsearch's
 * AbstractHyperLogLog.RAW_ESTIMATE_DATA / BIAS_DATA carry them.  Both tables
 * of a precision have fds__hll_bias_len[i] entries.
 */
extern const double *const fds__hll_raw_estimate[FDS__HLL_PRECISIONS];
extern const double *const fds__hll_bias[FDS__HLL_PRECISIONS];
extern const size_t fds__hll_bias_len[FDS__HLL_PRECISIONS];

/* Below these estimates, linear counting over empty registers is used
 * (AbstractHyperLogLog.THRESHOLDS, the paper's Table/appendix values). */
extern const uint32_t fds__hll_lc_threshold[FDS__HLL_PRECISIONS];

#endif
