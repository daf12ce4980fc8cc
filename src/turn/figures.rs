//! The figures a text states, canonical. **Placeholder** (the `lookup` branch owns this file and
//! replaces it): ASCII and Bengali digit runs, thousands commas dropped, a decimal part without
//! its trailing zeros, a `%` kept. Enough for the evidence of tool results to be built and
//! tested against the contract's signature.

use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureKind {
    Amount,
    Count,
    Percent,
    Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figure {
    pub canonical: String,
    pub kind: FigureKind,
    pub span: Range<usize>,
}

/// An ASCII or Bengali digit's value.
fn digit(c: char) -> Option<u8> {
    match c {
        '0'..='9' => Some(c as u8 - b'0'),
        '\u{09E6}'..='\u{09EF}' => Some((c as u32 - 0x09E6) as u8),
        _ => None,
    }
}

/// Every figure `text` states, canonical: "1,00,000" = "100000" = "১,০০,০০০"; "৳5,000.00" =
/// "5000"; "12.5%" = "12.5%". Byte spans into `text`.
pub fn stated(text: &str) -> Vec<Figure> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if digit(chars[i].1).is_none() {
            i += 1;
            continue;
        }
        let start = chars[i].0;
        let mut whole = String::new();
        let mut fraction: Option<String> = None;
        let mut grouped = false;
        let mut j = i;
        while j < chars.len() {
            let c = chars[j].1;
            let next_is_digit = chars.get(j + 1).is_some_and(|(_, n)| digit(*n).is_some());
            if let Some(d) = digit(c) {
                match &mut fraction {
                    Some(f) => f.push(char::from(b'0' + d)),
                    None => whole.push(char::from(b'0' + d)),
                }
            } else if c == ',' && fraction.is_none() && next_is_digit {
                grouped = true;
            } else if c == '.' && fraction.is_none() && next_is_digit {
                fraction = Some(String::new());
            } else {
                break;
            }
            j += 1;
        }
        let end = chars.get(j).map_or(text.len(), |(at, _)| *at);
        let percent = chars.get(j).is_some_and(|(_, c)| *c == '%');
        let whole = whole.trim_start_matches('0');
        let whole = if whole.is_empty() { "0" } else { whole };
        let fraction = fraction.map(|f| f.trim_end_matches('0').to_string());
        let mut canonical = whole.to_string();
        if let Some(f) = fraction.as_deref().filter(|f| !f.is_empty()) {
            canonical.push('.');
            canonical.push_str(f);
        }
        let kind = if percent {
            canonical.push('%');
            FigureKind::Percent
        } else if fraction.as_deref().is_some_and(|f| !f.is_empty()) {
            FigureKind::Decimal
        } else if grouped {
            FigureKind::Amount
        } else {
            FigureKind::Count
        };
        let end = if percent { end + 1 } else { end };
        out.push(Figure {
            canonical,
            kind,
            span: start..end,
        });
        i = j.max(i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_and_digits_do_not_change_a_figure() {
        let c = |t: &str| {
            stated(t)
                .into_iter()
                .map(|f| f.canonical)
                .collect::<Vec<_>>()
        };
        assert_eq!(c("1,00,000 and ১,০০,০০০ and 100000"), ["100000"; 3]);
        assert_eq!(c("৳5,000.00"), ["5000"]);
        assert_eq!(c("12.5% of 3."), ["12.5%", "3"]);
    }
}
