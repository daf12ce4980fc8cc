//! The output screen on a 1,000-character answer: one shot, and streamed in 20-character chunks
//! (the per-chunk cost is the streamed time divided by the 50 chunks).
//! Run: `cargo bench --bench output`.

mod common;
use common::config;

fn main() {
    divan::main();
}

/// A real-looking bilingual answer, cut to 1,000 characters, with a card, two phones, an e-mail,
/// an OTP, an identifier and a tool name in it.
fn answer() -> String {
    let base = "Hello! I checked with kyc_lookup: your card 4111 1111 1111 1111 was blocked at \
                10:42 on 12/05/2025 after three wrong attempts. A new card reaches you in 7 days; \
                we will text 01711-223344. Customer CUST-0098123, write to help@bank.example. \
                আপনার কার্ডটি বন্ধ করা হয়েছে, আমরা ০১৮১১২২৩৩৪৪ নম্বরে এসএমএস পাঠাব। Your OTP is \
                483920, never share it. ";
    base.repeat(4).chars().take(1000).collect()
}

#[divan::bench]
fn one_shot_1000_chars(bencher: divan::Bencher) {
    let text = answer();
    let p = &config().products["wallet-assistant"];
    bencher.bench(|| guard::screens::output::screen(p, divan::black_box(&text)));
}

#[divan::bench]
fn streamed_1000_chars_in_50_chunks(bencher: divan::Bencher) {
    let chars: Vec<char> = answer().chars().collect();
    let chunks: Vec<String> = chars.chunks(20).map(|c| c.iter().collect()).collect();
    let p = &config().products["wallet-assistant"];
    bencher.bench(|| {
        let mut s = guard::screens::output::OutputStream::new(p);
        let mut n = 0;
        for c in &chunks {
            n += s.push(divan::black_box(c)).len();
        }
        let (rest, v) = s.finish(p);
        (n + rest.len(), v)
    });
}

/// The parts, for where the time goes: the value finder alone, and the skeleton the word
/// matchers read.
#[divan::bench]
fn values_1000_chars(bencher: divan::Bencher) {
    let text = answer();
    bencher.bench(|| guard::redact::values(divan::black_box(&text)));
}

#[divan::bench]
fn skeleton_1000_chars(bencher: divan::Bencher) {
    let text = answer();
    bencher.bench(|| guard::text::skeleton(divan::black_box(&text)));
}

#[divan::bench]
fn cards_only_1000_chars(bencher: divan::Bencher) {
    let text = answer();
    bencher.bench(|| guard::redact::mask_cards(divan::black_box(&text)));
}
