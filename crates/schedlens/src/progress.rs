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

    /// No bar.
    pub fn hidden() -> Progress {
        Progress { bar: None }
    }

    /// Progress as a percentage of `total` steps (of any unit).
    pub fn percent(total: u64, label: &str) -> Progress {
        Progress::new(total, label, "{msg} [{bar:40}] {percent}% ({eta})")
    }

    /// Progress over steps (runs of a sweep): which one, elapsed time, time remaining.
    /// Its length and message are set as the work goes ([`Progress::restart`]).
    pub fn steps(total: u64, label: &str) -> Progress {
        let template = "{msg} [{bar:30}] {pos}/{len}, {elapsed} elapsed, about {eta} left";
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(ProgressStyle::with_template(template).expect("valid template").progress_chars("=> "));
        bar.set_message(label.to_string());
        // Once a second: enough for the elapsed time, nothing a measured run would notice.
        bar.enable_steady_tick(Duration::from_secs(1));
        Progress { bar: Some(bar) }
    }

    /// A status line without a length (its message set as the work goes); `None` when
    /// stderr is not a terminal.
    pub fn status(label: &str) -> Option<Progress> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        bar.set_message(label.to_string());
        bar.enable_steady_tick(Duration::from_millis(250));
        Some(Progress { bar: Some(bar) })
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

    /// A new length and position (a new phase of the work, or a length learnt late).
    pub fn restart(&self, total: u64, done: u64) {
        if let Some(bar) = &self.bar {
            if bar.length() != Some(total) {
                bar.set_length(total);
                bar.reset_eta();
            }
            bar.set_position(done);
        }
    }

    pub fn message(&self, text: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(text);
        }
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
