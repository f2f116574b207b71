#!/usr/bin/env bash
# The browser test of the qnmc WebAssembly page (docs/EMBEDDED.md, "In the
# browser"): builds the module with the feature `web`, serves a copy of
# wasm-example/web/ with python3 -m http.server on 127.0.0.1, runs the page
# in headless Chromium at / (no query string: the title, the paragraph, the
# default model, which runs as the page opens), and for the JS model (seed
# 2), the banana and the correlated Gaussian (each one launch: --screenshot
# and --dump-dom of the same run), and checks DOM and screenshot with
# test/check_page.py (standard library only). Negative controls, which the
# checker must reject: the screenshot of the page before a run (run=0, an
# empty plot) with a passing run's DOM; the banana's run checked as the
# Gaussian; the Gaussian's page checked as the page at /; and the banana's
# DOM edited to the two faults the plot checks are there to catch (the
# scatter's range cut below the highest draws, no y-axis labels on the
# running means).
#
# usage: wasm-example/web/test/check-browser.sh [OUTDIR]   (screenshots kept there)
# Needs chromium (Debian: apt-get install --no-install-recommends chromium).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
web="$(dirname "$here")"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
site="$(mktemp -d)"
cp -r "$web/." "$site/"
rm -rf "$site/test"
bash "$web/build.sh" "$site" > /dev/null
echo "module: $(stat -c %s "$site/qnmc.wasm") B ($site/qnmc.wasm)"

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site" > "$out/http.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$site"' EXIT
python3 - "$port" <<'PY'
import sys, time, urllib.request
for _ in range(100):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/index.html", timeout=1)
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("the HTTP server did not start")
PY

# As root in a container Chromium's sandbox cannot start (no user
# namespaces): --no-sandbox. No GPU, no D-Bus (its errors on stderr are
# harmless). Virtual time: timers run as fast as the CPU allows and the page
# is captured once its work is done or 120 virtual seconds have passed.
chrome() {
  timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --hide-scrollbars --window-size=1000,820 --virtual-time-budget=120000 "$@" \
    2> "$out/chromium.log"
}

status=0
for run in "home js" "js js model=js&dim=2&seed=2" "banana banana model=banana&dim=2&seed=1" \
  "gaussian gaussian model=gaussian&dim=4&seed=1"; do
  set -- $run
  name=$1 model=$2 query=${3:-}
  flags=()
  [[ $name == home ]] && flags=(--home)
  start=$SECONDS
  # Virtual time runs on while the module compiles off the main thread: on a
  # loaded machine the budget can end before the run has started (the DOM
  # then says "ready", no result). Such a capture says nothing about the
  # sampler, so it is taken again (up to 3 launches); a run that finished,
  # well or badly, is checked as it is.
  for attempt in 1 2 3; do
    chrome --screenshot="$out/$name.png" --dump-dom \
      "http://127.0.0.1:$port/${query:+index.html?$query}" > "$out/$name.html"
    grep -qE '"status":"(done|error)"' "$out/$name.html" && break
    echo "(launch $attempt: the page had not finished when Chromium captured it)"
  done
  echo "== $name (/${query:+index.html?$query}): Chromium $((SECONDS - start)) s"
  python3 "$here/check_page.py" "$model" "$out/$name.html" "$out/$name.png" "${flags[@]}" || status=1
done

echo "== negative control: the page before a run (an empty plot) must fail"
chrome --screenshot="$out/blank.png" "http://127.0.0.1:$port/index.html?model=gaussian&dim=4&run=0"
if python3 "$here/check_page.py" gaussian "$out/gaussian.html" "$out/blank.png" > "$out/blank.txt"; then
  cat "$out/blank.txt"; echo "FAIL: the empty plot passed"; status=1
else
  grep '^FAIL' "$out/blank.txt"; echo "rejected, as it must be"
fi
echo "== negative control: the banana's run checked as the Gaussian must fail"
if python3 "$here/check_page.py" gaussian "$out/banana.html" "$out/banana.png" > "$out/wrong.txt"; then
  cat "$out/wrong.txt"; echo "FAIL: the banana passed as the Gaussian"; status=1
else
  grep -c '^FAIL' "$out/wrong.txt" | sed 's/$/ checks failed: rejected, as it must be/'
fi
echo "== negative control: the Gaussian's page checked as the page at / must fail"
if python3 "$here/check_page.py" gaussian "$out/gaussian.html" "$out/gaussian.png" --home > "$out/not-home.txt"; then
  cat "$out/not-home.txt"; echo "FAIL: the Gaussian's page passed as the page at /"; status=1
else
  grep '^FAIL' "$out/not-home.txt"; echo "rejected, as it must be"
fi
echo "== negative control: the banana's DOM with draws outside the range and no y axis must fail"
# The scatter's range cut below the highest tenth of θ₂ (draws outside it)
# and the running means without their y-axis labels.
python3 - "$out/banana.html" "$out/faults-banana.html" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
pre = re.search(r'(<pre id="result"[^>]*>)(.*?)(</pre>)', dom, re.S)
result = json.loads(html.unescape(pre.group(2)))
draws = re.search(r'<pre id="draws"[^>]*>(.*?)</pre>', dom, re.S).group(1).split()
ys = sorted(float(v) for v in draws[1::2])
result["plot"]["ymax"] = ys[int(0.9 * len(ys))]
dom = dom[: pre.start(2)] + html.escape(json.dumps(result), quote=False) + dom[pre.end(2) :]
means = re.search(r'<svg[^>]*id="means".*?</svg>', dom, re.S)
panel = re.sub(r'<g class="y-axis">.*?</g>', '<g class="y-axis"></g>', means.group(0), flags=re.S)
open(sys.argv[2], "w", encoding="utf-8").write(dom[: means.start()] + panel + dom[means.end() :])
PY
if python3 "$here/check_page.py" banana "$out/faults-banana.html" "$out/banana.png" > "$out/faults.txt"; then
  cat "$out/faults.txt"; echo "FAIL: the plot faults passed"; status=1
elif grep -q '^FAIL θ2: every draw .* inside the plot' "$out/faults.txt" &&
  grep -q '^FAIL running means: y axis: 0 numeric tick labels' "$out/faults.txt"; then
  grep '^FAIL' "$out/faults.txt"; echo "rejected, as it must be"
else
  cat "$out/faults.txt"; echo "FAIL: rejected, but not for the draws outside the range and the missing y axis"; status=1
fi
[[ $status -eq 0 ]] && echo "browser test: PASS (screenshots in $out)" || echo "browser test: FAIL (see $out)"
exit $status
