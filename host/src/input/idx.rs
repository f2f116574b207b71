//! IDX files, the format of MNIST and Fashion-MNIST: gzip-compressed or raw.
//!
//! An IDX file is a 4-byte magic number — two zero bytes, a type code and
//! the number of dimensions k — then k big-endian `u32` sizes, then the
//! values in row-major order. Only type code `0x08` (unsigned bytes) is read:
//! it is the type of every MNIST-family image (`…-images-idx3-ubyte`, magic
//! `0x00000803`: count × rows × columns) and label file (`…-labels-idx1-ubyte`,
//! magic `0x00000801`: count). A file starting with the gzip signature
//! (`1f 8b`) is decompressed first, whatever its name, so the `.gz` files as
//! distributed and a decompressed copy both read.
//!
//! Every check has its own message, prefixed by the file's path
//! ([`InputError`]): a header that is too short, a magic number that is not
//! IDX, an element type other than unsigned bytes, the wrong number of
//! dimensions for images or labels, and a data part longer or shorter than
//! the header's sizes say.
//!
//! ```
//! use qnmc_host::input::{parse_idx, InputErrorKind};
//! use std::path::Path;
//!
//! // Labels: magic 0x00000801, one size (3), then the three bytes.
//! let bytes = [0, 0, 8, 1, 0, 0, 0, 3, 7, 9, 7];
//! let labels = parse_idx(&bytes, Path::new("labels.idx")).unwrap();
//! assert_eq!(labels.shape(), [3]);
//! assert_eq!(labels.values(), [7, 9, 7]);
//!
//! // One byte missing from the data part.
//! let err = parse_idx(&bytes[..10], Path::new("labels.idx")).unwrap_err();
//! assert_eq!(err.kind(), InputErrorKind::Dimension);
//! assert!(err.to_string().starts_with("labels.idx: "), "{err}");
//! ```

use super::{InputError, InputErrorKind};
use std::io::Read;
use std::path::Path;

/// The two bytes every gzip stream starts with.
const GZIP_SIGNATURE: [u8; 2] = [0x1f, 0x8b];

/// The IDX type code of unsigned bytes, the only element type read here.
const UNSIGNED_BYTE: u8 = 0x08;

/// The values of an IDX file of unsigned bytes and its shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdxArray {
    shape: Vec<usize>,
    values: Vec<u8>,
}

impl IdxArray {
    /// The size of each dimension, outermost first (images: count, rows,
    /// columns).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The values in row-major order (`shape` multiplied out of them).
    pub fn values(&self) -> &[u8] {
        &self.values
    }

    /// The values, taken out.
    pub fn into_values(self) -> Vec<u8> {
        self.values
    }

    /// The array as images: it must have 3 dimensions (count, rows,
    /// columns), as an `…-images-idx3-ubyte` file does; `source` names the
    /// file in the error.
    pub fn into_images(self, source: &Path) -> Result<IdxImages, InputError> {
        expect_rank(&self, 3, "images", source)?;
        let (count, rows, columns) = (self.shape[0], self.shape[1], self.shape[2]);
        Ok(IdxImages {
            count,
            rows,
            columns,
            pixels: self.values,
        })
    }

    /// The array as labels: it must have 1 dimension, as an
    /// `…-labels-idx1-ubyte` file does; `source` names the file in the error.
    pub fn into_labels(self, source: &Path) -> Result<Vec<u8>, InputError> {
        expect_rank(&self, 1, "labels", source)?;
        Ok(self.values)
    }
}

/// A stack of images read from an IDX file of rank 3.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdxImages {
    /// Number of images.
    pub count: usize,
    /// Pixel rows per image.
    pub rows: usize,
    /// Pixel columns per image.
    pub columns: usize,
    /// `count · rows · columns` pixels, image by image, each row by row.
    pub pixels: Vec<u8>,
}

impl IdxImages {
    /// Pixels per image, `rows · columns`.
    pub fn pixels_per_image(&self) -> usize {
        self.rows * self.columns
    }

    /// Image `n`'s pixels, row by row.
    pub fn image(&self, n: usize) -> &[u8] {
        let size = self.pixels_per_image();
        &self.pixels[n * size..(n + 1) * size]
    }
}

fn format_error(source: &Path, message: String) -> InputError {
    InputError::new(source, InputErrorKind::Format, message)
}

/// Reads the IDX file `path` (gzip-compressed or raw; see the module docs).
pub fn read_idx(path: impl AsRef<Path>) -> Result<IdxArray, InputError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| InputError::io(path, &e))?;
    parse_idx(&bytes, path)
}

/// Parses the bytes of an IDX file (gzip-compressed or raw); `source` names
/// the file in errors.
pub fn parse_idx(bytes: &[u8], source: &Path) -> Result<IdxArray, InputError> {
    if bytes.starts_with(&GZIP_SIGNATURE) {
        let mut raw = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_end(&mut raw)
            .map_err(|e| {
                format_error(
                    source,
                    format!("starts like a gzip file but cannot be decompressed: {e}"),
                )
            })?;
        parse_raw(&raw, source)
    } else {
        parse_raw(bytes, source)
    }
}

/// Parses an uncompressed IDX file.
fn parse_raw(bytes: &[u8], source: &Path) -> Result<IdxArray, InputError> {
    let Some(&[zero_a, zero_b, type_code, rank]) = bytes.first_chunk::<4>() else {
        return Err(format_error(
            source,
            format!(
                "only {} bytes: an IDX file starts with a 4-byte magic number",
                bytes.len()
            ),
        ));
    };
    if zero_a != 0 || zero_b != 0 {
        return Err(format_error(
            source,
            format!(
                "not an IDX file: its magic number 0x{} does not start with two zero bytes",
                hex(&bytes[..4])
            ),
        ));
    }
    if type_code != UNSIGNED_BYTE {
        return Err(format_error(
            source,
            format!(
                "IDX element type 0x{type_code:02x} is not read here; only unsigned bytes \
                 (0x08), the type of the MNIST-family files"
            ),
        ));
    }
    let rank = usize::from(rank);
    let header = 4 + 4 * rank;
    if bytes.len() < header {
        return Err(InputError::new(
            source,
            InputErrorKind::Dimension,
            format!(
                "the header announces {rank} dimensions ({header} header bytes) but the file \
                 has {} bytes",
                bytes.len()
            ),
        ));
    }
    let shape: Vec<usize> = bytes[4..header]
        .chunks_exact(4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .collect();
    let expected = shape
        .iter()
        .try_fold(1usize, |n, &s| n.checked_mul(s))
        .ok_or_else(|| {
            InputError::new(
                source,
                InputErrorKind::Dimension,
                format!("the sizes {shape:?} multiply to more than memory can hold"),
            )
        })?;
    let found = bytes.len() - header;
    if found != expected {
        let shape_text: Vec<String> = shape.iter().map(usize::to_string).collect();
        return Err(InputError::new(
            source,
            InputErrorKind::Dimension,
            format!(
                "the header's sizes {} call for {expected} data bytes but the file holds {found} \
                 ({})",
                shape_text.join(" × "),
                if found < expected {
                    "truncated?"
                } else {
                    "extra bytes at the end"
                }
            ),
        ));
    }
    Ok(IdxArray {
        shape,
        values: bytes[header..].to_vec(),
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `array` must have `rank` dimensions, as an `…-idx{rank}-ubyte` file of
/// `what` does.
fn expect_rank(array: &IdxArray, rank: usize, what: &str, source: &Path) -> Result<(), InputError> {
    if array.shape.len() == rank {
        return Ok(());
    }
    Err(InputError::new(
        source,
        InputErrorKind::Dimension,
        format!(
            "an IDX file of {what} has {rank} dimension{} (magic 0x0000080{rank}), this one has {} \
             (magic 0x0000080{})",
            if rank == 1 { "" } else { "s" },
            array.shape.len(),
            array.shape.len()
        ),
    ))
}

/// Reads an IDX image file (`…-images-idx3-ubyte[.gz]`: magic `0x00000803`,
/// sizes count, rows, columns).
pub fn read_idx_images(path: impl AsRef<Path>) -> Result<IdxImages, InputError> {
    let path = path.as_ref();
    read_idx(path)?.into_images(path)
}

/// Reads an IDX label file (`…-labels-idx1-ubyte[.gz]`: magic `0x00000801`,
/// one size, one byte per label).
pub fn read_idx_labels(path: impl AsRef<Path>) -> Result<Vec<u8>, InputError> {
    let path = path.as_ref();
    read_idx(path)?.into_labels(path)
}

/// The bytes of an uncompressed IDX file of unsigned bytes with `shape`
/// (for tests that write small IDX files).
#[cfg(test)]
pub(crate) fn idx_bytes(shape: &[usize], values: &[u8]) -> Vec<u8> {
    assert_eq!(shape.iter().product::<usize>(), values.len());
    let mut bytes = vec![0, 0, UNSIGNED_BYTE, shape.len() as u8];
    for &s in shape {
        bytes.extend_from_slice(&(s as u32).to_be_bytes());
    }
    bytes.extend_from_slice(values);
    bytes
}

/// `bytes` gzip-compressed (for tests).
#[cfg(test)]
pub(crate) fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fresh folder in the temporary directory for this test.
    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("qnmc-idx-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Two 2 × 3 images with pixels 0..12 and their labels.
    fn two_images() -> (Vec<u8>, Vec<u8>) {
        let pixels: Vec<u8> = (0..12).map(|p| p * 20).collect();
        (idx_bytes(&[2, 2, 3], &pixels), idx_bytes(&[2], &[7, 9]))
    }

    #[test]
    fn raw_and_gzipped_files_read_alike() {
        let dir = scratch("good");
        let (images, labels) = two_images();
        for (name, bytes) in [
            ("raw-images", images.clone()),
            ("images.gz", gzip(&images)),
            // The gzip signature decides, not the name.
            ("gzipped-without-suffix", gzip(&images)),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            let read = read_idx_images(&path).unwrap();
            assert_eq!((read.count, read.rows, read.columns), (2, 2, 3), "{name}");
            assert_eq!(read.pixels_per_image(), 6);
            assert_eq!(read.image(1), [120, 140, 160, 180, 200, 220], "{name}");
        }
        let path = dir.join("labels.gz");
        std::fs::write(&path, gzip(&labels)).unwrap();
        assert_eq!(read_idx_labels(&path).unwrap(), [7, 9]);
        let array = read_idx(&path).unwrap();
        assert_eq!(array.shape(), [2]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The error of parsing `bytes` as images, with its kind; the message must
    /// name the file first.
    fn images_error(bytes: &[u8]) -> (InputErrorKind, String) {
        let dir = scratch("corrupt");
        let path = dir.join("bad-images-idx3-ubyte");
        std::fs::write(&path, bytes).unwrap();
        let err = read_idx_images(&path).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with(&format!("{}: ", path.display())), "{text}");
        std::fs::remove_dir_all(dir).unwrap();
        (err.kind(), text)
    }

    #[test]
    fn every_corruption_has_its_own_message() {
        use InputErrorKind::{Dimension, Format};
        let (images, labels) = two_images();
        let cases: Vec<(&str, Vec<u8>, InputErrorKind, &str)> = vec![
            ("empty", vec![], Format, "only 0 bytes"),
            ("short magic", vec![0, 0, 8], Format, "only 3 bytes"),
            (
                "a zip archive",
                b"PK\x03\x04rest".to_vec(),
                Format,
                "magic number 0x504b0304 does not start with two zero bytes",
            ),
            (
                "doubles",
                vec![0, 0, 0x0e, 1, 0, 0, 0, 0],
                Format,
                "element type 0x0e is not read here",
            ),
            (
                "header cut",
                images[..10].to_vec(),
                Dimension,
                "announces 3 dimensions (16 header bytes) but the file has 10 bytes",
            ),
            (
                "data cut",
                images[..images.len() - 1].to_vec(),
                Dimension,
                "sizes 2 × 2 × 3 call for 12 data bytes but the file holds 11 (truncated?)",
            ),
            (
                "extra byte",
                [images.as_slice(), &[0]].concat(),
                Dimension,
                "holds 13 (extra bytes at the end)",
            ),
            (
                "labels as images",
                labels.clone(),
                Dimension,
                "an IDX file of images has 3 dimensions (magic 0x00000803), this one has 1 \
                 (magic 0x00000801)",
            ),
            (
                "gzip cut short",
                gzip(&images)[..20].to_vec(),
                Format,
                "starts like a gzip file but cannot be decompressed",
            ),
        ];
        for (what, bytes, kind, expected) in cases {
            let (found_kind, text) = images_error(&bytes);
            assert_eq!(found_kind, kind, "{what}: {text}");
            assert!(text.contains(expected), "{what}: {text}");
        }
        // A gzip stream whose check sum does not match its content.
        let mut flipped = gzip(&images);
        let last = flipped.len() - 5;
        flipped[last] ^= 0xff;
        let (kind, text) = images_error(&flipped);
        assert_eq!(kind, Format, "{text}");
        // Images handed to the label reader.
        let dir = scratch("rank");
        let path = dir.join("images-as-labels");
        std::fs::write(&path, &images).unwrap();
        let text = read_idx_labels(&path).unwrap_err().to_string();
        assert!(
            text.contains("an IDX file of labels has 1 dimension (magic 0x00000801)"),
            "{text}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_missing_file_names_itself() {
        let err = read_idx_labels("/nonexistent/qnmc/labels-idx1-ubyte.gz").unwrap_err();
        assert_eq!(err.kind(), InputErrorKind::Io);
        assert!(
            err.to_string()
                .contains("cannot read /nonexistent/qnmc/labels-idx1-ubyte.gz"),
            "{err}"
        );
    }
}
