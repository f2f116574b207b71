//! The error type of the sampler core.

use core::fmt;

/// What can go wrong when a sampler is built or stepped.
///
/// Construction validates every setting; a step of an MH sampler never fails
/// (a non-finite energy is a rejected, counted divergence), while a HAMCMC step
/// returns [`Error::NonFiniteGradient`] or [`Error::NonFiniteProposal`] and leaves
/// the sampler exactly as it was before the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Error {
    /// A setting is out of its domain.
    InvalidSetting {
        /// The setting's name, as the field is called in the settings struct.
        setting: &'static str,
        /// What the setting must satisfy.
        requirement: &'static str,
    },
    /// The potential or its gradient is not finite at the initial position.
    NonFiniteInitialState,
    /// A (minibatch) gradient came back with a NaN or infinite entry.
    NonFiniteGradient,
    /// The proposed position has a NaN or infinite entry (step size too large).
    NonFiniteProposal,
    /// A reverse-mode gradient ([`crate::autodiff::ReverseGradient`]) needs
    /// more nodes than its tape holds.
    TapeFull {
        /// The tape's capacity, in nodes.
        capacity: usize,
    },
}

impl Error {
    pub(crate) const fn invalid(setting: &'static str, requirement: &'static str) -> Self {
        Error::InvalidSetting {
            setting,
            requirement,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidSetting {
                setting,
                requirement,
            } => write!(f, "invalid setting `{setting}`: must be {requirement}"),
            Error::NonFiniteInitialState => {
                f.write_str("the potential or its gradient is not finite at the initial position")
            }
            Error::NonFiniteGradient => f.write_str("the gradient has a NaN or infinite entry"),
            Error::NonFiniteProposal => {
                f.write_str("the proposed position has a NaN or infinite entry")
            }
            Error::TapeFull { capacity } => write!(
                f,
                "the gradient tape is full: the model needs more than {capacity} nodes \
                 (use a larger capacity, or forward mode)"
            ),
        }
    }
}

impl core::error::Error for Error {}

/// Checks that `value` is finite and strictly positive.
pub(crate) fn require_positive<T: crate::real::Real>(
    value: T,
    setting: &'static str,
) -> Result<(), Error> {
    if value.is_finite() && value > T::ZERO {
        Ok(())
    } else {
        Err(Error::invalid(setting, "finite and > 0"))
    }
}

/// Checks that `value` is finite and non-negative.
pub(crate) fn require_non_negative<T: crate::real::Real>(
    value: T,
    setting: &'static str,
) -> Result<(), Error> {
    if value.is_finite() && value >= T::ZERO {
        Ok(())
    } else {
        Err(Error::invalid(setting, "finite and >= 0"))
    }
}
