//! The suite: every `*.case` file of a folder, parsed and validated, with ids unique across files.

use crate::case::{self, ast::Case, Diagnostic};
use std::collections::HashMap;
use std::path::Path;

/// All cases under `dir` in file order, or every problem found in any file.
pub fn load_dir(dir: &Path) -> Result<Vec<Case>, Vec<Diagnostic>> {
    let unreadable = |message: String| Diagnostic { file: dir.display().to_string(), line: 0, col: 0, message };
    let entries = std::fs::read_dir(dir).map_err(|e| vec![unreadable(format!("cannot read the cases folder: {e}"))])?;
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "case"));
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
