//! CSV bytes, one page at a time, through the `csv` crate: RFC 4180
//! (fields with commas, quotes, CR or LF quoted, quotes doubled, CRLF line
//! ends), UTF-8, an optional BOM for Excel at the very start of the file, and
//! formula-injection protection.
//!
//! Formula protection (on by default) is Kibana's `escapeFormulaValues`
//! rule: a cell beginning with `=`, `+`, `-`, `@`, a tab or a carriage return
//! gets a `'` in front, so a spreadsheet shows it as text instead of running
//! it (`=HYPERLINK(...)` in a command's output, `@SUM(...)` in a comment).
//! Salt's file diffs begin with `---` and their lines with `+`/`-`, so they
//! are prefixed too. A program reading the file back removes the protection
//! by dropping one leading `'` from any cell whose second character is one of
//! those six ([`unprotect`]); spreadsheets hide the `'` themselves. Negative
//! numbers (`-1`) are prefixed like any other such cell, as Kibana does.

use std::borrow::Cow;

use super::columns::{headers, Column};
use super::rows::Row;

/// The characters that make a spreadsheet read a cell as a formula.
pub const FORMULA_PREFIXES: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// The same signs in their full-width forms, which spreadsheet programs
/// with East Asian input also read as a formula's start.
pub const FULL_WIDTH_PREFIXES: [char; 4] = ['＝', '＋', '－', '＠'];

/// Whether a spreadsheet program could read `cell` as a formula: it starts
/// with a formula sign, or its first non-blank character is one (Excel
/// skips leading spaces), in ASCII or full width.
pub fn looks_like_formula(cell: &str) -> bool {
    match cell.as_bytes().first() {
        None => return false,
        // An ASCII first character other than a space is the first
        // non-blank one (the blanks skipped are a space or not ASCII):
        // nearly every cell, told without decoding characters.
        Some(&b) if b.is_ascii() && b != b' ' => return FORMULA_PREFIXES.contains(&char::from(b)),
        Some(_) => {}
    }
    cell.trim_start_matches([' ', '\u{3000}', '\u{a0}'])
        .starts_with(|c: char| FORMULA_PREFIXES.contains(&c) || FULL_WIDTH_PREFIXES.contains(&c))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    /// A UTF-8 byte order mark first, so Excel reads the file as UTF-8.
    pub bom: bool,
    /// Prefix formula-looking cells with `'` (see the module's docs).
    pub formula_protection: bool,
    /// Cut cells longer than this many characters (Excel holds at most
    /// 32,767 per cell), saying how much was cut. `None` keeps every cell
    /// whole, the default: an auditor's file loses nothing.
    pub max_cell_chars: Option<usize>,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            bom: false,
            formula_protection: true,
            max_cell_chars: None,
        }
    }
}

pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A cell as it goes into the file (borrowed when it needs no change,
/// which is nearly always).
pub fn protect<'a>(cell: &'a str, options: &CsvOptions) -> Cow<'a, str> {
    let mut text = match options.max_cell_chars {
        // Never more characters than bytes: most cells need no count.
        Some(max) if cell.len() > max && cell.chars().count() > max => {
            let kept: String = cell.chars().take(max).collect();
            let cut = cell.chars().count() - max;
            Cow::Owned(format!("{kept}… [{cut} more characters cut]"))
        }
        _ => Cow::Borrowed(cell),
    };
    if options.formula_protection && looks_like_formula(&text) {
        text.to_mut().insert(0, '\'');
    }
    text
}

/// Undoes [`protect`]'s prefix on a cell read back from a protected file.
pub fn unprotect(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if looks_like_formula(rest) => rest,
        _ => cell,
    }
}

/// Turns pages of rows into bytes to append to the file: the BOM (if asked)
/// and the header line with the first page only.
#[derive(Clone, Debug)]
pub struct CsvEncoder {
    columns: Vec<Column>,
    options: CsvOptions,
    started: bool,
}

impl CsvEncoder {
    pub fn new(columns: Vec<Column>, options: CsvOptions) -> CsvEncoder {
        CsvEncoder {
            columns,
            options,
            started: false,
        }
    }

    /// An encoder for a file whose beginning (BOM, header) is already
    /// written: a retried export appends to what it had.
    pub fn continuing(columns: Vec<Column>, options: CsvOptions) -> CsvEncoder {
        CsvEncoder {
            started: true,
            ..CsvEncoder::new(columns, options)
        }
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    pub fn started(&self) -> bool {
        self.started
    }

    /// The bytes of one page. A row with fewer or more cells than columns
    /// (never built by [`super::rows`]) is padded or cut, so the file stays
    /// rectangular whatever a caller passes.
    pub fn encode_page(&mut self, rows: &[Row]) -> Vec<u8> {
        let mut out = Vec::new();
        if !self.started && self.options.bom {
            out.extend_from_slice(BOM);
        }
        if !self.started {
            self.started = true;
            let header = headers(&self.columns);
            write_record(&mut out, header.iter().map(|h| protect(h, &self.options)));
        }
        let width = self.columns.len();
        let blank = String::new();
        for row in rows {
            let cells = row.iter().chain(std::iter::repeat(&blank)).take(width);
            write_record(&mut out, cells.map(|c| protect(c, &self.options)));
        }
        out
    }
}

/// One record as RFC 4180 has it and the `csv` crate writes it with
/// `QuoteStyle::Necessary` and CRLF: a cell holding a comma, a quote, CR or
/// LF is quoted, its quotes doubled; a record of one empty cell is `""`,
/// so that it is not an empty line. The crate's writer was replaced for
/// size: its buffering and quote styles, and the standard library's float
/// parser with its tables (for `NonNumeric` quoting, never used here),
/// were most of 17 KB gzip of the wasm. The unit tests compare this with
/// the crate's writer byte for byte and read every file back with its
/// reader.
fn write_record<'a>(out: &mut Vec<u8>, cells: impl Iterator<Item = Cow<'a, str>>) {
    let start = out.len();
    for (i, cell) in cells.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let cell = cell.as_bytes();
        if cell
            .iter()
            .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
        {
            out.push(b'"');
            for &b in cell {
                if b == b'"' {
                    out.push(b'"');
                }
                out.push(b);
            }
            out.push(b'"');
        } else {
            out.extend_from_slice(cell);
        }
    }
    if out.len() == start {
        out.extend_from_slice(b"\"\"");
    }
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::ExportKind;

    fn cols(n: usize) -> Vec<Column> {
        ExportKind::States.columns()[..n].to_vec()
    }

    fn read_back(bytes: &[u8]) -> Vec<Vec<String>> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(bytes);
        reader
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect()
    }

    fn row(cells: &[&str]) -> Row {
        cells.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_formula_prefix_is_protected_and_nothing_else() {
        let on = CsvOptions::default();
        for p in FORMULA_PREFIXES {
            let cell = format!("{p}SUM(A1:A9)");
            assert_eq!(protect(&cell, &on), format!("'{cell}"), "{p:?}");
            assert_eq!(unprotect(&protect(&cell, &on)), cell);
        }
        for safe in ["SUM(1)", "a=b", "'quoted", "", "état", "1-2"] {
            assert_eq!(protect(safe, &on), safe);
            assert_eq!(unprotect(safe), safe);
        }
        let off = CsvOptions {
            formula_protection: false,
            ..on
        };
        assert_eq!(protect("=1+1", &off), "=1+1");
    }

    #[test]
    fn tricky_cells_survive_the_round_trip() {
        let tricky = row(&[
            "comma, inside",
            "quote \" inside \"\"",
            "multi\nline\r\ncomment\twith tab",
            "",
            "ünïcödé ✓ 日本",
            "trailing space ",
        ]);
        let options = CsvOptions {
            formula_protection: false,
            ..CsvOptions::default()
        };
        let mut enc = CsvEncoder::new(cols(6), options);
        let mut bytes = enc.encode_page(std::slice::from_ref(&tricky));
        bytes.extend(enc.encode_page(std::slice::from_ref(&tricky)));
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.starts_with("Time (UTC),JID,Minion,"), "{text}");
        assert_eq!(text.matches("Time (UTC)").count(), 1, "one header line");
        assert!(text.contains("\"comma, inside\""));
        assert!(text.contains("\"quote \"\" inside \"\"\"\"\""));
        assert!(text.ends_with("\r\n"));
        let back = read_back(&bytes);
        assert_eq!(back.len(), 3);
        assert_eq!(back[1], tricky);
        assert_eq!(back[2], tricky);
    }

    #[test]
    fn a_formula_behind_blanks_or_in_full_width_is_protected_too() {
        let on = CsvOptions::default();
        for cell in [
            "  =cmd|' /C calc'!A0",
            "\u{3000}+1",
            "＝SUM(A1)",
            "－1",
            "＠x",
            " ＋x",
        ] {
            let p = protect(cell, &on);
            assert_eq!(p, format!("'{cell}"), "{cell:?}");
            assert_eq!(unprotect(&p), cell);
        }
        for cell in ["a=b", "1-2", "e-mail@x", "  plain", "ー"] {
            assert_eq!(protect(cell, &on), cell, "{cell:?}");
        }
    }

    #[test]
    fn the_ascii_shortcut_judges_every_cell_as_decoding_it_does() {
        let by_characters = |cell: &str| {
            cell.starts_with(FORMULA_PREFIXES)
                || cell
                    .trim_start_matches([' ', '\u{3000}', '\u{a0}'])
                    .starts_with(|c: char| {
                        FORMULA_PREFIXES.contains(&c) || FULL_WIDTH_PREFIXES.contains(&c)
                    })
        };
        let mut chars: Vec<char> = (0u8..128).map(char::from).collect();
        chars.extend([
            '\u{3000}', '\u{a0}', '＝', '＋', '－', '＠', 'é', 'ー', '\u{feff}',
        ]);
        let mut cell = String::new();
        for &a in &chars {
            for &b in &chars {
                for c in ['=', 'x'] {
                    cell.clear();
                    cell.extend([a, b, c]);
                    assert_eq!(looks_like_formula(&cell), by_characters(&cell), "{cell:?}");
                }
            }
        }
        assert!(!looks_like_formula(""));
    }

    #[test]
    fn salt_diffs_survive_with_protection_on_and_off() {
        let diff = "--- \n+++ \n@@ -1,2 +1,2 @@\n-workers 2\n+workers 4\n context\n";
        let plus = "+added line";
        let formula = "=HYPERLINK(\"http://x\",\"y\")";
        let cells = row(&[diff, plus, formula, "-1"]);
        let mut on = CsvEncoder::new(cols(4), CsvOptions::default());
        let back = read_back(&on.encode_page(std::slice::from_ref(&cells)));
        assert_eq!(back[1][0], format!("'{diff}"));
        assert_eq!(back[1][1], "'+added line");
        assert_eq!(back[1][3], "'-1");
        let restored: Vec<&str> = back[1].iter().map(|c| unprotect(c)).collect();
        assert_eq!(restored, [diff, plus, formula, "-1"]);
        let mut off = CsvEncoder::new(
            cols(4),
            CsvOptions {
                formula_protection: false,
                ..CsvOptions::default()
            },
        );
        let back = read_back(&off.encode_page(std::slice::from_ref(&cells)));
        assert_eq!(back[1], cells, "exact with protection off");
    }

    #[test]
    fn the_bom_comes_once_at_the_very_start() {
        let options = CsvOptions {
            bom: true,
            ..CsvOptions::default()
        };
        let mut enc = CsvEncoder::new(cols(2), options);
        let first = enc.encode_page(&[row(&["a", "b"])]);
        let second = enc.encode_page(&[row(&["c", "d"])]);
        assert!(first.starts_with(BOM));
        assert!(!second.starts_with(BOM));
        assert_eq!(&first[3..], b"Time (UTC),JID\r\na,b\r\n");
        assert_eq!(second, b"c,d\r\n");
        let mut resumed = CsvEncoder::continuing(cols(2), options);
        assert_eq!(resumed.encode_page(&[row(&["e", "f"])]), b"e,f\r\n");
        let mut empty = CsvEncoder::new(cols(2), CsvOptions::default());
        assert_eq!(
            empty.encode_page(&[]),
            b"Time (UTC),JID\r\n",
            "an empty export still has its header"
        );
    }

    #[test]
    fn rows_of_the_wrong_width_keep_the_file_rectangular_and_long_cells_can_be_cut() {
        let mut enc = CsvEncoder::new(cols(3), CsvOptions::default());
        let bytes = enc.encode_page(&[row(&["a"]), row(&["a", "b", "c", "d"])]);
        let back = read_back(&bytes);
        assert!(back.iter().all(|r| r.len() == 3), "{back:?}");
        let huge = "y".repeat(5 * 1024 * 1024);
        let mut whole = CsvEncoder::new(cols(1), CsvOptions::default());
        assert_eq!(read_back(&whole.encode_page(&[row(&[&huge])]))[1][0], huge);
        let cut = CsvOptions {
            max_cell_chars: Some(32_767),
            ..CsvOptions::default()
        };
        let cell = protect(&huge, &cut);
        assert!(cell.starts_with(&"y".repeat(32_767)));
        assert!(cell.ends_with(&format!("[{} more characters cut]", huge.len() - 32_767)));
    }

    #[test]
    fn records_are_byte_for_byte_what_the_csv_crate_writes() {
        let alphabet = [
            "a", "é", ",", "\"", "\r", "\n", " ", "\t", "=", "", "x,y", "\"\"",
        ];
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..5_000 {
            let width = next(4);
            let cells: Vec<String> = (0..width)
                .map(|_| {
                    (0..next(4))
                        .map(|_| alphabet[next(alphabet.len())])
                        .collect()
                })
                .collect();
            let mut ours = Vec::new();
            write_record(&mut ours, cells.iter().map(|c| Cow::Borrowed(c.as_str())));
            let mut theirs = csv::WriterBuilder::new()
                .terminator(csv::Terminator::CRLF)
                .quote_style(csv::QuoteStyle::Necessary)
                .flexible(true)
                .from_writer(Vec::new());
            theirs.write_record(&cells).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs.into_inner().unwrap()),
                "{cells:?}"
            );
        }
    }
}
