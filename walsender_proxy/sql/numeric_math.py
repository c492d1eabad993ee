"""PostgreSQL's ``numeric`` arithmetic, exact, as PostgreSQL 15 computes it (``numeric.c``).

DuckDB's DECIMAL holds 38 digits and turns a division, a square root or a power into a
double; PostgreSQL's numeric carries up to 131072 integer digits and chooses each result's
display scale by its own rules (``1/3`` has 20 fractional digits, ``10::numeric/4`` has 16,
``avg`` of integers is a numeric division). Every numeric-typed operator, function and
aggregate the rewriter meets is computed here, on values held as their exact text, so the
answer is PostgreSQL's digit for digit.

A value is a :class:`N`: an integer mantissa and a display scale (value = m·10^-dscale), or
one of NaN, Infinity, -Infinity. Results are rounded half away from zero (``round_var``).
The scale rules follow PostgreSQL's: ``select_div_scale`` for division, ``estimate_ln_dweight``
for logarithms, and so on, each named where it is used."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext
from typing import NamedTuple

import pyarrow as pa

from decoding.errors import PgError
from decoding.pgvalues.textin import numeric_parse

DEC_DIGITS = 4  # decimal digits per NBASE (10000) digit
MIN_SIG_DIGITS = 16  # NUMERIC_MIN_SIG_DIGITS
MAX_DISPLAY_SCALE = 1000  # NUMERIC_MAX_DISPLAY_SCALE
MAX_RESULT_SCALE = 2000  # NUMERIC_MAX_RESULT_SCALE
DSCALE_MAX = 16383  # NUMERIC_DSCALE_MAX
WEIGHT_MAX = 32767  # the largest NBASE weight a numeric holds (SHRT_MAX)


class N(NamedTuple):
    """A numeric value: ``m``·10^-``dscale``, or ``special`` ('nan', 'inf', '-inf')."""

    m: int = 0
    dscale: int = 0
    special: str | None = None

    @property
    def sign(self) -> int:
        if self.special == "inf":
            return 1
        if self.special == "-inf":
            return -1
        return (self.m > 0) - (self.m < 0)


NAN = N(special="nan")
INF = N(special="inf")
NINF = N(special="-inf")
ZERO = N()
ONE = N(1)


def overflow() -> PgError:
    return PgError("22003", "value overflows numeric format")


def division_by_zero() -> PgError:
    return PgError("22012", "division by zero")


# ------------------------------------------------------------------------------ text


def _int(digits: str) -> int:
    core = digits.rstrip("0") or "0"
    zeros = len(digits) - len(core)
    m = int(core) if len(core) < 4000 else int(Decimal(core))
    return m * 10**zeros if zeros else m


def _ndigits(m: int) -> int:
    """How many decimal digits |m| has (m ≠ 0), without printing it."""
    m = abs(m)
    if m < 10**15:
        return len(str(m))
    k = int(m.bit_length() * 0.30102999566398120)  # log10(2): k or k + 1 digits
    return k + 1 if m >= 10**k else k


def _digits(m: int) -> str:
    m = abs(m)
    return str(m) if m < 10**3999 else str(Decimal(m))


def parse(text: str) -> N:
    """numeric_in (22P02 for text that is not a number)."""
    num = numeric_parse(text)
    if num.special:
        return {"nan": NAN, "inf": INF, "-inf": NINF}[num.special]
    m = _int(num.digits)
    return N(-m if num.neg else m, num.scale)


def text(v: N) -> str:
    """numeric_out: every digit of the display scale, no exponent, never ``-0``."""
    if v.special:
        return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[v.special]
    ds = _digits(v.m)
    if v.dscale:
        ds = ds.rjust(v.dscale + 1, "0")
        ds = ds[: -v.dscale] + "." + ds[-v.dscale :]
    return "-" + ds if v.m < 0 else ds


def from_float8(f: float, digits: int = 15) -> N:
    """float8_numeric: the value printed with DBL_DIG (15) significant digits (``%.15g``),
    then numeric_in — not the double's exact value, so 0.1 stays 0.1."""
    if math.isnan(f):
        return NAN
    if math.isinf(f):
        return INF if f > 0 else NINF
    return parse(format(f, f".{digits}g"))


def from_float4(f: float) -> N:
    """float4_numeric: the float4 printed with FLT_DIG (6) significant digits (``%.6g``),
    so ``0.1::float4::numeric`` is 0.1, not its double's 0.100000001490116."""
    return from_float8(f, 6)


def float_texts(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """An Arrow float32 (float4) or float64 (float8) column as the numeric text
    float4_numeric / float8_numeric make of each value (NULL stays NULL), for a float
    stored into a numeric column."""
    convert = from_float4 if pa.types.is_float32(arr.type) else from_float8
    return pa.array([None if v is None else text(convert(v)) for v in arr.to_pylist()], pa.string())


# ------------------------------------------------------------------------- helpers


def _pow10(k: int) -> int:
    return 10**k


def _rescale(v: N, dscale: int) -> int:
    """``v``'s mantissa at a display scale at least its own (exact)."""
    return v.m * _pow10(dscale - v.dscale)


def _round_div(num: int, den: int) -> int:
    """num/den rounded half away from zero (den ≠ 0)."""
    q, r = divmod(abs(num), abs(den))
    if 2 * r >= abs(den):
        q += 1
    return q if (num < 0) == (den < 0) else -q


def _trunc_div(num: int, den: int) -> int:
    q = abs(num) // abs(den)
    return q if (num < 0) == (den < 0) else -q


def _to_scale(v: N, scale: int, divide: Callable[[int, int], int]) -> N:
    """``v`` at ``scale`` fractional digits (negative: tens, hundreds, …), the dropped
    digits rounded or truncated by ``divide``; the display scale becomes max(scale, 0)."""
    if v.special:
        return v
    if scale >= v.dscale:
        return N(_rescale(v, max(scale, 0)), max(scale, 0))
    q = divide(v.m, _pow10(v.dscale - scale))
    return N(q * _pow10(-scale) if scale < 0 else q, max(scale, 0))


def round_to(v: N, scale: int) -> N:
    """round_var: half away from zero."""
    return _to_scale(v, scale, _round_div)


def trunc_to(v: N, scale: int) -> N:
    """trunc_var: towards zero."""
    return _to_scale(v, scale, _trunc_div)


def _msd(v: N) -> int:
    """The decimal exponent of ``v``'s most significant digit (v ≠ 0): 12.5 → 1, 0.05 → -2."""
    return _ndigits(v.m) - 1 - v.dscale


def _weight_first(v: N) -> tuple[int, int]:
    """(weight, first digit) of ``v`` in NBASE 10000 digits, as NumericVar has them
    (0, 0 for zero)."""
    if v.m == 0:
        return 0, 0
    w = _msd(v) // DEC_DIGITS
    k = -v.dscale - DEC_DIGITS * w
    first = abs(v.m) * _pow10(k) if k >= 0 else abs(v.m) // _pow10(-k)
    return w, first


def _clamp_scale(rscale: int, *at_least: int) -> int:
    return min(max(rscale, *at_least, 0), MAX_DISPLAY_SCALE)


def _check_weight(v: N) -> N:
    """make_result's overflow check: more integer digits than numeric holds."""
    if v.m and _msd(v) >= (WEIGHT_MAX + 1) * DEC_DIGITS:
        raise overflow()
    return v


def _to_decimal(v: N) -> Decimal:
    return Decimal(v.m).scaleb(-v.dscale)


def _from_decimal(d: Decimal, rscale: int) -> N:
    """``d`` rounded half away from zero to ``rscale`` digits (``d`` carries guard digits)."""
    q = d.quantize(Decimal(1).scaleb(-rscale), rounding=ROUND_HALF_UP, context=Context(prec=_prec_for(d, rscale)))
    sign, digits, exp = q.as_tuple()
    m = _int("".join(map(str, digits)) or "0")
    m = m * _pow10(exp + rscale) if exp + rscale > 0 else m
    return N(-m if sign and m else m, rscale)


def _prec_for(d: Decimal, rscale: int) -> int:
    return max(d.adjusted(), 0) + rscale + 10


# ---------------------------------------------------------------------- operators


def add(a: N, b: N) -> N:
    if a.special or b.special:
        if a == NAN or b == NAN:
            return NAN
        if a.special and b.special:
            return a if a == b else NAN
        return a if a.special else b
    s = max(a.dscale, b.dscale)
    return _check_weight(N(_rescale(a, s) + _rescale(b, s), s))


def neg(a: N) -> N:
    if a.special:
        return {"nan": NAN, "inf": NINF, "-inf": INF}[a.special]
    return N(-a.m, a.dscale)


def sub(a: N, b: N) -> N:
    return add(a, neg(b))


def mul(a: N, b: N) -> N:
    if a.special or b.special:
        if a == NAN or b == NAN or a.sign == 0 or b.sign == 0:
            return NAN
        return INF if a.sign * b.sign > 0 else NINF
    v = _check_weight(N(a.m * b.m, a.dscale + b.dscale))
    return round_to(v, DSCALE_MAX) if v.dscale > DSCALE_MAX else v


def div_scale(a: N, b: N) -> int:
    """select_div_scale: at least 16 significant digits, never fewer fractional digits
    than either input shows."""
    w1, f1 = _weight_first(a)
    w2, f2 = _weight_first(b)
    qweight = w1 - w2
    if f1 <= f2:
        qweight -= 1
    return _clamp_scale(MIN_SIG_DIGITS - qweight * DEC_DIGITS, a.dscale, b.dscale)


def _div_specials(a: N, b: N) -> N | None:
    if a == NAN or b == NAN:
        return NAN
    if a.special:
        if b.special:
            return NAN
        if b.m == 0:
            raise division_by_zero()
        return INF if a.sign * b.sign > 0 else NINF
    if b.special:
        return ZERO
    if b.m == 0:
        raise division_by_zero()
    return None


def div(a: N, b: N) -> N:
    """numeric_div: rounded at select_div_scale."""
    special = _div_specials(a, b)
    if special is not None:
        return special
    return _check_weight(_div_at(a, b, div_scale(a, b)))


def _div_at(a: N, b: N, rscale: int) -> N:
    # a/b·10^rscale = a.m·10^(b.dscale + rscale) / (b.m·10^a.dscale)
    num = a.m * _pow10(b.dscale + rscale)
    den = b.m * _pow10(a.dscale)
    return N(_round_div(num, den), rscale)


def div_trunc(a: N, b: N) -> N:
    """div(): the quotient truncated to an integer."""
    special = _div_specials(a, b)
    if special is not None:
        return trunc_to(special, 0) if special.special is None else special
    return N(_trunc_div(a.m * _pow10(b.dscale), b.m * _pow10(a.dscale)), 0)


def mod(a: N, b: N) -> N:
    """numeric_mod: a - trunc(a/b)·b, the sign of ``a``."""
    if a == NAN or b == NAN:
        return NAN
    if a.special:
        if b.sign == 0:
            raise division_by_zero()
        return NAN
    if b.special:
        return a
    if b.m == 0:
        raise division_by_zero()
    s = max(a.dscale, b.dscale)
    x, y = _rescale(a, s), _rescale(b, s)
    return N(x - _trunc_div(x, y) * y, s)


def abs_(a: N) -> N:
    if a.special:
        return NAN if a == NAN else INF
    return N(abs(a.m), a.dscale)


def sign(a: N) -> N:
    if a == NAN:
        return NAN
    return N(a.sign, 0)


def ceil(a: N) -> N:
    if a.special:
        return a
    q = -((-a.m) // _pow10(a.dscale))
    return N(q, 0)


def floor(a: N) -> N:
    if a.special:
        return a
    return N(a.m // _pow10(a.dscale), 0)


def round_(a: N, s: int = 0) -> N:
    # numeric_round clamps the requested scale to what a numeric can hold
    return _check_weight(round_to(a, max(min(s, DSCALE_MAX), -(WEIGHT_MAX + 1) * DEC_DIGITS - 1)))


def trunc(a: N, s: int = 0) -> N:
    return trunc_to(a, max(min(s, DSCALE_MAX), -(WEIGHT_MAX + 1) * DEC_DIGITS))


def scale(a: N) -> int | None:
    return None if a.special else a.dscale


def min_scale(a: N) -> int | None:
    """The fewest fractional digits that hold the value exactly."""
    if a.special:
        return None
    if a.m == 0:
        return 0
    m, s = abs(a.m), a.dscale
    while s > 0 and m % 10 == 0:
        m //= 10
        s -= 1
    return s


def trim_scale(a: N) -> N:
    s = min_scale(a)
    if s is None:
        return a
    return N(a.m // _pow10(a.dscale - s), s)


# --------------------------------------------------------- roots, logarithms, powers


def sqrt(a: N) -> N:
    """numeric_sqrt: rscale from the argument's NBASE weight, correctly rounded."""
    if a.special:
        if a == NINF:
            raise PgError("2201F", "cannot take square root of a negative number")
        return a
    if a.m < 0:
        raise PgError("2201F", "cannot take square root of a negative number")
    w, _ = _weight_first(a)
    sweight = (w + 1) * DEC_DIGITS // 2 - 1
    rscale = _clamp_scale(MIN_SIG_DIGITS - sweight, a.dscale)
    return _sqrt_at(a, rscale)


def _ln_dweight(a: N) -> int:
    """estimate_ln_dweight: log10|ln a| roughly (a > 0), from a's first two NBASE digits
    in double arithmetic, or from a - 1 for a between 0.9 and 1.1."""
    if a.sign <= 0 or a.special:
        return 0
    if _cmp(a, N(9, 1)) >= 0 and _cmp(a, N(11, 1)) <= 0:
        x = sub(a, ONE)
        return 0 if x.m == 0 else _msd(x)
    w, d0 = _weight_first(a)
    shift = -a.dscale - DEC_DIGITS * (w - 1)  # to the first two NBASE digits, d0·10000 + d1
    mag = abs(a.m)
    two = mag * _pow10(shift) if shift >= 0 else mag // _pow10(-shift)
    if two == d0 * 10**DEC_DIGITS and (shift >= 0 or mag % _pow10(-shift) == 0):
        digits, dw = d0, DEC_DIGITS * w  # a single stored NBASE digit
    else:
        digits, dw = two, DEC_DIGITS * (w - 1)
    ln_var = math.log(digits) + dw * 2.302585092994046
    return int(math.log10(abs(ln_var))) if ln_var else 0


def _cmp(a: N, b: N) -> int:
    s = max(a.dscale, b.dscale)
    x, y = _rescale(a, s), _rescale(b, s)
    return (x > y) - (x < y)


def _ln_decimal(a: N, prec: int) -> Decimal:
    with localcontext(Context(prec=prec)):
        return _to_decimal(a).ln()


def _log_checks(*args: N) -> None:
    """PostgreSQL's order: a negative argument first, then a zero one."""
    if any(a.sign < 0 for a in args):
        raise PgError("2201E", "cannot take logarithm of a negative number")
    if any(a.sign == 0 for a in args):
        raise PgError("2201E", "cannot take logarithm of zero")


def ln(a: N) -> N:
    if a == NAN:
        return NAN
    _log_checks(a)
    if a == INF:
        return INF
    rscale = _clamp_scale(MIN_SIG_DIGITS - _ln_dweight(a), a.dscale)
    prec = rscale + max(_ln_dweight(a), 0) + 20
    return _from_decimal(_ln_decimal(a, prec), rscale)


def log(base: N, x: N) -> N:
    """numeric_log(base, x): ln(x)/ln(base) at the scale the two logarithms' weights give."""
    if base == NAN or x == NAN:
        return NAN
    if base.special or x.special:
        _log_checks(base, x)  # (negatives first, then zeros)
        if base.special and x.special:
            return NAN
        return INF if x.special else ZERO  # log(finite, +inf), log(+inf, finite)
    _log_checks(base)  # ln_var's checks, the base's first
    _log_checks(x)
    if _cmp(base, ONE) == 0:
        raise division_by_zero()
    result_dweight = _ln_dweight(x) - _ln_dweight(base)
    rscale = _clamp_scale(MIN_SIG_DIGITS - result_dweight, base.dscale, x.dscale)
    prec = rscale + abs(result_dweight) + abs(_ln_dweight(x)) + abs(_ln_dweight(base)) + 30
    with localcontext(Context(prec=prec)):
        q = _to_decimal(x).ln() / _to_decimal(base).ln()
    return _from_decimal(q, rscale)


def log10(x: N) -> N:
    return log(N(10), x)


def _exp_at(x: Decimal, rscale: int) -> N:
    """exp_var: e^x at ``rscale`` digits, computed as PostgreSQL's exp_var computes it (x
    halved ``ndiv2`` times, the Taylor series at its working scale, squared back, each
    step rounded where it rounds), so the last digit is PostgreSQL's, not the exactly
    rounded one; beyond ±6000 it overflows (or is zero)."""
    val = float(x)
    if abs(val) >= MAX_RESULT_SCALE * 3:
        if val > 0:
            raise overflow()
        return N(0, rscale)
    dweight = int(val * 0.434294481903252)
    exponent = x.as_tuple().exponent
    dscale = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    with localcontext(Context(prec=rscale + abs(dweight) * 2 + 6200, Emax=10**9, Emin=-(10**9))):

        def rounded(v: Decimal, scale: int) -> Decimal:  # (round_var: half away from zero)
            return v.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)

        ndiv2 = 0
        if abs(val) > 0.01:
            ndiv2 = 1
            val /= 2
            while abs(val) > 0.01:
                ndiv2 += 1
                val /= 2
            x = rounded(x / (1 << ndiv2), dscale + ndiv2)
        sig_digits = max(1 + dweight + rscale + int(ndiv2 * 0.301029995663981), 0) + 8
        local = sig_digits - 1
        result = 1 + x
        elem = rounded(rounded(x * x, local) / 2, local)
        ni = 2
        while elem:
            result += elem
            ni += 1
            elem = rounded(rounded(elem * x, local) / ni, local)
        for _ in range(ndiv2):
            weight = result.adjusted() // 4 if result else 0  # (base-10000 digits, as NumericVar's)
            result = rounded(result * result, max(sig_digits - weight * 8, 0))
        return _check_weight(_from_decimal(rounded(result, rscale), rscale))


def exp(a: N) -> N:
    """numeric_exp: 16 significant digits of a result whose weight is a·log10(e)."""
    if a in (NAN, INF):
        return a
    if a == NINF:
        return ZERO
    x = _to_decimal(a)
    val = max(min(float(x) if abs(x) < 10**300 else float(x.copy_sign(Decimal(1)) * 10**300), 1e300), -1e300)
    val *= 0.434294481903252
    val = max(min(val, MAX_RESULT_SCALE), -MAX_RESULT_SCALE)
    rscale = _clamp_scale(MIN_SIG_DIGITS - int(val), a.dscale)
    return _exp_at(x, rscale)


def power(base: N, exp_: N) -> N:
    """numeric_power (the ``^`` operator and power())."""
    if base == NAN or exp_ == NAN:
        if base == NAN and exp_.sign == 0 and not exp_.special:
            return N(1, 0)  # NaN ^ 0 = 1
        if exp_ == NAN and not base.special and base.m == _pow10(base.dscale):
            return N(1, 0)  # 1 ^ NaN = 1
        return NAN
    if not base.special and not exp_.special:
        if base.m == 0 and exp_.m < 0:
            raise PgError("2201F", "zero raised to a negative power is undefined")
        if base.m < 0 and not _is_integer(exp_):
            raise PgError("2201F", "a negative number raised to a non-integer power yields a complex result")
    if base.special or exp_.special:
        return _power_special(base, exp_)
    if _is_integer(exp_):
        n = exp_.m // _pow10(exp_.dscale)
        if -(2**31) <= n < 2**31:
            return _power_int(base, n)
    return _power_general(base, exp_)


def _is_integer(v: N) -> bool:
    return not v.special and v.m % _pow10(v.dscale) == 0


def _power_special(base: N, e: N) -> N:
    """numeric_power's rules for infinite inputs."""
    if not base.special:  # finite ^ ±inf
        if base.m == _pow10(base.dscale):  # 1 ^ inf = 1
            return N(1, 0)
        if base.m == 0:
            if e == NINF:
                raise PgError("2201F", "zero raised to a negative power is undefined")
            return ZERO
        absb = _cmp(abs_(base), ONE)
        if absb == 0:  # -1 ^ ±inf
            return N(1, 0)
        if (absb > 0) == (e == INF):
            return INF
        return ZERO
    if e.sign == 0:
        return N(1, 0)  # inf ^ 0 = 1
    if base == INF:
        return INF if e.sign > 0 else ZERO
    # -inf ^ y: the sign of an odd integer exponent
    if not e.special and e.sign > 0 and not _is_integer(e):
        raise PgError("2201F", "a negative number raised to a non-integer power yields a complex result")
    if e.special:
        return INF if e.sign > 0 else ZERO
    if e.sign < 0:
        return ZERO
    odd = _is_integer(e) and (e.m // _pow10(e.dscale)) % 2 == 1
    return NINF if odd else INF


def _power_general(base: N, e: N) -> N:
    """power_var: exp(e·ln(base)), the scale from the result's estimated weight."""
    if base.m == 0:
        return N(0, MIN_SIG_DIGITS)
    if base.m < 0:  # (an integer exponent beyond int4): |base|^e, negated for an odd e
        r = _power_general(abs_(base), e)
        return neg(r) if (e.m // _pow10(e.dscale)) % 2 else r
    ln_dweight = _ln_dweight(base)
    # PostgreSQL's low-precision estimate: ln(base) and its product with e, each rounded
    # at 8 - ln_dweight fractional digits (its rscale follows from this, digit for digit)
    local = max(8 - ln_dweight, 0)
    with localcontext(Context(prec=local + 40, Emax=10**9, Emin=-(10**9))):
        ln_base = _from_decimal(_to_decimal(base).ln(), local)
        val = float(_to_decimal(round_to(mul(ln_base, e), local)))
    if abs(val) > MAX_RESULT_SCALE * 3.01:
        if val > 0:
            raise overflow()
        return N(0, MAX_DISPLAY_SCALE)
    val *= 0.434294481903252
    rscale = _clamp_scale(MIN_SIG_DIGITS - int(val), base.dscale, e.dscale)
    prec = rscale + max(int(val), 0) + abs(ln_dweight) + 30
    with localcontext(Context(prec=prec, Emax=10**9, Emin=-(10**9))):
        x = _to_decimal(e) * _to_decimal(base).ln()
    return _exp_at(x, rscale)


def _power_int(base: N, n: int) -> N:
    """power_var_int: an integer exponent; 16 fractional digits (or the base's)."""
    rscale = _clamp_scale(MIN_SIG_DIGITS, base.dscale)
    if n == 0:
        return N(_pow10(rscale), rscale)
    if base.m == 0:
        return N(0, rscale)
    digits = _digits(base.m)
    lead = digits[:16]
    f = n * (math.log10(int(lead)) + (_msd(base) - len(lead) + 1))
    if f > 3 * WEIGHT_MAX * DEC_DIGITS:
        raise overflow()
    if f + 1 < -rscale or f + 1 < -MAX_DISPLAY_SCALE:
        return N(0, rscale)
    if abs(n) * len(digits) <= 20000:  # exactly, then rounded
        if n > 0:
            return _check_weight(round_to(N(base.m**n, base.dscale * n), rscale))
        return _check_weight(_div_at(ONE, N(base.m**-n, base.dscale * -n), rscale))
    with localcontext(Context(prec=rscale + max(int(f), 0) + 30, Emax=10**9, Emin=-(10**9))):
        r = _to_decimal(base) ** n
    return _check_weight(_from_decimal(r, rscale))


_INT_NAMES = {16: "smallint", 32: "integer", 64: "bigint"}


def to_int(a: N, bits: int) -> int:
    """numeric_int2/4/8: rounded half away from zero, 22003 outside the type's range."""
    name = _INT_NAMES[bits]
    if a.special:
        what = "NaN" if a == NAN else "infinity"
        raise PgError("0A000", f"cannot convert {what} to {name}")
    v = round_to(a, 0).m
    if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
        raise PgError("22003", f"{name} out of range")
    return v


# -------------------------------------------------------------------------- aggregates


def avg(total: N, count: int) -> N | None:
    """numeric_avg / int8_avg: the sum divided as numeric_div divides."""
    if count == 0:
        return None
    return div(total, N(count))


def sum_(values: Sequence[N]) -> N | None:
    if not values:
        return None
    out = values[0]
    for v in values[1:]:
        out = add(out, v)
    return out


def variance(values: Sequence[N], *, sample: bool, root: bool) -> N | None:
    """numeric_stddev_internal over exact sums: (N·Σx² - (Σx)²) / (N·(N-1)) (or N²), its
    scale from select_div_scale; NULL for too few values; NaN/infinities as PostgreSQL."""
    n = len(values)
    if n == 0 or (sample and n == 1):
        return None
    if any(v.special for v in values):
        return NAN
    s = max(v.dscale for v in values)
    sum_x = sum(_rescale(v, s) for v in values)
    sum_x2 = sum(_rescale(v, s) ** 2 for v in values)
    num = N(n * sum_x2 - sum_x * sum_x, 2 * s)
    if num.m <= 0:
        return N(0, 0)
    den = N(n * (n - 1) if sample else n * n, 0)
    rscale = div_scale(num, den)
    var = _div_at(num, den, rscale)
    if not root:
        return var
    return _sqrt_at(var, rscale)


def _sqrt_at(a: N, rscale: int) -> N:
    """sqrt_var: the square root of a ≥ 0, correctly rounded at ``rscale`` digits."""
    shift = 2 * rscale - a.dscale
    x = a.m * _pow10(shift) if shift >= 0 else a.m // _pow10(-shift)  # value·10^(2·rscale)
    r = math.isqrt(x)
    if x >= r * r + r + 1:  # above (r + ½)²: rounds up
        r += 1
    return N(r, rscale)


# ------------------------------------------------------------------- DuckDB functions

#: UDF name prefix: ``wpx_numeric_<name>``; arguments and result are numeric text (VARCHAR),
#: integers (scale arguments, counts) as BIGINT.
PREFIX = "wpx_numeric_"

_SCALAR: dict[str, tuple[Callable[..., N | int | None], str]] = {
    # name: (function, argument kinds: n = numeric text, i = integer, f = float8, r = float4)
    "add": (add, "nn"),
    "sub": (sub, "nn"),
    "mul": (mul, "nn"),
    "div": (div, "nn"),
    "mod": (mod, "nn"),
    "pow": (power, "nn"),
    "neg": (neg, "n"),
    "abs": (abs_, "n"),
    "sign": (sign, "n"),
    "ceil": (ceil, "n"),
    "floor": (floor, "n"),
    "round": (round_, "n"),
    "round_to": (round_, "ni"),
    "trunc": (trunc, "n"),
    "trunc_to": (trunc, "ni"),
    "div_trunc": (div_trunc, "nn"),
    "sqrt": (sqrt, "n"),
    "exp": (exp, "n"),
    "ln": (ln, "n"),
    "log10": (log10, "n"),
    "log": (log, "nn"),
    "scale": (scale, "n"),
    "min_scale": (min_scale, "n"),
    "trim_scale": (trim_scale, "n"),
    "avg": (avg, "ni"),
    "from_float8": (from_float8, "f"),
    "from_float4": (from_float4, "r"),
    "to_int": (to_int, "ni"),
}

#: Aggregates over a DuckDB list of numeric text (``list(x)``): name → function.
_LISTS: dict[str, Callable[[Sequence[N]], N | None]] = {
    "sum": sum_,
    "avg": lambda vs: avg(sum_(vs) or ZERO, len(vs)),
    "var_samp": lambda vs: variance(vs, sample=True, root=False),
    "var_pop": lambda vs: variance(vs, sample=False, root=False),
    "stddev_samp": lambda vs: variance(vs, sample=True, root=True),
    "stddev_pop": lambda vs: variance(vs, sample=False, root=True),
}
#: PostgreSQL's aggregate names for the same.
LIST_AGGREGATES = {
    "sum": "sum", "avg": "avg", "variance": "var_samp", "var_samp": "var_samp",
    "var_pop": "var_pop", "stddev": "stddev_samp", "stddev_samp": "stddev_samp",
    "stddev_pop": "stddev_pop",
}  # fmt: skip
#: Results that are integers, not numeric text.
_INT_RESULTS = frozenset({"scale", "min_scale", "to_int"})
_DUCK_ARG = {"n": "VARCHAR", "i": "BIGINT", "f": "DOUBLE", "r": "FLOAT"}


def udf_name(name: str) -> str:
    return PREFIX + name


def list_udf_name(name: str) -> str:
    return PREFIX + "list_" + name


def _scalar_udf(fn: Callable[..., N | int | None], kinds: str) -> Callable[..., pa.Array]:
    convert = [parse if k == "n" else (lambda x: x) for k in kinds]

    def rows(*arrays: pa.Array | pa.ChunkedArray) -> pa.Array:
        out: list[str | int | None] = []
        for row in zip(*(a.to_pylist() for a in arrays), strict=True):
            if any(x is None for x in row):
                out.append(None)
                continue
            v = fn(*(c(x) for c, x in zip(convert, row, strict=True)))
            out.append(v if v is None or isinstance(v, int) else text(v))
        return pa.array(out, pa.int64() if fn in (scale, min_scale, to_int) else pa.string())

    # DuckDB reads a UDF's arity from its signature
    if len(kinds) == 1:
        return lambda a: rows(a)
    return lambda a, b: rows(a, b)


def _list_udf(fn: Callable[[Sequence[N]], N | None]) -> Callable[..., pa.Array]:
    def call(lists: pa.Array | pa.ChunkedArray) -> pa.Array:
        out: list[str | None] = []
        for values in lists.to_pylist():
            nums = [parse(v) for v in values or () if v is not None]
            r = fn(nums) if nums else None
            out.append(None if r is None else text(r))
        return pa.array(out, pa.string())

    return call


#: The most values generate_series(numeric) makes: they are built as one list a row.
SERIES_MAX = 10_000_000


def series(start: N, stop: N, step: N) -> list[N]:
    """generate_series(numeric, numeric, numeric): ``start``, then each sum with ``step``
    (add's scale: the larger of the two), while not past ``stop``."""
    for v, what in ((start, "start value"), (stop, "stop value"), (step, "step size")):
        if v.special is not None:
            raise PgError("22023", f"{what} cannot be {'NaN' if v.special == 'nan' else 'infinity'}")
    if step.m == 0:
        raise PgError("22023", "step size cannot equal zero")
    out: list[N] = []
    cur = start
    while (_cmp(cur, stop) <= 0) if step.m > 0 else (_cmp(cur, stop) >= 0):
        if len(out) == SERIES_MAX:
            raise PgError("0A000", f"generate_series(numeric) of more than {SERIES_MAX} values is not supported by walsender-proxy")
        out.append(cur)
        cur = add(cur, step)
    return out


#: pg_size_pretty's units after bytes: (name, bits of its divisor from the bytes).
_SIZE_UNITS = (("kB", 9), ("MB", 19), ("GB", 29), ("TB", 39), ("PB", 49))


def size_pretty(v: N) -> str:
    """pg_size_pretty(numeric): below 10240 the bytes as they are; then each unit's
    truncated division of the value, half-rounded away from zero, the first below 20479
    (the last, PB, whatever its size). NaN and infinities end in PB, as their comparisons
    with the limits send them there."""
    if v.special is not None:
        return f"{text(v)} PB"
    if abs(v.m) < 10240 * 10**v.dscale:
        return f"{text(v)} bytes"
    whole = abs(v.m) // 10**v.dscale
    sign = -1 if v.m < 0 else 1
    for unit, bits in _SIZE_UNITS:
        size = whole >> bits
        if size < 20479 or unit == "PB":
            return f"{sign * ((size + 1) // 2)} {unit}"
    raise AssertionError("PB takes every size")


def _size_pretty_udf(values: pa.Array) -> pa.Array:
    return pa.array([None if x is None else size_pretty(parse(x)) for x in values.to_pylist()], pa.string())


def _series_udf(starts: pa.Array, stops: pa.Array, steps: pa.Array) -> pa.Array:
    out: list[list[str] | None] = []
    for a, b, c in zip(starts.to_pylist(), stops.to_pylist(), steps.to_pylist(), strict=True):
        out.append(None if a is None or b is None or c is None else [text(v) for v in series(parse(a), parse(b), parse(c))])
    return pa.array(out, pa.list_(pa.string()))


def udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str]]:
    """(name, Arrow function, DuckDB argument types, DuckDB result type) of every UDF."""
    out = [(udf_name("series"), _series_udf, ["VARCHAR"] * 3, "VARCHAR[]"), (udf_name("size_pretty"), _size_pretty_udf, ["VARCHAR"], "VARCHAR")]
    for name, (fn, kinds) in _SCALAR.items():
        ret = "BIGINT" if name in _INT_RESULTS else "VARCHAR"
        out.append((udf_name(name), _scalar_udf(fn, kinds), [_DUCK_ARG[k] for k in kinds], ret))
    for name, fn in _LISTS.items():
        out.append((list_udf_name(name), _list_udf(fn), ["VARCHAR[]"], "VARCHAR"))
    return out
