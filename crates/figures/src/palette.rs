//! Stable, distinct colors: the same pid (or command name) gets the same color in every
//! figure, format and run, spread around the hue circle so neighbours differ. Black is
//! kept for "other tasks" (`--target`), white for idle, light grey for unknown time.

/// An opaque color.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    pub const WHITE: Rgb = Rgb(255, 255, 255);
    pub const BLACK: Rgb = Rgb(0, 0, 0);
    /// Time whose state is unknown (lost events, unrecorded switches).
    pub const UNKNOWN: Rgb = Rgb(226, 226, 226);

    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// The color of a key (a pid, or a hash of a name).
pub fn color_of(key: u64) -> Rgb {
    // Spread consecutive keys far apart: multiply by a large odd constant (a Weyl sequence
    // of the golden ratio) and take the hue from the top bits.
    let mixed = key.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let hue = (mixed >> 40) as f64 / (1u64 << 24) as f64;
    // Three lightness/saturation bands so hues that come close still differ.
    let (saturation, lightness) = [(0.85, 0.45), (0.70, 0.58), (0.90, 0.36)][(mixed % 3) as usize];
    hsl(hue, saturation, lightness)
}

/// The color of a name (for `--color-by-command`).
pub fn color_of_name(name: &str) -> Rgb {
    // FNV-1a: small, stable across runs and platforms (unlike the std hasher).
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    color_of(hash)
}

fn hsl(hue: f64, saturation: f64, lightness: f64) -> Rgb {
    let chroma = (1.0 - (2.0 * lightness - 1.0).abs()) * saturation;
    let h = hue * 6.0;
    let x = chroma * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (chroma, x, 0.0),
        1 => (x, chroma, 0.0),
        2 => (0.0, chroma, x),
        3 => (0.0, x, chroma),
        4 => (x, 0.0, chroma),
        _ => (chroma, 0.0, x),
    };
    let m = lightness - chroma / 2.0;
    let channel = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    Rgb(channel(r), channel(g), channel(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_and_never_reserved() {
        assert_eq!(color_of(4242), color_of(4242));
        assert_eq!(color_of_name("hackbench"), color_of_name("hackbench"));
        for key in 0..10_000 {
            let c = color_of(key);
            assert!(![Rgb::WHITE, Rgb::BLACK, Rgb::UNKNOWN].contains(&c));
            let brightest = c.0.max(c.1).max(c.2);
            assert!(brightest > 60, "{c:?} too dark to tell from black");
        }
    }

    #[test]
    fn consecutive_pids_differ() {
        let distance = |a: Rgb, b: Rgb| {
            (a.0 as i32 - b.0 as i32).abs() + (a.1 as i32 - b.1 as i32).abs() + (a.2 as i32 - b.2 as i32).abs()
        };
        let close = (0..1000u64).filter(|&k| distance(color_of(k), color_of(k + 1)) < 60).count();
        assert!(close < 50, "{close} neighbouring pids look alike");
        assert_eq!(Rgb(1, 2, 255).hex(), "#0102ff");
    }
}
