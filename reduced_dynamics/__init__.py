"""rdyn.reduced_dynamics: the iterators (second layer; imports only ``rdyn.derivations``).

Subpackages (each ``__init__`` says what it holds; import modules by full path):
``model_a`` (Model A's collapsed dynamics), ``model_b`` (Model B's recursions), ``certified``
(``--certify``), ``runs`` (checkpoints, divergence, kernel cache), ``numerics`` (double-double,
MPFR arrays). ``_version`` holds the package version. docs/layout.md draws the tree.
"""
