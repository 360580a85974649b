//! Every `cudaError` value the headers declare has its own name through `cudaGetErrorName` (a pure table lookup in
//! cudart: no driver or GPU needed), and the bindings carry the same numeric values as the header.

use std::ffi::CStr;

/// `(name, value)` of every enumerator of `enum cudaError` in driver_types.h.
fn header_error_codes() -> Vec<(String, u32)> {
    let path = format!("{}/driver_types.h", cuda_conformance_sys::BUILD_TOOLKIT_INCLUDE);
    let text = std::fs::read_to_string(&path).expect("driver_types.h");
    let start = text.find("enum __device_builtin__ cudaError\n").expect("enum cudaError in driver_types.h");
    let body = &text[start..start + text[start..].find("};").expect("end of enum cudaError")];
    body.lines()
        .filter_map(|l| {
            // Enumerators may start with the comma of the previous one: `, cudaErrorApiFailureBase = 10000`.
            let (name, value) = l.trim().trim_start_matches(',').split_once('=')?;
            let value = value.trim().trim_end_matches(',').trim();
            Some((name.trim().to_owned(), value.parse().ok()?))
        })
        .collect()
}

fn error_name(code: u32) -> String {
    // SAFETY: cudaGetErrorName returns a pointer to a static NUL-terminated string for any input.
    unsafe { CStr::from_ptr(cuda_conformance_sys::cudaGetErrorName(cuda_conformance_sys::cudaError(code))) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn every_error_code_has_its_own_name() {
    let codes = header_error_codes();
    assert!(codes.len() > 100, "parsed only {} error codes from driver_types.h", codes.len());
    let wrong: Vec<_> = codes
        .iter()
        .filter(|(name, value)| error_name(*value) != *name)
        .map(|(name, value)| format!("{value}: header {name}, cudaGetErrorName {}", error_name(*value)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn bindings_and_header_agree_on_values() {
    use cuda_conformance_sys::cudaError as E;
    let codes = header_error_codes();
    let value = |n: &str| codes.iter().find(|(name, _)| name == n).map(|(_, v)| *v);
    assert_eq!(value("cudaSuccess"), Some(E::cudaSuccess.0));
    assert_eq!(value("cudaErrorNotReady"), Some(E::cudaErrorNotReady.0));
    assert_eq!(value("cudaErrorStreamCaptureUnsupported"), Some(E::cudaErrorStreamCaptureUnsupported.0));
    assert_eq!(value("cudaErrorStreamCaptureInvalidated"), Some(E::cudaErrorStreamCaptureInvalidated.0));
    assert_eq!(value("cudaErrorUnknown"), Some(E::cudaErrorUnknown.0));
}

#[test]
fn an_unknown_code_is_representable_and_named_as_unrecognized() {
    // With newtype enums an out-of-set value is a valid Rust value; cudart names it rather than crashing.
    let name = error_name(123_456);
    assert!(name.to_lowercase().contains("unrecognized"), "cudaGetErrorName(123456) = {name:?}");
}
