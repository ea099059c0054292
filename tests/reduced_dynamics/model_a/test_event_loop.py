"""reduced_dynamics/model_a/event_loop.py: the generated source of the float64 smooth event loop."""
from __future__ import annotations

import ast

from rdyn.reduced_dynamics.model_a.event_loop import loop_source


def test_the_routes_parts_land_in_the_loop_and_the_source_compiles():
    source = loop_source(args="table", setup="x = 1\ny = 2",
                         moments="p = 0.5\nm1 = 0.1\nm2 = 0.2", t1="t1 = t", lost="lost = t")
    tree = ast.parse(source)
    (iterate,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert iterate.name == "iterate" and iterate.args.args[-1].arg == "table"
    assert "@" not in source                                 # every placeholder filled in
    lines = source.splitlines()
    assert "    x = 1" in lines and "    y = 2" in lines    # setup: once, in the function body
    assert "        m2 = 0.2" in lines                      # moments: per step, inside the loop
    assert "            lost = t" in lines                  # lost: one level deeper, under its test


def test_an_empty_setup_becomes_pass():
    source = loop_source(args="table", setup="", moments="p = m1 = m2 = 0.0", t1="t1 = t", lost="lost = t")
    ast.parse(source)
    assert "    pass" in source.splitlines()


def test_an_empty_nested_part_is_a_no_op_at_its_own_depth():
    source = loop_source(args="table", setup="", moments="p = m1 = m2 = 0.0", t1="", lost="")
    ast.parse(source)   # an empty t1 or lost part used to print "    pass" at the wrong depth
    lines = source.splitlines()
    assert "        pass" in lines and "            pass" in lines
