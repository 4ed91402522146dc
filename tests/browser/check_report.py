#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Opens a hypertune HTML report in headless Chromium and checks that it works.

    check_report.py <make_report executable> <work dir>

Fails when the page's script did not run to its end (it marks <body data-report="ok"> last, after
sorting every table column once for #selftest), when Chromium logged a JavaScript error, when user
text became markup (a second <script> element), or when the screenshot is blank. A second report,
of a run with two objectives, must show its Pareto front: a marker and a table row per member. Exits 77 (ctest's
SKIP_RETURN_CODE) when chromium is not installed. HYPERTUNE_CHROMIUM overrides the browser's path.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77


def chromium():
    for candidate in (os.environ.get("HYPERTUNE_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium",
                      shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def run_chromium(browser, work, args, url):
    # A new empty profile each time: nothing from an earlier run, no first-run or network activity.
    profile = tempfile.mkdtemp(prefix="profile-", dir=work)
    try:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-quic", "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", *args, url]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def console_errors(stderr):
    """Chromium logs console messages as ...:CONSOLE(line)] "message", source: ..."""
    return [line for line in stderr.splitlines()
            if "CONSOLE" in line and re.search(r"Uncaught|Error|error", line)]


def png_rows(path):
    """The distinct scanlines of a PNG (decompressed, filter byte dropped) and its size."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, width, height, bpp = 8, b"", 0, 0, 4
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            bpp = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour, 4) * max(depth // 8, 1)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp + 1
    rows = {raw[i * stride + 1:(i + 1) * stride] for i in range(height)}
    return rows, width, height


def screenshot_failures(browser, work, url, png, size):
    """Takes a screenshot of `url` into `png`; what is wrong with it. A single-colour page has a
    handful of distinct scanlines (one per PNG filter type at most); a report has hundreds."""
    if os.path.exists(png):
        os.remove(png)
    rc, _, err = run_chromium(browser, work, [f"--screenshot={png}", f"--window-size={size}"], url)
    failures = [f"JavaScript console: {line}" for line in console_errors(err)]
    if not os.path.exists(png):
        return failures + [f"no screenshot of {url} (chromium exited {rc}): {err[-2000:]}"]
    rows, width, height = png_rows(png)
    print(f"screenshot {png}: {width}x{height}, {len(rows)} distinct scanlines")
    if len(rows) < 100:
        failures.append(f"the screenshot {png} looks blank: only {len(rows)} distinct scanlines of {height}")
    return failures


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    maker, work = sys.argv[1], sys.argv[2]
    browser = chromium()
    if not browser:
        print("SKIP: chromium not found (Debian: apt-get install chromium); set HYPERTUNE_CHROMIUM to use another")
        return SKIP
    os.makedirs(work, exist_ok=True)
    report = os.path.join(work, "browser_report.html")
    subprocess.run([maker, report], check=True, timeout=120)
    url = "file://" + os.path.abspath(report)
    failures = []

    # 1. The script ran to its end, sorting every column (#selftest), with no error logged.
    rc, dom, err = run_chromium(browser, work, ["--dump-dom"], url + "#selftest")
    if rc != 0:
        failures.append(f"chromium --dump-dom exited {rc}: {err[-2000:]}")
    if 'data-report="ok"' not in dom:
        failures.append("the page's script did not finish (no data-report=\"ok\" on <body>)")
    failures += [f"JavaScript console: {line}" for line in console_errors(err)]
    if dom.count("<script") != 1:
        failures.append(f"{dom.count('<script')} <script> elements in the page: user text became markup")
    if dom.count("<svg") < 8:
        failures.append(f"only {dom.count('<svg')} charts in the page")

    # 2. The screenshot is not blank.
    failures += screenshot_failures(browser, work, url, os.path.join(work, "browser_report.png"), "1400,2400")

    # 3. A run with two objectives: the Pareto front section, one black marker per front member in
    #    its scatter, the front's table, and a screenshot that is not blank.
    front_report = os.path.join(work, "browser_report_front.html")
    made = subprocess.run([maker, front_report, "multi-objective"], check=True, timeout=120, capture_output=True,
                          text=True).stdout
    members = int(re.search(r"front members: (\d+)", made).group(1))
    rc, dom, err = run_chromium(browser, work, ["--dump-dom"], "file://" + os.path.abspath(front_report))
    failures += [f"JavaScript console (front): {line}" for line in console_errors(err)]
    if '<section id="front">' not in dom:
        failures.append("the multi-objective report has no Pareto front section")
    markers = len(re.findall(r'<circle class="P"', dom))
    if members < 2 or markers != members:
        failures.append(f"the front chart has {markers} front markers for {members} front members")
    rows_in_table = dom.split('<table id="front-table">', 1)[-1].split("</table>", 1)[0].count("<tr>")
    if rows_in_table != members + 1:
        failures.append(f"the front table has {rows_in_table - 1} rows for {members} front members")
    failures += screenshot_failures(browser, work, "file://" + os.path.abspath(front_report) + "#front",
                                    os.path.join(work, "browser_report_front.png"), "1400,1200")

    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"OK: {report} rendered in {browser} without script errors")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
