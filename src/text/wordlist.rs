//! The lines of the wordlists: `{a|b|}` groups expand to every combination, each line held to
//! a bound. The signature lists and the clause markers are written in it.

/// One line may not expand to more than this many signatures.
pub(crate) const MAX_EXPANSION: usize = 20_000;

/// Split a line into slots: each `{a|b|}` group is one slot with its branches, the text
/// between groups a slot with one piece.
pub(crate) fn factor(line: &str) -> Result<Vec<Vec<String>>, String> {
    let mut slots = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .map(|c| open + c)
            .ok_or("`{` without `}`")?;
        let literal = &rest[..open];
        if literal.contains('}') {
            return Err("`}` without `{`".into());
        }
        let branches: Vec<String> = rest[open + 1..close].split('|').map(String::from).collect();
        if branches.iter().any(|b| b.contains('{')) {
            return Err("nested `{` is not supported".into());
        }
        if !literal.is_empty() {
            slots.push(vec![literal.to_string()]);
        }
        slots.push(branches);
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err("`}` without `{`".into());
    }
    if !rest.is_empty() {
        slots.push(vec![rest.to_string()]);
    }
    Ok(slots)
}

/// Expand `{a|b|}` groups into every combination, white space collapsed.
pub fn expand(line: &str) -> Result<Vec<String>, String> {
    let slots = factor(line)?;
    expansions(&slots)?;
    Ok(expand_slots(&slots))
}

/// Every combination of one piece per slot, white space collapsed (the caller has checked
/// [`expansions`]).
pub(crate) fn expand_slots(slots: &[Vec<String>]) -> Vec<String> {
    let mut out = vec![String::new()];
    for slot in slots {
        out = out
            .iter()
            .flat_map(|prefix| slot.iter().map(move |piece| format!("{prefix}{piece}")))
            .collect();
    }
    out.into_iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// How many signatures the slots expand to, refused above [`MAX_EXPANSION`].
pub(crate) fn expansions(slots: &[Vec<String>]) -> Result<usize, String> {
    slots.iter().try_fold(1usize, |n, slot| {
        let n = n.saturating_mul(slot.len());
        if n > MAX_EXPANSION {
            Err(format!(
                "expands to more than {MAX_EXPANSION} signatures; split the line"
            ))
        } else {
            Ok(n)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion() {
        assert_eq!(
            expand("a {b|c} d{|e}").ok(),
            Some(vec![
                "a b d".into(),
                "a b de".into(),
                "a c d".into(),
                "a c de".into()
            ])
        );
        assert!(expand("a {b").is_err());
        assert!(expand("a }b").is_err());
    }
}
