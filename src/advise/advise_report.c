/*
 * advise_report.c: what `fieldstore advise` concludes from its grid, and
 * the three forms it writes: the table on stdout, advice.json, and an SVG
 * of the Pareto front of stored bytes against one-doc fetch time.
 *
 * The recommendation rule (fds__adv_recommend), on measured rows that a
 * `PUT /{index}` can select:
 *   1. keep those that index at most ADV_CPU_LIMIT times the compress CPU
 *      per document of the default (index.codec ZSTD, level 3) and fetch
 *      one document in at most ADV_FETCH_LIMIT times its p50;
 *   2. recommend the one with the fewest stored bytes per document (the
 *      faster one-doc fetch on a tie), the default when none is smaller.
 * The smallest row that passes is on the Pareto front of the rows that
 * pass: none of them is smaller, and a tie goes to the faster.
 * The sentence compares it with best_compression (the DEFLATE baseline in
 * the same blocks) and names the rows that would store less still (the
 * cheapest to compress and the smallest), with the compress CPU and the
 * fetch time they cost.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "advise.h"

#define ADV_CPU_LIMIT 2.0    /* compress CPU per doc, times the default's */
#define ADV_FETCH_LIMIT 1.25 /* one-doc fetch p50, times the default's */
#define ADV_SAME_SPEED 1.15  /* fetch times this close are "about as fast" */
#define ADV_LOADGEN_FIELDS "service_name,method,error_code,url"

double fds__adv_project(const fds__adv_row *r, uint64_t ndocs)
{
    return r->bytes_per_doc * (double)ndocs + (double)r->dict_bytes;
}

static int find(const fds__adv_grid *g, fds_codec_id c, bool is_default)
{
    for (size_t i = 0; i < g->nrows; i++)
        if (g->rows[i].measured && g->rows[i].settable && g->rows[i].p.codec == c &&
            (!is_default || g->rows[i].is_default))
            return (int)i;
    return -1;
}

static int find_named(const fds__adv_grid *g, fds_codec_id c)
{
    for (size_t i = 0; i < g->nrows; i++)
        if (g->rows[i].measured && g->rows[i].p.codec == c && !strcmp(g->rows[i].name, fds_codec_name(c)))
            return (int)i;
    return -1;
}

/* "9% smaller than" / "3% larger than" / "as large as" */
static void size_words(char *s, size_t cap, double a, double b)
{
    double d = (a / b - 1) * 100;
    if (fabs(d) < 0.5) snprintf(s, cap, "as large as");
    else snprintf(s, cap, "%.0f%% %s than", fabs(d), d < 0 ? "smaller" : "larger");
}

/* "3.2x faster" / "1.4x slower" / "about as fast": fetch times within
 * ADV_SAME_SPEED of each other are not told apart (on a shared machine
 * rows of one layout differ by that much). */
static void speed_words(char *s, size_t cap, double t, double ref)
{
    if (t <= ref * ADV_SAME_SPEED && ref <= t * ADV_SAME_SPEED) snprintf(s, cap, "about as fast");
    else if (t <= ref) snprintf(s, cap, "%.1fx faster", ref / t);
    else snprintf(s, cap, "%.1fx slower", t / ref);
}

int fds__adv_recommend(const fds__adv_grid *g, char *why, size_t why_cap)
{
    int def = find(g, FDS_CODEC_ZSTD, true);
    why[0] = 0;
    if (def < 0) return -1;
    const fds__adv_row *d = &g->rows[def];
    int best = def;
    for (size_t i = 0; i < g->nrows; i++) {
        const fds__adv_row *a = &g->rows[i], *b = &g->rows[best];
        if (!a->measured || !a->settable ||
            a->compress_cpu_us_per_doc > ADV_CPU_LIMIT * d->compress_cpu_us_per_doc ||
            a->fetch1_p50 > ADV_FETCH_LIMIT * d->fetch1_p50)
            continue;
        if (a->bytes_per_doc < b->bytes_per_doc ||
            (a->bytes_per_doc == b->bytes_per_doc && a->fetch1_p50 < b->fetch1_p50))
            best = (int)i;
    }
    const fds__adv_row *r = &g->rows[best];
    size_t n = 0;
    char sz[64], sp[64];
    int base = find_named(g, FDS_CODEC_DEFLATE);
    if (base < 0 || base == best) base = def != best ? def : find_named(g, FDS_CODEC_LUCENE_DEFLATE);
    n += (size_t)snprintf(why + n, why_cap - n, "%s (%s)", r->name, r->variant);
    if (base >= 0 && base != best && n < why_cap) {
        const fds__adv_row *b = &g->rows[base];
        size_words(sz, sizeof sz, r->bytes_per_doc, b->bytes_per_doc);
        speed_words(sp, sizeof sp, r->fetch1_p50, b->fetch1_p50);
        n += (size_t)snprintf(why + n, why_cap - n,
                              ": stored fields %s %s (%.1f against %.1f B/doc), "
                              "one-doc fetch %s (p50 %.1f against %.1f us)",
                              sz, b->name, r->bytes_per_doc, b->bytes_per_doc, sp, r->fetch1_p50,
                              b->fetch1_p50);
    }
    if (best != def && base != def && n < why_cap) {
        size_words(sz, sizeof sz, r->bytes_per_doc, d->bytes_per_doc);
        speed_words(sp, sizeof sp, r->fetch1_p50, d->fetch1_p50);
        n += (size_t)snprintf(why + n, why_cap - n, ", %s the default %s, one-doc fetch %s", sz,
                              d->name, sp);
    }
    /* what storing less would cost: among the settable rows smaller than
     * the recommendation, the one with the least compress CPU per
     * document and the smallest */
    int cheap = -1, small = -1;
    for (size_t i = 0; i < g->nrows; i++) {
        const fds__adv_row *a = &g->rows[i];
        if (!a->measured || !a->settable || a->bytes_per_doc >= r->bytes_per_doc) continue;
        if (cheap < 0 || a->compress_cpu_us_per_doc < g->rows[cheap].compress_cpu_us_per_doc)
            cheap = (int)i;
        if (small < 0 || a->bytes_per_doc < g->rows[small].bytes_per_doc) small = (int)i;
    }
    int alts[2] = {cheap, small != cheap ? small : -1};
    for (int k = 0; k < 2 && alts[k] >= 0 && n < why_cap; k++) {
        const fds__adv_row *a = &g->rows[alts[k]];
        speed_words(sp, sizeof sp, a->fetch1_p50, r->fetch1_p50);
        n += (size_t)snprintf(why + n, why_cap - n,
                              "; %s would save %.0f%% more at %.1fx the compress CPU "
                              "per document, one-doc fetch %s",
                              a->name, (1 - a->bytes_per_doc / r->bytes_per_doc) * 100,
                              a->compress_cpu_us_per_doc / r->compress_cpu_us_per_doc, sp);
    }
    if (cheap < 0 && n < why_cap)
        n += (size_t)snprintf(why + n, why_cap - n, "; no configuration measured stores less");
    if (n < why_cap) snprintf(why + n, why_cap - n, ".");
    return best;
}

/* ---- text ---------------------------------------------------------------- */

static void human_bytes(char *s, size_t cap, double b)
{
    static const char *u[] = {"B", "KB", "MB", "GB", "TB"};
    int k = 0;
    while (b >= 1000 && k < 4) {
        b /= 1000;
        k++;
    }
    snprintf(s, cap, k ? "%.1f %s" : "%.0f %s", b, u[k]);
}

static void loadgen_line(char *s, size_t cap, const fds__adv_report *rep)
{
    const fds__adv_row *r = &rep->g->rows[rep->rec];
    const char *other = r->p.codec == FDS_CODEC_DEFLATE ? "logs-zstd" : "logs-best_compression";
    snprintf(s, cap,
             "loadgen ab --host %s --port %d --index logs-advised --index %s "
             "--index logs-lucene_best_compression%s --size 10 --rounds 4 "
             "--round-duration 5 --warmup 1 --clients 8 --json results/ab.json "
             "--md results/ab.md",
             rep->host, rep->port, other,
             rep->in->kind == FDS_ADV_LOG ? " --fields " ADV_LOADGEN_FIELDS : "");
}

static const char *kind_name(fds__adv_kind k)
{
    return k == FDS_ADV_LOG ? "access log" : k == FDS_ADV_BULK ? "bulk ndjson" : "ndjson";
}

void fds__adv_print(FILE *f, const fds__adv_report *rep)
{
    const fds__adv_grid *g = rep->g;
    const fds__adv_input *in = rep->in;
    if (in->estimated)
        fprintf(f, "Input: %s (%s), about %llu documents; measured on %zu of them (%.1f MB of "
                   "JSON, runs spread over the file up to line %llu)\n\n",
                rep->input_path, kind_name(in->kind), (unsigned long long)in->docs_total,
                in->docs.n, (double)in->docs.len / 1e6,
                (unsigned long long)in->last_sampled_line);
    else
        fprintf(f, "Input: %s (%s), %llu documents, all measured (%.1f MB of JSON)\n\n",
                rep->input_path, kind_name(in->kind), (unsigned long long)in->docs_total,
                (double)in->docs.len / 1e6);
    fprintf(f, "| configuration | settable | ratio | B/doc |");
    for (size_t k = 0; k < rep->nproj; k++)
        fprintf(f, " stored at %llu docs |", (unsigned long long)rep->projections[k]);
    fprintf(f, " compress MB/s | compress CPU us/doc | decode MB/s | one-doc fetch us p50 / p99 |"
               " ten-hit fetch us p50 / p99 | Pareto |\n|---|---|---:|---:|");
    for (size_t k = 0; k < rep->nproj; k++) fprintf(f, "---:|");
    fprintf(f, "---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < g->nrows; i++) {
        const fds__adv_row *r = &g->rows[i];
        fprintf(f, "| %s%s | %s |", r->name, (int)i == rep->rec ? " **(recommended)**" : "",
                r->settable ? "yes" : "no");
        if (!r->measured) {
            fprintf(f, " not measured (time ran out) |\n");
            continue;
        }
        fprintf(f, " %.2f | %.1f |", r->ratio, r->bytes_per_doc);
        for (size_t k = 0; k < rep->nproj; k++) {
            char hb[32];
            human_bytes(hb, sizeof hb, fds__adv_project(r, rep->projections[k]));
            fprintf(f, " %s |", hb);
        }
        fprintf(f, " %.1f | %.2f | %.1f | %.1f / %.1f | %.1f / %.1f | %s |\n", r->compress_mb_s,
                r->compress_cpu_us_per_doc, r->decode_mb_s, r->fetch1_p50, r->fetch1_p99,
                r->fetch10_p50, r->fetch10_p99, r->pareto ? "yes" : "");
    }
    fprintf(f, "\nMeasured in %.1f s of a %.0f s budget, %u round%s over the configurations%s.\n",
            g->seconds, rep->time_budget, g->rounds, g->rounds == 1 ? "" : "s",
            g->stopped_early ? "; time ran out: the rows marked not measured were skipped "
                               "(a larger --time measures them)"
                             : "");
    if (rep->rec < 0) {
        fprintf(f, "\nNo recommendation: no settable configuration was measured.\n");
        return;
    }
    const fds__adv_row *r = &g->rows[rep->rec];
    char lg[512];
    loadgen_line(lg, sizeof lg, rep);
    fprintf(f, "\nRecommendation: PUT /{index} %s\n%s\n", r->settings, rep->why);
    fprintf(f, "\nCheck it under load: create logs-advised with those settings and the two "
               "baselines (%s, logs-lucene_best_compression) with index.codec alone, load "
               "the same documents into each, force-merge, then run:\n  %s\n",
            r->p.codec == FDS_CODEC_DEFLATE ? "logs-zstd" : "logs-best_compression", lg);
}

/* ---- advice.json ----------------------------------------------------------- */

static cJSON *pair(double p50, double p99)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "p50", p50);
    cJSON_AddNumberToObject(o, "p99", p99);
    return o;
}

static cJSON *row_json(const fds__adv_report *rep, size_t i)
{
    const fds__adv_row *r = &rep->g->rows[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "variant", r->variant);
    cJSON_AddStringToObject(o, "codec", fds_codec_name(r->p.codec));
    if (r->p.codec == FDS_CODEC_ZSTD || r->p.codec == FDS_CODEC_ZSTD_NO_DICT)
        cJSON_AddNumberToObject(o, "level", r->p.level);
    else
        cJSON_AddNullToObject(o, "level");
    cJSON_AddNumberToObject(o, "block_size", r->p.block_size);
    cJSON_AddNumberToObject(o, "max_docs_per_block", r->p.max_docs_per_block);
    cJSON_AddNumberToObject(o, "dict_size", (double)r->dict_size);
    if (r->p.codec == FDS_CODEC_ZSTD || r->p.codec == FDS_CODEC_ZSTD_NO_DICT)
        cJSON_AddNumberToObject(o, "sub_blocks",
                                r->p.sub_blocks ? r->p.sub_blocks : FDS_ZSTD_SUB_BLOCKS_DEFAULT);
    else
        cJSON_AddNullToObject(o, "sub_blocks");
    cJSON_AddBoolToObject(o, "settable", r->settable);
    cJSON_AddItemToObject(o, "settings",
                          r->settable ? cJSON_Parse(r->settings) : cJSON_CreateNull());
    cJSON_AddBoolToObject(o, "measured", r->measured);
    if (!r->measured) return o;
    cJSON_AddNumberToObject(o, "raw_bytes", (double)r->raw_bytes);
    cJSON_AddNumberToObject(o, "stored_bytes", (double)r->stored_bytes);
    cJSON_AddNumberToObject(o, "blocks", (double)r->nblocks);
    cJSON_AddNumberToObject(o, "dict_bytes", (double)r->dict_bytes);
    cJSON_AddNumberToObject(o, "ratio", r->ratio);
    cJSON_AddNumberToObject(o, "bytes_per_doc", r->bytes_per_doc);
    cJSON *pj = cJSON_AddArrayToObject(o, "projected");
    for (size_t k = 0; k < rep->nproj; k++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "docs", (double)rep->projections[k]);
        cJSON_AddNumberToObject(e, "bytes", round(fds__adv_project(r, rep->projections[k])));
        cJSON_AddItemToArray(pj, e);
    }
    cJSON_AddNumberToObject(o, "compress_mb_s", r->compress_mb_s);
    cJSON_AddNumberToObject(o, "compress_cpu_us_per_doc", r->compress_cpu_us_per_doc);
    cJSON_AddNumberToObject(o, "decode_mb_s", r->decode_mb_s);
    cJSON_AddItemToObject(o, "fetch_one_us", pair(r->fetch1_p50, r->fetch1_p99));
    cJSON_AddItemToObject(o, "fetch_ten_us", pair(r->fetch10_p50, r->fetch10_p99));
    cJSON_AddNumberToObject(o, "fetch_samples", (double)r->fetches);
    cJSON_AddNumberToObject(o, "dict_train_cpu_ms", r->dict_train_ms);
    cJSON_AddBoolToObject(o, "pareto", r->pareto);
    return o;
}

int fds__adv_write_json(const char *path, const fds__adv_report *rep)
{
    const fds__adv_grid *g = rep->g;
    const fds__adv_input *in = rep->in;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema_version", 1);
    cJSON *ji = cJSON_AddObjectToObject(root, "input");
    cJSON_AddStringToObject(ji, "path", rep->input_path);
    cJSON_AddStringToObject(ji, "kind", kind_name(in->kind));
    cJSON_AddNumberToObject(ji, "file_bytes", (double)in->file_bytes);
    cJSON_AddNumberToObject(ji, "lines_read", (double)in->lines_read);
    cJSON_AddNumberToObject(ji, "unparsable_lines", (double)in->unparsable);
    cJSON_AddNumberToObject(ji, "sample_docs", (double)in->docs.n);
    cJSON_AddNumberToObject(ji, "sample_raw_bytes", (double)in->docs.len);
    cJSON_AddNumberToObject(ji, "last_sampled_line", (double)in->last_sampled_line);
    cJSON_AddNumberToObject(ji, "docs_total", (double)in->docs_total);
    cJSON_AddBoolToObject(ji, "docs_total_estimated", in->estimated);
    cJSON *u = cJSON_AddObjectToObject(root, "units");
    cJSON_AddStringToObject(u, "ratio", "raw_bytes / stored_bytes (blocks as fds_block_encode writes them)");
    cJSON_AddStringToObject(u, "bytes_per_doc", "(stored_bytes + 16 * blocks) / sample_docs");
    cJSON_AddStringToObject(u, "projected", "bytes_per_doc * docs + dict_bytes");
    cJSON_AddStringToObject(u, "mb_s", "1e6 raw bytes per second of thread CPU time, the fastest whole pass over the sample of all rounds");
    cJSON_AddStringToObject(u, "fetch_us", "thread CPU microseconds per call (less the clock reading cost): one document, or ten random documents");
    cJSON_AddNumberToObject(root, "time_budget_s", rep->time_budget);
    cJSON_AddNumberToObject(root, "seconds", g->seconds);
    cJSON_AddBoolToObject(root, "stopped_early", g->stopped_early);
    cJSON_AddNumberToObject(root, "rounds", g->rounds);
    cJSON_AddNumberToObject(root, "seed", (double)g->seed);
    cJSON *pd = cJSON_AddArrayToObject(root, "projection_docs");
    for (size_t k = 0; k < rep->nproj; k++)
        cJSON_AddItemToArray(pd, cJSON_CreateNumber((double)rep->projections[k]));
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    cJSON *front = cJSON_AddArrayToObject(root, "pareto");
    for (size_t i = 0; i < g->nrows; i++) {
        cJSON_AddItemToArray(rows, row_json(rep, i));
        if (g->rows[i].pareto) cJSON_AddItemToArray(front, cJSON_CreateString(g->rows[i].name));
    }
    if (rep->rec >= 0) {
        const fds__adv_row *r = &g->rows[rep->rec];
        cJSON *rc = cJSON_AddObjectToObject(root, "recommendation");
        cJSON_AddStringToObject(rc, "row", r->name);
        cJSON_AddStringToObject(rc, "request", "PUT /{index}");
        cJSON_AddItemToObject(rc, "body", cJSON_Parse(r->settings));
        cJSON_AddStringToObject(rc, "why", rep->why);
        char lg[512];
        loadgen_line(lg, sizeof lg, rep);
        cJSON_AddStringToObject(rc, "loadgen", lg);
    } else {
        cJSON_AddNullToObject(root, "recommendation");
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return FDS_ENOMEM;
    FILE *f = fopen(path, "w");
    int rc = 0;
    if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0) rc = FDS_EIO;
    if (f && fclose(f)) rc = FDS_EIO;
    free(text);
    return rc;
}

/* ---- the Pareto SVG ---------------------------------------------------------- */

#define SVG_W 860
#define SVG_H 520
#define SVG_L 90   /* left margin: y tick labels */
#define SVG_R 230  /* right margin: the legend of points */
#define SVG_T 50
#define SVG_B 60

/* Log-scale axis bounds: the 1-2-5 values at or below lo and at or above
 * hi (lo, hi > 0). */
static double tick_floor(double v)
{
    double p = pow(10, floor(log10(v)));
    return v >= 5 * p ? 5 * p : v >= 2 * p ? 2 * p : p;
}

static double tick_ceil(double v)
{
    double p = pow(10, floor(log10(v)));
    return v <= p ? p : v <= 2 * p ? 2 * p : v <= 5 * p ? 5 * p : 10 * p;
}

/* The next 1-2-5 value above v (v itself a 1-2-5 value). */
static double tick_next(double v)
{
    double p = pow(10, floor(log10(v) + 1e-9)), m = v / p;
    return (m < 1.5 ? 2 : m < 3.5 ? 5 : 10) * p;
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

typedef struct pt { double x, y; size_t i; } pt;

static int cmp_pt(const void *a, const void *b)
{
    const pt *p = a, *q = b;
    return (p->x > q->x) - (p->x < q->x);
}

int fds__adv_write_svg(const char *path, const fds__adv_report *rep)
{
    const fds__adv_grid *g = rep->g;
    pt pts[FDS_ADVISE_MAX_ROWS];
    size_t n = 0;
    double x0 = INFINITY, x1 = 0, y0 = INFINITY, y1 = 0;
    for (size_t i = 0; i < g->nrows; i++) {
        const fds__adv_row *r = &g->rows[i];
        if (!r->measured) continue;
        pts[n] = (pt){r->fetch1_p50, r->bytes_per_doc, i};
        x0 = fmin(x0, pts[n].x);
        x1 = fmax(x1, pts[n].x);
        y0 = fmin(y0, pts[n].y);
        y1 = fmax(y1, pts[n].y);
        n++;
    }
    FILE *f = fopen(path, "w");
    if (!f) return FDS_EIO;
    int pw = SVG_W - SVG_L - SVG_R, ph = SVG_H - SVG_T - SVG_B;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">Stored fields "
               "per document against one-doc fetch time (Pareto front in blue)</text>\n",
            SVG_W, SVG_H, SVG_W, SVG_H, SVG_L);
    if (n == 0) {
        fprintf(f, "<text x=\"%d\" y=\"%d\">no configuration measured</text>\n", SVG_L, SVG_H / 2);
    } else {
        /* log scales: fetch times and sizes span more than a decade */
        double xmin = tick_floor(fmax(x0, 0.01)), xmax = tick_ceil(fmax(x1, 0.01));
        double ymin = tick_floor(fmax(y0, 0.01)), ymax = tick_ceil(fmax(y1, 0.01));
        if (xmax <= xmin) xmax = tick_next(xmin);
        if (ymax <= ymin) ymax = tick_next(ymin);
#define PX(v) (SVG_L + log(fmax(v, xmin) / xmin) / log(xmax / xmin) * pw)
#define PY(v) (SVG_T + ph - log(fmax(v, ymin) / ymin) / log(ymax / ymin) * ph)
        fprintf(f, "<g stroke=\"#ddd\">\n");
        for (double v = xmin; v <= xmax * 1.001; v = tick_next(v))
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", PX(v), SVG_T, PX(v),
                    SVG_T + ph);
        for (double v = ymin; v <= ymax * 1.001; v = tick_next(v))
            fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", SVG_L, PY(v),
                    SVG_L + pw, PY(v));
        fprintf(f, "</g>\n<g fill=\"#333\">\n");
        for (double v = xmin; v <= xmax * 1.001; v = tick_next(v))
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", PX(v),
                    SVG_T + ph + 18, v);
        for (double v = ymin; v <= ymax * 1.001; v = tick_next(v))
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", SVG_L - 6,
                    PY(v) + 4, v);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">one-doc fetch p50 (us, log "
                   "scale)</text>\n"
                   "<text transform=\"translate(20 %d) rotate(-90)\" text-anchor=\"middle\">stored "
                   "fields (bytes per document, log scale)</text>\n</g>\n",
                SVG_L + pw / 2, SVG_H - 18, SVG_T + ph / 2);
        qsort(pts, n, sizeof *pts, cmp_pt);
        fprintf(f, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"");
        for (size_t k = 0; k < n; k++)
            if (g->rows[pts[k].i].pareto) fprintf(f, "%.1f,%.1f ", PX(pts[k].x), PY(pts[k].y));
        fprintf(f, "\"/>\n");
        for (size_t k = 0; k < n; k++) {
            const fds__adv_row *r = &g->rows[pts[k].i];
            bool rec = (int)pts[k].i == rep->rec;
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\" stroke=\"%s\" "
                       "stroke-width=\"2\"><title>",
                    PX(pts[k].x), PY(pts[k].y), rec ? 7 : 5, r->pareto ? "#1f77b4" : "#aaa",
                    rec ? "#d62728" : "none");
            xml_text(f, r->name);
            fprintf(f, "</title></circle>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">%zu</text>\n",
                    PX(pts[k].x) + 7, PY(pts[k].y) - 5, r->pareto ? "#1f77b4" : "#777", pts[k].i + 1);
        }
        /* legend: row numbers */
        for (size_t i = 0, line = 0; i < g->nrows; i++) {
            const fds__adv_row *r = &g->rows[i];
            if (!r->measured) continue;
            fprintf(f, "<text x=\"%d\" y=\"%zu\" font-size=\"10\" fill=\"%s\"%s>%zu ",
                    SVG_W - SVG_R + 12, SVG_T + 6 + 14 * line++,
                    (int)i == rep->rec ? "#d62728" : r->pareto ? "#1f77b4" : "#555",
                    (int)i == rep->rec ? " font-weight=\"bold\"" : "", i + 1);
            xml_text(f, r->name);
            fprintf(f, "</text>\n");
        }
#undef PX
#undef PY
    }
    fprintf(f, "</svg>\n");
    return fclose(f) ? FDS_EIO : 0;
}
