//! The generic call: `call FUNCTION [PARAM=VALUE ...]` calls any function of the API table (`api::table`) by
//! name. Arguments are named by the parameter names of the header; a parameter not named gets its class's default
//! (`api::ParamClass`: an output gets zeroed scratch, a device the case's device 0, everything else zero/NULL). The
//! parser reads each value as its parameter's class asks (a stream for a `cudaStream_t`, a declared buffer for a
//! `void *`, a constant for an enum, `{field=value ...}` for a struct), so a misspelt function, parameter, field or
//! object is an error at its column. This file holds the syntax tree and its printing; `parse.rs` the grammar.

use super::ast::{OpWord, Operand, StreamRef};
use super::words::{words, CallbackWord, ImageWord, KernelWord, SymbolWord, Word};

words! {
    /// The values every parameter class takes.
    pub enum ArgWord: "an argument value" {
        /// NULL, or zero.
        Null = "null",
        /// Zeroed scratch the call writes (the default of an output pointer).
        Out = "out",
        /// `cudaGetDeviceCount`'s count: one past the last device ordinal.
        Count = "count",
        /// The largest value of the parameter's type (INT_MAX for an `int`, all ones for an unsigned).
        Max = "max",
    }
}

/// In a text argument, the directory a run of the case makes for it alone (`path={tmp}/g.dot`): the executor's is
/// removed at cleanup, the reproducer's when it exits.
pub const TMP: &str = "{tmp}";

/// The probes' variable's word (`SymbolWord::Probe`): `symbol=cc_symbol`.
pub const PROBE_SYMBOL: &str = "cc_symbol";

/// The declared objects an argument may name, by the kind its parameter's type asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Event,
    Buffer,
    Graph,
    Exec,
    Pool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    Word(ArgWord),
    Int(i128),
    /// A device parameter's non-negative number: the case's device N (its ordinal on this host).
    Device(u32),
    /// A constant of the bindings (`cudaMemcpyHostToDevice`, `cudaHostRegisterMapped`) and its value.
    Constant(String, i128),
    Stream(StreamRef),
    Object(String, ObjectKind),
    /// A graph node, by the label of the operation that made it.
    Node(String),
    /// `L.param`: what the call labelled L wrote into its output `param` (an array, a library, a pointer, ...).
    Output {
        label: String,
        param: String,
    },
    /// A probe kernel (a function parameter, or a symbol parameter that asks for a kernel's host stub:
    /// cudaGetFuncBySymbol's `symbolPtr`): its host stub.
    Kernel(KernelWord),
    /// A probe callback (a callback parameter of its type): the function.
    Callback(CallbackWord),
    /// A symbol parameter's value: a registered `__device__` variable (`cc_symbol`, the probes'), by its host address.
    Symbol(SymbolWord),
    /// An image's bytes (a memory parameter: `code=sm80-fatbin`).
    Image(ImageWord),
    /// A file holding an image (a text parameter: `fileName=sm80-fatbin`), written in the case's private directory.
    ImageFile(ImageWord),
    /// A name or a path (a `const char *` parameter), as written; [`TMP`] in it names a directory of the case's own.
    Text(String),
    /// `{field=value ...}`: a struct, by value or pointed to; fields not named are zero.
    Fields(Vec<CallArg>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CallArg {
    pub name: String,
    pub value: ArgValue,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub function: String,
    pub args: Vec<CallArg>,
    /// A call this build's API table cannot resolve (a binary built against an older header than the suite's):
    /// why, and the arguments as written. It is not run.
    pub unresolved: Option<(String, String)>,
}

impl Call {
    /// The stream argument, where one is named.
    pub fn stream(&self) -> Option<&StreamRef> {
        all_values(&self.args).find_map(|v| match v {
            ArgValue::Stream(s) => Some(s),
            _ => None,
        })
    }

    /// The probe kernels the arguments name (`func=WORD`).
    pub fn kernels(&self) -> impl Iterator<Item = KernelWord> + '_ {
        all_values(&self.args).filter_map(|v| match v {
            ArgValue::Kernel(k) => Some(*k),
            _ => None,
        })
    }

    /// The case devices the arguments name.
    pub fn devices(&self) -> Vec<u32> {
        all_values(&self.args)
            .filter_map(|v| match v {
                ArgValue::Device(d) => Some(*d),
                _ => None,
            })
            .collect()
    }

    /// The names and labels the arguments use, for the validator.
    pub fn operands(&self) -> Vec<Operand<'_>> {
        all_values(&self.args)
            .filter_map(|v| match v {
                ArgValue::Stream(s) => Some(Operand::Stream(s)),
                ArgValue::Object(name, kind) => Some(match kind {
                    ObjectKind::Event => Operand::Event(name),
                    ObjectKind::Buffer => Operand::Buffer(name),
                    ObjectKind::Graph => Operand::Graph(name),
                    ObjectKind::Exec => Operand::Exec(name),
                    ObjectKind::Pool => Operand::Pool(name),
                }),
                ArgValue::Node(label) => Some(Operand::Node(label)),
                ArgValue::Output { label, .. } => Some(Operand::Made(label, OpWord::Call)),
                _ => None,
            })
            .collect()
    }

    /// The outputs of earlier calls the arguments pass (`L.param`): (L, param).
    pub fn outputs_used(&self) -> Vec<(&str, &str)> {
        all_values(&self.args)
            .filter_map(|v| match v {
                ArgValue::Output { label, param } => Some((label.as_str(), param.as_str())),
                _ => None,
            })
            .collect()
    }

    /// `FUNCTION a=v ...` as written.
    pub fn text(&self) -> String {
        if let Some((_, raw)) = &self.unresolved {
            return if raw.is_empty() { self.function.clone() } else { format!("{} {raw}", self.function) };
        }
        let mut out = self.function.clone();
        for arg in &self.args {
            out.push(' ');
            out.push_str(&arg_text(arg));
        }
        out
    }
}

/// Every value of the arguments, the fields of struct values included.
pub(crate) fn all_values(args: &[CallArg]) -> impl Iterator<Item = &ArgValue> {
    let mut stack: Vec<&ArgValue> = args.iter().rev().map(|a| &a.value).collect();
    std::iter::from_fn(move || {
        let v = stack.pop()?;
        if let ArgValue::Fields(fields) = v {
            stack.extend(fields.iter().rev().map(|a| &a.value));
        }
        Some(v)
    })
}

fn arg_text(arg: &CallArg) -> String {
    format!("{}={}", arg.name, value_text(&arg.value))
}

pub fn value_text(value: &ArgValue) -> String {
    match value {
        ArgValue::Word(w) => w.word().to_owned(),
        ArgValue::Int(n) => n.to_string(),
        ArgValue::Device(d) => d.to_string(),
        ArgValue::Constant(name, _) => name.clone(),
        ArgValue::Stream(s) => s.name().to_owned(),
        ArgValue::Object(name, _) | ArgValue::Node(name) | ArgValue::Text(name) => name.clone(),
        ArgValue::Output { label, param } => format!("{label}.{param}"),
        ArgValue::Kernel(k) => k.word().to_owned(),
        ArgValue::Callback(c) => c.word().to_owned(),
        ArgValue::Symbol(s) => s.word().to_owned(),
        ArgValue::Image(i) | ArgValue::ImageFile(i) => i.word().to_owned(),
        ArgValue::Fields(fields) => {
            let inner: Vec<String> = fields.iter().map(arg_text).collect();
            format!("{{{}}}", inner.join(" "))
        }
    }
}
