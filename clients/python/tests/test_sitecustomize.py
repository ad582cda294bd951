import io
import os
import subprocess
import textwrap
import unittest
from contextlib import redirect_stderr

from tests import util
from gnnscope import _auto

PROBE = "import sys; print(sorted(m for m in ('torch', 'gnnscope') if m in sys.modules))"


class SiteTest(unittest.TestCase):
    def probe(self, journal=None, auto=True, extra=None, code=PROBE):
        env = util.env_for(journal, auto, extra)
        return subprocess.run([util.PYTHON, "-c", code], env=env, capture_output=True,
                              text=True, timeout=120)

    def test_inactive_without_journal(self):
        r = self.probe()
        self.assertEqual((r.stdout, r.stderr), ("[]\n", ""))

    def test_inactive_with_auto_off(self):
        r = self.probe(os.path.join(util.tmpdir(self), "j.jsonl"), auto=False)
        self.assertEqual((r.stdout, r.stderr), ("[]\n", ""))

    def test_active_imports_no_torch(self):
        r = self.probe(os.path.join(util.tmpdir(self), "j.jsonl"))
        self.assertEqual((r.stdout, r.stderr), ("[]\n", ""))

    def test_chains_to_next_sitecustomize(self):
        d = util.tmpdir(self)
        with open(os.path.join(d, "sitecustomize.py"), "w") as f:
            f.write("import builtins\nbuiltins.CHAINED = __file__\n")
        code = "import builtins; print(getattr(builtins, 'CHAINED', None))"
        pp = util.CLIENT + os.pathsep + d
        for journal in (None, os.path.join(d, "j.jsonl")):
            r = self.probe(journal, code=code, extra={"PYTHONPATH": pp})
            self.assertEqual(r.stdout.strip(), os.path.join(d, "sitecustomize.py"), r.stderr)

    def test_failing_next_sitecustomize_reported_as_site_does(self):
        d = util.tmpdir(self)
        with open(os.path.join(d, "sitecustomize.py"), "w") as f:
            f.write("raise ValueError('boom')\n")
        r = self.probe(code="print('ran')",
                       extra={"PYTHONPATH": util.CLIENT + os.pathsep + d})
        self.assertEqual(r.stdout, "ran\n")
        self.assertIn("Error in sitecustomize", r.stderr)
        self.assertIn("ValueError: boom", r.stderr)

    @unittest.skipUnless(util.has_torch(), "torch is not installed")
    def test_patches_after_torch_import(self):
        code = textwrap.dedent("""
            import torch
            print(hasattr(torch.nn.Module.__call__, "__wrapped__"),
                  hasattr(torch.Tensor.to, "__wrapped__"))
        """)
        r = self.probe(os.path.join(util.tmpdir(self), "j.jsonl"), code=code)
        self.assertEqual(r.stdout.split(), ["True", "True"], r.stderr)
        r = self.probe(code=code)
        self.assertEqual(r.stdout.split(), ["False", "False"], r.stderr)


class Boom:
    """A client whose every method fails."""
    closing = []
    epoch_hooks = []

    def __getattr__(self, name):
        raise RuntimeError("broken " + name)


class GuardTest(unittest.TestCase):
    def test_internal_error_reported_once_and_disables(self):
        rec = _auto.Recorder(Boom())
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertIsNone(rec.guard(rec.on_next, object(), (0, None)))
            self.assertIsNone(rec.guard(rec.on_forward_begin, True))
        self.assertTrue(rec.disabled)
        self.assertTrue(rec.off())
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 1)
        self.assertTrue(lines[0].startswith("gnnscope: "))


if __name__ == "__main__":
    unittest.main()
