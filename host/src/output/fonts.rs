//! The font the charts' text is drawn with: shipped in the binary.
//!
//! qnmc links no font library and reads no system font: plotters' pure-Rust
//! `ab_glyph` text renderer is given [`EMBEDDED_FONT`], a subset of DejaVu
//! Sans (Latin, Greek, arrows, mathematical operators) compiled in with
//! `include_bytes!` from `host/fonts/` (licence and provenance in
//! `host/fonts/LICENSE-DejaVu.txt`). Charts therefore have the same text on
//! every machine, with or without fonts installed.

use std::sync::OnceLock;

use plotters::style::FontStyle;

/// The font family name the renderer asks plotters for.
pub(crate) const FAMILY: &str = "sans-serif";

/// The TrueType font every chart's text is drawn with (DejaVu Sans subset,
/// Bitstream Vera licence / public domain; see `host/fonts/LICENSE-DejaVu.txt`).
pub const EMBEDDED_FONT: &[u8] = include_bytes!("../../fonts/DejaVuSans-subset.ttf");

/// Registers [`EMBEDDED_FONT`] with plotters once per process; `true` when
/// it is usable (always, unless the shipped file were corrupt: the charts
/// would then be drawn without text and one line on stderr says so).
pub(crate) fn chart_font() -> bool {
    static FONT: OnceLock<bool> = OnceLock::new();
    *FONT.get_or_init(|| {
        let ok = plotters::style::register_font(FAMILY, FontStyle::Normal, EMBEDDED_FONT).is_ok();
        if !ok {
            eprintln!(
                "warning: the embedded chart font is not usable; charts are drawn without text"
            );
        }
        ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_font_registers() {
        assert!(EMBEDDED_FONT.len() > 10_000);
        assert!(chart_font());
    }
}
