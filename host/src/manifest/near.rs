//! "Did you mean": the closest of the names that would be right.

/// The candidate closest to `word` by edit distance, if it is close
/// enough to be a typo of it: the same letters in another case, or at
/// most one edit (a swap of two neighbours is one) per three characters,
/// at least one. Ties go to the first candidate.
pub(super) fn nearest<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<String> {
    let lower = word.to_lowercase();
    let allowed = (word.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        if candidate == word {
            continue;
        }
        let distance = strsim::osa_distance(&lower, &candidate.to_lowercase());
        if distance <= allowed && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, name)| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn a_typo_finds_the_name_and_a_stranger_finds_none() {
        let types = ["int", "float", "string", "bool"];
        assert_eq!(nearest("strng", types).as_deref(), Some("string"));
        assert_eq!(nearest("Int", types).as_deref(), Some("int"));
        assert_eq!(nearest("flaot", types).as_deref(), Some("float"));
        assert_eq!(nearest("Quest", types), None);
        assert_eq!(nearest("x", ["int"]), None);
    }
}
