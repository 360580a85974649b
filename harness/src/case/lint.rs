//! The weak-case lint: checks that look like checks but cannot fail, found without a GPU.
//!
//! Validation ([`super::validate`]) rejects cases that cannot run; this lint flags cases that run but prove less
//! than they say. `cuda-conformance check` runs it after validation and fails on any warning, and so does the
//! `lint/suite` trial of `cargo test`. Each [`Warning`] names the case, the line, why the check is weak and what to
//! assert instead. The rules ([`LintRule`]):
//!
//! - `exhaustive-variant`: a `variant` whose alternatives together cover every outcome of what they observe (the
//!   two answers of the blocking oracle; every code the operation's `=>` list accepts; an edge and its absence;
//!   both orders and the overlap of two kernels), or that has an alternative which always holds. It can never
//!   fail, so it records what happened but checks nothing.
//! - `vacuous-expectation`: an `expect` or `quality` that holds whatever the GPU does, or checks almost nothing
//!   (`Lint::truth` says which predicates, and why, such as `L value > 0` on a count or size the script determines).
//! - `never-holds`: an expectation or a variant alternative that no run can satisfy (a broken case, or a dead
//!   alternative that makes a variant weaker than it reads).
//! - `duplicate-alternative` / `single-alternative`: a variant alternative that can never be the one reported.
//! - `unasserted-wait`: the `rule:` says the call waits (blocks the host until something happened) but no
//!   `expect OP waited-for GATE` asserts it.
//! - `count-only-dependencies`: a `capture-deps S is N` (N > 0) without `on`: cudaStreamGetCaptureInfo names the
//!   nodes "the next node to be captured in the stream will depend on", and the script that captured them decides
//!   which they are, so a count alone lets the wrong nodes pass.
//!
//! Everything is judged from the case text and the executor's fixed semantics: the script runs one operation at a
//! time (an `@THREAD` operation too), a gate's opening time is that of its first `open`, buffers start as
//! [`INITIAL_WORD`] words.
//! Predicates and operations the lint does not know are left alone (`_` arms), so new language features never
//! produce warnings until a rule covers them.

use super::ast::*;
use super::print::{op_kind as op_text, predicate as predicate_text};
use super::words::{ExpectWord, Word};
use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// What kind of weakness a [`Warning`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LintRule {
    /// A `variant` that can never fail.
    ExhaustiveVariant,
    /// An `expect`/`quality` that holds whatever the GPU does.
    VacuousExpectation,
    /// An expectation or variant alternative that can never hold.
    NeverHolds,
    /// A variant alternative identical to an earlier one: it can never be the one reported.
    DuplicateAlternative,
    /// A variant with one alternative: an `expect` reported as a variant.
    SingleAlternative,
    /// The rule says the call waits, but no `expect ... waited-for` asserts it.
    UnassertedWait,
    /// A case whose only statements about the GPU are `observe`s: it records and cannot fail.
    ObserveOnly,
    /// A case that only `measure`s: figures judge nothing, so it cannot fail.
    MeasureOnly,
    /// A `capture-deps` that counts a non-empty dependency set without naming its nodes.
    CountOnlyDependencies,
}

impl LintRule {
    pub fn name(self) -> &'static str {
        match self {
            LintRule::ExhaustiveVariant => "exhaustive-variant",
            LintRule::VacuousExpectation => "vacuous-expectation",
            LintRule::NeverHolds => "never-holds",
            LintRule::DuplicateAlternative => "duplicate-alternative",
            LintRule::SingleAlternative => "single-alternative",
            LintRule::UnassertedWait => "unasserted-wait",
            LintRule::ObserveOnly => "observe-only",
            LintRule::MeasureOnly => "measure-only",
            LintRule::CountOnlyDependencies => "count-only-dependencies",
        }
    }
}

impl fmt::Display for LintRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One weak check: `file:line: case ID: warning: MESSAGE [RULE]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub file: String,
    pub line: u32,
    pub case_id: String,
    pub rule: LintRule,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: case {}: warning: {} [{}]", self.file, self.line, self.case_id, self.message, self.rule)
    }
}

/// Every weak check of `case`, in source order. The case should be valid ([`super::validate`]); names that do not
/// resolve are skipped, never a panic.
pub fn lint(case: &Case) -> Vec<Warning> {
    let mut lint = Lint::new(case);
    lint.expectations();
    lint.unasserted_wait();
    lint.count_only_dependencies();
    let mut out = lint.out;
    out.sort_by_key(|w| (w.line, w.rule));
    out
}

/// [`lint`] over several cases, in their order.
pub fn lint_all<'c>(cases: impl IntoIterator<Item = &'c Case>) -> Vec<Warning> {
    cases.into_iter().flat_map(lint).collect()
}

/// What the lint can tell about a predicate without running the case.
#[derive(Debug, Clone, PartialEq)]
enum Truth {
    /// It may hold or not, depending on what the GPU does: a real check.
    Depends,
    /// It holds on every run the case has not already failed for another reason.
    Always {
        why: String,
        /// It restates a check the case already makes elsewhere (an operation's `=>` list, an `expect`): no weaker
        /// than that check, so flagged only inside a variant, where it makes the variant unable to fail.
        restates: bool,
    },
    /// It holds on a correct GPU and on nearly every broken one: it checks (almost) nothing.
    Weak(String),
    /// No run satisfies it.
    Never(String),
}

struct Lint<'c> {
    case: &'c Case,
    /// label → index of the operation.
    labels: HashMap<&'c str, usize>,
    /// The printed text of every operation, split into words: which names an operation touches.
    op_words: Vec<Vec<String>>,
    out: Vec<Warning>,
}

impl<'c> Lint<'c> {
    fn new(case: &'c Case) -> Self {
        let labels = case.script.iter().enumerate().filter_map(|(i, op)| Some((op.label.as_deref()?, i))).collect();
        // A generic call's arguments read `param=name` and `{field=name}`: the names are words of their own.
        let op_words = case
            .script
            .iter()
            .map(|op| {
                op_text(&op.kind)
                    .split(|c: char| c.is_whitespace() || matches!(c, '=' | '{' | '}'))
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .collect();
        Lint { case, labels, op_words, out: Vec::new() }
    }

    fn warn(&mut self, line: u32, rule: LintRule, message: String) {
        self.out.push(Warning {
            file: self.case.positions.file.clone(),
            line,
            case_id: self.case.id.clone(),
            rule,
            message,
        });
    }

    fn op_line(&self, index: usize) -> u32 {
        self.case.positions.op_lines.get(index).copied().unwrap_or(self.case.positions.case_line)
    }

    fn expect_line(&self, index: usize) -> u32 {
        self.case.positions.expect_lines.get(index).copied().unwrap_or(self.case.positions.case_line)
    }

    /// The labelled operation and its index.
    fn op(&self, label: &str) -> Option<(usize, &'c Op)> {
        let &i = self.labels.get(label)?;
        Some((i, &self.case.script[i]))
    }

    /// Whether operation `index` names `name` (a gate, buffer, graph...). Names are unique across kinds and are
    /// never keywords, so a word of the printed operation equal to the name is a use of it, whatever the operation.
    /// A slice shares memory with its buffer and the buffer's other slices, so an operation on any of them counts.
    fn mentions(&self, index: usize, name: &str) -> bool {
        let base = |n: &str| {
            self.case
                .decls
                .iter()
                .find_map(|d| match d {
                    Decl::Slice { name: s, of, .. } if s == n => Some(of.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| n.to_owned())
        };
        let memory = base(name);
        self.op_words[index].iter().any(|w| w == name || base(w) == memory)
    }

    // -----------------------------------------------------------------------------------------------------------
    // Expectations

    fn expectations(&mut self) {
        let case = self.case;
        // Predicates an `expect` asserts: inside a variant they hold whenever the case has not already failed.
        let asserted: Vec<(u32, &Predicate)> = case
            .expects
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match e {
                Expectation::Expect(p) => Some((self.expect_line(i), p)),
                _ => None,
            })
            .collect();
        for (i, e) in case.expects.iter().enumerate() {
            let line = self.expect_line(i);
            match e {
                Expectation::Expect(p) => self.single(line, ExpectWord::Expect, p),
                Expectation::Quality(p) => self.single(line, ExpectWord::Quality, p),
                Expectation::Variant(alternatives) => self.variant(line, alternatives, &asserted),
                // `observe` records behaviour the docs leave open: covering every outcome is its purpose.
                Expectation::Observe(_) => {}
                // A figure asserts nothing, so it cannot be vacuous either.
                Expectation::Measure(_) => {}
            }
        }
        let observes = case.expects.iter().any(|e| matches!(e, Expectation::Observe(_)));
        // An operation's own `=> CODE` list is a claim too: any other code fails the case.
        let judges = case.expects.iter().any(|e| matches!(e, Expectation::Expect(_) | Expectation::Variant(_)))
            || case.script.iter().any(|op| !op.expect.is_empty());
        if observes && !judges {
            self.warn(
                case.positions.case_line,
                LintRule::ObserveOnly,
                "this case only observes: add an `expect` for what the docs do promise (the data, the stream order, \
                 the return codes), so that the case can fail"
                    .to_owned(),
            );
        }
        let measures = case.expects.iter().any(|e| matches!(e, Expectation::Measure(_)));
        let checks = judges || case.expects.iter().any(|e| matches!(e, Expectation::Quality(_)));
        if measures && !observes && !checks {
            self.warn(
                case.positions.case_line,
                LintRule::MeasureOnly,
                "this case only measures: a figure never fails, so add an `expect` on what the timed work must \
                 produce (the data it computes, the order of its kernels)"
                    .to_owned(),
            );
        }
    }

    /// An `expect P` or `quality P`.
    fn single(&mut self, line: u32, expect: ExpectWord, p: &Predicate) {
        let text = predicate_text(p);
        let word = expect.word();
        match self.truth(p) {
            Truth::Depends | Truth::Always { restates: true, .. } => {}
            Truth::Always { why, restates: false } => self.warn(
                line,
                LintRule::VacuousExpectation,
                format!("`{word} {text}` holds whatever the GPU does: {why}"),
            ),
            Truth::Weak(why) => {
                self.warn(line, LintRule::VacuousExpectation, format!("`{word} {text}` checks almost nothing: {why}"))
            }
            Truth::Never(why) => {
                let outcome = if expect == ExpectWord::Quality {
                    "it gives a quality warning on every GPU"
                } else {
                    "the case fails on every GPU"
                };
                self.warn(line, LintRule::NeverHolds, format!("`{word} {text}` can never hold, so {outcome}: {why}"))
            }
        }
    }

    fn variant(&mut self, line: u32, alternatives: &[(String, Predicate)], asserted: &[(u32, &Predicate)]) {
        if let [(name, p)] = alternatives {
            self.warn(
                line,
                LintRule::SingleAlternative,
                format!(
                    "a variant with one alternative (`{name}: {}`) is an `expect` reported as a variant: a variant \
                     records which of several behaviours the docs allow; write `expect {}` instead",
                    predicate_text(p),
                    predicate_text(p)
                ),
            );
        }
        for (j, (name, p)) in alternatives.iter().enumerate() {
            if let Some((first, _)) = alternatives[..j].iter().find(|(_, q)| q == p) {
                self.warn(
                    line,
                    LintRule::DuplicateAlternative,
                    format!(
                        "variant alternative `{name}: {}` repeats `{first}`: the verdict names the first alternative \
                         that held, so `{name}` can never be reported; give each behaviour its own predicate",
                        predicate_text(p)
                    ),
                );
            }
        }
        let truths: Vec<Truth> = alternatives
            .iter()
            .map(|(_, p)| match asserted.iter().find(|(_, q)| *q == p) {
                Some((at, _)) => Truth::Always {
                    why: format!("`expect` on line {at} asserts it, so it holds whenever the case has not failed"),
                    restates: true,
                },
                None => self.truth(p),
            })
            .collect();
        for ((name, p), truth) in alternatives.iter().zip(&truths) {
            if let Truth::Never(why) = truth {
                self.warn(
                    line,
                    LintRule::NeverHolds,
                    format!(
                        "variant alternative `{name}: {}` can never hold, so the variant is weaker than it reads: {why}",
                        predicate_text(p)
                    ),
                );
            }
        }
        let always = alternatives.iter().zip(&truths).find_map(|((name, p), t)| match t {
            Truth::Always { why, .. } => Some((
                format!("alternative `{name}: {}` always holds ({why})", predicate_text(p)),
                format!("drop `{name}` or make it a predicate that can fail"),
            )),
            _ => None,
        });
        if let Some((reason, advice)) = always.or_else(|| self.covering(alternatives)) {
            self.warn(
                line,
                LintRule::ExhaustiveVariant,
                format!(
                    "this variant can never fail: {reason}, so it only records which behaviour this GPU showed; \
                     {advice}"
                ),
            );
        }
    }

    /// Why the alternatives together cover every outcome, if they do, and what to do instead (alternatives of
    /// different kinds are judged in groups: a covering group makes the whole variant cover everything).
    fn covering(&self, alternatives: &[(String, Predicate)]) -> Option<(String, String)> {
        let has = |q: &Predicate| alternatives.iter().find(|(_, p)| p == q).map(|(name, _)| name.as_str());
        let named = |name: &str, p: &Predicate| format!("`{name}: {}`", predicate_text(p));
        for (name, p) in alternatives {
            match p {
                // The blocking oracle: an operation that ran returned either before or after the gate opened.
                Predicate::WaitedFor { op, gate } => {
                    let other = Predicate::NotWaitedFor { op: op.clone(), gate: gate.clone() };
                    if let Some(n) = has(&other) {
                        return Some((
                            format!(
                                "{} and {} cover every outcome of the blocking oracle (whenever `{op}` runs, it \
                                 returns either after or before `{gate}` opens)",
                                named(name, p),
                                named(n, &other)
                            ),
                            format!(
                                "`expect` the answer the rule promises; if the docs allow both, drop the variant \
                                 (the report's trace still shows when `{op}` returned and `{gate}` opened) and \
                                 `expect` what holds either way, such as the data or the stream order"
                            ),
                        ));
                    }
                }
                // Edges and paths of a captured graph: a pair of nodes has an edge or not, a path or not; and an
                // edge is a path, so `no-edge` or `path` always holds too.
                Predicate::Edge { graph, from, to } | Predicate::Path { graph, from, to } => {
                    let negations = [
                        Predicate::NoEdge { graph: graph.clone(), from: from.clone(), to: to.clone() },
                        Predicate::NoPath { graph: graph.clone(), from: from.clone(), to: to.clone() },
                    ];
                    let is_path = matches!(p, Predicate::Path { .. });
                    for other in negations {
                        let covers = is_path || matches!(other, Predicate::NoEdge { .. });
                        if let Some(n) = has(&other).filter(|_| covers) {
                            return Some((
                                format!(
                                    "{} and {} cover every graph (`{to}` either depends on `{from}` or not)",
                                    named(name, p),
                                    named(n, &other)
                                ),
                                "`expect` the dependency the rule promises".to_owned(),
                            ));
                        }
                    }
                }
                // Two kernels' stamp intervals: one ends before the other starts, either way round, or they
                // intersect (only a kernel with equal entry and exit stamps escapes all three).
                Predicate::Before { first, second } if first != second => {
                    let back = Predicate::Before { first: second.clone(), second: first.clone() };
                    let overlap = [
                        Predicate::Overlaps { a: first.clone(), b: second.clone() },
                        Predicate::Overlaps { a: second.clone(), b: first.clone() },
                    ];
                    if let (Some(n2), Some((n3, o))) = (has(&back), overlap.iter().find_map(|o| Some((has(o)?, o)))) {
                        return Some((
                            format!(
                                "{}, {} and {} cover every pair of stamp intervals",
                                named(name, p),
                                named(n2, &back),
                                named(n3, o)
                            ),
                            "`expect` the order the rule promises, or `quality` an overlap it allows".to_owned(),
                        ));
                    }
                }
                _ => {}
            }
        }
        // Return codes: an operation that returns a code outside its `=>` list already fails the case, so
        // alternatives naming every accepted code cannot all be false.
        let mut codes: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for (_, p) in alternatives {
            if let Predicate::Returned { op, code } = p {
                codes.entry(op.as_str()).or_default().insert(code.as_str());
            }
        }
        let mut ops: Vec<_> = codes.into_iter().collect();
        ops.sort();
        for (label, named_codes) in ops {
            let Some((index, op)) = self.op(label) else { continue };
            let accepted = accepted(op);
            if accepted.iter().all(|c| named_codes.contains(c)) {
                return Some((
                    format!(
                        "its alternatives name every code `{label}` accepts on line {} ({}), and any other code \
                         already fails the case",
                        self.op_line(index),
                        accepted.join(" | ")
                    ),
                    format!(
                        "narrow the `=>` list of `{label}` to the codes the rule allows; if it allows all of these, \
                         that list is the whole check: drop the variant (the trace still records the code)"
                    ),
                ));
            }
        }
        None
    }

    /// What can be known about `p` from the case text. Each arm says why.
    fn truth(&self, p: &Predicate) -> Truth {
        match p {
            // A kernel's own stamps: `A before A` needs A to start after it ended; `A overlaps A` needs only that
            // it ran for a measurable time.
            Predicate::Before { first, second } if first == second => Truth::Never(format!(
                "a kernel cannot start after it has ended (`{first} before {first}` holds only if its entry and exit \
                 stamps are equal); compare `{first}` with another kernel"
            )),
            Predicate::Overlaps { a, b } if a == b => Truth::Always {
                why: format!(
                    "a kernel's stamp interval always intersects itself; to show concurrency, compare `{a}` with a \
                     kernel on another stream"
                ),
                restates: false,
            },
            // Graph predicates on a graph no successful `end-capture` fills: nothing to read, each one fails.
            Predicate::NodeCount { graph, .. }
            | Predicate::EdgeCount { graph, .. }
            | Predicate::Edge { graph, .. }
            | Predicate::NoEdge { graph, .. }
            | Predicate::Path { graph, .. }
            | Predicate::NoPath { graph, .. }
                if !self.may_be_filled(graph) =>
            {
                Truth::Never(format!(
                    "every `end-capture ... into {graph}` must fail (no `=>` list of one includes cudaSuccess), so \
                     there is no graph `{graph}` to inspect; assert the failure with the `end-capture` codes and the \
                     stream's state afterwards instead"
                ))
            }
            // Graphs made by capture are acyclic: no node has an edge or a path to itself.
            Predicate::Edge { graph, from, to } | Predicate::Path { graph, from, to } if from == to => Truth::Never(
                format!("a captured graph is acyclic: `{from}` has no edge or path to itself in `{graph}`"),
            ),
            Predicate::NoEdge { graph, from, to } | Predicate::NoPath { graph, from, to } if from == to => {
                Truth::Always {
                    why: format!(
                        "a captured graph is acyclic, so `{from}` never has an edge or path to itself in `{graph}`; \
                         assert the absence of a dependency between two different operations"
                    ),
                    restates: false,
                }
            }
            // The host log is one sequence: a call cannot come both before and after itself.
            Predicate::HostOrder { labels } => {
                match labels.iter().enumerate().find(|(i, l)| labels[..*i].contains(l)) {
                    Some((_, l)) => Truth::Never(format!(
                        "`{l}` is listed twice, and one call cannot run both before and after itself; use \
                         `host-runs` to count runs"
                    )),
                    None => Truth::Depends,
                }
            }
            // Return codes against the operation's `=>` list, which the verdict enforces on its own.
            Predicate::Returned { op, code } => match self.op(op) {
                Some((index, o)) => {
                    let accepted = accepted(o);
                    let line = self.op_line(index);
                    if accepted.contains(&"any") {
                        // `=> any` accepts every code: what the operation returned decides.
                        Truth::Depends
                    } else if !accepted.contains(&code.as_str()) {
                        Truth::Never(format!(
                            "`{op}` (line {line}) accepts only {}, so if it returned {code} the case would already \
                             fail; add {code} to its `=>` list or name an accepted code",
                            accepted.join(" | ")
                        ))
                    } else if accepted.len() == 1 {
                        // Redundant with the `=>` list, not weaker: the operation itself fails the case on any
                        // other code. Only a variant is made vacuous by it.
                        Truth::Always {
                            why: format!("`{op}` (line {line}) accepts only {code}, any other code fails the case"),
                            restates: true,
                        }
                    } else {
                        Truth::Depends
                    }
                }
                None => Truth::Depends,
            },
            // Two return codes: decided by the `=>` lists when they leave no choice.
            Predicate::SameCode { a, b } if a == b => Truth::Always {
                why: format!("`{a}` returned whatever `{a}` returned; compare it with another operation"),
                restates: false,
            },
            Predicate::SameCode { a, b } => match (self.op(a), self.op(b)) {
                (Some((_, x)), Some((_, y))) => {
                    let (x, y) = (accepted(x), accepted(y));
                    // `=> any` accepts every code, so it leaves the comparison open.
                    let open = x.contains(&"any") || y.contains(&"any");
                    if !open && !x.iter().any(|c| y.contains(c)) {
                        Truth::Never(format!(
                            "`{a}` accepts only {} and `{b}` only {}: no code is accepted by both",
                            x.join(" | "),
                            y.join(" | ")
                        ))
                    } else if x.len() == 1 && x == y {
                        Truth::Always {
                            why: format!("both `{a}` and `{b}` accept only {}, any other code fails the case", x[0]),
                            restates: true,
                        }
                    } else {
                        Truth::Depends
                    }
                }
                _ => Truth::Depends,
            },
            Predicate::WaitedFor { op, gate } => self.oracle(op, gate, true),
            Predicate::NotWaitedFor { op, gate } => self.oracle(op, gate, false),
            // The harness's initial pattern is no value a case computes: a check that expects it would pass on
            // words the script never wrote.
            Predicate::BufferEquals { buf, value: INITIAL_WORD, .. } => Truth::Always {
                why: format!(
                    "{INITIAL_WORD:#x} is the pattern every buffer starts with, so `{buf}` holds it wherever the \
                     script wrote nothing; expect a value the case's work computes"
                ),
                restates: false,
            },
            // Buffers start with the pattern: one that no operation touches holds it whatever happens.
            Predicate::BufferEquals { buf, value, .. }
                if !(0..self.case.script.len()).any(|i| self.mentions(i, buf)) =>
            {
                // (`value` is not the pattern: the arm above took that.)
                Truth::Never(format!(
                    "no operation touches `{buf}`, and buffers start as {INITIAL_WORD:#x}, so it never holds {value}"
                ))
            }
            Predicate::ElapsedAbove { label, ms, inclusive } => self.elapsed_above(label, *ms, *inclusive),
            Predicate::Value { label, cmp, value } if nonzero_only(*cmp, *value) => match self.op(label) {
                Some((_, op)) if determined_by_script(&op.kind) => Truth::Weak(format!(
                    "`{label}` counts or sizes what the script made (the nodes it added, the bytes it allocated, \
                     the devices it sees), so a non-zero check accepts nearly every wrong count; assert the value \
                     the sentence gives (`{label} value == N`), the bound the script implies (`>= SIZE` \
                     allocated), or its equality with another reading (`{label} same-value L`)"
                )),
                _ => Truth::Depends,
            },
            _ => Truth::Depends,
        }
    }

    /// Whether some `end-capture ... into GRAPH` may succeed (accepts cudaSuccess). A graph no end-capture names
    /// is the validator's business, not a weak check.
    fn may_be_filled(&self, graph: &str) -> bool {
        let succeeds: Vec<bool> = self
            .case
            .script
            .iter()
            .filter_map(|op| match &op.kind {
                OpKind::EndCapture { graph: g, .. } if g == graph => Some(accepted(op).contains(&"cudaSuccess")),
                _ => None,
            })
            .collect();
        succeeds.is_empty() || succeeds.contains(&true)
    }

    /// The blocking oracle on operation `label` and `gate`: `waited` for `waited-for`, else `not-waited-for`. The
    /// verdict compares the time the operation returned with the time of the gate's first opening. The script runs
    /// one operation at a time, so the oracle observes blocking only if the opening is scheduled (`open G after D`)
    /// before the operation, and something before the operation holds work behind the gate.
    fn oracle(&self, label: &str, gate: &str, waited: bool) -> Truth {
        let Some((index, _)) = self.op(label) else { return Truth::Depends };
        let opens: Vec<(usize, bool)> = (0..self.case.script.len())
            .filter_map(|i| match &self.case.script[i].kind {
                OpKind::Open { gate: g, after_ns, .. } if g == gate => Some((i, after_ns.is_some())),
                _ => None,
            })
            .collect();
        let pick = |holds: bool, why: String| {
            if holds == waited {
                Truth::Always { why, restates: false }
            } else {
                Truth::Never(why)
            }
        };
        let advice = format!(
            "schedule `open {gate} after 300ms` just before `{label}`, with the work `{label}` may wait for held \
             behind `{gate}`"
        );
        // An immediate `open` at or before the operation has finished before it returns (at or before its start).
        if let Some(&(at, _)) = opens.iter().find(|(i, scheduled)| *i <= index && !scheduled) {
            return pick(
                true,
                format!(
                    "`open {gate}` on line {} runs before `{label}` returns (the script runs one operation at a \
                     time), so `{label}` always returns after `{gate}` opened, blocking or not; {advice}",
                    self.op_line(at)
                ),
            );
        }
        // Nothing scheduled before: the gate stays closed until after the operation has returned (bar the
        // watchdog, which makes the case a timeout).
        if !opens.iter().any(|(i, _)| *i < index) {
            return pick(
                false,
                format!(
                    "every `open {gate}` comes after `{label}` in the script, so `{label}` always returns before \
                     `{gate}` opens, blocking or not; {advice}"
                ),
            );
        }
        // An opening is scheduled, but nothing before the operation uses the gate (a gate kernel, a held host
        // function): the operation has nothing of the gate's to wait for, and the answer only says whether it
        // took longer than the delay on its own.
        let held =
            (0..index).any(|i| self.mentions(i, gate) && !matches!(self.case.script[i].kind, OpKind::Open { .. }));
        if !held {
            let why = format!(
                "nothing before `{label}` is held behind `{gate}` (no `launch gate {gate}` precedes it), so `{label}` \
                 has nothing of `{gate}`'s to wait for and the oracle only measures whether it outlasted the \
                 scheduled delay; {advice}"
            );
            return if waited { Truth::Never(why) } else { Truth::Always { why, restates: false } };
        }
        Truth::Depends
    }

    /// `elapsed L > MS` / `elapsed L >= MS`. For two different events, `>= 0` is a real check (the stop event
    /// completed no earlier than the start event: stream order, or the lack of it when the events may complete in
    /// either order and the value may be negative), so it is not flagged.
    fn elapsed_above(&self, label: &str, ms: f64, inclusive: bool) -> Truth {
        let Some((_, op)) = self.op(label) else { return Truth::Depends };
        let OpKind::Elapsed { start, stop, .. } = &op.kind else { return Truth::Depends };
        let comparison = if inclusive { ">=" } else { ">" };
        // The time from an event to itself is 0: the comparison is decided by MS alone.
        if start == stop {
            let why = format!(
                "`{label}` measures from `{start}` to itself, which is always 0 ms; measure between two events with \
                 the work the rule is about recorded between them"
            );
            let holds = if inclusive { 0.0 >= ms } else { 0.0 > ms };
            return if holds { Truth::Always { why, restates: false } } else { Truth::Never(why) };
        }
        // A negative lower bound lets the stop event complete before the start event. For events recorded in
        // order on one stream the value is never negative on a conforming device, so the bound is weaker than
        // `>= 0`; for events that may complete in either order it bounds how long something took, which no case
        // may judge by.
        if ms < 0.0 {
            return Truth::Weak(format!(
                "a negative lower bound ({comparison} {ms} ms) accepts a stop event that completed before the start \
                 event; assert `elapsed {label} >= 0` when `{start}` and `{stop}` are stream-ordered, or \
                 `elapsed {label} > 0` when work runs between them"
            ));
        }
        Truth::Depends
    }

    // -----------------------------------------------------------------------------------------------------------
    // Operations that assert less than they observe

    /// `capture-deps S is N` with N > 0 and no `on`, where the call may succeed: the trace records the nodes, the
    /// case asserts only how many.
    fn count_only_dependencies(&mut self) {
        for (index, op) in self.case.script.iter().enumerate() {
            let OpKind::CaptureDeps { stream, count, nodes } = &op.kind else { continue };
            if *count == 0 || !nodes.is_empty() || !accepted(op).contains(&"cudaSuccess") {
                continue;
            }
            let text = op_text(&op.kind);
            self.warn(
                self.op_line(index),
                LintRule::CountOnlyDependencies,
                format!(
                    "`{text}` counts the dependency set without naming it: the nodes the next captured operation on \
                     `{}` will depend on follow from the script, so a set of the wrong {count} node(s) passes; name \
                     them with `on L ...` (label the operations that made them)",
                    stream.name()
                ),
            );
        }
    }

    // -----------------------------------------------------------------------------------------------------------
    // The rule text

    /// A rule that says the call waits must be held to it by the blocking oracle. Only `expect` counts: a variant
    /// alternative or a `quality` does not assert anything.
    fn unasserted_wait(&mut self) {
        let Some(phrase) = wait_claim(&self.case.rule) else { return };
        let asserted = self.case.expects.iter().any(|e| matches!(e, Expectation::Expect(Predicate::WaitedFor { .. })));
        if asserted {
            return;
        }
        let in_variant = self.case.expects.iter().any(|e| match e {
            Expectation::Variant(alternatives) => {
                alternatives.iter().any(|(_, p)| matches!(p, Predicate::WaitedFor { .. }))
            }
            _ => false,
        });
        let note = if in_variant { " (a `waited-for` in a variant alternative asserts nothing)" } else { "" };
        self.warn(
            self.case.positions.case_line,
            LintRule::UnassertedWait,
            format!(
                "the rule says the call waits (\"{phrase}\") but no `expect OP waited-for GATE` asserts it{note}, so \
                 the case passes whether or not anything waited; hold the work it waits for behind a gate, schedule \
                 `open GATE after 300ms` just before the call and `expect OP waited-for GATE` (or reword the rule if \
                 it does not promise a wait)"
            ),
        );
    }
}

/// Whether `value CMP N` says no more than "not zero" (`> 0`, `>= 1`, `!= 0`).
fn nonzero_only(cmp: ValueCmp, value: u64) -> bool {
    matches!((cmp, value), (ValueCmp::Gt, 0) | (ValueCmp::Ge, 1) | (ValueCmp::Ne, 0))
}

/// Whether an operation's value is a count or a size that the script's own work determines or bounds (a list of
/// the nodes it added, the memory it allocated from a pool or a graph, the devices it made visible), as opposed to
/// a flag (0 or 1, where `> 0` is `== 1`), an address, an id, or a figure such as a queue depth.
fn determined_by_script(kind: &OpKind) -> bool {
    match kind {
        OpKind::List { .. } | OpKind::GraphMemGet { .. } | OpKind::DeviceCount => true,
        OpKind::PoolGet { attr, .. } => matches!(
            attr,
            PoolAttr::ReservedMemCurrent | PoolAttr::ReservedMemHigh | PoolAttr::UsedMemCurrent | PoolAttr::UsedMemHigh
        ),
        _ => false,
    }
}

/// The codes an operation accepts: its `=>` list, or cudaSuccess.
fn accepted(op: &Op) -> Vec<&str> {
    if op.expect.is_empty() {
        vec!["cudaSuccess"]
    } else {
        op.expect.iter().map(String::as_str).collect()
    }
}

/// Words that, among the three words before a claim, negate or hedge it: "does not wait", "may or may not wait",
/// "might be synchronous", "never waits", "without waiting" (the last never matches a claim in the first place).
const NOT_A_CLAIM: [&str; 12] =
    ["not", "never", "without", "no", "nor", "neither", "cannot", "may", "might", "could", "can", "need"];

/// Words that make the rest of their sentence a question or a condition, not a promise: "the case records whether
/// it waits for ...", "if the driver stages the copy, it returns only after ...".
const CONDITIONAL: [&str; 3] = ["whether", "if", "unless"];

/// Words before `wait(s)` that make it a noun: "the wait fails", "a wait on any other event".
const DETERMINERS: [&str; 10] = ["a", "an", "the", "each", "every", "any", "its", "their", "such", "another"];

/// The phrase of `rule` that says the call waits for something, if an unconditional, un-negated, un-hedged clause
/// says so: "waits for", "wait until", "waits" ending a clause, "blocks until", "blocks the host", "returns only
/// after/once/when", "returns after", "synchronous with respect to the host". Case-insensitive; whole words only
/// ("asynchronous" and "cudaStreamWaitEvent" are not claims).
pub fn wait_claim(rule: &str) -> Option<String> {
    let lower = rule.to_lowercase();
    for sentence in lower.split([';', ':', '.']) {
        let mut conditional = false;
        for clause in sentence.split([',', '(', ')']) {
            let words: Vec<&str> = clause
                .split_whitespace()
                .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’' || c == '-')))
                .filter(|w| !w.is_empty())
                .collect();
            for i in 0..words.len() {
                conditional |= CONDITIONAL.contains(&words[i]);
                let Some(len) = claim_at(&words[i..]) else { continue };
                let before = &words[i.saturating_sub(3)..i];
                let negated =
                    before.iter().any(|w| NOT_A_CLAIM.contains(w) || w.ends_with("n't") || w.ends_with("n’t"));
                let noun = matches!(words[i], "wait" | "waits")
                    && i > 0
                    && (DETERMINERS.contains(&words[i - 1])
                        || words[i - 1].ends_with("'s")
                        || words[i - 1].ends_with("’s"));
                if !conditional && !negated && !noun {
                    return Some(words[i..i + len].join(" "));
                }
            }
        }
    }
    None
}

/// The length of the wait claim `words` starts with, if it starts with one.
fn claim_at(words: &[&str]) -> Option<usize> {
    let at = |i: usize| words.get(i).copied().unwrap_or("");
    match at(0) {
        "wait" | "waits" => match at(1) {
            "for" | "until" | "on" => Some(2),
            // "the call waits." claims; a bare "wait" is an infinitive ("makes the host call wait") or a noun.
            "" if at(0) == "waits" => Some(1),
            _ => None,
        },
        "block" | "blocks" => match (at(1), at(2)) {
            ("until", _) => Some(2),
            ("the", "host" | "calling") => Some(3),
            _ => None,
        },
        "return" | "returns" => match (at(1), at(2)) {
            ("only", "after" | "once" | "when") => Some(3),
            ("after" | "once", _) => Some(2),
            _ => None,
        },
        "synchronous" => match (at(1), at(2), at(3), at(4), at(5)) {
            ("with", "respect", "to", "the", "host") => Some(6),
            ("with", "respect", "to", "host", _) => Some(5),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests;
