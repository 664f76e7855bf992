//! A stable radix sort on 32-bit time offsets, shared by the model's workers (ordering a
//! block of events) and the analyses' sweeps (ordering a block of changes): both sort
//! thousands of items whose times lie close together, where comparisons cost a
//! mispredicted branch each.

/// Scratch space for [`sort_by_offset`], kept between calls so that sorting allocates
/// nothing once it has grown.
#[derive(Debug)]
pub struct RadixScratch<T> {
    items: Vec<T>,
    counts: Vec<u32>,
}

impl<T> Default for RadixScratch<T> {
    fn default() -> Self {
        RadixScratch { items: Vec::new(), counts: Vec::new() }
    }
}

/// Sorts `items` by `offset(item)`, each at most `latest`, keeping their order where
/// offsets are equal: in as few passes as `latest` needs, with digits of up to 12 bits
/// (offsets below 2^24 take two passes), or two passes of up to 16 bits for offsets up
/// to 2^32 (a third pass costs more than larger counting tables).
pub fn sort_by_offset<T: Copy>(
    items: &mut Vec<T>,
    scratch: &mut RadixScratch<T>,
    latest: u32,
    offset: impl Fn(&T) -> u32,
) {
    let bits = u32::BITS - latest.leading_zeros();
    let passes = if bits > 24 { 2 } else { bits.div_ceil(12) };
    let Some(&fill) = items.first().filter(|_| passes > 0) else {
        return; // Nothing to sort, or every offset is 0.
    };
    let digit_bits = bits.div_ceil(passes);
    let mask = (1usize << digit_bits) - 1;
    // Every slot is written below: only the length matters.
    scratch.items.resize(items.len(), fill);
    for pass in 0..passes {
        let shift = pass * digit_bits;
        let digit = |item: &T| (offset(item) >> shift) as usize & mask;
        scratch.counts.clear();
        scratch.counts.resize(mask + 1, 0);
        for item in items.iter() {
            scratch.counts[digit(item)] += 1;
        }
        let mut sum = 0;
        for slot in scratch.counts.iter_mut() {
            (*slot, sum) = (sum, sum + *slot);
        }
        for item in items.iter() {
            let slot = &mut scratch.counts[digit(item)];
            scratch.items[*slot as usize] = *item;
            *slot += 1;
        }
        std::mem::swap(items, &mut scratch.items);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_offset_and_keeps_the_order_of_equal_offsets() {
        let mut state = 0x9e37_79b9u32;
        let mut random = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let mut scratch = RadixScratch::default();
        for latest in [0u32, 1, 4095, 1 << 20, (1 << 24) + 7, u32::MAX] {
            let mut items: Vec<(u32, usize)> =
                (0..3000).map(|place| (random() % latest.saturating_add(1).max(1), place)).collect();
            let mut expected = items.clone();
            expected.sort_by_key(|&(offset, _)| offset);
            sort_by_offset(&mut items, &mut scratch, latest, |&(offset, _)| offset);
            assert_eq!(items, expected, "offsets up to {latest}");
        }
    }
}
