use hashbrown::HashMap;

use super::utils::{get_trigrams_with_positions, TrigramsWithPositions};
#[cfg(test)]
use super::LangProfile;
use super::LangProfileList;
use super::{Trigram, MAX_TOTAL_DISTANCE, MAX_TRIGRAM_DISTANCE};
use super::{ARABIC_LANGS, CYRILLIC_LANGS, DEVANAGARI_LANGS, HEBREW_LANGS, LATIN_LANGS};
use crate::core::{calculate_confidence, FilterList, Info, InternalQuery, Text};
use crate::scripts::grouping::MultiLangScript;
use crate::Lang;

#[derive(Debug)]
pub struct RawOutcome {
    pub trigrams_count: usize,
    pub raw_distances: Vec<(Lang, u32)>,
    pub scores: Vec<(Lang, f64)>,
}

#[inline]
pub fn detect(iquery: &InternalQuery) -> Option<Info> {
    let raw_outcome = raw_detect(iquery);
    let RawOutcome {
        trigrams_count,
        scores,
        ..
    } = raw_outcome;

    let mut raw_scores_iter = scores.into_iter();

    let opt_lang_score1 = raw_scores_iter.next();
    let opt_lang_score2 = raw_scores_iter.next();

    // TODO: Logic is duplicated in alphabets. Consider refactoring
    opt_lang_score1.map(|(lang1, score1)| {
        let script = iquery.multi_lang_script.to_script();
        let confidence = if let Some((_, score2)) = opt_lang_score2 {
            calculate_confidence(score1, score2, trigrams_count)
        } else {
            1.0
        };
        Info::new(script, lang1, confidence)
    })
}

#[inline]
pub fn raw_detect(iquery: &InternalQuery) -> RawOutcome {
    let lang_profile_list = script_to_lang_profile_list(iquery.multi_lang_script);
    calculate_scores_in_profiles(&iquery.text, iquery.filter_list, lang_profile_list)
}

fn script_to_lang_profile_list(script: MultiLangScript) -> LangProfileList {
    use MultiLangScript as MLS;
    match script {
        MLS::Latin => LATIN_LANGS,
        MLS::Cyrillic => CYRILLIC_LANGS,
        MLS::Arabic => ARABIC_LANGS,
        MLS::Devanagari => DEVANAGARI_LANGS,
        MLS::Hebrew => HEBREW_LANGS,
    }
}

#[inline]
fn calculate_scores_in_profiles(
    text: &Text,
    filter_list: &FilterList,
    lang_profile_list: LangProfileList,
) -> RawOutcome {
    let mut lang_distances: Vec<(Lang, u32)> = vec![];

    let TrigramsWithPositions {
        trigram_positions, ..
    } = get_trigrams_with_positions(&text.lowercase());
    let unique_trigrams_count = trigram_positions.len();

    // guard's change: the distances come from the text's trigrams through an index of the
    // profiles (see `ProfileIndex`), not from a look-up of every profile's 300 trigrams.
    let index = ProfileIndex::of(lang_profile_list);
    let closeness = index.closeness(&trigram_positions);
    for (position, &(lang, lang_trigrams)) in lang_profile_list.iter().enumerate() {
        if !filter_list.is_allowed(lang) {
            continue;
        }
        let dist = distance_from_closeness(
            lang_trigrams.len() as u32,
            closeness[position],
            &trigram_positions,
        );
        lang_distances.push(((lang), dist));
    }

    // Sort languages by distance
    lang_distances.sort_unstable_by_key(|(_, dist)| *dist);

    let max_dist = unique_trigrams_count as u32 * MAX_TRIGRAM_DISTANCE;

    let raw_scores = lang_distances
        .iter()
        .map(|&(lang, distance)| (lang, distance_to_raw_score(distance, max_dist)))
        .collect();

    RawOutcome {
        trigrams_count: unique_trigrams_count,
        scores: raw_scores,
        raw_distances: lang_distances,
    }
}

/// guard's change to whatlang 0.16.4. `calculate_distance` looks every trigram of every
/// profile up in the text's trigrams: 300 look-ups per language, about 10,000 for a Latin
/// text however short, which was most of guard's time per question that reached whatlang.
/// A profile trigram at rank `i` that the text has at rank `n` adds `|n - i|` to the distance,
/// one the text lacks adds `MAX_TRIGRAM_DISTANCE`; so the sum over a profile of `len` trigrams
/// is `len * MAX - closeness`, where `closeness` sums `MAX - |n - i|` over the trigrams the
/// text has. This index lists, for each trigram, the profiles and ranks that hold it, so the
/// closeness of every profile comes from the text's own trigrams (tens, not thousands). The
/// integers are the same, so every score is the same.
struct ProfileIndex {
    ranks: HashMap<Trigram, Vec<(u16, u16)>>,
    profiles: usize,
}

impl ProfileIndex {
    fn of(list: LangProfileList) -> &'static ProfileIndex {
        use std::sync::OnceLock;
        static INDEXES: [OnceLock<ProfileIndex>; 5] = [
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
        ];
        let slot = [
            LATIN_LANGS,
            CYRILLIC_LANGS,
            ARABIC_LANGS,
            DEVANAGARI_LANGS,
            HEBREW_LANGS,
        ]
        .iter()
        .position(|l| std::ptr::eq(l.as_ptr(), list.as_ptr()));
        let build = || {
            let mut ranks: HashMap<Trigram, Vec<(u16, u16)>> = HashMap::new();
            for (position, (_, trigrams)) in list.iter().enumerate() {
                for (rank, &trigram) in trigrams.iter().enumerate() {
                    ranks
                        .entry(trigram)
                        .or_default()
                        .push((position as u16, rank as u16));
                }
            }
            ProfileIndex {
                ranks,
                profiles: list.len(),
            }
        };
        match slot {
            Some(i) => INDEXES[i].get_or_init(build),
            // Every list is one of the five; should another appear, index it each time.
            None => Box::leak(Box::new(build())),
        }
    }

    /// Per profile, the sum of `MAX - |n - i|` (negative where a text rank is far below).
    fn closeness(&self, text_trigrams: &HashMap<Trigram, u32>) -> Vec<i64> {
        let mut closeness = vec![0i64; self.profiles];
        for (trigram, &n) in text_trigrams {
            for &(profile, rank) in self.ranks.get(trigram).map_or(&[][..], |r| r.as_slice()) {
                closeness[profile as usize] +=
                    MAX_TRIGRAM_DISTANCE as i64 - (n as i64 - rank as i64).abs();
            }
        }
        closeness
    }
}

/// `calculate_distance`'s result from the profile's length and closeness.
fn distance_from_closeness(
    profile_len: u32,
    closeness: i64,
    text_trigrams: &HashMap<Trigram, u32>,
) -> u32 {
    // The sum `calculate_distance` adds up term by term: never negative, at most 300 * 599.
    let mut total_dist = (profile_len as i64 * MAX_TRIGRAM_DISTANCE as i64 - closeness) as u32;

    let count = text_trigrams.len() as u32;

    if MAX_TRIGRAM_DISTANCE > count {
        let delta = MAX_TRIGRAM_DISTANCE - count;
        total_dist -= delta * MAX_TRIGRAM_DISTANCE;
    }

    total_dist.clamp(0, MAX_TOTAL_DISTANCE)
}

/// whatlang's own distance, kept to test the index against.
#[cfg(test)]
fn calculate_distance(lang_trigrams: LangProfile, text_trigrams: &HashMap<Trigram, u32>) -> u32 {
    let mut total_dist = 0u32;

    for (i, &trigram) in lang_trigrams.iter().enumerate() {
        let dist = match text_trigrams.get(&trigram) {
            Some(&n) => (n as i32 - i as i32).unsigned_abs(),
            None => MAX_TRIGRAM_DISTANCE,
        };
        total_dist += dist;
    }

    let count = text_trigrams.len() as u32;

    if MAX_TRIGRAM_DISTANCE > count {
        let delta = MAX_TRIGRAM_DISTANCE - count;
        total_dist -= delta * MAX_TRIGRAM_DISTANCE;
    }

    total_dist.clamp(0, MAX_TOTAL_DISTANCE)
}

#[inline]
fn distance_to_raw_score(distance: u32, max_distance: u32) -> f64 {
    let similarity = max_distance - distance;
    similarity as f64 / max_distance as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// guard's change: the index gives `calculate_distance`'s result for every profile.
    #[test]
    fn test_index_gives_the_same_distances() {
        let texts = [
            "Die Ordnung muss für immer in diesem Codebase bleiben",
            "why was my card declined at the shop yesterday",
            "a",
            "el banco no me deja pagar con la tarjeta desde ayer por la tarde y no sé por qué",
            "Привет, как дела? Я хочу знать почему моя карта заблокирована",
        ];
        let long: String = texts.iter().cycle().take(60).cloned().collect::<Vec<_>>().join(" ");
        for (text, list) in texts
            .iter()
            .map(|t| (t.to_string(), LATIN_LANGS))
            .chain([(long, LATIN_LANGS), (texts[4].to_string(), CYRILLIC_LANGS)])
        {
            let positions = get_trigrams_with_positions(&Text::new(&text).lowercase()).trigram_positions;
            let closeness = ProfileIndex::of(list).closeness(&positions);
            for (i, &(_, trigrams)) in list.iter().enumerate() {
                assert_eq!(
                    distance_from_closeness(trigrams.len() as u32, closeness[i], &positions),
                    calculate_distance(trigrams, &positions),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn test_when_german_is_given() {
        let text = "Die Ordnung muss für immer in diesem Codebase bleiben";
        let iq = InternalQuery {
            text: Text::new(text),
            filter_list: &FilterList::default(),
            multi_lang_script: MultiLangScript::Latin,
        };
        let raw_outcome = raw_detect(&iq);

        assert_eq!(raw_outcome.trigrams_count, 50);

        let &(first_lang, first_score) = raw_outcome.scores.first().unwrap();
        let &(_last_lang, last_score) = raw_outcome.scores.last().unwrap();

        assert_eq!(first_lang, Lang::Deu);

        assert!(first_score >= 0.0);
        assert!(first_score <= 1.0);

        assert!(last_score >= 0.0);
        assert!(last_score <= 1.0);
    }
}
