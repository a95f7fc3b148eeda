#!/usr/bin/env python3
"""End-to-end test of the browser demo: serves target/web-demo, loads the page in headless
Chromium (WebGPU on SwiftShader) through chromedriver, waits until the page's computation has
finished, checks the values it published in window.flashDemo (errors against the f64 oracle
computed in wasm, finite numbers, status "done") and saves a screenshot of the whole page.

Standard library only; WebDriver is plain HTTP + JSON.
"""

import argparse
import base64
import functools
import http.server
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--enable-unsafe-webgpu",
    "--window-size=1240,1300",
]


def request(method, url, body=None, timeout=120):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{method} {url}: HTTP {e.code}: {e.read()[:2000]!r}") from None


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".js": "text/javascript"}

    def log_message(self, *args):
        pass


def serve(root):
    handler = functools.partial(QuietHandler, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check(state, sizes, bound):
    """Returns the list of failed checks (empty when the page computed what it should)."""
    failures = []

    def expect(ok, what):
        if not ok:
            failures.append(what)

    expect(state.get("status") == "done", f"status is {state.get('status')!r}, not 'done'")
    expect(not state.get("error"), f"the page reported an error: {state.get('error')}")
    adapter = state.get("adapter") or {}
    expect(adapter.get("backend") == "BrowserWebGpu",
           f"adapter backend is {adapter.get('backend')!r}, not BrowserWebGpu")
    plan = state.get("plan") or {}
    expect(finite(plan.get("workgroup_bytes")) and finite(plan.get("workgroup_limit"))
           and plan["workgroup_bytes"] <= plan["workgroup_limit"],
           f"plan's workgroup memory does not fit the device: {plan}")

    heat = state.get("heatmap") or {}
    n = heat.get("n")
    values = heat.get("values") or {}
    expect(finite(n) and len(values) == n * n, f"heatmap has {len(values)} values for n={n}")
    expect(all(finite(v) and 0 <= v <= 1 + 1e-6 for v in values.values()),
           "heatmap probabilities are not all finite and in [0, 1]")
    expect(finite(heat.get("row_sum_err")) and heat["row_sum_err"] <= 1e-4,
           f"heatmap rows do not sum to 1: {heat.get('row_sum_err')}")
    expect(finite(heat.get("max_err")) and heat["max_err"] <= bound,
           f"heatmap problem: max error {heat.get('max_err')} > {bound}")

    results = state.get("results") or []
    expect([r.get("n") for r in results] == sizes,
           f"results for sizes {[r.get('n') for r in results]}, asked for {sizes}")
    for r in results:
        name = f"N={r.get('n')}"
        expect(r.get("checked_rows") == r.get("total_rows") and finite(r.get("total_rows")),
               f"{name}: checked {r.get('checked_rows')} of {r.get('total_rows')} rows")
        for kernel in ("flash", "materialized"):
            k = r.get(kernel) or {}
            if "error" in k:
                failures.append(f"{name} {kernel}: {k['error']}")
                continue
            err = k.get("max_err")
            expect(finite(err) and err <= bound, f"{name} {kernel}: max error {err} > {bound}")
            expect(finite(k.get("ms")) and k["ms"] > 0, f"{name} {kernel}: time {k.get('ms')}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", default="target/web-demo")
    ap.add_argument("--sizes", default="64,100,256")
    ap.add_argument("--query", default="heads=2&dim=64&reps=3")
    ap.add_argument("--bound", type=float, default=1e-4, help="largest error allowed (f32)")
    ap.add_argument("--screenshot", default="target/web-demo/screenshot.png")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--chromedriver",
                    default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    server = serve(args.root)
    page = (f"http://127.0.0.1:{server.server_address[1]}/index.html"
            f"?sizes={args.sizes}&{args.query}")
    port = free_port()
    driver_log = open(os.path.join(args.root, "chromedriver.log"), "w")
    driver = subprocess.Popen([args.chromedriver, f"--port={port}"],
                              stdout=driver_log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    profile = tempfile.mkdtemp(prefix="flash-web-e2e-")
    session = None
    state = {}
    try:
        for _ in range(100):
            try:
                if request("GET", f"{base}/status", timeout=2)["value"].get("ready"):
                    break
            except (OSError, RuntimeError):
                pass
            time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {"binary": args.chromium,
                                   "args": CHROMIUM_ARGS + [f"--user-data-dir={profile}"]},
        }}}
        session = request("POST", f"{base}/session", caps)["value"]["sessionId"]
        s = f"{base}/session/{session}"
        print(f"e2e: loading {page}", flush=True)
        request("POST", f"{s}/url", {"url": page})
        start, last = time.time(), None
        while True:
            raw = request("POST", f"{s}/execute/sync", {
                "script": "return window.flashDemo ? JSON.stringify(window.flashDemo) : null",
                "args": []})["value"]
            state = json.loads(raw) if raw else {}
            status = state.get("status")
            if status != last:
                print(f"e2e: [{time.time() - start:6.1f} s] {status}", flush=True)
                last = status
            if status in ("done", "error"):
                break
            if time.time() - start > args.timeout:
                print(f"e2e: timed out after {args.timeout} s", flush=True)
                break
            time.sleep(0.5)
        # The page redraws on the last publish; give layout a moment before the picture.
        time.sleep(0.5)
        shot = request("POST", f"{s}/goog/cdp/execute", {
            "cmd": "Page.captureScreenshot",
            "params": {"format": "png", "captureBeyondViewport": True}})["value"]["data"]
        os.makedirs(os.path.dirname(os.path.abspath(args.screenshot)), exist_ok=True)
        with open(args.screenshot, "wb") as f:
            f.write(base64.b64decode(shot))
        print(f"e2e: screenshot saved to {os.path.abspath(args.screenshot)}")
        try:
            logs = request("POST", f"{s}/se/log", {"type": "browser"})["value"]
            for entry in logs:
                if entry.get("level") in ("SEVERE", "WARNING"):
                    print(f"e2e: browser console {entry['level']}: {entry['message'][:400]}")
        except RuntimeError:
            pass
    finally:
        if session:
            try:
                request("DELETE", f"{base}/session/{session}", timeout=30)
            except (OSError, RuntimeError):
                pass
        driver.terminate()
        driver.wait(timeout=30)
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)

    with open(os.path.join(args.root, "result.json"), "w") as f:
        json.dump(state, f, indent=1)
    adapter = state.get("adapter") or {}
    print(f"e2e: adapter {adapter.get('name')!r} ({adapter.get('backend')}), "
          f"features {[(x['name'], x['offered']) for x in adapter.get('features', [])]}, "
          f"plan {state.get('plan')}")
    for r in state.get("results") or []:
        f, m = r.get("flash", {}), r.get("materialized", {})
        print(f"e2e: N={r['n']:>5} flash {f.get('ms', float('nan')):8.3f} ms err {f.get('max_err')}"
              f" | materialized {m.get('ms', float('nan')):8.3f} ms err {m.get('max_err')}"
              f" | {f.get('clock')} | rows {r.get('checked_rows')}/{r.get('total_rows')}")
    failures = check(state, sizes, args.bound)
    for fail in failures:
        print(f"e2e: FAILED: {fail}")
    if failures:
        sys.exit(1)
    print("e2e: the page computed attention correctly on every size")


if __name__ == "__main__":
    main()
