//! Numbers as the vector backends print them: rounded to a fixed number of decimals first,
//! so output is short and the same on every machine, and so edges that meet in the scene
//! still meet after rounding (both sides round the same coordinate, never a width).

use crate::scene::Rect;

/// Decimals kept for coordinates: 1/100 of a CSS pixel is far below what any viewer shows.
pub(crate) const COORDINATE_DECIMALS: u32 = 2;

/// `value` in units of 10^-`decimals`, rounded half away from zero (non-finite values
/// give 0; shapes with them are skipped before this is reached).
pub(crate) fn scaled(value: f32, decimals: u32) -> i64 {
    (f64::from(value) * 10f64.powi(decimals as i32)).round() as i64
}

/// A coordinate in hundredths of a CSS pixel.
pub(crate) fn hundredths(value: f32) -> i64 {
    scaled(value, COORDINATE_DECIMALS)
}

/// A coordinate rounded to hundredths, for writers that print floats themselves.
pub(crate) fn rounded(value: f32) -> f32 {
    (hundredths(value) as f64 / 100.0) as f32
}

/// Appends `scaled` × 10^-`decimals` in the shortest plain decimal form: no exponent, no
/// trailing zeros, no `-0`.
pub(crate) fn write_scaled(out: &mut Vec<u8>, scaled: i64, decimals: u32) {
    if scaled < 0 {
        out.push(b'-');
    }
    let magnitude = scaled.unsigned_abs();
    let unit = 10u64.pow(decimals);
    out.extend_from_slice(itoa::Buffer::new().format(magnitude / unit).as_bytes());
    let mut fraction = magnitude % unit;
    if fraction == 0 {
        return;
    }
    let mut digits = decimals as usize;
    while fraction % 10 == 0 {
        fraction /= 10;
        digits -= 1;
    }
    out.push(b'.');
    let mut buffer = itoa::Buffer::new();
    let text = buffer.format(fraction);
    out.extend(std::iter::repeat_n(b'0', digits - text.len()));
    out.extend_from_slice(text.as_bytes());
}

/// Appends `value` rounded to `decimals` decimals.
pub(crate) fn write_fixed(out: &mut Vec<u8>, value: f32, decimals: u32) {
    write_scaled(out, scaled(value, decimals), decimals);
}

/// The edges [left, top, right, bottom] of the rectangles, in hundredths, skipping those
/// that are not drawable or that rounding leaves empty.
pub(crate) fn rounded_edges(rects: &[Rect]) -> impl Iterator<Item = [i64; 4]> + '_ {
    rects
        .iter()
        .filter(|rect| rect.is_drawable())
        .map(|rect| [rect.x, rect.y, rect.right(), rect.bottom()].map(hundredths))
        .filter(|[left, top, right, bottom]| right > left && bottom > top)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(value: f32, decimals: u32) -> String {
        let mut out = Vec::new();
        write_fixed(&mut out, value, decimals);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn shortest_plain_decimals() {
        assert_eq!(fixed(12.0, 2), "12");
        assert_eq!(fixed(12.5, 2), "12.5");
        assert_eq!(fixed(0.05, 2), "0.05");
        assert_eq!(fixed(-0.004, 2), "0");
        assert_eq!(fixed(-3.256, 2), "-3.26");
        assert_eq!(fixed(1e9, 2), "1000000000");
        assert_eq!(fixed(0.005859375, 6), "0.005859");
        assert_eq!(fixed(f32::NAN, 2), "0");
    }

    #[test]
    fn rounding_is_shared_by_touching_edges() {
        // The right edge of one rectangle and the left edge of the next are one number.
        let edge = 10.0f32 / 3.0;
        assert_eq!(hundredths(edge), 333);
        assert_eq!(rounded(edge), 3.33);
        let rects = [Rect::new(0.0, 0.0, edge, 1.0), Rect::new(edge, 0.0, edge, 1.0), Rect::new(0.0, 0.0, 0.001, 1.0)];
        assert_eq!(rounded_edges(&rects).collect::<Vec<_>>(), [[0, 0, 333, 100], [333, 0, 667, 100]]);
    }
}
