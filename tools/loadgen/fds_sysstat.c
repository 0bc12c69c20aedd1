/*
 * fds_sysstat.c: /proc readers and the background CPU load (see
 * fds_sysstat.h for the conventions and sources).
 */
#include "fds_sysstat.h"

#include "fds_error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FDS_BG_PERIOD_NS 10000000L /* built-in burner duty-cycle period: 10 ms */
#define FDS_BG_MAX_WORKERS 256
#define FDS_BG_START_CHECK_NS 100000000L /* stress-ng must still run 100 ms after start */

static double tick_seconds(void)
{
    static double t;
    if (t == 0.0) {
        long hz = sysconf(_SC_CLK_TCK);
        t = 1.0 / (double)(hz > 0 ? hz : 100);
    }
    return t;
}

int fds_sysstat_ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Read /proc/<pid>/stat; fill utime+stime (ticks) and pgrp. */
static int read_stat(pid_t pid, unsigned long long *ticks, long *pgrp)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return FDS_ENOTFOUND;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* comm (field 2) may contain spaces and ')': fields resume after the last ')' */
    char *p = strrchr(buf, ')');
    if (!p)
        return FDS_EPARSE;
    char state;
    long ppid, pg;
    unsigned long long ut, st;
    /* fields 3..15: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (sscanf(p + 1, " %c %ld %ld %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, &ppid, &pg,
               &ut, &st) != 5)
        return FDS_EPARSE;
    *ticks = ut + st;
    if (pgrp)
        *pgrp = pg;
    return 0;
}

int fds_sysstat_proc_cpu(pid_t pid, double *seconds)
{
    unsigned long long t;
    int rc = read_stat(pid, &t, NULL);
    if (rc)
        return rc;
    *seconds = (double)t * tick_seconds();
    return 0;
}

int fds_sysstat_pgrp_cpu(pid_t pgid, double *seconds, int *nproc)
{
    DIR *d = opendir("/proc");
    if (!d)
        return FDS_EIO;
    unsigned long long sum = 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        unsigned long long t;
        long pg;
        if (read_stat((pid_t)pid, &t, &pg) == 0 && pg == (long)pgid) {
            sum += t;
            n++;
        }
    }
    closedir(d);
    *seconds = (double)sum * tick_seconds();
    if (nproc)
        *nproc = n;
    return 0;
}

int fds_sysstat_system_cpu(fds_sysstat_cpu *out)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return FDS_EIO;
    unsigned long long v[10] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
    fclose(f);
    if (n < 4)
        return FDS_EPARSE;
    /* user nice system idle iowait irq softirq steal guest guest_nice;
     * guest time is already included in user, so it is not added again */
    unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    unsigned long long idle = v[3] + v[4];
    out->busy = (double)busy * tick_seconds();
    out->total = (double)(busy + idle) * tick_seconds();
    return 0;
}

double fds_sysstat_system_percent(const fds_sysstat_cpu *a, const fds_sysstat_cpu *b)
{
    double dt = b->total - a->total;
    if (dt <= 0)
        return 0.0;
    return (b->busy - a->busy) / dt * 100.0 * fds_sysstat_ncpu();
}

int fds_sysstat_loadavg(double out[3])
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return FDS_EIO;
    int n = fscanf(f, "%lf %lf %lf", &out[0], &out[1], &out[2]);
    fclose(f);
    return n == 3 ? 0 : FDS_EPARSE;
}

struct fds_sysstat_bg {
    pid_t pgid;
    int workers;
    int load;
    int builtin;
    pid_t pids[FDS_BG_MAX_WORKERS];
    int npids;
};

static int on_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    char buf[4096];
    const char *p = path;
    while (*p) {
        const char *c = strchr(p, ':');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)len, p, prog);
        if (access(buf, X_OK) == 0)
            return 1;
        if (!c)
            break;
        p = c + 1;
    }
    return 0;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A burner process: busy for load% of each 10 ms period, asleep the rest,
 * until `seconds` have passed or it is signalled. */
static void burner(int load, double seconds)
{
    double end = mono() + seconds;
    double period = FDS_BG_PERIOD_NS / 1e9;
    double next = mono();
    volatile unsigned long long sink = 0;
    while (mono() < end) {
        double busy_until = next + period * load / 100.0;
        while (mono() < busy_until)
            for (int i = 0; i < 1000; i++)
                sink += (unsigned long long)i * i;
        next += period;
        double now = mono();
        if (next > now && load < 100) {
            struct timespec ts = {0, (long)((next - now) * 1e9)};
            nanosleep(&ts, NULL);
        } else if (next < now) {
            next = now;
        }
    }
    _exit(0);
}

fds_sysstat_bg *fds_sysstat_bg_start(const char *spec, double seconds, char *msg, size_t msglen)
{
    int cpu = -1, load = 100, builtin = 0;
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", spec);
    for (char *tok = strtok(tmp, ","); tok; tok = strtok(NULL, ",")) {
        if (sscanf(tok, "cpu=%d", &cpu) == 1)
            continue;
        if (sscanf(tok, "load=%d", &load) == 1)
            continue;
        if (strcmp(tok, "tool=builtin") == 0) {
            builtin = 1;
            continue;
        }
        if (strcmp(tok, "tool=stress-ng") == 0)
            continue;
        snprintf(msg, msglen, "bad --background item '%s' (expected cpu=N,load=P[,tool=builtin])",
                 tok);
        return NULL;
    }
    if (cpu < 1 || cpu > FDS_BG_MAX_WORKERS || load < 1 || load > 100) {
        snprintf(msg, msglen, "--background needs cpu=1..%d and load=1..100, got '%s'",
                 FDS_BG_MAX_WORKERS, spec);
        return NULL;
    }
    fds_sysstat_bg *bg = calloc(1, sizeof *bg);
    if (!bg) {
        snprintf(msg, msglen, "out of memory");
        return NULL;
    }
    bg->workers = cpu;
    bg->load = load;
    bg->builtin = builtin || !on_path("stress-ng");
    if (!bg->builtin) {
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(msg, msglen, "fork failed: %s", strerror(errno));
            free(bg);
            return NULL;
        }
        if (pid == 0) {
            setpgid(0, 0);
            /* stress-ng warns on stderr when stopped before its timeout,
             * which is how every run ends: keep the terminal clean */
            int devnull = open("/dev/null", O_WRONLY);
            if (devnull >= 0) {
                dup2(devnull, 1);
                dup2(devnull, 2);
            }
            char ncpu[16], nload[16], tmo[32];
            snprintf(ncpu, sizeof ncpu, "%d", cpu);
            snprintf(nload, sizeof nload, "%d", load);
            snprintf(tmo, sizeof tmo, "%ds", (int)seconds + 1);
            execlp("stress-ng", "stress-ng", "--cpu", ncpu, "--cpu-load", nload, "--timeout", tmo,
                   "--quiet", (char *)NULL);
            _exit(127);
        }
        setpgid(pid, pid);
        bg->pgid = pid;
        bg->pids[bg->npids++] = pid;
        /* if stress-ng could not start (exec failure, bad option), use the
         * built-in burners rather than run without the load asked for */
        struct timespec ts = {0, FDS_BG_START_CHECK_NS};
        nanosleep(&ts, NULL);
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            bg->npids = 0;
            bg->pgid = 0;
            bg->builtin = 1;
        }
    }
    if (bg->builtin) {
        for (int i = 0; i < cpu; i++) {
            pid_t pid = fork();
            if (pid < 0)
                break;
            if (pid == 0) {
                setpgid(0, bg->pgid ? bg->pgid : 0);
                burner(load, seconds);
            }
            if (!bg->pgid)
                bg->pgid = pid;
            setpgid(pid, bg->pgid);
            bg->pids[bg->npids++] = pid;
        }
        if (!bg->npids) {
            snprintf(msg, msglen, "could not start built-in burners: %s", strerror(errno));
            free(bg);
            return NULL;
        }
    }
    return bg;
}

double fds_sysstat_bg_cpu(fds_sysstat_bg *bg)
{
    double s = 0;
    if (bg)
        fds_sysstat_pgrp_cpu(bg->pgid, &s, NULL);
    return s;
}

const char *fds_sysstat_bg_tool(const fds_sysstat_bg *bg)
{
    return bg->builtin ? "builtin" : "stress-ng";
}

int fds_sysstat_bg_workers(const fds_sysstat_bg *bg)
{
    return bg->workers;
}

int fds_sysstat_bg_load(const fds_sysstat_bg *bg)
{
    return bg->load;
}

void fds_sysstat_bg_stop(fds_sysstat_bg *bg)
{
    if (!bg)
        return;
    kill(-bg->pgid, SIGTERM);
    for (int i = 0; i < bg->npids; i++) {
        /* give each up to ~2 s, then SIGKILL the group */
        for (int t = 0; t < 200; t++) {
            int st;
            pid_t r = waitpid(bg->pids[i], &st, WNOHANG);
            if (r == bg->pids[i] || (r < 0 && errno == ECHILD))
                break;
            if (t == 199) {
                kill(-bg->pgid, SIGKILL);
                waitpid(bg->pids[i], &st, 0);
            }
            struct timespec ts = {0, 10000000L};
            nanosleep(&ts, NULL);
        }
    }
    free(bg);
}
