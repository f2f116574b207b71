//! A sampler's whole state as bytes, and back: a chain saved at any
//! iteration and restored into a sampler of the same type continues with
//! the same draws, bit for bit, as if it had never stopped (given the same
//! random generator state, which the caller saves).
//!
//! Every type the in-place constructors build
//! ([`ZeroValid`](crate::in_place::ZeroValid)) is plain
//! data — numbers, `bool`, arrays, structs and `repr(u8)` enums of them —
//! and is [`SavedState`] (a supertrait of `ZeroValid`): the `zero_valid!` macro that lists a struct's
//! fields writes both impls, so a field added to a sampler is saved
//! without more code. The bytes are the fields in declaration order,
//! numbers little-endian, `usize` as 64 bits: they do not depend on the
//! machine, so a state saved on a desktop restores on a microcontroller
//! with the same `T`, `D` and memory.
//!
//! [`save`] frames the fields: a magic number, the format version, a
//! fingerprint of the type (its name with `T`, `D` and `M`, and this
//! crate's version), the length, and a 64-bit FNV-1a hash of the fields.
//! [`restore`] checks all of them before it changes the value, so bytes of
//! another type, of another qnmc version, cut short or altered are refused
//! with a [`StateError`] and the value is left as it was.
//!
//! Every sampler, warm-up and metric of the core is such a type, so each
//! can be saved. The round-trip tests of every sampler live in
//! `adaptation/saved_state_tests.rs`, in the one layer that may use them all.
//!
//! ```
//! use qnmc::samplers::{Hmc, HmcSettings};
//! use qnmc::saved_state::{restore, save, saved_len};
//! use qnmc::{Potential, Sampler};
//! use rand_core::SeedableRng;
//! use rand_xorshift::XorShiftRng;
//!
//! struct Normal;
//! impl Potential<f64, 2> for Normal {
//!     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
//!         *g = *x;
//!         0.5 * (x[0] * x[0] + x[1] * x[1])
//!     }
//! }
//!
//! let settings = HmcSettings::new(0.3, 5);
//! let mut a = Hmc::new(settings, [0.5, -0.5], &Normal).unwrap();
//! let mut rng = XorShiftRng::seed_from_u64(1);
//! for _ in 0..10 {
//!     a.step(&Normal, &mut rng);
//! }
//! let mut bytes = vec![0u8; saved_len(&a)];
//! save(&a, &mut bytes).unwrap();
//! let mut b = Hmc::new(settings, [0.0, 0.0], &Normal).unwrap();
//! restore(&mut b, &bytes).unwrap();
//! let mut rng_b = rng.clone();
//! a.step(&Normal, &mut rng);
//! b.step(&Normal, &mut rng_b);
//! assert_eq!(a.position(), b.position());
//! ```

use core::fmt;

/// The format of [`save`]'s bytes; a change of the framing or of how a
/// primitive is written increments it.
pub const FORMAT_VERSION: u32 = 1;

/// The first bytes of a saved state.
pub const MAGIC: [u8; 8] = *b"QNMCSTAT";

/// Bytes of the framing around the fields: magic, version, fingerprint,
/// length (before), hash (after).
const FRAME_BYTES: usize = 8 + 4 + 8 + 8 + 8;

/// Why a state could not be saved or restored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateError {
    /// The buffer given to [`save`] holds fewer bytes than [`saved_len`].
    BufferTooSmall {
        /// The bytes the state needs.
        needed: usize,
    },
    /// The bytes do not start with [`MAGIC`]: not a saved state.
    NotAState,
    /// A state of another [`FORMAT_VERSION`].
    Version {
        /// The version the bytes were written with.
        found: u32,
    },
    /// A state of another type (another sampler, `T`, `D` or memory), or
    /// written by another version of qnmc.
    WrongType,
    /// The bytes end before the state does, or go on after it.
    WrongLength,
    /// The fields' hash does not match: the bytes were altered.
    Corrupt,
    /// A field holds a value its type cannot take (a `bool` other than 0
    /// or 1, an unknown enum tag, a `usize` too large for this machine).
    InvalidField,
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::BufferTooSmall { needed } => {
                write!(f, "the buffer is too small for the state ({needed} bytes)")
            }
            StateError::NotAState => f.write_str("not a saved qnmc sampler state"),
            StateError::Version { found } => write!(
                f,
                "a saved state of format {found}; this qnmc reads format {FORMAT_VERSION}"
            ),
            StateError::WrongType => f.write_str(
                "the state is of another sampler type (sampler, precision, dimension or memory) \
                 or was saved by another qnmc version",
            ),
            StateError::WrongLength => f.write_str("the saved state has the wrong length"),
            StateError::Corrupt => f.write_str("the saved state's hash does not match its bytes"),
            StateError::InvalidField => f.write_str("the saved state holds an invalid field"),
        }
    }
}

impl core::error::Error for StateError {}

/// A value whose every field can be written as bytes and read back (see the
/// [module](self)). Implemented for numbers, `bool`, arrays, and every
/// [`ZeroValid`](crate::in_place::ZeroValid) type of the core (a supertrait
/// of it; the `zero_valid!` macro writes both).
pub trait SavedState {
    /// Writes every field, in order.
    fn save_state(&self, out: &mut StateWriter<'_>) -> Result<(), StateError>;
    /// Reads every field, in order, in place.
    fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError>;
}

/// Where [`SavedState::save_state`] writes: a buffer, or nothing (counting
/// the bytes); it hashes what it writes.
pub struct StateWriter<'a> {
    out: Option<&'a mut [u8]>,
    written: usize,
    hash: u64,
}

impl StateWriter<'_> {
    /// Appends `bytes`.
    pub fn bytes(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        if let Some(out) = self.out.as_deref_mut() {
            let end = self.written + bytes.len();
            let Some(slot) = out.get_mut(self.written..end) else {
                return Err(StateError::BufferTooSmall { needed: end });
            };
            slot.copy_from_slice(bytes);
        }
        self.written += bytes.len();
        self.hash = fnv1a(self.hash, bytes);
        Ok(())
    }
}

/// What [`SavedState::restore_state`] reads from.
pub struct StateReader<'a> {
    input: &'a [u8],
}

impl StateReader<'_> {
    /// The next `N` bytes.
    pub fn take<const N: usize>(&mut self) -> Result<[u8; N], StateError> {
        let Some((head, rest)) = self.input.split_first_chunk::<N>() else {
            return Err(StateError::WrongLength);
        };
        self.input = rest;
        Ok(*head)
    }
}

/// Bytes [`save`] writes for `value`.
pub fn saved_len<S: SavedState + ?Sized>(value: &S) -> usize {
    let mut counter = StateWriter {
        out: None,
        written: 0,
        hash: FNV_OFFSET,
    };
    // Counting cannot fail.
    let _ = value.save_state(&mut counter);
    FRAME_BYTES + counter.written
}

/// Writes `value`'s state into `out` (at least [`saved_len`] bytes) and
/// returns the bytes written.
pub fn save<S: SavedState + ?Sized>(value: &S, out: &mut [u8]) -> Result<usize, StateError> {
    let needed = saved_len(value);
    if out.len() < needed {
        return Err(StateError::BufferTooSmall { needed });
    }
    let payload = needed - FRAME_BYTES;
    let (head, rest) = out.split_at_mut(8 + 4 + 8 + 8);
    head[..8].copy_from_slice(&MAGIC);
    head[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    head[12..20].copy_from_slice(&fingerprint::<S>().to_le_bytes());
    head[20..28].copy_from_slice(&(payload as u64).to_le_bytes());
    let (fields, tail) = rest.split_at_mut(payload);
    let mut writer = StateWriter {
        out: Some(fields),
        written: 0,
        hash: FNV_OFFSET,
    };
    value.save_state(&mut writer)?;
    tail[..8].copy_from_slice(&writer.hash.to_le_bytes());
    Ok(needed)
}

/// Restores `value` from bytes [`save`] wrote for a value of the same type.
/// The framing, type, length and hash are checked first: on any of those
/// errors `value` is unchanged. [`StateError::InvalidField`] can follow only
/// bytes that were altered and hashed again; `value` then holds valid but
/// meaningless fields and should be reset.
pub fn restore<S: SavedState + ?Sized>(value: &mut S, bytes: &[u8]) -> Result<(), StateError> {
    if bytes.len() < FRAME_BYTES {
        return Err(if bytes.starts_with(&MAGIC) || MAGIC.starts_with(bytes) {
            StateError::WrongLength
        } else {
            StateError::NotAState
        });
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    if bytes[..8] != MAGIC {
        return Err(StateError::NotAState);
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap_or([0; 4]));
    if version != FORMAT_VERSION {
        return Err(StateError::Version { found: version });
    }
    if word(12) != fingerprint::<S>() {
        return Err(StateError::WrongType);
    }
    let payload = word(20);
    let expected = saved_len(value) - FRAME_BYTES;
    if payload != expected as u64 || bytes.len() != FRAME_BYTES + expected {
        return Err(StateError::WrongLength);
    }
    let fields = &bytes[28..28 + expected];
    if fnv1a(FNV_OFFSET, fields) != word(28 + expected) {
        return Err(StateError::Corrupt);
    }
    let mut reader = StateReader { input: fields };
    value.restore_state(&mut reader)?;
    if reader.input.is_empty() {
        Ok(())
    } else {
        Err(StateError::WrongLength)
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The type's name (with its parameters) and this crate's version, hashed.
fn fingerprint<S: ?Sized>() -> u64 {
    let hash = fnv1a(FNV_OFFSET, core::any::type_name::<S>().as_bytes());
    fnv1a(hash, env!("CARGO_PKG_VERSION").as_bytes())
}

macro_rules! saved_number {
    ($($t:ty => $as:ty),*) => {
        $(
            impl SavedState for $t {
                fn save_state(&self, out: &mut StateWriter<'_>) -> Result<(), StateError> {
                    out.bytes(&(*self as $as).to_le_bytes())
                }
                fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
                    let wide = <$as>::from_le_bytes(input.take()?);
                    *self = <$t>::try_from(wide).map_err(|_| StateError::InvalidField)?;
                    Ok(())
                }
            }
        )*
    };
}

saved_number!(
    u8 => u8, u16 => u16, u32 => u32, u64 => u64, usize => u64,
    i8 => i8, i16 => i16, i32 => i32, i64 => i64, isize => i64
);

macro_rules! saved_float {
    ($($t:ty),*) => {
        $(
            impl SavedState for $t {
                fn save_state(&self, out: &mut StateWriter<'_>) -> Result<(), StateError> {
                    out.bytes(&self.to_le_bytes())
                }
                fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
                    *self = <$t>::from_le_bytes(input.take()?);
                    Ok(())
                }
            }
        )*
    };
}

saved_float!(f32, f64);

impl SavedState for bool {
    fn save_state(&self, out: &mut StateWriter<'_>) -> Result<(), StateError> {
        out.bytes(&[u8::from(*self)])
    }
    fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
        *self = match input.take::<1>()? {
            [0] => false,
            [1] => true,
            _ => return Err(StateError::InvalidField),
        };
        Ok(())
    }
}

impl<S: SavedState, const N: usize> SavedState for [S; N] {
    fn save_state(&self, out: &mut StateWriter<'_>) -> Result<(), StateError> {
        self.iter().try_for_each(|x| x.save_state(out))
    }
    fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
        self.iter_mut().try_for_each(|x| x.restore_state(input))
    }
}

/// A pair (a sampler and its warm-up driver, say): the first, then the
/// second.
impl<A: SavedState, B: SavedState> SavedState for (A, B) {
    fn save_state(&self, out: &mut StateWriter<'_>) -> Result<(), StateError> {
        self.0.save_state(out)?;
        self.1.save_state(out)
    }
    fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
        self.0.restore_state(input)?;
        self.1.restore_state(input)
    }
}

/// [`SavedState`] for a field-less `repr(u8)` enum: its tag byte, checked
/// against the variants on the way back.
/// `saved_enum!(Correction { Included, Omitted });`
macro_rules! saved_enum {
    ($name:ident { $($variant:ident),+ $(,)? }) => {
        impl $crate::saved_state::SavedState for $name {
            fn save_state(
                &self,
                out: &mut $crate::saved_state::StateWriter<'_>,
            ) -> Result<(), $crate::saved_state::StateError> {
                out.bytes(&[*self as u8])
            }
            fn restore_state(
                &mut self,
                input: &mut $crate::saved_state::StateReader<'_>,
            ) -> Result<(), $crate::saved_state::StateError> {
                let [tag] = input.take::<1>()?;
                $(
                    if tag == $name::$variant as u8 {
                        *self = $name::$variant;
                        return Ok(());
                    }
                )+
                Err($crate::saved_state::StateError::InvalidField)
            }
        }
    };
}
pub(crate) use saved_enum;

#[cfg(test)]
mod tests {
    use super::*;

    /// A `bool` other than 0 or 1 and an unknown enum tag are invalid
    /// fields; a known tag restores its variant.
    #[test]
    fn invalid_fields_are_refused() {
        let mut flag = false;
        let mut reader = StateReader { input: &[2] };
        assert_eq!(
            flag.restore_state(&mut reader),
            Err(StateError::InvalidField)
        );
        let mut statistic = crate::adaptation::AcceptanceStatistic::Stan;
        let mut reader = StateReader { input: &[7] };
        assert_eq!(
            statistic.restore_state(&mut reader),
            Err(StateError::InvalidField)
        );
        let mut reader = StateReader { input: &[1] };
        statistic.restore_state(&mut reader).unwrap();
        assert_eq!(statistic, crate::adaptation::AcceptanceStatistic::Symmetric);
    }
}
