//! UTF-16 lengths and offsets of UTF-8 text: the caller's JS strings count in UTF-16 units.

/// UTF-16 units of `text`: one per UTF-8 sequence, two for a 4-byte one.
pub(crate) fn utf16_len(text: &str) -> u32 {
    if text.is_ascii() {
        return text.len() as u32;
    }
    text.bytes().map(units_at).sum()
}

/// The UTF-16 units a UTF-8 byte starts: one at a lead byte (two at a 4-byte one's), none at a
/// continuation byte.
fn units_at(byte: u8) -> u32 {
    u32::from((byte as i8) >= -64) + u32::from(byte >= 0xF0)
}

/// UTF-16 offsets of byte offsets in a chunk, met in increasing order (linear in all).
pub(crate) struct Utf16Offsets<'a> {
    bytes: &'a [u8],
    /// Every byte is one UTF-16 unit.
    ascii: bool,
    byte: usize,
    unit: u32,
}

impl<'a> Utf16Offsets<'a> {
    /// Offsets in `chunk`, whose length in UTF-16 units is `len16`.
    pub(crate) fn new(chunk: &'a str, len16: u32) -> Self {
        Utf16Offsets {
            bytes: chunk.as_bytes(),
            ascii: chunk.len() == len16 as usize,
            byte: 0,
            unit: 0,
        }
    }

    /// The UTF-16 offset of the byte offset `byte` (counted again from the start when it goes
    /// back).
    pub(crate) fn at(&mut self, byte: usize) -> u32 {
        if self.ascii {
            byte as u32
        } else {
            self.count(byte)
        }
    }

    /// [`Self::at`] in a chunk that is not ASCII (not inlined: it is called from several places
    /// of the tape writer, and the package's size counts).
    #[inline(never)]
    fn count(&mut self, byte: usize) -> u32 {
        if byte < self.byte {
            (self.byte, self.unit) = (0, 0);
        }
        self.unit += self.bytes[self.byte..byte]
            .iter()
            .copied()
            .map(units_at)
            .sum::<u32>();
        self.byte = byte;
        self.unit
    }
}
