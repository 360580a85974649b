//! `samples: N` on the objects of the first run. A sampled case's extra runs feed its `measure` figures only; each
//! used to create, fill, read back and release every object again, and for the performance cases that is 768 MiB
//! of pinned and device memory per sample (cudaMallocHost pins and zeroes the pages, the host writes the pattern,
//! cudaFreeHost unpins them): host CPU on the critical path, which a busy host stretches several times over. Here
//! the extra runs reuse the first run's streams, events, buffers and stamp pool, and before each one every buffer
//! gets its initial contents back, on the device, so that every sample runs the same script on equal state.
//!
//! Only cases whose script leaves nothing behind but buffer contents may do so ([`why_not_shared`]); the others run
//! each sample from scratch, as before. What the first run creates, observes and releases is unchanged; only its
//! release comes after the samples.

use super::buffers::Buffer;
use super::objects::{Objects, Slot};
use super::resources::{check, DeviceMemory, Event, Stream};
use crate::case::ast::{Case, Decl, KernelCall, MemKind, OpKind, Target, INITIAL_BYTE};
use crate::case::words::Word;
use cuda_sys as sys;
use std::collections::BTreeMap;
use std::ffi::c_void;

/// How a buffer gets its initial contents ([`INITIAL_BYTE`] everywhere) back before a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refill {
    /// Device memory: cudaMemset on the legacy stream, as when it was created.
    DeviceMemset,
    /// Pinned and mapped host memory: copied from a device buffer of the pattern by the copy engine (DMA) on the
    /// legacy stream. The host never writes those pages: 384 MiB of host stores per sample of a performance case,
    /// which is what a busy host makes slow.
    PatternCopy,
    /// Pageable memory: written by the host (no CUDA call), as when it was created.
    HostWrite,
}

impl Refill {
    pub fn of(kind: MemKind) -> Option<Refill> {
        match kind {
            MemKind::Device => Some(Refill::DeviceMemset),
            MemKind::Pinned | MemKind::Mapped => Some(Refill::PatternCopy),
            MemKind::Pageable => Some(Refill::HostWrite),
            // Where managed pages live (host or device) is state a run leaves behind and a refill would change
            // again: such a case is not shared (see `why_not_shared`).
            MemKind::Managed => None,
        }
    }
}

/// The buffers whose contents a sample restores, in declaration order, and how: every buffer created before the
/// script (slices are views of them; `later` buffers are created by the script itself, each run).
pub fn refill_plan(case: &Case) -> Vec<(&str, Refill)> {
    case.decls
        .iter()
        .filter_map(|d| match d {
            Decl::Buffer { name, kind, later: false, .. } => Some((name.as_str(), Refill::of(*kind)?)),
            _ => None,
        })
        .collect()
}

/// Why the extra samples of `case` cannot run on the objects of its first run (`None`: they can). The rule: after a
/// run, the only state the script leaves in its objects must be what [`restore`] puts back — buffer contents,
/// and `later` objects that the script creates itself. So: one device, one process, no case threads; streams,
/// events and buffers only (no gates, whose opening is per run; no graphs, pools or conditions, which operations
/// change); operations that only queue work on those objects or wait for it; every declared event recorded before
/// anything else uses it (a wait, query, synchronize or elapsed before the first record would see the previous
/// run's record instead of a never-recorded event); no managed memory; nothing destroyed that the script did not
/// create.
pub fn why_not_shared(case: &Case) -> Option<String> {
    if case.device_count() > 1 {
        return Some("it uses several devices".into());
    }
    if !case.poisons.is_empty() {
        return Some("it poisons the context".into());
    }
    let mut later = BTreeMap::new();
    for decl in &case.decls {
        match decl {
            Decl::Stream { .. } | Decl::Event { .. } | Decl::Slice { .. } => {}
            Decl::Buffer { kind, name, .. } if Refill::of(*kind).is_none() => {
                return Some(format!("buffer {name} is {} memory", kind.word()));
            }
            Decl::Buffer { .. } => {}
            other => return Some(format!("it declares {} {}", other.word().word(), other.name())),
        }
        later.insert(decl.name(), decl.is_later());
    }
    let is_later = |name: &str| later.get(name).copied().unwrap_or(false);
    let is_event = |name: &str| case.decls.iter().any(|d| matches!(d, Decl::Event { name: n, .. } if n == name));
    let mut recorded: Vec<&str> = Vec::new();
    for op in &case.script {
        if op.thread.is_some() {
            return Some("an operation runs on another thread".into());
        }
        let text = || crate::case::print::op_kind(&op.kind);
        let events: Vec<&str> = match &op.kind {
            OpKind::Launch {
                kernel:
                    KernelCall::Spin { .. }
                    | KernelCall::Fill { .. }
                    | KernelCall::Transform { .. }
                    | KernelCall::Compare { .. }
                    | KernelCall::VecAdd { .. }
                    | KernelCall::SinCos { .. }
                    | KernelCall::Sleep { .. },
                ..
            } => Vec::new(),
            OpKind::Memcpy { .. }
            | OpKind::Memset { .. }
            | OpKind::DeviceSync
            | OpKind::Sleep { .. }
            | OpKind::GetLastError
            | OpKind::PeekLastError => Vec::new(),
            OpKind::Record { event, external: false, .. } => {
                recorded.push(event);
                Vec::new()
            }
            OpKind::Wait { event, external: false, .. } => vec![event.as_str()],
            OpKind::Query { target } | OpKind::Sync { target } => match target {
                Target::Event(event) => vec![event.as_str()],
                Target::Stream(_) => Vec::new(),
            },
            OpKind::Elapsed { start, stop } => vec![start.as_str(), stop.as_str()],
            OpKind::Create { name } | OpKind::Destroy { name } if is_later(name) => Vec::new(),
            OpKind::Destroy { name } => return Some(format!("the script destroys {name}, which it did not create")),
            _ => return Some(format!("`{}` is not shared", text())),
        };
        if let Some(event) = events.into_iter().find(|e| is_event(e) && !is_later(e) && !recorded.contains(e)) {
            return Some(format!("`{}` uses event {event} before the script records it", text()));
        }
    }
    None
}

/// Bytes of the device buffer that pinned and mapped buffers are refilled from, a copy of at most this much at a
/// time: 16 MiB keeps a 128 MiB buffer to 8 copies.
const PATTERN_BYTES: usize = 16 << 20;

/// A device buffer holding [`INITIAL_BYTE`] everywhere, that host-visible buffers are refilled from.
pub struct Pattern {
    memory: DeviceMemory,
    bytes: usize,
}

impl Pattern {
    /// A pattern buffer of `bytes` (at most [`PATTERN_BYTES`]), filled on the legacy stream.
    fn create(bytes: usize) -> Result<Pattern, sys::cudaError_t> {
        let bytes = bytes.clamp(4, PATTERN_BYTES);
        let memory = DeviceMemory::alloc(bytes)?;
        // SAFETY: a live device allocation of `bytes` bytes.
        check(unsafe { sys::cudaMemset(memory.raw(), i32::from(INITIAL_BYTE), bytes) })?;
        Ok(Pattern { memory, bytes })
    }

    pub fn release(self) -> sys::cudaError_t {
        self.memory.release()
    }
}

/// Puts back the state `case`'s script started from in `st` (its first run's objects), before one more sample:
/// every `later` object the script left is released and its slot waits for `create` again, and every buffer gets
/// its initial contents (on the legacy stream: the executor synchronizes the device before the script, as after
/// creation). `pattern` is made on first need and kept for the next samples. Returns notes for what failed; a
/// host-visible buffer whose copy failed is written by the host instead, so the contents are right whatever failed.
pub fn restore(case: &Case, st: &mut Objects, pattern: &mut Option<Pattern>) -> Vec<String> {
    let mut notes = Vec::new();
    for decl in case.decls.iter().filter(|d| d.is_later()) {
        let name = decl.name();
        let code = match decl {
            Decl::Stream { .. } => relater(&mut st.streams, name, Stream::release),
            Decl::Event { .. } => relater(&mut st.events, name, Event::release),
            Decl::Buffer { .. } => relater(&mut st.buffers, name, Buffer::release),
            _ => None,
        };
        if let Some(code) = code.filter(|c| *c != sys::cudaError::cudaSuccess) {
            notes.push(format!("before a sample: releasing {name}, which the script left, returned {code}"));
        }
    }
    let plan = refill_plan(case);
    if pattern.is_none() {
        // One pattern for every host-visible buffer of the case, as large as the largest (up to PATTERN_BYTES).
        let largest = plan
            .iter()
            .filter(|(_, how)| *how == Refill::PatternCopy)
            .filter_map(|(name, _)| st.buffer(name).ok().map(|b| b.bytes))
            .max();
        if let Some(bytes) = largest {
            match Pattern::create(usize::try_from(bytes).unwrap_or(PATTERN_BYTES)) {
                Ok(made) => *pattern = Some(made),
                Err(code) => notes.push(format!("before a sample: making the pattern buffer returned {code}")),
            }
        }
    }
    for (name, how) in plan {
        let Ok(buffer) = st.buffer(name) else { continue };
        let bytes = usize::try_from(buffer.bytes).unwrap_or(0);
        let on_device = match how {
            // SAFETY: the buffer's own device allocation, of `bytes` bytes.
            Refill::DeviceMemset => {
                Some(check(unsafe { sys::cudaMemset(buffer.memset_ptr(), i32::from(INITIAL_BYTE), bytes) }))
            }
            Refill::PatternCopy => Some(
                pattern.as_ref().ok_or(sys::cudaError::cudaErrorMemoryAllocation).and_then(|p| p.copy_over(buffer)),
            ),
            Refill::HostWrite => None,
        };
        match on_device {
            Some(Ok(())) => continue,
            Some(Err(code)) => {
                notes.push(format!("before a sample: refilling buffer {name} on the device returned {code}"))
            }
            None => {}
        }
        if buffer.host_words().is_some() {
            // SAFETY: no work uses the buffer (the device was synchronized after the last run, and nothing queued
            // since touches it), and it holds `bytes` bytes of host memory.
            unsafe { std::ptr::write_bytes(buffer.copy_ptr().cast::<u8>(), INITIAL_BYTE, bytes) };
        }
    }
    notes
}

/// Takes what the `later` slot holds, releasing it with `release`, and leaves the slot waiting for `create` again;
/// the code of the release, if it held an object.
fn relater<T>(
    slots: &mut BTreeMap<String, Slot<T>>,
    name: &str,
    release: impl FnOnce(T) -> sys::cudaError_t,
) -> Option<sys::cudaError_t> {
    match slots.insert(name.to_owned(), Slot::Later) {
        Some(Slot::Ready(object)) => Some(release(object)),
        _ => None,
    }
}

impl Pattern {
    /// Copies the pattern over host-visible `buffer`, as much as the pattern holds at a time, on the legacy stream.
    fn copy_over(&self, buffer: &Buffer) -> Result<(), sys::cudaError_t> {
        let total = usize::try_from(buffer.bytes).map_err(|_| sys::cudaError::cudaErrorInvalidValue)?;
        let kind = sys::cudaMemcpyKind::cudaMemcpyDeviceToHost;
        let mut done = 0;
        while done < total {
            let n = (total - done).min(self.bytes);
            // SAFETY: `done + n` is inside the buffer's host allocation and the pattern holds at least n bytes;
            // both stay alive until the device is synchronized before the script.
            let dst = unsafe { buffer.copy_ptr().cast::<u8>().add(done) }.cast::<c_void>();
            check(unsafe {
                sys::cudaMemcpyAsync(dst, self.memory.raw().cast_const(), n, kind, sys::cudaStreamLegacy)
            })?;
            done += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::parse_one;

    fn case(body: &str) -> Case {
        let text = format!("case area/x\n  rule: r\n  source: s\n  samples: 3\n\n{body}end\n");
        parse_one("area.case", 1, &text).unwrap_or_else(|d| panic!("{text}\n{d:?}"))
    }

    /// Which of the suite's sampled cases run their samples on the first run's objects: all but seed 004's, whose
    /// graph (captured, instantiated, uploaded) is state a run leaves behind. The 768 MiB ones are shared.
    #[test]
    fn the_sampled_performance_cases_share_their_objects_except_the_graph_one() {
        let file = crate::case::parse_file("performance.case", include_str!("../../../cases/performance.case"))
            .expect("cases/performance.case parses");
        let decided: Vec<(&str, Option<String>)> =
            file.cases.iter().filter(|c| c.samples > 1).map(|c| (c.id.as_str(), why_not_shared(c))).collect();
        let shared: Vec<&str> = decided.iter().filter(|(_, why)| why.is_none()).map(|(id, _)| *id).collect();
        assert_eq!(
            shared,
            [
                "performance/seed000-pipeline-untimed",
                "performance/seed000-serial",
                "performance/seed002-sync-vs-async",
                "performance/seed002-multi-stream",
                "performance/seed003-sleep-10k",
                "performance/seed003-sleep-100k",
                "performance/seed003-sleep-10m",
            ],
            "{decided:?}"
        );
        let graph = decided.iter().find(|(id, _)| *id == "performance/seed004-launch-cost").unwrap();
        assert_eq!(graph.1.as_deref(), Some("it declares graph g"));
    }

    #[test]
    fn a_script_that_leaves_more_than_contents_behind_is_not_shared() {
        let refused = |body: &str, why: &str| {
            let got = why_not_shared(&case(body));
            assert!(got.as_deref().is_some_and(|g| g.contains(why)), "{body}: {got:?}, expected {why:?}");
        };
        let plain = "  stream s\n  event e\n  buffer d device 4096\n  buffer h pinned 4096\n\n";
        assert_eq!(
            why_not_shared(&case(&format!(
                "{plain}        memcpy-async h d on s\n        record e on s\n        sync e\n  t:    elapsed e e\n"
            ))),
            None
        );
        refused("  stream s\n  gate g\n\n        launch gate g on s\n        open g\n", "it declares gate g");
        refused("  thread t\n  stream s\n\n  @t    sync s\n", "it declares thread t");
        refused("  buffer m managed 4096\n\n        memset m 0\n", "buffer m is managed memory");
        refused(
            &format!("{plain}        sync e\n        record e on s\n"),
            "uses event e before the script records it",
        );
        refused(&format!("{plain}        wait s for e\n        record e on s\n"), "uses event e before");
        refused(&format!("{plain}        record e on s\n        destroy s\n"), "destroys s, which it did not create");
        refused(&format!("{plain}        launch fault trap on s\n"), "is not shared");
        refused(&format!("{plain}        launch lazy-spin on s\n"), "is not shared");
        refused(&format!("{plain}        malloc 4096\n"), "is not shared");
    }

    #[test]
    fn later_objects_are_the_scripts_own_and_may_come_and_go() {
        let body = "  stream s later\n  event e later\n  buffer d device 4096 later\n  buffer h pinned 4096\n\n        \
                    create s\n        create e\n        create d\n        sync e\n        memcpy-async h d on s\n        \
                    destroy d\n        destroy e\n        destroy s\n";
        assert_eq!(why_not_shared(&case(body)), None, "a later event is new in every run: no earlier record to see");
    }

    #[test]
    fn the_refill_plan_has_every_buffer_made_before_the_script_by_its_kind() {
        let c = case(
            "  buffer d device 4096\n  buffer h pinned 4096\n  buffer m mapped 4096\n  buffer p pageable 4096\n  \
             buffer l device 4096 later\n  slice h0 of h at 0 size 1024\n\n        create l\n        memcpy h d\n",
        );
        assert_eq!(
            refill_plan(&c),
            [
                ("d", Refill::DeviceMemset),
                ("h", Refill::PatternCopy),
                ("m", Refill::PatternCopy),
                ("p", Refill::HostWrite)
            ]
        );
        assert_eq!(Refill::of(MemKind::Managed), None);
    }
}
