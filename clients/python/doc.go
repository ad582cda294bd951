// Package python embeds gnnscope's Python client (the gnnscope package and
// the sitecustomize module that activates its auto-instrumentation) so that
// the binary can put it on an external command's PYTHONPATH.
package python
