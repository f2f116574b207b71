//! Charts are drawn without any font when text is turned off: this test
//! binary never registers one (fonts are registered per process, on the first
//! chart drawn with text), so any text drawing here would fail.

use qnmc_host::chart::{Chart, Scale, Series, SeriesStyle};
use qnmc_host::output::{render_png, render_svg};

#[test]
fn charts_without_text_need_no_font() {
    for (x_scale, y_scale) in [(Scale::Linear, Scale::Linear), (Scale::Log10, Scale::Log10)] {
        let chart = Chart {
            file_stem: "no-font".into(),
            title: "never drawn".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_scale,
            y_scale,
            series: vec![
                Series {
                    label: "a".into(),
                    points: (1..100).map(|i| (i as f64, (i * i) as f64)).collect(),
                    style: SeriesStyle::Line,
                },
                Series {
                    label: "b".into(),
                    points: (1..10)
                        .map(|i| (10.0 * i as f64, 50.0 * i as f64))
                        .collect(),
                    style: SeriesStyle::Bars,
                },
            ],
            categories: Vec::new(),
        };
        let svg = render_svg(&chart, false).unwrap();
        assert!(!svg.contains("<text"), "{svg}");
        assert!(svg.contains("<polyline"));
        let png = render_png(&chart, false).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}
