/*
 * settings.c: index settings (DESIGN.md §5) with Elasticsearch's names,
 * value syntax (time values "1s", byte sizes "16kb") and error texts.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ast/search_request.h" /* FDS_MAX_*: the search limits' defaults */
#include "index_rules.h"
#include "store.h"

void fds_index_settings_default(fds_index_settings *s)
{
    memset(s, 0, sizeof *s);
    fds_codec_params_default(FDS_CODEC_LZ4, &s->codec);
    s->codec.level = FDS_ZSTD_LEVEL_DEFAULT;
    s->zstd_dict = true;
    s->dict_size = FDS_DICT_SIZE_DEFAULT;
    s->dict_sample_bytes = FDS_DICT_SAMPLE_DEFAULT;
    s->number_of_shards = 1;
    s->number_of_replicas = 0; /* one node: no replica could be assigned */
    s->refresh_interval_ms = FDS_REFRESH_INTERVAL_DEFAULT_MS;
    s->durability = FDS_DURABILITY_REQUEST;
    s->max_result_window = FDS_MAX_RESULT_WINDOW;
    s->max_docvalue_fields_search = FDS_MAX_DOCVALUE_FIELDS;
    s->max_script_fields = FDS_MAX_SCRIPT_FIELDS;
    s->max_terms_count = FDS_MAX_TERMS_COUNT;
    s->max_regex_length = FDS_MAX_REGEX_LENGTH;
    s->max_rescore_window = FDS_MAX_RESCORE_WINDOW;
    s->mapping_total_fields = FDS_MAPPING_TOTAL_FIELDS_DEFAULT;
    s->mapping_depth = FDS_MAPPING_DEPTH_DEFAULT;
    s->mapping_field_name_length = INT64_MAX;
}

/* The search limits: a uint32 member of fds_index_settings each, all
 * dynamic, >= 0 except max_result_window (>= 1), checked by the search
 * (src/query's fds_search_limits). */
static const struct {
    const char *key;
    size_t off;
    long long min;
} LIMITS[] = {
    {"index.max_result_window", offsetof(fds_index_settings, max_result_window), 1},
    {"index.max_docvalue_fields_search",
     offsetof(fds_index_settings, max_docvalue_fields_search), 0},
    {"index.max_script_fields", offsetof(fds_index_settings, max_script_fields), 0},
    {"index.max_terms_count", offsetof(fds_index_settings, max_terms_count), 1},
    {"index.max_regex_length", offsetof(fds_index_settings, max_regex_length), 1},
    {"index.max_rescore_window", offsetof(fds_index_settings, max_rescore_window), 1},
    {"index.mapping.total_fields.limit",
     offsetof(fds_index_settings, mapping_total_fields), 0},
    {"index.mapping.depth.limit", offsetof(fds_index_settings, mapping_depth), 1},
};

static const struct {
    const char *key;
    fds_setting_kind kind;
} KINDS[] = {
    {"index.codec", FDS_SETTING_STATIC},
    {"index.compression.zstd.level", FDS_SETTING_STATIC},
    {"index.codec.compression_level", FDS_SETTING_STATIC},
    {"index.compression.zstd.dict", FDS_SETTING_FINAL},
    {"index.compression.zstd.jni", FDS_SETTING_FINAL},
    {"index.codec.block_size", FDS_SETTING_STATIC},
    {"index.codec.max_docs_per_block", FDS_SETTING_STATIC},
    {"index.codec.dict_size", FDS_SETTING_STATIC},
    {"index.codec.dict_sample_size", FDS_SETTING_STATIC},
    {"index.number_of_shards", FDS_SETTING_FINAL},
    {"index.number_of_routing_shards", FDS_SETTING_FINAL},
    {"index.number_of_replicas", FDS_SETTING_DYNAMIC},
    {"index.refresh_interval", FDS_SETTING_DYNAMIC},
    {"index.translog.durability", FDS_SETTING_DYNAMIC},
    {"index.max_result_window", FDS_SETTING_DYNAMIC},
    {"index.max_docvalue_fields_search", FDS_SETTING_DYNAMIC},
    {"index.max_script_fields", FDS_SETTING_DYNAMIC},
    {"index.max_terms_count", FDS_SETTING_DYNAMIC},
    {"index.max_regex_length", FDS_SETTING_DYNAMIC},
    {"index.max_rescore_window", FDS_SETTING_DYNAMIC},
    {"index.mapping.total_fields.limit", FDS_SETTING_DYNAMIC},
    {"index.mapping.depth.limit", FDS_SETTING_DYNAMIC},
    {"index.mapping.field_name_length.limit", FDS_SETTING_DYNAMIC},
    {"index.hidden", FDS_SETTING_DYNAMIC},
    {"index.blocks.read_only", FDS_SETTING_DYNAMIC},
    {"index.blocks.read", FDS_SETTING_DYNAMIC},
    {"index.blocks.write", FDS_SETTING_DYNAMIC},
    {"index.blocks.metadata", FDS_SETTING_DYNAMIC},
    {"index.blocks.read_only_allow_delete", FDS_SETTING_DYNAMIC},
    {"index.routing.rebalance.enable", FDS_SETTING_DYNAMIC},
};

/* index.routing.rebalance.enable's values, by FDS_REBALANCE_*. */
static const char *const REBALANCE[FDS_REBALANCE_COUNT] = {"all", "primaries",
                                                          "replicas", "none"};

/* index.blocks.<name> of each FDS_BLOCK_* bit, lowest bit first. */
static const char *const BLOCK_NAMES[FDS_BLOCK_COUNT] = {
    "read_only", "read", "write", "metadata", "read_only_allow_delete"};
#define BLOCKS_PREFIX "index.blocks."

const char *fds_block_name(unsigned bit)
{
    for (unsigned i = 0; i < FDS_BLOCK_COUNT; i++)
        if (bit == 1u << i)
            return BLOCK_NAMES[i];
    return NULL;
}

/* The FDS_BLOCK_* bit of setting `key`, or 0. */
static unsigned block_of(const char *key)
{
    if (strncmp(key, BLOCKS_PREFIX, strlen(BLOCKS_PREFIX)))
        return 0;
    for (unsigned i = 0; i < FDS_BLOCK_COUNT; i++)
        if (!strcmp(key + strlen(BLOCKS_PREFIX), BLOCK_NAMES[i]))
            return 1u << i;
    return 0;
}

static int parse_bool(const char *value, bool *out, fds_err *err)
{
    if (strcmp(value, "true") && strcmp(value, "false"))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Failed to parse value [%s] as only [true] or "
                            "[false] are allowed.", value);
    *out = value[0] == 't';
    return 0;
}

fds_setting_kind fds_setting_kind_of(const char *key)
{
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        if (!strcmp(KINDS[i].key, key))
            return KINDS[i].kind;
    return FDS_SETTING_UNKNOWN;
}

static int bad_value(fds_err *err, const char *key, const char *value)
{
    return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                        "failed to parse value [%s] for setting [%s]", value, key);
}

static int parse_long(const char *v, long long *out)
{
    if (!*v)
        return -1;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end)
        return -1;
    *out = x;
    return 0;
}

/* "16kb", "1mb", "16384", "16384b" -> bytes (Elasticsearch ByteSizeValue). */
int fds__parse_bytes(const char *v, long long *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || x < 0)
        return -1;
    static const struct { const char *unit; double mul; } U[] = {
        {"", 1}, {"b", 1}, {"k", 1024}, {"kb", 1024}, {"m", 1048576},
        {"mb", 1048576}, {"g", 1073741824.0}, {"gb", 1073741824.0},
    };
    for (size_t i = 0; i < sizeof U / sizeof U[0]; i++)
        if (!strcasecmp(end, U[i].unit)) {
            *out = (long long)(x * U[i].mul);
            return 0;
        }
    return -1;
}

/* "1s", "500ms", "2m", "-1" -> milliseconds (Elasticsearch TimeValue). */
static int parse_time_ms(const char *v, long long *out)
{
    if (!strcmp(v, "-1")) {
        *out = -1;
        return 0;
    }
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || x < 0)
        return -1;
    static const struct { const char *unit; double mul; } U[] = {
        {"nanos", 1e-6}, {"micros", 1e-3}, {"ms", 1}, {"s", 1000},
        {"m", 60000}, {"h", 3600000}, {"d", 86400000},
    };
    for (size_t i = 0; i < sizeof U / sizeof U[0]; i++)
        if (!strcmp(end, U[i].unit)) {
            *out = (long long)(x * U[i].mul);
            return 0;
        }
    return -1;
}

/* Row of LIMITS for `key`, or -1. */
static int limit_of(const char *key)
{
    for (size_t i = 0; i < sizeof LIMITS / sizeof *LIMITS; i++)
        if (!strcmp(LIMITS[i].key, key))
            return (int)i;
    return -1;
}

/* One branch per setting family, each a parse, a range check and the
 * member it sets, kept whole so that a setting's syntax, bounds and error
 * text read in one place beside its neighbours'. */
int fds_settings_set(fds_index_settings *s, const char *key, const char *value,
                     fds_err *err)
{
    long long x;
    if (!strcmp(key, "index.codec")) {
        fds_codec_id id;
        if (fds_codec_from_name(value, &id))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "unknown value for [index.codec] must be one of "
                                "[default, best_compression, ZSTD, zstd, "
                                "zstd_no_dict, lucene_best_compression] but was: %s",
                                value);
        int level = s->codec.level;
        fds_codec_params_default(id, &s->codec);
        s->codec.level = level;
    } else if (!strcmp(key, "index.compression.zstd.level") ||
               !strcmp(key, "index.codec.compression_level")) {
        if (parse_long(value, &x))
            return bad_value(err, key, value);
        if (x < FDS_ZSTD_LEVEL_MIN || x > FDS_ZSTD_LEVEL_MAX)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Failed to parse value [%s] for setting [%s] must "
                                "be >= %d and <= %d", value, key,
                                FDS_ZSTD_LEVEL_MIN, FDS_ZSTD_LEVEL_MAX);
        s->codec.level = (int)x;
    } else if (!strcmp(key, "index.compression.zstd.dict") ||
               !strcmp(key, "index.compression.zstd.jni")) {
        /* Easysearch's names, fixed to true (DESIGN.md §5): ZSTD always
         * trains a dictionary, and libzstd is the native implementation
         * Easysearch's jni=true selects; false would be stored and ignored */
        if (strcmp(value, "true") && strcmp(value, "false"))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Failed to parse value [%s] as only [true] or "
                                "[false] are allowed.", value);
        if (strcmp(value, "true") && !strcmp(key, "index.compression.zstd.dict"))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[index.compression.zstd.dict] can only be [true]: "
                                "the ZSTD codec always compresses with a trained "
                                "dictionary; use [index.codec: zstd_no_dict] for "
                                "zstd without one");
        if (strcmp(value, "true"))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "[index.compression.zstd.jni] can only be [true]: "
                                "zstd is always the native library (libzstd) here");
    } else if (!strcmp(key, "index.codec.block_size")) {
        if (fds__parse_bytes(value, &x))
            return bad_value(err, key, value);
        if (x < FDS_BLOCK_SIZE_MIN || x > FDS_BLOCK_SIZE_MAX)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "failed to parse value [%s] for setting [%s], "
                                "must be >= [%ub] and <= [%ub]", value, key,
                                FDS_BLOCK_SIZE_MIN, FDS_BLOCK_SIZE_MAX);
        s->codec.block_size = (uint32_t)x;
    } else if (!strcmp(key, "index.codec.max_docs_per_block")) {
        if (parse_long(value, &x) || x < 1 || x > 65536)
            return bad_value(err, key, value);
        s->codec.max_docs_per_block = (uint32_t)x;
    } else if (!strcmp(key, "index.codec.dict_size")) {
        if (fds__parse_bytes(value, &x) || x < 1024 || x > 1024 * 1024)
            return bad_value(err, key, value);
        s->dict_size = (uint32_t)x;
    } else if (!strcmp(key, "index.codec.dict_sample_size")) {
        if (fds__parse_bytes(value, &x) || x < 1024 || x > 256ll * 1024 * 1024)
            return bad_value(err, key, value);
        s->dict_sample_bytes = (uint32_t)x;
    } else if (!strcmp(key, "index.number_of_shards")) {
        if (parse_long(value, &x))
            return bad_value(err, key, value);
        if (x < 1 || x > FDS_SHARDS_MAX)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Failed to parse value [%s] for setting [%s] "
                                "must be %s= %d", value, key,
                                x < 1 ? ">" : "<", x < 1 ? 1 : FDS_SHARDS_MAX);
        s->number_of_shards = (uint32_t)x;
    } else if (!strcmp(key, "index.number_of_routing_shards")) {
        if (parse_long(value, &x))
            return bad_value(err, key, value);
        if (x < 1 || x > (long long)FDS_SHARDS_MAX * FDS_SHARDS_MAX)
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "Failed to parse value [%s] for setting [%s] "
                                "must be >= 1", value, key);
        s->number_of_routing_shards = (uint32_t)x;
    } else if (!strcmp(key, "index.number_of_replicas")) {
        if (parse_long(value, &x) || x < 0)
            return bad_value(err, key, value);
        s->number_of_replicas = (uint32_t)x;
    } else if (!strcmp(key, "index.refresh_interval")) {
        if (parse_time_ms(value, &x))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "failed to parse setting [%s] with value [%s] as "
                                "a time value: unit is missing or unrecognized",
                                key, value);
        s->refresh_interval_ms = x;
    } else if (!strcmp(key, "index.translog.durability")) {
        if (!strcasecmp(value, "request"))
            s->durability = FDS_DURABILITY_REQUEST;
        else if (!strcasecmp(value, "async"))
            s->durability = FDS_DURABILITY_ASYNC;
        else
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "No enum constant org.elasticsearch.index."
                                "translog.Translog.Durability.%s", value);
    } else if (!strcmp(key, "index.mapping.depth.limit") &&
               !parse_long(value, &x) && x > FDS_DOC_DEPTH_MAX) {
        /* documents are scanned FDS_DOC_DEPTH_MAX levels deep at most: a
         * higher limit could not have its effect */
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "[index.mapping.depth.limit] above [%d] is not "
                            "supported: documents nest at most %d levels",
                            FDS_DOC_DEPTH_MAX, FDS_DOC_DEPTH_MAX);
    } else if (limit_of(key) >= 0) {
        size_t k = (size_t)limit_of(key);
        if (parse_long(value, &x) || x < LIMITS[k].min || x > 2147483647)
            return bad_value(err, key, value);
        *(uint32_t *)((char *)s + LIMITS[k].off) = (uint32_t)x;
    } else if (!strcmp(key, "index.mapping.field_name_length.limit")) {
        if (parse_long(value, &x) || x < 1)
            return bad_value(err, key, value);
        s->mapping_field_name_length = x;
    } else if (!strcmp(key, "index.hidden")) {
        return parse_bool(value, &s->hidden, err);
    } else if (!strcmp(key, "index.routing.rebalance.enable")) {
        unsigned k = 0;
        while (k < FDS_REBALANCE_COUNT && strcasecmp(value, REBALANCE[k]))
            k++;
        if (k == FDS_REBALANCE_COUNT) {
            char up[64];
            size_t i = 0;
            for (; value[i] && i + 1 < sizeof up; i++)
                up[i] = (char)toupper((unsigned char)value[i]);
            up[i] = 0;
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "No enum constant org.elasticsearch.cluster."
                                "routing.allocation.decider."
                                "EnableAllocationDecider.Rebalance.%s", up);
        }
        s->rebalance = k;
    } else if (block_of(key)) {
        bool on;
        if (parse_bool(value, &on, err))
            return FDS_EINVAL;
        s->blocks = on ? s->blocks | block_of(key) : s->blocks & ~block_of(key);
    } else {
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "unknown setting [%s] please check that any required "
                            "plugins are installed, or check the breaking changes "
                            "documentation for removed settings", key);
    }
    return 0;
}

size_t fds_settings_to_kv(const fds_index_settings *s, fds_setting_kv *kv,
                          size_t cap)
{
    size_t n = 0;
#define KV(k, ...)                                                          \
    do {                                                                    \
        if (n < cap) {                                                      \
            kv[n].key = k;                                                  \
            snprintf(kv[n].value, sizeof kv[n].value, __VA_ARGS__);         \
            n++;                                                            \
        }                                                                   \
    } while (0)
    KV("index.codec", "%s", fds_codec_name(s->codec.codec));
    KV("index.compression.zstd.level", "%d", s->codec.level);
    KV("index.compression.zstd.dict", "%s", s->zstd_dict ? "true" : "false");
    KV("index.compression.zstd.jni", "true");
    KV("index.codec.block_size", "%ub", s->codec.block_size);
    KV("index.codec.max_docs_per_block", "%u", s->codec.max_docs_per_block);
    KV("index.codec.dict_size", "%ub", s->dict_size);
    KV("index.codec.dict_sample_size", "%ub", s->dict_sample_bytes);
    KV("index.number_of_shards", "%u", s->number_of_shards);
    KV("index.number_of_replicas", "%u", s->number_of_replicas);
    if (s->refresh_interval_ms < 0)
        KV("index.refresh_interval", "-1");
    else if (s->refresh_interval_ms % 1000 == 0)
        KV("index.refresh_interval", "%llds", (long long)s->refresh_interval_ms / 1000);
    else
        KV("index.refresh_interval", "%lldms", (long long)s->refresh_interval_ms);
    KV("index.translog.durability", "%s",
       s->durability == FDS_DURABILITY_ASYNC ? "async" : "request");
    for (size_t i = 0; i < sizeof LIMITS / sizeof *LIMITS; i++)
        KV(LIMITS[i].key, "%u",
           *(const uint32_t *)((const char *)s + LIMITS[i].off));
    KV("index.mapping.field_name_length.limit", "%lld",
       (long long)s->mapping_field_name_length);
    KV("index.hidden", "%s", s->hidden ? "true" : "false");
    KV("index.routing.rebalance.enable", "%s", REBALANCE[s->rebalance]);
    static const char *const BLOCK_KEYS[FDS_BLOCK_COUNT] = {
        BLOCKS_PREFIX "read_only", BLOCKS_PREFIX "read", BLOCKS_PREFIX "write",
        BLOCKS_PREFIX "metadata", BLOCKS_PREFIX "read_only_allow_delete"};
    for (unsigned i = 0; i < FDS_BLOCK_COUNT; i++)
        KV(BLOCK_KEYS[i], "%s", s->blocks & (1u << i) ? "true" : "false");
    /* last, and only when given: the entries before it line up with those
     * of the defaults (callers compare them by position) */
    if (s->number_of_routing_shards)
        KV("index.number_of_routing_shards", "%u", s->number_of_routing_shards);
#undef KV
    return n;
}

int fds_settings_check(const fds_index_settings *s, bool level_given,
                       bool codec_given, fds_err *err)
{
    fds_codec_id c = s->codec.codec;
    bool has_levels = c == FDS_CODEC_ZSTD || c == FDS_CODEC_ZSTD_NO_DICT;
    if (!has_levels &&
        (level_given || (codec_given && s->codec.level != FDS_ZSTD_LEVEL_DEFAULT)))
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "Compression level cannot be set for the [%s] codec.",
                            fds_codec_name(c));
    return 0;
}

int fds_settings_check_shards(const fds_index_settings *s, fds_err *err)
{
    uint32_t r = s->number_of_routing_shards, n = s->number_of_shards;
    if (!r)
        return 0;
    if (r < n)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "index.number_of_routing_shards [%u] must be >= "
                            "index.number_of_shards [%u]", r, n);
    if (r % n)
        return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                            "the number of source shards [%u] must be a "
                            "factor of [%u]", n, r);
    return 0;
}

int fds_settings_check_final(const fds_index_settings *cur,
                             const fds_index_settings *next, const char *name,
                             fds_err *err)
{
    fds_setting_kv a[FDS_SETTINGS_MAX], b[FDS_SETTINGS_MAX];
    size_t na = fds_settings_to_kv(cur, a, FDS_SETTINGS_MAX);
    size_t nb = fds_settings_to_kv(next, b, FDS_SETTINGS_MAX);
    for (size_t j = 0; j < nb; j++) {
        if (fds_setting_kind_of(b[j].key) != FDS_SETTING_FINAL)
            continue;
        const char *was = NULL;
        for (size_t i = 0; i < na && !was; i++)
            if (!strcmp(a[i].key, b[j].key))
                was = a[i].value;
        if (!was || strcmp(was, b[j].value))
            return fds_err_setk(err, FDS_EINVAL, FDS_KIND_INVALID_ARGUMENT,
                                "final %s setting [%s], not updateable", name,
                                b[j].key);
    }
    return 0;
}

void fds_settings_mapping_limits(const fds_index_settings *s,
                                 fds_mapping_limits *lim)
{
    lim->total_fields = s->mapping_total_fields;
    lim->depth = s->mapping_depth;
    lim->field_name_length = s->mapping_field_name_length == INT64_MAX
                                 ? 0 : (uint64_t)s->mapping_field_name_length;
}
