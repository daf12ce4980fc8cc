//! The language screen (script → banglish → lang_id) on short (~30), medium (~100) and long
//! (~1,000 character) questions in each script, on the shipped wordlists. Run:
//! `cargo bench --bench language`.

mod common;
use common::config;
use guard::screens::input::stages::{banglish, lang_id, script};

fn main() {
    divan::main();
}

const EN_SHORT: &str = "Why was my card declined today?";
const EN_MEDIUM: &str = "I transferred money to my savings account yesterday but the balance still shows the old amount.";
const BN_SHORT: &str = "আমার কার্ড কেন বন্ধ হয়ে গেল?";
const BN_MEDIUM: &str =
    "গতকাল আমি আমার সঞ্চয়ী হিসাবে টাকা পাঠিয়েছি কিন্তু ব্যালেন্সে এখনও পুরোনো অংকটাই দেখাচ্ছে, কী করব?";
const BANGLISH_SHORT: &str = "amar card ta block hoye geche";
const BANGLISH_MEDIUM: &str = "ami gotokal amar savings account e taka pathaisi kintu balance e ekhono ager amount dekhacche keno";
const HINDI_MEDIUM: &str =
    "मैंने कल अपने बचत खाते में पैसे भेजे लेकिन बैलेंस में अभी भी पुरानी राशि दिख रही है, क्या करूँ?";

fn long(s: &str) -> String {
    let mut out = String::new();
    while out.chars().count() < 1000 {
        out.push_str(s);
        out.push(' ');
    }
    out
}

/// The language screen as the pipeline runs it.
fn language_screen(text: &str) -> bool {
    let p = &config().products["wallet-assistant"];
    match script::evaluate(text) {
        script::ScriptEval::Bangla { .. } => true,
        script::ScriptEval::Other { .. } => false,
        script::ScriptEval::NoLetters => true,
        script::ScriptEval::Latin { .. } => match banglish::evaluate(&p.input.lexicon, text) {
            banglish::BanglishEval::English(_) => true,
            banglish::BanglishEval::Romanized { .. } => false,
            banglish::BanglishEval::Undecided(ev) => matches!(
                lang_id::evaluate(text, &ev),
                lang_id::LangIdEval::Pass { .. }
            ),
        },
    }
}

#[divan::bench(args = ["en_short", "en_medium", "en_long", "bn_short", "bn_medium", "bn_long", "banglish_short", "banglish_medium", "banglish_long", "hi_medium", "hi_long"])]
fn screen(bencher: divan::Bencher, case: &str) {
    let text = match case {
        "en_short" => EN_SHORT.to_string(),
        "en_medium" => EN_MEDIUM.to_string(),
        "en_long" => long(EN_MEDIUM),
        "bn_short" => BN_SHORT.to_string(),
        "bn_medium" => BN_MEDIUM.to_string(),
        "bn_long" => long(BN_MEDIUM),
        "banglish_short" => BANGLISH_SHORT.to_string(),
        "banglish_medium" => BANGLISH_MEDIUM.to_string(),
        "banglish_long" => long(BANGLISH_MEDIUM),
        "hi_medium" => HINDI_MEDIUM.to_string(),
        _ => long(HINDI_MEDIUM),
    };
    let _ = config();
    bencher.bench(|| language_screen(divan::black_box(&text)));
}

#[divan::bench(args = ["bn_medium", "hi_medium", "en_medium"])]
fn script_only(bencher: divan::Bencher, case: &str) {
    let text = match case {
        "bn_medium" => BN_MEDIUM,
        "hi_medium" => HINDI_MEDIUM,
        _ => EN_MEDIUM,
    };
    bencher.bench(|| script::evaluate(divan::black_box(text)));
}
