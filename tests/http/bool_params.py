#!/usr/bin/env python3
"""Every URL parameter a handler reads with fds__req_param_bool must be in
request.c's BOOL_PARAMS, the table fds__req_check_params validates before the
handler runs; else `?name=yes` would be read as a silent false.
Usage: bool_params.py SRC_HTTP_DIR.  Exit 1, naming the parameters, when one
is missing."""
import pathlib, re, sys

http = pathlib.Path(sys.argv[1])
read = set()
for f in http.glob("*.c"):
    read |= set(re.findall(r'fds__req_param_bool\(\s*\w+\s*,\s*"([^"]+)"', f.read_text()))
table = re.search(r"BOOL_PARAMS\[\]\s*=\s*\{(.*?)\};", (http / "request.c").read_text(), re.S)
listed = set(re.findall(r'"([^"]+)"', table.group(1))) if table else set()
missing = sorted(read - listed)
if not read or missing:
    print("read as booleans but not in BOOL_PARAMS: %s" % (missing or "(none found)"))
    sys.exit(1)
print("%d boolean parameters, all validated" % len(read))
