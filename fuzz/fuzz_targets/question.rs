//! Every form of a question from arbitrary text: nothing panics, the forms that leave the
//! process carry no invisible character and no card number in clear.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let q = guard::screens::input::question::Question::new(text);
    let _ = q.text();
    let _ = q.hidden();
    let _ = q.folded();
    let _ = q.latin();
    let _ = q.paragraphs();
    let _ = q.decoded();
    let out = q.outbound();
    assert!(
        !out.chars().any(guard::text::is_invisible),
        "an invisible character in the outbound form"
    );
    let _ = guard::text::normalise_output(text);
    let _ = guard::redact::mask_cards(text);
});
