//! The suite: every `*.case` file of a folder, parsed and validated, with ids unique across files.

use crate::case::{self, ast::Case, Diagnostic};
use std::collections::HashMap;
use std::path::Path;

/// All cases under `dir` in file order (or of the one file `dir` names), or every problem found in any file.
pub fn load_dir(dir: &Path) -> Result<Vec<Case>, Vec<Diagnostic>> {
    let unreadable = |message: String| Diagnostic { file: dir.display().to_string(), line: 0, col: 0, message };
    // One file serves too (`--cases cases/random.case`): a shrunk random program saved alone, a case to reproduce.
    let mut paths: Vec<_> = if dir.is_file() {
        vec![dir.to_path_buf()]
    } else {
        let entries =
            std::fs::read_dir(dir).map_err(|e| vec![unreadable(format!("cannot read the cases folder: {e}"))])?;
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.retain(|p| p.extension().is_some_and(|e| e == "case"));
        paths
    };
    paths.sort();
    let mut problems = Vec::new();
    let mut cases: Vec<Case> = Vec::new();
    for path in paths {
        let name = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                problems.push(Diagnostic { file: name, line: 0, col: 0, message: format!("cannot read: {e}") });
                continue;
            }
        };
        match case::parse_file(&name, &text) {
            Ok(file) => {
                problems.extend(case::validate(&file));
                cases.extend(file.cases);
            }
            Err(errors) => problems.extend(errors),
        }
    }
    let mut first_seen: HashMap<&str, &Case> = HashMap::new();
    for c in &cases {
        if let Some(first) = first_seen.insert(&c.id, c) {
            problems.push(Diagnostic {
                file: c.positions.file.clone(),
                line: c.positions.case_line,
                col: 1,
                message: format!(
                    "duplicate case id `{}` (first at {}:{})",
                    c.id, first.positions.file, first.positions.case_line
                ),
            });
        }
    }
    if problems.is_empty() {
        Ok(cases)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod file_tests {
    #[test]
    fn one_case_file_loads_like_a_folder_of_one() {
        let dir = std::env::temp_dir().join(format!("one-case-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let file = dir.join("random.case");
        let text = "case random/p1\n  rule: r\n  source: s\n  stream s blocking\n  k: sync s\n  \
                    expect k returned cudaSuccess\nend\n";
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("other.case"), text.replace("random/p1", "other/p2")).unwrap_or_else(|e| panic!("{e}"));
        let one = super::load_dir(&file).unwrap_or_else(|d| panic!("{d:?}"));
        let all = super::load_dir(&dir).unwrap_or_else(|d| panic!("{d:?}"));
        std::fs::remove_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(one.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["random/p1"]);
        assert_eq!(all.len(), 2);
    }
}
