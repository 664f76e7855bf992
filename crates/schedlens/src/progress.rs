//! A progress bar on stderr for long work, shown only when stderr is a terminal so that
//! piped and scripted runs stay quiet.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// Progress over a known number of bytes.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn bytes(total: u64, label: &str) -> Progress {
        Progress::new(total, label, "{msg} [{bar:40}] {bytes}/{total_bytes} ({eta})")
    }

    /// Progress as a percentage of `total` steps (of any unit).
    pub fn percent(total: u64, label: &str) -> Progress {
        Progress::new(total, label, "{msg} [{bar:40}] {percent}% ({eta})")
    }

    fn new(total: u64, label: &str, template: &str) -> Progress {
        if !std::io::stderr().is_terminal() || total == 0 {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(10));
        let style = ProgressStyle::with_template(template).expect("valid template").progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(label.to_string());
        // Short work finishes before the bar would be worth drawing.
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar: Some(bar) }
    }

    pub fn set(&self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
