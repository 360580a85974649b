//! `api`: the API table (harness::api) as text: every function of the linked header with its group, platform,
//! parameters and their classes, documented return codes and notes. What a case's `call` and a sweep's rows name.

use super::status::{Outcome, Status};

#[derive(clap::Args)]
pub struct ApiCmd {
    /// Only the functions whose name contains this.
    filter: Option<String>,
    /// The table as JSON.
    #[arg(long)]
    json: bool,
}

impl ApiCmd {
    pub fn exec(self) -> Outcome {
        let rows: Vec<_> = harness::api::table()
            .iter()
            .filter(|f| self.filter.as_deref().is_none_or(|p| f.name.contains(p)))
            .collect();
        if self.json {
            println!("{}", serde_json::to_string_pretty(&rows).expect("the table serialises"));
            return Ok(Status::Ok);
        }
        for f in rows {
            let params: Vec<String> = f.params.iter().map(|p| format!("{}: {}", p.name, p.class.word())).collect();
            let platform = f.platform.map(|p| format!(" [needs {p}]")).unwrap_or_default();
            println!("{} ({}){platform}", f.name, f.group);
            println!("    ({})", params.join(", "));
            println!(
                "    returns {}",
                if f.doc_gap { "(no usable \\return list)".to_owned() } else { f.documented.join(" ") }
            );
            if !f.notes.is_empty() {
                println!("    notes {}", f.notes.join(" "));
            }
        }
        Ok(Status::Ok)
    }
}
