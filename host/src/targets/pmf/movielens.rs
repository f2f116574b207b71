//! [`read_movielens`]: the MovieLens `ratings.dat` format
//! (`UserID::MovieID::Rating::Timestamp`, one rating a line), as a
//! [`Ratings`] with dense indices and the fixed 10 % test split.
//!
//! MovieLens's licence does not allow passing the files on, so none is in
//! the repository: a user downloads MovieLens 1M from grouplens.org and
//! names its `ratings.dat` (`--data`).

use super::ratings::{Ratings, RatingsSource, SPLIT_SEED, TEST_FRACTION, Triples};
use crate::input::{InputError, InputErrorKind, Sha256};
use std::path::Path;

/// The fields of a line, as messages name them.
const FIELDS: [&str; 4] = ["UserID", "MovieID", "Rating", "Timestamp"];

/// Reads a MovieLens `ratings.dat` file.
///
/// Every non-blank line must be `UserID::MovieID::Rating::Timestamp`: user
/// and movie ids and the timestamp whole numbers (ids below 2³²), the
/// rating a finite number (MovieLens's are 1 to 5); a `\r` before the
/// newline is allowed. User ids are mapped to dense indices 0..I in
/// increasing id order, and movie ids to 0..J likewise (only movies that
/// were rated count), so I × J is the matrix of what the file holds.
/// The ratings are ordered by (user, movie), whatever the order of the
/// lines, and 10 % of them are held out as the test set by
/// [`Ratings::split`] with [`SPLIT_SEED`]: the same ratings give the same
/// split. The timestamps are checked and not used.
///
/// Errors name the file and line (and the field, as the column):
/// `ratings.dat:3:3: Rating "x" is not a number`. A (user, movie) pair
/// that appears twice is an error at its second line naming the first.
///
/// ```
/// use qnmc_host::targets::read_movielens;
///
/// let path = std::env::temp_dir().join("qnmc_doc_ratings.dat");
/// std::fs::write(&path, "1::1193::5::978300760\n1::661::3::978302109\n2::1193::4::978298413\n").unwrap();
/// let ratings = read_movielens(&path).unwrap();
/// assert_eq!((ratings.users(), ratings.items(), ratings.len()), (2, 2, 3));
/// ```
pub fn read_movielens(path: impl AsRef<Path>) -> Result<Ratings, InputError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| InputError::io(path, &e))?;
    let mut hash = Sha256::new();
    hash.update(&bytes);

    let mut users = Vec::new();
    let mut items = Vec::new();
    let mut scores = Vec::new();
    let mut lines = Vec::new();
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let number = index + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let (user, item, rating) = parse_line(path, number, line)?;
        users.push(user);
        items.push(item);
        scores.push(rating);
        lines.push(number);
    }
    if scores.is_empty() {
        return Err(InputError::new(
            path,
            InputErrorKind::Empty,
            "the file holds no ratings (expected lines UserID::MovieID::Rating::Timestamp)",
        ));
    }

    // (user, movie) order; a stable sort keeps the earlier line of a
    // repeated pair first.
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by_key(|&n| (users[n], items[n]));
    for pair in order.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if (users[a], items[a]) == (users[b], items[b]) {
            return Err(InputError::new(
                path,
                InputErrorKind::Format,
                format!(
                    "user {} rated movie {} already on line {}",
                    users[b], items[b], lines[a]
                ),
            )
            .at(lines[b], None));
        }
    }
    let user_ids = sorted_unique(&users);
    let item_ids = sorted_unique(&items);
    let dense = |ids: &[u32], id: u32| ids.binary_search(&id).unwrap_or_default() as u32;
    let mut triples = Triples::with_capacity(order.len());
    for &n in &order {
        triples.push(
            dense(&user_ids, users[n]),
            dense(&item_ids, items[n]),
            scores[n],
        );
    }
    let source = RatingsSource::MovieLens {
        path: path.to_path_buf(),
        sha256: hash.hex(),
        user_ids: user_ids.clone(),
        item_ids: item_ids.clone(),
    };
    Ratings::split(
        user_ids.len(),
        item_ids.len(),
        triples,
        TEST_FRACTION,
        SPLIT_SEED,
        source,
    )
    .map_err(|e| InputError::new(path, InputErrorKind::Format, e.to_string()))
}

/// The distinct values of `ids`, ascending.
fn sorted_unique(ids: &[u32]) -> Vec<u32> {
    let mut out = ids.to_vec();
    out.sort_unstable();
    out.dedup();
    out
}

/// One line's (UserID, MovieID, Rating).
fn parse_line(path: &Path, number: usize, line: &[u8]) -> Result<(u32, u32, f32), InputError> {
    let fields: Vec<&[u8]> = split_fields(line);
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim().to_owned();
    if fields.len() != FIELDS.len() {
        let shown: String = text(line).chars().take(80).collect();
        return Err(InputError::new(
            path,
            InputErrorKind::Format,
            format!(
                "expected UserID::MovieID::Rating::Timestamp, got {} field{} separated by \"::\" in {shown:?}",
                fields.len(),
                if fields.len() == 1 { "" } else { "s" }
            ),
        )
        .at(number, None));
    }
    let bad = |field: usize, what: &str| {
        InputError::new(
            path,
            InputErrorKind::NotANumber,
            format!("{} {:?} is not {what}", FIELDS[field], text(fields[field])),
        )
        .at(number, Some(field + 1))
    };
    // Parsed without copying; invalid UTF-8 parses as "" and fails.
    let cell = |index: usize| std::str::from_utf8(fields[index]).map_or("", str::trim);
    let whole = |index: usize| -> Result<u64, InputError> {
        cell(index)
            .parse::<u64>()
            .map_err(|_| bad(index, "a whole number"))
    };
    let id = |field: usize| -> Result<u32, InputError> {
        u32::try_from(whole(field)?).map_err(|_| bad(field, "an id below 2^32"))
    };
    let user = id(0)?;
    let item = id(1)?;
    let rating = cell(2)
        .parse::<f32>()
        .ok()
        .filter(|r| r.is_finite())
        .ok_or_else(|| bad(2, "a finite number"))?;
    whole(3)?;
    Ok((user, item, rating))
}

/// The fields of `line` between `::` separators.
fn split_fields(line: &[u8]) -> Vec<&[u8]> {
    let mut fields = Vec::with_capacity(4);
    let mut start = 0;
    let mut i = 0;
    while i + 1 < line.len() {
        if line[i] == b':' && line[i + 1] == b':' {
            fields.push(&line[start..i]);
            i += 2;
            start = i;
        } else {
            i += 1;
        }
    }
    fields.push(&line[start..]);
    fields
}
