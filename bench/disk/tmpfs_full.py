#!/usr/bin/env python3
"""The full-disk scenario of a user on a small volume, measured end to end.

A 60 MiB tmpfs holds the data directory and a 15 MiB ballast file.  A
`_bulk` load (1,000 synthetic access-log documents a request, default
settings) runs until 30 requests in a row are refused; then the script
reports what a user sees: acknowledged documents, `_count`, `_refresh`,
free space.  It then frees the ballast (15 MiB) and, without a restart,
reports `_refresh` and `_count` again; fills the disk to 0 bytes free and
deletes the index; and reports the catalogue's size after the delete.

Usage (as root, for mount): bench/disk/tmpfs_full.py FIELDSTORE [OUT.json]
Prints one JSON object (and writes it to OUT.json when given).
"""
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20
TMPFS_SIZE = "60m"
BALLAST = 15 * MIB
DOCS_PER_BULK = 1000
REFUSED_IN_A_ROW = 30
MAX_BULKS = 2000


def request(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    hdr = {}
    if body is not None:
        if not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        hdr["Content-Type"] = "application/x-ndjson" if path.endswith("_bulk") else "application/json"
    c.request(method, path, body=body, headers=hdr)
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        return r.status, json.loads(data)
    except ValueError:
        return r.status, data.decode(errors="replace")


def doc(rng, i):
    return {"@timestamp": "2024-01-01T00:%02d:%02d+00:00" % (i // 60 % 60, i % 60),
            "remote_addr": "10.%d.%d.%d" % (rng.randrange(256), rng.randrange(256), rng.randrange(256)),
            "method": rng.choice(["GET", "POST", "PUT"]),
            "url": "/api/v%d/items/%d?q=%x" % (rng.randrange(3), rng.randrange(100000), rng.getrandbits(40)),
            "status": rng.choice([200, 200, 200, 301, 404, 500]),
            "body_bytes_sent": rng.randrange(100000),
            "user_agent": "Mozilla/5.0 (X11; Linux x86_64) build/%d" % rng.randrange(1000),
            "request_id": "%032x" % rng.getrandbits(128)}


def free_bytes(path):
    v = os.statvfs(path)
    return v.f_bavail * v.f_frsize


def catalogue_bytes(data):
    return sum(os.path.getsize(os.path.join(data, f)) for f in os.listdir(data)
               if f.startswith("catalog.sqlite"))


def main():
    server = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else None
    top = tempfile.mkdtemp(prefix="fds-tmpfs-")
    mnt = os.path.join(top, "mnt")
    os.mkdir(mnt)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + TMPFS_SIZE, "tmpfs", mnt], check=True)
    res = {}
    proc = None
    try:
        ballast = os.path.join(mnt, "ballast")
        with open(ballast, "wb") as f:
            f.write(b"\0" * BALLAST)
        data = os.path.join(mnt, "data")
        os.mkdir(data)
        port_file = os.path.join(top, "port")
        log = open(os.path.join(top, "server.log"), "wb")
        proc = subprocess.Popen([server, "--data", data, "--port", "0", "--port-file", port_file],
                                stdout=log, stderr=log)
        for _ in range(200):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        port = int(open(port_file).read())
        rng = random.Random(42)
        acked, refused_row, bulks, statuses = 0, 0, 0, {}
        t0 = time.time()
        n = 0
        while refused_row < REFUSED_IN_A_ROW and bulks < MAX_BULKS:
            lines = []
            for _ in range(DOCS_PER_BULK):
                lines.append('{"index":{"_id":"%d"}}' % n)
                lines.append(json.dumps(doc(rng, n)))
                n += 1
            st, b = request(port, "POST", "/big/_bulk", "\n".join(lines) + "\n")
            bulks += 1
            ok = 0
            if st == 200:
                for it in b["items"]:
                    s = it["index"]["status"]
                    statuses[s] = statuses.get(s, 0) + 1
                    ok += s in (200, 201)
            else:
                statuses["http_%d" % st] = statuses.get("http_%d" % st, 0) + 1
            acked += ok
            refused_row = refused_row + 1 if ok == 0 else 0
        res["load"] = {"bulks": bulks, "acked": acked, "item_statuses": statuses,
                       "seconds": round(time.time() - t0, 1),
                       "free_bytes": free_bytes(mnt),
                       "catalogue_bytes": catalogue_bytes(data)}
        st, b = request(port, "GET", "/big/_count")
        res["full"] = {"count": b.get("count") if st == 200 else st,
                       "refresh_status": request(port, "POST", "/big/_refresh")[0]}
        os.unlink(ballast)
        time.sleep(2)
        rs = request(port, "POST", "/big/_refresh")[0]
        time.sleep(1)
        st, b = request(port, "GET", "/big/_count")
        res["after_freeing_15MiB"] = {"refresh_status": rs,
                                      "count": b.get("count") if st == 200 else st,
                                      "free_bytes": free_bytes(mnt)}
        # fill what is left to 0 bytes free, then delete the index
        filler = os.path.join(mnt, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        for chunk in (65536, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                pass
        os.close(fd)
        cat_before = catalogue_bytes(data)
        free0 = free_bytes(mnt)
        st, b = request(port, "DELETE", "/big")
        res["delete_at_0_free"] = {"free_bytes_before": free0, "status": st,
                                   "error": b.get("error", {}).get("reason") if isinstance(b, dict) and st != 200 else None}
        os.unlink(filler)
        if st != 200:
            st, b = request(port, "DELETE", "/big")
            res["delete_after_freeing"] = st
        time.sleep(6)  # a translog sync interval: upkeep runs
        res["catalogue"] = {"bytes_before_delete": cat_before,
                            "bytes_after_delete": catalogue_bytes(data)}
    finally:
        if proc:
            proc.terminate()
            proc.wait(timeout=60)
        subprocess.run(["umount", mnt])
    print(json.dumps(res, indent=1))
    if out:
        with open(out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
