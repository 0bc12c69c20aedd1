/*
 * check_index.c: `fieldstore check-index`, the way back from a damaged
 * segment (Lucene's CheckIndex -exorcise, Elasticsearch's
 * `elasticsearch-shard remove-corrupted-data`).
 *
 *   fieldstore check-index [--data DIR] [--exorcise] [INDEX...]
 *
 * On a stopped node only: it takes DATA/node.lock and refuses while a
 * server holds it.  It opens the data directory as the server does
 * (fds_store_open: translogs replayed into memory, nothing written) and
 * runs fds_index_check on each INDEX (default: every index), printing
 * every segment's verdict and, per index, the documents the repair of
 * its damage loses.  With --exorcise it repairs (one catalogue
 * transaction: the documents of damaged stored-fields blocks marked
 * deleted, segments damaged elsewhere dropped; then the dropped files and
 * the corruption marker go) and prints the documents lost; the index is
 * green at the next start.
 *
 * Exit status: 0 every index checked is whole (or was repaired), 1 damage
 * remains (found without --exorcise, or not repairable by dropping
 * segments), 2 a usage error or the data directory cannot be read.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "store.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fieldstore check-index [--data DIR] [--exorcise] [INDEX...]\n"
            "  Verifies every segment of each INDEX (default: every index) of a\n"
            "  stopped node: catalogue row checksums, the .fdt and .tim checksums\n"
            "  and layouts, and every stored-fields block decoded in full.\n"
            "  --data DIR   data directory (default ./data)\n"
            "  --exorcise   repair: delete the documents of damaged stored-fields\n"
            "               blocks, drop segments damaged elsewhere (the documents\n"
            "               lost are counted and printed); the index is green at\n"
            "               the next start.  Back up DIR first.\n"
            "  --help       this text\n"
            "exit status: 0 whole or repaired, 1 damage remains, 2 error\n");
}

/* The repair of c as the report names it. */
static const char *repair_name(const fds_check_segment *c, bool done)
{
    switch (c->repair) {
    case FDS_CHECK_DROP: return done ? "dropped" : "drop the segment";
    case FDS_CHECK_DELETE_DOCS:
        return done ? "the damaged blocks' documents deleted"
                    : "delete the damaged blocks' documents";
    default:
        return "none here (a dictionary the catalogue lacks, or a file that "
               "cannot be read: see the reason)";
    }
}

/* Print the verdicts of one index's report; true when damage remains. */
static bool print_report(const fds_check_report *rep, bool exorcise)
{
    printf("index [%s] (indices/%s):\n", rep->index, rep->uuid);
    size_t unrepairable = 0;
    for (size_t i = 0; i < rep->nsegs; i++) {
        const fds_check_segment *c = &rep->segs[i];
        char live[32];
        if (c->live_docs >= 0)
            snprintf(live, sizeof live, "%lld", (long long)c->live_docs);
        else
            snprintf(live, sizeof live, "unknown");
        printf("  seg_%llu shard %lld: %lld docs, %s live: ",
               (unsigned long long)c->gen, (long long)c->shard,
               (long long)c->max_doc, live);
        if (!c->damaged)
            printf("ok");
        else
            printf("DAMAGED: %s", c->reason);
        if (c->bad_blocks)
            printf(" [%u damaged stored-fields block(s)%s]", c->bad_blocks,
                   c->dead_blocks == c->bad_blocks ? ", holding only deleted "
                                                     "documents" : "");
        if (c->damaged && c->docs_lost >= 0)
            printf("; repair: %s, %lld documents lost", repair_name(c, rep->exorcised),
                   (long long)c->docs_lost);
        else if (c->damaged)
            printf("; repair: %s, up to %lld documents lost",
                   repair_name(c, rep->exorcised), (long long)c->max_doc);
        printf("\n");
        unrepairable += c->damaged && c->repair == FDS_CHECK_KEEP;
    }
    if (rep->marker)
        printf("  corruption marker: %s\n", rep->marker);
    bool other = rep->failure && !rep->ndamaged && !rep->marker;
    if (other) /* failed for what no segment shows: a catalogue row */
        printf("  failed at start-up: %s\n"
               "  (no segment is damaged; this is not repaired here)\n",
               rep->failure);
    if (unrepairable)
        printf("  %zu segment(s) need a dictionary the catalogue lacks or a "
               "file that cannot be read; dropping them could lose whole "
               "documents, so they are kept\n", unrepairable);
    if (!rep->ndamaged && !rep->marker) {
        printf("  %zu segment(s), no damage: %llu live documents\n", rep->nsegs,
               (unsigned long long)rep->live_kept);
        return other;
    }
    char unknown[96] = "";
    if (rep->docs_lost_unknown)
        snprintf(unknown, sizeof unknown, " (and up to %llu more whose live "
                 "docs are unknown)", (unsigned long long)rep->docs_lost_unknown);
    if (rep->exorcised) {
        printf("  repaired %zu damaged segment(s): documents lost: %llu%s, "
               "documents kept: %llu\n", rep->ndamaged - unrepairable,
               (unsigned long long)rep->docs_lost, unknown,
               (unsigned long long)rep->live_kept);
        printf("  the translog (operations not yet in any segment) is kept and "
               "replayed at the next start; no lost document was in it\n");
        return unrepairable > 0 || other;
    }
    printf("  %zu of %zu segment(s) damaged: the repair loses documents: "
           "%llu%s, keeps %llu\n", rep->ndamaged, rep->nsegs,
           (unsigned long long)rep->docs_lost, unknown,
           (unsigned long long)rep->live_kept);
    if (!exorcise)
        printf("  run again with --exorcise on the stopped node to repair "
               "(back up the data directory first)\n");
    return true;
}

int fds_check_index_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"data", required_argument, NULL, 'd'},
        {"exorcise", no_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *data = "./data";
    bool exorcise = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd': data = optarg; break;
        case 'x': exorcise = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    char cat[4096];
    struct stat st;
    snprintf(cat, sizeof cat, "%s/catalog.sqlite", data);
    if (stat(cat, &st) != 0) {
        fprintf(stderr, "fieldstore check-index: no data directory at [%s] "
                        "(no catalog.sqlite)\n", data);
        return 2;
    }
    if (fds_cli_lock_data_dir(data))
        return 2; /* a running server holds it: stop it first */
    fds_err err;
    fds_err_clear(&err);
    fds_store *s = NULL;
    if (fds_store_open(data, &s, &err)) {
        fprintf(stderr, "fieldstore check-index: cannot open [%s]: %s\n", data,
                err.reason[0] ? err.reason : fds_strerror(err.code));
        return 2;
    }
    char **names = NULL;
    size_t n = 0;
    bool all = optind >= argc;
    if (all && fds_store_list_indices(s, &names, &n)) {
        fds_store_close(s);
        return 2;
    }
    int status = 0;
    size_t count = all ? n : (size_t)(argc - optind);
    for (size_t i = 0; i < count; i++) {
        const char *name = all ? names[i] : argv[optind + (int)i];
        fds_check_report rep;
        fds_err_clear(&err);
        if (fds_index_check(s, name, exorcise, &rep, &err)) {
            fprintf(stderr, "fieldstore check-index: [%s]: %s\n", name,
                    err.reason[0] ? err.reason : fds_strerror(err.code));
            status = 2;
        } else if (print_report(&rep, exorcise) && status == 0) {
            status = 1;
        }
        fds_check_report_free(&rep);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    fds_store_close(s);
    return status;
}
