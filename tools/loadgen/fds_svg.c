/*
 * fds_svg.c: grouped bar charts as SVG (see fds_svg.h).
 */
#include "fds_svg.h"

#include "fds_error.h"

#include <math.h>
#include <stdio.h>

#define W 760
#define H 420
#define ML 80  /* left margin: y ticks and label */
#define MR 20
#define MT 50  /* title */
#define MB 80  /* x labels and legend */

static const char *colors[FDS_SVG_MAX_SERIES] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                                 "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

static void esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static double nice_step(double max, int ticks)
{
    double raw = max / ticks;
    if (raw <= 0)
        return 1;
    double mag = pow(10, floor(log10(raw)));
    double r = raw / mag;
    double step = r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10;
    return step * mag;
}

static void fmt_val(char *buf, size_t n, double v)
{
    if (v >= 100 || v == floor(v))
        snprintf(buf, n, "%.0f", v);
    else if (v >= 10)
        snprintf(buf, n, "%.1f", v);
    else
        snprintf(buf, n, "%.3g", v);
}

int fds_svg_write_bars(const char *path, const fds_svg_bars *c)
{
    if (c->ngroups < 1 || c->ngroups > FDS_SVG_MAX_GROUPS || c->nseries < 1 ||
        c->nseries > FDS_SVG_MAX_SERIES)
        return FDS_EINVAL;
    FILE *f = fopen(path, "w");
    if (!f)
        return FDS_EIO;
    double max = 0;
    for (int s = 0; s < c->nseries; s++)
        for (int g = 0; g < c->ngroups; g++)
            if (c->values[s][g] > max)
                max = c->values[s][g];
    double step = nice_step(max > 0 ? max : 1, 5);
    double top = ceil((max > 0 ? max : 1) / step) * step;
    double pw = W - ML - MR, ph = H - MT - MB;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, H, W, H);
    fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">", W / 2);
    esc(f, c->title);
    fputs("</text>\n", f);
    /* y axis, grid and ticks */
    for (double v = 0; v <= top + step / 2; v += step) {
        double y = MT + ph - v / top * ph;
        char lab[32];
        fmt_val(lab, sizeof lab, v);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", ML,
                y, ML + pw, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML - 6, y + 4, lab);
    }
    fprintf(f,
            "<text transform=\"translate(18,%.1f) rotate(-90)\" text-anchor=\"middle\">",
            MT + ph / 2);
    esc(f, c->y_label);
    fputs("</text>\n", f);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n", ML, MT, ML,
            MT + ph);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", ML,
            MT + ph, ML + pw, MT + ph);
    /* bars */
    double gw = pw / c->ngroups;
    double bw = gw * 0.8 / c->nseries;
    for (int g = 0; g < c->ngroups; g++) {
        double gx = ML + g * gw + gw * 0.1;
        for (int s = 0; s < c->nseries; s++) {
            double v = c->values[s][g];
            if (v < 0)
                continue;
            double h = v / top * ph;
            double x = gx + s * bw;
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                    "<title>",
                    x, MT + ph - h, bw - 2, h, colors[s]);
            esc(f, c->series[s]);
            char lab[32];
            fmt_val(lab, sizeof lab, v);
            fprintf(f, ": %s</title></rect>\n", lab);
            fprintf(f,
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">%s</text>\n",
                    x + (bw - 2) / 2, MT + ph - h - 3, lab);
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", ML + g * gw + gw / 2,
                MT + ph + 18);
        esc(f, c->groups[g]);
        fputs("</text>\n", f);
    }
    /* legend */
    double lx = ML;
    for (int s = 0; s < c->nseries; s++) {
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", lx,
                H - 30, colors[s]);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">", lx + 16, H - 20);
        esc(f, c->series[s]);
        fputs("</text>\n", f);
        lx += 220;
    }
    fputs("</svg>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return FDS_EIO;
    return 0;
}
