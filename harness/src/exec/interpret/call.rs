//! `call FUNCTION [PARAM=VALUE ...]`: any function of the API table, through its generated caller
//! (`api::generated`). Each argument is built as the bytes of its C value from the value the case wrote, or from
//! its parameter's class where it wrote none (`case/call.rs`); `repro/call.rs` writes the same arguments in C++.

use super::Step;
use crate::api::generated::Args;
use crate::api::{self, max_of, ParamClass, OUT_BYTES};
use crate::case::call::{ArgValue, ArgWord, Call, CallArg, ObjectKind};
use crate::exec::graph_api;
use crate::record::observations::OpValue;
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

pub(super) fn call(x: Step, call: &Call) -> Result<(), String> {
    let Step { ctx, st, op, t, .. } = x;
    let row = api::function(&call.function).ok_or_else(|| format!("{} is not in the API table", call.function))?;
    let caller = row.callable.ok_or_else(|| format!("{} has no caller (not in the bindings)", row.name))?;
    let mut scratch = Scratch::default();
    let mut args = Args::default();
    let mut outputs: Vec<(&str, *mut c_void, usize)> = Vec::new();
    for param in &row.params {
        let target = Target {
            class: param.class.clone(),
            rust_type: caller.params.iter().find(|p| p.name == param.name).map_or("", |p| p.rust_type),
            size: param.size,
            pointee_size: param.pointee_size,
        };
        let given = call.args.iter().find(|a| a.name == param.name).map(|a| &a.value);
        let value = match given {
            Some(v) => bytes(ctx, st, &target, v, &mut scratch)?,
            None => default(ctx, &target, &mut scratch),
        };
        if matches!(given, None | Some(ArgValue::Word(ArgWord::Out))) && target.class == ParamClass::Out {
            outputs.push((param.name, pointer_of(&value), param.pointee_size));
        }
        args.bytes.push(value);
    }
    // SAFETY: every pointer argument is NULL, scratch of OUT_BYTES (or the struct's size) alive until after the
    // call, or a pointer to an object of the case of the kind its parameter takes; see `api::generated::GenFunction`.
    let ok = t.call(|| unsafe { (caller.call)(&args) });
    if ok {
        let label = op.label.as_deref();
        for (i, (name, ptr, size)) in outputs.iter().enumerate() {
            let size = (*size).clamp(1, OUT_BYTES);
            // SAFETY: ptr is a scratch block of OUT_BYTES bytes.
            let written = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), size) }.to_vec();
            if i == 0 {
                t.value(OpValue::Number(number(&written)));
            }
            if let Some(label) = label {
                st.handles.call_outputs.insert(format!("{label}.{name}"), written);
            }
        }
    }
    drop(scratch);
    Ok(())
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

/// The argument of a parameter the case did not name: its class's default.
fn default(ctx: &super::Ctx, target: &Target, scratch: &mut Scratch) -> Vec<u8> {
    match &target.class {
        ParamClass::Out => ptr_bytes(scratch.block(OUT_BYTES), target.size),
        ParamClass::InStruct(_) => ptr_bytes(scratch.block(target.pointee_size.max(1)), target.size),
        ParamClass::Device => int_bytes(i128::from(ctx.devices.ordinal(0)), target.size),
        ParamClass::Function => ptr_bytes(ctx.kernels.get(crate::case::words::KernelWord::Spin), target.size),
        _ => vec![0; target.size],
    }
}

fn bytes(
    ctx: &super::Ctx,
    st: &mut super::Objects,
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
        ArgValue::Device(d) => int_bytes(i128::from(ctx.devices.ordinal(*d)), size),
        ArgValue::Constant(_, v) => int_bytes(*v, size),
        ArgValue::Stream(s) => ptr_bytes(st.stream(s)?.cast(), size),
        ArgValue::Object(name, kind) => {
            let p: *const c_void = match kind {
                ObjectKind::Event => st.event(name)?.cast(),
                ObjectKind::Buffer => st.buffer(name)?.copy_ptr(),
                ObjectKind::Graph => st.graph(name)?.cast(),
                ObjectKind::Exec => st.exec(name)?.cast(),
                ObjectKind::Pool => st.pool(name)?.cast(),
            };
            ptr_bytes(p, size)
        }
        ArgValue::Node(label) => {
            let node = graph_api::dependencies(ctx.case, st, std::slice::from_ref(label))?[0];
            ptr_bytes(node.cast(), size)
        }
        ArgValue::Output { label, param } => {
            let key = format!("{label}.{param}");
            let written = st
                .handles
                .call_outputs
                .get(&key)
                .ok_or_else(|| format!("{key} was not written (its call failed or did not run)"))?;
            let mut v = written.clone();
            v.resize(size, 0);
            v
        }
        ArgValue::Kernel(k) => ptr_bytes(ctx.kernels.get(*k), size),
        ArgValue::Text(text) => {
            let c = CString::new(text.as_str()).map_err(|_| format!("{text:?} holds a NUL byte"))?;
            let p = c.as_ptr().cast::<c_void>();
            scratch.texts.push(c);
            ptr_bytes(p, size)
        }
        ArgValue::Fields(fields) => match &target.class {
            ParamClass::Struct(ty) => struct_bytes(ctx, st, ty, fields, scratch)?,
            // A pointer to the struct (`const T *`, or a `T *` the call reads).
            _ => {
                let ty = match &target.class {
                    ParamClass::InStruct(ty) => ty.as_str(),
                    _ => api::pointee_struct(target.rust_type).map(|s| s.name).ok_or_else(|| {
                        format!("a struct value for a {} parameter", target.class.word())
                    })?,
                };
                let value = struct_bytes(ctx, st, ty, fields, scratch)?;
                ptr_bytes(scratch.block_with(&value), size)
            }
        },
    })
}

/// The bytes of struct `ty` with the fields named set and the rest zero.
fn struct_bytes(
    ctx: &super::Ctx,
    st: &mut super::Objects,
    ty: &str,
    fields: &[CallArg],
    scratch: &mut Scratch,
) -> Result<Vec<u8>, String> {
    let layout = api::structure(ty).ok_or_else(|| format!("no field table for {ty}"))?;
    let mut out = vec![0u8; layout.size];
    for arg in fields {
        let field = layout
            .fields
            .iter()
            .find(|f| f.name == arg.name)
            .ok_or_else(|| format!("{ty} has no field {}", arg.name))?;
        let target = Target {
            class: api::classify("", field.name, field.rust_type),
            rust_type: field.rust_type,
            size: field.size,
            pointee_size: 0,
        };
        let value = bytes(ctx, st, &target, &arg.value, scratch)?;
        let end = (field.offset + field.size).min(out.len());
        out[field.offset..end].copy_from_slice(&value[..end - field.offset]);
    }
    Ok(out)
}
