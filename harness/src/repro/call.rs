//! `call FUNCTION [PARAM=VALUE ...]` in C++, as `exec::interpret::call` makes it: one variable per argument, of
//! its parameter's C type, set from the value the case wrote or from the parameter's class; outputs are zeroed
//! scratch of the same size, and what a labelled call wrote is kept for later calls (`run.call_outputs`).

use super::code::{cstr, dependencies, Code, Step};
use crate::api::{self, ParamClass, OUT_BYTES};
use crate::case::call::{ArgValue, ArgWord, Call, CallArg, ObjectKind, TMP};
use crate::case::words::{ImageWord, Word as _};

pub fn call(x: &Step, call: &Call) -> Result<Code, String> {
    if let Some((why, _)) = &call.unresolved {
        let mut code = Code::default();
        code.skip(&format!("not in the API table of this build's header: {why}"));
        return Ok(code);
    }
    let row = api::function(&call.function).ok_or_else(|| format!("{} is not in the API table", call.function))?;
    let mut code = Code::default();
    let mut args = Vec::new();
    let mut outputs = Vec::new();
    for (i, param) in row.params.iter().enumerate() {
        let var = format!("arg{i}");
        let given = call.args.iter().find(|a| a.name == param.name).map(|a| &a.value);
        let rust_type =
            row.callable.and_then(|g| g.params.iter().find(|p| p.name == param.name)).map_or("", |p| p.rust_type);
        code.pre(format!("{} {var}{{}};", declared(&param.c_type)));
        let is_out = matches!(given, None | Some(ArgValue::Word(ArgWord::Out))) && param.class == ParamClass::Out;
        match given {
            None => default(x, &mut code, &var, &param.class, &param.c_type),
            Some(value) => {
                set(x, &mut code, &var, &param.class, &param.c_type, rust_type, param.size, value, &format!("{var}_"))?
            }
        }
        if is_out {
            let varies = api::output_varies(&row.name, param.name, rust_type);
            // A text is kept up to and with its NUL, as the executor keeps it.
            let size = match api::is_text_output(rust_type) {
                true => format!("strnlen((const char*){var}, {OUT_BYTES}) + 1"),
                false => param.pointee_size.clamp(1, OUT_BYTES).to_string(),
            };
            outputs.push((param.name, var.clone(), size, varies));
        }
        args.push(var);
    }
    code.call(format!("if (op.call([&] {{ return {}({}); }})) {{", row.name, args.join(", ")));
    // The value, as the executor records it: every output's first (up to) 8 bytes, in the parameters' order.
    if !outputs.is_empty() {
        code.call("    std::string outs;");
        for (name, var, size, varies) in &outputs {
            // The first (up to) 8 bytes: a number where the size is known here, else the text's length at run time.
            let first = match size.parse::<usize>() {
                Ok(n) => n.min(8).to_string(),
                Err(_) => format!("std::min<size_t>({size}, 8)"),
            };
            code.call(format!(
                "    {{ unsigned long long v = 0; memcpy(&v, (const void*){var}, {first}); outs += std::string(outs.empty() ? \"\" : \",\") + \"{{\\\"param\\\":\\\"{name}\\\",\\\"value\\\":\" + std::to_string(v) + \",\\\"varies\\\":{varies}}}\"; }}",
            ));
        }
        code.call("    op.value = \"{\\\"outputs\\\":[\" + outs + \"]}\";");
    }
    for (name, var, size, _) in &outputs {
        if let Some(label) = &x.op.label {
            code.call(format!(
                "    run.call_outputs[{}] = std::vector<unsigned char>((const unsigned char*){var}, (const unsigned char*){var} + {size});",
                cstr(&format!("{label}.{name}"))
            ));
        }
    }
    code.call("}");
    Ok(code)
}

/// A C++ declaration's type: `const T *` stays (a pointer variable may be const-qualified in what it points to).
fn declared(c_type: &str) -> String {
    c_type.to_owned()
}

/// `const X *` / `X *` -> `X`.
fn pointee(c_type: &str) -> String {
    c_type.trim_end_matches('*').trim().trim_start_matches("const ").trim().to_owned()
}

fn scratch(code: &mut Code, var: &str, c_type: &str) {
    code.pre(format!("std::vector<unsigned long long> {var}_out({} / 8);", OUT_BYTES));
    code.pre(format!("{var} = ({c_type}){var}_out.data();"));
}

fn default(x: &Step, code: &mut Code, var: &str, class: &ParamClass, c_type: &str) {
    let _ = x;
    match class {
        ParamClass::Out => scratch(code, var, c_type),
        ParamClass::InStruct(_) => {
            code.pre(format!("{} {var}_in{{}};", pointee(c_type)));
            code.pre(format!("{var} = &{var}_in;"));
        }
        ParamClass::Device => {
            code.pre(format!("{var} = run.device(0);"));
        }
        ParamClass::Function => {
            code.pre(format!("{var} = ({c_type})cc_spin;"));
        }
        _ => {}
    }
}

fn int_lit(v: i128) -> String {
    if v < 0 {
        format!("({v}ll)")
    } else {
        format!("{v}ull")
    }
}

/// Sets `lhs` (a variable or a field path) of C type `c_type` to `value`.
#[allow(clippy::too_many_arguments)]
fn set(
    x: &Step,
    code: &mut Code,
    lhs: &str,
    class: &ParamClass,
    c_type: &str,
    rust_type: &str,
    size: usize,
    value: &ArgValue,
    tmp: &str,
) -> Result<(), String> {
    let assign = |code: &mut Code, expr: String| {
        code.pre(format!("{lhs} = ({c_type})({expr});"));
    };
    match value {
        ArgValue::Word(ArgWord::Null) => {}
        ArgValue::Word(ArgWord::Out) => scratch(code, tmp.trim_end_matches('_'), c_type),
        ArgValue::Word(ArgWord::Count) => assign(code, "run.device_count()".into()),
        ArgValue::Word(ArgWord::Max) => assign(code, int_lit(api::max_of(rust_type, size))),
        ArgValue::Int(n) => assign(code, int_lit(*n)),
        ArgValue::Device(d) => assign(code, format!("run.device({d})")),
        ArgValue::Constant(name, _) => assign(code, name.clone()),
        ArgValue::Stream(s) => {
            let s = x.names.stream(s);
            s.need(code);
            assign(code, s.h);
        }
        ArgValue::Object(name, kind) => {
            let v = x.names.var(name);
            let expr = match kind {
                ObjectKind::Event | ObjectKind::Pool => {
                    code.need(format!("op.need({v})"));
                    format!("{v}.h")
                }
                ObjectKind::Graph => {
                    code.need(format!("op.need_graph({v})"));
                    format!("{v}.handle()")
                }
                ObjectKind::Exec => {
                    code.need(format!("op.need_exec({v})"));
                    format!("{v}.handle()")
                }
                ObjectKind::Buffer => {
                    let b = x.names.buffer(name)?;
                    code.need(format!("op.need({})", b.var));
                    format!("{}.copy", b.var)
                }
            };
            assign(code, expr);
        }
        ArgValue::Node(label) => {
            let (n, _) = dependencies(x, code, &format!("{tmp}node"), std::slice::from_ref(label));
            assign(code, format!("{n}[0]"));
        }
        ArgValue::Output { label, param } if *class == ParamClass::Text => {
            code.need(format!("run.output_text({}, &{lhs}, op)", cstr(&format!("{label}.{param}"))));
        }
        // An array of one element an earlier call wrote: a pointer to a copy of it, as the executor passes.
        ArgValue::Output { label, param } if matches!(class, ParamClass::InArray(_)) => {
            code.pre(format!("{} {tmp}elem{{}};", pointee(c_type)));
            code.need(format!("run.output({}, &{tmp}elem, sizeof {tmp}elem, op)", cstr(&format!("{label}.{param}"))));
            code.pre(format!("{lhs} = ({c_type})&{tmp}elem;"));
        }
        ArgValue::Output { label, param } => {
            code.need(format!("run.output({}, &{lhs}, sizeof {lhs}, op)", cstr(&format!("{label}.{param}"))));
        }
        ArgValue::Kernel(k) => assign(code, crate::repro::decls::kernel_symbol(*k).to_owned()),
        // The header's probe callbacks (`cc::log_probe`, ...), of the behaviour of `exec::probe_callbacks`.
        ArgValue::Callback(c) => assign(code, c.c_function().to_owned()),
        // The probes' source is in the program (the shared header): nvcc made the host shadow of its variable.
        ArgValue::Symbol(s) => assign(code, format!("(const void*)&{}", s.word())),
        // The header embeds the images (`@@OTHER_IMAGES@@`): a pointer to one, or a file written with it.
        ArgValue::Image(i) => assign(code, format!("(const void*){}", image_array(*i))),
        ArgValue::ImageFile(i) => {
            let array = image_array(*i);
            let file = cstr(&format!("{TMP}/{}", i.word()));
            assign(code, format!("cc::image_file({file}, {array}, {}_BYTES)", array.to_uppercase()))
        }
        ArgValue::Text(text) if text.contains(TMP) => assign(code, format!("cc::tmp_path({})", cstr(text))),
        ArgValue::Text(text) => assign(code, cstr(text)),
        ArgValue::Fields(fields) => match class {
            ParamClass::Struct(ty) => set_fields(x, code, lhs, ty, fields, tmp)?,
            // A pointer to the struct (`const T *`, or a `T *` the call reads).
            _ => {
                let ty = match class {
                    ParamClass::InStruct(ty) => ty.as_str(),
                    _ => api::pointee_struct(rust_type)
                        .map(|s| s.name)
                        .ok_or_else(|| format!("a struct value for a {} parameter", class.word()))?,
                };
                code.pre(format!("{ty} {tmp}in{{}};"));
                set_fields(x, code, &format!("{tmp}in"), ty, fields, tmp)?;
                code.pre(format!("{lhs} = ({c_type})&{tmp}in;"));
            }
        },
    }
    Ok(())
}

/// The header's array of an image (`harness/src/repro/mod.rs`, `other_images`).
fn image_array(i: ImageWord) -> &'static str {
    match i {
        ImageWord::Sm80 => "cc_sm80_only_image",
        ImageWord::Ptx => "cc_ptx_only_image",
        ImageWord::BadPtx => "cc_bad_ptx_image",
        ImageWord::FuturePtx => "cc_future_ptx_image",
    }
}

fn set_fields(x: &Step, code: &mut Code, base: &str, ty: &str, fields: &[CallArg], tmp: &str) -> Result<(), String> {
    let layout = api::structure(ty).ok_or_else(|| format!("no field table for {ty}"))?;
    for (i, arg) in fields.iter().enumerate() {
        let (_, field) = api::field(layout, &arg.name).ok_or_else(|| format!("{ty} has no field {}", arg.name))?;
        if field.rust_type.starts_with('[') {
            return Err(format!("{ty}.{} is an array: a reproducer cannot assign it", field.name));
        }
        // bindgen names C's anonymous unions `__bindgen_anon_N`; in C their members are the struct's own.
        let lhs = if field.name.starts_with("__bindgen_anon") {
            base.to_owned()
        } else {
            format!("{base}.{}", c_field(field.name))
        };
        let class = api::field_class(field.name, field.rust_type);
        let c_type = api::c_type(field.rust_type);
        set(x, code, &lhs, &class, &c_type, field.rust_type, field.size, &arg.value, &format!("{tmp}{i}_"))?;
    }
    Ok(())
}

/// A field's C name: bindgen appends `_` to a C name that is a Rust keyword (`cudaMemLocation::type` is `type_`).
fn c_field(name: &str) -> &str {
    const RUST_KEYWORDS: &[&str] = &[
        "as", "box", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "fn", "for", "if", "impl",
        "in", "let", "loop", "match", "mod", "move", "mut", "priv", "pub", "ref", "return", "self", "static", "struct",
        "super", "trait", "type", "unsafe", "use", "where", "while", "async", "await", "yield",
    ];
    match name.strip_suffix('_') {
        Some(c) if RUST_KEYWORDS.contains(&c) => c,
        _ => name,
    }
}
