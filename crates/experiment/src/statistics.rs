//! The statistics a sweep's summary gives, written to agree with what a reader would
//! compute with numpy and scipy on the same CSV (the tests check that): quantiles with
//! linear interpolation (numpy's default), the Mann-Whitney U test as
//! `scipy.stats.mannwhitneyu` computes it by default (two-sided; exact distribution when
//! a sample has at most 8 values and nothing ties, else the normal approximation with tie
//! and continuity corrections), Spearman's rank correlation with average ranks for ties
//! and its p-value from Student's t (as `scipy.stats.spearmanr`), and a percentile
//! bootstrap interval for a difference of medians from a fixed seed, so the same results
//! give the same interval every time.

/// The q-quantile (0 ≤ q ≤ 1) of sorted values, interpolating linearly between the two
/// nearest ranks; `None` for no values.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let position = q.clamp(0.0, 1.0) * last as f64;
    let below = position.floor() as usize;
    let above = (below + 1).min(last);
    let fraction = position - below as f64;
    Some(sorted[below] + (sorted[above] - sorted[below]) * fraction)
}

/// The values, sorted (NaN last).
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

pub fn median(values: &[f64]) -> Option<f64> {
    quantile(&sorted(values), 0.5)
}

/// What the summary says about one setting's running times: how many, the quartiles and
/// the extremes.
#[derive(Clone, Debug, PartialEq)]
pub struct Quartiles {
    pub n: usize,
    pub median: f64,
    pub q1: f64,
    pub q3: f64,
    pub min: f64,
    pub max: f64,
}

impl Quartiles {
    pub fn of(values: &[f64]) -> Option<Quartiles> {
        let sorted = sorted(values);
        Some(Quartiles {
            n: sorted.len(),
            median: quantile(&sorted, 0.5)?,
            q1: quantile(&sorted, 0.25)?,
            q3: quantile(&sorted, 0.75)?,
            min: sorted[0],
            max: *sorted.last()?,
        })
    }

    /// The interquartile range.
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }

    /// How much longer the slowest run took than the fastest, as a fraction of the
    /// fastest (the schedgraph paper's "more than 40% longer").
    pub fn spread(&self) -> f64 {
        if self.min > 0.0 { (self.max - self.min) / self.min } else { f64::NAN }
    }
}

/// Ranks from 1, ties given the average of the ranks they span; and the sizes of the
/// groups of ties.
pub fn ranks(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut ties = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        let average = (start + end + 1) as f64 / 2.0;
        order[start..end].iter().for_each(|&i| ranks[i] = average);
        ties.push(end - start);
        start = end;
    }
    (ranks, ties)
}

/// A two-sided Mann-Whitney U test.
#[derive(Clone, Debug, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample (scipy's `statistic`).
    pub u: f64,
    pub p: f64,
    /// Whether the p-value is exact (else from the normal approximation).
    pub exact: bool,
}

/// The Mann-Whitney U test of `a` against `b`; `None` when either is empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let (ranks, ties) = ranks(&all);
    let r1: f64 = ranks[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let u = u1.max((n1 * n2) as f64 - u1);
    let tied = ties.iter().any(|&t| t > 1);
    let exact = !(tied || n1 > 8 && n2 > 8);
    let p = if exact {
        2.0 * u_at_least(n1, n2, u.round() as usize)
    } else {
        let (n, product) = ((n1 + n2) as f64, (n1 * n2) as f64);
        let tie_term: f64 = ties.iter().map(|&t| (t * t * t - t) as f64).sum();
        let sd = (product / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
        let z = (u - product / 2.0 - 0.5) / sd;
        if sd > 0.0 { 2.0 * normal_cdf(-z) } else { 1.0 }
    };
    Some(MannWhitney { u: u1, p: p.clamp(0.0, 1.0), exact })
}

/// P(U ≥ u) when every ordering of `m` and `n` values is equally likely: the number of
/// orderings with at least `u` pairs (x, y), x > y, over all orderings.
fn u_at_least(m: usize, n: usize, u: usize) -> f64 {
    // The distribution is the same with the samples' roles swapped: keep the table small.
    let (m, n) = (m.min(n), m.max(n));
    let most = m * n;
    // counts[i][k]: orderings of i x's and j y's with k pairs, for the current j. The
    // largest value is a y (no pair: the count for j − 1, already in place) or an x above
    // all j y's (j pairs: row i − 1, already updated for this j).
    let mut counts = vec![vec![0.0f64; most + 1]; m + 1];
    for row in counts.iter_mut() {
        row[0] = 1.0;
    }
    for j in 1..=n {
        for i in 1..=m {
            for k in (0..=most).rev() {
                let with_x_last = if k >= j { counts[i - 1][k - j] } else { 0.0 };
                counts[i][k] += with_x_last;
            }
        }
    }
    let total: f64 = counts[m].iter().sum();
    counts[m][u.min(most + 1)..].iter().sum::<f64>() / total
}

/// Pairs [`spearman`] needs.
pub const SPEARMAN_MIN_PAIRS: usize = 3;

/// Spearman's rank correlation and its two-sided p-value (Student's t with n − 2 degrees
/// of freedom); `None` with fewer than 3 pairs or when either side does not vary.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    let n = x.len().min(y.len());
    if n < SPEARMAN_MIN_PAIRS {
        return None;
    }
    let rho = pearson(&ranks(&x[..n]).0, &ranks(&y[..n]).0)?;
    let df = (n - 2) as f64;
    let p = if rho.abs() >= 1.0 {
        0.0
    } else {
        let t = rho * (df / ((1.0 + rho) * (1.0 - rho))).sqrt();
        student_t_two_sided(t, df)
    };
    Some((rho, p))
}

fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// The standard normal distribution function.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom.
fn student_t_two_sided(t: f64, df: f64) -> f64 {
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction
/// (modified Lentz), using the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) where it converges
/// faster.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    d = if d.abs() < TINY { TINY } else { d };
    d = 1.0 / d;
    let mut result = d;
    for m in 1..300 {
        let m = m as f64;
        for numerator in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + numerator * d;
            d = if d.abs() < TINY { TINY } else { d };
            c = 1.0 + numerator / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            result *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    result
}

/// Resamples the bootstrap draws.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;
/// The seed every bootstrap starts from.
pub const BOOTSTRAP_SEED: u64 = 0x05ee_d0f5_c4ed;

/// The 95% percentile-bootstrap interval of median(b) − median(a): both samples resampled
/// with replacement [`BOOTSTRAP_RESAMPLES`] times from [`BOOTSTRAP_SEED`].
pub fn bootstrap_median_difference(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut rng = SplitMix64(BOOTSTRAP_SEED);
    let mut scratch = Vec::with_capacity(a.len().max(b.len()));
    let mut resampled_median = |values: &[f64], rng: &mut SplitMix64| {
        scratch.clear();
        scratch.extend((0..values.len()).map(|_| values[rng.below(values.len())]));
        scratch.sort_by(f64::total_cmp);
        quantile(&scratch, 0.5).expect("not empty")
    };
    let mut differences: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            let ma = resampled_median(a, &mut rng);
            resampled_median(b, &mut rng) - ma
        })
        .collect();
    differences.sort_by(f64::total_cmp);
    Some((quantile(&differences, 0.025)?, quantile(&differences, 0.975)?))
}

/// SplitMix64: a small generator whose sequence is fixed forever (no dependency whose
/// algorithm could change under the same seed).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)`.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let v = sorted(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(quantile(&v, 0.5), Some(2.5));
        assert_eq!(quantile(&v, 0.25), Some(1.75));
        assert_eq!(quantile(&v, 1.0), Some(4.0));
        assert_eq!(quantile(&[], 0.5), None);
        let s = Quartiles::of(&[2.0, 3.0, 1.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.iqr()), (2.0, 1.0, 3.0, 1.0));
        assert!(close(s.spread(), 2.0));
    }

    #[test]
    fn ranks_average_ties() {
        assert_eq!(ranks(&[10.0, 20.0, 10.0, 30.0]), (vec![1.5, 3.0, 1.5, 4.0], vec![2, 1, 1]));
    }

    #[test]
    fn mann_whitney_exact_and_asymptotic() {
        // scipy.stats.mannwhitneyu([1,2,3,4],[5,6,7,8]) → U 0, p 0.028571428571428571
        let r = mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert!(r.exact && r.u == 0.0 && close(r.p, 0.028_571_428_571_428_57), "{r:?}");
        // scipy: mannwhitneyu([1,2,2,3],[2,3,4,5]) → U 2.5, p 0.1366582477381475 (ties)
        let r = mann_whitney(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 5.0]).unwrap();
        assert!(!r.exact && r.u == 2.5 && close(r.p, 0.1366582477381475), "{r:?}");
    }

    #[test]
    fn spearman_matches_scipy() {
        // scipy.stats.spearmanr([1,2,3,4,5],[5,6,7,8,7]) → 0.8207826816681233, 0.08858700531354381
        let (rho, p) = spearman(&[1.0, 2.0, 3.0, 4.0, 5.0], &[5.0, 6.0, 7.0, 8.0, 7.0]).unwrap();
        assert!(close(rho, 0.8207826816681233) && close(p, 0.08858700531354381), "{rho} {p}");
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[1.0, 1.0, 1.0]), None);
    }

    #[test]
    fn bootstrap_is_deterministic_and_brackets_the_difference() {
        let a = [1.0, 1.1, 0.9, 1.05, 0.95, 1.02];
        let b = [1.5, 1.4, 1.6, 1.45, 1.55, 1.52];
        let (low, high) = bootstrap_median_difference(&a, &b).unwrap();
        assert_eq!(bootstrap_median_difference(&a, &b), Some((low, high)));
        let difference = median(&b).unwrap() - median(&a).unwrap();
        assert!(low <= difference && difference <= high && low > 0.0, "{low} {difference} {high}");
    }
}
