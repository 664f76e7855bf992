//! Placing times on pixel columns cheaply, with exactly the results of the plain
//! arithmetic. Figures place every run and every change of every CPU on columns, so a
//! division and two calls into libm per run (`floor` and `ceil` are calls without
//! SSE4.1) cost more than the rest of the bookkeeping. Columns at a power-of-two width
//! (every tile of the viewer and of the report) multiply by the exact reciprocal
//! instead, and rounding non-negative positions is a truncation.

/// Turns nanoseconds into columns of one width.
#[derive(Copy, Clone, Debug)]
pub(crate) struct ColumnScale {
    ns_per_column: f64,
    /// `1 / ns_per_column` when that is exact (the width is a power of two), so a
    /// multiplication gives the division's result bit for bit.
    exact_reciprocal: Option<f64>,
}

impl ColumnScale {
    pub(crate) fn new(ns_per_column: f64) -> ColumnScale {
        const MANTISSA: u64 = (1 << 52) - 1;
        let power_of_two = ns_per_column.is_normal()
            && ns_per_column.to_bits() & MANTISSA == 0
            && (2f64.powi(-1000)..=2f64.powi(1000)).contains(&ns_per_column);
        ColumnScale { ns_per_column, exact_reciprocal: power_of_two.then(|| 1.0 / ns_per_column) }
    }

    pub(crate) fn ns_per_column(&self) -> f64 {
        self.ns_per_column
    }

    /// `ns / ns_per_column`.
    #[inline]
    pub(crate) fn columns(&self, ns: f64) -> f64 {
        match self.exact_reciprocal {
            Some(reciprocal) => ns * reciprocal,
            None => ns / self.ns_per_column,
        }
    }
}

/// 2^63: below it, conversions go through `i64`, one instruction each way (those of
/// `u64` and `usize` take a dozen on x86-64).
const SIGNED_LIMIT: f64 = 9_223_372_036_854_775_808.0;

/// `n as f64`.
#[inline]
pub(crate) fn to_f64(n: u64) -> f64 {
    match i64::try_from(n) {
        Ok(signed) => signed as f64,
        Err(_) => n as f64,
    }
}

/// `x.floor() as usize` for `x >= 0` (saturating like it).
#[inline]
pub(crate) fn floor_index(x: f64) -> usize {
    if x < SIGNED_LIMIT { x as i64 as usize } else { x as usize }
}

/// `x.ceil() as usize` for `x >= 0` (saturating like it).
#[inline]
pub(crate) fn ceil_index(x: f64) -> usize {
    if x >= SIGNED_LIMIT {
        return x as usize;
    }
    let truncated = x as i64;
    (if (truncated as f64) < x { truncated + 1 } else { truncated }) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_matches_floor_and_ceil() {
        let values = [0.0, 0.25, 0.5, 1.0, 1.5, 2.999_999, 511.0, 511.000_001, 4.5e15, 9.1e15, 1e19, 2e19, 1e300];
        for x in values {
            assert_eq!(floor_index(x), x.floor() as usize, "{x}");
            assert_eq!(ceil_index(x), x.ceil() as usize, "{x}");
        }
        for n in [0u64, 1, 1 << 53, (1 << 53) + 1, u64::MAX / 2, u64::MAX / 2 + 1, u64::MAX - 1024, u64::MAX] {
            assert_eq!(to_f64(n).to_bits(), (n as f64).to_bits(), "{n}");
        }
    }

    #[test]
    fn the_reciprocal_gives_the_quotient_bit_for_bit() {
        for width in [1.0, 2.0, 0.5, 1024.0, 131_072.0, 3.0, 1_953_125.5, 7.0 / 3.0] {
            let scale = ColumnScale::new(width);
            for ns in [0.0, 1.0, 3.0, 12_345_678.0, 1_000_000_000_123.0, -77.0, 8.9e15] {
                assert_eq!(scale.columns(ns).to_bits(), (ns / width).to_bits(), "{ns} / {width}");
            }
        }
        assert!(ColumnScale::new(131_072.0).exact_reciprocal.is_some());
        assert!(ColumnScale::new(3.0).exact_reciprocal.is_none());
    }
}
