//! Progress of `mcpres run`: human lines (or one updating bar on a terminal)
//! on stderr, and with `--json` machine-readable events as JSON Lines on
//! stdout. See spec/harness.md, "Progress".

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use serde_json::Value;

/// One human progress line of `mcpres run` on stderr, outside any bar (a
/// failed write is ignored, never a panic).
pub fn stderr_line(line: impl AsRef<str>) {
    let _ = write_stderr_line(line);
}

/// [`stderr_line`], returning the outcome of the write.
fn write_stderr_line(line: impl AsRef<str>) -> std::io::Result<()> {
    write_prefixed_line("mcpres run", line)
}

fn write_prefixed_line(prefix: &str, line: impl AsRef<str>) -> std::io::Result<()> {
    writeln!(std::io::stderr().lock(), "{prefix}: {}", line.as_ref())
}

/// Width of the bar between the brackets, in characters.
const BAR_WIDTH: usize = 20;

/// Where progress goes. One per run; the run loop reports to it.
#[derive(Debug)]
pub struct Progress {
    /// Emit JSON Lines events on stdout.
    json: bool,
    /// stderr is a terminal: one updating line instead of a line per trial.
    tty: bool,
    total: usize,
    done: usize,
    started: Instant,
    /// The bar is currently drawn (the cursor is at its end, no newline).
    bar_drawn: bool,
    last: String,
    /// A write found its reader gone (a closed pipe): the run stops as if
    /// interrupted, and nothing more is written.
    closed: bool,
    /// What the bar counts (`mcpres run: trial`).
    unit: &'static str,
}

impl Progress {
    /// Progress for this process: a bar when stderr is a terminal.
    pub fn new(json: bool) -> Self {
        Self::with_mode(json, std::io::stderr().is_terminal())
    }

    /// Progress with the terminal decision made by the caller.
    pub fn with_mode(json: bool, tty: bool) -> Self {
        Progress {
            json,
            tty,
            total: 0,
            done: 0,
            started: Instant::now(),
            bar_drawn: false,
            last: String::new(),
            closed: false,
            unit: "mcpres run: trial",
        }
    }

    /// Count something else than trials on the bar (`mcpres profile run: check`).
    pub fn with_unit(mut self, unit: &'static str) -> Self {
        self.unit = unit;
        self
    }

    /// The reader of stdout or stderr went away (a closed pipe).
    pub fn closed(&self) -> bool {
        self.closed
    }

    fn note(&mut self, written: std::io::Result<()>) {
        if written.is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) {
            self.closed = true;
        }
    }

    pub fn json(&self) -> bool {
        self.json
    }

    /// Trials planned for the whole run (0 before `start`).
    pub fn total(&self) -> usize {
        self.total
    }

    /// The run starts: `total` trials are planned.
    pub fn start(&mut self, total: usize) {
        self.total = total;
        self.done = 0;
        self.started = Instant::now();
    }

    /// `total` is known before anything finished: the clock keeps counting
    /// from when the progress was made (the true elapsed time), and the bar
    /// is shown at once.
    pub fn plan(&mut self, total: usize) {
        self.total = total;
        self.done = 0;
        self.draw_bar();
    }

    /// Redraw the bar with the time as it is now (a terminal only): a
    /// subject that is slow to answer does not leave the screen still.
    pub fn tick(&mut self) {
        if self.bar_drawn || self.done == 0 {
            self.draw_bar();
        }
    }

    /// A human progress line on stderr (above the bar on a terminal).
    pub fn line(&mut self, line: impl AsRef<str>) {
        self.clear_bar();
        let written = write_stderr_line(line);
        self.note(written);
        self.draw_bar();
    }

    /// A machine-readable event (a JSON object with an `event` member) on
    /// stdout, one per line; nothing without `--json`.
    pub fn event(&mut self, event: Value) {
        if !self.json {
            return;
        }
        let written = {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{event}").and_then(|()| out.flush())
        };
        self.note(written);
    }

    /// A trial finished: on a terminal the bar advances (with `summary` as
    /// its tail); otherwise `summary` is printed as its own line.
    pub fn trial_finished(&mut self, summary: String) {
        self.done += 1;
        if self.tty {
            // The bar already says which trial: keep what follows "trial i/N: ".
            self.last = match summary.split_once(": ") {
                Some((head, tail)) if head.starts_with("trial ") || head.starts_with("check ") => {
                    tail.to_string()
                }
                _ => summary,
            };
            self.draw_bar();
        } else {
            let prefix = self.unit.rsplit_once(": ").map_or(self.unit, |(p, _)| p);
            let written = write_prefixed_line(prefix, summary);
            self.note(written);
        }
    }

    /// Time since the run started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// A control of the current trial finished: on a terminal the bar's tail
    /// shows it (a campaign prints no line per control); otherwise nothing.
    pub fn control_finished(&mut self, summary: String) {
        if self.tty {
            self.last = summary;
            self.draw_bar();
        }
    }

    /// Leave the terminal clean: end the bar's line.
    pub fn finish(&mut self) {
        if self.bar_drawn {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err);
            self.bar_drawn = false;
        }
    }

    fn clear_bar(&mut self) {
        if self.bar_drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.bar_drawn = false;
        }
    }

    fn draw_bar(&mut self) {
        if !self.tty || self.total == 0 {
            return;
        }
        let text = bar(self.done, self.total, self.started.elapsed(), &self.last).replacen(
            "mcpres run: trial",
            self.unit,
            1,
        );
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{text}");
        let _ = err.flush();
        self.bar_drawn = true;
    }
}

/// `m:ss`, or `h:mm:ss` from an hour on.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// The updating line: `trial 37/100 [#######.............]  37% elapsed
/// 0:22 ETA 0:38 | last: ...`. The ETA assumes the remaining trials take as
/// long as the finished ones did on average.
pub fn bar(done: usize, total: usize, elapsed: Duration, last: &str) -> String {
    let total = total.max(1);
    let done = done.min(total);
    let filled = done * BAR_WIDTH / total;
    let eta = elapsed.mul_f64((total - done) as f64 / done.max(1) as f64);
    // Nothing finished yet: no rate to tell the rest from.
    let eta = if done == 0 {
        "-".to_string()
    } else {
        clock(eta)
    };
    let mut s = format!(
        "mcpres run: trial {done}/{total} [{}{}] {:>3}% elapsed {} ETA {}",
        "#".repeat(filled),
        ".".repeat(BAR_WIDTH - filled),
        done * 100 / total,
        clock(elapsed),
        eta,
    );
    if !last.is_empty() {
        s.push_str(" | ");
        s.push_str(last);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_fills_in_proportion_and_estimates_the_rest() {
        let b = bar(37, 100, Duration::from_secs(37), "");
        assert!(b.contains("trial 37/100 [#######.............]"), "{b}");
        assert!(b.contains(" 37% elapsed 0:37 ETA 1:03"), "{b}");
        let full = bar(8, 8, Duration::from_secs(3725), "last trial PASS");
        assert!(full.contains("[####################] 100%"), "{full}");
        assert!(
            full.contains("elapsed 1:02:05 ETA 0:00 | last trial PASS"),
            "{full}"
        );
        // Out-of-range input does not panic.
        assert!(bar(3, 0, Duration::ZERO, "").contains("trial 1/1"));
    }

    #[test]
    fn clock_formats_minutes_and_hours() {
        assert_eq!(clock(Duration::from_secs(59)), "0:59");
        assert_eq!(clock(Duration::from_secs(61)), "1:01");
        assert_eq!(clock(Duration::from_secs(3600)), "1:00:00");
    }

    /// Issue 40, item 14: before the first check finishes the bar shows
    /// the true elapsed time and no invented ETA.
    #[test]
    fn a_bar_before_anything_finished_shows_the_time_and_no_eta() {
        let b = bar(0, 23, Duration::from_secs(14), "");
        assert!(b.contains(" 0/23 ["), "{b}");
        assert!(b.contains("  0% elapsed 0:14 ETA -"), "{b}");
    }
}
