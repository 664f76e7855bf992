//! Typed identifiers and times shared by every stage: a CPU number, a process id and a
//! timestamp in nanoseconds are different things and the compiler should keep them apart.

use std::fmt;

/// A CPU number as the kernel numbers it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cpu(pub u32);

/// A kernel task id (what the kernel calls a pid; user space would call it a thread id).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pid(pub i32);

/// A point in time or a duration, in nanoseconds of the trace clock.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub u64);

impl Cpu {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl Pid {
    /// The idle task (`swapper/N`), which stands for "nothing runs" on a CPU.
    pub const IDLE: Pid = Pid(0);

    pub fn is_idle(self) -> bool {
        self == Self::IDLE
    }
}

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    pub const MAX: Nanos = Nanos(u64::MAX);

    pub fn from_secs_f64(secs: f64) -> Nanos {
        Nanos((secs * 1e9).round().max(0.0) as u64)
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// `self - earlier`, or zero when `earlier` is later.
    pub fn saturating_sub(self, earlier: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + other`, or `None` past `Nanos::MAX`.
    pub fn checked_add(self, other: Nanos) -> Option<Nanos> {
        self.0.checked_add(other.0).map(Nanos)
    }
}

/// Saturating: times come from trace files, where a damaged page can hold a timestamp
/// near `u64::MAX`; a sum past the end of time stays at `Nanos::MAX` instead of
/// panicking (debug builds) or wrapping to the start (release builds).
impl std::ops::Add for Nanos {
    type Output = Nanos;
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }
}

impl std::ops::AddAssign for Nanos {
    fn add_assign(&mut self, rhs: Nanos) {
        *self = *self + rhs;
    }
}

impl fmt::Display for Cpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Shown as seconds with nanosecond precision, the way `trace-cmd report` prints times.
impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanos_display_matches_trace_cmd_style() {
        assert_eq!(Nanos(246_585_892_260).to_string(), "246.585892260");
        assert_eq!(Nanos(5).to_string(), "0.000000005");
    }

    #[test]
    fn sums_saturate_at_the_end_of_time() {
        assert_eq!(Nanos(u64::MAX - 1) + Nanos(5), Nanos::MAX);
        let mut t = Nanos(u64::MAX - 3);
        t += Nanos(4);
        assert_eq!(t, Nanos::MAX);
        assert_eq!(Nanos(2) + Nanos(3), Nanos(5));
        assert_eq!(Nanos::MAX.checked_add(Nanos(1)), None);
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(Nanos::from_secs_f64(1.5), Nanos(1_500_000_000));
        assert_eq!(Nanos::from_secs_f64(-3.0), Nanos(0));
        assert_eq!(Nanos(2_250_000_000).as_secs_f64(), 2.25);
    }
}
