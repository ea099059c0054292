"""The notation of the erratum and the report: every symbol once, and prose with plain-text
mathematics typeset for LaTeX, Markdown and HTML.

The ledger's strings (statements as printed, corrections, check claims) write mathematics in
plain text (``||S^(T) - S*||_F = Theta(1/T)``, ``eta <= eta_limit/2``, ``T->oo``) and, where a
check quotes a derived form, as sympy strings (``K*D**4/(eta*T)``). :func:`segments` splits
such prose into text, mathematics (LaTeX) and references (check ids, module paths);
:func:`tex`, :func:`markdown` and :func:`html` render the segments. Identifiers of the code
are replaced by their symbols (:data:`GLOSSARY`); sympy strings go through
:func:`rdyn.derivations.formula.parse` (never ``sympify``) and sympy's LaTeX printer.

One letter, one meaning: ``e`` followed by an exponent that contains a variable is Euler's
number (``e^{-2(C2+C3)/D}`` is ``exp(-2(C2+C3)/D)``); every other ``e`` of the ledger's prose is
``exp(-(C2+C3)/D)`` and is written :data:`XI` (the notation defines it).
"""
from __future__ import annotations

import html as _html
import re
from functools import lru_cache

#: the symbol of exp(-(C2+C3)/D) (the ledger's prose writes it ``e``)
XI = r"\xi"

GREEK = {name: "\\" + name for name in (
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
    "nu", "xi", "pi", "rho", "sigma", "tau", "phi", "chi", "psi", "omega", "Gamma", "Delta", "Theta",
    "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega")}
GREEK["eps"] = r"\epsilon"

#: identifiers of the code (and plain-text names) -> their symbol, in LaTeX
GLOSSARY = {
    "T_star": r"T^*", "Tstar": r"T^*", "tau_star": r"\tau^*", "eta_limit": r"\eta_{\lim}",
    "eta_lim": r"\eta_{\lim}", "paper_eta": r"\eta_{\mathrm{paper}}", "eta_paper": r"\eta_{\mathrm{paper}}",
    "vstar_norm2": "M", "excess_loss": r"L(T) - L_{\mathrm{opt}}", "S_error_F": r"\|S^{(T)} - S^*\|_F",
    "WV_error_F": r"\|W_V^{(T)} - V^*\|_F", "one_minus_Kp": r"1 - Kp(T)", "one_over_K_minus_p": r"1/K - p(T)",
    "delta_C2_plus_C3": r"\Delta(C_2 + C_3)", "ood_excess_loss": r"L_{OOD} - L^*_{OOD}",
    "eta_max": r"\eta_{\max}", "gamma_star": r"\gamma^\star", "gammastar": r"\gamma^\star",
    "L_opt": r"L_{\mathrm{opt}}", "L_OOD": r"L_{OOD}", "L*_OOD": r"L^*_{OOD}", "q_min": r"q_{\min}",
    "F2_1": r"F_{2,1}", "W_KQ": r"W_{KQ}", "W_V": r"W_V", "sqrtD": r"\sqrt{D}", "oo": r"\infty",
    "R+-": r"R_\pm", "R+": r"R_+", "R-": r"R_-", "p_c": r"p_c", "c_L": r"c_L", "lambda_d": r"\lambda_d",
    "Kp": "Kp", "Dp": "Dp", "DK": "DK", "ab": "ab", "Kq": "Kq", "KN": "KN", "dC1*/dp": r"dC_1^*/dp",
    "T_times_excess_loss_at_T_eq_4_Tstar": r"T\,(L(T) - L_{\mathrm{opt}})\ \mathrm{at}\ T = 4T^*",
    "ratio_sum_minus_1": r"\mathrm{ratio} - 1", "kappa": r"\kappa", "Upsilon": r"\Upsilon",
    "de": r"d\xi", "dtau": r"d\tau", "XX": "XX", "UU": "UU", "Sa": "Sa", "infinity": r"\infty",
}

#: operators written with a subscript (sum_i, grad_{W_KQ})
BIG = {"sum": r"\sum", "prod": r"\prod", "int": r"\int", "grad": r"\nabla", "max": r"\max", "min": r"\min"}

#: phrases of the ledger's prose that name a symbol
PHRASES = (("the B3_* identities", "the identities of Theorem B.3"), ("the papers' eta", "eta_paper"), ("the paper's eta", "eta_paper"), ("papers' eta", "eta_paper"),
           ("paper eta", "eta_paper"), ("paper-eta", "eta_paper"))

#: function names: LaTeX, when followed by an opening bracket
FUNCTIONS = {"sqrt": None, "exp": r"\exp", "log": r"\log", "ln": r"\ln", "arctan": r"\arctan", "atan": r"\arctan",
             "sin": r"\sin", "cos": r"\cos", "tan": r"\tan", "min": r"\min", "max": r"\max", "Theta": r"\Theta",
             "Phi": r"\Phi", "phi": r"\phi", "O": "O", "E": "E", "Var": r"\mathrm{Var}", "tr": r"\mathrm{tr}",
             "sup": r"\sup", "inf": r"\inf", "lim": r"\lim", "acos": r"\arccos", "erf": r"\mathrm{erf}",
             "psi": r"\psi", "sigma": r"\sigma", "s": "s", "L": "L", "p": "p", "q": "q", "A": "A", "H": "H",
             "f": "f", "g": "g", "P": "P", "Upsilon": r"\Upsilon", "Min": r"\min", "Max": r"\max"}

#: words that stay text whatever follows them
TEXT_WORDS = {"a", "A", "I", "e.g.", "i.e.", "vs", "log-log"}

_TOKEN = re.compile(r"""
    (?P<code>rdyn(?:\.[A-Za-z_][A-Za-z0-9_]*)+
      |rdyn\ [a-z]+(?:\ --[a-z-]+(?:\ (?!--)[A-Za-z0-9_.=,]+)?)+
      |[A-Z]\d+\.[a-z][a-z_]*(?:\.[a-z_]+)*(?:/[a-z_]+)*
      |[A-Z]\d*(?:_[a-z]{5,}|(?:_[a-z]+){2,})(?:\.[a-z_]+)*(?![A-Za-z0-9_])
      |`[^`\s][^`]*`
      |S\.[AB](?:\.[A-Za-z0-9_*?]+)+
      |[AB]\.[A-Za-z0-9_]*[a-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_*?]+)*(?:\[\.?[A-Za-z0-9_]+\])?(?:\.\*)?
      |(?:[a-z_]+/)+[a-z_]+\.[a-z]+|[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}(?:\.py|\.md)?|[a-z_]+\.(?:py|md))
   |(?P<abbr>(?:Model|Paper)\ [AB](?![A-Za-z0-9_.*])|e\.g\.|i\.e\.|w\.r\.t\.|[123]-D(?=\ [a-z])|log-log|et\ al\.|[A-Z]\.\d+(?:\.\d+)*(?:-[A-Z]?\.?\d+)?(?:'s)?|'s(?![A-Za-z]))
   |(?P<num>\d+(?:\.\d+)?(?:e[-+]?\d+)?)
   |(?P<word>dC1\*/dp|[fT]\*(?=\()|C1\*(?=\([tTp])|R\+-|R[+-](?=\s*=)|L\*_OOD
      |[A-Za-z][A-Za-z0-9]*~?_\{[^{}]*\}|[A-Za-z][A-Za-z0-9]*~?_\([^()]*\)|[A-Za-z][A-Za-z0-9]*~_[A-Za-z0-9]+
      |[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*(?:'s(?![A-Za-z])|'(?![A-Za-z]))?(?:\*(?![A-Za-z0-9(*]))?(?:_[A-Za-z0-9]+)?)
   |(?P<open>[(\[{]|<(?=[^<>=\s][^<>]*>_[A-Za-z0-9]))|(?P<close>[)\]}]|>_[A-Za-z0-9]+)
   |(?P<op><=|>=|->|!=|\+-|\*\*|\|\|_[A-Za-z0-9]+|\|_[A-Za-z0-9]+|\|\||[=<>+\-*/^|~])
   |(?P<ws>\s+)
   |(?P<other>.)
""", re.VERBOSE)

_CLOSE = {"(": ")", "[": "]", "{": "}", "<": ">"}   # <X, Y>_F: an inner product


def _word_tex(word: str, follows: str = "") -> str | None:
    """LaTeX of a word when it is mathematics (None for an ordinary word). ``follows`` is the
    next non-space character (a function name is mathematics only before a bracket)."""
    if word in GLOSSARY:
        return GLOSSARY[word]
    braced = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)(~?)_(?:\{([^{}]*)\}|\(([^()]*)\)|([A-Za-z0-9]+))", word)
    if braced and (braced.group(2) or braced.group(3) is not None or braced.group(4) is not None):
        # grad_{W_KQ}, sum_{i' in G^i}, w_{V, m}, gamma_(t+1), alpha~_t
        base, tilde, sub = braced.group(1), braced.group(2), next(g for g in braced.groups()[2:] if g is not None)
        head = BIG.get(base) or _word_tex(base) or base
        if tilde:
            head = r"\tilde{" + head + "}"
        sub = _manual_tex(_tokens(re.sub(r"\bnot ?in\b", "NOTIN", sub).replace(" in ", " IN ")))
        sub = sub.replace(r"\mathrm{NOTIN}", r"\notin ").replace(r"\mathrm{IN}", r"\in ")
        return head + "_{" + sub + "}"
    starred = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)\*_([A-Za-z0-9]+)", word)
    if starred:   # v*_m
        head = _word_tex(starred.group(1))
        return None if head is None else head + "^*_{" + starred.group(2) + "}"
    if word in ("sum", "prod") and follows and follows in "|/_(^" or word == "int" and follows:
        return BIG[word]   # an operator without its index
    big = re.fullmatch(r"(sum|prod|int)_([A-Za-z0-9']+)", word)
    if big:
        return BIG[big.group(1)] + "_{" + big.group(2) + "}"
    star = word.endswith("*")
    base = word[:-1] if star else word
    prime = base.endswith("'")
    base = base[:-1] if prime else base
    tail = ("'" if prime else "") + ("^*" if star else "")
    if base in GLOSSARY:
        return GLOSSARY[base] + tail
    if base in FUNCTIONS and follows and follows in ("([{" if base in ("min", "max", "Min", "Max") else "(["):
        return (FUNCTIONS[base] or r"\sqrt") + tail
    if base == "gamma" and star:
        return r"\gamma^\star"
    tilde = re.fullmatch(r"tilde([A-Za-z]+(?:_[A-Za-z0-9]+)?)", base)
    if tilde and _word_tex(tilde.group(1)) is not None:   # tildealpha_t: the tilde variable
        inner = _word_tex(tilde.group(1))
        head, _, sub = inner.partition("_")
        return r"\tilde{" + head + "}" + ("_" + sub if sub else "") + tail
    if re.fullmatch(r"[DKNM]{2,3}[pq]?|[DKNM][pq]", base):   # DKp, KN: a product of symbols
        return base + tail
    m = re.fullmatch(r"([A-Za-z]+?)(\d+)?(?:_([A-Za-z0-9]+))?", base)
    if m is None:
        return None
    letters, digits, sub = m.groups()
    if letters in GREEK:
        head = GREEK[letters]
    elif len(letters) == 1:
        if letters in "aAI" and not digits and not sub and not tail:
            return None if not follows or follows not in "=<>+-*/^)(_" else letters
        head = XI if letters == "e" and not digits and not sub else letters
    else:
        return None
    subs = [s for s in (digits, sub) if s]
    if subs:
        inner = ",".join(s if len(s) == 1 or s.isdigit() or s.isupper() or s in ("OOD",)
                         else r"\mathrm{" + s + "}" for s in subs)
        head += "_{" + inner + "}" if len(inner) > 1 else "_" + inner
    if star and letters == "gamma":
        tail = (("'" if prime else "") + r"^\star")
    return head + tail


def _tokens(text: str) -> list[tuple[str, str]]:
    toks = [(m.lastgroup, m.group()) for m in _TOKEN.finditer(text)]
    # <X, Y> (an inner product without a subscript): brackets when each sign touches its contents and a
    # comma stands between them
    i = 0
    while i < len(toks):
        if toks[i] == ("op", "<") and i + 1 < len(toks) and toks[i + 1][0] != "ws":
            for j in range(i + 1, len(toks)):
                if toks[j][0] == "op" and toks[j][1] in ("<", "<=", ">=") or toks[j][0] == "close" and toks[j][1].startswith(">"):
                    break
                if toks[j] == ("op", ">"):
                    if toks[j - 1][0] != "ws" and ("other", ",") in toks[i + 1:j]:
                        toks[i], toks[j] = ("open", "<"), ("close", ">")
                    break
        i += 1
    return toks


def _is_sympy(run: str) -> bool:
    # f*(X), T*(...), C1*(t): the starred symbol applied to its argument, not a product
    run = re.sub(r"\b([fT])\*\(|\b(C1)\*\((?=[tTp])", r"\1\2(", run)
    return "**" in run or bool(re.search(r"[\w)]\s*\*\s*[\w(]", run))


@lru_cache(maxsize=4096)
def sympy_tex(text: str) -> str | None:
    """LaTeX of a sympy string (``K*D**4/(eta*T)``), its identifiers as in :data:`GLOSSARY`;
    None when :func:`rdyn.derivations.formula.parse` refuses it."""
    import sympy as sp

    from rdyn.derivations.formula import parse, symbols_in

    names: dict[str, str] = {}

    def placeholder(m):
        key = "Zz" + "abcdefghijklmnopqrstuvwxy"[len(names) % 25] * (1 + len(names) // 25)
        names[key] = m.group()
        return key

    body = re.sub(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+", placeholder, text)
    try:
        table = symbols_in(body)
        expr = parse(body, {k: sp.Symbol(k, positive=True) for k in table}, what="formula",
                     symbolic_exponents=True, max_length=4000, max_nodes=2000)
    except (ValueError, TypeError, SyntaxError):
        return None
    symbol_names = {}
    for sym in expr.free_symbols:
        name = names.get(sym.name, sym.name)
        tex = _word_tex(name)
        if tex is None and sym.name in names:   # an identifier the glossary does not know: its words
            tex = r"\mathrm{" + name.replace("_", r"\ ") + "}"
        if tex is not None and tex != name:
            symbol_names[sym] = tex
    return sp.latex(expr, symbol_names=symbol_names)


_RELATIONS = ("=", "<=", ">=", "~", "<", ">", "->", "!=")


def _run_tex(tokens: list[tuple[str, str]]) -> str:
    """LaTeX of a run of mathematical tokens (sympy strings between relations through
    :func:`sympy_tex`)."""
    text = "".join(t for _, t in tokens).strip()
    if _is_sympy(text):
        parts, cur, depth = [], [], 0
        for tok in tokens:
            depth += {"open": 1, "close": -1}.get(tok[0], 0)
            if depth == 0 and tok[0] == "op" and tok[1] in _RELATIONS:
                parts += [cur, [tok]]
                cur = []
            else:
                cur.append(tok)
        parts.append(cur)
        if len(parts) > 1:
            return " ".join(_run_tex(p) if p and p[0][0] != "op" or len(p) != 1 else _op_tex(p[0][1])
                            for p in parts if p).strip()
        m = re.fullmatch(r"(Theta|O)\((.*)\)", text)
        inner = sympy_tex(m.group(2) if m else text)
        if inner is not None:
            return (FUNCTIONS[m.group(1)] + r"\left(" + inner + r"\right)") if m else inner
    return _manual_tex(tokens)


def _op_tex(tok: str) -> str:
    if tok.startswith(">_"):   # the end of an inner product <X, Y>_F
        return r"\rangle_" + tok[2:]
    if tok.startswith("||_") or tok.startswith("|_"):
        bar = r"\|" if tok.startswith("||") else "|"
        sub = tok.split("_", 1)[1]
        return bar + "_" + (sub if len(sub) == 1 else "{" + sub + "}")
    return {"<=": r"\le ", ">=": r"\ge ", "->": r"\to ", "!=": r"\ne ", "+-": r"\pm ", "**": "^",
            "||": r"\|", "|": "|", "~": r"\sim ", "*": r"\,", "<": "<", ">": ">"}.get(tok, tok)


def _manual_tex(tokens: list[tuple[str, str]]) -> str:
    out: list[str] = []
    i = 0
    n = len(tokens)

    def group(j: int) -> tuple[str, int, list]:
        """The LaTeX of the bracketed group opening at j, the index after it, its tokens."""
        depth, k = 0, j
        while k < n:
            if tokens[k][0] == "open":
                depth += 1
            elif tokens[k][0] == "close":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        inner = tokens[j + 1:k]
        return (_run_tex(inner) if inner else ""), k + 1, inner

    def nxt(j: int) -> str:
        while j < n and tokens[j][0] == "ws":
            j += 1
        return tokens[j][1][:1] if j < n else ""

    def superscript(script: str):
        last = len(out) - 1
        while last >= 0 and out[last] == " ":
            out.pop()
            last -= 1
        if last >= 0 and "^" in out[last] and not out[last].startswith("^"):
            out[last] = "(" + out[last] + ")"
        out.append("^{" + script + "}")

    while i < n:
        kind, tok = tokens[i]
        if kind == "ws":
            out.append(" ")
        elif kind == "word":
            if tok == "e" and i + 2 < n and tokens[i + 1][1] == "^":
                # Euler's number before an exponent with a variable; else the variable xi
                j = i + 2
                exponent = group(j)[2] if tokens[j][0] == "open" else [tokens[j]]
                if any(k == "word" for k, _ in exponent):
                    out.append("e")
                    i += 1
                    continue
            if tok == "sqrt" and nxt(i + 1) == "(":
                j = i + 1
                while tokens[j][0] == "ws":
                    j += 1
                inner, i, _ = group(j)
                out.append(r"\sqrt{" + inner + "}")
                continue
            tex = _word_tex(tok, nxt(i + 1))
            if tex is None and len(tok.rstrip("*'")) == 1:
                tex = tok
            out.append(tex if tex is not None else r"\mathrm{" + tok + "}")
            if tex is not None and re.fullmatch(r"\\[A-Za-z]+", tex):
                out.append(" ")
        elif kind == "num":
            m = re.fullmatch(r"(\d+(?:\.\d+)?)e([-+]?)0*(\d+)", tok)
            if m:
                mant, sign, exp = m.groups()
                sign = "-" if sign == "-" else ""
                if float(mant) == 0:   # 0.0e+00
                    out.append("0")
                    i += 1
                    continue
                out.append(("" if mant == "1" else mant + r" \times ") + "10^{" + sign + exp + "}")
            elif tok == "1" and i + 1 < n and tokens[i + 1][1] == "{":   # an indicator 1{...}
                inner, i, _ = group(i + 1)
                out.append(r"\mathbf{1}_{\{" + inner + r"\}}")
                continue
            else:
                out.append(tok)
        elif kind == "op":
            if tok == "^" and i + 1 < n:
                j = i + 1
                if tokens[j][0] == "open":
                    inner, i, toks = group(j)
                    keep = tokens[j][1] == "(" and len(toks) == 1 and toks[0][0] == "word"   # S^(T)
                    superscript("(" + inner + ")" if keep else inner)
                    continue
                if tokens[j][1] == "-" and j + 1 < n:   # ^-1
                    superscript("-" + _manual_tex([tokens[j + 1]]))
                    i = j + 2
                    continue
                superscript(_manual_tex([tokens[j]]))
                i = j + 1
                continue
            out.append(_op_tex(tok))
        elif kind == "open":
            out.append({"{": r"\{", "<": r"\langle "}.get(tok, tok))
        elif kind == "close":
            out.append(r"\}" if tok == "}" else r"\rangle " if tok == ">" else _op_tex(tok) if tok.startswith(">") else tok)
        elif kind == "other" and tok == ",":
            out.append(",\\ ")
        else:
            out.append(tok)
        i += 1
    return re.sub(r" +", " ", "".join(out)).strip()


def _mathy(kind: str, tok: str, follows: str, before: str = "") -> bool:
    if kind in ("num", "op", "open", "close", "ws"):
        return True
    if kind == "word":
        if tok in ("a", "A", "I") and (before[-1:] in ("=", "(", "+", "*", "/", "<", ">", "^") and not follows.isalpha()
                                       or follows in (",", ")", "]") and (before[-1:].isdigit() or _word_tex(before) is not None)):
            return True
        if tok in ("a", "A", "I") and follows in (")", "]"):   # "(see a)": a word; "(x + a)": a symbol
            return before[-1:] in ("=", "(", "+", "-", "*", "/", "<", ">", "^", ",") or before[-1:].isdigit() \
                or _word_tex(before) is not None
        return _word_tex(tok, follows) is not None or (tok == "sqrt" and follows == "(")
    return False


def _split_runs(tokens):
    """Maximal runs of mathematical tokens, then trimmed: unmatched brackets, surrounding
    spaces and operators, and runs without a letter or a relation (bare numbers) go back to
    the text."""
    items: list[tuple[str, list]] = []
    i, n = 0, len(tokens)
    while i < n:
        j = i
        while j < n:
            kind, tok = tokens[j]
            k = j + 1
            while k < n and tokens[k][0] == "ws":
                k += 1
            follows = tokens[k][1][:1] if k < n else ""
            b = j - 1
            while b >= 0 and tokens[b][0] == "ws":
                b -= 1
            before = tokens[b][1] if b >= 0 else ""
            if kind == "open" and tok == "<":   # an inner product: mathematics up to its closing bracket
                m = next((m for m in range(j + 1, n) if tokens[m][0] == "close" and tokens[m][1].startswith(">")), None)
                if m is not None:
                    j = m + 1
                    continue
            if kind == "other" and tok == "," or _mathy(kind, tok, follows, before):
                j += 1
                continue
            break
        if j == i:
            items.append(("text", [tokens[i]]))
            i += 1
            continue
        for piece in _clean(tokens[i:j]):
            items.append(piece)
        i = j
    return items


def _clean(run):
    """Split a candidate run into (kind, tokens) pieces: commas outside brackets end
    mathematics; unmatched brackets are text."""
    out: list[tuple[str, list]] = []
    depth, start = 0, 0
    stack: list[int] = []
    unmatched: set[int] = set()
    for k, (kind, tok) in enumerate(run):
        if kind == "open":
            stack.append(k)
        elif kind == "close":
            if stack and _CLOSE[run[stack[-1]][1]] == tok[0]:
                stack.pop()
            else:
                unmatched.add(k)
    unmatched.update(stack)
    cuts = []
    for k, (kind, tok) in enumerate(run):
        if k in unmatched:
            cuts.append(k)
            continue
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
        elif kind == "other" and tok == "," and depth == 0:
            cuts.append(k)
    for k in cuts + [len(run)]:
        for space, piece in _juxtaposed(run[start:k]):
            out += [("text", piece)] if space else _math_or_text(piece)
        if k < len(run):
            out.append(("text", [run[k]]))
        start = k + 1
    return out


_RELATION_OPS = ("=", "<=", ">=", "<", ">", "~", "->", "!=")
#: words that apply to what follows them (a space after them joins, never separates)
_PREFIXES = {"Delta", "sum", "prod", "int", "grad", "exp", "log", "ln", "sqrt", "min", "max", "Theta", "O", "E", "d"}


def _juxtaposed(run):
    """A run split at the spaces where two formulas stand side by side rather than multiply: a
    relation followed by another relation's left side (``kappa=0.1 D=9``), or by a bracketed
    condition (``T >= T* (p >= 1/(2K))``). In mathematics a space is no separator, so each becomes
    its own formula and the space stays text. Returns (is a separating space, tokens)."""
    if not run:
        return []
    depth, relation, pieces, start = 0, False, [], 0
    n = len(run)
    for k, (kind, tok) in enumerate(run):
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
        elif depth == 0 and kind == "op" and tok in _RELATION_OPS:
            relation = True
        if kind != "ws" or depth != 0 or not relation or k == start:
            continue
        j = k
        while j < n and run[j][0] == "ws":
            j += 1
        before = run[k - 1]
        if j >= n or j == k or not (before[0] in ("num", "close") or before[0] == "word" and before[1] not in _PREFIXES):
            continue
        if run[j][0] == "word":
            m = j + 1
            while m < n and run[m][0] == "ws":
                m += 1
            side = before[0] == "num" and m < n and run[m][0] == "op" and run[m][1] in _RELATION_OPS   # K=3 D=9
        elif run[j][0] == "open" and run[j][1] == "(":
            inner, d, m = [], 0, j
            while m < n:
                d += {"open": 1, "close": -1}.get(run[m][0], 0)
                if d == 0:
                    break
                if d == 1 and m > j:
                    inner.append(run[m])
                m += 1
            side = (any(kk == "op" and t in _RELATION_OPS for kk, t in inner)   # (p >= 1/(2K))
                    or before[0] == "num" and not any(kk == "op" and t in "+-*" for kk, t in inner))   # 2 (eta_lim/2)
        else:
            side = False
        if side:
            pieces += [(False, run[start:k]), (True, run[k:j])]
            start, relation = j, False
    pieces.append((False, run[start:]))
    return [(space, p) for space, p in pieces if p]


def _math_or_text(piece):
    lead, trail = [], []
    while piece and (piece[0][0] == "ws" or piece[0][1] in ("+", "*", "/", "=", "~", "^")):
        lead.append(piece.pop(0))
    bars = sum(1 for k, t in piece if k == "op" and t.startswith("|"))
    while piece and (piece[-1][0] == "ws" or piece[-1][0] == "op" and piece[-1][1] not in ("*",)
                     and not (piece[-1][1].startswith("|") and bars % 2 == 0)
                     or piece[-1][1] == ","):
        trail.insert(0, piece.pop())
    if piece and piece[-1][1] == "*" and len(piece) >= 2 and piece[-2][0] == "ws":
        trail.insert(0, piece.pop())
    out = [("text", lead)] if lead else []
    letters = [t for k, t in piece if k == "word"]
    relation = any(k == "op" and t not in ("-",) or k == "num" and "e" in t for k, t in piece)
    if piece and (letters or relation):
        out.append(("math", piece))
    elif piece:
        out.append(("text", piece))
    if trail:
        out.append(("text", trail))
    return out


def _merge(items):
    """Adjacent text items as one string; math items as LaTeX."""
    out: list[tuple[str, str]] = []
    for kind, toks in items:
        if kind == "math":
            out.append(("math", _run_tex(toks)))
            continue
        for k, t in toks:
            if k == "op" and t in ("~", "<=", ">=", "->", "=", "<", ">", "+-", "||", "|"):
                out.append(("math", _op_tex(t).strip()))
                continue
            if k == "code":
                t = t.strip("`")   # `name`: a name of the code, quoted
                if re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", t):   # an unknown identifier: its words
                    t, k = t.replace("_", " "), "ws_text"
                else:
                    out.append(("code", t))
                    continue
            if out and out[-1][0] == "text":
                out[-1] = ("text", out[-1][1] + t)
            else:
                out.append(("text", t))
    return out


#: one instance of ``rdyn prove`` as :func:`rdyn.verification.claims.strength.instance_text` writes it
#: (``relu kappa=0.1 D=9 K=3 the papers' eta logits/D``: words separated by spaces only)
_INSTANCE = re.compile(r"\b(relu|identity|leaky|erf|gelu|tanh|softplus|sigmoid)(?: kappa=([0-9.]+))? D=(\d+) K=(\d+) "
                       r"(the papers' eta|eta_paper|eta_limit/2|eta=[0-9.e+-]*[0-9])(?= logits/)")
_INSTANCE_ETA = {"the papers' eta": "eta_paper", "eta_paper": "eta_paper", "eta_limit/2": "eta_limit/2"}


def instance_prose(text: str) -> str:
    """Every instance of ``rdyn prove`` in ``text`` with its parts separated by commas and its
    step size as an equation: ``ReLU, kappa = 0.1, D = 9, K = 3, eta = eta_paper, logits/D``."""
    def one(m):
        activation, kappa, d, k, eta = m.groups()
        eta = _INSTANCE_ETA.get(eta) or eta.split("=", 1)[1]
        return ", ".join([ACTIVATION_WORDS.get(activation, activation)] + ([f"kappa = {kappa}"] if kappa else [])
                         + [f"D = {d}", f"K = {k}", f"eta = {eta}"]) + ","
    return _INSTANCE.sub(one, text)


#: a check's "exponents of derived/printed T 1/2, D -1/2" (each variable, then its exponent in the ratio)
_EXPONENTS = re.compile(r"exponents of derived/printed ((?:[A-Za-z][A-Za-z0-9_]* -?\d+(?:/\d+)?(?:, (?=[A-Za-z]))?)+)")


def _exponents_prose(m) -> str:
    powers = [pair.split(" ") for pair in m.group(1).split(", ")]
    return "derived/printed of order " + " ".join(f"{v}^({e})" for v, e in powers)


@lru_cache(maxsize=8192)
def segments(text: str) -> tuple[tuple[str, str], ...]:
    """Prose as (kind, content): ``text`` (plain words), ``math`` (LaTeX) or ``code`` (a
    check id or module path, a reference)."""
    text = instance_prose(text)
    text = _EXPONENTS.sub(_exponents_prose, text)
    text = text.replace("^(inf)", "^(oo)")   # L^(inf): the limit as t -> oo
    for phrase, name in PHRASES:
        text = text.replace(phrase, name)
    toks = _tokens(text)
    # identifiers with underscores that the glossary does not know are code unless math
    fixed = []
    for k, t in toks:
        if k == "word" and "_" in t and _word_tex(t) is None:
            k = "code" if not re.fullmatch(r"[a-z]+(?:_[a-z]+)+", t) else "code"
        fixed.append((k, t))
    return tuple(_merge(_split_runs(fixed)))


# ------------------------------------------------------------------------------ renderers
_TEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "\u2212": "-",
                "\u2013": "--", "\u2014": "---", "\u2264": r"$\le$", "\u2265": r"$\ge$", "\u00d7": r"$\times$",
                "\u2192": r"$\to$", "\u221e": r"$\infty$", "\u2248": r"$\approx$", "\u00b1": r"$\pm$",
                "\u03b7": r"$\eta$", "\u03ba": r"$\kappa$", "\u03b3": r"$\gamma$", "\u03c0": r"$\pi$",
                "\u2016": r"$\|$", "\u00b7": r"$\cdot$", "\u221a": r"$\surd$"}


def tex_escape(text: str) -> str:
    """Plain text for LaTeX's text mode (every special character, and ``<``, ``>``, ``|``,
    which the default OT1 fonts print as other glyphs)."""
    out = "".join(_TEX_ESCAPES.get(ch, ch) for ch in text)
    return "".join(ch if ord(ch) < 128 else "?" for ch in out)


def _breakable_code(text: str) -> str:
    return r"\texttt{" + tex_escape(text).replace(".", r".\allowbreak{}") + "}"


def tex(text: str) -> str:
    """Prose for LaTeX: text escaped, mathematics in ``$...$``, references in typewriter."""
    out = []
    for kind, content in segments(text):
        if kind == "math":
            out.append("$" + content + "$")
        elif kind == "code":
            out.append(_breakable_code(content))
        else:
            out.append(tex_escape(content))
    return "".join(out)


def markdown(text: str) -> str:
    """Prose for Markdown: mathematics in ``$...$``, references as code."""
    out = []
    for kind, content in segments(text):
        if kind == "math":
            out.append("$" + content + "$")
        elif kind == "code":
            out.append("`" + content + "`")
        else:
            out.append(re.sub(r"([*_<>|\\`$])", r"\\\1", content))
    return "".join(out)


def html(text: str) -> str:
    """Prose for HTML: mathematics as HTML (italic letters, Unicode symbols, sub- and
    superscripts), references as code."""
    out = []
    for kind, content in segments(text):
        if kind == "math":
            out.append("<span class='m'>" + tex_to_html(content) + "</span>")
        elif kind == "code":
            out.append("<code>" + _html.escape(content) + "</code>")
        else:
            out.append(_html.escape(content))
    return "".join(out)


# ------------------------------------------------------------------------------ LaTeX -> HTML
_SYMBOLS_HTML = {
    **{"\\" + g: ch for g, ch in zip(
        ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
         "nu", "xi", "pi", "rho", "sigma", "tau", "phi", "chi", "psi", "omega", "Gamma", "Delta", "Theta",
         "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega", "varepsilon", "varphi"),
        "αβγδϵζηθικλμνξπρστφχψωΓΔΘΛΞΠΣΥΦΨΩεφ")},
    r"\le": "≤", r"\leq": "≤", r"\ge": "≥", r"\geq": "≥", r"\to": "→", r"\infty": "∞", r"\sim": "∼",
    r"\pm": "±", r"\ne": "≠", r"\star": "⋆", r"\cdot": "·", r"\times": "×", r"\|": "‖", r"\,": "\u2009",
    r"\ ": " ", r"\;": " ", r"\quad": "  ", r"\{": "{", r"\}": "}", r"\approx": "≈", r"\nabla": "∇",
    r"\in": "∈", r"\int": "∫", r"\sum": "∑", r"\prod": "∏", r"\partial": "∂", r"\lim": "lim", r"\log": "log",
    r"\exp": "exp", r"\sin": "sin", r"\cos": "cos", r"\tan": "tan", r"\arctan": "arctan", r"\arccos": "arccos",
    r"\min": "min", r"\max": "max", r"\sup": "sup", r"\inf": "inf", r"\ln": "ln", r"\lVert": "‖",
    r"\rVert": "‖", r"\mid": "|", r"\surd": "√", r"\top": "⊤", r"\dots": "…", r"\ldots": "…", r"\lim": "lim",
    r"\langle": "⟨", r"\rangle": "⟩", r"\circ": "∘", r"\mp": "∓", r"\neq": "≠", r"\rightarrow": "→",
}
_TEX_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[{}^_]|[A-Za-z]|\d+(?:\.\d+)?|\s+|.")


def tex_to_html(tex: str) -> str:
    """HTML of the LaTeX this module and sympy's printer write (fractions, roots, scripts,
    Greek letters, relations); an unknown command is shown by its name."""
    toks = _TEX_TOKEN.findall(tex)
    pos = 0

    def arg() -> str:
        nonlocal pos
        while pos < len(toks) and toks[pos].isspace():
            pos += 1
        if pos >= len(toks):
            return ""
        if toks[pos] == "{":
            pos += 1
            return seq(until="}")
        return atom()

    def atom() -> str:
        nonlocal pos
        t = toks[pos]
        pos += 1
        if t == "{":
            return seq(until="}")
        if t in ("\\frac", "\\dfrac", "\\tfrac"):
            num, den = arg(), arg()
            wrap = lambda s: s if re.fullmatch(r"(<i>)?[\w.]+(</i>)?|\(.*\)", s) else "(" + s + ")"  # noqa: E731
            return wrap(num) + "/" + wrap(den)
        if t == "\\sqrt":
            inner = arg()
            return "√" + (inner if re.fullmatch(r"(<i>)?\w(</i>)?|\d+", inner) else "(" + inner + ")")
        if t in ("\\mathrm", "\\text", "\\operatorname", "\\mathbf", "\\mathit", "\\mathtt", "\\textrm"):
            return re.sub(r"</?i>", "", arg())
        if t in ("\\left", "\\right", "\\bigl", "\\bigr", "\\Bigl", "\\Bigr", "\\big", "\\Big", "\\displaystyle"):
            if pos < len(toks) and toks[pos] == ".":
                pos += 1
                return ""
            return atom() if pos < len(toks) else ""
        if t in _SYMBOLS_HTML:
            return _SYMBOLS_HTML[t]
        if t.startswith("\\"):
            return t[1:]
        if re.fullmatch(r"[A-Za-z]", t):
            return "<i>" + t + "</i>"
        if t.isspace():
            return ""
        if t == "-":
            return " − "
        if t in "=<>+":
            return {"=": " = ", "<": " &lt; ", ">": " &gt; ", "+": " + "}[t]
        return _html.escape(t)

    def seq(until: str | None = None) -> str:
        nonlocal pos
        out = ""
        while pos < len(toks):
            t = toks[pos]
            if until is not None and t == until:
                pos += 1
                return out
            if t in ("^", "_"):
                pos += 1
                script = arg()
                tag = "sup" if t == "^" else "sub"
                out += f"<{tag}>{script.strip()}</{tag}>"
                continue
            out += atom()
        return out

    body = seq()
    body = re.sub(r"(≤|≥|→|∼|≠|≈|±)", r" \1 ", body)
    body = re.sub(r"\s{2,}", " ", body).strip()
    # a minus sign with nothing before it is unary
    body = re.sub(r"(^|[(\[{]|<sup>|<sub>|[=≤≥∼→≠≈±,/] )\s*−\s*", r"\1−", body)
    return body


# ------------------------------------------------------------------------------ plot labels
ACTIVATION_WORDS = {"relu": "ReLU", "leaky": "Leaky ReLU", "identity": "identity", "erf": "erf", "gelu": "GELU",
                    "tanh": "tanh", "softplus": "softplus", "sigmoid": "sigmoid"}
_STEP_WORDS = {"default": r"$\eta_{\lim}/2$", "paper": r"$\eta_{\mathrm{paper}}$"}


def config_label(config: str) -> str:
    """A configuration string of the checks (``D=8, K=2, relu, eta=0.5 (default)``) as a
    legend (matplotlib mathtext): ``ReLU, D = 8, K = 2, eta = 0.5 (eta_lim/2)``."""
    step = re.search(r"\((default|paper)\)\s*$", config)
    body = config[:step.start()] if step else config
    words, values = [], []
    for part in (x.strip() for x in body.split(",")):
        if not part:
            continue
        if "=" in part:
            key, value = (x.strip() for x in part.split("=", 1))
            sym = _word_tex(key) or r"\mathrm{" + key.replace("_", " ").replace(" ", r"\ ") + "}"
            values.append(f"${sym} = {value}$")
        else:
            words.append(ACTIVATION_WORDS.get(part, part.replace("_", " ")))
    label = ", ".join(words + values)
    if step:
        label += f" ({_STEP_WORDS[step.group(1)]})"
    return label


def quantity_label(name: str) -> str:
    """A measured quantity's name in the checks (``excess_loss``, ``T_star``) as an axis label
    (matplotlib mathtext); an unknown name as its words."""
    m = re.fullmatch(r"T_times_excess_loss_at_T_eq_(\d+)_Tstar", name)
    if m:
        return r"$T\,(L(T) - L_{\mathrm{opt}})$ at $T = " + m.group(1) + "T^*$"
    tex = _word_tex(re.sub(r"_L\(T\)$", "", name))
    if tex is None:
        return name.replace("_", " ")
    return "$" + tex.replace(r"\lim", r"\mathrm{lim}") + "$"
