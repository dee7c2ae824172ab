"""pytest plugin: run pySMT's own test suite against ONE generic SMT-LIB solver.

Loaded with `pytest -p smtproxy_pysmt_plugin` (PYTHONPATH must contain this directory).
Environment:
  PYSMT_GENERIC_CMD   the solver command line, JSON list, e.g. '["z3", "-in", "-smt2"]'
  PYSMT_GENERIC_NAME  the name it is registered under (default "generic")

What it does, before any pySMT test module is imported (skip decorators look at the
solver factory at import time):
  * PYSMT_SOLVER=None hides pySMT's native solver bindings (e.g. the z3 python API), so
    every solver-using test goes through the SMT-LIB pipe;
  * every Factory (pySMT makes a fresh environment per test) gets the generic solver
    registered with `add_generic_solver(name, cmd, logics)`;
  * pySMT's test_generic_wrapper.py only finds `*.solver.sh` scripts shipped in its git
    repository (not in the wheel), so its tests are skipped at import time; they are
    un-skipped here and pointed at the same generic solver.
"""
import json
import os

os.environ["PYSMT_SOLVER"] = "None"

NAME = os.environ.get("PYSMT_GENERIC_NAME", "generic")
CMD = json.loads(os.environ.get("PYSMT_GENERIC_CMD", '["z3", "-in", "-smt2"]'))

import pysmt.factory as _factory  # noqa: E402
import pysmt.logics as _logics  # noqa: E402

# The logics z3 (and hence smtproxy in front of z3) handles through SMT-LIB that pySMT
# knows how to print. Strings are left out (pySMT's string printing is z3-version
# dependent); quantified logics are in (smtproxy must pass them through to the solver).
LOGICS = [
    _logics.QF_UFLIRA,
    _logics.QF_AUFBV,
    _logics.QF_AUFLIA,
    _logics.QF_ABV,
    _logics.QF_UFBV,
    _logics.QF_BV,
    _logics.QF_NIA,
    _logics.QF_NRA,
    _logics.QF_UFNIA,
    _logics.QF_UFNRA,
    _logics.QF_ALIA,
    _logics.AUFLIRA,
    _logics.LIA,
    _logics.LRA,
    _logics.UFLIRA,
    _logics.BV,
]

_orig = _factory.Factory._get_available_solvers


def _get_available_solvers(self):
    _orig(self)
    self._all_solvers.pop(NAME, None)
    self.add_generic_solver(NAME, list(CMD), LOGICS)


_factory.Factory._get_available_solvers = _get_available_solvers
_factory.ENV_SOLVER_LIST = []

# Reset the global environment so it picks up the patched factory.
import pysmt.environment as _environment  # noqa: E402

_environment.reset_env()


def _unskip_generic_wrapper():
    import pysmt.test.smtlib.test_generic_wrapper as gw

    gw.ALL_WRAPPERS[:] = [(NAME, CMD[0])]
    cls = gw.TestGenericWrapper

    def setUp(self):
        from pysmt.test import TestCase

        TestCase.setUp(self)
        # the patched factory already registered NAME in this fresh environment
        self.all_solvers = [NAME]

    cls.setUp = setUp
    for attr in list(vars(cls)):
        fn = getattr(cls, attr)
        if attr.startswith("test_") and getattr(fn, "__unittest_skip__", False) and hasattr(fn, "__wrapped__"):
            setattr(cls, attr, fn.__wrapped__)


_unskip_generic_wrapper()
