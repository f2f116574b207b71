//! Chart text (title, axes, legend) is drawn with the font compiled into
//! qnmc, not a system font: these tests count the dark pixels where the title
//! goes. `.ci/run` runs them with every system font hidden
//! (`.ci/hide-fonts`, which sets `QNMC_FONTS_HIDDEN=1`); then the test also
//! checks that no font file is visible, so the hiding itself is tested.

use std::path::{Path, PathBuf};
use std::process::Command;

use qnmc_host::chart::{Chart, Scale, Series, SeriesStyle};
use qnmc_host::output::{CHART_SIZE, render_png};

/// RGB pixels of a PNG drawn by qnmc.
fn decode(png: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(png);
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

/// Pixels darker than light grey in rows `rows` (the title band is above
/// the plot area, where nothing but the title is drawn).
fn dark_pixels(png: &[u8], rows: std::ops::Range<u32>) -> usize {
    let (width, _, pixels) = decode(png);
    rows.flat_map(|y| (0..width).map(move |x| ((y * width + x) * 3) as usize))
        .filter(|&i| pixels[i..i + 3].iter().all(|&c| c < 160))
        .count()
}

/// Font files a system font lookup could find.
fn system_font_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| ["ttf", "otf", "ttc", "pfb"].contains(&e.to_lowercase().as_str()))
            {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut dirs = vec![
        PathBuf::from("/usr/share/fonts"),
        PathBuf::from("/usr/local/share/fonts"),
    ];
    if let Some(home) = home {
        dirs.push(home.join(".fonts"));
        dirs.push(home.join(".local/share/fonts"));
    }
    for dir in dirs {
        walk(&dir, &mut found);
    }
    found
}

fn fonts_hidden_check() {
    if std::env::var_os("QNMC_FONTS_HIDDEN").is_some() {
        let found = system_font_files();
        assert!(
            found.is_empty(),
            "QNMC_FONTS_HIDDEN is set but fonts are visible: {found:?}"
        );
    }
}

fn chart() -> Chart {
    Chart {
        file_stem: "text".into(),
        title: "Trace of θ[1] — a title".into(),
        x_label: "draw".into(),
        y_label: "value".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series: vec![Series {
            label: "chain 1".into(),
            points: (0..100)
                .map(|i| (i as f64, (i as f64 * 0.3).sin()))
                .collect(),
            style: SeriesStyle::Line,
        }],
        categories: Vec::new(),
    }
}

#[test]
fn charts_have_text_without_any_system_font() {
    fonts_hidden_check();
    let with_text = render_png(&chart(), true).unwrap();
    let without = render_png(&chart(), false).unwrap();
    let (width, height, _) = decode(&with_text);
    assert_eq!((width, height), CHART_SIZE);
    // The caption (24 px) sits in the top 16 px margin plus its own band.
    let title_band = 0..48;
    assert_eq!(dark_pixels(&without, title_band.clone()), 0);
    let title = dark_pixels(&with_text, title_band);
    // 20-odd glyphs of a 24 px font: well over a thousand dark pixels.
    assert!(title > 500, "only {title} dark pixels where the title goes");
    // Tick labels and axis names below the plot.
    let bottom = dark_pixels(&with_text, height - 60..height);
    assert!(bottom > dark_pixels(&without, height - 60..height) + 200);
}

#[test]
fn qnmc_run_writes_charts_with_text_for_the_chosen_quantities() {
    fonts_hidden_check();
    let dir = std::env::temp_dir().join(format!("qnmc-plot-text-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = |plot: &str, out: &str| {
        let mut args = vec![
            "run",
            "--sampler",
            "hmc",
            "--target",
            "gaussian",
            "--dimension",
            "3",
            "--chains",
            "2",
            "--warmup",
            "100",
            "--draws",
            "100",
            "--quiet",
            "--output",
            out,
        ];
        if !plot.is_empty() {
            args.extend(["--plot", plot]);
        }
        Command::new(env!("CARGO_BIN_EXE_qnmc"))
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let out = run("x[2],lp__", "chosen");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut pngs: Vec<String> = std::fs::read_dir(dir.join("chosen"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".png"))
        .collect();
    pngs.sort();
    assert_eq!(
        pngs,
        [
            "autocorrelation_lp.png",
            "autocorrelation_x_2.png",
            "density_lp.png",
            "density_x_2.png",
            "rank_lp.png",
            "rank_x_2.png",
            "trace_lp.png",
            "trace_x_2.png"
        ]
    );
    for name in &pngs {
        let png = std::fs::read(dir.join("chosen").join(name)).unwrap();
        let title = dark_pixels(&png, 0..48);
        assert!(
            title > 300,
            "{name}: only {title} dark pixels in the title band"
        );
    }

    // `slowest`: the slowest-mixing quantities (all 3 here) and lp__;
    // without --plot, none.
    let out = run("slowest", "slowest");
    assert_eq!(out.status.code(), Some(0));
    for stem in ["x_1", "x_2", "x_3", "lp"] {
        assert!(
            dir.join(format!("slowest/rank_{stem}.png")).exists(),
            "{stem}"
        );
    }
    let out = run("", "default");
    assert_eq!(out.status.code(), Some(0));
    assert!(dir.join("default/summary.json").exists());
    assert!(!dir.join("default/rank_lp.png").exists());

    // A name that is not a quantity: a usage error before sampling.
    let out = run("x[9]", "bad");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "--plot: no quantity named `x[9]`; the quantities are x[1], x[2], x[3], lp__"
        ),
        "{stderr}"
    );
    assert!(!dir.join("bad").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
