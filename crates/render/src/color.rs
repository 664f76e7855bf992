//! Colors with straight (not premultiplied) alpha, as every backend takes them. The palette
//! itself belongs to the figures; here are only the few neutral colors any figure needs.

/// An sRGB color with straight alpha (255 = opaque).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rgba {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    pub a: u8,
}

impl Rgba {
    pub const BLACK: Rgba = Rgba::rgb(0, 0, 0);
    pub const WHITE: Rgba = Rgba::rgb(255, 255, 255);
    pub const TRANSPARENT: Rgba = Rgba::new(0, 0, 0, 0);

    pub const fn new(r: u8, g: u8, b: u8, a: u8) -> Rgba {
        Rgba { r, g, b, a }
    }

    /// An opaque color.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Rgba {
        Rgba::new(r, g, b, 255)
    }

    /// An opaque grey: 0 is black, 255 white.
    pub const fn grey(level: u8) -> Rgba {
        Rgba::rgb(level, level, level)
    }

    /// The same color with another alpha.
    pub const fn with_alpha(self, a: u8) -> Rgba {
        Rgba { a, ..self }
    }

    pub const fn is_opaque(self) -> bool {
        self.a == 255
    }

    pub const fn is_invisible(self) -> bool {
        self.a == 0
    }

    /// `#rrggbb`, without alpha.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }

    /// The channels as fractions of 1, rounded to 3 decimals (enough to give the same bytes
    /// back, and short to print).
    pub(crate) fn fractions(self) -> [f32; 4] {
        [self.r, self.g, self.b, self.a].map(|channel| (channel as f32 * 1000.0 / 255.0).round() / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(Rgba::rgb(1, 2, 255).hex(), "#0102ff");
        assert_eq!(Rgba::grey(7), Rgba::new(7, 7, 7, 255));
        assert!(Rgba::WHITE.is_opaque());
        assert!(Rgba::WHITE.with_alpha(0).is_invisible());
        assert_eq!(Rgba::new(255, 128, 0, 64).fractions(), [1.0, 0.502, 0.0, 0.251]);
    }

    #[test]
    fn fractions_give_the_channels_back() {
        for channel in 0..=255u8 {
            let fraction = Rgba::grey(channel).fractions()[0];
            assert_eq!((fraction * 255.0).round() as u8, channel);
        }
    }
}
