//! A sliding-window rate limit: at most `limit` requests admitted in any span of
//! `window`. The reference server keeps its `--rate-limit` with it, and the
//! operational shim its injected one.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The requests admitted in the last window, the oldest first.
#[derive(Debug, Clone)]
pub struct RateLog {
    limit: usize,
    window: Duration,
    admitted: VecDeque<Instant>,
}

impl RateLog {
    pub fn new(limit: usize, window: Duration) -> RateLog {
        RateLog {
            limit,
            window,
            admitted: VecDeque::new(),
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    pub fn window(&self) -> Duration {
        self.window
    }

    /// Admit a request at `now`, or say how long until a place in the window frees.
    pub fn admit(&mut self, now: Instant) -> Result<(), Duration> {
        while self
            .admitted
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= self.window)
        {
            self.admitted.pop_front();
        }
        match self.admitted.front() {
            Some(oldest) if self.admitted.len() >= self.limit => Err(self
                .window
                .saturating_sub(now.saturating_duration_since(*oldest))),
            _ => {
                self.admitted.push_back(now);
                Ok(())
            }
        }
    }
}

/// `N/MS` (at most N requests in any MS milliseconds), as `--rate-limit` takes it.
pub fn parse(text: &str) -> Result<(usize, u64), String> {
    let (n, ms) = text
        .split_once('/')
        .ok_or_else(|| format!("{text:?}: expected N/MS (for example 20/1000)"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: N is not a number"))?;
    let ms: u64 = ms
        .trim()
        .trim_end_matches("ms")
        .parse()
        .map_err(|_| format!("{text:?}: MS is not a number"))?;
    if n == 0 || ms == 0 {
        return Err(format!("{text:?}: N and MS must be at least 1"));
    }
    Ok((n, ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_log_admits_its_limit_per_window_and_says_when_a_place_frees() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut r = RateLog::new(2, ms(1000));
        assert_eq!(r.admit(t0), Ok(()));
        assert_eq!(r.admit(t0 + ms(100)), Ok(()));
        assert_eq!(r.admit(t0 + ms(400)), Err(ms(600)));
        // The oldest has left the window: one place.
        assert_eq!(r.admit(t0 + ms(1000)), Ok(()));
        assert_eq!(r.admit(t0 + ms(1050)), Err(ms(50)));
        assert_eq!(r.admit(t0 + ms(1100)), Ok(()));
    }

    #[test]
    fn a_rate_is_n_per_ms() {
        assert_eq!(parse("20/1000"), Ok((20, 1000)));
        assert_eq!(parse("5/250ms"), Ok((5, 250)));
        assert!(parse("20").is_err());
        assert!(parse("0/1000").is_err());
        assert!(parse("x/1000").is_err());
    }
}
