//! Turns a case's expectations and one run's [`Observations`] into a [`Verdict`]. Pure: no CUDA, no clocks.
//!
//! A case fails when a declaration or operation returned a code it does not accept, a `capture-status` or
//! `capture-deps` assertion does not hold, an `expect` is false, a gate timed out that the case did not expect to,
//! a `variant` has no alternative that held, or the device synchronize after the script reported an error. A run
//! the watchdog had to end is a *timeout*. Otherwise a false `quality` gives *quality-warning*, a `variant` gives
//! *variant* (naming the alternative), and all else is *pass*.

use crate::case::ast::{AttrValue, Case, Expectation, OpKind, OpWord, Predicate, Priority, SyncDomain};
use crate::case::print::predicate as predicate_text;
use crate::case::words::Word;
use crate::record::observations::{GraphRecord, HostCallKind, KernelRecord, Observations, OpRecord, OpValue};
use crate::record::verdict::{Verdict, VerdictKind};
use std::collections::VecDeque;

/// The verdict on a recorded run of `case` as the case reads now (`rejudge`): each operation's accepted codes are
/// taken from the case's text (as the executor derives them when it records), not from the record, where the
/// operation is still the one recorded (same index, same text); a changed `=> CODE` is then judged like a changed
/// expectation.
pub fn judge_again(case: &Case, obs: &Observations) -> Verdict {
    let mut obs = obs.clone();
    for rec in &mut obs.ops {
        let Some(op) = case.script.get(rec.index) else { continue };
        if crate::case::print::op_kind(&op.kind) == rec.text {
            rec.acceptable = crate::case::ast::accepted_codes(&op.expect);
        }
    }
    judge(case, &obs)
}

/// The verdict on one run of `case`.
pub fn judge(case: &Case, obs: &Observations) -> Verdict {
    let mut failures = Vec::new();
    let mut warnings = Vec::new();
    let mut info = Vec::new();
    let mut variants = Vec::new();
    let mut observed = Vec::new();

    for d in &obs.decls {
        if let Some(code) = &d.code {
            if !d.acceptable.contains(code) {
                failures.push(format!(
                    "line {}: creating {} {} returned {code}, expected {}",
                    d.line,
                    d.kind,
                    d.name,
                    d.acceptable.join(" | ")
                ));
            }
        }
    }
    judge_ops(case, obs, &mut failures, &mut info);
    // `=> any` (a sweep row's observe): the code is what the row records, kept in the verdict as `LABEL=CODE`, so a
    // report without traces still says what the driver returned.
    for rec in obs.ops.iter().filter(|r| r.acceptable.iter().any(|a| a == "any")) {
        if let Some(code) = &rec.code {
            let at = rec.label.clone().unwrap_or_else(|| format!("line {}", rec.line));
            observed.push(format!("{at}={code}"));
        }
    }
    // An operation this runtime, driver or device lacks, which the case did not expect to be refused: the case
    // cannot say anything here, and what failed after it is a consequence.
    let unsupported = unsupported_operation(case, obs);
    for g in obs.gates.iter().filter(|g| g.timed_out && !expects_timeout(case, &g.name)) {
        failures.push(format!(
            "gate {} timed out inside its kernel, which the case does not expect: something held it closed \
             past the gate timeout, so what ran behind it is not what the case meant",
            g.name
        ));
    }
    match obs.final_sync.as_deref() {
        // A case that poisons the context on purpose names the sticky error the final synchronize must report.
        Some(code) if !case.poisons.is_empty() && !case.poisons.iter().any(|p| p == code) => {
            failures.push(format!(
                "the cudaDeviceSynchronize after the script returned {code}; the case poisons the context with {}",
                case.poisons.join(" | ")
            ));
        }
        Some(code) if case.poisons.is_empty() && code != "cudaSuccess" => {
            failures.push(format!("the cudaDeviceSynchronize after the script returned {code}"));
        }
        _ => {}
    }
    for (i, expectation) in case.expects.iter().enumerate() {
        let line = case.positions.expect_lines.get(i).copied().unwrap_or(0);
        match expectation {
            Expectation::Expect(p) => {
                if let Err(why) = holds(p, obs) {
                    failures.push(format!("line {line}: expect {}: {why}", predicate_text(p)));
                }
            }
            Expectation::Quality(p) => {
                if let Err(why) = holds(p, obs) {
                    warnings.push(format!("line {line}: quality {}: {why}", predicate_text(p)));
                }
            }
            Expectation::Variant(alternatives) | Expectation::Observe(alternatives) => {
                let (word, picked, seen_as) = match expectation {
                    Expectation::Variant(_) => ("variant", &mut variants, "variant"),
                    _ => ("observe", &mut observed, "observed"),
                };
                match first_that_holds(alternatives, obs) {
                    Ok((name, p)) => {
                        picked.push(name.clone());
                        info.push(format!("line {line}: {seen_as} {name}: {} held", predicate_text(p)));
                    }
                    Err(reasons) => failures.push(format!("line {line}: {word}: no alternative held: {reasons}")),
                }
            }
            // Figures are recorded in the observations (`measures`); timing never decides a verdict.
            Expectation::Measure(_) => {}
        }
    }

    let kind = if let Some(t) = obs.watchdog_fired_ns {
        failures.insert(
            0,
            format!(
                "the watchdog opened every gate at {} ms (the case deadline): the script had not finished, so an \
                 operation was waiting for something that never came",
                t / 1_000_000
            ),
        );
        VerdictKind::Timeout
    } else if let Some(reason) = unsupported {
        failures.insert(0, reason);
        VerdictKind::NotSupported
    } else if !failures.is_empty() {
        VerdictKind::Fail
    } else if !warnings.is_empty() {
        VerdictKind::QualityWarning
    } else if !variants.is_empty() {
        VerdictKind::Variant
    } else {
        VerdictKind::Pass
    };
    let mut messages = failures;
    messages.append(&mut warnings);
    messages.append(&mut info);
    Verdict {
        kind,
        variant: (!variants.is_empty()).then(|| variants.join(",")),
        observed: (!observed.is_empty()).then(|| observed.join(",")),
        messages,
    }
}

/// Return codes against the accepted ones, and the values `capture-status`/`capture-deps` assert.
fn judge_ops(case: &Case, obs: &Observations, failures: &mut Vec<String>, info: &mut Vec<String>) {
    for (index, op) in case.script.iter().enumerate() {
        let Some(rec) = obs.ops.iter().find(|r| r.index == index) else {
            let line = case.positions.op_lines.get(index).copied().unwrap_or(0);
            failures.push(format!("line {line}: the executor recorded nothing for this operation"));
            continue;
        };
        let Some(code) = &rec.code else {
            let why = rec.not_run.as_deref().unwrap_or("no reason recorded");
            info.push(format!("line {}: `{}` was not run: {why}", rec.line, rec.text));
            continue;
        };
        if rec.acceptable.iter().any(|a| a == "any") {
            continue;
        }
        if !rec.acceptable.contains(code) {
            failures.push(format!(
                "line {}: `{}` returned {code}, expected {}",
                rec.line,
                rec.text,
                rec.acceptable.join(" | ")
            ));
            continue;
        }
        if code != "cudaSuccess" {
            continue;
        }
        if let Some(seen) = asserted_value_mismatch(&op.kind, rec.value.as_ref(), &obs.devices) {
            failures.push(format!("line {}: `{}`: {seen}", rec.line, rec.text));
        }
    }
}

/// The first alternative of a `variant` or `observe` that holds, or why none did.
fn first_that_holds<'a>(
    alternatives: &'a [(String, Predicate)],
    obs: &Observations,
) -> Result<(&'a String, &'a Predicate), String> {
    let mut reasons = Vec::new();
    for (name, p) in alternatives {
        match holds(p, obs) {
            Ok(()) => return Ok((name, p)),
            Err(why) => reasons.push(format!("{name}: {} ({why})", predicate_text(p))),
        }
    }
    Err(reasons.join("; "))
}

/// The codes by which CUDA says a call is missing here rather than wrong: an older driver, a device without the
/// feature, or a runtime without the entry point.
const UNSUPPORTED_CODES: [&str; 3] =
    ["cudaErrorNotSupported", "cudaErrorCallRequiresNewerDriver", "cudaErrorInsufficientDriver"];

/// The first operation that returned one of [`UNSUPPORTED_CODES`] although the case does not accept it; failing
/// that, a declaration that did, or a graph the executor could not read back because of one (an older driver
/// refusing a newer call form is `cudaErrorCallRequiresNewerDriver` wherever it comes from: never a fail).
fn unsupported_operation(case: &Case, obs: &Observations) -> Option<String> {
    let refused =
        |code: &str, acceptable: &[String]| UNSUPPORTED_CODES.contains(&code) && !acceptable.iter().any(|c| c == code);
    let op = obs.ops.iter().filter(|r| r.index < case.script.len()).find_map(|rec| {
        let code = rec.code.as_deref()?;
        refused(code, &rec.acceptable).then(|| {
            format!(
                "line {}: `{}` returned {code}: this runtime, driver or device lacks the operation, so the case \
                 cannot run here",
                rec.line, rec.text
            )
        })
    });
    let decl = || {
        obs.decls.iter().find_map(|d| {
            let code = d.code.as_deref()?;
            refused(code, &d.acceptable).then(|| {
                format!(
                    "line {}: creating {} {} returned {code}: this runtime, driver or device lacks it, so the case \
                     cannot run here",
                    d.line, d.kind, d.name
                )
            })
        })
    };
    let graph = || {
        obs.graphs.iter().find_map(|g| {
            let error = g.error.as_deref()?;
            UNSUPPORTED_CODES
                .iter()
                .any(|code| error.contains(code))
                .then(|| format!("graph {}: {error}: this runtime or driver cannot report its topology here", g.name))
        })
    };
    op.or_else(decl).or_else(graph)
}

/// What a successful `capture-status`/`capture-deps`/`pointer-type`/`stream-priority`/`get-device is` saw, when it
/// is not what the operation asserts. `devices` are the ordinals of the case's devices.
fn asserted_value_mismatch(kind: &OpKind, value: Option<&OpValue>, devices: &[i32]) -> Option<String> {
    match (kind, value) {
        (OpKind::GetDevice { expect: None }, _) => None,
        (OpKind::GetDevice { expect: Some(want) }, Some(OpValue::Device(seen))) => {
            let index = devices.iter().position(|o| o == seen);
            match index {
                Some(i) if i as u32 == *want => None,
                Some(i) => Some(format!("the current device was device {i} (ordinal {seen})")),
                None => Some(format!("the current device was ordinal {seen}, none of the case's devices {devices:?}")),
            }
        }
        (OpKind::CaptureStatus { status, .. }, Some(OpValue::CaptureStatus(seen))) => {
            (seen != status.word()).then(|| format!("the status was {seen}"))
        }
        (
            OpKind::CaptureDeps { count, nodes, .. },
            Some(OpValue::CaptureDeps { status, count: seen, nodes: seen_nodes, .. }),
        ) => {
            let mut want: Vec<&String> = nodes.iter().collect();
            let mut got: Vec<&String> = seen_nodes.iter().collect();
            want.sort();
            got.sort();
            if *seen != u64::from(*count) {
                Some(format!("{seen} dependencies (capture status {status})"))
            } else if !nodes.is_empty() && want != got {
                Some(format!("the dependencies were [{}]", seen_nodes.join(" ")))
            } else {
                None
            }
        }
        (OpKind::PointerType { memory, .. }, Some(OpValue::PointerType(seen))) => {
            (seen != memory.word()).then(|| format!("the memory type was {seen}"))
        }
        (OpKind::StreamPriority { priority, .. }, Some(OpValue::StreamPriority { value, greatest, least })) => {
            let want = match priority {
                Priority::Value(v) => *v,
                Priority::Greatest => *greatest,
                Priority::Least => *least,
            };
            (*value != want).then(|| format!("the priority was {value} (greatest {greatest}, least {least})"))
        }
        // `stream-device ... is N`, `stream-attr`/`node-attr ... is VALUE`.
        (OpKind::StreamDevice { device: want, .. }, Some(OpValue::Device(seen))) => {
            match devices.iter().position(|o| o == seen) {
                Some(i) if i as u32 == *want => None,
                Some(i) => Some(format!("the stream's device was device {i} (ordinal {seen})")),
                None => Some(format!("the stream's device was ordinal {seen}, none of the case's devices {devices:?}")),
            }
        }
        (
            OpKind::StreamAttr { value: AttrValue::Priority(priority), .. }
            | OpKind::NodeAttr { value: AttrValue::Priority(priority), .. },
            Some(OpValue::StreamPriority { value, greatest, least }),
        ) => {
            let want = match priority {
                Priority::Value(v) => *v,
                Priority::Greatest => *greatest,
                Priority::Least => *least,
            };
            (*value != want).then(|| format!("the priority was {value} (greatest {greatest}, least {least})"))
        }
        (
            OpKind::StreamAttr { value: AttrValue::MemSyncDomain(domain), .. }
            | OpKind::NodeAttr { value: AttrValue::MemSyncDomain(domain), .. },
            Some(OpValue::Number(seen)),
        ) => {
            let want = match domain {
                // cudaLaunchMemSyncDomainDefault and cudaLaunchMemSyncDomainRemote.
                SyncDomain::Default => 0,
                SyncDomain::Remote => 1,
            };
            (*seen != want).then(|| format!("the memory synchronization domain was {seen}"))
        }
        (
            OpKind::CaptureStatus { .. }
            | OpKind::CaptureDeps { .. }
            | OpKind::PointerType { .. }
            | OpKind::StreamPriority { .. }
            | OpKind::GetDevice { .. }
            | OpKind::StreamDevice { .. }
            | OpKind::StreamAttr { .. }
            | OpKind::NodeAttr { .. },
            _,
        ) => Some("no value was recorded".to_owned()),
        _ => None,
    }
}

fn expects_timeout(case: &Case, gate: &str) -> bool {
    let names = |p: &Predicate| matches!(p, Predicate::TimedOut { gate: g } if g == gate);
    case.expects.iter().any(|e| match e {
        Expectation::Expect(p) | Expectation::Quality(p) => names(p),
        Expectation::Variant(alternatives) | Expectation::Observe(alternatives) => {
            alternatives.iter().any(|(_, p)| names(p))
        }
        Expectation::Measure(_) => false,
    })
}

/// `Ok` when `p` holds in `obs`; otherwise what was seen instead.
fn holds(p: &Predicate, obs: &Observations) -> Result<(), String> {
    match p {
        Predicate::Before { first, second } => {
            let (_, a_end) = stamps(obs, first)?;
            let (b_start, _) = stamps(obs, second)?;
            check(b_start >= a_end, || format!("{second} started at {b_start} ns, {first} ended at {a_end} ns"))
        }
        Predicate::Overlaps { a, b } => {
            let (a0, a1) = stamps(obs, a)?;
            let (b0, b1) = stamps(obs, b)?;
            check(a0.max(b0) < a1.min(b1), || format!("{a} ran {a0}..{a1} ns, {b} ran {b0}..{b1} ns"))
        }
        Predicate::WaitedFor { op, gate } => {
            let end = ran(obs, op)?.end_ns;
            match gate_opened(obs, gate)? {
                Some((opened, by)) => check(end >= opened, || {
                    format!("{op} returned at {end} ns, before {gate} was opened at {opened} ns{by}")
                }),
                None => Err(format!("{op} returned at {end} ns; {gate} was never opened")),
            }
        }
        Predicate::NotWaitedFor { op, gate } => {
            let end = ran(obs, op)?.end_ns;
            match gate_opened(obs, gate)? {
                Some((opened, by)) => check(end < opened, || {
                    format!("{op} returned at {end} ns, after {gate} was opened at {opened} ns{by}")
                }),
                None => Ok(()),
            }
        }
        Predicate::Returned { op, code } => {
            let rec = ran(obs, op)?;
            let seen = rec.code.as_deref().unwrap_or_default();
            check(seen == code, || format!("{op} returned {seen}"))
        }
        Predicate::SameCode { a, b } => {
            let code = |label: &str| ran(obs, label).map(|rec| rec.code.as_deref().unwrap_or_default());
            let (x, y) = (code(a)?, code(b)?);
            check(x == y, || format!("{a} returned {x} and {b} returned {y}"))
        }
        Predicate::BufferEquals { buf, index, value } => {
            let rec = obs.buffer(buf).ok_or_else(|| format!("there is no record of buffer {buf}"))?;
            let contents = rec.contents.as_ref().ok_or_else(|| {
                format!("{buf} could not be read: {}", rec.read_error.as_deref().unwrap_or("not created"))
            })?;
            match index {
                None => check(contents.uniform == Some(*value), || format!("{buf} holds {}", contents.summary)),
                Some(i) => match contents.word(*i) {
                    Some(seen) => check(seen == *value, || format!("{buf}[{i}] is {seen}")),
                    None => Err(format!("{buf} has no word {i} (it has {} words)", contents.words)),
                },
            }
        }
        Predicate::TimedOut { gate } => {
            let rec = obs.gate(gate).ok_or_else(|| format!("there is no record of gate {gate}"))?;
            check(rec.timed_out, || format!("{gate} did not time out"))
        }
        Predicate::HostOrder { labels } => host_order(obs, labels),
        Predicate::SnapshotEquals { label, value } => {
            // A `read` or `vk-read` operation (its record's text is the printed operation) rather than a host function.
            let reads = [OpWord::Read.word(), OpWord::VkRead.word()];
            if obs.op(label).is_some_and(|r| r.text.split_whitespace().next().is_some_and(|w| reads.contains(&w))) {
                let rec = ran(obs, label)?;
                let Some(OpValue::Snapshot(snap)) = &rec.value else {
                    return Err(format!("{label} read nothing ({})", rec.code.as_deref().unwrap_or_default()));
                };
                return check(snap.uniform == Some(*value), || format!("{label} read {}", snap.summary));
            }
            let calls: Vec<_> = obs.host_calls_of(label).collect();
            if calls.is_empty() {
                return Err(format!("{label} never ran"));
            }
            for call in calls {
                let snap = call.snapshot.as_ref().ok_or_else(|| format!("{label} took no snapshot"))?;
                check(snap.uniform == Some(*value), || format!("{label} saw {}", snap.summary))?;
            }
            Ok(())
        }
        Predicate::CallbackStatus { label, code } => {
            let calls: Vec<_> = obs.host_calls_of(label).filter(|c| c.kind == HostCallKind::Callback).collect();
            if calls.is_empty() {
                return Err(format!("callback {label} never ran"));
            }
            for call in calls {
                let seen = call.status.as_deref().unwrap_or("no status");
                check(seen == code, || format!("{label} received {seen}"))?;
            }
            Ok(())
        }
        Predicate::ElapsedAbove { label, ms, inclusive } => {
            let rec = ran(obs, label)?;
            let Some(OpValue::ElapsedMs(seen)) = rec.value else {
                return Err(format!("{label} returned no time ({})", rec.code.as_deref().unwrap_or_default()));
            };
            check(if *inclusive { seen >= *ms } else { seen > *ms }, || format!("{label} measured {seen} ms"))
        }
        Predicate::ElapsedBelow { label, ms, inclusive } => {
            let rec = ran(obs, label)?;
            let Some(OpValue::ElapsedMs(seen)) = rec.value else {
                return Err(format!("{label} returned no time ({})", rec.code.as_deref().unwrap_or_default()));
            };
            check(if *inclusive { seen <= *ms } else { seen < *ms }, || format!("{label} measured {seen} ms"))
        }
        Predicate::HostRuns { label, count } => {
            let runs = obs.host_calls_of(label).count();
            check(runs == *count as usize, || format!("{label} ran {runs} times"))
        }
        Predicate::Value { label, cmp, value } => {
            // `L.param value`: the output `param` of call L.
            let (op, param) = match label.split_once('.') {
                Some((op, param)) => (op, Some(param)),
                None => (label.as_str(), None),
            };
            let rec = ran(obs, op)?;
            let seen = match (&rec.value, param) {
                (Some(OpValue::Number(n)), None) => *n,
                (Some(OpValue::Listed { count, .. }), None) => *count,
                (Some(OpValue::Outputs(outputs)), None) if !outputs.is_empty() => outputs[0].value,
                (Some(OpValue::Outputs(outputs)), Some(p)) => match outputs.iter().find(|o| o.param == p) {
                    Some(o) => o.value,
                    None => return Err(format!("{op} wrote no output {p}")),
                },
                _ => return Err(format!("{label} returned no value ({})", rec.code.as_deref().unwrap_or_default())),
            };
            check(cmp.holds(seen, *value), || format!("{label}'s value was {seen}"))
        }
        Predicate::NullPadded { label } => {
            let rec = ran(obs, label)?;
            let Some(OpValue::Listed { null_padded, .. }) = &rec.value else {
                return Err(format!("{label} listed nothing ({})", rec.code.as_deref().unwrap_or_default()));
            };
            check(*null_padded, || format!("{label} left entries past the count that were not NULL"))
        }
        Predicate::Result { label, result } => {
            let rec = ran(obs, label)?;
            let Some(OpValue::Result { result: seen, .. }) = &rec.value else {
                return Err(format!("{label} recorded no result ({})", rec.code.as_deref().unwrap_or_default()));
            };
            check(seen == result, || format!("the result was {seen}"))
        }
        Predicate::ErrorNode { label, from, node } => {
            let rec = ran(obs, label)?;
            let Some(OpValue::Result { error_node, error_from, .. }) = &rec.value else {
                return Err(format!("{label} recorded no result ({})", rec.code.as_deref().unwrap_or_default()));
            };
            let seen = if *from { error_from } else { error_node };
            check(seen == node, || format!("it named {}", seen.as_deref().unwrap_or("none")))
        }
        Predicate::SameAddress { a, b, same } => {
            let address = |label: &str| match &ran(obs, label)?.value {
                Some(OpValue::Address(x)) => Ok(*x),
                // A call's first output (a pointer, a handle).
                Some(OpValue::Outputs(outputs)) if !outputs.is_empty() => Ok(outputs[0].value),
                _ => Err(format!("{label} returned no address")),
            };
            let (x, y) = (address(a)?, address(b)?);
            check((x == y) == *same, || format!("{a} returned {x:#x} and {b} returned {y:#x}"))
        }
        Predicate::SameValue { a, b, same } => {
            let number = |label: &str| match &ran(obs, label)?.value {
                Some(OpValue::Number(x)) => Ok(*x),
                // A call's value is its first output.
                Some(OpValue::Outputs(outputs)) if !outputs.is_empty() => Ok(outputs[0].value),
                _ => Err(format!("{label} returned no value")),
            };
            let (x, y) = (number(a)?, number(b)?);
            check((x == y) == *same, || format!("{a} returned {x} and {b} returned {y}"))
        }
        Predicate::NodeKind { graph, node, kind } => {
            let g = topology(obs, graph)?;
            let op = obs.op(node).ok_or_else(|| format!("there is no operation {node}"))?;
            let n = g
                .nodes
                .iter()
                .find(|n| n.op_index == Some(op.index))
                .ok_or_else(|| format!("{node} produced no node of {graph} that the executor could identify"))?;
            check(n.kind == kind.word(), || format!("{node} is a {} node", n.kind))
        }
        Predicate::NodeCount { graph, count } => {
            let g = topology(obs, graph)?;
            check(g.nodes.len() == *count as usize, || format!("{graph} has {} nodes", g.nodes.len()))
        }
        Predicate::EdgeCount { graph, count } => {
            let g = topology(obs, graph)?;
            check(g.edges.len() == *count as usize, || format!("{graph} has {} edges", g.edges.len()))
        }
        Predicate::Edge { graph, from, to } => {
            let (g, a, b) = node_pair(obs, graph, from, to)?;
            check(g.edges.contains(&[a, b]), || format!("{graph} has no edge {from} -> {to}"))
        }
        Predicate::NoEdge { graph, from, to } => {
            let (g, a, b) = node_pair(obs, graph, from, to)?;
            check(!g.edges.contains(&[a, b]), || format!("{graph} has an edge {from} -> {to}"))
        }
        Predicate::Path { graph, from, to } => {
            let (g, a, b) = node_pair(obs, graph, from, to)?;
            check(reachable(g, a, b), || format!("{to} is not reachable from {from} in {graph}"))
        }
        Predicate::NoPath { graph, from, to } => {
            let (g, a, b) = node_pair(obs, graph, from, to)?;
            check(!reachable(g, a, b), || format!("{to} is reachable from {from} in {graph}"))
        }
    }
}

fn check(ok: bool, seen: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(seen())
    }
}

/// The operation labelled `label`, if it ran.
fn ran<'a>(obs: &'a Observations, label: &str) -> Result<&'a OpRecord, String> {
    let rec = obs.op(label).ok_or_else(|| format!("there is no operation {label}"))?;
    match (&rec.code, &rec.not_run) {
        (Some(_), _) => Ok(rec),
        (None, why) => Err(format!("{label} was not run: {}", why.as_deref().unwrap_or("no reason recorded"))),
    }
}

/// `[entry, exit]` of the kernel launch labelled `label`.
fn stamps(obs: &Observations, label: &str) -> Result<(u64, u64), String> {
    match obs.kernel(label) {
        Some(KernelRecord { entry_ns: Some(entry), exit_ns: Some(exit), .. }) => Ok((*entry, *exit)),
        Some(_) => Err(format!("{label} has no stamps: the kernel never ran")),
        None => Err(format!("{label} is not a kernel launch")),
    }
}

/// When the gate was opened and by whom (as a suffix for messages); `None` if it never was.
fn gate_opened(obs: &Observations, gate: &str) -> Result<Option<(u64, String)>, String> {
    let rec = obs.gate(gate).ok_or_else(|| format!("there is no record of gate {gate}"))?;
    Ok(rec.opened_ns.map(|t| {
        let by = rec.opened_by.map(|o| format!(" (by {o:?})").to_lowercase()).unwrap_or_default();
        (t, by)
    }))
}

fn host_order(obs: &Observations, labels: &[String]) -> Result<(), String> {
    let mut firsts = Vec::new();
    for label in labels {
        let at = obs.host_calls.iter().position(|c| c.label.as_deref() == Some(label.as_str()));
        firsts.push((at.ok_or_else(|| format!("{label} never ran"))?, label.as_str()));
    }
    if firsts.windows(2).all(|w| w[0].0 < w[1].0) {
        return Ok(());
    }
    firsts.sort();
    let seen: Vec<&str> = firsts.iter().map(|(_, l)| *l).collect();
    Err(format!("they ran in the order {}", seen.join(" ")))
}

/// The graph captured into slot `graph`, if it has a readable topology.
fn topology<'a>(obs: &'a Observations, graph: &str) -> Result<&'a GraphRecord, String> {
    let g = obs.graph(graph).ok_or_else(|| format!("nothing was captured into {graph}"))?;
    if g.null {
        return Err(format!("end-capture returned a NULL graph for {graph}"));
    }
    match &g.error {
        Some(e) => Err(format!("the topology of {graph} could not be read: {e}")),
        None => Ok(g),
    }
}

fn node_pair<'a>(
    obs: &'a Observations,
    graph: &str,
    from: &str,
    to: &str,
) -> Result<(&'a GraphRecord, usize, usize), String> {
    let g = topology(obs, graph)?;
    let node = |label: &str| {
        let op = obs.op(label).ok_or_else(|| format!("there is no operation {label}"))?;
        g.nodes
            .iter()
            .find(|n| n.op_index == Some(op.index))
            .map(|n| n.index)
            .ok_or_else(|| format!("{label} produced no node of {graph} that the executor could identify"))
    };
    Ok((g, node(from)?, node(to)?))
}

/// Whether `to` can be reached from `from` along one or more edges.
fn reachable(g: &GraphRecord, from: usize, to: usize) -> bool {
    let mut seen = vec![false; g.nodes.len()];
    let mut queue = VecDeque::from([from]);
    while let Some(n) = queue.pop_front() {
        for &[a, b] in &g.edges {
            if a == n && b < seen.len() && !seen[b] {
                if b == to {
                    return true;
                }
                seen[b] = true;
                queue.push_back(b);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests;
