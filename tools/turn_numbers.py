"""Numbers written as people write them (western and lakh grouping, Bengali digits, the money
forms answers use), shared by tools/gen_turn_suites.py and tools/turn_answers.py. CC0."""

BN = str.maketrans("0123456789", "০১২৩৪৫৬৭৮৯")


def bn(s):
    return s.translate(BN)



def group_western(n):
    return f"{n:,}"


def group_lakh(n):
    s = str(n)
    if len(s) <= 3:
        return s
    head, tail = s[:-3], s[-3:]
    parts = []
    while len(head) > 2:
        parts.insert(0, head[-2:])
        head = head[:-2]
    if head:
        parts.insert(0, head)
    return ",".join(parts + [tail])


def canonical(x):
    """The contract's canonical figure: no grouping, no trailing zero decimals."""
    if isinstance(x, str):
        return x
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.2f}".rstrip("0").rstrip(".")


def money(x, style, digits):
    """An amount in one of the forms answers use."""
    whole = int(x)
    paisa = round((x - whole) * 100)
    frac = f".{paisa:02d}" if paisa else ""
    lakh = group_lakh(whole) + frac
    west = group_western(whole) + frac
    forms = {
        "taka_sign": f"৳{west}",
        "taka_sign_lakh": f"৳{lakh}",
        "tk_plain": f"Tk {whole}.{paisa:02d}",
        "taka_word": f"{west} taka",
        "bdt": f"BDT {lakh}",
        "bn_taka": f"{lakh} টাকা",
        "bn_sign": f"৳{lakh}",
    }
    text = forms[style]
    return bn(text) if digits == "bn" else text


EN_MONEY = ["taka_sign", "taka_sign_lakh", "tk_plain", "taka_word", "bdt"]
BN_MONEY = ["bn_taka", "bn_sign", "bn_taka"]
