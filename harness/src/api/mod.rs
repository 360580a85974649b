//! The cudart API as data: one table of every function of the linked toolkit's runtime header, built from two
//! halves generated from that toolkit at build time (`harness/build.rs`):
//! - the bindings cuda-sys generated ([`generated`]): each function's parameters, their Rust types and sizes, and
//!   a caller that takes the arguments as bytes, so the case language calls any function by name (`call`);
//! - the header's comments ([`header`]): its group, its documented return codes, the notes attached to it.
//!
//! A row adds what neither says: each parameter's class ([`ParamClass`]: an output pointer, a device ordinal, a
//! handle of a type, flags, an enum, a size, a copy kind, a function or symbol, a path, ...), which the executor
//! uses for default arguments and the sweeps use to mutate one kind of argument, and a platform tag where the
//! function needs something a headless Linux GPU host lacks ([`platform`]). Coverage, the sweeps, both executors
//! and the reproducer emitter read this one table.

pub mod generated;
pub mod header;

use generated::{GenFunction, GenStruct};
use header::Declared;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// What a parameter is, for default arguments and sweeps. Derived from its type and name (`classify`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParamClass {
    /// `T *` the call writes (a non-const pointer to a non-void type): the executor passes zeroed scratch.
    Out,
    /// `int device` and its kin: a device ordinal.
    Device,
    /// A CUDA object handle of the named type (`cudaStream_t`, `cudaGraph_t`, `cudaArray_t`, ...).
    Handle(String),
    /// `unsigned int flags`.
    Flags,
    /// `enum cudaMemcpyKind`.
    CopyKind,
    /// Another enum of the bindings (a newtype with named constants).
    Enum(String),
    /// `size_t`.
    Size,
    /// Another integer.
    Int,
    /// `void *` / `const void *`: an address of memory.
    Memory,
    /// `const void *func`: a kernel (its host stub or a `cudaKernel_t`).
    Function,
    /// `const void *symbol`: a `__device__` variable.
    Symbol,
    /// `void *userData`: passed through to a callback.
    UserData,
    /// A function pointer (a host function, a callback).
    Callback,
    /// `const char *`: a name or a path.
    Text,
    /// `const T *` of a struct: a descriptor the call reads.
    InStruct(String),
    /// `const T *` of something else: an array the call reads.
    InArray(String),
    /// A struct passed by value.
    Struct(String),
}

impl ParamClass {
    /// The class as written in `docs/coverage.md` and the sweeps' `mutate:` lines.
    pub fn word(&self) -> String {
        match self {
            ParamClass::Out => "out".into(),
            ParamClass::Device => "device".into(),
            ParamClass::Handle(t) => format!("handle:{t}"),
            ParamClass::Flags => "flags".into(),
            ParamClass::CopyKind => "copy-kind".into(),
            ParamClass::Enum(t) => format!("enum:{t}"),
            ParamClass::Size => "size".into(),
            ParamClass::Int => "int".into(),
            ParamClass::Memory => "memory".into(),
            ParamClass::Function => "function".into(),
            ParamClass::Symbol => "symbol".into(),
            ParamClass::UserData => "user-data".into(),
            ParamClass::Callback => "callback".into(),
            ParamClass::Text => "text".into(),
            ParamClass::InStruct(t) => format!("in-struct:{t}"),
            ParamClass::InArray(t) => format!("in-array:{t}"),
            ParamClass::Struct(t) => format!("struct:{t}"),
        }
    }
}

/// One parameter of a row.
#[derive(Debug, Clone, Serialize)]
pub struct Param {
    pub name: &'static str,
    /// The C type, as a reproducer declares it (`cudaStream_t *`, `size_t`, `cudaExtent`).
    pub c_type: String,
    pub class: ParamClass,
    /// Bytes of the argument.
    pub size: usize,
    /// For a pointer, bytes of what it points to (what `Out` scratch holds).
    pub pointee_size: usize,
}

/// One function of the table.
#[derive(Debug, Clone, Serialize)]
pub struct ApiFunction {
    pub name: String,
    /// The header's group (`stream`, `memory`, `graph`, ..., `opengl`, `egl`, `vdpau` for the interop headers).
    pub group: String,
    /// The parameters, from the bindings; empty for a function the bindings leave out (interop).
    pub params: Vec<Param>,
    /// The codes its `\return` list documents.
    pub documented: Vec<String>,
    /// The cross-function notes attached to it (`header::NOTES`).
    pub notes: Vec<&'static str>,
    /// What it needs that a headless Linux GPU host lacks, if anything ([`platform`]).
    pub platform: Option<&'static str>,
    /// The header documents no usable return list (`../shared/API-BREADTH.md` §3).
    pub doc_gap: bool,
    /// The bindings have it, so `call` can call it.
    #[serde(skip)]
    pub callable: Option<&'static GenFunction>,
}

/// Bytes of every output a `call` may write: larger than any output struct of the API (`cudaDeviceProp` is about
/// 1 KiB) and than the lists a call fills (`cudaGraphGetNodes` with a count the case chose). Both executors give
/// every output parameter zeroed scratch of this size.
pub const OUT_BYTES: usize = 64 * 1024;

/// The largest value of an integer parameter of `size` bytes (`max`): all ones if its type is unsigned (or an
/// enum), else the largest positive value.
pub fn max_of(rust_type: &str, size: usize) -> i128 {
    let base = rust_type.rsplit("::").next().unwrap_or(rust_type);
    let signed =
        matches!(base, "c_int" | "c_long" | "c_longlong" | "c_short" | "c_char" | "i8" | "i16" | "i32" | "i64");
    let bits = (size.clamp(1, 8) * 8) as u32;
    if signed {
        (1i128 << (bits - 1)) - 1
    } else {
        (1i128 << bits) - 1
    }
}

impl ApiFunction {
    /// A row for a function this build's table lacks (a sweep row on an older header): nothing known of it.
    pub fn missing(name: &str) -> ApiFunction {
        ApiFunction {
            name: name.to_owned(),
            group: String::new(),
            params: Vec::new(),
            documented: Vec::new(),
            notes: Vec::new(),
            platform: None,
            doc_gap: true,
            callable: None,
        }
    }
}

/// The table for the linked toolkit, built once.
pub fn table() -> &'static [ApiFunction] {
    static TABLE: OnceLock<Vec<ApiFunction>> = OnceLock::new();
    TABLE.get_or_init(|| build(generated::HEADER, generated::INTEROP_HEADERS))
}

/// `CUDART_VERSION` of the header this build's table comes from (None for the docs.rs build, which has none).
pub fn header_version() -> Option<u32> {
    generated::HEADER.lines().find_map(|l| l.trim().strip_prefix("#define CUDART_VERSION")?.trim().parse().ok())
}

/// The row of `name`.
pub fn function(name: &str) -> Option<&'static ApiFunction> {
    static INDEX: OnceLock<BTreeMap<&'static str, usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| table().iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect());
    index.get(name).map(|&i| &table()[i])
}

/// A constant of the bindings by name (an enum value such as `cudaMemcpyHostToDevice`, a flag such as
/// `cudaHostRegisterMapped`): its type and value.
pub fn constant(name: &str) -> Option<(&'static str, i128)> {
    generated::CONSTANTS.iter().find(|(n, _, _)| *n == name).map(|(_, t, v)| (*t, *v))
}

/// A struct or union of the bindings by name, or by a `typedef` name of one (`cudaIpcMemHandle_t`).
pub fn structure(name: &str) -> Option<&'static GenStruct> {
    let mut name = name.rsplit("::").next().unwrap_or(name).trim();
    for _ in 0..4 {
        if let Some(s) = generated::STRUCTS.iter().find(|s| s.name == name) {
            return Some(s);
        }
        name = generated::ALIASES.iter().find(|(alias, _)| *alias == name)?.1;
    }
    None
}

/// Field `name` of `layout`, looking through C's anonymous unions and structs (bindgen's `__bindgen_anon_N`, whose
/// members C names as the struct's own: `cudaGraphNodeParams.memset`): the field and its offset in `layout`.
pub fn field(layout: &GenStruct, name: &str) -> Option<(usize, &'static generated::GenField)> {
    if let Some(f) = layout.fields.iter().find(|f| f.name == name) {
        return Some((f.offset, f));
    }
    layout.fields.iter().filter(|f| f.name.starts_with("__bindgen_anon")).find_map(|anon| {
        let (offset, f) = field(structure(anon.rust_type)?, name)?;
        Some((anon.offset + offset, f))
    })
}

/// The field names a case may write for `layout` (those of its anonymous members in their place).
pub fn field_names(layout: &GenStruct) -> Vec<&'static str> {
    layout
        .fields
        .iter()
        .flat_map(|f| match structure(f.rust_type).filter(|_| f.name.starts_with("__bindgen_anon")) {
            Some(anon) => field_names(anon),
            None => vec![f.name],
        })
        .collect()
}

/// The struct a pointer parameter points to (`*mut cudaMemLocation`), where it points to one: a `{field=value}`
/// value for it is that struct, and the pointer points to it.
pub fn pointee_struct(rust_type: &str) -> Option<&'static GenStruct> {
    let t = rust_type.strip_prefix("*mut ").or_else(|| rust_type.strip_prefix("*const "))?.trim();
    structure(t)
}

/// Builds the table: the header's functions in its order, each joined with its generated caller, then the interop
/// headers' functions (no caller: the bindings leave them out).
pub fn build(header: &str, interop: &[(&'static str, &str)]) -> Vec<ApiFunction> {
    let by_name: BTreeMap<&str, &'static GenFunction> = generated::FUNCTIONS.iter().map(|f| (f.name, f)).collect();
    let versioned = versioned_names(header);
    let mut out: Vec<ApiFunction> = Vec::new();
    let mut push = |d: Declared, group: Option<&'static str>| {
        if out.iter().any(|f| f.name == d.name) {
            return; // declared twice (#if branches): the first declaration is the row
        }
        if d.name.ends_with("_ptsz") || d.name.ends_with("_ptds") {
            return; // the per-thread-stream symbols the header's macros pick (12.x declares a few), not names to call
        }
        // The row keeps the name a program writes; what that name calls may be a versioned symbol.
        let callable = versioned
            .get(d.name.as_str())
            .and_then(|v| by_name.get(v))
            .or_else(|| by_name.get(d.name.as_str()))
            .copied();
        let params = callable.map(|g| params(&d.name, g)).unwrap_or_default();
        let platform = group.or_else(|| platform(&d.name));
        out.push(ApiFunction {
            doc_gap: d.documented.is_empty(),
            group: group.map_or(d.group, str::to_owned),
            name: d.name,
            params,
            documented: d.documented,
            notes: d.notes,
            platform,
            callable,
        });
    };
    for d in header::parse_header(header) {
        push(d, None);
    }
    for (platform, text) in interop {
        for d in header::parse_header(text) {
            push(d, Some(platform));
        }
    }
    for (g, codes) in generated::PROFILER {
        out.push(ApiFunction {
            name: g.name.to_owned(),
            group: "profiler".to_owned(),
            params: Vec::new(),
            documented: codes.iter().map(|c| (*c).to_owned()).collect(),
            notes: Vec::new(),
            platform: None,
            doc_gap: false,
            callable: Some(g),
        });
    }
    out
}

/// The header's `#define NAME NAME_v2` (or `__CUDART_API_PTSZ(NAME_v2)`): a function a program calls by `NAME` whose
/// exported symbol, and so its binding, is the versioned one (12.x's `cudaGetDeviceProperties_v2`).
fn versioned_names(header: &str) -> BTreeMap<&str, &str> {
    header
        .lines()
        .filter_map(|line| {
            let mut words = line.trim().strip_prefix("#define")?.split_whitespace();
            let name = words.next()?;
            let target = words.next()?;
            let target = target.strip_prefix("__CUDART_API_PTSZ(").unwrap_or(target).trim_end_matches(')');
            let version = target.strip_prefix(name)?.strip_prefix("_v")?;
            (!version.is_empty() && version.bytes().all(|b| b.is_ascii_digit())).then_some((name, target))
        })
        .collect()
}

fn params(function: &str, g: &'static GenFunction) -> Vec<Param> {
    g.params
        .iter()
        .map(|p| Param {
            name: p.name,
            c_type: c_type(p.rust_type),
            class: classify(function, p.name, p.rust_type),
            size: p.size,
            pointee_size: p.pointee_size,
        })
        .collect()
}

/// The handle types: opaque pointers or ids of CUDA objects.
const HANDLES: &[&str] = &[
    "cudaStream_t",
    "cudaEvent_t",
    "cudaGraph_t",
    "cudaGraphExec_t",
    "cudaGraphNode_t",
    "cudaMemPool_t",
    "cudaArray_t",
    "cudaArray_const_t",
    "cudaMipmappedArray_t",
    "cudaMipmappedArray_const_t",
    "cudaTextureObject_t",
    "cudaSurfaceObject_t",
    "cudaLibrary_t",
    "cudaKernel_t",
    "cudaFunction_t",
    "cudaUserObject_t",
    "cudaExternalMemory_t",
    "cudaExternalSemaphore_t",
    "cudaGraphicsResource_t",
    "cudaGraphConditionalHandle",
    "cudaAsyncCallbackHandle_t",
    "cudaLogsCallbackHandle",
    "cudaLogIterator",
];

/// The class of a struct field of `rust_type`, as a `call` argument's `{field=value}` sets it: a parameter's class,
/// except that a `T *` field (not `void *`) is an input array. A struct a call reads is its input, so a pointer in
/// it points to what the call reads (`cudaExternalSemaphoreSignalNodeParams::extSemArray`), unlike a `T *`
/// parameter, which the call writes.
pub fn field_class(name: &str, rust_type: &str) -> ParamClass {
    match classify("", name, rust_type) {
        ParamClass::Out => match rust_type.strip_prefix("*mut ") {
            Some(pointee) => ParamClass::InArray(pointee.trim().rsplit("::").next().unwrap_or(pointee).to_owned()),
            None => ParamClass::Out,
        },
        class => class,
    }
}

/// A parameter's class from its function, name and Rust type. The one place the table's classes are decided.
pub fn classify(function: &str, name: &str, rust_type: &str) -> ParamClass {
    let base = |t: &str| t.rsplit("::").next().unwrap_or(t).trim().to_owned();
    let lower = name.to_ascii_lowercase();
    // A pointer to a callback type (`cudaLogsCallbackHandle *callback_out`) is an output, not a callback.
    let pointer = rust_type.starts_with('*');
    if !pointer
        && (rust_type.starts_with("::std::option::Option<")
            || rust_type.ends_with("Fn_t")
            || rust_type.contains("Callback"))
    {
        return if HANDLES.contains(&rust_type) {
            ParamClass::Handle(rust_type.to_owned())
        } else {
            ParamClass::Callback
        };
    }
    if let Some(pointee) = rust_type.strip_prefix("*const ") {
        let pointee = pointee.trim();
        return match base(pointee).as_str() {
            "c_void" if lower.contains("func") => ParamClass::Function,
            "c_void" if lower.contains("symbol") => ParamClass::Symbol,
            "c_void" if lower == "userdata" => ParamClass::UserData,
            "c_void" => ParamClass::Memory,
            "c_char" => ParamClass::Text,
            p if structure(p).is_some() => ParamClass::InStruct(structure(p).map_or(p, |s| s.name).to_owned()),
            p => ParamClass::InArray(p.to_owned()),
        };
    }
    if let Some(pointee) = rust_type.strip_prefix("*mut ") {
        if pointee.trim().starts_with('*') {
            return ParamClass::Out; // `T **`: the call writes a pointer (cudaMalloc's devPtr)
        }
        return match base(pointee.trim()).as_str() {
            "c_void" if lower.contains("func") && !function.contains("EntryPoint") => ParamClass::Function,
            "c_void" if lower.contains("symbol") => ParamClass::Symbol,
            "c_void" if lower == "userdata" => ParamClass::UserData,
            "c_void" => ParamClass::Memory,
            _ => ParamClass::Out,
        };
    }
    if HANDLES.contains(&rust_type) {
        return ParamClass::Handle(rust_type.to_owned());
    }
    if rust_type == "cudaMemcpyKind" {
        return ParamClass::CopyKind;
    }
    let is_int = matches!(
        base(rust_type).as_str(),
        "c_int"
            | "c_uint"
            | "c_ulonglong"
            | "c_longlong"
            | "c_long"
            | "c_ulong"
            | "c_ushort"
            | "c_short"
            | "c_char"
            | "c_uchar"
            | "i32"
            | "u32"
            | "u64"
            | "i64"
            | "u16"
            | "u8"
            | "i8"
    );
    if rust_type == "usize" {
        return ParamClass::Size;
    }
    if is_int {
        let device_like = ["device", "dev", "srcdevice", "dstdevice", "peerdevice", "ordinal"];
        if base(rust_type) == "c_int" && device_like.contains(&lower.as_str()) {
            return ParamClass::Device;
        }
        if lower.contains("flags") {
            return ParamClass::Flags;
        }
        return ParamClass::Int;
    }
    if generated::CONSTANTS.iter().any(|(_, t, _)| *t == rust_type) {
        return ParamClass::Enum(rust_type.to_owned());
    }
    if let Some(s) = structure(rust_type) {
        return ParamClass::Struct(s.name.to_owned());
    }
    ParamClass::Int
}

/// The C spelling of a bindings type, for a reproducer's declarations: `*mut cudaStream_t` -> `cudaStream_t *`.
pub fn c_type(rust_type: &str) -> String {
    let t = rust_type.trim();
    if let Some(p) = t.strip_prefix("*mut ") {
        return format!("{} *", c_type(p));
    }
    if let Some(p) = t.strip_prefix("*const ") {
        // A const pointer to a pointer: `const void * const *`, not `const const void * *`.
        return if p.trim().starts_with('*') {
            format!("{} const *", c_type(p))
        } else {
            format!("const {} *", c_type(p))
        };
    }
    let base = t.rsplit("::").next().unwrap_or(t);
    match base {
        "c_void" => "void",
        "c_char" => "char",
        "c_uchar" => "unsigned char",
        "c_short" => "short",
        "c_ushort" => "unsigned short",
        "c_int" | "i32" => "int",
        "c_uint" | "u32" => "unsigned int",
        "c_long" => "long",
        "c_ulong" => "unsigned long",
        "c_longlong" | "i64" => "long long",
        "c_ulonglong" | "u64" => "unsigned long long",
        "usize" => "size_t",
        "u8" => "unsigned char",
        "i8" => "signed char",
        "i16" => "short",
        "u16" => "unsigned short",
        "f32" => "float",
        "f64" => "double",
        other => other,
    }
    .to_owned()
}

/// Whether what a call writes into output `param` differs between two runs: an address or a handle
/// ([`is_address`]), or a reading of the moment (free memory, an elapsed time, an id, a log position).
pub fn output_varies(function: &str, param: &str, rust_type: &str) -> bool {
    const READINGS: &[(&str, &str)] = &[
        ("cudaMemGetInfo", "free"),
        ("cudaEventElapsedTime", "ms"),
        ("cudaStreamGetId", "streamId"),
        // A capture sequence's id counts the process's captures: 23 in a worker that ran other capture cases, 1 in
        // a fresh reproducer (api/open-conditions/capture-info-lossy-query, both executors on 4 x H100).
        ("cudaStreamGetCaptureInfo", "id_out"),
        // An IPC handle's bytes name the exporting process's allocation or event (differed between the executors).
        ("cudaIpcGetMemHandle", "handle"),
        ("cudaIpcGetEventHandle", "handle"),
        ("cudaLogsCurrent", "iterator_out"),
        ("cudaDeviceGetPCIBusId", "pciBusId"),
        // Of a texture made without a resource view (the page says the call fails; the H100 returns cudaSuccess),
        // what it writes depends on the process's history: `format` 16 in a worker that ran other texture cases,
        // 0 in a fresh reproducer (f5c6025, textures/no-view-desc-rejected).
        ("cudaGetTextureObjectResourceViewDesc", "pResViewDesc"),
    ];
    is_address(rust_type)
        || READINGS.contains(&(function, param))
        || pointee_struct(rust_type).is_some_and(leads_with_an_address)
}

/// Whether the first 8 bytes of a struct (what a call's output records as its number: `exec::interpret::call`)
/// hold an address or a handle: cudaMemsetParams' `dst`, cudaPitchedPtr's `ptr`, a kernel node's `func`.
fn leads_with_an_address(s: &GenStruct) -> bool {
    s.fields.iter().filter(|f| f.offset < 8).any(|f| {
        is_address(&format!("*mut {}", f.rust_type)) || structure(f.rust_type).is_some_and(leads_with_an_address)
    })
}

/// Whether an output pointer of this type (`*mut c_char`: cudaDeviceGetPCIBusId's `pciBusId`, cudaFuncGetName's
/// buffer is `*mut *const c_char`, not this) receives a NUL-terminated text, kept whole for a later call's text
/// argument (`L.param`) rather than as one byte.
pub fn is_text_output(rust_type: &str) -> bool {
    rust_type.strip_prefix("*mut ").is_some_and(|t| !t.trim().starts_with('*') && t.trim().ends_with("c_char"))
}

/// Whether an output pointer of this type (`*mut cudaStream_t`, `*mut *mut c_void`) receives an address or a
/// handle, which no two runs share, rather than a number.
pub fn is_address(rust_type: &str) -> bool {
    let pointee =
        rust_type.strip_prefix("*mut ").or_else(|| rust_type.strip_prefix("*const ")).unwrap_or(rust_type).trim();
    pointee.starts_with('*')
        || HANDLES.contains(&pointee)
        || pointee.starts_with("::std::option::Option<")
        || pointee.ends_with("Fn_t")
        || pointee.ends_with("Handle")
}

/// Whether a call of `name` may wait on the host for device work (the can-finish check: a closed gate before such
/// a call could hang the case). The documentation says it per page ("this function may synchronize", "synchronous
/// with respect to the host"); this is the conservative reading of those pages: the synchronize calls, the copies
/// and memsets without `Async`, the frees and unregistrations (which may wait for the memory's work), destroy
/// calls that may block, the device reset and the graph and library (un)loads; everything else returns without
/// waiting for device work.
pub fn may_wait_on_host(name: &str) -> bool {
    if name.ends_with("Async") {
        return false;
    }
    let prefixes = [
        "cudaMemcpy",
        "cudaMemset",
        "cudaFree",
        "cudaHostUnregister",
        "cudaDeviceReset",
        "cudaMemPoolDestroy",
        "cudaMemPoolTrimTo",
        "cudaDeviceGraphMemTrim",
        "cudaGraphExecDestroy",
        "cudaGraphDestroy",
        "cudaLibraryUnload",
        "cudaMalloc",
        "cudaHostRegister",
        "cudaIpc",
        "cudaGraphInstantiate",
        "cudaGraphUpload",
        "cudaDestroy",
        "cudaThreadExit",
        "cudaSetValidDevices",
        "cudaSetDeviceFlags",
        "cudaInitDevice",
    ];
    name.contains("Synchronize") || prefixes.iter().any(|p| name.starts_with(p))
}

/// Whether `name` returns the runtime's last error of the calling thread, which every failing call sets and
/// cudaGetLastError resets: its result depends on the calls made before it, not only on the device's state.
/// Even after a sticky error: on an H100 (driver 580) cudaGetLastError resets it while every call that does work
/// keeps returning it (`errors/trap-is-sticky`), and the `api/after-fault` row of cudaPeekAtLastError returned
/// cudaErrorLaunchFailure alone and cudaSuccess when run after the sweep's other rows.
pub fn reads_last_error(name: &str) -> bool {
    matches!(name, "cudaGetLastError" | "cudaPeekAtLastError")
}

/// What a function needs that a headless Linux host with an NVIDIA GPU lacks, or None. The platform keys are
/// those of `docs/coverage.md`'s dispositions.
pub fn platform(name: &str) -> Option<&'static str> {
    const BY_PREFIX: &[(&str, &str)] = &[
        // Graphics interop: a resource registered by OpenGL, Direct3D, EGL or VDPAU.
        ("cudaGraphics", "graphics-interop"),
        // NvSciSync exists on Tegra/DRIVE only.
        ("cudaDeviceGetNvSciSyncAttributes", "tegra"),
    ];
    BY_PREFIX.iter().find(|(p, _)| name.starts_with(p)).map(|(_, platform)| *platform)
}

#[cfg(test)]
mod tests;
