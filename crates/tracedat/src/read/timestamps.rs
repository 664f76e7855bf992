//! Turning ring-buffer timestamps into the times `trace-cmd report` shows: guest-to-host
//! sync (TIME_SHIFT), TSC to nanoseconds (TSC2NSEC), then the fixed offsets (OFFSET, and
//! DATE in microseconds), in that order, with trace-cmd's integer arithmetic.

use crate::read::options::{Options, TimeShift, TimeShiftSample};

/// The correction applied to every raw timestamp of one buffer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeCorrection {
    host_sync: Option<TimeShift>,
    tsc2nsec: Option<(u32, u32)>,
    offset_ns: i64,
}

impl TimeCorrection {
    /// The correction for a file's buffers. Guest-to-host sync applies to the top buffer
    /// only, as in trace-cmd.
    pub fn from_options(options: &Options, is_top_buffer: bool) -> TimeCorrection {
        let date_ns = options.date.as_deref().map_or(0, |d| c_strtoll(d).wrapping_mul(1000));
        let offset_ns = options.offsets.iter().fold(date_ns, |sum, o| sum.wrapping_add(c_strtoll(o)));
        TimeCorrection {
            host_sync: options.time_shift.clone().filter(|t| is_top_buffer && !t.cpus.is_empty()),
            tsc2nsec: options.tsc2nsec.filter(|t| t.mult != 0).map(|t| (t.mult, t.shift)),
            offset_ns,
        }
    }

    pub fn is_identity(&self) -> bool {
        self.host_sync.is_none() && self.tsc2nsec.is_none() && self.offset_ns == 0
    }

    #[inline]
    pub fn apply(&self, raw: u64, cpu: u32) -> u64 {
        let mut ts = raw;
        if let Some(shift) = &self.host_sync {
            ts = host_sync(shift, ts, cpu);
        }
        if let Some((mult, shift)) = self.tsc2nsec {
            ts = mul_u64_u32_shr(ts, mult, shift);
        }
        ts.wrapping_add(self.offset_ns as u64)
    }
}

/// `(a * mul) >> shift` computed in two 32-bit halves, wrapping like trace-cmd's C.
fn mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    let (low, high) = (a & 0xffff_ffff, a >> 32);
    let mul = mul as u64;
    let mut result = low.wrapping_mul(mul).checked_shr(shift).unwrap_or(0);
    if high != 0 && shift <= 32 {
        result = result.wrapping_add(high.wrapping_mul(mul).wrapping_shl(32 - shift));
    }
    result
}

fn host_sync(shift: &TimeShift, ts: u64, cpu: u32) -> u64 {
    let Some(samples) = shift.cpus.get(cpu as usize) else {
        return ts;
    };
    let interpolate = shift.flags & TimeShift::FLAG_INTERPOLATE != 0;
    match samples.len() {
        0 => ts,
        1 => ts.wrapping_add(samples[0].offset as u64),
        n => {
            let i = if ts <= samples[0].time {
                0
            } else if ts >= samples[n - 1].time {
                n - 2
            } else {
                // The sample at `ts`, else the last one before it.
                samples.partition_point(|s| s.time <= ts) - 1
            };
            correct_between(ts, interpolate, &samples[i], &samples[i + 1])
        }
    }
}

fn correct_between(ts: u64, interpolate: bool, min: &TimeShiftSample, max: &TimeShiftSample) -> u64 {
    let correction = if interpolate {
        let delta = (max.time as i64).wrapping_sub(min.time as i64);
        let scaled = (ts as i64).wrapping_sub(min.time as i64).wrapping_mul(max.offset.wrapping_sub(min.offset));
        if delta == 0 {
            min.offset
        } else {
            min.offset.wrapping_add(scaled.wrapping_add(delta / 2).wrapping_div(delta))
        }
    } else {
        min.offset
    };
    let scaled_ts = ts.wrapping_mul(min.scaling).checked_shr(min.fraction as u32).unwrap_or(0);
    scaled_ts.wrapping_add(correction as u64)
}

/// C's `strtoll(text, NULL, 0)`: optional sign, then hex (`0x`), octal (leading `0`) or
/// decimal digits; stops at the first character that is not a digit; 0 if none.
pub(crate) fn c_strtoll(text: &str) -> i64 {
    let t = text.trim_start();
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (16, hex)
    } else if t.starts_with('0') {
        (8, t)
    } else {
        (10, t)
    };
    let magnitude = digits
        .chars()
        .map_while(|c| c.to_digit(radix))
        .fold(0i64, |acc, d| acc.saturating_mul(radix as i64).saturating_add(d as i64));
    if negative { -magnitude } else { magnitude }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::options::Tsc2Nsec;

    #[test]
    fn strtoll_like_c() {
        assert_eq!(c_strtoll("0x10"), 16);
        assert_eq!(c_strtoll("-25abc"), -25);
        assert_eq!(c_strtoll("010"), 8);
        assert_eq!(c_strtoll("junk"), 0);
        assert_eq!(c_strtoll("  42\n"), 42);
    }

    #[test]
    fn mul_shr_matches_wide_arithmetic_without_overflow() {
        for (a, mul, shift) in
            [(123_456_789_012u64, 3_000_000u32, 22u32), (5, 7, 1), (u32::MAX as u64 + 9, 1 << 31, 31)]
        {
            let wide = ((a as u128 * mul as u128) >> shift) as u64;
            assert_eq!(mul_u64_u32_shr(a, mul, shift), wide);
        }
    }

    #[test]
    fn offsets_tsc_and_date_combine() {
        let options = Options {
            date: Some("0x2".into()),
            offsets: vec!["100".into()],
            tsc2nsec: Some(Tsc2Nsec { mult: 2, shift: 1, offset: 0 }),
            ..Options::default()
        };
        let c = TimeCorrection::from_options(&options, true);
        assert_eq!(c.apply(1000, 0), 1000 + 100 + 2000);
        assert!(TimeCorrection::from_options(&Options::default(), true).is_identity());
    }

    #[test]
    fn host_sync_interpolates_between_samples() {
        let s = |time, offset| TimeShiftSample { time, offset, scaling: 1, fraction: 0 };
        let shift = TimeShift {
            peer_trace_id: 0,
            flags: TimeShift::FLAG_INTERPOLATE,
            cpus: vec![vec![s(100, 10), s(200, 20), s(300, 40)]],
        };
        assert_eq!(host_sync(&shift, 150, 0), 150 + 15);
        assert_eq!(host_sync(&shift, 250, 0), 250 + 30);
        // Before the first sample: extrapolated, C division truncating toward zero.
        assert_eq!(host_sync(&shift, 50, 0), 50 + 6);
        assert_eq!(host_sync(&shift, 999, 3), 999, "CPUs without samples are left alone");
        let flat = TimeShift { flags: 0, ..shift };
        assert_eq!(host_sync(&flat, 250, 0), 270);
    }

    #[test]
    fn damaged_samples_wrap_instead_of_overflowing() {
        let s = |time, offset| TimeShiftSample { time, offset, scaling: 1, fraction: 0 };
        // A time span of -1 as i64 and a product of i64::MIN: C wraps, Rust must too.
        let shift = TimeShift {
            peer_trace_id: 0,
            flags: TimeShift::FLAG_INTERPOLATE,
            cpus: vec![vec![s(0, 0), s(u64::MAX, i64::MIN)]],
        };
        assert_eq!(host_sync(&shift, 1, 0), 1u64.wrapping_add(i64::MIN as u64));
    }
}
