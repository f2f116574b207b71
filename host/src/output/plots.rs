//! Drawing a [`Chart`] as SVG and PNG with plotters.
//!
//! Text (title, axis labels, tick labels, legend) needs a TrueType font found
//! at run time (see `QNMC_FONT` in [`FONT_ENV`](super::FONT_ENV)); without
//! one the charts are drawn with axes, grid and curves but no text, and the
//! run goes on.

use std::ops::Range;
use std::path::PathBuf;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
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
/// returns the two paths. Both are drawn in memory first, then written with
/// [`OutputDir::write`] (atomic, no overwrite without force).
///
/// With no usable font the charts are drawn without text (a one-line warning
/// goes to stderr once per process).
pub fn render_chart(chart: &Chart, dir: &OutputDir) -> Result<Vec<PathBuf>, OutputError> {
    if chart.file_stem.is_empty() {
        return Err(OutputError::BadFileName {
            folder: dir.path().to_path_buf(),
            name: chart.file_stem.clone(),
        });
    }
    let svg_name = format!("{}.svg", chart.file_stem);
    let png_name = format!("{}.png", chart.file_stem);
    let failed = |name: &str, message: String| OutputError::Render {
        path: dir.path().join(name),
        message,
    };
    // Should text drawing fail for a reason of the font's own, draw without.
    let svg = render_svg(chart, true)
        .or_else(|_| render_svg(chart, false))
        .map_err(|m| failed(&svg_name, m))?;
    let png = render_png(chart, true)
        .or_else(|_| render_png(chart, false))
        .map_err(|m| failed(&png_name, m))?;
    Ok(vec![
        dir.write(&svg_name, svg.as_bytes())?,
        dir.write(&png_name, &png)?,
    ])
}

/// `chart` as an SVG document; `with_text: false`, or no usable font, leaves
/// out every text element.
pub fn render_svg(chart: &Chart, with_text: bool) -> Result<String, String> {
    let with_text = with_text && chart_font().is_some();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, CHART_SIZE).into_drawing_area();
        draw(&root, chart, with_text)?;
    }
    Ok(svg)
}

/// `chart` as a PNG image (8-bit RGB); `with_text: false`, or no usable
/// font, leaves out every text element.
pub fn render_png(chart: &Chart, with_text: bool) -> Result<Vec<u8>, String> {
    let with_text = with_text && chart_font().is_some();
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
    encoder.set_compression(png::Compression::Best);
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

    let mut mesh = context.configure_mesh();
    mesh.light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(210, 210, 210));
    if with_text {
        mesh.x_desc(&chart.x_label)
            .y_desc(&chart.y_label)
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 17))
            .x_label_formatter(&|v| tick_label(*v))
            .y_label_formatter(&|v| tick_label(*v));
    } else {
        mesh.x_labels(0)
            .y_labels(0)
            .disable_x_axis()
            .disable_y_axis();
    }
    mesh.draw().map_err(|e| error(&e))?;

    let x_scale = chart.x_scale;
    let y_scale = chart.y_scale;
    let y_floor = context.y_range().start;
    let mut any_label = false;
    for (k, series) in chart.series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
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
                let half = bar_half_width(&points, x_scale);
                let base = match y_scale {
                    Scale::Linear => 0.0,
                    Scale::Log10 => y_floor,
                };
                context
                    .draw_series(points.iter().map(|&(px, py)| {
                        let (left, right) = match x_scale {
                            Scale::Linear => (px - half, px + half),
                            Scale::Log10 => (px / 10f64.powf(half), px * 10f64.powf(half)),
                        };
                        Rectangle::new([(left, base), (right, py)], color.mix(0.6).filled())
                    }))
                    .map_err(|e| error(&e))?
            }
        };
        if with_text && !series.label.is_empty() {
            any_label = true;
            let style = series.style;
            annotation
                .label(series.label.as_str())
                .legend(move |(lx, ly)| {
                    let stroke = color.stroke_width(2);
                    match style {
                        SeriesStyle::Dashed => {
                            PathElement::new(vec![(lx, ly), (lx + 8, ly)], stroke).into_dyn()
                        }
                        SeriesStyle::Points => {
                            Circle::new((lx + 10, ly), 3, color.filled()).into_dyn()
                        }
                        SeriesStyle::Bars => Rectangle::new(
                            [(lx, ly - 5), (lx + 20, ly + 5)],
                            color.mix(0.6).filled(),
                        )
                        .into_dyn(),
                        SeriesStyle::Line => {
                            PathElement::new(vec![(lx, ly), (lx + 20, ly)], stroke).into_dyn()
                        }
                    }
                });
        }
    }
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
    if !lo.is_finite() || !hi.is_finite() {
        (lo, hi) = (0.0, 1.0);
    } else if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        (lo, hi) = (lo - 0.5, hi + 0.5);
    } else {
        let pad = 0.05 * (hi - lo);
        (lo, hi) = (lo - pad, hi + pad);
    }
    if log {
        10f64.powf(lo)..10f64.powf(hi)
    } else {
        lo..hi
    }
}

/// Half the width of a bar: 40% of the smallest gap between x values (in
/// log10 units on a log axis), 0.4 when there is a single bar.
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
        }
    }

    #[test]
    fn every_scale_combination_draws() {
        for xs in [Scale::Linear, Scale::Log10] {
            for ys in [Scale::Linear, Scale::Log10] {
                let chart = sample_chart(xs, ys);
                let svg = render_svg(&chart, true).unwrap();
                assert!(svg.starts_with("<svg") && svg.contains("<polyline"));
                if chart_font().is_some() {
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

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(0.5), "0.5");
        assert_eq!(tick_label(100.0), "100");
        assert_eq!(tick_label(1e6), "1e6");
        assert_eq!(tick_label(-2.5e-5), "-2.5e-5");
    }
}
