//! `timing: events`: the device interval of every copy, memset, kernel launch and graph launch of a script. Each
//! is bracketed by two events recorded on its own stream, one just before the call and one just after it (outside
//! the call's host timing), and an origin event is recorded on a private stream just before the script starts.
//! After the final synchronize, `cudaEventElapsedTime(origin, e)` places every bracket on one clock.
//!
//! Events, not kernel stamps, because copies cannot stamp: a copy engine runs no code. A bracket starts when its
//! stream reaches it, so an operation that waits for an engine busy with another stream's work is shown from the
//! moment its stream reached it (for a stream's first operation after a `wait`, from the moment the wait resolved).
//! Operations on a capturing stream are not bracketed (a capture records no timestamps).

use super::capture::active_capture_id;
use super::resources::{Event, Stream};
use crate::case::ast::Case;
use crate::record::observations::TimedOp;
use cuda_sys as sys;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

pub struct EventTiming {
    origin: Option<(Stream, Event)>,
    /// Script index → the (before, after) events of that operation, created before the script.
    pairs: BTreeMap<usize, (Event, Event)>,
    /// The operations whose both events were recorded.
    recorded: Mutex<Vec<usize>>,
}

// SAFETY: the handles are process-wide CUDA objects; the recorded list is behind a mutex.
unsafe impl Sync for EventTiming {}

impl EventTiming {
    /// The events of `case`: none without `timing:`; else an origin and two events per operation that does device
    /// work. The notes say what could not be created (those operations then have no interval).
    pub fn create(case: &Case) -> (EventTiming, Vec<String>) {
        let mut timing = EventTiming { origin: None, pairs: BTreeMap::new(), recorded: Mutex::new(Vec::new()) };
        if case.timing.is_none() {
            return (timing, Vec::new());
        }
        let mut notes = Vec::new();
        // Timing events (flags 0): cudaEventDisableTiming would make them useless here.
        match Stream::create(sys::cudaStreamNonBlocking, 0).and_then(|s| Ok((s, Event::create(0)?))) {
            Ok(origin) => timing.origin = Some(origin),
            Err(code) => {
                notes.push(format!("timing: creating the origin event returned {}; no device times", code));
                return (timing, notes);
            }
        }
        for (index, op) in case.script.iter().enumerate().filter(|(i, _)| case.is_timed(*i)) {
            match Event::create(0).and_then(|a| Ok((a, Event::create(0)?))) {
                Ok(pair) => drop(timing.pairs.insert(index, pair)),
                Err(code) => notes.push(format!(
                    "timing: creating the events of `{}` returned {}; it has no device time",
                    crate::case::print::op_kind(&op.kind),
                    code
                )),
            }
        }
        (timing, notes)
    }

    /// Records the origin: call just before the script's first operation.
    pub fn start(&self) -> Option<String> {
        let (stream, event) = self.origin.as_ref()?;
        // SAFETY: live event and stream.
        let code = unsafe { sys::cudaEventRecord(event.raw(), stream.raw()) };
        (code != sys::cudaError::cudaSuccess)
            .then(|| format!("timing: recording the origin event returned {}; no device times", code))
    }

    /// Records the event before operation `index` on `stream`, if the operation is timed and the stream is not
    /// capturing. The returned bracket records the event after it.
    pub fn before(&self, index: usize, stream: sys::cudaStream_t) -> Option<Bracket<'_>> {
        let (before, after) = self.pairs.get(&index)?;
        let capturable = stream != sys::cudaStreamLegacy && !stream.is_null();
        if capturable && active_capture_id(stream).is_some() {
            return None;
        }
        // SAFETY: a live event; a live (or built-in) stream.
        let code = unsafe { sys::cudaEventRecord(before.raw(), stream) };
        (code == sys::cudaError::cudaSuccess).then_some(Bracket { timing: self, index, after: after.raw(), stream })
    }

    /// Every bracketed operation's interval in milliseconds from the origin. Call after the final synchronize.
    pub fn read(&self, case: &Case) -> (Vec<TimedOp>, Vec<String>) {
        let Some((_, origin)) = &self.origin else { return (Vec::new(), Vec::new()) };
        let mut recorded = self.recorded.lock().unwrap_or_else(PoisonError::into_inner).clone();
        recorded.sort_unstable();
        recorded.dedup();
        let mut notes = Vec::new();
        let mut timed = Vec::new();
        for index in recorded {
            let Some((before, after)) = self.pairs.get(&index) else { continue };
            match (elapsed_ms(origin, before), elapsed_ms(origin, after)) {
                (Ok(start_ms), Ok(end_ms)) => timed.push(TimedOp {
                    op_index: index,
                    label: case.script.get(index).and_then(|op| op.label.clone()),
                    start_ms,
                    end_ms,
                }),
                (Err(code), _) | (_, Err(code)) => {
                    notes.push(format!("timing: cudaEventElapsedTime for operation #{index} returned {code}"))
                }
            }
        }
        (timed, notes)
    }

    /// Destroys the events and the origin's stream; a note for each release that failed.
    pub fn release(self) -> Vec<String> {
        let mut notes = Vec::new();
        let mut check = |what: &str, code: sys::cudaError_t| {
            if code != sys::cudaError::cudaSuccess {
                notes.push(format!("cleanup: releasing {what} returned {}", code));
            }
        };
        for (_, (before, after)) in self.pairs {
            check("a timing event", before.release());
            check("a timing event", after.release());
        }
        if let Some((stream, event)) = self.origin {
            check("the timing origin event", event.release());
            check("the timing stream", stream.release());
        }
        notes
    }
}

/// An operation whose before-event was recorded.
pub struct Bracket<'t> {
    timing: &'t EventTiming,
    index: usize,
    after: sys::cudaEvent_t,
    stream: sys::cudaStream_t,
}

impl Bracket<'_> {
    /// Records the event after the operation (when it ran: an operation that was not run has no interval).
    pub fn finish(self, ran: bool) {
        if !ran {
            return;
        }
        // SAFETY: a live event and the stream the before-event was recorded on.
        if unsafe { sys::cudaEventRecord(self.after, self.stream) } == sys::cudaError::cudaSuccess {
            self.timing.recorded.lock().unwrap_or_else(PoisonError::into_inner).push(self.index);
        }
    }
}

fn elapsed_ms(origin: &Event, event: &Event) -> Result<f64, String> {
    let mut ms = 0f32;
    // SAFETY: live events; ms is a valid out-pointer.
    let code = unsafe { sys::cudaEventElapsedTime(&mut ms, origin.raw(), event.raw()) };
    if code == sys::cudaError::cudaSuccess {
        Ok(f64::from(ms))
    } else {
        Err(code.to_string())
    }
}
