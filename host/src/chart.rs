//! Chart descriptions: the data of a plot, independent of how it is drawn.
//!
//! Reproductions and `qnmc run` describe what to plot with these types; the
//! renderer in `output` turns a [`Chart`] into SVG and PNG files.

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeriesStyle {
    /// Points joined by straight lines.
    #[default]
    Line,
    /// Unjoined markers.
    Points,
    /// Vertical bars from zero (histograms, autocorrelation). When a chart
    /// has several bar series they are grouped: side by side at each x,
    /// one slot per series, in series order.
    Bars,
    /// A dashed line (reference curves: the truth, a paper's numbers).
    Dashed,
}

/// One named curve of a chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// (x, y) points in drawing order. Non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
    /// How the points are drawn.
    pub style: SeriesStyle,
}

/// Axis scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    /// Linear axis.
    #[default]
    Linear,
    /// Base-10 logarithmic axis (non-positive values are skipped).
    Log10,
}

/// A 2-D chart with any number of series sharing its axes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chart {
    /// File stem the renderer writes (`<stem>.svg`, `<stem>.png`).
    pub file_stem: String,
    /// Title printed above the plot.
    pub title: String,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
    /// Scale of the x axis.
    pub x_scale: Scale,
    /// Scale of the y axis.
    pub y_scale: Scale,
    /// The curves.
    pub series: Vec<Series>,
    /// Names of the x positions 1, 2, … of a bar chart by category (a grouped
    /// bar chart: x = k + 1 is category k); empty for a numeric x axis. When
    /// set, the x axis shows these names instead of numbers.
    pub categories: Vec<String>,
}
