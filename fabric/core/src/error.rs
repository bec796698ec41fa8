//! Errors of the simulator core. Every failure is a value, never a panic, so the
//! bindings can turn it into a Python exception that says what was wrong and where.
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// Bad input data: names the flow (row of the trace) and the field.
    InvalidFlow { row: usize, field: &'static str, message: String },
    /// A bad option or topology parameter.
    InvalidConfig(String),
    /// A combination the model does not support (said explicitly, never approximated silently).
    Unsupported(String),
    /// A call that is not valid in the simulator's current state (e.g. an admission
    /// decision when none is pending, or an index outside the window).
    InvalidAction(String),
    /// The simulation cannot make progress (should not happen with valid input).
    Stalled(String),
    /// Memory for a size taken from the input could not be allocated.
    OutOfMemory(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::InvalidFlow { row, field, message } => {
                write!(f, "flow at row {row}, column '{field}': {message}")
            }
            SimError::InvalidConfig(m) => write!(f, "invalid configuration: {m}"),
            SimError::Unsupported(m) => write!(f, "unsupported: {m}"),
            SimError::InvalidAction(m) => write!(f, "invalid action: {m}"),
            SimError::Stalled(m) => write!(f, "simulation stalled: {m}"),
            SimError::OutOfMemory(m) => write!(f, "out of memory: cannot allocate {m}"),
        }
    }
}

impl std::error::Error for SimError {}

pub type Result<T> = std::result::Result<T, SimError>;
