//! `call FUNCTION [PARAM=VALUE ...]`: any function of the API table, through its generated caller
//! (`api::generated`). Each argument is built as the bytes of its C value from the value the case wrote, or from
//! its parameter's class where it wrote none (`case/call.rs`); `repro/call.rs` writes the same arguments in C++.

use super::Step;
use crate::api::generated::Args;
use crate::api::{self, max_of, ParamClass, OUT_BYTES};
use crate::case::ast::StreamRef;
use crate::case::call::{ArgValue, ArgWord, Call, CallArg, ObjectKind, TMP};
use crate::case::words::{ImageWord, KernelWord, SymbolWord, Word as _};
use crate::device::kernels::KernelTable;
use crate::exec::graph_api;
use crate::record::observations::{CallOutput, OpValue};
use cuda_sys as sys;
use std::ffi::{c_void, CString};

/// What an argument's value is read as: a parameter, or a field of a struct argument.
struct Target<'a> {
    class: ParamClass,
    rust_type: &'a str,
    size: usize,
    pointee_size: usize,
}

/// Memory the arguments point to, alive until the call returns. `u128` words: aligned for any C type.
#[derive(Default)]
struct Scratch {
    blocks: Vec<Vec<u128>>,
    texts: Vec<CString>,
}

impl Scratch {
    fn block(&mut self, bytes: usize) -> *mut c_void {
        self.blocks.push(vec![0u128; bytes.div_ceil(16).max(1)]);
        self.blocks.last_mut().unwrap().as_mut_ptr().cast()
    }

    fn block_with(&mut self, bytes: &[u8]) -> *mut c_void {
        let p = self.block(bytes.len());
        // SAFETY: the block holds at least bytes.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.cast::<u8>(), bytes.len()) };
        p
    }
}

/// The table row and the caller of `call`, or why it cannot be made.
fn resolve(call: &Call) -> Result<(&'static api::ApiFunction, &'static api::generated::GenFunction), String> {
    if let Some((why, _)) = &call.unresolved {
        return Err(format!("not in the API table of this build's header: {why}"));
    }
    let row = api::function(&call.function).ok_or_else(|| format!("{} is not in the API table", call.function))?;
    let caller = row.callable.ok_or_else(|| format!("{} has no caller (not in the bindings)", row.name))?;
    Ok((row, caller))
}

impl Target<'static> {
    /// Parameter `param` of the row whose generated caller is `caller`.
    fn of(param: &api::Param, caller: &'static api::generated::GenFunction) -> Self {
        Target {
            class: param.class.clone(),
            rust_type: caller.params.iter().find(|p| p.name == param.name).map_or("", |p| p.rust_type),
            size: param.size,
            pointee_size: param.pointee_size,
        }
    }
}

pub(super) fn call(x: Step, call: &Call) -> Result<(), String> {
    let Step { ctx, st, op, t, .. } = x;
    let (row, caller) = resolve(call)?;
    let mut scratch = Scratch::default();
    let mut args = Args::default();
    let mut outputs: Vec<OutputSlot> = Vec::new();
    for param in &row.params {
        let target = Target::of(param, caller);
        let given = call.args.iter().find(|a| a.name == param.name).map(|a| &a.value);
        let mut operands = CaseOperands { ctx, st: &mut *st };
        let value = match given {
            Some(v) => bytes(&mut operands, &target, v, &mut scratch)?,
            None => default(&operands, &target, &mut scratch),
        };
        outputs.extend(output_slot(row, param, &target, given, &value));
        args.bytes.push(value);
    }
    // SAFETY: every pointer argument is NULL, scratch of OUT_BYTES (or the struct's size) alive until after the
    // call, or a pointer to an object of the case of the kind its parameter takes; see `api::generated::GenFunction`.
    let ok = t.call(|| unsafe { (caller.call)(&args) });
    if ok {
        note_registration(row, &args, &mut st.call_registrations);
        let label = op.label.as_deref();
        let (values, written) = read_outputs(&outputs);
        if let Some(label) = label {
            for (name, bytes) in written {
                st.handles.call_outputs.insert(format!("{label}.{name}"), bytes);
            }
        }
        if !values.is_empty() {
            t.value(OpValue::Outputs(values));
        }
    }
    drop(scratch);
    Ok(())
}

/// Keeps `registrations` (the host ranges the case's calls registered, by base address) up to date after a
/// successful call of `row` with `args`: a registration outlives the case unless it is undone, and cleanup undoes
/// what the script did not.
fn note_registration(row: &api::ApiFunction, args: &Args, registrations: &mut Vec<usize>) {
    let base = || {
        let at = row.params.iter().position(|p| p.name == "ptr")?;
        Some(pointer_of(args.bytes.get(at)?) as usize)
    };
    match row.name.as_str() {
        "cudaHostRegister" => registrations.extend(base()),
        "cudaHostUnregister" => {
            if let Some(base) = base() {
                registrations.retain(|&r| r != base);
            }
        }
        _ => {}
    }
}

/// An output parameter's scratch after the call: its name, the block, its size, whether it varies, whether it is a
/// text.
type OutputSlot<'a> = (&'a str, *mut c_void, usize, bool, bool);

/// The slot of parameter `param`, passed as `value`, if it is an output the call fills: an `Out` parameter the case
/// left to its default or wrote as `out`.
fn output_slot(
    row: &api::ApiFunction,
    param: &api::Param,
    target: &Target,
    given: Option<&ArgValue>,
    value: &[u8],
) -> Option<OutputSlot<'static>> {
    (matches!(given, None | Some(ArgValue::Word(ArgWord::Out))) && target.class == ParamClass::Out).then(|| {
        (
            param.name,
            pointer_of(value),
            param.pointee_size,
            api::output_varies(&row.name, param.name, target.rust_type),
            api::is_text_output(target.rust_type),
        )
    })
}

/// What a successful call wrote into its outputs: the value the executor records (each output's first bytes as a
/// number, as the reproducer reads them) and each output's bytes, kept for a later call's `L.param`.
fn read_outputs<'a>(outputs: &[OutputSlot<'a>]) -> (Vec<CallOutput>, Vec<(&'a str, Vec<u8>)>) {
    let mut values = Vec::new();
    let mut written = Vec::new();
    for &(name, ptr, size, varies, text) in outputs {
        // SAFETY: ptr is a scratch block of OUT_BYTES bytes, alive while the caller's scratch is.
        let block = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), OUT_BYTES) };
        // A text is kept up to and with its NUL (what a later call's text argument passes).
        let size = match text {
            true => block.iter().position(|&b| b == 0).map_or(OUT_BYTES, |n| n + 1),
            false => size.clamp(1, OUT_BYTES),
        };
        let bytes = block[..size].to_vec();
        values.push(CallOutput { param: name.to_owned(), value: number(&bytes), varies });
        written.push((name, bytes));
    }
    (values, written)
}

/// The first output as a number: its first (up to) 8 bytes, little-endian, as the reproducer reads it.
pub fn number(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = bytes.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(b)
}

fn pointer_of(bytes: &[u8]) -> *mut c_void {
    number(bytes) as usize as *mut c_void
}

fn ptr_bytes(p: *const c_void, size: usize) -> Vec<u8> {
    int_bytes(p as usize as i128, size)
}

/// `v` in `size` bytes, two's complement, little-endian.
fn int_bytes(v: i128, size: usize) -> Vec<u8> {
    v.to_le_bytes().iter().copied().chain(std::iter::repeat(if v < 0 { 0xff } else { 0 })).take(size).collect()
}

/// What the arguments name, resolved: a case's objects, or none at all ([`BareOperands`]).
trait Operands {
    /// The ordinal of the case's device `index`.
    fn device(&self, index: u32) -> i32;
    fn kernel(&self, k: KernelWord) -> Result<*const c_void, String>;
    /// A registered device variable (`cc_symbol`, ...), by its host address.
    fn symbol(&self, s: SymbolWord) -> Result<*const c_void, String>;
    /// The bytes of an image of the kernel table.
    fn image(&self, i: ImageWord) -> &'static [u8];
    fn stream(&self, s: &StreamRef) -> Result<*const c_void, String>;
    fn object(&self, name: &str, kind: ObjectKind) -> Result<*const c_void, String>;
    fn node(&self, label: &str) -> Result<*const c_void, String>;
    fn output(&self, key: &str) -> Result<Vec<u8>, String>;
    /// The case's private directory, for `{tmp}` in a text argument.
    fn private_dir(&mut self) -> Result<String, String>;
}

struct CaseOperands<'a, 'c> {
    ctx: &'a super::Ctx<'c>,
    st: &'a mut super::Objects,
}

impl Operands for CaseOperands<'_, '_> {
    fn device(&self, index: u32) -> i32 {
        self.ctx.devices.ordinal(index)
    }
    fn private_dir(&mut self) -> Result<String, String> {
        let dir = match &mut self.st.handles.private_dir {
            Some(dir) => dir,
            none => none.insert(crate::exec::handles::PrivateDir::new()?),
        };
        Ok(dir.path().display().to_string())
    }
    fn kernel(&self, k: KernelWord) -> Result<*const c_void, String> {
        Ok(self.ctx.kernels.get(k))
    }
    fn symbol(&self, s: SymbolWord) -> Result<*const c_void, String> {
        Ok(self.ctx.kernels.symbol(s))
    }
    fn image(&self, i: ImageWord) -> &'static [u8] {
        self.ctx.kernels.image(i)
    }
    fn stream(&self, s: &StreamRef) -> Result<*const c_void, String> {
        Ok(self.st.stream(s)?.cast())
    }
    fn object(&self, name: &str, kind: ObjectKind) -> Result<*const c_void, String> {
        Ok(match kind {
            ObjectKind::Event => self.st.event(name)?.cast(),
            ObjectKind::Buffer => self.st.buffer(name)?.copy_ptr(),
            ObjectKind::Graph => self.st.graph(name)?.cast(),
            ObjectKind::Exec => self.st.exec(name)?.cast(),
            ObjectKind::Pool => self.st.pool(name)?.cast(),
        })
    }
    fn node(&self, label: &str) -> Result<*const c_void, String> {
        Ok(graph_api::dependencies(self.ctx.case, self.st, &[label.to_owned()])?[0].cast())
    }
    fn output(&self, key: &str) -> Result<Vec<u8>, String> {
        self.st
            .handles
            .call_outputs
            .get(key)
            .cloned()
            .ok_or_else(|| format!("{key} was not written (its call failed or did not run)"))
    }
}

/// No case objects: what a call can name where no device is visible (`env: CUDA_VISIBLE_DEVICES=-1`) or on a host
/// without a driver (`requires: no-driver`): numbers, constants, built-in streams, and the probe kernels and their
/// variable (their registration makes no driver call, so they exist without a device).
struct BareOperands<'k> {
    kernels: &'k KernelTable,
}

impl Operands for BareOperands<'_> {
    fn device(&self, index: u32) -> i32 {
        index as i32
    }
    fn private_dir(&mut self) -> Result<String, String> {
        Err("`{tmp}` names the case's directory, which a call without a device does not make".into())
    }
    fn kernel(&self, k: KernelWord) -> Result<*const c_void, String> {
        Ok(self.kernels.get(k))
    }
    fn symbol(&self, s: SymbolWord) -> Result<*const c_void, String> {
        Ok(self.kernels.symbol(s))
    }
    fn image(&self, i: ImageWord) -> &'static [u8] {
        self.kernels.image(i)
    }
    fn stream(&self, s: &StreamRef) -> Result<*const c_void, String> {
        match s {
            StreamRef::Legacy => Ok(sys::cudaStreamLegacy.cast()),
            StreamRef::PerThread => Ok(sys::cudaStreamPerThread.cast()),
            StreamRef::Null => Ok(std::ptr::null()),
            StreamRef::Named(n) => Err(format!("no declared objects without a driver (stream `{n}`)")),
        }
    }
    fn object(&self, name: &str, _: ObjectKind) -> Result<*const c_void, String> {
        Err(format!("no declared objects without a driver (`{name}`)"))
    }
    fn node(&self, label: &str) -> Result<*const c_void, String> {
        Err(format!("no graph nodes without a driver (`{label}`)"))
    }
    fn output(&self, key: &str) -> Result<Vec<u8>, String> {
        Err(format!("no earlier call's outputs here (`{key}`)"))
    }
}

/// Calls `call` with no case around it: every argument a number, a constant, a built-in stream, `null`, `out`,
/// text or a struct of those, or a probe kernel or `cc_symbol` of `kernels`. Its code, and on success
/// what it wrote into its outputs (recorded as `call` records them). What `tests/no_driver.rs` runs for the
/// `no-driver` sweep on a host without a driver, and the `no-device` sweep's worker (`exec::run_bare`).
pub fn call_bare(call: &Call, kernels: &KernelTable) -> Result<(sys::cudaError_t, Vec<CallOutput>), String> {
    let (row, caller) = resolve(call)?;
    let mut scratch = Scratch::default();
    let mut args = Args::default();
    let mut outputs: Vec<OutputSlot> = Vec::new();
    for param in &row.params {
        let target = Target::of(param, caller);
        let given = call.args.iter().find(|a| a.name == param.name).map(|a| &a.value);
        let value = match given {
            Some(v) => bytes(&mut BareOperands { kernels }, &target, v, &mut scratch)?,
            None => default(&BareOperands { kernels }, &target, &mut scratch),
        };
        outputs.extend(output_slot(row, param, &target, given, &value));
        args.bytes.push(value);
    }
    // SAFETY: as in `call`: NULL, scratch alive until after the call, or built-in stream handles.
    let code = unsafe { (caller.call)(&args) };
    let values = match code == sys::cudaError_t::cudaSuccess {
        true => read_outputs(&outputs).0,
        false => Vec::new(),
    };
    drop(scratch);
    Ok((code, values))
}

/// The argument of a parameter the case did not name: its class's default.
fn default(operands: &impl Operands, target: &Target, scratch: &mut Scratch) -> Vec<u8> {
    match &target.class {
        ParamClass::Out => ptr_bytes(scratch.block(OUT_BYTES), target.size),
        ParamClass::InStruct(_) => ptr_bytes(scratch.block(target.pointee_size.max(1)), target.size),
        ParamClass::Device => int_bytes(i128::from(operands.device(0)), target.size),
        ParamClass::Function => {
            operands.kernel(KernelWord::Spin).map_or(vec![0; target.size], |k| ptr_bytes(k, target.size))
        }
        _ => vec![0; target.size],
    }
}

fn bytes(
    operands: &mut impl Operands,
    target: &Target,
    value: &ArgValue,
    scratch: &mut Scratch,
) -> Result<Vec<u8>, String> {
    let size = target.size;
    Ok(match value {
        ArgValue::Word(ArgWord::Null) => vec![0; size],
        ArgValue::Word(ArgWord::Out) => ptr_bytes(scratch.block(OUT_BYTES), size),
        ArgValue::Word(ArgWord::Count) => {
            let mut n = 0;
            // SAFETY: n is a valid out-pointer.
            let _ = unsafe { sys::cudaGetDeviceCount(&mut n) };
            int_bytes(i128::from(n.max(0)), size)
        }
        ArgValue::Word(ArgWord::Max) => int_bytes(max_of(target.rust_type, size), size),
        ArgValue::Int(n) => int_bytes(*n, size),
        ArgValue::Device(d) => int_bytes(i128::from(operands.device(*d)), size),
        ArgValue::Constant(_, v) => int_bytes(*v, size),
        ArgValue::Stream(s) => ptr_bytes(operands.stream(s)?, size),
        ArgValue::Object(name, kind) => ptr_bytes(operands.object(name, *kind)?, size),
        ArgValue::Node(label) => ptr_bytes(operands.node(label)?, size),
        // A text an earlier call wrote (`pciBusId=b.pciBusId`): a pointer to it, up to its NUL.
        ArgValue::Output { label, param } if target.class == ParamClass::Text => {
            let written = operands.output(&format!("{label}.{param}"))?;
            let text = written.split(|&b| b == 0).next().unwrap_or_default().to_vec();
            let c = CString::new(text).map_err(|_| format!("{label}.{param} holds no text"))?;
            let p = c.as_ptr().cast::<c_void>();
            scratch.texts.push(c);
            ptr_bytes(p, size)
        }
        // An array of one element an earlier call wrote (`extSemArray=i.extSem_out`, with a count of 1): a pointer
        // to a copy of it.
        ArgValue::Output { label, param } if matches!(target.class, ParamClass::InArray(_)) => {
            let written = operands.output(&format!("{label}.{param}"))?;
            ptr_bytes(scratch.block_with(&written), size)
        }
        ArgValue::Output { label, param } => {
            let mut v = operands.output(&format!("{label}.{param}"))?;
            v.resize(size, 0);
            v
        }
        ArgValue::Kernel(k) => ptr_bytes(operands.kernel(*k)?, size),
        ArgValue::Callback(c) => ptr_bytes(crate::exec::probe_callbacks::address(*c), size),
        ArgValue::Symbol(s) => ptr_bytes(operands.symbol(*s)?, size),
        ArgValue::Image(i) => ptr_bytes(operands.image(*i).as_ptr().cast(), size),
        ArgValue::ImageFile(i) => {
            let path = format!("{}/{}", operands.private_dir()?, i.word());
            std::fs::write(&path, operands.image(*i)).map_err(|e| format!("{path}: {e}"))?;
            let c = CString::new(path).map_err(|_| "a path with a NUL byte".to_owned())?;
            let p = c.as_ptr().cast::<c_void>();
            scratch.texts.push(c);
            ptr_bytes(p, size)
        }
        ArgValue::Text(text) => {
            let text = match text.contains(TMP) {
                true => text.replace(TMP, &operands.private_dir()?),
                false => text.clone(),
            };
            let c = CString::new(text.as_str()).map_err(|_| format!("{text:?} holds a NUL byte"))?;
            let p = c.as_ptr().cast::<c_void>();
            scratch.texts.push(c);
            ptr_bytes(p, size)
        }
        ArgValue::Fields(fields) => match &target.class {
            ParamClass::Struct(ty) => struct_bytes(operands, ty, fields, scratch)?,
            // A pointer to the struct (`const T *`, or a `T *` the call reads).
            _ => {
                let ty = match &target.class {
                    ParamClass::InStruct(ty) => ty.as_str(),
                    _ => api::pointee_struct(target.rust_type)
                        .map(|s| s.name)
                        .ok_or_else(|| format!("a struct value for a {} parameter", target.class.word()))?,
                };
                let value = struct_bytes(operands, ty, fields, scratch)?;
                ptr_bytes(scratch.block_with(&value), size)
            }
        },
    })
}

/// The bytes of struct `ty` with the fields named set and the rest zero.
fn struct_bytes(
    operands: &mut impl Operands,
    ty: &str,
    fields: &[CallArg],
    scratch: &mut Scratch,
) -> Result<Vec<u8>, String> {
    let layout = api::structure(ty).ok_or_else(|| format!("no field table for {ty}"))?;
    let mut out = vec![0u8; layout.size];
    for arg in fields {
        let (offset, field) = api::field(layout, &arg.name).ok_or_else(|| format!("{ty} has no field {}", arg.name))?;
        let target = Target {
            class: api::field_class(field.name, field.rust_type),
            rust_type: field.rust_type,
            size: field.size,
            pointee_size: 0,
        };
        let value = bytes(operands, &target, &arg.value, scratch)?;
        let end = (offset + field.size).min(out.len());
        out[offset..end].copy_from_slice(&value[..end - offset]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registration_a_call_made_is_kept_until_a_call_unregisters_its_base() {
        let register = api::function("cudaHostRegister").unwrap();
        let unregister = api::function("cudaHostUnregister").unwrap();
        let base = 0x7f00_1234_0000usize;
        let args = |ptr: usize, params: usize| Args {
            bytes: std::iter::once(ptr.to_le_bytes().to_vec()).chain((1..params).map(|_| vec![0u8; 8])).collect(),
        };
        let mut kept = Vec::new();
        note_registration(register, &args(base, register.params.len()), &mut kept);
        assert_eq!(kept, [base]);
        // An interior address unregisters nothing (the page says the base address must be given).
        note_registration(unregister, &args(base + 4096, 1), &mut kept);
        assert_eq!(kept, [base]);
        note_registration(api::function("cudaFree").unwrap(), &args(base, 1), &mut kept);
        assert_eq!(kept, [base]);
        note_registration(unregister, &args(base, 1), &mut kept);
        assert!(kept.is_empty());
    }
}
