//! The conformance engine, one folder per stage of the pipeline. A case file is parsed and validated ([`case`]),
//! run on the GPU ([`exec`], on the machine [`device`] describes), read into a verdict, measures and a timeline
//! ([`readings`]) by the [`runner`], which writes a [`record::Report`] that [`report`] turns into text. Each folder
//! may use only the folders listed above it (`harness/tests/layers.rs` checks this):
//!
//! | folder | what it is |
//! |---|---|
//! | [`record`] | what a run records: plain serde data that crosses stages, processes and files (the report's schema) |
//! | [`api`] | the cudart API as data: every function of the linked header, its parameters' classes, documented codes and notes, and a call by name |
//! | [`case`] | the case language: words, syntax tree, parser, validator, printer, lint; loading a folder of cases |
//! | [`device`] | the machine: probing a GPU, the probe kernels' table, a case's requirements, the host's facts |
//! | [`exec`] | one case on the GPU through cuda-sys, recording [`record::observations::Observations`]; never judges |
//! | [`repro`] | one case as a standalone CUDA C++ program making the executor's calls (a reproducer); no CUDA here |
//! | [`readings`] | pure reads of one run: the verdict, the `measure` figures, the timeline |
//! | [`report`] | saved reports as text: tables, Markdown, JUnit, traces, SVG and HTML, comparisons, fleets |
//! | [`claims`] | wing: the seeds' performance claims judged against bounds measured in the run, and their programs |
//! | [`runner`] | cases in worker processes: scheduling, confirmation and flake policy, assembling the report |
//! | [`figures`] | wing: what the docs leave open, measured with generated cases through the runner, never asserted |
//!
//! The harness does not know how kernels were built: it receives a [`device::kernels::KernelTable`] from the root
//! package.
//!
//! # Extending
//!
//! Every word of the language is written once, in [`case::words`] (keywords) or beside its enum in [`case::ast`]
//! (`words!` value sets such as `MemKind`, and the operation words `OpWord`), and every match that must consider a
//! new construct is exhaustive. So the recipe is: add the word and the variant, then fix what the compiler names,
//! in the order it names it.
//!
//! **An operation** (e.g. `stream-flags STREAM`, cudaStreamGetFlags, which was added this way): five source files.
//! 1. `case/ast.rs`: the word in `OpWord`, the `OpKind` variant with a doc comment (the syntax and the CUDA call),
//!    and its row in `OpKind::facts`, the table of facts: the word, the stream on which it may add a node to a
//!    capture, the stream its device work runs on (`timing:` and the timeline), what it may wait for on the host
//!    (the can-finish check), the devices it names, the names and labels it uses (the validator checks their
//!    kinds), and whether it records a value for `L value`. The validator, placement, capture bookkeeping and the
//!    can-finish check read these columns; nothing else there changes. A rule beyond the kinds of its operands
//!    (a size, a memory kind) is an arm of `operation_rules` in `case/validate.rs`.
//! 2. The compiler then names `case/parse.rs` (the grammar arm of the word), `case/print.rs` (`op_kind`) and
//!    `exec/interpret/mod.rs` (`interpret`, one line per operation), which calls the operation's function in the
//!    file of its family (`exec/interpret/device.rs` for `stream-flags`): the call, timed with `t.call`; a value for
//!    predicates with `t.value`.
//! 3. The test `exec::tests::every_operation_word_is_documented_parsed_and_run` then names the rest: the row in
//!    `cases/README.md` (## The script), the operation in the `VALID` fixture of `case/tests.rs` (round trip), and
//!    in `every_operation` of `exec/tests.rs` (no panic without a GPU). Then a case in `cases/` that uses it and
//!    cites the documentation sentence it checks.
//!
//! A new object kind (like `pool`) is a `DeclWord` and a `Decl` variant; the compiler names the same files
//! plus `exec/objects.rs` (creation and release). Enum operands are `words!` sets in `case/ast.rs`, mapped to
//! their CUDA values once in `exec/sys_words.rs` (`ToSys`), which also names values CUDA returns.
//!
//! **A predicate** (e.g. `L value >= N`): a `PredicateWord` (it starts the predicate) or a `Verb` (it follows
//! the label it is about) in `case/words.rs`, then the `Predicate` variant in `case/ast.rs`. The compiler names
//! `case/parse.rs`, `case/print.rs`, `case/validate.rs` (`predicate`: labels of the right operations) and
//! `readings/verdict.rs` (`holds`). If it needs data the executor does not record yet, add an `OpValue` variant in
//! `record/observations.rs` (the compiler names its trace text in `report/trace.rs`). `case/lint.rs` knows only
//! the predicates it can prove vacuous; a new one defaults to "depends on the GPU".
//!
//! **A requirement** (e.g. `memory-pools`): a `RequirementWord`, a `Requirement` variant; the compiler names
//! `Requirement::word`, `case/parse.rs`, `case/print.rs` and `device/requirements.rs` (`unmet`). A device fact it
//! needs is a `gpu::DeviceInfo` field (the compiler names every `DeviceInfo` literal: `device/gpu.rs` and the
//! test fixtures).
//!
//! **A probe kernel** (e.g. `countdown`): the kernel in `kernels/probes.cu` (or in a module of its own when it
//! calls a device-runtime builtin an old driver may not resolve: `conditional.cu`, `device_launch.cu`, each
//! compiled in the root `build.rs` and registered as its own fat binary), its name and `cc_kernel_*` handle
//! function in `kernels/register.c`, the `extern` declaration and field in the root `src/lib.rs`, the `KernelWord`
//! in `case/words.rs`. The compiler names `KernelTable` literals and `KernelTable::get` (`device/kernels.rs`), the
//! reproducers' `kernel_symbol` (`repro/decls.rs`), and the grammar (`launch` in `case/parse.rs`, or `NodeKernel`
//! for graph kernel nodes). A kernel `launch` runs is a `KernelCall` variant in `case/ast.rs` (its arguments; the
//! compiler then names `KernelCall::word` and `KernelCall::operands` there, the printer,
//! `exec/interpret/launches.rs` and `repro/launches.rs`). Its ABI goes in the `device/kernels.rs` docs;
//! `exec/mod.rs` and every reproducer preload the kernels `KernelWord::preloaded` names by walking
//! `KernelWord::ALL`. A kernel in an image of another kind (`kernels/other_images.cu`, `bad.ptx`, `future.ptx`: no
//! SASS for the device, PTX only, PTX the driver refuses) is built by the root `build.rs` into a fat binary of its
//! own, registered in `register.c`, a `KernelWord` that `KernelWord::call_only` names (only `call func=WORD`
//! launches it), and an `ImageWord` for its bytes; the reproducers cannot build such an image with their one nvcc
//! command, so `repro::header_with` embeds the same bytes and registers them as `register.c` does.
//!
//! **A probe callback** for the generic call's `callback` parameters (e.g. one of a new callback type): a variant
//! of `CallbackWord` in `case/words.rs` with its word, the type it fits (`c_type`) and the reproducer's function
//! (`c_function`); the compiler then names `exec/probe_callbacks.rs`, where its Rust `extern "C"` function goes;
//! the C function of the same behaviour goes in `repro/header.h` (namespace `cc`), and its row in the class table of
//! `cases/README.md`. Each probe only counts (in its user data, when not NULL), so it is valid wherever its type is.
//!
//! **A report format** (e.g. JUnit): a module in `report/` that renders [`record::Report`] (plain serde data, so it
//! works from a saved JSON report too), and a flag or a `summary --format` value in `src/cli/reports.rs`.

// The module docs name the private items a reader of the code goes to next (`cargo doc --document-private-items`
// renders those links); on docs.rs they show as plain names.
#![allow(rustdoc::private_intra_doc_links)]

pub mod record;

pub mod api;

pub mod case;
pub mod device;
pub mod exec;
pub mod readings;
pub mod report;
pub mod repro;

pub mod claims;
pub mod runner;

pub mod figures;
