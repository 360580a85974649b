//! `cudaError` prints its name in `Debug` and `Display` output (`cudaErrorInvalidValue`, not `cudaError(1)`), through
//! `cudaGetErrorName` of the linked runtime, which needs no device. A code the runtime does not know prints as
//! `cudaError(N)`.

use crate::{cudaError, cudaGetErrorName};
use std::ffi::CStr;
use std::fmt;

impl cudaError {
    /// The runtime's name for this code (`cudaSuccess`, `cudaErrorNotReady`, ...), `None` for a code it does not
    /// know.
    pub fn name(self) -> Option<&'static str> {
        // SAFETY: cudaGetErrorName returns a static NUL-terminated string for any input and touches no device.
        let name = unsafe { CStr::from_ptr(cudaGetErrorName(self)) };
        name.to_str().ok().filter(|n| n.starts_with("cuda"))
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
}
