//! Memory pools and graph memory, as `exec::interpret::mempools` (and `exec::pools`): `pool-set`, `pool-get`,
//! `pool-trim`, `graph-mem-trim`, `graph-mem-get`.

use super::code::{Code, Step};
use crate::case::ast::{GraphMemAttr, PoolAttr};

/// `cudaMemPoolAttr`, and whether CUDA stores it as an `int` (the reuse flags) rather than a `cuuint64_t`.
fn pool_attr(attr: PoolAttr) -> (&'static str, bool) {
    match attr {
        PoolAttr::ReleaseThreshold => ("cudaMemPoolAttrReleaseThreshold", false),
        PoolAttr::ReuseFollowEventDependencies => ("cudaMemPoolReuseFollowEventDependencies", true),
        PoolAttr::ReuseAllowOpportunistic => ("cudaMemPoolReuseAllowOpportunistic", true),
        PoolAttr::ReuseAllowInternalDependencies => ("cudaMemPoolReuseAllowInternalDependencies", true),
        PoolAttr::ReservedMemCurrent => ("cudaMemPoolAttrReservedMemCurrent", false),
        PoolAttr::ReservedMemHigh => ("cudaMemPoolAttrReservedMemHigh", false),
        PoolAttr::UsedMemCurrent => ("cudaMemPoolAttrUsedMemCurrent", false),
        PoolAttr::UsedMemHigh => ("cudaMemPoolAttrUsedMemHigh", false),
    }
}

pub fn pool_set(x: &Step, pool: &str, attr: PoolAttr, value: u64) -> Result<Code, String> {
    let mut code = Code::default();
    let p = x.names.var(pool);
    code.need(format!("op.need({p})"));
    let (attr, is_int) = pool_attr(attr);
    if is_int {
        // A flag: 1 for any non-zero value.
        code.pre(format!("int value = {};", i32::from(value != 0)));
    } else {
        code.pre(format!("unsigned long long value = {value}ull;"));
    }
    code.timed(&format!("cudaMemPoolSetAttribute({p}.h, {attr}, &value)"));
    Ok(code)
}

pub fn pool_get(x: &Step, pool: &str, attr: PoolAttr) -> Result<Code, String> {
    let mut code = Code::default();
    let p = x.names.var(pool);
    code.need(format!("op.need({p})"));
    let (attr, is_int) = pool_attr(attr);
    let (decl, number) = if is_int {
        ("int value = 0;", "(value != 0 ? 1 : 0)")
    } else {
        ("unsigned long long value = 0;", "(unsigned long long)value")
    };
    code.pre(decl);
    code.call(format!("if (op.call([&] {{ return cudaMemPoolGetAttribute({p}.h, {attr}, &value); }})) {{"));
    code.call(format!("    op.value = \"{{\\\"number\\\":\" + std::to_string({number}) + \"}}\";"));
    code.call("}");
    Ok(code)
}

pub fn pool_trim(x: &Step, pool: &str, keep: u64) -> Result<Code, String> {
    let mut code = Code::default();
    let p = x.names.var(pool);
    code.need(format!("op.need({p})"));
    code.timed(&format!("cudaMemPoolTrimTo({p}.h, {keep})"));
    Ok(code)
}

pub fn graph_mem_trim(x: &Step) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    code.timed("cudaDeviceGraphMemTrim(run.device(0))");
    Ok(code)
}

pub fn graph_mem_get(x: &Step, attr: GraphMemAttr) -> Result<Code, String> {
    let _ = x;
    let mut code = Code::default();
    let attr = match attr {
        GraphMemAttr::UsedMemCurrent => "cudaGraphMemAttrUsedMemCurrent",
        GraphMemAttr::UsedMemHigh => "cudaGraphMemAttrUsedMemHigh",
        GraphMemAttr::ReservedMemCurrent => "cudaGraphMemAttrReservedMemCurrent",
        GraphMemAttr::ReservedMemHigh => "cudaGraphMemAttrReservedMemHigh",
    };
    code.pre("unsigned long long value = 0;");
    code.call(format!(
        "if (op.call([&] {{ return cudaDeviceGetGraphMemAttribute(run.device(0), {attr}, &value); }})) {{"
    ));
    code.call("    op.value = \"{\\\"number\\\":\" + std::to_string((unsigned long long)value) + \"}\";");
    code.call("}");
    Ok(code)
}
