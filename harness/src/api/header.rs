//! The cudart header's comments as data: every function that returns `cudaError_t`, its group (the header's
//! `\\defgroup`s), the codes its `\\return` list documents and the cross-function notes attached to it.

use serde::Serialize;

/// One function the header declares.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Declared {
    pub name: String,
    /// Short group name: `stream`, `event`, `memory`, `graph`, `pool`, `device`, `peer`, `error`, or the header's
    /// group id in lower case (`execution`, `unified`, ...).
    pub group: String,
    /// The codes its doc comment's `\return` list names, in the header's order.
    pub documented: Vec<String>,
    /// The cross-function notes its comment attaches through doxygen aliases (`notefnerr`, `note_init_rt`,
    /// `note_callback`, ...: [`NOTES`]).
    pub notes: Vec<&'static str>,
}

/// The doxygen aliases that attach one sentence to many functions (`../shared/API-BREADTH.md` §4), with the
/// sentence every page prints for it.
pub const NOTES: &[(&str, &str)] = &[
    ("notefnerr", "Note that this function may also return error codes from previous, asynchronous launches."),
    (
        "note_init_rt",
        "This function may also return cudaErrorInitializationError, cudaErrorInsufficientDriver or cudaErrorNoDevice if this call tries to initialize internal CUDA RT state.",
    ),
    (
        "note_callback",
        "Note that as specified by cudaStreamAddCallback no CUDA function may be called from callback. cudaErrorNotPermitted may, but is not guaranteed to, be returned as a diagnostic in such case.",
    ),
    ("note_graph_thread_safety", "Graph objects are not threadsafe."),
    ("note_null_stream", "This function uses standard default stream semantics."),
    ("note_destroy_ub", "Use of the handle after this call is undefined behavior."),
];

/// The functions of `cuda_runtime_api.h` that return `cudaError_t`, with their group and documented codes.
pub fn parse_header(text: &str) -> Vec<Declared> {
    let mut out = Vec::new();
    let mut group = String::from("other");
    let mut comment: Option<String> = None;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("/**") {
            let mut body = String::from(line);
            while !body.contains("*/") {
                match lines.next() {
                    Some(next) => {
                        body.push('\n');
                        body.push_str(next);
                    }
                    None => break,
                }
            }
            if let Some(g) = defgroup(&body) {
                group = g;
                comment = None;
            } else {
                comment = Some(body);
            }
            continue;
        }
        // The return type, before the argument list (cudaGetErrorName takes a cudaError_t but returns a string).
        let returns_code = line.split('(').next().is_some_and(|head| head.contains("cudaError_t"));
        if trimmed.starts_with("extern") && returns_code && line.contains("CUDARTAPI") {
            if let Some(name) = declared_name(line) {
                let documented = comment.as_deref().map(returned_codes).unwrap_or_default();
                let notes = comment.as_deref().map(notes).unwrap_or_default();
                out.push(Declared { name, group: group.clone(), documented, notes });
            }
            comment = None;
        } else if !trimmed.is_empty() && !trimmed.starts_with('#') {
            // Only a comment right before a declaration (preprocessor lines between them allowed) documents it.
            comment = None;
        }
    }
    out
}

/// `\defgroup CUDART_MEMORY_POOLS Stream Ordered Memory Allocator` -> `pool`; `\addtogroup CUDART_DEVICE`
/// (the header reopens the device group after the error group) -> `device`.
fn defgroup(comment: &str) -> Option<String> {
    let rest = comment.split("\\defgroup").nth(1).or_else(|| comment.split("\\addtogroup").nth(1))?;
    let id = rest.split_whitespace().next()?;
    let short = id.strip_prefix("CUDART_").unwrap_or(id).trim_matches('_');
    Some(match short {
        "MEMORY_POOLS" => "pool".to_owned(),
        other => other.to_lowercase().replace('_', "-"),
    })
}

/// The identifier before the argument list: `... cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream);`.
fn declared_name(line: &str) -> Option<String> {
    let before = &line[..line.find('(')?];
    let name = before.split_whitespace().last()?;
    (name.starts_with("cuda") && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then(|| name.to_owned())
}

/// The `::cudaSuccess`, `::cudaError…` names of a doc comment's `\return` paragraph (up to the next command).
fn returned_codes(comment: &str) -> Vec<String> {
    let Some((_, after)) = comment.split_once("\\return") else { return Vec::new() };
    // `\returns` (cudaMemPoolImportPointer) is the same command.
    let after = after.strip_prefix('s').unwrap_or(after);
    let mut codes = Vec::new();
    for (i, line) in after.lines().enumerate() {
        let text = line.trim_start().trim_start_matches('*').trim();
        // The list ends at the next command, the comment's end, or a blank line after it began (a blank line
        // between `\return` and its list, as cudaDeviceGetNvSciSyncAttributes has, does not end it).
        if i > 0 && (text.starts_with('\\') || text.starts_with("*/") || (text.is_empty() && !codes.is_empty())) {
            break;
        }
        for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')) {
            if let Some(code) = word.strip_prefix("::") {
                if (code == "cudaSuccess" || code.starts_with("cudaError")) && !codes.iter().any(|c| c == code) {
                    codes.push(code.to_owned());
                }
            }
        }
    }
    codes
}

/// The aliases of [`NOTES`] a doc comment uses.
fn notes(comment: &str) -> Vec<&'static str> {
    NOTES
        .iter()
        .filter(|(alias, _)| {
            comment.match_indices(&format!("\\{alias}")).any(|(at, m)| {
                // `\notefnerr` must not match `\notefnerr_x`: the alias ends at a non-word character.
                !comment[at + m.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            })
        })
        .map(|(alias, _)| *alias)
        .collect()
}
