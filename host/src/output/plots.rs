//! Drawing a [`Chart`] as SVG and PNG with plotters.
//!
//! Text (title, axis labels, tick labels, legend) is drawn with the font
//! compiled into the binary ([`EMBEDDED_FONT`](super::EMBEDDED_FONT)), so
//! charts have text whether or not the machine has fonts installed.
//!
//! Several bar series in one chart are grouped: at each x the bars stand side
//! by side, one slot per series, within 80% of the smallest gap between x
//! values; a chart with [`Chart::categories`] names its x positions 1, 2, …
//! and leaves room above the bars for the legend.

use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::chart::SeriesAnno;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::fonts::{FAMILY, chart_font};
use super::{OutputDir, OutputError};
use crate::chart::{Chart, Scale, SeriesStyle};

/// Width and height of the drawn charts, pixels.
pub const CHART_SIZE: (u32, u32) = (960, 600);

/// Line colours, cycled through the series (Tableau's ten).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Draws `chart` into `dir` as `<file_stem>.svg` and `<file_stem>.png` and
/// returns the two paths. Both are drawn in memory first
/// ([`render_chart_files`]), then written with [`OutputDir::write`] (atomic,
/// no overwrite without force).
pub fn render_chart(chart: &Chart, dir: &OutputDir) -> Result<Vec<PathBuf>, OutputError> {
    render_chart_files(chart, dir.path())?
        .into_iter()
        .map(|(name, bytes)| dir.write(&name, &bytes))
        .collect()
}

/// `chart` drawn in memory as the files `<file_stem>.svg` and
/// `<file_stem>.png` (names and contents), for a caller that draws several
/// charts in parallel and writes them in order; `folder` only names the
/// file in an error.
///
/// Text is drawn with the embedded font; should drawing text fail anyway, the
/// chart is drawn without text rather than not at all.
pub fn render_chart_files(
    chart: &Chart,
    folder: &Path,
) -> Result<Vec<(String, Vec<u8>)>, OutputError> {
    if chart.file_stem.is_empty() {
        return Err(OutputError::BadFileName {
            folder: folder.to_path_buf(),
            name: chart.file_stem.clone(),
        });
    }
    let [svg_name, png_name] = chart_file_names(chart);
    let failed = |name: &str, message: String| OutputError::Render {
        path: folder.join(name),
        message,
    };
    // Should text drawing fail for a reason of the font's own, draw without.
    let svg = render_svg(chart, true)
        .or_else(|_| render_svg(chart, false))
        .map_err(|m| failed(&svg_name, m))?;
    let png = render_png(chart, true)
        .or_else(|_| render_png(chart, false))
        .map_err(|m| failed(&png_name, m))?;
    Ok(vec![(svg_name, svg.into_bytes()), (png_name, png)])
}

/// The names of the files [`render_chart_files`] draws `chart` into:
/// `<file_stem>.svg` and `<file_stem>.png`.
pub fn chart_file_names(chart: &Chart) -> [String; 2] {
    [
        format!("{}.svg", chart.file_stem),
        format!("{}.png", chart.file_stem),
    ]
}

/// `chart` as an SVG document; `with_text: false` leaves out every text element.
pub fn render_svg(chart: &Chart, with_text: bool) -> Result<String, String> {
    let with_text = with_text && chart_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, CHART_SIZE).into_drawing_area();
        draw(&root, chart, with_text)?;
    }
    Ok(svg)
}

/// `chart` as a PNG image (8-bit RGB); `with_text: false` leaves out every
/// text element.
pub fn render_png(chart: &Chart, with_text: bool) -> Result<Vec<u8>, String> {
    let with_text = with_text && chart_font();
    let (width, height) = CHART_SIZE;
    let mut pixels = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, CHART_SIZE).into_drawing_area();
        draw(&root, chart, with_text)?;
    }
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Default);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer
        .write_image_data(&pixels)
        .map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(png)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    with_text: bool,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (x, y) = (axis_range(chart, Axis::X), axis_range(chart, Axis::Y));
    match (chart.x_scale, chart.y_scale) {
        (Scale::Linear, Scale::Linear) => draw_in(root, chart, with_text, x, y),
        (Scale::Log10, Scale::Linear) => draw_in(root, chart, with_text, x.log_scale(), y),
        (Scale::Linear, Scale::Log10) => draw_in(root, chart, with_text, x, y.log_scale()),
        (Scale::Log10, Scale::Log10) => {
            draw_in(root, chart, with_text, x.log_scale(), y.log_scale())
        }
    }?;
    root.present().map_err(|e| e.to_string())
}

/// Draws `chart` on `root` with axes `x` and `y`: the frame and caption,
/// the axes ([`draw_mesh`]), the series ([`draw_series`]) and, if a series
/// has a label, the legend.
fn draw_in<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    with_text: bool,
    x: X,
    y: Y,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let error = |e: &dyn std::fmt::Display| e.to_string();
    let mut builder = ChartBuilder::on(root);
    builder.margin(16);
    if with_text {
        builder
            .caption(&chart.title, (FAMILY, 24))
            .x_label_area_size(50)
            .y_label_area_size(80);
    } else {
        builder.x_label_area_size(4).y_label_area_size(4);
    }
    let mut context = builder.build_cartesian_2d(x, y).map_err(|e| error(&e))?;
    draw_mesh(&mut context, chart, with_text)?;
    let any_label = draw_series(&mut context, chart, with_text)?;
    if any_label {
        context
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FAMILY, 15))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .draw()
            .map_err(|e| error(&e))?;
    }
    Ok(())
}

/// A chart's drawing context on axes `X` and `Y`.
type Context<'a, DB, X, Y> = ChartContext<'a, DB, Cartesian2d<X, Y>>;

/// The grid, the axes and (`with_text`) their tick labels and
/// descriptions: a chart with [`Chart::categories`] names its x positions.
fn draw_mesh<DB, X, Y>(
    context: &mut Context<'_, DB, X, Y>,
    chart: &Chart,
    with_text: bool,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let error = |e: &dyn std::fmt::Display| e.to_string();
    // The spacing of each axis's ticks, to print round-off near zero as 0.
    let x_step = tick_step(chart.x_scale, context.x_range());
    let y_step = tick_step(chart.y_scale, context.y_range());

    let mut mesh = context.configure_mesh();
    mesh.light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(210, 210, 210));
    let categories = &chart.categories;
    let category_label = |v: &f64| {
        let k = v.round();
        if (v - k).abs() < 1e-6 && k >= 1.0 && k as usize <= categories.len() {
            categories[k as usize - 1].clone()
        } else {
            String::new()
        }
    };
    let x_label = |v: &f64| tick_label(snap_to_zero(*v, x_step));
    let y_label = |v: &f64| tick_label(snap_to_zero(*v, y_step));
    if with_text {
        mesh.x_desc(&chart.x_label)
            .y_desc(&chart.y_label)
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17))
            .y_label_formatter(&y_label);
        if categories.is_empty() {
            mesh.x_label_formatter(&x_label);
        } else {
            // Ticks every half category (so every integer is one), named at
            // the integers; no vertical grid lines through the bars.
            mesh.x_labels(4 * categories.len() + 2)
                .x_label_formatter(&category_label)
                .disable_x_mesh();
        }
    } else {
        mesh.x_labels(0)
            .y_labels(0)
            .disable_x_axis()
            .disable_y_axis();
    }
    mesh.draw().map_err(|e| error(&e))
}

/// Where a chart's bars stand: the bar series (indices into
/// [`Chart::series`]), half the width of the slot all bars at one x share,
/// split between them, and the value the bars rise from on a log y axis.
struct Bars {
    series: Vec<usize>,
    group_half: f64,
    floor: f64,
}

impl Bars {
    /// The bars of `chart`, whose y axis starts at `floor`.
    fn of(chart: &Chart, floor: f64) -> Self {
        let series: Vec<usize> = (0..chart.series.len())
            .filter(|&k| chart.series[k].style == SeriesStyle::Bars)
            .collect();
        let points: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|&k| chart.series[k].points.iter().copied())
            .filter(|&(px, _)| shown(px, chart.x_scale))
            .collect();
        let group_half = bar_half_width(&points, chart.x_scale);
        Bars {
            series,
            group_half,
            floor,
        }
    }
}

/// Draws every series of `chart` in its colour and style and (`with_text`)
/// gives each labelled series its legend entry; `true` if there is one.
fn draw_series<'a, DB, X, Y>(
    context: &mut Context<'a, DB, X, Y>,
    chart: &Chart,
    with_text: bool,
) -> Result<bool, String>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let bars = Bars::of(chart, context.y_range().start);
    let mut any_label = false;
    for (k, series) in chart.series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let annotation = draw_one_series(context, chart, k, color, &bars)?;
        if with_text && !series.label.is_empty() {
            any_label = true;
            let style = series.style;
            annotation
                .label(series.label.as_str())
                .legend(move |(lx, ly)| legend_mark(style, color, lx, ly));
        }
    }
    Ok(any_label)
}

/// Draws series `k` of `chart` in `color`, its drawable points only (bars
/// in their slot of `bars`); returns its annotation, for the legend.
fn draw_one_series<'a, 'b, DB, X, Y>(
    context: &'b mut Context<'a, DB, X, Y>,
    chart: &Chart,
    k: usize,
    color: RGBColor,
    bars: &Bars,
) -> Result<&'b mut SeriesAnno<'a, DB>, String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let error = |e: &dyn std::fmt::Display| e.to_string();
    let x_scale = chart.x_scale;
    let y_scale = chart.y_scale;
    let series = &chart.series[k];
    let points: Vec<(f64, f64)> = series
        .points
        .iter()
        .copied()
        .filter(|&(px, py)| shown(px, x_scale) && shown(py, y_scale))
        .collect();
    let annotation = match series.style {
        // Dense lines (traces) read better thin; plotters' wide bitmap
        // lines also draw spikes at steep, short segments.
        SeriesStyle::Line => context
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(if points.len() > 200 { 1 } else { 2 }),
            ))
            .map_err(|e| error(&e))?,
        SeriesStyle::Dashed => context
            .draw_series(DashedLineSeries::new(points, 10, 6, color.stroke_width(2)))
            .map_err(|e| error(&e))?,
        SeriesStyle::Points => context
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| error(&e))?,
        SeriesStyle::Bars => {
            let slot = bars.series.iter().position(|&b| b == k).unwrap_or(0);
            let (from, to) = bar_slot(bars.group_half, slot, bars.series.len());
            let base = match y_scale {
                Scale::Linear => 0.0,
                Scale::Log10 => bars.floor,
            };
            context
                .draw_series(points.iter().map(|&(px, py)| {
                    let (left, right) = match x_scale {
                        Scale::Linear => (px + from, px + to),
                        Scale::Log10 => (px * 10f64.powf(from), px * 10f64.powf(to)),
                    };
                    Rectangle::new([(left, base), (right, py)], color.mix(0.6).filled())
                }))
                .map_err(|e| error(&e))?
        }
    };
    Ok(annotation)
}

/// The legend's mark for a series of `style` in `color`, at (`lx`, `ly`).
fn legend_mark<'a, DB: DrawingBackend>(
    style: SeriesStyle,
    color: RGBColor,
    lx: i32,
    ly: i32,
) -> DynElement<'a, DB, (i32, i32)> {
    let stroke = color.stroke_width(2);
    match style {
        SeriesStyle::Dashed => PathElement::new(vec![(lx, ly), (lx + 8, ly)], stroke).into_dyn(),
        SeriesStyle::Points => Circle::new((lx + 10, ly), 3, color.filled()).into_dyn(),
        SeriesStyle::Bars => {
            Rectangle::new([(lx, ly - 5), (lx + 20, ly + 5)], color.mix(0.6).filled()).into_dyn()
        }
        SeriesStyle::Line => PathElement::new(vec![(lx, ly), (lx + 20, ly)], stroke).into_dyn(),
    }
}

/// Whether a coordinate can be drawn on an axis of `scale`.
fn shown(v: f64, scale: Scale) -> bool {
    v.is_finite() && (scale == Scale::Linear || v > 0.0)
}

#[derive(Clone, Copy)]
enum Axis {
    X,
    Y,
}

/// The range of an axis: the drawable values of every series, padded by 5%
/// (in log10 units on a log axis); linear y axes of bar series include 0; an
/// axis with one value or none gets a unit-wide range around it.
fn axis_range(chart: &Chart, axis: Axis) -> Range<f64> {
    let scale = match axis {
        Axis::X => chart.x_scale,
        Axis::Y => chart.y_scale,
    };
    let log = scale == Scale::Log10;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for series in &chart.series {
        for &(px, py) in &series.points {
            if !(shown(px, chart.x_scale) && shown(py, chart.y_scale)) {
                continue;
            }
            let v = match axis {
                Axis::X => px,
                Axis::Y => py,
            };
            let v = if log { v.log10() } else { v };
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if series.style == SeriesStyle::Bars && matches!(axis, Axis::Y) && !log {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
    }
    if matches!(axis, Axis::X) && !chart.categories.is_empty() && !log {
        return 0.5..chart.categories.len() as f64 + 0.5;
    }
    if !lo.is_finite() || !hi.is_finite() {
        (lo, hi) = (0.0, 1.0);
    } else if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        (lo, hi) = (lo - 0.5, hi + 0.5);
    } else {
        let pad = 0.05 * (hi - lo);
        (lo, hi) = (lo - pad, hi + pad);
    }
    if matches!(axis, Axis::Y) && !chart.categories.is_empty() {
        if log {
            // Bars start at a power of ten: plotters labels a log axis only
            // from its first whole decade up.
            lo = lo.floor() - 1e-9;
        }
        // Room above the bars for the legend (upper right): about 22 pixels
        // per entry of a plot area about 440 pixels high.
        let entries = chart.series.iter().filter(|s| !s.label.is_empty()).count();
        if entries > 0 {
            let share = ((entries as f64 * 22.0 + 24.0) / 440.0).min(0.6);
            hi = lo + (hi - lo) / (1.0 - share);
        }
    }
    if log {
        10f64.powf(lo)..10f64.powf(hi)
    } else {
        lo..hi
    }
}

/// Where bar series `slot` of `slots` stands relative to its x value, as
/// offsets (from, to) in axis units (log10 units on a log axis): the group
/// spans ±`group_half`, each series gets an equal share of it, and one bar of
/// a single series is centred.
fn bar_slot(group_half: f64, slot: usize, slots: usize) -> (f64, f64) {
    let slots = slots.max(1);
    let width = 2.0 * group_half / slots as f64;
    let from = -group_half + width * slot as f64;
    // A thin gap between neighbouring bars of a group.
    let gap = if slots > 1 { 0.06 * width } else { 0.0 };
    (from + gap, from + width - gap)
}

/// Half the width of a group of bars: 40% of the smallest gap between x
/// values (in log10 units on a log axis), 0.4 when there is a single bar.
fn bar_half_width(points: &[(f64, f64)], scale: Scale) -> f64 {
    let mut xs: Vec<f64> = points
        .iter()
        .map(|&(x, _)| if scale == Scale::Log10 { x.log10() } else { x })
        .collect();
    xs.sort_by(f64::total_cmp);
    let gap = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&g| g > 0.0)
        .fold(f64::INFINITY, f64::min);
    if gap.is_finite() { 0.4 * gap } else { 0.4 }
}

/// Labels plotters puts on each axis unless told otherwise (its mesh's
/// default `x_labels` and `y_labels`).
const DEFAULT_TICKS: usize = 11;

/// A tick within this many tick spacings of zero is zero: plotters adds
/// the spacing up from the first tick, and round-off leaves zero as
/// −2.2e-16 and the like.
const ZERO_TICK_TOLERANCE: f64 = 1e-9;

/// The ticks plotters puts on a linear axis over `range` (at most
/// `max_ticks`), with round-off near zero removed ([`snap_to_zero`]).
fn linear_ticks(range: Range<f64>, max_ticks: usize) -> Vec<f64> {
    let raw = RangedCoordf64::from(range).key_points(max_ticks);
    let step = spacing(&raw);
    raw.into_iter().map(|v| snap_to_zero(v, step)).collect()
}

/// The smallest gap between consecutive `ticks` (NaN for fewer than two).
fn spacing(ticks: &[f64]) -> f64 {
    ticks
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(f64::NAN, f64::min)
}

/// The spacing of the ticks on an axis of `scale` over `range`; NaN on a
/// log axis (whose ticks never come near zero).
fn tick_step(scale: Scale, range: Range<f64>) -> f64 {
    match scale {
        Scale::Linear => spacing(&linear_ticks(range, DEFAULT_TICKS)),
        Scale::Log10 => f64::NAN,
    }
}

/// `v`, or exactly 0 when it is within [`ZERO_TICK_TOLERANCE`] tick
/// spacings `step` of zero.
fn snap_to_zero(v: f64, step: f64) -> f64 {
    if v.abs() <= ZERO_TICK_TOLERANCE * step {
        0.0
    } else {
        v
    }
}

/// Tick labels: short, no trailing zeros, scientific for large or tiny values.
fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e5).contains(&a) {
        let text = format!("{v:.1e}");
        text.replace(".0e", "e")
    } else {
        let text = format!("{v:.4}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        if text == "-0" {
            "0".into()
        } else {
            text.into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::Series;

    fn sample_chart(x_scale: Scale, y_scale: Scale) -> Chart {
        let line: Vec<(f64, f64)> = (1..=50).map(|i| (i as f64, (i as f64).sqrt())).collect();
        Chart {
            file_stem: "sample".into(),
            title: "Sample chart".into(),
            x_label: "draw".into(),
            y_label: "value".into(),
            x_scale,
            y_scale,
            series: vec![
                Series {
                    label: "line".into(),
                    points: line.clone(),
                    style: SeriesStyle::Line,
                },
                Series {
                    label: "dashed".into(),
                    points: line.iter().map(|&(x, y)| (x, 1.5 * y)).collect(),
                    style: SeriesStyle::Dashed,
                },
                Series {
                    label: "points".into(),
                    points: vec![
                        (2.0, 3.0),
                        (f64::NAN, 1.0),
                        (10.0, f64::INFINITY),
                        (20.0, 4.0),
                    ],
                    style: SeriesStyle::Points,
                },
                Series {
                    label: "bars".into(),
                    points: (1..=10).map(|i| (5.0 * i as f64, 0.5 * i as f64)).collect(),
                    style: SeriesStyle::Bars,
                },
            ],
            categories: Vec::new(),
        }
    }

    #[test]
    fn every_scale_combination_draws() {
        for xs in [Scale::Linear, Scale::Log10] {
            for ys in [Scale::Linear, Scale::Log10] {
                let chart = sample_chart(xs, ys);
                let svg = render_svg(&chart, true).unwrap();
                assert!(svg.starts_with("<svg") && svg.contains("<polyline"));
                if chart_font() {
                    assert!(svg.contains("Sample chart") && svg.contains("dashed"));
                }
                let bare = render_svg(&chart, false).unwrap();
                assert!(!bare.contains("<text") && bare.contains("<polyline"));
                let png = render_png(&chart, true).unwrap();
                assert_eq!(&png[1..4], b"PNG");
            }
        }
    }

    #[test]
    fn files_are_written_into_the_output_folder() {
        let folder = std::env::temp_dir().join(format!("qnmc-plots-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        let dir = OutputDir::create(&folder, false).unwrap();
        let paths = render_chart(&sample_chart(Scale::Linear, Scale::Log10), &dir).unwrap();
        assert_eq!(
            paths,
            [folder.join("sample.svg"), folder.join("sample.png")]
        );
        for p in &paths {
            assert!(
                std::fs::metadata(p).unwrap().len() > 1000,
                "{}",
                p.display()
            );
        }
        // Without force a second drawing of the same chart is refused.
        let err = render_chart(&sample_chart(Scale::Linear, Scale::Linear), &dir).unwrap_err();
        assert!(matches!(err, OutputError::FileExists { .. }));
        let nameless = Chart::default();
        let err = render_chart(&nameless, &dir).unwrap_err();
        assert!(matches!(err, OutputError::BadFileName { .. }));
        dir.finish().unwrap();
        std::fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn ranges_pad_include_zero_for_bars_and_survive_degenerate_input() {
        let chart = sample_chart(Scale::Linear, Scale::Linear);
        let y = axis_range(&chart, Axis::Y);
        assert!(y.start < 0.0 && y.end > 1.5 * 50f64.sqrt());
        let empty = Chart::default();
        assert_eq!(axis_range(&empty, Axis::X), 0.0..1.0);
        let flat = Chart {
            series: vec![Series {
                points: vec![(1.0, 2.0), (3.0, 2.0)],
                ..Series::default()
            }],
            ..Chart::default()
        };
        assert_eq!(axis_range(&flat, Axis::Y), 1.5..2.5);
        // Log axes ignore non-positive values.
        let log = Chart {
            y_scale: Scale::Log10,
            series: vec![Series {
                points: vec![(1.0, 0.0), (2.0, 10.0), (3.0, 1000.0)],
                ..Series::default()
            }],
            ..Chart::default()
        };
        let r = axis_range(&log, Axis::Y);
        assert!(r.start > 5.0 && r.start < 10.0 && r.end > 1000.0, "{r:?}");
    }

    /// The colour under each column of pixel row `y` of a PNG.
    fn row_colours(png: &[u8], y: u32) -> Vec<[u8; 3]> {
        let mut reader = png::Decoder::new(png).read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut pixels).unwrap();
        let w = info.width;
        (0..w)
            .map(|x| {
                let i = ((y * w + x) * 3) as usize;
                [pixels[i], pixels[i + 1], pixels[i + 2]]
            })
            .collect()
    }

    #[test]
    fn grouped_bars_stand_side_by_side_without_overlap() {
        // Three bar series over two categories, equal heights: along a pixel
        // row through every bar, each category must show the three series'
        // colours in series order, each once, and no blend of two of them
        // (overlapping translucent bars would mix their colours).
        let series: Vec<Series> = (0..3)
            .map(|k| Series {
                label: format!("s{k}"),
                points: vec![(1.0, 1.0), (2.0, 1.0)],
                style: SeriesStyle::Bars,
            })
            .collect();
        let chart = Chart {
            file_stem: "bars".into(),
            series,
            categories: vec!["a".into(), "b".into()],
            ..Chart::default()
        };
        let png = render_png(&chart, false).unwrap();
        let colours = row_colours(&png, CHART_SIZE.1 - 150);
        let bar_colour = |k: usize| {
            let (r, g, b) = PALETTE[k].mix(0.6).rgb();
            // 60% over white.
            let over = |c: u8| (0.6 * c as f64 + 0.4 * 255.0).round() as i32;
            [over(r), over(g), over(b)]
        };
        let close = |c: [u8; 3], t: [i32; 3]| (0..3).all(|i| (c[i] as i32 - t[i]).abs() <= 2);
        let mut runs: Vec<usize> = Vec::new();
        let mut unknown = 0;
        for c in colours {
            if c.iter().all(|&v| v >= 200) && c[0] == c[1] && c[1] == c[2] {
                continue; // white background or light grid
            }
            match (0..3).find(|&k| close(c, bar_colour(k))) {
                Some(k) => {
                    if runs.last() != Some(&k) {
                        runs.push(k);
                    }
                }
                None => unknown += 1,
            }
        }
        assert_eq!(runs, [0, 1, 2, 0, 1, 2]);
        // Anti-aliased bar edges and axis lines only.
        assert!(unknown < 20, "{unknown} pixels of mixed colour");
        assert!(axis_range(&chart, Axis::X) == (0.5..2.5));
    }

    #[test]
    fn bar_slots_split_the_group() {
        let (a0, a1) = bar_slot(0.4, 0, 4);
        let (b0, _) = bar_slot(0.4, 1, 4);
        let (_, d1) = bar_slot(0.4, 3, 4);
        assert!(a0 >= -0.4 && a1 < b0 && d1 <= 0.4);
        assert_eq!(bar_slot(0.4, 0, 1), (-0.4, 0.4));
    }

    #[test]
    fn ticks_near_zero_are_zero() {
        // plotters' own ticks over (-1.1, 0.9) miss zero by round-off.
        let raw = RangedCoordf64::from(-1.1..0.9).key_points(DEFAULT_TICKS);
        assert!(
            raw.iter().any(|&v| v != 0.0 && v.abs() < 1e-12),
            "the example no longer shows the round-off: {raw:?}"
        );
        let ticks = linear_ticks(-1.1..0.9, DEFAULT_TICKS);
        assert_eq!(ticks.len(), raw.len());
        assert!(ticks.contains(&0.0), "{ticks:?}");
        assert!(
            ticks.iter().all(|&v| v == 0.0 || v.abs() > 0.1),
            "{ticks:?}"
        );
        let step = tick_step(Scale::Linear, -1.1..0.9);
        assert!((step - 0.2).abs() < 1e-9, "{step}");
        let labels: Vec<String> = raw
            .iter()
            .map(|&v| tick_label(snap_to_zero(v, step)))
            .collect();
        assert!(labels.contains(&"0".to_string()), "{labels:?}");
        assert!(!labels.iter().any(|l| l.contains("e-1")), "{labels:?}");
        // Small values that are ticks of their own stay.
        assert_eq!(snap_to_zero(1e-12, 1e-11), 1e-12);
        assert_eq!(snap_to_zero(-2.2e-16, 0.2), 0.0);
        assert!(tick_step(Scale::Log10, 1.0..100.0).is_nan());
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(0.5), "0.5");
        assert_eq!(tick_label(100.0), "100");
        assert_eq!(tick_label(1e6), "1e6");
        assert_eq!(tick_label(-2.5e-5), "-2.5e-5");
    }
}
