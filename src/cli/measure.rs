//! `measure`: one figure (recorded, never asserted), printed; and the figures `run` measures after the cases.

use super::status::{Outcome, Status};
use harness::device::gpu::{self, DeviceInfo};
use harness::figures::staging;
use harness::record::figures::{Figures, SeriesFigure, SMALLEST};
use indicatif::ProgressBar;
use std::time::Duration;

#[derive(clap::Args)]
pub struct MeasureCmd {
    figure: FigureName,
    #[arg(long, default_value_t = 0)]
    device: i32,
    /// Seconds after which a point's case is abandoned (its worker killed) and the point is undecided.
    #[arg(long, default_value_t = 60)]
    deadline: u64,
    /// Print the figure as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Print the generated case of each series (at 4 KiB) and exit, without a GPU.
    #[arg(long)]
    print_cases: bool,
}

/// The figures `measure` knows.
#[derive(Clone, Copy, clap::ValueEnum)]
enum FigureName {
    /// The largest size at which a pageable cudaMemcpyAsync / cudaMemcpy returns before earlier gated work.
    Staging,
}

impl MeasureCmd {
    /// `measure staging`: the four series, printed as text or JSON.
    pub fn exec(self) -> Outcome {
        let FigureName::Staging = self.figure;
        if self.print_cases {
            for series in staging::Series::ALL {
                println!("{}", staging::case_text(series, SMALLEST));
            }
            return Ok(Status::Ok);
        }
        let device = gpu::probe(self.device).map_err(|e| format!("cannot measure: {e}"))?;
        let figures = Figures { staging: measure_figures(&device, None, Duration::from_secs(self.deadline)) };
        if self.json {
            println!("{}", serde_json::to_string_pretty(&figures).unwrap_or_default());
        } else {
            print!("{}", figures.console());
        }
        Ok(Status::Ok)
    }
}

/// The staging series that `filter` selects, measured with a spinner naming the point being measured.
pub fn measure_figures(device: &DeviceInfo, filter: Option<&str>, deadline: Duration) -> Vec<SeriesFigure> {
    let series = staging::select(filter);
    if series.is_empty() {
        return Vec::new();
    }
    let spinner = ProgressBar::new_spinner();
    spinner.enable_steady_tick(Duration::from_millis(200));
    let figures = staging::measure(&series, device, deadline, &mut |point| spinner.set_message(point.to_owned()));
    spinner.finish_and_clear();
    figures
}
