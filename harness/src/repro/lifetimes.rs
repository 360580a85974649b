//! What graphs own, as `exec::interpret::lifetimes`: user objects (`run.user_objects`, by the
//! label of the operation that made each), the references graphs hold to them, and whether their destructors ran.

use super::code::{cstr, Code, Step};

/// `L: user-object`: cudaUserObjectCreate with one reference, owned by the case; its destructor sets a flag.
pub fn create(x: &Step) -> Result<Code, String> {
    let mut code = Code::default();
    let Some(label) = &x.op.label else {
        code.skip("a user object needs a label");
        return Ok(code);
    };
    code.pre("cc::UserObject made;");
    code.call("op.call([&] {");
    code.call("    // The flag is leaked on purpose: the destructor may run after the case ends.");
    code.call("    made.destroyed = new std::atomic<bool>(false);");
    code.call("    made.owned = 1;");
    code.call("    return cudaUserObjectCreate(&made.h, made.destroyed, cc::set_destroyed, 1, cudaUserObjectNoDestructorSync);");
    code.call("});");
    code.post(format!("if (op.ok()) run.user_objects[{}] = made;", cstr(label)));
    Ok(code)
}

/// The C++ that finds user object `object` (made by the operation labelled so), or records why not.
fn find(code: &mut Code, object: &str) -> String {
    let o = cstr(object);
    code.pre(format!(
        "if (run.user_objects.count({o}) == 0) {{ op.skip({}); return; }}",
        cstr(&format!("{object} made no user object"))
    ));
    format!("run.user_objects[{o}]")
}

/// `retain-user-object GRAPH L [count N] [move]`: cudaGraphRetainUserObject.
pub fn retain(x: &Step, graph: &str, object: &str, count: u32, take: bool) -> Result<Code, String> {
    let mut code = Code::default();
    let g = x.names.var(graph);
    code.need(format!("op.need_graph({g})"));
    let o = find(&mut code, object);
    code.pre(format!("cc::UserObject& object = {o};"));
    let flags = if take { "cudaGraphUserObjectMove" } else { "0" };
    code.call(format!(
        "if (op.call([&] {{ return cudaGraphRetainUserObject({g}.handle(), object.h, {count}, {flags}); }})) {{"
    ));
    if take {
        code.call(format!("    object.owned = object.owned > {count}u ? object.owned - {count}u : 0;"));
    }
    code.call("}");
    Ok(code)
}

/// `release-user-object [GRAPH] L [count N]`: cudaGraphReleaseUserObject, or cudaUserObjectRelease of the case's
/// own references.
pub fn release(x: &Step, graph: &Option<String>, object: &str, count: u32) -> Result<Code, String> {
    let mut code = Code::default();
    let o = find(&mut code, object);
    code.pre(format!("cc::UserObject& object = {o};"));
    match graph {
        Some(graph) => {
            let g = x.names.var(graph);
            code.need(format!("op.need_graph({g})"));
            code.timed(&format!("cudaGraphReleaseUserObject({g}.handle(), object.h, {count})"));
        }
        None => {
            code.call(format!("if (op.call([&] {{ return cudaUserObjectRelease(object.h, {count}); }})) {{"));
            code.call(format!("    object.owned = object.owned > {count}u ? object.owned - {count}u : 0;"));
            code.call("}");
        }
    }
    Ok(code)
}

/// `destroyed L [wait]`: 1 if the destructor has run. With `wait`, polls until it has or half the case deadline
/// has passed (a hang guard, never the verdict: there is no way to wait on a user object's destructor).
pub fn destroyed(x: &Step, object: &str, wait: bool) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    let o = find(&mut code, object);
    code.pre(format!("std::atomic<bool>* flag = {o}.destroyed;"));
    code.pre("auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(run.deadline_ms / 2);");
    code.pre("bool seen = false;");
    code.call("op.host([&] {");
    code.call("    seen = flag->load();");
    if wait {
        code.call("    while (!seen && std::chrono::steady_clock::now() < limit) {");
        code.call("        std::this_thread::sleep_for(std::chrono::microseconds(200));");
        code.call("        seen = flag->load();");
        code.call("    }");
    }
    code.call("});");
    code.post("op.value = \"{\\\"number\\\":\" + std::to_string(seen ? 1 : 0) + \"}\";");
    Ok(code)
}
