"""The answer set of tools/gen_turn_suites.py: whole turns (question -> calls -> results ->
answer) of the shipped products' tools, with answers restating the results' figures, half of
them carrying one planted figure no result or question gave.

Every case is checked here before it is written: the planted figure is in no result, not in
the question, not a constant; every other figure of the answer is in a result, the question,
the constants, a year or a step number (by this file's own reading of figures, which follows
the contract of `crate::turn::figures`: grouping dropped, `৳5,000.00` = `5000`, Bengali digits
read as ASCII, `12.5%` keeps its `%`).
"""
import json
import re

from turn_numbers import BN, EN_MONEY, BN_MONEY, bn, canonical, group_lakh, group_western, money

FIGURE = re.compile(r"[0-9০-৯]+(?:,[0-9০-৯]+)*(?:\.[0-9০-৯]+)?%?")
TO_ASCII = str.maketrans("০১২৩৪৫৬৭৮৯", "0123456789")


def figures(text):
    """Every figure `text` states, canonical."""
    out = []
    for m in FIGURE.finditer(text.translate(TO_ASCII)):
        s = m.group(0)
        pct = s.endswith("%")
        s = s.rstrip("%").replace(",", "")
        if "." in s:
            s = s.rstrip("0").rstrip(".")
        s = s.lstrip("0") or "0"
        out.append(s + ("%" if pct else ""))
    return out


def step_numbers(text):
    """List numbers: `1.` / `১.` at the start of the text or after a sentence's end."""
    t = text.translate(TO_ASCII)
    return {m.group(1) for m in re.finditer(r"(?:^|[.।:]\s+)(\d)\.\s", t)}


def years(text):
    return {f for f in figures(text) if re.fullmatch(r"(19|20)\d\d", f)}


# ---------------------------------------------------------------------------------------------
# Amounts and counts in words

def amount(rng, lo, hi, paisa=False):
    whole = rng.randrange(lo, hi)
    whole -= whole % rng.choice([1, 10, 50, 100])
    whole = max(whole, lo)
    if paisa and rng.random() < 0.4:
        return whole + rng.choice([0.5, 0.25, 0.75])
    return whole


def say_money(x, lang, rng, digits=None):
    if lang == "en":
        return money(x, rng.choice(EN_MONEY), digits or "ascii")
    return money(x, rng.choice(BN_MONEY), digits or ("bn" if rng.random() < 0.75 else "ascii"))


def say_count(n, lang, what, rng, digits=None):
    if lang == "en":
        return f"{n} {what['en']}{'' if n == 1 else 's'}"
    d = digits or ("bn" if rng.random() < 0.75 else "ascii")
    s = str(n)
    return f"{bn(s) if d == 'bn' else s}টি {what['bn']}"


def say_pct(p, lang, rng):
    s = f"{canonical(p)}%"
    return bn(s) if lang == "bn" and rng.random() < 0.75 else s


# Sentences that hold figures which are not facts about the records.
def extras(product, lang, rng, constants):
    hotline = constants["hotline"]
    pool = {
        "en": [f"For help, call {hotline}.", "Your 2025 tax certificate is in the app.",
               "To check it yourself: 1. Open the app. 2. Tap Statement."],
        "bn": [f"সাহায্যের জন্য {bn(hotline)} নম্বরে কল করুন।", "আপনার ২০২৫ সালের ট্যাক্স সার্টিফিকেট অ্যাপে আছে।",
               "নিজে দেখতে: ১. অ্যাপ খুলুন। ২. স্টেটমেন্ট চাপুন।"],
    }[lang]
    if product == "wallet-assistant" and "cash_out_fee" in constants:
        fee = constants["cash_out_fee"]
        pool.append(f"Cashing out at an agent costs {fee}." if lang == "en" else f"এজেন্ট থেকে ক্যাশ আউটে খরচ {bn(fee)}।")
    k = rng.choice([0, 0, 1, 1, 2])
    return rng.sample(pool, k)


# ---------------------------------------------------------------------------------------------
# Scenarios: each gives the question, the calls, the results and the answer's facts

COUNT_WHAT = {"txn": {"en": "transaction", "bn": "লেনদেন"}}
MONTHS = [("November", "নভেম্বর", 11), ("October", "অক্টোবর", 10), ("September", "সেপ্টেম্বর", 9)]


def wallet_no(rng):
    return f"01{rng.choice('3456789')}{rng.randrange(10**8):08d}"


def txns(rng, n, day=None, month=11):
    out = []
    for i in range(n):
        d = day or rng.randrange(1, 29)
        out.append({"id": f"TXN{rng.randrange(10**7, 10**8)}", "date": f"2026-{month:02d}-{d:02d}",
                    "kind": rng.choice(["out", "payment", "in"]), "amount": amount(rng, 150, 9000)})
    return out


def s_balance(rng, lang, w):
    bal = amount(rng, 300, 250000, paisa=True)
    q = {"en": rng.choice(["What is my balance?", "How much money is in my wallet?", "Check my balance please"]),
         "bn": rng.choice(["আমার ব্যালেন্স কত?", "আমার ওয়ালেটে কত টাকা আছে?"])}[lang]
    calls = [{"id": "c1", "tool": "get_balance", "args": {"wallet": w}}]
    results = [{"id": "c1", "tool": "get_balance", "ok": True,
                "content": {"wallet": w, "balance": bal, "currency": "BDT", "as_of": "2026-11-30T10:15:00+06:00"}}]
    facts = [("balance", bal, "money")]
    tpl = {"en": ["Your balance is {balance}.", "You have {balance} in your wallet right now."],
           "bn": ["আপনার ব্যালেন্স {balance}।", "এই মুহূর্তে আপনার ওয়ালেটে {balance} আছে।"]}[lang]
    return q, calls, results, facts, rng.choice(tpl)


def s_count(rng, lang, w):
    n = rng.randrange(2, 9)
    ts = txns(rng, n)
    big = max(t["amount"] for t in ts)
    q = {"en": rng.choice(["How many transactions did I make this month?", "How many payments this month?"]),
         "bn": rng.choice(["এই মাসে আমি কয়টি লেনদেন করেছি?", "এই মাসে কতগুলো লেনদেন হয়েছে?"])}[lang]
    calls = [{"id": "c1", "tool": "list_transactions", "args": {"wallet": w, "count": 50, "from": "2026-11-01", "to": "2026-11-30"}}]
    results = [{"id": "c1", "tool": "list_transactions", "ok": True, "content": {"wallet": w, "count": n, "transactions": ts}}]
    facts = [("count", n, "count"), ("largest", big, "money")]
    tpl = {"en": ["You made {count} this month; the largest was {largest}.", "This month shows {count}, the biggest {largest}."],
           "bn": ["এই মাসে আপনি {count} করেছেন, সবচেয়ে বড়টি {largest}।", "এই মাসে {count} হয়েছে; সর্বোচ্চ {largest}।"]}[lang]
    return q, calls, results, facts, rng.choice(tpl)


def s_on_date(rng, lang, w):
    en_m, bn_m, m = rng.choice(MONTHS)
    day = rng.randrange(2, 28)
    n = rng.randrange(1, 4)
    ts = txns(rng, n, day=day, month=m)
    total_day = sum(t["amount"] for t in ts)
    q = {"en": f"What did I spend on {day} {en_m}?", "bn": f"{bn(str(day))} {bn_m} আমি কত খরচ করেছি?"}[lang]
    date = f"2026-{m:02d}-{day:02d}"
    calls = [{"id": "c1", "tool": "list_transactions", "args": {"wallet": w, "count": 20, "from": date, "to": date}}]
    results = [{"id": "c1", "tool": "list_transactions", "ok": True,
                "content": {"wallet": w, "count": n, "total": total_day, "transactions": ts}}]
    facts = [("count", n, "count"), ("total", total_day, "money")]
    day_s = {"en": f"{day} {en_m}", "bn": f"{bn(str(day))} {bn_m}"}[lang]
    tpl = {"en": [f"On {day_s} you made {{count}} worth {{total}} in all.", f"You spent {{total}} on {day_s} ({{count}})."],
           "bn": [f"{day_s} আপনি মোট {{total}} খরচ করেছেন ({{count}})।", f"{day_s} তারিখে {{count}} হয়েছে, মোট {{total}}।"]}[lang]
    return q, calls, results, facts, rng.choice(tpl)


def s_send(rng, lang, w):
    amt = amount(rng, 200, 9500)
    to = wallet_no(rng)
    fee = rng.choice([0, 5, 10])
    bal_after = amount(rng, 500, 80000)
    said = {"en": rng.choice([str(amt), group_western(amt)]), "bn": bn(group_western(amt))}[lang]
    q = {"en": f"Send {said} taka to my brother", "bn": f"আমার ভাইকে {said} টাকা পাঠান"}[lang]
    calls = [{"id": "c1", "tool": "send_money", "args": {"wallet": w, "to": to, "amount": amt}}]
    results = [{"id": "c1", "tool": "send_money", "ok": True,
                "content": {"status": "completed", "transaction_id": f"TXN{rng.randrange(10**7, 10**8)}",
                            "amount": amt, "fee": fee, "balance_after": bal_after}}]
    facts = [("sent", amt, "money"), ("balance", bal_after, "money")]
    if fee:
        facts.append(("fee", fee, "money"))
        tpl = {"en": ["Done: {sent} sent with a fee of {fee}. Your balance is now {balance}."],
               "bn": ["সম্পন্ন: {sent} পাঠানো হয়েছে, চার্জ {fee}। এখন আপনার ব্যালেন্স {balance}।"]}[lang]
    else:
        tpl = {"en": ["Done: {sent} sent at no charge. Your balance is now {balance}.", "Sent {sent}; {balance} is left in your wallet."],
               "bn": ["সম্পন্ন: {sent} পাঠানো হয়েছে। এখন আপনার ব্যালেন্স {balance}।"]}[lang]
    return q, calls, results, facts, rng.choice(tpl)


def s_bill(rng, lang, w):
    amt = amount(rng, 300, 7000, paisa=True)
    q = {"en": "Pay my DESCO electricity bill", "bn": "আমার ডেসকো বিদ্যুৎ বিল দিয়ে দিন"}[lang]
    calls = [{"id": "c1", "tool": "pay_bill", "args": {"wallet": w, "biller": "DESCO", "amount": amt}}]
    results = [{"id": "c1", "tool": "pay_bill", "ok": True,
                "content": {"status": "paid", "biller": "DESCO", "amount": amt, "reference": f"DSC{rng.randrange(10**6, 10**7)}"}}]
    facts = [("paid", amt, "money")]
    tpl = {"en": ["Your DESCO bill of {paid} is paid.", "I paid {paid} to DESCO."],
           "bn": ["আপনার ডেসকো বিল {paid} পরিশোধ হয়েছে।", "ডেসকোতে {paid} পরিশোধ করা হয়েছে।"]}[lang]
    return q, calls, results, facts, rng.choice(tpl)


def s_balance_and_last(rng, lang, w):
    bal = amount(rng, 1000, 300000)
    ts = txns(rng, rng.randrange(1, 4))
    last = ts[0]["amount"]
    q = {"en": "What's my balance and my last transaction?", "bn": "আমার ব্যালেন্স আর শেষ লেনদেনটা কত?"}[lang]
    calls = [{"id": "c1", "tool": "get_balance", "args": {"wallet": w}},
             {"id": "c2", "tool": "list_transactions", "args": {"wallet": w, "count": 1, "from": "2026-11-01", "to": "2026-11-30"}}]
    results = [{"id": "c1", "tool": "get_balance", "ok": True, "content": {"wallet": w, "balance": bal, "currency": "BDT"}},
               {"id": "c2", "tool": "list_transactions", "ok": True, "content": {"wallet": w, "count": len(ts[:1]), "transactions": ts[:1]}}]
    facts = [("balance", bal, "money"), ("last", last, "money")]
    tpl = {"en": ["Your balance is {balance} and your last transaction was {last}."],
           "bn": ["আপনার ব্যালেন্স {balance}, আর শেষ লেনদেন ছিল {last}।"]}[lang]
    return q, calls, results, facts, rng.choice(tpl)


def cif(rng):
    return f"CIF-{rng.randrange(10**5, 10**6)}"


def s_customer(rng, lang, c):
    bal = amount(rng, 5000, 2500000, paisa=True)
    rate = rng.choice([3.5, 4.25, 5, 6.75, 7.5])
    q = {"en": f"Look up customer {c} and tell me the savings balance", "bn": f"গ্রাহক {c} এর সেভিংস ব্যালেন্স দেখান"}[lang]
    calls = [{"id": "c1", "tool": "lookup_customer", "args": {"customer_id": c}}]
    results = [{"id": "c1", "tool": "lookup_customer", "ok": True,
                "content": {"customer_id": c, "segment": "retail", "accounts": [
                    {"type": "savings", "balance": bal, "interest_rate": f"{canonical(rate)}%", "currency": "BDT"}]}}]
    facts = [("balance", bal, "money"), ("rate", rate, "pct")]
    tpl = {"en": ["The savings account holds {balance} at {rate} a year.", "Savings balance: {balance}, interest {rate}."],
           "bn": ["সেভিংস অ্যাকাউন্টে {balance} আছে, সুদের হার {rate}।"]}[lang]
    return q, calls, results, facts, rng.choice(tpl)


def s_statement(rng, lang, c):
    opening = amount(rng, 10000, 900000)
    debits = amount(rng, 1000, 200000)
    credits = amount(rng, 1000, 200000)
    closing = opening - debits + credits
    entries = rng.randrange(3, 40)
    en_m, bn_m, m = rng.choice(MONTHS)
    q = {"en": f"Get the {en_m} statement for {c}", "bn": f"{c} এর {bn_m} মাসের স্টেটমেন্ট দিন"}[lang]
    calls = [{"id": "c1", "tool": "get_account_statement", "args": {"customer_id": c, "from": f"2026-{m:02d}-01", "to": f"2026-{m:02d}-28"}}]
    results = [{"id": "c1", "tool": "get_account_statement", "ok": True,
                "content": {"customer_id": c, "opening_balance": opening, "closing_balance": closing,
                            "total_debits": debits, "total_credits": credits, "entries": entries}}]
    facts = [("opening", opening, "money"), ("closing", closing, "money"), ("count", entries, "count")]
    tpl = {"en": ["The statement opens at {opening} and closes at {closing}, with {count}."],
           "bn": ["স্টেটমেন্টের শুরুতে {opening}, শেষে {closing}; মোট {count}।"]}[lang]
    return q, calls, results, facts, rng.choice(tpl)


def s_refund(rng, lang, c):
    amt = rng.choice([50, 100, 150, 200, 250, 500])
    q = {"en": f"Refund the SMS fee for {c}", "bn": f"{c} এর এসএমএস চার্জ ফেরত দিন"}[lang]
    calls = [{"id": "c1", "tool": "refund_fee", "args": {"customer_id": c, "amount": amt}}]
    results = [{"id": "c1", "tool": "refund_fee", "ok": True,
                "content": {"status": "refunded", "customer_id": c, "amount": amt, "fee_id": f"FEE-{rng.randrange(10**5, 10**6)}"}}]
    facts = [("refund", amt, "money")]
    tpl = {"en": ["I refunded {refund} to the customer.", "The fee of {refund} is refunded."],
           "bn": ["গ্রাহককে {refund} ফেরত দেওয়া হয়েছে।"]}[lang]
    return q, calls, results, facts, rng.choice(tpl)


def s_bank_txns(rng, lang, c):
    n = rng.randrange(2, 12)
    ts = txns(rng, n)
    big = max(t["amount"] for t in ts)
    q = {"en": f"How many transactions did {c} make in November?", "bn": f"নভেম্বরে {c} কয়টি লেনদেন করেছেন?"}[lang]
    calls = [{"id": "c1", "tool": "list_transactions", "args": {"customer_id": c, "count": 100, "from": "2026-11-01", "to": "2026-11-30"}}]
    results = [{"id": "c1", "tool": "list_transactions", "ok": True, "content": {"customer_id": c, "count": n, "transactions": ts}}]
    facts = [("count", n, "count"), ("largest", big, "money")]
    tpl = {"en": ["The customer made {count} in November; the largest was {largest}."],
           "bn": ["নভেম্বরে গ্রাহক {count} করেছেন, সবচেয়ে বড়টি {largest}।"]}[lang]
    return q, calls, results, facts, rng.choice(tpl)


SCENARIOS = {
    "wallet-assistant": [s_balance, s_count, s_on_date, s_send, s_bill, s_balance_and_last],
    "bank-operator": [s_customer, s_statement, s_refund, s_bank_txns],
}
PER_PRODUCT = {"wallet-assistant": 200, "bank-operator": 140}


# ---------------------------------------------------------------------------------------------
# Planting

def one_digit(x, rng):
    s = str(int(x))
    i = rng.randrange(len(s))
    d = rng.choice([c for c in "0123456789" if c != s[i] and not (i == 0 and c == "0")])
    out = int(s[:i] + d + s[i + 1:])
    return out + (x - int(x))


def lakh_shift(x, rng):
    """Moved across the lakh grouping: ten times more or less (1,00,000 <-> 10,00,000)."""
    x = int(x)
    return x * 10 if x < 100000 or rng.random() < 0.5 or x % 10 else x // 10


def say(kind, value, lang, rng):
    if kind == "money":
        return say_money(value, lang, rng)
    if kind == "count":
        return say_count(value, lang, COUNT_WHAT["txn"], rng)
    return say_pct(value, lang, rng)


PLANT_SENTENCES = {
    "sum": {"en": "In total that makes {v}.", "bn": "সব মিলিয়ে {v}।"},
    "absent_fee": {"en": "A service fee of {v} was charged.", "bn": "এর জন্য {v} সার্ভিস চার্জ কাটা হয়েছে।"},
    "absent_count": {"en": "You also have {v} pending.", "bn": "এছাড়া আপনার {v} অপেক্ষমাণ আছে।"},
}


def grounded_figures(results, question, constants, answer):
    known = set()
    for r in results:
        known.update(figures(json.dumps(r["content"], ensure_ascii=False)))
    known.update(figures(question))
    for c in constants.values():
        known.update(figures(c))
    known.update(years(answer))
    known.update(step_numbers(answer))
    return known


def cases(product, rng, constants):
    out = []
    scenarios = SCENARIOS[product]
    attempts = 0
    while len(out) < PER_PRODUCT[product]:
        attempts += 1
        assert attempts < 20 * PER_PRODUCT[product], "the planting keeps failing its own checks"
        # Every scenario in both languages, planted and grounded alike: a case that fails its
        # own checks is drawn again with fresh values, so the shares stay even.
        k = len(out)
        plant = k % 2 == 1
        scen = scenarios[(k // 2) % len(scenarios)]
        lang = "en" if (k // (2 * len(scenarios))) % 2 == 0 else "bn"
        owner = wallet_no(rng) if product == "wallet-assistant" else cif(rng)
        q, calls, results, facts, template = scen(rng, lang, owner)
        values = {name: (v, kind) for name, v, kind in facts}
        how, planted = None, None
        text_values = {name: say(kind, v, lang, rng) for name, (v, kind) in values.items()}
        tail = []
        if plant:
            money_facts = [n for n, (v, k) in values.items() if k == "money"]
            sums = ["sum", "sum"] if len(money_facts) >= 2 else []
            how = rng.choice(["one_digit", "one_digit", "lakh_shift", "absent_fee", "absent_count"] + sums)
            if how in ("one_digit", "lakh_shift"):
                name = rng.choice([n for n, (v, k) in values.items() if k != "pct" or how == "one_digit"])
                v, kind = values[name]
                if kind == "pct":
                    new = float(one_digit(int(v * 100), rng)) / 100
                elif kind == "count":
                    new = v + rng.choice([1, 2, 3]) if how == "one_digit" else v * 10
                else:
                    new = one_digit(v, rng) if how == "one_digit" else lakh_shift(v, rng)
                if how == "lakh_shift" and kind == "money":
                    # Written with the lakh grouping, so the move shows in the commas.
                    whole = group_lakh(int(new)) + (f".{round((new - int(new)) * 100):02d}" if new != int(new) else "")
                    text_values[name] = (f"৳{whole}" if lang == "en" else bn(f"{whole} টাকা"))
                else:
                    text_values[name] = say(kind, new, lang, rng)
                planted = canonical(new) + ("%" if kind == "pct" else "")
            elif how == "sum":
                if len(money_facts) < 2:
                    continue
                a, b = rng.sample(money_facts, 2)
                new = values[a][0] + values[b][0]
                planted = canonical(new)
                tail.append(PLANT_SENTENCES["sum"][lang].format(v=say_money(new, lang, rng)))
            elif how == "absent_fee":
                new = rng.choice([12.5, 15, 18.5, 20, 25, 35])
                planted = canonical(new)
                tail.append(PLANT_SENTENCES["absent_fee"][lang].format(v=say_money(new, lang, rng)))
            else:
                new = rng.randrange(2, 7)
                planted = canonical(new)
                tail.append(PLANT_SENTENCES["absent_count"][lang].format(v=say_count(new, lang, COUNT_WHAT["txn"], rng)))
        answer = " ".join([template.format(**text_values)] + tail + extras(product, lang, rng, constants))
        known = grounded_figures(results, q, constants, answer)
        stated = figures(answer)
        if plant:
            # Planted means grounded nowhere; and it must be the answer's only such figure.
            if planted in known or planted not in stated or any(f not in known for f in stated if f != planted):
                continue
        elif any(f not in known for f in stated):
            raise SystemExit(f"a grounded answer states an ungrounded figure: {answer}")
        evidence = sorted({canonical(v) + ("%" if k == "pct" else "") for n, (v, k) in values.items()}
                          - ({planted} if planted else set()))
        evidence = [f for f in evidence if f in known]
        name = f"{SCEN_NAME[scen.__name__]}-{lang}-{len(out):03d}" + (f"-{how.replace('_', '-')}" if how else "")
        expect = {"question": "allow", "answer": "needs_lookup" if plant else "allow",
                  "ungrounded": [planted] if plant else [], "evidence": evidence, "unchanged": True}
        case = {"name": name, "question": q,
                "calls": [dict(c, expect={"decision": "run"}) for c in calls],
                "results": results, "answer": answer}
        if how:
            case["planted"] = how
        case["expect"] = expect
        out.append(case)
    return out


SCEN_NAME = {f.__name__: f.__name__[2:].replace("_", "-") for fs in SCENARIOS.values() for f in fs}
