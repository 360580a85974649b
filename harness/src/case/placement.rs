//! Which of a case's devices its objects and operations belong to, read from the text alone.
//!
//! Devices are numbered from the case's own: 0 is the device the runner gave the case, N the N-th visible device
//! after it (wrapping), so a case reads the same on whichever GPU of a host it runs. Every host thread starts on
//! device 0, and `set-device N` moves only the thread that runs it: the current device is per host thread
//! (cudaSetDevice: "Sets device as the current device for the calling host thread").

use super::ast::{Case, OpKind, Requirement};

impl Case {
    /// How many devices the case names: one more than the highest device index of its declarations and
    /// operations (1 when it names none).
    pub fn device_count(&self) -> u32 {
        let decls = self.decls.iter().filter_map(|d| d.device());
        let ops = self.script.iter().flat_map(|op| op.kind.facts().devices);
        decls.chain(ops).max().map_or(1, |highest| highest + 1)
    }

    /// The devices `requires: devices >= N` grants the case (1 without it).
    pub fn devices_required(&self) -> u32 {
        self.requires
            .iter()
            .filter_map(|r| match r {
                Requirement::Devices(n) => Some(*n),
                _ => None,
            })
            .max()
            .unwrap_or(1)
    }
}

/// The device current on each operation's thread when the operation runs, by script index, if every
/// `set-device` before it on that thread succeeded.
pub fn current_devices(case: &Case) -> Vec<u32> {
    let mut current: Vec<(Option<&str>, u32)> = Vec::new();
    case.script
        .iter()
        .map(|op| {
            let thread = op.thread.as_deref();
            let slot = match current.iter().position(|(t, _)| *t == thread) {
                Some(i) => i,
                None => {
                    current.push((thread, 0));
                    current.len() - 1
                }
            };
            if let OpKind::SetDevice { device } = op.kind {
                current[slot].1 = device;
            }
            current[slot].1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::parse_file;

    fn case(text: &str) -> Case {
        parse_file("t.case", text).unwrap_or_else(|e| panic!("{e:?}")).cases.remove(0)
    }

    #[test]
    fn device_count_comes_from_declarations_and_operations() {
        let one = case("case t/a\n rule: r\n source: s\n stream s\n launch spin on s\nend\n");
        assert_eq!((one.device_count(), one.devices_required()), (1, 1));
        let two = case(
            "case t/b\n rule: r\n source: s\n requires: devices >= 2\n stream s device 1\n set-device 1\n launch spin \
             on s\nend\n",
        );
        assert_eq!((two.device_count(), two.devices_required()), (2, 2));
        let peer = case("case t/c\n rule: r\n source: s\n can-access-peer 0 2\nend\n");
        assert_eq!(peer.device_count(), 3);
    }

    #[test]
    fn the_current_device_is_per_thread() {
        let c = case(
            "case t/d\n rule: r\n source: s\n thread t\n set-device 1\n @t get-device\n get-device\n @t set-device 2\n \
             @t get-device\n get-device\n set-device\n get-device\nend\n",
        );
        assert_eq!(current_devices(&c), vec![1, 0, 1, 2, 2, 1, 0, 0]);
    }
}
