"""English words every part of `perturb` treats alike.

Plain data, importing nothing: `perturb.keywords` and `perturb.recode.words` both read it,
and `perturb.recode` imports `perturb.transforms`, which imports `perturb.keywords`, so the
list cannot live in either of those without an import cycle.
"""

from __future__ import annotations

CLOSED_CLASS = frozenset(
    """
    a an the this that these those each every either neither some any no all both half
    several many much more most few fewer less least other another such what which whose
    who whom whatever whichever whoever i me my mine myself you your yours yourself
    yourselves he him his himself she her hers herself it its itself we us our ours
    ourselves they them their theirs themselves one ones
    about above across after against along among around as at before behind below beneath
    beside besides between beyond but by despite down during except for from in inside into
    like near of off on onto out outside over past per since than through throughout till to
    toward towards under underneath unlike until up upon via with within without
    and or nor so yet if unless because although though while whereas whether once then
    else otherwise also too very only just not never ever
    be am is are was were been being have has had having do does did doing done
    will would shall should can could may might must ought
    there here where when why how
    """.split()
)
"""Closed-class English words: ReCode's word-level perturbations leave them alone, and the
keyword pipeline never takes one for a hint the function's name gives."""
