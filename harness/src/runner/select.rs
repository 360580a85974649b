//! Which cases a run takes and where: a filter, a shard of several hosts' run (`--shard I/N`), and the devices of
//! this host (`--devices all|0,2`).

use crate::case::ast::Case;

/// The cases whose id contains `filter` (all without one), then every N-th of them from the I-th (1-based) when
/// `shard` is `(I, N)`: shards of one selection are disjoint and together cover it.
pub fn select<'a>(cases: &'a [Case], filter: Option<&str>, shard: Option<(usize, usize)>) -> Vec<&'a Case> {
    let chosen = cases.iter().filter(|c| filter.is_none_or(|f| c.id.contains(f)));
    match shard {
        Some((i, n)) => chosen.enumerate().filter(|(k, _)| k % n == i - 1).map(|(_, c)| c).collect(),
        None => chosen.collect(),
    }
}

/// `I/N` with 1 <= I <= N.
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {text:?}: expected I/N with 1 <= I <= N, e.g. 2/4");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// `all` (every one of `count` devices) or a comma-separated list of ordinals, each below `count`, no repeats.
pub fn parse_devices(text: &str, count: usize) -> Result<Vec<i32>, String> {
    if text.trim() == "all" {
        if count == 0 {
            return Err("--devices all: no CUDA device is visible".into());
        }
        return Ok((0..count as i32).collect());
    }
    let mut list = Vec::new();
    for part in text.split(',') {
        let ordinal: i32 = part.trim().parse().map_err(|_| {
            format!("--devices {text:?}: `{}` is not a device ordinal (expected `all` or a list like 0,2)", part.trim())
        })?;
        if ordinal < 0 || ordinal as usize >= count {
            return Err(format!("--devices {text:?}: there is no device {ordinal} ({count} visible)"));
        }
        if list.contains(&ordinal) {
            return Err(format!("--devices {text:?}: device {ordinal} is listed twice"));
        }
        list.push(ordinal);
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_and_devices_parse_or_say_why() {
        assert_eq!(parse_shard("2/4"), Ok((2, 4)));
        for bad in ["0/4", "5/4", "1", "a/b", "1/0"] {
            assert!(parse_shard(bad).unwrap_err().contains("expected I/N"), "{bad}");
        }
        assert_eq!(parse_devices("all", 2), Ok(vec![0, 1]));
        assert_eq!(parse_devices("1, 0", 2), Ok(vec![1, 0]));
        assert!(parse_devices("2", 2).unwrap_err().contains("no device 2"));
        assert!(parse_devices("0,0", 2).unwrap_err().contains("twice"));
        assert!(parse_devices("x", 2).unwrap_err().contains("not a device ordinal"));
        assert!(parse_devices("all", 0).is_err());
    }

    #[test]
    fn shards_cover_the_selection_once() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let cases = crate::suite::load_dir(&dir).unwrap();
        let all = select(&cases, None, None);
        let mut seen: Vec<&str> =
            (1..=3).flat_map(|i| select(&cases, None, Some((i, 3)))).map(|c| c.id.as_str()).collect();
        seen.sort();
        let mut ids: Vec<&str> = all.iter().map(|c| c.id.as_str()).collect();
        ids.sort();
        assert_eq!(seen, ids);
        assert!(select(&cases, Some("events/"), None).iter().all(|c| c.id.contains("events/")));
    }
}
