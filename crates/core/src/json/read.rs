//! Reading a validated JSON array of flat objects whose values are all strings.

/// Reads `[{"a": "..", "b": ".."}, ...]` from text a [`super::JsonCheck`] accepted: each
/// object may have only the given keys, with string values (a repeated key's last value
/// wins, as in a JSON object read into a map); the first `required` keys must be there, the
/// others read as empty strings when absent. Returns the values of each object in the order
/// of `keys`, or a message saying what did not fit.
pub(crate) fn read_records(
    text: &str,
    keys: &[&str],
    required: usize,
) -> Result<Vec<Vec<String>>, String> {
    let mut cursor = Cursor {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut records = Vec::new();
    if !cursor.eat(b'[') {
        return Err("the body is not an array".into());
    }
    if cursor.eat(b']') {
        return Ok(records);
    }
    loop {
        let item = records.len() + 1;
        if !cursor.eat(b'{') {
            return Err(format!("item {item} is not an object"));
        }
        let mut values: Vec<Option<String>> = vec![None; keys.len()];
        if !cursor.eat(b'}') {
            loop {
                let key = cursor.string()?;
                cursor.eat(b':');
                let Some(slot) = keys.iter().position(|k| *k == key) else {
                    return Err(format!("item {item} has an unknown key `{key:.64}`"));
                };
                if !cursor.at_byte(b'"') {
                    return Err(format!("item {item}: `{key}` must be a string"));
                }
                values[slot] = Some(cursor.string()?);
                if !cursor.eat(b',') {
                    cursor.eat(b'}');
                    break;
                }
            }
        }
        let mut record = Vec::with_capacity(keys.len());
        for (index, (key, value)) in keys.iter().zip(values).enumerate() {
            match value {
                Some(value) => record.push(value),
                None if index >= required => record.push(String::new()),
                None => return Err(format!("item {item} has no `{key}`")),
            }
        }
        records.push(record);
        if !cursor.eat(b',') {
            return Ok(records);
        }
    }
}

/// A read position in valid JSON text: syntax was checked before, so only values are read.
struct Cursor<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn skip_space(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    /// Whether the next byte after whitespace is `byte`.
    fn at_byte(&mut self, byte: u8) -> bool {
        self.skip_space();
        self.bytes.get(self.at) == Some(&byte)
    }

    /// Consumes `byte` if it comes next after whitespace.
    fn eat(&mut self, byte: u8) -> bool {
        let found = self.at_byte(byte);
        self.at += usize::from(found);
        found
    }

    /// Reads the string that starts here, unescaped.
    fn string(&mut self) -> Result<String, String> {
        self.eat(b'"');
        let mut out = String::new();
        loop {
            let run = self.bytes[self.at..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\')
                .ok_or("unterminated string")?;
            let start = self.at;
            self.at += run + 1;
            // Runs end at ASCII bytes, so they are whole UTF-8 sequences.
            out.push_str(&self.text[start..start + run]);
            if self.bytes[self.at - 1] == b'"' {
                return Ok(out);
            }
            let escape = self.bytes[self.at];
            self.at += 1;
            out.push(match escape {
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => self.unicode()?,
                other => char::from(other),
            });
        }
    }

    /// The character of a `\u` escape (the `\u` already read), joining a surrogate pair.
    fn unicode(&mut self) -> Result<char, String> {
        let lone = || "a string holds a lone UTF-16 surrogate".to_owned();
        let high = self.hex4()?;
        let code = match high {
            0xD800..=0xDBFF => {
                if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
                    return Err(lone());
                }
                self.at += 2;
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(lone());
                }
                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(lone()),
            _ => high,
        };
        char::from_u32(code).ok_or_else(lone)
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or("short \\u escape")?;
        self.at += 4;
        let mut code = 0;
        for &digit in digits {
            code = code * 16 + char::from(digit).to_digit(16).ok_or("bad \\u escape")?;
        }
        Ok(code)
    }
}
