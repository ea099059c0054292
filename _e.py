import sympy as sp
from rdyn.verification import checks_errata_a as ce
x=ce.tstar_expression("leaky")
for f in (sp.factor, lambda e: sp.collect(sp.factor(e), ce.SYMBOLS["K"]), lambda e: sp.simplify(sp.factor(e))):
    print(f(x))
D,K,k=ce.SYMBOLS["D"],ce.SYMBOLS["K"],ce.SYMBOLS["kappa"]
from rdyn.derivations.asymptotics import tau_star_expansion
t=tau_star_expansion("leaky"); print(sp.factor(t.I0), "|", sp.factor(t.I1))
