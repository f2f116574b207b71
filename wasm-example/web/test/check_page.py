#!/usr/bin/env python3
"""Checks a run of the qnmc browser page (wasm-example/web) from headless
Chromium: its DOM (`--dump-dom`) and its screenshot (`--screenshot`, a PNG
read with zlib: standard library only).

usage: check_page.py MODEL DOM.html SHOT.png [--home]

MODEL is the model the page ran (js, banana, gaussian); its exact posterior
moments are below, written independently of the page. The checks:

DOM (the page's `<pre id="result">` JSON and `<pre id="draws">`, the plotted
coordinates of every kept draw):
  * the run finished with the requested number of draws;
  * the page's means equal the means of the draws it lists;
  * each mean is within 4.5 Monte-Carlo standard errors of the exact mean,
    the MCSE computed here from the listed draws by batch means (⌊√N⌋
    batches); and that MCSE is at most sd·√(20/N) (an effective sample size
    of at least N/20), so a chain that hardly moves cannot pass by having a
    huge MCSE; each sd within 25 % of the exact sd.

The plots' structure (the SVG in the DOM over the scatter's canvas, and the
SVG of the running means):
  * every listed draw lies inside the scatter's range (the JSON's xmin…ymax)
    with a margin of at least 2 % of the span on each side, and the range
    fits the draws (at most 25 % of padding on a side);
  * the scatter's x and y axes have at least 3 numeric tick labels each,
    placed (within 1.1 px) where the plot's range puts their values, all
    along the plot's edges;
  * the running-means panel has a frame, an x axis (draws kept) and a y axis
    with at least 3 numeric tick labels, evenly placed for their values; its
    two lines lie inside the frame, and their last points, read through the
    panel's own axes, are at the page's final means (within 2 px) after all
    the kept draws.

With --home (the page at `/`, no query string): a title (`<h1>`) and the
paragraph saying what the page is (no_std, WebAssembly, no server), the JS
model selected in the form (the option's `selected` attribute) and run, and
the Run button.

Screenshot (the plot rectangle from the DOM's JSON, confirmed by finding the
plot's black frame there):
  * no pixel of the draw colour on the scatter's canvas outside the plot's
    frame;
  * the running-means panel's frame where the DOM says, and at least 150
    pixels of each line's colour inside it;
  * at least 1500 pixels of the draw colour (blue) inside the plot, so a
    blank or frozen canvas fails;
  * their centroid, each pixel weighted by the number of overlapping points
    its colour implies (alpha 0.45 per point), mapped back through the plot's
    axes, within 0.3 exact sd of the exact mean, and their spread within
    0.6–1.5 of the exact sd (the plot clips the far tails and saturates
    where points pile up, hence the loose bounds);
  * the posterior's shape: banana: the draws at |θ₁| > 1.5 lie higher than
    those at |θ₁| < 0.5 by at least 1.5; correlated Gaussian: pixel
    correlation ≥ 0.7 (exact 0.9); JS normal–gamma: the spread of μ above
    the mean of log τ is under 0.8 of that below it (the funnel narrows as
    the precision grows);
  * the red running-mean cross is drawn where the page's final means are
    (within 2 px) and so within the MCSE tolerance above of the exact mean.

Exits 0 if every check passes, 1 otherwise, printing each check.
"""

import html
import json
import math
import re
import struct
import sys
import zlib

EULER_GAMMA = 0.5772156649015329

# Exact moments of the two plotted coordinates, independent of the page.
EXACT = {
    # τ ~ Gamma(3, 1), μ | τ ~ N(1, 1/τ), θ = (μ, log τ):
    # E μ = 1, Var μ = E 1/τ = 1/(a − 1); E log τ = ψ(3) = 1 + 1/2 − γ,
    # Var log τ = ψ′(3) = π²/6 − 1 − 1/4.
    "js": ((1.0, 1.5 - EULER_GAMMA), (math.sqrt(0.5), math.sqrt(math.pi**2 / 6 - 1.25))),
    # θ₁ ~ N(0, 1), θ₂ | θ₁ ~ N(θ₁², 1): E θ₂ = 1, Var θ₂ = 2 + 1.
    "banana": ((0.0, 1.0), (1.0, math.sqrt(3.0))),
    # μᵢ = (−1)ⁱ(1 + i/4), sᵢ = 1 + (i mod 2)/2, correlation 0.9^|i−j|.
    "gaussian": ((1.0, -1.25), (1.0, 1.5)),
}

DRAW_RGB = (31, 119, 180)
DRAW_ALPHA = 0.45


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, previous, pos = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[pos], bytearray(raw[pos + 1 : pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = previous[i]
            c = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[j : j + 3]) for j in range(0, stride, bpp)])
        previous = line
    return width, height, rows


def batch_mcse(values):
    n = len(values)
    batches = max(2, math.isqrt(n))
    size = n // batches
    means = [sum(values[j * size : (j + 1) * size]) / size for j in range(batches)]
    m = sum(means) / batches
    return math.sqrt(sum((x - m) ** 2 for x in means) / (batches - 1) / batches)


class Checker:
    def __init__(self):
        self.failed = 0

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failed += 1
        return ok


def pre(dom, ident):
    found = re.search(rf'<pre id="{ident}"[^>]*>(.*?)</pre>', dom, re.S)
    return html.unescape(found.group(1)) if found else ""


def svg(dom, ident):
    found = re.search(rf'<svg[^>]*\bid="{ident}"[^>]*>(.*?)</svg>', dom, re.S)
    return found.group(1) if found else ""


def attributes(text):
    return dict(re.findall(r'([\w:-]+)="([^"]*)"', text))


def number(text):
    try:
        return float(html.unescape(text).strip().replace("\u2212", "-"))
    except ValueError:
        return None


def axis_labels(block, which):
    """(value, position) of the numeric tick labels of `<g class="x-axis">`
    or `y-axis` in an SVG's text: the position is the label's x (x axis) or
    y (y axis, labels centred on their tick)."""
    found = re.search(rf'<g class="{which}-axis">(.*?)</g>', block, re.S)
    labels = []
    for attrs, text in re.findall(r"<text([^>]*)>([^<]*)</text>", found.group(1) if found else ""):
        value, a = number(text), attributes(attrs)
        if value is not None and which in a:
            labels.append((value, float(a[which])))
    return labels


def frame_of(block):
    """(left, top, width, height) of the plot area inside an SVG's frame."""
    found = re.search(r'<rect class="frame"([^>]*)>', block)
    if not found:
        return None
    a = attributes(found.group(1))
    return (float(a["x"]) + 0.5, float(a["y"]) + 0.5, float(a["width"]) - 1, float(a["height"]) - 1)


def check_axis(c, what, labels, to_px, lo_px, hi_px):
    """At least 3 numeric labels, each within 1.1 px of where `to_px` puts
    its value, all between lo_px and hi_px."""
    if not c.check(len(labels) >= 3, f"{what}: {len(labels)} numeric tick labels in the DOM (≥ 3): {' '.join(f'{v:g}' for v, _ in labels)}"):
        return
    off = max(abs(to_px(v) - p) for v, p in labels)
    c.check(off <= 1.1, f"{what}: the labels sit where their values are (worst {off:.2f} px off)")
    c.check(all(lo_px - 1 <= p <= hi_px + 1 for _, p in labels), f"{what}: the labels lie along the plot ({lo_px:.0f}–{hi_px:.0f} px)")


def check_home(c, dom, result):
    title = re.search(r"<h1[^>]*>(.*?)</h1>", dom, re.S)
    title = re.sub(r"<[^>]+>", "", title.group(1)).strip() if title else ""
    c.check("qnmc" in title, f"home: a title: {title!r}")
    about = re.search(r'<p id="about"[^>]*>(.*?)</p>', dom, re.S)
    about = " ".join(html.unescape(re.sub(r"<[^>]+>", "", about.group(1))).split()) if about else ""
    c.check(all(w in about for w in ("no_std", "WebAssembly", "no server")),
            f"home: the paragraph says what the page is (no_std, WebAssembly, no server): {about[:90]!r}…")
    select = re.search(r'<select id="model"[^>]*>(.*?)</select>', dom, re.S)
    options = re.findall(r"<option([^>]*)>", select.group(1) if select else "")
    chosen = [attributes(o).get("value") for o in options if re.search(r"\bselected\b", o)]
    c.check(chosen == ["js"] and result.get("model") == "js",
            f"home: the default model selected (options marked selected: {chosen}) and run ({result.get('model')!r})")
    c.check(re.search(r'<button id="run"[^>]*>Run</button>', dom) is not None, "home: a Run button")


def check_means_panel(c, dom, result):
    """The running-means panel's SVG: frame, axes, lines ending at the final means."""
    block = svg(dom, "means")
    area = frame_of(block)
    if not c.check(area is not None, "running means: a frame in the DOM"):
        return None
    left, top, w, h = area
    xs, ys = axis_labels(block, "x"), axis_labels(block, "y")
    fits = {}
    for which, labels, edge in (("x", xs, (left, left + w)), ("y", ys, (top, top + h))):
        if len(labels) >= 2:
            (v0, p0), (v1, p1) = labels[0], labels[-1]
            slope = (p1 - p0) / (v1 - v0) if v1 != v0 else 0.0
            fits[which] = (lambda v, v0=v0, p0=p0, slope=slope: p0 + (v - v0) * slope, slope)
        to_px = fits.get(which, (lambda v: float("nan"), 0))[0]
        check_axis(c, f"running means: {which} axis", labels, to_px, *edge)
    lines = [attributes(a) for a in re.findall(r"<polyline([^>]*)>", block)]
    if not c.check(len(lines) == 2 and len(fits) == 2 and fits["y"][1] < 0, f"running means: {len(lines)} lines (2), read by both axes (y rising upwards)"):
        return area
    means = (result["means"][result["plot"]["x"]], result["means"][result["plot"]["y"]])
    for k, line in enumerate(lines):
        points = [tuple(map(float, p.split(","))) for p in line.get("points", "").split()]
        inside = all(left - 0.5 <= x <= left + w + 0.5 and top - 0.5 <= y <= top + h + 0.5 for x, y in points)
        c.check(len(points) >= 10 and inside, f"running means of θ{k + 1}: {len(points)} points, all inside the frame")
        if not points:
            continue
        x_end, y_end = points[-1]
        read = means[k] + (y_end - fits["y"][0](means[k])) / fits["y"][1]
        c.check(abs(y_end - fits["y"][0](means[k])) <= 2, f"running means of θ{k + 1}: the line ends at {read:.3f} on the y axis, the page's mean {means[k]:.3f} (2 px)")
        c.check(abs(x_end - fits["x"][0](result["kept"])) <= 2, f"running means of θ{k + 1}: the line ends at {result['kept']} draws on the x axis")
    return area


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    model, dom_path, shot_path = args[0], args[1], args[2]
    (mu, sd) = EXACT[model]
    c = Checker()
    dom = open(dom_path, encoding="utf-8").read()
    try:
        result = json.loads(pre(dom, "result"))
    except ValueError:
        result = {}
    if "--home" in argv:
        check_home(c, dom, result)
    if not c.check(result.get("status") == "done", f"the page finished (status {result.get('status')!r})"):
        return 1
    draws = [tuple(map(float, line.split())) for line in pre(dom, "draws").split("\n") if line.strip()]
    n = len(draws)
    c.check(n == result["kept"] and n >= 1000, f"{n} draws listed, {result['kept']} kept")
    columns = [[d[k] for d in draws] for k in (0, 1)]
    tolerance = []
    for k in (0, 1):
        values = columns[k]
        mean = sum(values) / n
        sdev = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
        page_mean = result["means"][result["plot"]["x" if k == 0 else "y"]]
        mcse = batch_mcse(values)
        tolerance.append(4.5 * mcse)
        c.check(abs(mean - page_mean) <= 1e-5 * (1 + abs(mean)), f"θ{k + 1}: the page's mean {page_mean:.5f} is its draws' mean {mean:.5f}")
        c.check(mcse <= sd[k] * math.sqrt(20 / n), f"θ{k + 1}: MCSE {mcse:.4f} ≤ sd·√(20/N) = {sd[k] * math.sqrt(20 / n):.4f} (ESS ≈ {(sdev / mcse) ** 2 if mcse else float('inf'):.0f})")
        c.check(abs(mean - mu[k]) <= 4.5 * mcse, f"θ{k + 1}: mean {mean:.4f} vs exact {mu[k]:.4f}: |error| {abs(mean - mu[k]):.4f} ≤ 4.5 MCSE = {4.5 * mcse:.4f}")
        c.check(abs(sdev / sd[k] - 1) <= 0.25, f"θ{k + 1}: sd {sdev:.4f} vs exact {sd[k]:.4f} (within 25 %)")

    # ---- the plots' structure in the DOM -------------------------------
    plot = result["plot"]
    for k, (lo, hi) in enumerate(((plot["xmin"], plot["xmax"]), (plot["ymin"], plot["ymax"]))):
        span, low, high = hi - lo, min(columns[k]), max(columns[k])
        c.check(low - lo >= 0.02 * span and hi - high >= 0.02 * span,
                f"θ{k + 1}: every draw ({low:.3f}…{high:.3f}) inside the plot's range {lo:.3f}…{hi:.3f} with a margin (≥ 2 %)")
        c.check(low - lo <= 0.25 * span and hi - high <= 0.25 * span, f"θ{k + 1}: the plot's range fits the draws (padding ≤ 25 %)")
    block = svg(dom, "scatter-axes")
    check_axis(c, "scatter: x axis", axis_labels(block, "x"),
               lambda v: plot["left"] + (v - plot["xmin"]) / (plot["xmax"] - plot["xmin"]) * plot["width"],
               plot["left"], plot["left"] + plot["width"])
    check_axis(c, "scatter: y axis", axis_labels(block, "y"),
               lambda v: plot["top"] + (plot["ymax"] - v) / (plot["ymax"] - plot["ymin"]) * plot["height"],
               plot["top"], plot["top"] + plot["height"])
    means_area = check_means_panel(c, dom, result)

    # ---- the screenshot -------------------------------------------------
    width, height, rows = read_png(shot_path)
    left = round(plot["canvas"]["left"] + plot["left"])
    top = round(plot["canvas"]["top"] + plot["top"])
    w, h = plot["width"], plot["height"]
    if not c.check(left + w < width and top + h < height, f"the plot ({left}, {top}, {w}×{h}) is inside the {width}×{height} screenshot"):
        return 1
    frame = [rows[top - 1][x] for x in range(left, left + w)] + [rows[y][left - 1] for y in range(top, top + h)]
    dark = sum(1 for p in frame if max(p) < 80)
    c.check(dark >= 0.9 * len(frame), f"the plot's black frame is where the DOM says ({dark} of {len(frame)} frame pixels dark)")

    def is_draw(r, g, b):
        return b - r > 30 and b >= g and b > 120

    canvas = plot["canvas"]
    outside = sum(
        1
        for y in range(round(canvas["top"]), min(height, round(canvas["top"] + canvas["height"])))
        for x in range(round(canvas["left"]), min(width, round(canvas["left"] + canvas["width"])))
        if not (left <= x < left + w and top <= y < top + h) and is_draw(*rows[y][x])
    )
    c.check(outside == 0, f"no pixel of the draw colour on the scatter's canvas outside the plot ({outside})")
    if means_area is not None:
        panel = result["means_plot"]["svg"]
        ml, mt = round(panel["left"] + means_area[0]), round(panel["top"] + means_area[1])
        mw, mh = round(means_area[2]), round(means_area[3])
        if c.check(ml + mw < width and mt + mh < height, f"the running means ({ml}, {mt}, {mw}×{mh}) are inside the screenshot"):
            frame = [rows[mt - 1][x] for x in range(ml, ml + mw)] + [rows[y][ml - 1] for y in range(mt, mt + mh)]
            dark = sum(1 for p in frame if max(p) < 80)
            c.check(dark >= 0.9 * len(frame), f"the running means' frame is where the DOM says ({dark} of {len(frame)} frame pixels dark)")
            inner = [rows[y][x] for y in range(mt, mt + mh) for x in range(ml, ml + mw)]
            blue = sum(1 for r, g, b in inner if b - r > 60 and b > 140 and g < 160)
            orange = sum(1 for r, g, b in inner if r > 200 and 90 <= g <= 170 and b < 90)
            c.check(blue >= 150 and orange >= 150, f"the running means are drawn: {blue} blue and {orange} orange pixels in the panel (≥ 150 each)")

    def to_data(px, py):
        return (plot["xmin"] + (px - left) / w * (plot["xmax"] - plot["xmin"]),
                plot["ymax"] - (py - top) / h * (plot["ymax"] - plot["ymin"]))

    points, red = [], []
    log_keep = math.log(1 - DRAW_ALPHA)
    for y in range(top, top + h):
        row = rows[y]
        for x in range(left, left + w):
            r, g, b = row[x]
            if r > 180 and g < 90 and b < 90:
                red.append((x + 0.5, y + 0.5))
            elif is_draw(r, g, b):
                # the number of overlapping points this red channel implies
                covered = min(0.995, (255 - r) / (255 - DRAW_RGB[0]))
                weight = min(12.0, math.log(1 - covered) / log_keep)
                points.append((*to_data(x + 0.5, y + 0.5), max(weight, 1.0)))
    if not c.check(len(points) >= 1500, f"{len(points)} pixels of the draw colour in the plot (≥ 1500)"):
        return 1
    total = sum(p[2] for p in points)
    centre = [sum(p[k] * p[2] for p in points) / total for k in (0, 1)]
    spread = [math.sqrt(sum((p[k] - centre[k]) ** 2 * p[2] for p in points) / total) for k in (0, 1)]
    for k in (0, 1):
        c.check(abs(centre[k] - mu[k]) <= 0.3 * sd[k], f"θ{k + 1}: plotted centroid {centre[k]:.3f} within 0.3 sd of the exact mean {mu[k]:.3f}")
        c.check(0.6 <= spread[k] / sd[k] <= 1.5, f"θ{k + 1}: plotted spread {spread[k]:.3f} is {spread[k] / sd[k]:.2f} of the exact sd (0.6–1.5)")

    def weighted(sel):
        chosen = [p for p in points if sel(p)]
        return chosen, sum(p[2] for p in chosen) or 1.0

    if model == "banana":
        outer, wo = weighted(lambda p: abs(p[0]) > 1.5)
        inner, wi = weighted(lambda p: abs(p[0]) < 0.5)
        rise = sum(p[1] * p[2] for p in outer) / wo - sum(p[1] * p[2] for p in inner) / wi
        c.check(rise >= 1.5, f"banana: the arms (|θ₁| > 1.5) lie {rise:.2f} above the middle (≥ 1.5; exact ≈ 3.6)")
    elif model == "gaussian":
        cov = sum((p[0] - centre[0]) * (p[1] - centre[1]) * p[2] for p in points) / total
        rho = cov / (spread[0] * spread[1])
        c.check(rho >= 0.7, f"gaussian: plotted correlation {rho:.2f} (≥ 0.7; exact 0.9)")
    else:
        def spread_x(chosen, wsum):
            m = sum(p[0] * p[2] for p in chosen) / wsum
            return math.sqrt(sum((p[0] - m) ** 2 * p[2] for p in chosen) / wsum)
        upper = spread_x(*weighted(lambda p: p[1] > mu[1]))
        lower = spread_x(*weighted(lambda p: p[1] < mu[1]))
        c.check(upper < 0.8 * lower, f"normal–gamma: μ spreads {upper:.3f} above the mean of log τ, {lower:.3f} below (funnel: < 0.8×)")

    if c.check(20 <= len(red) <= 150, f"{len(red)} pixels of the running-mean cross"):
        cross = to_data(sum(p[0] for p in red) / len(red), sum(p[1] for p in red) / len(red))
        means = (result["means"][plot["x"]], result["means"][plot["y"]])
        for k in (0, 1):
            pixel = (plot["xmax"] - plot["xmin"]) / w if k == 0 else (plot["ymax"] - plot["ymin"]) / h
            c.check(abs(cross[k] - means[k]) <= 2 * pixel, f"θ{k + 1}: the cross is at the page's mean ({cross[k]:.3f} vs {means[k]:.3f}, 2 px = {2 * pixel:.3f})")
            c.check(abs(cross[k] - mu[k]) <= tolerance[k] + 2 * pixel, f"θ{k + 1}: the cross is within 4.5 MCSE + 2 px of the exact mean ({cross[k]:.3f} vs {mu[k]:.3f})")
    print(f"{model}: {'PASS' if not c.failed else f'FAIL ({c.failed} checks)'}")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
