//! `cudaError` prints its name in `Debug` and `Display` output (`cudaErrorInvalidValue`, not `cudaError(1)`), through
//! `cudaGetErrorName` of the linked runtime, which needs no device. A code the runtime does not know prints as
//! `cudaError(N)`.

use crate::{cudaError, cudaGetErrorName};
use std::ffi::CStr;
use std::fmt;
use std::sync::OnceLock;

impl cudaError {
    /// The runtime's name for this code (`cudaSuccess`, `cudaErrorNotReady`, ...), `None` for a code it does not
    /// know.
    pub fn name(self) -> Option<&'static str> {
        // SAFETY: cudaGetErrorName returns a static NUL-terminated string for any input and touches no device.
        let name = unsafe { CStr::from_ptr(cudaGetErrorName(self)) };
        name.to_str().ok().filter(|n| n.starts_with("cuda"))
    }

    /// The code called `name` (`cudaSuccess`, `cudaErrorNotReady`, ...), as the linked runtime names it; `None` for a
    /// name it does not know.
    pub fn from_name(name: &str) -> Option<cudaError> {
        cudaError::named().find(|&(n, _)| n == name).map(|(_, code)| code)
    }

    /// Every code the linked runtime has a name for, with its name, in the order of the codes (looked up once).
    pub fn named() -> impl Iterator<Item = (&'static str, cudaError)> {
        static NAMED: OnceLock<Vec<(&'static str, cudaError)>> = OnceLock::new();
        let named = NAMED.get_or_init(|| {
            // Codes are dense below 1000 plus a few sparse ones (cudaErrorApiFailureBase = 10000); the runtime gives
            // the codes it does not know a name without the `cuda` prefix, which `name` leaves out.
            (0..1000u32).chain([10000]).map(cudaError).filter_map(|code| Some((code.name()?, code))).collect()
        });
        named.iter().copied()
    }
}

impl fmt::Display for cudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "cudaError({})", self.0),
        }
    }
}

impl fmt::Debug for cudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use crate::cudaError;

    #[test]
    fn codes_print_their_names() {
        assert_eq!(format!("{:?}", cudaError::cudaErrorNotReady), "cudaErrorNotReady");
        assert_eq!(cudaError::cudaSuccess.to_string(), "cudaSuccess");
        assert_eq!(format!("{:?}", Err::<(), _>(cudaError::cudaErrorInvalidValue)), "Err(cudaErrorInvalidValue)");
        assert_eq!(cudaError(123_456).to_string(), "cudaError(123456)");
    }

    #[test]
    fn names_lead_back_to_their_codes() {
        assert_eq!(cudaError::from_name("cudaErrorNotReady"), Some(cudaError::cudaErrorNotReady));
        assert_eq!(cudaError::from_name("cudaErrorNoSuchThing"), None);
        assert!(cudaError::named().any(|(name, code)| name == "cudaSuccess" && code == cudaError::cudaSuccess));
        assert!(cudaError::named().all(|(name, code)| cudaError::from_name(name) == Some(code)));
    }
}
