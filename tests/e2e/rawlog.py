"""The bundled nginx log read straight from its text (the combined log
format), so e2e tests check the server's figures against values computed
without the project's converter."""
import datetime
import re

LINE = re.compile(r'^(\S+) \S+ \S+ \[([^\]]+)\] "([^"]*)" (\d{3}) (\d+|-) '
                  r'"([^"]*)" "([^"]*)"(?: "([^"]*)")?')


def parse(path):
    """One dict per line: t (epoch ms), ip, method, url, status, bytes,
    ref, ua, xff (None for "-")."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            t = datetime.datetime.strptime(m.group(2), "%d/%b/%Y:%H:%M:%S %z")
            req = m.group(3).split(" ")
            out.append({"t": int(t.timestamp() * 1000), "ip": m.group(1),
                        "method": req[0], "url": req[1] if len(req) > 1 else "",
                        "status": int(m.group(4)),
                        "bytes": 0 if m.group(5) == "-" else int(m.group(5)),
                        "ref": m.group(6), "ua": m.group(7),
                        "xff": m.group(8) if m.group(8) not in (None, "-") else None})
    return out
