//! The Vulkan operations in C++ (`cc::VulkanSession` in the shared header), as `exec::interpret::vulkan` runs
//! them: the session is made on the first one, on the case's device 0; `vk-memory` and `vk-semaphore` keep the
//! exported FD (and a memory's size) as `L.fd` / `L.size` in `run.call_outputs`, where a later call's `L.fd`
//! argument reads it.

use super::code::{cstr, keep_value, Code, Step};
use crate::case::words::Word;

/// The session, or the operation is not run (the executor's `Err`: why there is none).
fn session(code: &mut Code) {
    code.pre("cc::VulkanSession& vk = cc::vulkan(run.device(0));");
    code.pre("if (!vk.ready()) { op.skip(vk.why); return; }");
    code.pre("std::string err;");
}

/// A failure of the Vulkan call itself: the operation is recorded as not run, with the reason.
fn failed(code: &mut Code) {
    code.post("if (!err.empty()) { op.skip(err); return; }");
}

fn label(x: &Step) -> Result<String, String> {
    x.op.label.clone().ok_or_else(|| format!("{} needs a label", x.op.kind.word().word()))
}

fn keep_fd(code: &mut Code, label: &str, size: Option<u64>) {
    code.post(keep_value(&format!("{label}.fd"), "fd"));
    if let Some(size) = size {
        code.post(format!("{{ uint64_t size = {size}ull; {} }}", keep_value(&format!("{label}.size"), "size")));
    }
}

/// `L: vk-memory BYTES`.
pub fn memory(x: &Step, bytes: u64) -> Result<Code, String> {
    let label = label(x)?;
    let mut code = Code::default();
    session(&mut code);
    code.pre("int fd = -1;");
    code.call(format!("op.host([&] {{ err = vk.memory({}, {bytes}ull, &fd); }});", cstr(&label)));
    failed(&mut code);
    keep_fd(&mut code, &label, Some(bytes));
    Ok(code)
}

/// `L: vk-semaphore binary|timeline [initial N]`.
pub fn semaphore(x: &Step, timeline: Option<u64>) -> Result<Code, String> {
    let label = label(x)?;
    let mut code = Code::default();
    session(&mut code);
    code.pre("int fd = -1;");
    code.call(format!(
        "op.host([&] {{ err = vk.semaphore({}, {}, {}ull, &fd); }});",
        cstr(&label),
        timeline.is_some(),
        timeline.unwrap_or(0)
    ));
    failed(&mut code);
    keep_fd(&mut code, &label, None);
    Ok(code)
}

/// `vk-write L VALUE`.
pub fn write(_x: &Step, memory: &str, value: u32) -> Result<Code, String> {
    let mut code = Code::default();
    session(&mut code);
    code.call(format!("op.host([&] {{ err = vk.write({}, {value}u); }});", cstr(memory)));
    failed(&mut code);
    Ok(code)
}

/// `vk-read L [at OFFSET] [bytes N]`: the snapshot of those words of the memory (`bytes` 0: to its end).
pub fn read(_x: &Step, memory: &str, at: u64, bytes: Option<u64>) -> Result<Code, String> {
    let mut code = Code::default();
    session(&mut code);
    code.pre("std::vector<uint32_t> words;");
    code.call(format!(
        "op.host([&] {{ err = vk.read({}, {at}ull, {}ull, words); }});",
        cstr(memory),
        bytes.unwrap_or(0)
    ));
    failed(&mut code);
    code.post("op.value = \"{\\\"snapshot\\\":\" + cc::contents(words) + \"}\";");
    Ok(code)
}

/// `vk-counter L`: vkGetSemaphoreCounterValue.
pub fn counter(_x: &Step, semaphore: &str) -> Result<Code, String> {
    let mut code = Code::default();
    session(&mut code);
    code.pre("uint64_t value = 0;");
    code.call(format!("op.host([&] {{ err = vk.counter({}, &value); }});", cstr(semaphore)));
    failed(&mut code);
    code.post("op.value = \"{\\\"number\\\":\" + std::to_string(value) + \"}\";");
    Ok(code)
}
