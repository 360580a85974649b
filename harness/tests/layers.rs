//! The layers of `harness/src`: the folders in the order of the table in the crate doc of `lib.rs`, lowest first. A
//! file may name (through `crate::` paths, in `use` lines or inline) only its own folder and folders listed above it,
//! so no arrow runs from a lower stage to a higher one and the folders import each other in no circle.
//!
//! Test code is not checked: a test may reach up to build its input (an executor test judges what it ran). That is
//! files named `tests.rs` or `test_support.rs`, and everything from a `#[cfg(test)]` inline module to the end of its
//! file (test modules sit at the end).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A file's arrow to another folder: `from/file.rs:line` names `crate::to`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Arrow {
    from: String,
    to: String,
    at: String,
}

/// The folders of the crate doc's layer table, lowest first: its rows read `//! | [`folder`] | what it is |`.
fn layers(lib_rs: &str) -> Vec<String> {
    lib_rs
        .lines()
        .filter_map(|l| l.strip_prefix("//! | [`")?.split_once("`]").map(|(folder, _)| folder.to_owned()))
        .collect()
}

/// The text of a file that is not test code, with comment lines blanked (doc links name folders without using them).
fn production_text(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let next = lines.peek().map_or("", |l| l.trim_start());
        if line.trim() == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{') {
            break;
        }
        out.push(if line.trim_start().starts_with("//") { "" } else { line });
    }
    out.join("\n")
}

/// Every folder a file names as `crate::folder`, `crate::{folder::.., other}` included, with the line it is on.
fn named_folders(text: &str) -> Vec<(usize, String)> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut found = Vec::new();
    for (offset, _) in text.match_indices("crate::") {
        let rest = &text[offset + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The top-level items of the group, each the first name of a path.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        found.push((line_of(offset), ident(&group[i..])));
                    }
                    _ => {}
                }
            }
        } else {
            found.push((line_of(offset), ident(rest)));
        }
    }
    found
}

/// What breaks the layering in `files` (folder, path, text): names of folders not in `layers`, arrows to a folder
/// listed later, and circles between folders.
fn violations(layers: &[String], files: &[(String, String, String)]) -> Vec<String> {
    let rank: BTreeMap<&str, usize> = layers.iter().enumerate().map(|(i, f)| (f.as_str(), i)).collect();
    let mut problems = Vec::new();
    let mut arrows = BTreeSet::new();
    for (folder, path, text) in files {
        let Some(&own) = rank.get(folder.as_str()) else {
            problems.push(format!("{path}: folder `{folder}` has no row in the layer table of lib.rs"));
            continue;
        };
        for (line, named) in named_folders(&production_text(text)) {
            // `crate::Name` of an item at the root (none today) or `crate::self`: not a folder.
            let Some(&theirs) = rank.get(named.as_str()) else { continue };
            if theirs > own {
                problems.push(format!("{path}:{line}: `{folder}` names `crate::{named}`, a layer above it"));
            }
            if named != *folder {
                arrows.insert(Arrow { from: folder.clone(), to: named, at: format!("{path}:{line}") });
            }
        }
    }
    if let Some(circle) = circle(&arrows) {
        problems.push(format!("the folders import each other in a circle: {}", circle.join(" → ")));
    }
    problems
}

/// A circle of folders in the arrows, if there is one, as the folders along it (the first repeated at the end).
fn circle(arrows: &BTreeSet<Arrow>) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for a in arrows {
        next.entry(a.from.as_str()).or_default().insert(a.to.as_str());
    }
    fn walk<'a>(
        at: &'a str,
        next: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|p| *p == at) {
            let mut circle: Vec<String> = path[start..].iter().map(|s| s.to_string()).collect();
            circle.push(at.to_owned());
            return Some(circle);
        }
        if !done.insert(at) {
            return None;
        }
        path.push(at);
        for to in next.get(at).into_iter().flatten() {
            if let Some(circle) = walk(to, next, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    next.keys().find_map(|from| walk(from, &next, &mut Vec::new(), &mut done))
}

/// Every `.rs` file under `dir` that is not a test file, as (path relative to `root`, text).
fn sources(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            sources(root, &path, out);
        } else if name.ends_with(".rs") && name != "tests.rs" && name != "test_support.rs" {
            let relative = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.push((relative, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

#[test]
fn no_folder_of_harness_src_names_a_folder_above_it_and_none_import_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers = layers(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    assert!(
        layers.first().map(String::as_str) == Some("record"),
        "the report's schema is the lowest layer: {layers:?}"
    );
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    // Files at the top (lib.rs) declare the folders; every other file belongs to the folder it is in.
    let files: Vec<(String, String, String)> =
        files.into_iter().filter_map(|(path, text)| Some((path.split_once('/')?.0.to_owned(), path, text))).collect();
    let folders: BTreeSet<&str> = files.iter().map(|(f, _, _)| f.as_str()).collect();
    assert_eq!(folders, layers.iter().map(String::as_str).collect(), "the layer table of lib.rs lists every folder");
    let problems = violations(&layers, &files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checker_finds_an_arrow_up_and_a_circle() {
    let layers: Vec<String> = ["low", "high"].map(String::from).to_vec();
    let file = |folder: &str, text: &str| (folder.to_owned(), format!("{folder}/mod.rs"), text.to_owned());
    let upward = file("low", "use crate::high::Thing;\n");
    let downward = file("high", "use crate::{low::{self, Other}, high::Own};\nfn f() { crate::low::g() }\n");
    let problems = violations(&layers, &[upward, downward.clone()]);
    assert!(problems[0].starts_with("low/mod.rs:1: `low` names `crate::high`"), "{problems:?}");
    assert_eq!(problems[1], "the folders import each other in a circle: high → low → high", "{problems:?}");
    assert_eq!(problems.len(), 2, "{problems:?}");
    // Arrows down, test modules and comments are fine.
    let tested =
        file("low", "/// See [`crate::high`].\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::high::X;\n}\n");
    assert_eq!(violations(&layers, &[downward, tested]), Vec::<String>::new());
    assert_eq!(violations(&layers, &[file("middle", "")]).len(), 1, "a folder without a row");
}
