/*
 * aggs_values.h: what the aggregation parsers share (src/query/dsl only;
 * aggs_values.c): their errors, the readers of parameter values, and the
 * values source every field aggregation reads before its own keys
 * (Elasticsearch's ValuesSourceAggregationBuilder).  Each returns 0 or an
 * FDS_E* code with c->err filled, unless it says otherwise.
 */
#ifndef FDS_AGGS_VALUES_H
#define FDS_AGGS_VALUES_H

#include <stdint.h>

#include "aggs/aggs.h"
#include "dsl/dsl_parse_int.h"

/* What a values-source aggregation's body holds besides its own keys. */
enum {
    FDS__VS_KEYWORD = 1,    /* keyword fields are accepted */
    FDS__VS_DATES = 2,      /* a date field only; format and time_zone read */
    FDS__VS_NO_FIELD = 4,   /* no field (filters) */
    FDS__VS_NO_MISSING = 8, /* `missing` is not a parameter (filters, missing) */
};

/* One key of a type's body: 0 or an error code (c->err filled); st is
 * the type's parse state. */
typedef int (*fds__aggp_param_fn)(fds__dsl_ctx *c, fds_agg *a,
                                  const cJSON *e, char **paths, void *st);

int fds__aggp_unknown_field(fds__dsl_ctx *c, const fds_agg *a, const char *k);

int fds__aggp_unsupported(fds__dsl_ctx *c, const fds_agg *a, const char *k);

int fds__aggp_bad_value(fds__dsl_ctx *c, const fds_agg *a, const char *k);

int fds__aggp_oom(fds__dsl_ctx *c);

/* A number parameter as Elasticsearch's parser reads one (coercing): a
 * JSON number, or a string that holds one whole ("10").  False for
 * anything else (*v 0); no error is set. */
bool fds__aggp_double(const cJSON *p, double *v);

/* A non-negative integer parameter: a number or a string holding one
 * (Elasticsearch coerces "10"); anything else is x_content_parse_exception
 * "[type] failed to parse field [k]". */
int fds__aggp_count(fds__dsl_ctx *c, const fds_agg *a, const cJSON *v,
                     const char *k, uint64_t max, uint64_t *out);

/* A time_zone that is neither an offset nor a zone id (java.time's
 * ZoneRulesException text, which Elasticsearch returns). */
int fds__aggp_unknown_zone(fds__dsl_ctx *c, const char *tz);

/* A date value (epoch ms number, or a date / date-math string in the
 * aggregation's format). */
int fds__aggp_date(fds__dsl_ctx *c, const fds_agg *a, const cJSON *v,
                    bool round_up, double *out);

/* A number for a field of the aggregation's type (dates may be strings). */
int fds__aggp_number(fds__dsl_ctx *c, const fds_agg *a, const cJSON *v,
                      const char *k, double *out);

/* The field of a values-source aggregation. */
int fds__aggp_field(fds__dsl_ctx *c, fds_agg *a, const cJSON *v);

int fds__aggp_format(fds__dsl_ctx *c, fds_agg *a, const cJSON *v);

/* `order`: {"_count": "desc"}, {"_key": "asc"}, {"metric": "asc"},
 * {"stats.max": "desc"} or a list of those.  Metric paths are checked
 * against the sub-aggregations once they are parsed (check_order). */
int fds__aggp_order(fds__dsl_ctx *c, fds_agg *a, const cJSON *v,
                     char **paths);

/* include / exclude: a list of exact values. */
int fds__aggp_values(fds__dsl_ctx *c, fds_agg *a, const cJSON *v,
                      const char *k, char ***vals, size_t **lens, double **nums,
                      size_t *n);

/* extended_bounds / hard_bounds: {"min": x, "max": y} (dates may be date
 * math). */
int fds__aggp_bounds(fds__dsl_ctx *c, fds_agg *a, const cJSON *v,
                      const char *k, double *lo, double *hi);

int fds__aggp_calendar(const char *name);

/* A time value "90m" ("ms", "s", "m", "h", "d") in ms, > 0; -1 if not. */
int64_t fds__aggp_time_value_ms(const char *s);

/* The body b of aggregation a checked and its field, format and
 * time_zone read (format and time_zone first: they decide how dates
 * read), the defaults of every type set; Elasticsearch's
 * ValuesSourceAggregationBuilder.  0 or an error code (c->err filled). */
int fds__aggp_values_source(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                         unsigned vs);

/* Every key of body b: those all values sources share here (field, format
 * and time_zone read by fds__aggp_values_source; script and value_type refused;
 * missing), the rest by the type's fn.  0 or the first error's code. */
int fds__aggp_each_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *b,
                      unsigned vs, fds__aggp_param_fn fn, char **paths, void *st);

/* A body whose keys are all shared ones (missing). */
int fds__aggp_no_param(fds__dsl_ctx *c, fds_agg *a, const cJSON *e, char **paths,
                    void *st);
/* The FDS_CAL_* unit of a calendar_interval name ("1d", "month"); 0 when
 * it names none. */
int fds__aggp_calendar(const char *name);

#endif
