"""gnnscope's zero-change instrumentation of PyTorch trainers.

`gnnscope run` puts this folder first on PYTHONPATH. When GNNSCOPE_JOURNAL
(or GNNSCOPE_COLLECTOR) is set and GNNSCOPE_AUTO is not "0", torch is patched right after the
program imports it (gnnscope._auto); torch is never imported here. In every
case the next sitecustomize module on sys.path (the one site would have
imported without this folder) is imported too, and nothing here can make
the program fail: errors are reported once on stderr, prefixed "gnnscope:".
"""

import os
import sys


def _chain():
    """Import the sitecustomize module that this one shadows, as site does."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        try:
            if os.path.abspath(entry or os.getcwd()) == here:
                continue
        except Exception:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
        if spec is None or spec.loader is None or spec.origin == __file__:
            continue
        try:
            if os.path.samefile(spec.origin, __file__):
                continue
        except OSError:
            pass
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception as err:  # site's own report for a failing sitecustomize
            if sys.flags.verbose:
                sys.excepthook(*sys.exc_info())
            else:
                sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                                 "%s: %s\n" % (err.__class__.__name__, err))
        return


def _report(err):
    try:
        sys.stderr.write("gnnscope: instrumentation off: %r\n" % (err,))
    except Exception:
        pass


def _patch_torch(module):
    try:
        import gnnscope
        from gnnscope import _auto

        c = gnnscope.client()
        if c is not None:
            _auto.install(module, c)
    except Exception as err:
        _report(err)


def _patch_pyg(module):
    """PyG's loaders wrap the DataLoader iterator in DataLoaderIterator,
    whose __next__ also builds the batch: time that one as the sample."""
    try:
        import gnnscope
        from gnnscope import _auto

        c = gnnscope.client()
        cls = getattr(module, "DataLoaderIterator", None)
        if c is not None and c.recorder is not None and cls is not None:
            _auto.patch_iterator(cls, c.recorder)
    except Exception as err:
        _report(err)


class _Finder:
    """A meta path finder that patches a module once its import finished."""

    def __init__(self, targets):
        self.targets = dict(targets)
        self.busy = False

    def find_spec(self, name, path=None, target=None):
        if self.busy or name not in self.targets:
            return None
        patch = self.targets.pop(name)
        if not self.targets:
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
        import importlib.util

        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        orig = spec.loader.exec_module

        def exec_module(module):
            orig(module)
            patch(module)

        try:
            spec.loader.exec_module = exec_module
        except Exception as err:
            _report(err)
        return spec

    def invalidate_caches(self):
        pass


def _activate():
    if not (os.environ.get("GNNSCOPE_JOURNAL") or os.environ.get("GNNSCOPE_COLLECTOR")) \
            or os.environ.get("GNNSCOPE_AUTO") == "0":
        return
    if "torch" in sys.modules:
        _patch_torch(sys.modules["torch"])
        return
    sys.meta_path.insert(0, _Finder({"torch": _patch_torch,
                                     "torch_geometric.loader.base": _patch_pyg}))


try:
    _chain()
except Exception as _err:
    _report(_err)
try:
    _activate()
except Exception as _err:
    _report(_err)
