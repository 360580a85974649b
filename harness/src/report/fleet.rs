//! The fleet merge (`cuda-conformance fleet REPORT|DIR...`): the reports of a fleet run (a Slurm job array, a
//! Kubernetes Indexed Job or DaemonSet, any launcher) against the set of tasks that should have reported.
//!
//! Each expected task — a task index (`--tasks 8`, `--tasks 0-7,12`) or a node (`--nodes n[1-4]`) — is marked
//! - **ran**: a complete report; it is *as expected*, *deviating* (a case's outcome differs from the majority of the
//!   reports from the same GPU model, or from a baseline), or *failing* (no deviation, but a case failed);
//! - **could-not-run**: the report says why the suite could not start (no driver, no device, invalid cases);
//! - **incomplete**: a report that was never finished (the task was killed, or is still running);
//! - **missing**: no report at all;
//!
//! and reports beyond the expected set are *unexpected*, two reports for one task (or for one GPU) *duplicates*.
//! Tasks that deviate come first. The exit status is for automation: 0 all as expected, 1 deviations (or failures,
//! duplicates, unexpected reports), 2 missing, could-not-run or incomplete tasks.
//!
//! Reports are told apart by the scheduler's identity they carry ([`crate::record::Task`]) and by node name and GPU UUID,
//! never by hostname alone: simulated nodes (and containers) share hostnames.

use super::baseline::{Baseline, Key};
use super::matrix::{Matrix, MatrixBuilder};
use crate::record::verdict::VerdictKind;
use crate::record::{CaseResult, Report, Task};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Which tasks should have reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "list", rename_all = "kebab-case")]
pub enum Expected {
    /// Task indices: Slurm array task ids, Kubernetes completion indices, or ranks of one step.
    Tasks(Vec<u32>),
    /// Node names: every node reports at least once (once per GPU in a per-GPU run).
    Nodes(Vec<String>),
    /// No expectation: the tasks that reported are the set (nothing can be missing).
    Seen,
}

/// `N` (tasks 0 to N-1, as `--array=0-(N-1)` or an Indexed Job of N completions), or a list of ids and ranges in
/// Slurm's `--array` syntax: `0-7`, `1,3,5-9` (a single id needs a comma or a range: `5-5`).
pub fn parse_tasks(text: &str) -> Result<Vec<u32>, String> {
    let bad = |why: String| format!("--tasks {text:?}: {why} (expected a count N, or ids and ranges like 0-7,9)");
    let text = text.trim();
    if !text.contains(['-', ',']) {
        let n: u32 = text.parse().map_err(|_| bad(format!("`{text}` is not a number")))?;
        if n == 0 {
            return Err(bad("a count of 0 expects nothing".into()));
        }
        return Ok((0..n).collect());
    }
    let mut ids = BTreeSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let number = |w: &str| w.trim().parse::<u32>().map_err(|_| bad(format!("`{w}` is not a task id")));
        let (lo, hi) = (number(lo)?, number(hi)?);
        if lo > hi {
            return Err(bad(format!("`{part}` is a range that goes down")));
        }
        if hi - lo > 1_000_000 {
            return Err(bad(format!("`{part}` names more than a million tasks")));
        }
        for id in lo..=hi {
            if !ids.insert(id) {
                return Err(bad(format!("task {id} is named twice")));
            }
        }
    }
    if ids.is_empty() {
        return Err(bad("no task named".into()));
    }
    Ok(ids.into_iter().collect())
}

/// Node names in Slurm's hostlist syntax, comma- or whitespace-separated: `n[1-4],gpu[01-16,20],login1`. Zero
/// padding of a range's lower bound is kept (`gpu[01-16]` is gpu01 … gpu16).
pub fn parse_nodes(text: &str) -> Result<Vec<String>, String> {
    let bad = |why: String| format!("--nodes: {why} (expected names like n[1-4],gpu07)");
    let mut names = Vec::new();
    // Split on commas and whitespace outside brackets.
    let (mut depth, mut current, mut parts) = (0, String::new(), Vec::new());
    for ch in text.chars() {
        match ch {
            '[' => depth += 1,
            ']' if depth == 0 => return Err(bad(format!("a `]` without `[` in `{text}`"))),
            ']' => depth -= 1,
            _ => {}
        }
        if depth == 0 && (ch == ',' || ch.is_whitespace()) {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(ch);
        }
    }
    if depth != 0 {
        return Err(bad(format!("an unclosed `[` in `{text}`")));
    }
    parts.push(current);
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let Some((prefix, rest)) = part.split_once('[') else {
            names.push(part);
            continue;
        };
        let (inner, suffix) = rest.split_once(']').ok_or_else(|| bad(format!("an unclosed `[` in `{part}`")))?;
        if suffix.contains('[') {
            return Err(bad(format!("`{part}`: one bracket group per name is supported")));
        }
        for range in inner.split(',') {
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            let number = |w: &str| w.parse::<u64>().map_err(|_| bad(format!("`{w}` in `{part}` is not a number")));
            let (l, h) = (number(lo)?, number(hi)?);
            if l > h || h - l > 100_000 {
                return Err(bad(format!("`{range}` in `{part}` is not a range of at most 100000 nodes")));
            }
            for n in l..=h {
                names.push(format!("{prefix}{n:0width$}{suffix}", width = lo.len()));
            }
        }
    }
    let mut seen = BTreeSet::new();
    if let Some(twice) = names.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(bad(format!("node {twice} is named twice")));
    }
    if names.is_empty() {
        return Err(bad("no node named".into()));
    }
    Ok(names)
}

/// What each report is compared with.
#[derive(Debug, Clone)]
pub enum Reference {
    /// The outcome more than half of the reports from the same GPU model show for the case.
    Majority,
    /// The baseline's section for the report's GPU, driver and runtime (a case not listed is expected to pass).
    Baseline { name: String, baseline: Baseline },
}

/// What a report says about its task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    Ran,
    CouldNotRun,
    Incomplete,
}

/// The status of an expected task; the order is the order of the fleet table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Ran, and some case's outcome differs from the reference.
    Deviating,
    /// Ran with no deviation, but some case failed (everywhere alike, or the reference expects it not to).
    Failing,
    CouldNotRun,
    Incomplete,
    Missing,
    AsExpected,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Deviating => "deviating",
            Status::Failing => "failing",
            Status::CouldNotRun => "could-not-run",
            Status::Incomplete => "incomplete",
            Status::Missing => "missing",
            Status::AsExpected => "as-expected",
        }
    }

    /// The exit status this status calls for.
    fn exit_status(self) -> u8 {
        match self {
            Status::AsExpected => 0,
            Status::Deviating | Status::Failing => 1,
            Status::CouldNotRun | Status::Incomplete | Status::Missing => 2,
        }
    }
}

/// A case whose outcome on one host differs from the reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deviation {
    pub case: String,
    /// What this host did (`pass`, `variant concurrent`, ...).
    pub outcome: String,
    /// The majority's or the baseline's outcome; `no majority (a 1, b 1)` when the hosts split evenly.
    pub reference: String,
}

/// One report, as the fleet table shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub file: String,
    /// The node and the task index, e.g. `n3[5]` (see `Provenance::site`).
    pub site: String,
    pub node: String,
    pub hostname: String,
    pub task: Task,
    pub gpu: String,
    pub gpu_uuid: String,
    pub driver: String,
    pub runtime: String,
    pub state: State,
    /// Why it could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub tier: Option<String>,
    pub cases: usize,
    /// verdict → count.
    pub totals: BTreeMap<String, usize>,
    /// Cases that failed, crashed, timed out or passed unexpectedly (with a baseline: those it does not list).
    pub failures: usize,
    pub deviations: Vec<Deviation>,
    /// Something about the report as a whole: no baseline section for its configuration, a GPU another report
    /// also tested.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Entry {
    fn status(&self) -> Status {
        match self.state {
            State::CouldNotRun => Status::CouldNotRun,
            State::Incomplete => Status::Incomplete,
            State::Ran if !self.deviations.is_empty() || self.notes.iter().any(|n| n.starts_with(NO_SECTION)) => {
                Status::Deviating
            }
            State::Ran if self.failures > 0 => Status::Failing,
            State::Ran => Status::AsExpected,
        }
    }

    /// The scheduler's job and task, e.g. `1040_3` (array job 1040, task 3) or `1043`.
    pub fn job(&self) -> String {
        let t = &self.task;
        match (t.array_job_id.as_deref(), t.array_task_id, t.job_id.as_deref(), t.index()) {
            (Some(a), Some(i), _, _) => format!("{a}_{i}"),
            (_, _, Some(j), Some(i)) => format!("{j}/{i}"),
            (_, _, Some(j), None) => j.to_owned(),
            _ => "—".into(),
        }
    }
}

const NO_SECTION: &str = "no baseline section";

/// One expected task (or, with no expectation, one that reported) and its reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Slot {
    /// `task 3` or `node n7`.
    pub slot: String,
    pub status: Status,
    /// More than one report for this task, or for the same GPU of this node.
    pub duplicate: bool,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Summary {
    pub expected: usize,
    pub as_expected: usize,
    pub deviating: usize,
    pub failing: usize,
    pub could_not_run: usize,
    pub incomplete: usize,
    pub missing: usize,
    /// Tasks with more than one report, or whose GPU another task also reported.
    pub duplicates: usize,
    /// Reports outside the expected set.
    pub unexpected: usize,
    /// Files that are not readable reports.
    pub unreadable: usize,
    /// Reports left out for belonging to another job (`--job`).
    pub other_jobs: usize,
}

/// The merged result of a fleet run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fleet {
    pub expected: Expected,
    /// What reports were compared with.
    pub reference: String,
    pub summary: Summary,
    /// 0 all as expected, 1 deviations (or failures, duplicates, unexpected reports), 2 missing, could-not-run or
    /// incomplete tasks.
    pub exit_status: u8,
    /// Deviating tasks first, then failing, could-not-run, incomplete, missing, as expected.
    pub slots: Vec<Slot>,
    pub unexpected: Vec<Entry>,
    /// `(file, why)`.
    pub unreadable: Vec<(String, String)>,
    /// The semantics matrix of the reports that ran (columns: GPU, driver, runtime; hosts as `node[task]`).
    pub matrix: Matrix,
}

/// What [`Fleet::merge`] reads: each file with its report, or why it is not one.
pub type Input = (String, Result<Report, String>);

impl Fleet {
    /// Merges `inputs`, keeping only reports of the run `job` (array job or job id) when given.
    pub fn merge(inputs: Vec<Input>, expected: Expected, reference: &Reference, job: Option<&str>) -> Fleet {
        let mut merge = FleetMerge::new(reference, job);
        for (file, read) in inputs {
            merge.add(file, read);
        }
        merge.finish(expected)
    }
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// One line for a terminal or a job log.
    pub fn headline(&self) -> String {
        let s = &self.summary;
        let what = match &self.expected {
            Expected::Tasks(_) => "expected tasks",
            Expected::Nodes(_) => "expected nodes",
            Expected::Seen => "tasks that reported",
        };
        let mut parts = vec![format!("{} as expected", s.as_expected)];
        for (n, word) in [
            (s.deviating, "deviating"),
            (s.failing, "failing"),
            (s.could_not_run, "could not run"),
            (s.incomplete, "incomplete"),
            (s.missing, "missing"),
            (s.duplicates, "with duplicate reports"),
            (s.unexpected, "unexpected reports"),
            (s.unreadable, "unreadable files"),
            (s.other_jobs, "reports of other jobs left out"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {word}"));
            }
        }
        format!("fleet: {} {what}: {}; exit status {}", s.expected, parts.join(", "), self.exit_status)
    }

    pub fn markdown(&self) -> String {
        let mut out = String::from("# Fleet result\n\n");
        let _ = writeln!(out, "{}.\n\nReference: {}.\n", self.headline(), self.reference);
        let _ = writeln!(out, "| task | status | node | job | CUDA_VISIBLE_DEVICES | GPU | driver | result |");
        out.push_str("|---|---|---|---|---|---|---|---|\n");
        let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
        for s in &self.slots {
            if s.entries.is_empty() {
                let _ = writeln!(out, "| {} | **missing** | — | — | — | — | — | no report |", s.slot);
            }
            for e in &s.entries {
                let status =
                    if s.duplicate { format!("{} (duplicate)", e.status().word()) } else { e.status().word().into() };
                let status = if e.status() == Status::AsExpected { status } else { format!("**{status}**") };
                let _ = writeln!(
                    out,
                    "| {} | {status} | {} | {} | {} | {} | {} | {} |",
                    s.slot,
                    cell(&e.node),
                    e.job(),
                    cell(&visible(&e.task)),
                    cell(&gpu_text(e)),
                    cell(&e.driver),
                    cell(&result_text(e)),
                );
            }
        }
        if !self.unexpected.is_empty() {
            let _ = writeln!(out, "\n## Reports outside the expected set\n");
            for e in &self.unexpected {
                let _ = writeln!(out, "- `{}`: {} {} — {}", e.file, e.site, e.job(), result_text(e));
            }
        }
        if !self.unreadable.is_empty() {
            let _ = writeln!(out, "\n## Files that are not reports\n");
            for (file, why) in &self.unreadable {
                let _ = writeln!(out, "- `{file}`: {}", cell(why));
            }
        }
        let deviating: Vec<&Entry> =
            self.slots.iter().flat_map(|s| &s.entries).filter(|e| !e.deviations.is_empty()).collect();
        if !deviating.is_empty() {
            let _ = writeln!(out, "\n## Deviations\n\n| host | case | outcome | reference |\n|---|---|---|---|");
            for e in deviating {
                for d in &e.deviations {
                    let _ = writeln!(
                        out,
                        "| {} | `{}` | {} | {} |",
                        cell(&e.site),
                        d.case,
                        cell(&d.outcome),
                        cell(&d.reference)
                    );
                }
            }
        }
        let m = &self.matrix;
        let disagree: Vec<_> = m.rows.iter().filter(|r| r.disagree).collect();
        if !m.columns.is_empty() {
            let _ = writeln!(
                out,
                "\n## GPU configurations\n\n{} configuration(s) ran {} cases; they disagree on {} (the whole matrix is \
                 in the JSON, and `--html` renders it).\n",
                m.columns.len(),
                m.rows.len(),
                disagree.len()
            );
            for (i, c) in m.columns.iter().enumerate() {
                let _ = writeln!(out, "- **C{}**: {} — {}", i + 1, Matrix::column_title(c), c.hosts.join(", "));
            }
            if !disagree.is_empty() {
                out.push_str("\n| case |");
                for i in 0..m.columns.len() {
                    let _ = write!(out, " C{} |", i + 1);
                }
                let _ = writeln!(out, "\n|---|{}", "---|".repeat(m.columns.len()));
                for r in disagree {
                    let _ = write!(out, "| `{}` |", r.id);
                    for c in &r.cells {
                        let _ = write!(out, " {} |", cell(c.as_deref().unwrap_or("—")));
                    }
                    out.push('\n');
                }
            }
        }
        out
    }
}

fn gpu_text(e: &Entry) -> String {
    if e.gpu_uuid.starts_with("GPU-") {
        format!("{} `{}`", e.gpu, e.gpu_uuid)
    } else {
        "—".into()
    }
}

fn visible(t: &Task) -> String {
    match t.cuda_visible_devices.as_deref() {
        None => "(unset)".into(),
        Some("") => "(empty)".into(),
        Some(v) => v.to_owned(),
    }
}

fn result_text(e: &Entry) -> String {
    let mut text = match e.state {
        State::CouldNotRun => e.reason.clone().unwrap_or_default(),
        State::Incomplete => format!("report not finished after {} case(s) (killed, or still running)", e.cases),
        State::Ran => {
            let totals: Vec<String> = e.totals.iter().map(|(k, n)| format!("{n} {k}")).collect();
            let tier = e.tier.as_deref().map(|t| format!(" ({t} tier)")).unwrap_or_default();
            let dev =
                if e.deviations.is_empty() { String::new() } else { format!("; {} deviating", e.deviations.len()) };
            format!("{} cases{tier}: {}{dev}", e.cases, totals.join(", "))
        }
    };
    for n in &e.notes {
        let _ = write!(text, "; {n}");
    }
    text
}

/// GPU model (and semantic settings) → case → outcome → indices of the entries that saw it.
type Votes = BTreeMap<String, BTreeMap<String, BTreeMap<String, Vec<u32>>>>;

/// A fleet merge fed one report at a time ([`FleetMerge::add`]), so that `fleet` holds one report at a time however
/// many hosts there are: of each report it keeps its table entry, one outcome per case for the majority vote and
/// its share of the matrix.
pub struct FleetMerge<'a> {
    reference: &'a Reference,
    job: Option<String>,
    summary: Summary,
    unreadable: Vec<(String, String)>,
    entries: Vec<Entry>,
    /// Majority reference only: GPU model (and semantic settings) → case → outcome → indices into `entries`.
    votes: Votes,
    matrix: MatrixBuilder,
}

impl<'a> FleetMerge<'a> {
    pub fn new(reference: &'a Reference, job: Option<&str>) -> FleetMerge<'a> {
        FleetMerge {
            reference,
            job: job.map(str::to_owned),
            summary: Summary::default(),
            unreadable: Vec::new(),
            entries: Vec::new(),
            votes: BTreeMap::new(),
            matrix: MatrixBuilder::default(),
        }
    }

    /// Takes in one file's report (or why it is not one); the report is not kept.
    pub fn add(&mut self, file: String, read: Result<Report, String>) {
        let r = match read {
            Ok(r) if self.job.as_deref().is_some_and(|j| !belongs_to(&r.provenance.task, j)) => {
                self.summary.other_jobs += 1;
                return;
            }
            Ok(r) => r,
            Err(why) => {
                self.unreadable.push((file, why));
                return;
            }
        };
        let mut e = entry(&file, &r);
        if e.state == State::Ran {
            match self.reference {
                Reference::Majority => {
                    let i = self.entries.len() as u32;
                    // Runs under other semantic settings vote apart: their outcomes are not the GPU's defaults'.
                    let env = r.provenance.semantic_difference();
                    let group = if env.is_empty() {
                        r.provenance.gpu_name.clone()
                    } else {
                        format!("{} | {env}", r.provenance.gpu_name)
                    };
                    let by_case = self.votes.entry(group).or_default();
                    // A case this task could not run (a requirement it does not meet: a second GPU, a newer driver)
                    // says nothing about how the GPU behaves, so it takes no part in the vote.
                    for c in r.cases.iter().filter(|c| c.verdict.kind != VerdictKind::NotSupported) {
                        if !by_case.contains_key(&c.id) {
                            by_case.insert(c.id.clone(), BTreeMap::new());
                        }
                        let Some(outcomes) = by_case.get_mut(&c.id) else { continue };
                        outcomes.entry(c.observed_outcome()).or_default().push(i);
                    }
                }
                Reference::Baseline { baseline, .. } => compare_with_baseline(&r, baseline, &mut e),
            }
        }
        if r.complete && r.could_not_run.is_none() {
            self.matrix.add(&r);
        }
        self.entries.push(e);
    }

    /// The merge against the `expected` tasks.
    pub fn finish(self, expected: Expected) -> Fleet {
        let FleetMerge { reference, mut summary, unreadable, mut entries, votes, matrix, .. } = self;
        if matches!(reference, Reference::Majority) {
            compare_with_majority(&votes, &mut entries);
        }
        note_shared_gpus(&mut entries);
        let (mut slots, unexpected) = assign(entries, &expected);
        for s in &mut slots {
            s.status = s.entries.iter().map(Entry::status).min().unwrap_or(Status::Missing);
        }
        let deviations = |s: &Slot| s.entries.iter().map(|e| e.deviations.len()).sum::<usize>();
        slots.sort_by(|a, b| a.status.cmp(&b.status).then_with(|| deviations(b).cmp(&deviations(a))));
        summary.expected = slots.len();
        for s in &slots {
            let count = match s.status {
                Status::Deviating => &mut summary.deviating,
                Status::Failing => &mut summary.failing,
                Status::CouldNotRun => &mut summary.could_not_run,
                Status::Incomplete => &mut summary.incomplete,
                Status::Missing => &mut summary.missing,
                Status::AsExpected => &mut summary.as_expected,
            };
            *count += 1;
            summary.duplicates += usize::from(s.duplicate);
        }
        summary.unexpected = unexpected.len();
        summary.unreadable = unreadable.len();
        // Every report counts, also the second of a duplicate (one could-not-run beside one that ran is still 2).
        let slot_exit = |s: &Slot| s.entries.iter().map(|e| e.status().exit_status()).max().unwrap_or(2);
        let worst = slots.iter().map(slot_exit).max().unwrap_or(2);
        let flagged = summary.duplicates + summary.unexpected > 0;
        let exit_status = if worst == 0 && flagged { 1 } else { worst };
        Fleet {
            expected,
            reference: match reference {
                Reference::Majority => "the majority of the reports from the same GPU model".into(),
                Reference::Baseline { name, .. } => format!("the baseline {name}"),
            },
            summary,
            exit_status,
            slots,
            unexpected,
            unreadable,
            matrix: matrix.finish(),
        }
    }
}

fn belongs_to(task: &Task, job: &str) -> bool {
    task.array_job_id.as_deref() == Some(job) || task.job_id.as_deref() == Some(job)
}

fn entry(file: &str, r: &Report) -> Entry {
    let p = &r.provenance;
    let key = Key::of(p);
    let state = if r.could_not_run.is_some() {
        State::CouldNotRun
    } else if r.complete {
        State::Ran
    } else {
        State::Incomplete
    };
    Entry {
        file: file.to_owned(),
        site: p.site(),
        node: if p.node.is_empty() { p.hostname.clone() } else { p.node.clone() },
        hostname: p.hostname.clone(),
        task: p.task.clone(),
        gpu: p.gpu_name.clone(),
        gpu_uuid: p.gpu_uuid.clone(),
        driver: key.driver,
        runtime: key.runtime,
        state,
        reason: r.could_not_run.clone(),
        tier: r.tier.clone(),
        cases: r.cases.len(),
        totals: r.totals.clone(),
        failures: r.cases.iter().filter(|c| c.verdict.kind.is_failure()).count(),
        deviations: Vec::new(),
        notes: Vec::new(),
    }
}

/// Per GPU model (and semantic settings, when not the defaults) and case, the outcome more than half of the reports
/// that ran it show; the others deviate. With no such majority (two hosts that differ), every host that ran the case
/// deviates.
fn compare_with_majority(seen: &Votes, entries: &mut [Entry]) {
    for by_case in seen.values() {
        for (case, outcomes) in by_case {
            if outcomes.len() < 2 {
                continue;
            }
            let total: usize = outcomes.values().map(Vec::len).sum();
            let majority = outcomes.iter().find(|(_, hosts)| hosts.len() * 2 > total).map(|(o, _)| o.clone());
            let split = || {
                let counts: Vec<String> = outcomes.iter().map(|(o, h)| format!("{o} {}", h.len())).collect();
                format!("no majority ({})", counts.join(", "))
            };
            for (outcome, hosts) in outcomes {
                if majority.as_ref() == Some(outcome) {
                    continue;
                }
                let reference = majority.clone().unwrap_or_else(split);
                for &i in hosts {
                    entries[i as usize].deviations.push(Deviation {
                        case: (*case).to_owned(),
                        outcome: outcome.clone(),
                        reference: reference.clone(),
                    });
                }
            }
        }
    }
}

/// Each report against the baseline's section of its GPU, driver and runtime: any other outcome deviates (but a case
/// the task could not run), and a report whose configuration the baseline does not know deviates as a whole.
fn compare_with_baseline(r: &Report, baseline: &Baseline, entry: &mut Entry) {
    let key = Key::of(&r.provenance);
    let Ok(section) = baseline.section(&key) else {
        entry.notes.push(format!("{NO_SECTION} [{key}]"));
        return;
    };
    entry.failures = 0;
    for c in &r.cases {
        // Not supported by this task (e.g. a per-GPU task and a several-device case that a two-GPU run blessed):
        // the task's shape, not the GPU's behaviour. The task's counts show it.
        if c.verdict.kind == VerdictKind::NotSupported {
            continue;
        }
        let expected = section.get(&c.id).cloned().unwrap_or_else(|| "pass".into());
        let outcome = c.observed_outcome();
        if outcome != expected {
            let failed = outcome.split_whitespace().next().and_then(VerdictKind::from_word);
            entry.failures += usize::from(failed.is_some_and(VerdictKind::is_failure));
            entry.deviations.push(Deviation { case: c.id.clone(), outcome, reference: expected });
        }
    }
}

/// Two reports (of any tasks) that tested the same GPU: one GPU was tested twice and, in a per-GPU run, another
/// was not tested at all.
fn note_shared_gpus(entries: &mut [Entry]) {
    let mut by_uuid: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        if e.state != State::CouldNotRun && e.gpu_uuid.starts_with("GPU-") {
            by_uuid.entry(format!("{} {}", e.node, e.gpu_uuid)).or_default().push(i);
        }
    }
    for list in by_uuid.values().filter(|l| l.len() > 1) {
        let sites: Vec<String> = list.iter().map(|&i| entries[i].site.clone()).collect();
        for &i in list {
            entries[i].notes.push(format!("GPU {} also tested by {}", entries[i].gpu_uuid, sites.join(", ")));
        }
    }
}

/// The slots of the expected set with their entries, and the entries outside it.
fn assign(entries: Vec<Entry>, expected: &Expected) -> (Vec<Slot>, Vec<Entry>) {
    let slot = |name: String| Slot { slot: name, status: Status::Missing, duplicate: false, entries: Vec::new() };
    let mut slots: Vec<Slot>;
    let mut unexpected = Vec::new();
    match expected {
        Expected::Tasks(ids) => {
            slots = ids.iter().map(|i| slot(format!("task {i}"))).collect();
            for e in entries {
                match e.task.index().and_then(|i| ids.iter().position(|&x| x == i)) {
                    Some(k) => slots[k].entries.push(e),
                    None => unexpected.push(e),
                }
            }
        }
        Expected::Nodes(names) => {
            slots = names.iter().map(|n| slot(format!("node {n}"))).collect();
            for e in entries {
                match names.iter().position(|n| *n == e.node) {
                    Some(k) => slots[k].entries.push(e),
                    None => unexpected.push(e),
                }
            }
        }
        Expected::Seen => {
            let mut by_name: BTreeMap<(u8, u32, String), Slot> = BTreeMap::new();
            for e in entries {
                let key = match e.task.index() {
                    Some(i) => (0, i, format!("task {i}")),
                    None => (1, 0, format!("node {}", e.node)),
                };
                by_name.entry(key.clone()).or_insert_with(|| slot(key.2)).entries.push(e);
            }
            slots = by_name.into_values().collect();
        }
    }
    for s in &mut slots {
        s.duplicate = has_duplicates(&s.entries, matches!(expected, Expected::Nodes(_)))
            || s.entries.iter().any(|e| e.notes.iter().any(|n| n.contains("also tested by")));
    }
    (slots, unexpected)
}

/// In a task slot, any second report. In a node slot (one report per GPU is expected), two reports with the same
/// GPU UUID or the same task index, or two that carry neither.
fn has_duplicates(entries: &[Entry], per_node: bool) -> bool {
    if !per_node {
        return entries.len() > 1;
    }
    let mut keys = BTreeSet::new();
    entries.iter().any(|e| {
        let key = if e.gpu_uuid.starts_with("GPU-") {
            format!("gpu {}", e.gpu_uuid)
        } else {
            e.task.index().map_or_else(|| "unknown".to_owned(), |i| format!("task {i}"))
        };
        !keys.insert(key)
    })
}

impl CaseResult {
    /// What the case did, whether or not it was judged against a baseline: an expected-fail is the failure the
    /// baseline listed, an unexpected pass is a pass (what `baseline bless` writes).
    pub fn observed_outcome(&self) -> String {
        match self.verdict.kind {
            VerdictKind::ExpectedFail => self.baseline.clone().unwrap_or_else(|| "fail".into()),
            VerdictKind::UnexpectedPass => "pass".into(),
            _ => self.outcome(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{report, result};
    use super::*;
    use crate::record::verdict::VerdictKind::*;

    /// A report from task `index` of array job 100 on `node`, GPU `gpu` with UUID `uuid`.
    fn ran(gpu: &str, node: &str, index: u32, uuid: &str, cases: Vec<CaseResult>) -> Input {
        let mut r = report(gpu, 13000, cases);
        r.provenance.node = node.into();
        r.provenance.hostname = "same-host".into();
        r.provenance.gpu_uuid = uuid.into();
        r.provenance.task = Task {
            scheduler: "slurm".into(),
            job_id: Some(format!("{}", 101 + index)),
            array_job_id: Some("100".into()),
            array_task_id: Some(index),
            cuda_visible_devices: Some((index % 2).to_string()),
            ..Task::default()
        };
        (format!("task-{index}.json"), Ok(r))
    }

    fn could_not_run(node: &str, index: u32) -> Input {
        let (file, r) = ran("unknown", node, index, "unknown", vec![]);
        let mut r = r.unwrap();
        r.complete = false;
        r.could_not_run = Some("cannot run the suite: no CUDA device: cudaErrorInsufficientDriver".into());
        (file, Ok(r))
    }

    fn statuses(f: &Fleet) -> Vec<(String, Status, bool)> {
        f.slots.iter().map(|s| (s.slot.clone(), s.status, s.duplicate)).collect()
    }

    #[test]
    fn counts_and_ranges_parse_or_say_why() {
        assert_eq!(parse_tasks("3"), Ok(vec![0, 1, 2]));
        assert_eq!(parse_tasks("0-2,7"), Ok(vec![0, 1, 2, 7]));
        assert_eq!(parse_tasks("5-5"), Ok(vec![5]));
        assert_eq!(parse_tasks("5,"), Ok(vec![5]));
        for bad in ["0", "x", "3-1", "1,1", "1-x", ","] {
            assert!(parse_tasks(bad).unwrap_err().contains("--tasks"), "{bad}");
        }
        assert_eq!(parse_nodes("n[1-3],login").unwrap(), vec!["n1", "n2", "n3", "login"]);
        assert_eq!(
            parse_nodes("gpu[08-10,12]-ib  x").unwrap(),
            vec!["gpu08-ib", "gpu09-ib", "gpu10-ib", "gpu12-ib", "x"]
        );
        for bad in ["n[1-3", "n]", "n[3-1]", "n[a]", "n1,n1", "", "n[1]x[2]"] {
            assert!(parse_nodes(bad).unwrap_err().starts_with("--nodes"), "{bad:?}");
        }
    }

    #[test]
    fn every_expected_task_is_ran_could_not_run_incomplete_or_missing() {
        let mut killed = ran("H100", "n2", 2, "GPU-c", vec![result("a/x", Pass, None)]);
        if let Ok(r) = &mut killed.1 {
            r.complete = false;
        }
        let inputs = vec![
            ran("H100", "n1", 0, "GPU-a", vec![result("a/x", Pass, None)]),
            could_not_run("n1", 1),
            killed,
            ("junk.json".into(), Err("junk.json:1:1: not a cuda-conformance report".into())),
        ];
        let f = Fleet::merge(inputs, Expected::Tasks(vec![0, 1, 2, 3]), &Reference::Majority, None);
        assert_eq!(
            statuses(&f),
            vec![
                ("task 1".into(), Status::CouldNotRun, false),
                ("task 2".into(), Status::Incomplete, false),
                ("task 3".into(), Status::Missing, false),
                ("task 0".into(), Status::AsExpected, false),
            ]
        );
        let s = &f.summary;
        assert_eq!((s.expected, s.as_expected, s.could_not_run, s.incomplete, s.missing), (4, 1, 1, 1, 1));
        assert_eq!((s.unreadable, f.exit_status), (1, 2));
        assert_eq!(f.matrix.columns.len(), 1, "only complete reports enter the matrix");
        let md = f.markdown();
        assert!(md.contains("| task 3 | **missing** |"), "{md}");
        assert!(md.contains("| task 1 | **could-not-run** | n1 | 100_1 | 1 | — |"), "{md}");
        assert!(md.contains("cudaErrorInsufficientDriver"), "{md}");
        let back: Fleet = serde_json::from_str(&f.json()).unwrap();
        assert_eq!(back.slots.len(), 4);
        assert_eq!(back.expected, Expected::Tasks(vec![0, 1, 2, 3]));
    }

    #[test]
    fn hosts_that_differ_from_the_majority_of_their_gpu_model_come_first() {
        let same = |node, i, uuid| {
            ran("H100", node, i, uuid, vec![result("a/v", Variant, Some("concurrent")), result("a/p", Pass, None)])
        };
        let inputs = vec![
            same("n1", 0, "GPU-1"),
            same("n2", 1, "GPU-2"),
            ran("H100", "n3", 2, "GPU-3", vec![result("a/v", Variant, Some("serialised")), result("a/p", Pass, None)]),
            // Another GPU model is not compared with the H100s.
            ran("H200", "n4", 3, "GPU-4", vec![result("a/v", Variant, Some("serialised")), result("a/p", Pass, None)]),
        ];
        let f = Fleet::merge(inputs, Expected::Tasks(vec![0, 1, 2, 3]), &Reference::Majority, None);
        assert_eq!(f.slots[0].slot, "task 2");
        assert_eq!(f.slots[0].status, Status::Deviating);
        assert_eq!(
            f.slots[0].entries[0].deviations,
            vec![Deviation {
                case: "a/v".into(),
                outcome: "variant serialised".into(),
                reference: "variant concurrent".into()
            }]
        );
        assert!(f.slots[1..].iter().all(|s| s.status == Status::AsExpected), "{:?}", statuses(&f));
        assert_eq!(f.exit_status, 1);
        assert!(f.markdown().contains("| n3[2] | `a/v` | variant serialised | variant concurrent |"));
        assert_eq!(f.matrix.columns[0].hosts, vec!["n1[0]", "n2[1]", "n3[2]"], "hosts by node, not hostname");

        // Two hosts that differ: no majority, both deviate.
        let two = vec![
            ran("H100", "n1", 0, "GPU-1", vec![result("a/v", Variant, Some("concurrent"))]),
            ran("H100", "n2", 1, "GPU-2", vec![result("a/v", Variant, Some("serialised"))]),
        ];
        let f = Fleet::merge(two, Expected::Seen, &Reference::Majority, None);
        assert!(f.slots.iter().all(|s| s.status == Status::Deviating));
        assert!(f.slots[0].entries[0].deviations[0].reference.starts_with("no majority ("));
    }

    #[test]
    fn a_case_a_task_could_not_run_is_no_deviation() {
        // A per-GPU task sees one GPU: its several-device cases are not supported, a per-node task ran them.
        let inputs = vec![
            ran("H200", "n1", 0, "GPU-1", vec![result("m/two", NotSupported, None), result("a/p", Pass, None)]),
            ran("H200", "n1", 1, "GPU-2", vec![result("m/two", NotSupported, None), result("a/p", Pass, None)]),
            ran("H200", "n2", 2, "GPU-3", vec![result("m/two", Pass, None), result("a/p", Pass, None)]),
        ];
        let f = Fleet::merge(inputs, Expected::Tasks(vec![0, 1, 2]), &Reference::Majority, None);
        assert_eq!((f.summary.as_expected, f.exit_status), (3, 0), "{:?}", statuses(&f));
    }

    #[test]
    fn a_failure_everywhere_is_failing_not_deviating_and_all_pass_exits_zero() {
        let inputs = |kind| {
            vec![
                ran("H100", "n1", 0, "GPU-1", vec![result("a/f", kind, None)]),
                ran("H100", "n2", 1, "GPU-2", vec![result("a/f", kind, None)]),
            ]
        };
        let f = Fleet::merge(inputs(Fail), Expected::Tasks(vec![0, 1]), &Reference::Majority, None);
        assert!(f.slots.iter().all(|s| s.status == Status::Failing));
        assert_eq!(f.exit_status, 1);
        let f = Fleet::merge(inputs(Pass), Expected::Tasks(vec![0, 1]), &Reference::Majority, None);
        assert_eq!((f.summary.as_expected, f.exit_status), (2, 0));
    }

    #[test]
    fn duplicates_unexpected_reports_and_other_jobs() {
        let mut other = ran("H100", "n1", 0, "GPU-9", vec![result("a/p", Pass, None)]);
        if let Ok(r) = &mut other.1 {
            r.provenance.task.array_job_id = Some("99".into());
        }
        let inputs = vec![
            ran("H100", "n1", 0, "GPU-1", vec![result("a/p", Pass, None)]),
            ran("H100", "n1", 0, "GPU-1", vec![result("a/p", Pass, None)]),
            // Task 1 reports the GPU task 0 tested: one GPU twice.
            ran("H100", "n1", 1, "GPU-1", vec![result("a/p", Pass, None)]),
            ran("H100", "n2", 7, "GPU-7", vec![result("a/p", Pass, None)]),
            other,
        ];
        let f = Fleet::merge(inputs, Expected::Tasks(vec![0, 1]), &Reference::Majority, Some("100"));
        assert_eq!(
            statuses(&f),
            vec![("task 0".into(), Status::AsExpected, true), ("task 1".into(), Status::AsExpected, true)]
        );
        assert_eq!((f.summary.duplicates, f.summary.unexpected, f.summary.other_jobs), (2, 1, 1));
        // A second report of task 0 that could not run: the task is could-not-run, and the exit status 2.
        let twice = vec![ran("H100", "n1", 0, "GPU-1", vec![result("a/p", Pass, None)]), could_not_run("n1", 0)];
        let g = Fleet::merge(twice, Expected::Tasks(vec![0]), &Reference::Majority, None);
        assert_eq!((g.slots[0].status, g.slots[0].duplicate, g.exit_status), (Status::CouldNotRun, true, 2));
        assert_eq!(f.unexpected[0].site, "n2[7]");
        assert_eq!(f.exit_status, 1);
        assert!(f.slots[1].entries[0].notes[0].contains("GPU GPU-1 also tested by n1[0], n1[0], n1[1]"));
    }

    #[test]
    fn nodes_expect_one_report_per_gpu() {
        let inputs = vec![
            ran("H100", "n1", 0, "GPU-1", vec![result("a/p", Pass, None)]),
            ran("H100", "n1", 1, "GPU-2", vec![result("a/p", Pass, None)]),
            could_not_run("n2", 2),
            could_not_run("n2", 3),
        ];
        let nodes = parse_nodes("n[1-3]").unwrap();
        let f = Fleet::merge(inputs, Expected::Nodes(nodes), &Reference::Majority, None);
        assert_eq!(
            statuses(&f),
            vec![
                ("node n2".into(), Status::CouldNotRun, false),
                ("node n3".into(), Status::Missing, false),
                ("node n1".into(), Status::AsExpected, false),
            ]
        );
        assert_eq!(f.exit_status, 2);
    }

    #[test]
    fn against_a_baseline_listed_failures_are_expected_and_unknown_configurations_deviate() {
        let h100 = ran("H100", "n1", 0, "GPU-1", vec![result("a/f", Fail, None), result("a/p", Pass, None)]);
        let mut b = Baseline::default();
        b.bless(h100.1.as_ref().unwrap());
        let reference = Reference::Baseline { name: "b.txt".into(), baseline: b };
        let inputs = vec![
            h100,
            ran("H100", "n2", 1, "GPU-2", vec![result("a/f", Pass, None), result("a/p", Pass, None)]),
            ran("H200", "n3", 2, "GPU-3", vec![result("a/p", Pass, None)]),
        ];
        let f = Fleet::merge(inputs, Expected::Tasks(vec![0, 1, 2]), &reference, None);
        let by_slot: BTreeMap<&str, &Slot> = f.slots.iter().map(|s| (s.slot.as_str(), s)).collect();
        assert_eq!(by_slot["task 0"].status, Status::AsExpected, "the listed failure is expected");
        assert_eq!(by_slot["task 1"].status, Status::Deviating);
        assert_eq!(by_slot["task 1"].entries[0].deviations[0].reference, "fail");
        assert_eq!(by_slot["task 2"].status, Status::Deviating);
        assert!(by_slot["task 2"].entries[0].notes[0].starts_with("no baseline section [H200"));
        assert_eq!(f.reference, "the baseline b.txt");
        assert_eq!(f.exit_status, 1);
    }

    #[test]
    fn nothing_to_merge_is_exit_two() {
        let f = Fleet::merge(Vec::new(), Expected::Seen, &Reference::Majority, None);
        assert_eq!((f.slots.len(), f.exit_status), (0, 2));
    }
}
