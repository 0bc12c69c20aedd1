#!/usr/bin/env python3
"""Distinct-value growth (Heaps' law) of a real log, and of synthlogs beside it.

usage:
  heaps.py SAMPLE.log
      the distinct counts of url, remote_addr, user_agent and referrer after
      N/10, N/5, N/2 and N lines of the log, the fitted law D(n) = K n^beta
      per field (least squares of log D over log n), and the law at 1M, 10M.
  heaps.py SAMPLE.log --stats STATS [--check LO HI] [--band PCT]
      STATS is the stderr of `synthlogs --stats` (or - for stdin): each of
      its rows beside the sample's law, with the deviation in percent.  With
      --check, exit 1 unless every row with LO <= docs <= HI is within
      +-PCT % (default 15) of the law for all four fields.

The log is read as nginx combined format (as datasets/logparse.h accepts it);
unparsable lines are skipped and counted.
"""
import math
import re
import sys

FIELDS = ("url", "remote_addr", "user_agent", "referrer")
LINE = re.compile(r'^(\S+) \S+ \S+ \[[^\]]*\] "((?:[^"\\]|\\.)*)" \d{3} \S+ '
                  r'"((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"')


def url_of(request):
    """The request target, as fds_logparse splits "METHOD TARGET PROTO"."""
    if request in ("-", ""):
        return "-"
    sp = request.find(" ")
    if sp < 0:
        return request
    rest = request[sp + 1:]
    last = rest.rfind(" ")
    if last >= 0 and rest[last + 1:].startswith("HTTP/"):
        return rest[:last]
    return rest


def read_log(path):
    rows, bad = [], 0
    with open(path, "rb") as f:
        for raw in f:
            m = LINE.match(raw.decode("latin-1").rstrip("\r\n"))
            if not m:
                bad += 1
                continue
            addr, req, ref, agent = m.groups()
            rows.append((url_of(req), addr, agent, ref))
    return rows, bad


def growth(rows, points):
    """Distinct counts per field after each number of lines in points."""
    seen = [set() for _ in FIELDS]
    out, want = [], sorted(points)
    for i, row in enumerate(rows, 1):
        for s, v in zip(seen, row):
            s.add(v)
        while want and want[0] == i:
            out.append((i, [len(s) for s in seen]))
            want.pop(0)
    return out


def fit(table):
    """(K, beta) per field by least squares of log D over log n."""
    xs = [math.log(n) for n, _ in table]
    mx = sum(xs) / len(xs)
    laws = []
    for f in range(len(FIELDS)):
        ys = [math.log(c[f]) for _, c in table]
        my = sum(ys) / len(ys)
        beta = (sum((x - mx) * (y - my) for x, y in zip(xs, ys)) /
                sum((x - mx) ** 2 for x in xs))
        laws.append((math.exp(my - beta * mx), beta))
    return laws


def sample_law(path):
    rows, bad = read_log(path)
    n = len(rows)
    if n < 20:
        sys.exit(f"heaps.py: {path}: only {n} parsable lines")
    table = growth(rows, [n // 10, n // 5, n // 2, n])
    return table, fit(table), bad


def law_at(laws, n):
    return [k * n ** b for k, b in laws]


def read_stats(path):
    """The rows of a `synthlogs --stats` table in file path (- for stdin)."""
    return parse_stats(sys.stdin.read() if path == "-" else open(path).read())


def parse_stats(text):
    """[(docs, [url, remote_addr, user_agent, referrer])] of --stats text."""
    rows = []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 5 and parts[0].isdigit():
            rows.append((int(parts[0]), [int(p) for p in parts[1:]]))
    return rows


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    table, laws, bad = sample_law(argv[1])
    head = "| lines | " + " | ".join(FIELDS) + " |"
    if "--stats" not in argv:
        print(head)
        print("|---:|" + "---:|" * len(FIELDS))
        for n, c in table:
            print(f"| {n:,} | " + " | ".join(f"{v:,}" for v in c) + " |")
        print("| fitted beta | " + " | ".join(f"{b:.2f}" for _, b in laws) + " |")
        print("| fitted K | " + " | ".join(f"{k:.3f}" for k, _ in laws) + " |")
        for n in (10**6, 10**7):
            print(f"| {n:,} by the law | " +
                  " | ".join(f"{v:,.0f}" for v in law_at(laws, n)) + " |")
        if bad:
            print(f"({bad} unparsable lines skipped)")
        return 0
    stats = read_stats(argv[argv.index("--stats") + 1])
    lo = hi = None
    if "--check" in argv:
        k = argv.index("--check")
        lo, hi = int(argv[k + 1]), int(argv[k + 2])
    band = float(argv[argv.index("--band") + 1]) if "--band" in argv else 15.0
    print("| docs | " + " | ".join(f"{f} (law, dev)" for f in FIELDS) + " |")
    print("|---:|" + "---:|" * len(FIELDS))
    failed, checked = [], 0
    for n, counts in stats:
        law = law_at(laws, n)
        cells = []
        for f, (c, w) in enumerate(zip(counts, law)):
            dev = 100.0 * (c - w) / w
            cells.append(f"{c:,} ({w:,.0f}, {dev:+.1f}%)")
            if lo is not None and lo <= n <= hi and abs(dev) > band:
                failed.append(f"{FIELDS[f]} at {n}: {c} vs {w:.0f} ({dev:+.1f}%)")
        if lo is not None and lo <= n <= hi:
            checked += 1
        print(f"| {n:,} | " + " | ".join(cells) + " |")
    if lo is not None:
        if checked == 0:
            print(f"FAIL: no --stats row between {lo} and {hi}")
            return 1
        if failed:
            print("FAIL: outside +-%g%%: %s" % (band, "; ".join(failed)))
            return 1
        print(f"ok: {checked} rows within +-{band:g}% of the sample's law")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
