"""Large-D asymptotics of Model A's phase limits at fixed K (derived; checked against the
slow-manifold quadrature of ``rdyn teacher --method slow`` at D = 10^3 .. 10^6).

tau_star = lim eta T*, tau1 = lim eta t1 (eta -> 0); late excess loss ~ c_L / (eta t).
"""
from __future__ import annotations

from rdyn.output import emit_json, require

NAME = "asymptotics"
HELP = "Model A: large-D asymptotics of tau1, tau_star and the late loss (derived)"


def add_arguments(parser) -> None:
    parser.add_argument("--activation", choices=("identity", "relu", "leaky"), default="relu")
    parser.add_argument("--logit-scale", choices=("D", "sqrtD"), default="D")
    parser.add_argument("--K", type=int, default=4, help="group size K (default 4)")
    parser.add_argument("--vstar-norm2", type=float, default=1.0, help="||V*||_F^2 (default 1)")
    parser.add_argument("--kappa", type=float, default=None, help="leaky slope (default 0.1)")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the slow-manifold comparison at D = 10^3..10^6")


def run(args) -> int:
    from reduced_dynamics.asymptotics import asymptotic_summary, text

    require(args.K >= 1, f"--K must be >= 1, got {args.K}")
    require(args.vstar_norm2 > 0, "--vstar-norm2 must be > 0")
    require(args.activation == "leaky" or args.kappa is None, "--kappa applies to --activation leaky only")
    kappa = 0.1 if args.kappa is None else args.kappa
    require(0 <= kappa < 1, "--kappa must be in [0, 1)")
    require(args.dps is None, "--dps does not apply (constants are printed to 30 digits)")
    summary = asymptotic_summary(args.activation, args.logit_scale, args.K, args.vstar_norm2,
                                 kappa, check_D=() if args.no_check else (10**3, 10**4, 10**5, 10**6))
    if args.json:
        emit_json(summary)
    else:
        print(text(summary))
    return 0
