//! The font the charts' text is drawn with, found at run time.
//!
//! qnmc ships no font and links no font library: plotters' pure-Rust
//! `ab_glyph` text renderer is given a TrueType file read from `QNMC_FONT`
//! (a path) or from the usual places on Linux, macOS and Windows. Without one,
//! charts are drawn without text.

use std::path::PathBuf;
use std::sync::OnceLock;

use plotters::style::FontStyle;

/// The font family name the renderer asks plotters for.
pub(crate) const FAMILY: &str = "sans-serif";

/// Environment variable naming a TrueType font file to draw text with.
pub const FONT_ENV: &str = "QNMC_FONT";

/// Places tried, in order, after `QNMC_FONT`.
const CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/usr/share/fonts/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
    "/System/Library/Fonts/Geneva.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
    "C:\\Windows\\Fonts\\segoeui.ttf",
];

/// Registers a font with plotters once per process; `Some(path)` of the font
/// used, `None` when none was found (the charts then have no text, and one
/// line on stderr says so).
pub(crate) fn chart_font() -> Option<&'static PathBuf> {
    static FONT: OnceLock<Option<PathBuf>> = OnceLock::new();
    FONT.get_or_init(|| {
        let from_env = std::env::var_os(FONT_ENV).map(PathBuf::from);
        let candidates = from_env
            .iter()
            .cloned()
            .chain(CANDIDATES.iter().map(PathBuf::from));
        for path in candidates {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            // plotters keeps fonts for the life of the process; one leak per
            // process, of one font file.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font(FAMILY, FontStyle::Normal, bytes).is_ok() {
                return Some(path);
            }
            eprintln!("warning: {} is not a usable TrueType font", path.display());
        }
        eprintln!(
            "warning: no TrueType font found (set {FONT_ENV} to a .ttf file); \
             charts are drawn without text"
        );
        None
    })
    .as_ref()
}
