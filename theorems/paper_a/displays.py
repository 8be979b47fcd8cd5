"""Display-only sympy objects for the derivation steps of paper A's claims (``theorems.symbolic.Derivation``).

The papers write the projection, the target and the optimal factors with a star (``Z^*``, ``M^*``, ``Q^*``); a
sympy symbol's name cannot carry a superscript without the printers splitting it, so :func:`starred` gives a matrix
symbol that prints its star in LaTeX and MathML (and :func:`barred` one with an overline, for a mean).  Nothing here
is proved: these objects only appear in ``shown=``.
"""
from __future__ import annotations

import sympy as sp


def _marked(printer, tag: str, base, mark: str):
    """MathML ``<tag>`` (``msup``: a superscript, ``mover``: an accent) of the printed ``base`` and the operator
    ``mark``."""
    el = printer.dom.createElement(tag)
    el.appendChild(printer._print(base))
    mo = printer.dom.createElement("mo")
    mo.appendChild(printer.dom.createTextNode(mark))
    el.appendChild(mo)
    return el


class _Starred(sp.MatrixSymbol):
    """A matrix symbol printed with a superscript star (``Z^*``, ``Z_0^*``)."""

    def _latex(self, printer):
        return printer._print(sp.Symbol(self.name)) + "^{*}"

    def _mathml_presentation(self, printer):
        return _marked(printer, "msup", sp.Symbol(self.name), "*")


class _Barred(sp.MatrixSymbol):
    """A matrix symbol printed with an overline (``x̄``, a weighted mean)."""

    def _latex(self, printer):
        return r"\bar{" + printer._print(sp.Symbol(self.name)) + "}"

    def _mathml_presentation(self, printer):
        return _marked(printer, "mover", sp.Symbol(self.name), "\u00af")


def starred(name: str, rows, cols) -> sp.MatrixSymbol:
    """``name`` (a letter, optionally with one subscript: ``"Z_0"``) with a superscript star, ``rows x cols``."""
    return _Starred(name, rows, cols)


def barred(name: str, rows, cols) -> sp.MatrixSymbol:
    """``name`` with an overline, ``rows x cols``."""
    return _Barred(name, rows, cols)


def fro2(X):
    """``||X||_F^2`` written as ``tr(X^T X)`` (unevaluated)."""
    return sp.Trace(sp.MatMul(sp.Transpose(X), X))


class _Primed(sp.Symbol):
    """A scalar symbol printed with a prime (``n'``)."""

    def _latex(self, printer):
        return printer._print(sp.Symbol(self.name)) + "'"

    def _mathml_presentation(self, printer):
        return _marked(printer, "msup", sp.Symbol(self.name), "\u2032")


def primed(name: str, **assumptions) -> sp.Symbol:
    """The scalar ``name'`` (e.g. the number of context tokens ``n'``) for displays."""
    return _Primed(name, **assumptions)


def _mrow(printer, *parts):
    row = printer.dom.createElement("mrow")
    for p in parts:
        if isinstance(p, str):
            mo = printer.dom.createElement("mo")
            mo.appendChild(printer.dom.createTextNode(p))
            p = mo
        row.appendChild(p)
    return row


class _Scalar(sp.Expr):
    """A 1 x 1 matrix expression (``mu^T Sigma mu``) used as a scalar in a sum, printed as the matrix expression."""

    is_commutative = True
    is_number = False

    def _latex(self, printer):
        return printer._print(self.args[0])

    def _mathml_presentation(self, printer):
        return printer._print(self.args[0])


class _Norm(sp.Expr):
    """``||X||`` (``||X||_F`` with the subscript ``F``)."""

    is_commutative = True
    is_number = False

    def _latex(self, printer):
        sub = "_{F}" if self.args[1] == sp.Symbol("F") else ""
        return r"\left\|" + printer._print(self.args[0]) + r"\right\|" + sub

    def _mathml_presentation(self, printer):
        body = _mrow(printer, "\u2016", printer._print(self.args[0]), "\u2016")
        if self.args[1] != sp.Symbol("F"):
            return body
        sub = printer.dom.createElement("msub")
        sub.appendChild(body)
        sub.appendChild(printer._print(sp.Symbol("F")))
        return sub


class _ExpectBase:
    """``E_{dist}[body]``: the expectation of ``body`` under ``dist`` (display only, never evaluated)."""

    def _latex(self, printer):
        sub = "_{" + printer._print(self.args[1]) + "}" if len(self.args) > 1 else ""
        return r"\mathbb{E}" + sub + r"\left[" + printer._print(self.args[0]) + r"\right]"

    def _mathml_presentation(self, printer):
        e = printer.dom.createElement("mi")
        e.appendChild(printer.dom.createTextNode("\U0001d53c"))
        if len(self.args) > 1:
            sub = printer.dom.createElement("msub")
            sub.appendChild(e)
            sub.appendChild(printer._print(self.args[1]))
            e = sub
        return _mrow(printer, e, "[", printer._print(self.args[0]), "]")


class _Expect(_ExpectBase, sp.Expr):
    is_commutative = True
    is_number = False


class _MatExpect(_ExpectBase, sp.MatrixExpr):
    @property
    def shape(self):
        return self.args[0].shape


class NORMAL(sp.Function):
    """The Gaussian law ``N(mean, covariance)`` in an expectation's subscript (display only)."""

    @classmethod
    def eval(cls, *args):
        return None

    def _latex(self, printer):
        return r"\mathcal{N}\left(" + ", ".join(printer._print(a) for a in self.args) + r"\right)"

    def _mathml_presentation(self, printer):
        n = printer.dom.createElement("mi")
        n.appendChild(printer.dom.createTextNode("\U0001d4a9"))
        parts = [n, "("]
        for i, a in enumerate(self.args):
            parts += ([","] if i else []) + [printer._print(a)]
        return _mrow(printer, *parts, ")")


def scalar(M):
    """The 1 x 1 matrix expression ``M`` (``mu^T Sigma mu``) as a scalar of a displayed sum."""
    return _Scalar(M)


def norm(X, frobenius: bool = False):
    """``||X||`` (``||X||_F`` when ``frobenius``)."""
    return _Norm(X, sp.Symbol("F") if frobenius else sp.Integer(0))


def expect(body, dist=None):
    """``E_dist[body]``, matrix-valued when ``body`` is a matrix expression; ``dist`` e.g. ``NORMAL(2 * mu, Sigma)``
    (``None``: the law is said in the step's text)."""
    return (_MatExpect if isinstance(body, sp.MatrixExpr) else _Expect)(body, *([dist] if dist is not None else []))
