//! The pieces every family file writes with: the C++ names of the case's objects, operands resolved to C++
//! expressions, and an operation's code (the checks that decide whether it runs, its call, what it records after).

use crate::case::ast::{Case, Decl, MemKind, Op, StreamRef};

/// What every operation's emitter gets: the case, the C++ names of its objects, the operation and its index.
pub struct Step<'a> {
    pub case: &'a Case,
    pub names: &'a Names,
    pub index: usize,
    pub op: &'a Op,
}

/// The C++ of one operation, inside `run.step(i, [&](cc::Op& op) { ... })`: `pre` resolves the operands (and
/// returns early, recording why, when one does not exist), `call` makes the timed CUDA call(s), `post` records
/// what the call changed (slots, values).
#[derive(Debug, Default)]
pub struct Code {
    pub pre: Vec<String>,
    pub call: Vec<String>,
    pub post: Vec<String>,
}

impl Code {
    pub fn pre(&mut self, line: impl Into<String>) -> &mut Self {
        self.pre.push(line.into());
        self
    }
    pub fn call(&mut self, line: impl Into<String>) -> &mut Self {
        self.call.push(line.into());
        self
    }
    pub fn post(&mut self, line: impl Into<String>) -> &mut Self {
        self.post.push(line.into());
        self
    }
    /// Runs only if `check` (an `op.need…(…)` call) holds; else the operation is recorded as not run.
    pub fn need(&mut self, check: String) -> &mut Self {
        self.pre(format!("if (!{check}) return;"))
    }
    /// The operation is never run, for a reason known when the program is written (the executor's words).
    pub fn skip(&mut self, why: &str) -> &mut Self {
        self.pre(format!("op.skip({});", cstr(why)));
        self.pre("return;")
    }
    /// The timed call `expr` (a CUDA call returning cudaError_t), as the executor times it.
    pub fn timed(&mut self, expr: &str) -> &mut Self {
        self.call(format!("op.call([&] {{ return {expr}; }});"))
    }
}

/// A stream operand in C++: the handle expression, and the declared stream it needs (built-ins need none).
pub struct StreamExpr {
    pub var: Option<String>,
    pub h: String,
}

impl StreamExpr {
    /// A C++ condition: the stream exists.
    pub fn ready(&self) -> String {
        self.var.as_ref().map_or("true".to_owned(), |v| format!("{v}.ready()"))
    }
    /// Adds the check that the stream exists.
    pub fn need(&self, code: &mut Code) {
        if let Some(v) = &self.var {
            code.need(format!("op.need({v})"));
        }
    }
}

/// A buffer or slice operand: its C++ variable, memory kind (a slice's is its buffer's) and size.
#[derive(Clone)]
pub struct BufferInfo {
    pub var: String,
    pub kind: MemKind,
    pub bytes: u64,
}

/// The C++ variable of every declared name, by its kind.
pub struct Names {
    decls: Vec<Decl>,
}

impl Names {
    pub fn of(case: &Case) -> Names {
        Names { decls: case.decls.clone() }
    }

    pub fn decl(&self, name: &str) -> Option<&Decl> {
        self.decls.iter().find(|d| d.name() == name)
    }

    /// `stream_s`, `buf_d`, ...: a prefix by kind, and the name with every character C++ does not allow in an
    /// identifier replaced by `_`.
    pub fn var(&self, name: &str) -> String {
        let prefix = match self.decl(name) {
            Some(Decl::Stream { .. }) => "stream",
            Some(Decl::Event { .. }) => "event",
            Some(Decl::Buffer { .. } | Decl::Slice { .. }) => "buf",
            Some(Decl::Gate { .. }) => "gate",
            Some(Decl::Thread { .. }) => "thread",
            Some(Decl::Graph { .. }) => "graph",
            Some(Decl::Exec { .. }) => "exec",
            Some(Decl::Pool { .. }) => "pool",
            Some(Decl::Condition { .. }) => "cond",
            Some(Decl::Process { .. }) => "process",
            None => "undeclared",
        };
        format!("{prefix}_{}", ident(name))
    }

    pub fn stream(&self, s: &StreamRef) -> StreamExpr {
        match s {
            StreamRef::Legacy => StreamExpr { var: None, h: "cudaStreamLegacy".into() },
            StreamRef::PerThread => StreamExpr { var: None, h: "cudaStreamPerThread".into() },
            StreamRef::Null => StreamExpr { var: None, h: "(cudaStream_t)0".into() },
            StreamRef::Named(name) => {
                let v = self.var(name);
                StreamExpr { h: format!("{v}.h"), var: Some(v) }
            }
        }
    }

    /// A buffer or slice, or why the name is none.
    pub fn buffer(&self, name: &str) -> Result<BufferInfo, String> {
        match self.decl(name) {
            Some(Decl::Buffer { kind, bytes, .. }) => {
                Ok(BufferInfo { var: self.var(name), kind: *kind, bytes: *bytes })
            }
            Some(Decl::Slice { of, bytes, .. }) => {
                let parent = self.buffer(of)?;
                Ok(BufferInfo { var: self.var(name), bytes: *bytes, ..parent })
            }
            _ => Err(format!("no buffer {name} is declared")),
        }
    }

    /// A buffer a kernel uses: never pageable memory, at most 2^32 words (the executor's refusals).
    pub fn kernel_buffer(&self, name: &str, code: &mut Code) -> Result<(String, u64), String> {
        let b = self.buffer(name)?;
        code.need(format!("op.need({})", b.var));
        if b.kind == MemKind::Pageable {
            code.skip(&format!("kernels cannot use pageable buffer {name}"));
        } else if b.bytes / 4 > u64::from(u32::MAX) {
            code.skip(&format!("buffer {name} has more than 2^32 words"));
        }
        Ok((b.var, b.bytes / 4))
    }

    /// The script index of the operation labelled `label`.
    pub fn labelled(case: &Case, label: &str) -> Option<usize> {
        case.script.iter().position(|op| op.label.as_deref() == Some(label))
    }
}

/// Declares `cudaGraphNode_t NAME[...]` with the nodes the labels name (the executor's `dependencies`), each
/// resolved at run time; the pointer expression and the count.
pub fn dependencies(x: &Step, code: &mut Code, var: &str, labels: &[String]) -> (String, usize) {
    if labels.is_empty() {
        return ("nullptr".to_owned(), 0);
    }
    code.pre(format!("cudaGraphNode_t {var}[{}] = {{}};", labels.len()));
    for (i, label) in labels.iter().enumerate() {
        match Names::labelled(x.case, label) {
            Some(at) => {
                code.need(format!("run.node(op, {at}, {}, {var}[{i}])", cstr(label)));
            }
            None => {
                code.skip(&format!("no operation is labelled {label}"));
            }
        }
    }
    (var.to_owned(), labels.len())
}

/// The byte count of a copy or memset: as written, or the whole (smaller) buffer; never past a buffer's end (the
/// executor does not run the operation then).
pub fn byte_count(code: &mut Code, bytes: Option<u64>, limit: u64) -> u64 {
    let n = bytes.unwrap_or(limit);
    if n > limit {
        code.skip(&format!("{n} bytes do not fit ({limit} bytes available)"));
    }
    n
}

/// The cudaMemcpyKind of a copy from `src` to `dst`: pinned, pageable and mapped memory are host memory.
pub fn memcpy_kind(dst: MemKind, src: MemKind) -> &'static str {
    match (src.is_host(), dst.is_host()) {
        (true, true) => "cudaMemcpyHostToHost",
        (true, false) => "cudaMemcpyHostToDevice",
        (false, true) => "cudaMemcpyDeviceToHost",
        (false, false) => "cudaMemcpyDeviceToDevice",
    }
}

/// A C++ string literal.
/// The statement that keeps C variable `var` (a plain value: `sizeof var` bytes) as `key` in `run.call_outputs`, where
/// a later call's `L.param` argument reads it: an exported descriptor as `L.fd`, a Vulkan memory's `L.size`.
pub fn keep_value(key: &str, var: &str) -> String {
    format!(
        "run.call_outputs[{}] = std::vector<unsigned char>((const unsigned char*)&{var}, (const unsigned char*)&{var} + sizeof {var});",
        cstr(key)
    )
}

pub fn cstr(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text for a `//` comment line: a trailing backslash would continue the comment onto the next line of code.
pub fn comment_text(s: &str) -> String {
    let s = s.trim_end();
    if s.ends_with('\\') {
        format!("{s} (end)")
    } else {
        s.to_owned()
    }
}

/// A name as a C++ identifier part.
pub fn ident(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// A u64 as a C++ literal.
pub fn u64_lit(v: u64) -> String {
    format!("{v}ull")
}
